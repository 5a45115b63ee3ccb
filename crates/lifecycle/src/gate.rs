//! The session-start gate: answer at once with the state known, decide the work, start
//! it in the background, and never fail the caller (DESIGN.md invariant 7).
//!
//! [`evaluate`] is the fast half: it returns within `lifecycle.gateBudgetMs` (a clean
//! workspace seen within `lifecycle.livenessCacheMs` is answered from the cache without
//! a walk). [`GateAnswer::start`] hands the decided run off to an owner process
//! (`maintenance::hand_off`) and returns at once; [`GateAnswer::finish`], run after the
//! answer is out, only finishes a check that overran the budget (bounded by
//! `index.probeTimeoutMs`) and hands off the work it calls for. [`own`] is the owner's
//! side: it runs, waits for and records the run, whatever became of the gate.

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use loci_supervisor::Supervisor;

use crate::classify::{self, Learned, classify};
use crate::config::{Config, ConfigWarning};
use crate::maintenance::{self, BackgroundRun, Purpose};
use crate::probe::IndexednessProbe;
use crate::record::{self, Checked, DbStamp, Record, RunRecord, RunResult, now_ms};
use crate::state::{Decider, Notice, State, Status};

/// Failed runs of one purpose a session tolerates: the first try and one retry.
const MAX_FAILURES_PER_SESSION: u32 = 2;

/// What the gate is asked.
#[derive(Debug, Clone)]
pub struct GateRequest {
    /// The session's working directory (not necessarily this process's).
    pub path: PathBuf,
    /// The session id (`--session`, `LOCI_SESSION_ID`); without one, notices are not
    /// deduplicated.
    pub session: Option<String>,
}

/// The gate's answer, and what is left to do after it is delivered.
pub struct GateAnswer {
    /// The state to report now.
    pub status: Status,
    /// Configuration problems met while loading (each once).
    pub config_warnings: Vec<ConfigWarning>,
    /// The work decided, not yet started.
    pub action: Option<Purpose>,
    root: Option<PathBuf>,
    cfg: Option<Config>,
    session: Option<String>,
    pending: Option<mpsc::Receiver<(Status, Learned)>>,
}

impl std::fmt::Debug for GateAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateAnswer")
            .field("status", &self.status)
            .field("action", &self.action)
            .field("pending", &self.pending.is_some())
            .finish()
    }
}

/// The fast half of the gate. Never fails: every error ends up in the status.
pub fn evaluate(req: &GateRequest, probe: Arc<dyn IndexednessProbe>) -> GateAnswer {
    let mut answer = GateAnswer {
        status: Status::new(State::Unavailable, "", req.path.to_string_lossy()),
        config_warnings: Vec::new(),
        action: None,
        root: None,
        cfg: None,
        session: req.session.clone(),
        pending: None,
    };
    let root = match classify::resolve_root(&req.path) {
        Ok(root) => root,
        Err(status) => {
            answer.status = *status;
            answer.status.notices = once(
                &req.path,
                req.session.as_deref(),
                vec![notice("unavailable", answer.status.reason.clone())],
                &mut answer.status.errors,
            );
            return answer;
        }
    };
    let cfg = Config::load(Some(&root));
    answer.config_warnings = cfg.warnings().to_vec();
    let record = record::load(&root);

    let (status, learned) = match cached_clean(&root, &cfg, &record) {
        Some(status) => (status, Learned::default()),
        None => {
            let (tx, rx) = mpsc::channel();
            let (r, c, rec) = (root.clone(), cfg.clone(), record.clone());
            let spawned = std::thread::Builder::new()
                .name("loci-gate-classify".into())
                .spawn(move || {
                    let _ = tx.send(classify(&r, &c, probe.as_ref(), &rec, true));
                });
            match spawned {
                Err(e) => (
                    classify::unknown(
                        root.to_string_lossy().into_owned(),
                        Decider::None,
                        format!("cannot start the state check: {e}"),
                    ),
                    Learned::default(),
                ),
                Ok(_) => match rx.recv_timeout(cfg.gate_budget()) {
                    Ok(done) => done,
                    Err(_) => {
                        answer.pending = Some(rx);
                        (preliminary(&root, &cfg), Learned::default())
                    }
                },
            }
        }
    };
    answer.status = status;
    answer.status.last_run = record.last_run.clone();
    let (action, notices) = decide(&answer.status, &cfg, &record, req.session.as_deref());
    answer.action = action;
    answer.status.notices = once(
        &root,
        req.session.as_deref(),
        notices,
        &mut answer.status.errors,
    );
    let mut errors = Vec::new();
    remember(&root, &answer.status, &learned, &mut errors);
    answer.status.errors.extend(errors);
    answer.root = Some(root);
    answer.cfg = Some(cfg);
    answer
}

impl GateAnswer {
    /// Hands the decided work off to an owner process started through `sup` (returns at
    /// once; the run outlives this process). A spawn failure is recorded in the status,
    /// never returned.
    pub fn start(&mut self, sup: &Supervisor) {
        let (Some(purpose), Some(root), Some(cfg)) = (self.action, &self.root, &self.cfg) else {
            return;
        };
        let exe = match classify::executable(cfg) {
            Ok(exe) => exe,
            Err(e) => {
                self.status.errors.push(e);
                return;
            }
        };
        let owner = match loci_supervisor::own_executable() {
            Ok(owner) => owner,
            Err(e) => {
                self.status.errors.push(format!(
                    "cannot find this loci executable to own the run: {e}"
                ));
                return;
            }
        };
        let session = self.session.as_deref();
        match maintenance::hand_off(sup, &owner, &exe, root, purpose, cfg, session) {
            Ok(started) => {
                let state = State::of_run(purpose.work()).unwrap_or(State::Syncing);
                let was = self.status.reason.clone();
                self.status.state = state;
                self.status.reason = format!(
                    "{was}; a background {} (owner pid {}) was started",
                    purpose.name(),
                    started.pid
                );
                self.status.hint = None;
                self.status.started = Some(started);
            }
            Err(failed) => {
                self.status
                    .errors
                    .push(failed.message.clone().unwrap_or_default());
                self.status.last_run = Some(*failed);
            }
        }
    }

    /// Whether the gate has anything left to do after answering: a check that overran
    /// its budget (a run it started is handed off and needs nothing more).
    pub fn has_background_work(&self) -> bool {
        self.pending.is_some()
    }

    /// The gate's half after answering: finishes a check that overran the budget and
    /// hands off the work it calls for. Bounded by `index.probeTimeoutMs`; returns the
    /// check's timeout record if it overran that too.
    pub fn finish(mut self, sup: &Supervisor) -> Option<RunRecord> {
        if let (Some(rx), Some(root), Some(cfg)) = (self.pending.take(), &self.root, &self.cfg) {
            match rx.recv_timeout(cfg.probe_timeout()) {
                Ok((status, learned)) => {
                    let mut errors = Vec::new();
                    remember(root, &status, &learned, &mut errors);
                    let record = record::load(root);
                    self.action = decide(&status, cfg, &record, self.session.as_deref()).0;
                    self.start(sup);
                }
                Err(_) => {
                    let run = RunRecord {
                        purpose: "probe".into(),
                        result: RunResult::Timeout,
                        budget_ms: cfg.probe_timeout().as_millis() as u64,
                        started_at_ms: now_ms(),
                        ended_at_ms: now_ms(),
                        exit: None,
                        message: Some("the state check did not finish within its budget".into()),
                        session: self.session.clone(),
                    };
                    let _ = record::update(root, |r| r.last_run = Some(run.clone()));
                    return Some(run);
                }
            }
        }
        None
    }
}

impl GateAnswer {
    /// The gate's second half for a host that lives as long as its session (an MCP
    /// server): finishes a check that overran the budget (bounded by
    /// `index.probeTimeoutMs`), then starts the decided work as this process's own
    /// supervised child under `sup` (torn down with the host: SIGTERM, SIGINT, exit)
    /// instead of handing it off to an owner that outlives it. Returns the final status
    /// and the run in flight, if one was started. Never fails: errors are in the status.
    pub fn settle_owned(mut self, sup: &Supervisor) -> (Status, Option<BackgroundRun>) {
        let (Some(root), Some(cfg)) = (self.root.clone(), self.cfg.clone()) else {
            return (self.status, None);
        };
        if let Some(rx) = self.pending.take() {
            match rx.recv_timeout(cfg.probe_timeout()) {
                Ok((mut status, learned)) => {
                    let mut errors = Vec::new();
                    remember(&root, &status, &learned, &mut errors);
                    let record = record::load(&root);
                    let (action, notices) = decide(&status, &cfg, &record, self.session.as_deref());
                    status.last_run = record.last_run.clone();
                    status.notices =
                        once(&root, self.session.as_deref(), notices, &mut status.errors);
                    status.errors.extend(errors);
                    self.status = status;
                    self.action = action;
                }
                Err(_) => {
                    self.status.errors.push(format!(
                        "the state check did not finish within index.probeTimeoutMs ({} ms)",
                        cfg.probe_timeout().as_millis()
                    ));
                    return (self.status, None);
                }
            }
        }
        let Some(purpose) = self.action else {
            return (self.status, None);
        };
        let exe = match classify::executable(&cfg) {
            Ok(exe) => exe,
            Err(e) => {
                self.status.errors.push(e);
                return (self.status, None);
            }
        };
        match BackgroundRun::start(sup, &exe, &root, purpose, &cfg, self.session.as_deref()) {
            Ok(run) => {
                self.status.state = State::of_run(purpose.work()).unwrap_or(State::Syncing);
                self.status.reason = format!(
                    "{}; a background {} (pid {}) was started",
                    self.status.reason,
                    purpose.name(),
                    run.started().pid
                );
                self.status.hint = None;
                self.status.started = Some(run.started().clone());
                (self.status, Some(run))
            }
            Err(failed) => {
                self.status
                    .errors
                    .push(failed.message.clone().unwrap_or_default());
                self.status.last_run = Some(*failed);
                (self.status, None)
            }
        }
    }
}

/// The owner of a handed-off run (`loci gate --own <purpose> <root>`): starts `purpose`
/// on `root` through its own supervisor (budget, bounded capture, process group,
/// teardown on SIGTERM/SIGINT/SIGHUP), waits for it, records the outcome and the run
/// log, and refreshes the caches after a successful run. Never fails: the outcome is
/// in the returned record (and the workspace's). The process ends itself at
/// [`maintenance::owner_deadline`] should anything hang past the run's budget, through
/// `end_process` (the binary's `std::process::exit`: a library never ends the process
/// on its own).
pub fn own(
    root: &Path,
    purpose: Purpose,
    session: Option<&str>,
    end_process: fn(i32) -> !,
) -> RunRecord {
    let cfg = Config::load(Some(root));
    let budget = cfg
        .maintenance_timeout()
        .unwrap_or_else(maintenance::default_budget);
    let deadline = maintenance::owner_deadline(budget);
    let (at_root, at_session) = (root.to_path_buf(), session.map(str::to_string));
    let _ = std::thread::Builder::new()
        .name("loci-owner-deadline".into())
        .spawn(move || {
            let started_at_ms = now_ms();
            std::thread::sleep(deadline);
            let run = RunRecord {
                purpose: purpose.name().into(),
                result: RunResult::Timeout,
                budget_ms: budget.as_millis() as u64,
                started_at_ms,
                ended_at_ms: now_ms(),
                exit: None,
                message: Some("the run's owner outlived its deadline and ended itself".into()),
                session: at_session,
            };
            let _ = record::update(&at_root, |r| {
                r.running = None;
                r.last_run = Some(run);
            });
            // exit(3) runs the supervisor's teardown: the run goes with its owner.
            end_process(i32::from(loci_exit::ExitCode::Failure.code()));
        });
    let failed = |message: String| {
        let run = RunRecord {
            purpose: purpose.name().into(),
            result: RunResult::SpawnFailed,
            budget_ms: budget.as_millis() as u64,
            started_at_ms: now_ms(),
            ended_at_ms: now_ms(),
            exit: None,
            message: Some(message),
            session: session.map(str::to_string),
        };
        let _ = record::update(root, |r| {
            r.running = None;
            r.last_run = Some(run.clone());
            if let Some(s) = session {
                *r.session(s)
                    .failures
                    .entry(run.purpose.clone())
                    .or_insert(0) += 1;
            }
        });
        run
    };
    let exe = match classify::executable(&cfg) {
        Ok(exe) => exe,
        Err(e) => return failed(e),
    };
    let sup = Supervisor::new();
    let run = match BackgroundRun::start(&sup, &exe, root, purpose, &cfg, session) {
        Ok(run) => run,
        Err(record) => return *record,
    };
    let record = run.wait_and_record();
    if record.result == RunResult::Ok {
        // Refresh the caches so the next session starts from a known clean state.
        let (status, learned) = classify(
            root,
            &cfg,
            &crate::probe::RegistryProbe,
            &record::load(root),
            false,
        );
        remember(root, &status, &learned, &mut Vec::new());
    }
    record
}

/// A clean answer from the liveness cache: young enough and the database unchanged.
fn cached_clean(root: &Path, cfg: &Config, record: &Record) -> Option<Status> {
    let live = record.liveness?;
    let age = now_ms().saturating_sub(live.at_ms);
    if Duration::from_millis(age) >= cfg.liveness_cache() {
        return None;
    }
    let index_path = loci_store::index_path_for(root);
    if DbStamp::of(&index_path)? != live.db {
        return None;
    }
    let mut s = Status::new(
        State::Clean,
        format!("the index was clean {age} ms ago (cached liveness check, no walk)"),
        root.to_string_lossy(),
    );
    s.facts.cached = true;
    s.facts.decider = Some(Decider::Marker);
    s.facts.index_path = Some(index_path.to_string_lossy().into_owned());
    Some(s)
}

/// What the gate says when the check overran its budget.
fn preliminary(root: &Path, cfg: &Config) -> Status {
    let mut s = if loci_store::index_path_for(root).is_file() {
        Status::new(
            State::Clean,
            format!(
                "an index exists; its freshness check did not finish within {} ms and goes on in the background (a sync follows if files changed)",
                cfg.gate_budget().as_millis()
            ),
            root.to_string_lossy(),
        )
    } else {
        classify::unknown(
            root.to_string_lossy().into_owned(),
            Decider::None,
            "the state check did not finish within the gate's budget".into(),
        )
    };
    s.facts.pending = true;
    s
}

fn notice(id: impl Into<String>, message: impl Into<String>) -> Notice {
    Notice {
        id: id.into(),
        message: message.into(),
    }
}

/// The work a state calls for, and the notices that go with it.
fn decide(
    status: &Status,
    cfg: &Config,
    record: &Record,
    session: Option<&str>,
) -> (Option<Purpose>, Vec<Notice>) {
    let failures = |p: Purpose| {
        session
            .and_then(|s| record.sessions.get(s))
            .and_then(|s| s.failures.get(p.name()).copied())
            .unwrap_or(0)
    };
    let mut notices = Vec::new();
    let want = |p: Purpose, notices: &mut Vec<Notice>| {
        if failures(p) >= MAX_FAILURES_PER_SESSION {
            notices.push(notice(
                format!("gave-up:{}", p.name()),
                format!(
                    "the background {} failed {} times in this session; not retrying (see `loci status`)",
                    p.name(),
                    failures(p)
                ),
            ));
            None
        } else {
            Some(p)
        }
    };
    let action = match status.state {
        State::Unavailable => {
            notices.push(notice(
                "unavailable",
                format!("loci is unavailable here: {}", status.reason),
            ));
            None
        }
        State::Unindexed if cfg.auto_create() => {
            let a = want(Purpose::Index, &mut notices);
            if a.is_some() && status.facts.interrupted {
                notices.push(notice(
                    "indexing-resumed",
                    "the first loci index of this workspace was interrupted; loci started it again in the background; queries work once it finishes",
                ));
            } else if a.is_some() {
                notices.push(notice(
                    "indexing-started",
                    "loci started indexing this workspace in the background; queries work once it finishes",
                ));
            }
            a
        }
        State::Unindexed if status.facts.interrupted => {
            notices.push(notice(
                "interrupted",
                "the first loci index of this workspace was interrupted before it completed. Run `loci sync` to finish it, or let sessions do it: set `[lifecycle] autoCreate = true` in ~/.config/loci/config.toml (or .loci/config.toml), or LOCI_LIFECYCLE_AUTO_CREATE=1",
            ));
            None
        }
        State::Unindexed => {
            notices.push(notice(
                "unindexed",
                "this workspace has no loci index. Run `loci index`, or let sessions create it: set `[lifecycle] autoCreate = true` in ~/.config/loci/config.toml (or .loci/config.toml), or LOCI_LIFECYCLE_AUTO_CREATE=1",
            ));
            None
        }
        State::Drift if cfg.sync_on_start() && !status.facts.pending => {
            want(Purpose::Sync, &mut notices)
        }
        State::Drift => {
            notices.push(notice(
                "drift",
                format!("{}; run `loci sync`", status.reason),
            ));
            None
        }
        State::Corrupt if status.facts.unknown => {
            notices.push(notice(
                "unknown",
                format!("loci could not decide the index state: {}", status.reason),
            ));
            None
        }
        State::Corrupt => {
            notices.push(notice(
                "corrupt",
                format!(
                    "the loci index is unusable ({}); nothing was changed. `loci rebuild --yes` rebuilds it",
                    status.reason
                ),
            ));
            None
        }
        State::Busy => {
            let pid = status.facts.holder.as_ref().map_or(0, |h| h.pid);
            notices.push(notice(
                format!("busy:{pid}"),
                format!("index maintenance skipped: {}", status.reason),
            ));
            None
        }
        State::Indexing | State::Syncing | State::Rebuilding | State::Clean => None,
    };
    (action, notices)
}

/// Keeps the notices this session has not seen yet, and marks them seen.
fn once(
    workspace: &Path,
    session: Option<&str>,
    notices: Vec<Notice>,
    errors: &mut Vec<String>,
) -> Vec<Notice> {
    let Some(session) = session else {
        return notices;
    };
    if notices.is_empty() {
        return notices;
    }
    let mut fresh = Vec::new();
    let result = record::update(workspace, |r| {
        let s = r.session(session);
        for n in notices.iter() {
            if !s.notices.contains(&n.id) {
                s.notices.push(n.id.clone());
                fresh.push(n.clone());
            }
        }
    });
    if let Err(e) = result {
        errors.push(format!("cannot record shown notices: {e}"));
        return notices;
    }
    fresh
}

/// Stores what this classification taught: a clean walk (liveness) and a passed
/// integrity check.
fn remember(root: &Path, status: &Status, learned: &Learned, errors: &mut Vec<String>) {
    let clean = status.state == State::Clean
        && !status.facts.cached
        && !status.facts.pending
        && status.facts.decider == Some(Decider::Marker);
    let stamp = DbStamp::of(&loci_store::index_path_for(root));
    if !clean && learned.integrity.is_none() {
        return;
    }
    let result = record::update(root, |r| {
        if let Some(i) = learned.integrity {
            r.integrity = Some(i);
        }
        if clean && let Some(db) = stamp {
            r.liveness = Some(Checked {
                at_ms: now_ms(),
                db,
            });
        }
    });
    if let Err(e) = result {
        errors.push(format!("cannot record the liveness check: {e}"));
    }
}
