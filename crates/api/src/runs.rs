//! Background maintenance runs of registered workspaces, started by a long-lived host
//! (the HTTP server) and asked about later by run id.
//!
//! Each run is the lifecycle's background run (`loci index|sync|rebuild <root> --json`
//! re-executed through the supervisor, with the maintenance budget, bounded output, the
//! workspace's single-flight key, and the lifecycle record saying a run is in flight),
//! observed for its parse progress. At most [`MAX_RUNNING`] run at once; the rest wait
//! in order (`queued`). One workspace has at most one run in flight: asking again for
//! the same purpose joins it (same id), asking for another is `busy`. Dropping
//! [`Runs`] (or [`Runs::shutdown`]) tears every child down.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use loci_lifecycle::maintenance::{BackgroundRun, Purpose};
use loci_lifecycle::progress::RunProgress;
use loci_lifecycle::rebuild::Consent;
use loci_lifecycle::record::{self, RunRecord, RunResult, now_ms};
use loci_supervisor::{Outcome, Supervisor};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ApiError, ErrorKind};
use crate::remote;

/// Runs executing at once (the others are queued).
pub const MAX_RUNNING: usize = 2;
/// Finished runs remembered (the oldest are forgotten first).
pub const KEPT_FINISHED: usize = 256;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Waiting for a free slot.
    Queued,
    /// The child is working.
    Running,
    /// It finished and the index is up to date.
    Done,
    /// It ended otherwise; `error` says how.
    Failed,
}

/// What a run's index step has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RunProgressView {
    /// Files the run has to parse (0 until it has walked the tree).
    pub files_total: u64,
    /// Files parsed so far.
    pub files_parsed: u64,
}

/// How a failed run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RunError {
    /// The error kind (`busy`, `timeout`, `cancelled`, `consent_required`, `failure`...),
    /// a name from loci's error table.
    pub kind: ErrorKind,
    /// What happened, with no absolute path.
    pub message: String,
}

/// One run, as a caller sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RunView {
    /// The run id (`GET /api/v1/workspaces/{id}/runs/{run}`).
    #[schemars(range(min = 1))]
    pub id: u64,
    /// The workspace's registry id.
    pub workspace: i64,
    /// `index`, `sync` or `rebuild`.
    pub purpose: String,
    /// Where it stands.
    pub state: RunState,
    /// What it has parsed.
    pub progress: RunProgressView,
    /// When it was asked for, ms since the Unix epoch.
    pub queued_at_ms: u64,
    /// When its child started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<u64>,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<u64>,
    /// Set when `state` is `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// Where to ask about it.
    pub url: String,
}

/// The answer to a request that starts (or joins) a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RunStarted {
    /// The run.
    pub run: RunView,
    /// True when the request joined a run already in flight for the same purpose.
    pub joined: bool,
    /// Where to follow its progress (`run.url`).
    pub progress_url: String,
}

struct Entry {
    view: RunView,
    root: PathBuf,
    purpose: Purpose,
    progress: RunProgress,
    paths: Vec<(String, &'static str)>,
}

impl Entry {
    fn active(&self) -> bool {
        matches!(self.view.state, RunState::Queued | RunState::Running)
    }

    fn view(&self) -> RunView {
        let mut view = self.view.clone();
        let (total, done) = self.progress.get();
        view.progress = RunProgressView {
            files_total: total,
            files_parsed: done,
        };
        view
    }
}

#[derive(Default)]
struct Inner {
    next: u64,
    runs: BTreeMap<u64, Entry>,
    queue: VecDeque<u64>,
    running: usize,
}

/// The runs of one host process.
pub struct Runs {
    sup: Supervisor,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runs").finish_non_exhaustive()
    }
}

impl Default for Runs {
    fn default() -> Self {
        Runs::new()
    }
}

/// The route of a run.
pub fn run_url(workspace: i64, run: u64) -> String {
    format!("/api/v1/workspaces/{workspace}/runs/{run}")
}

impl Runs {
    /// No runs yet.
    pub fn new() -> Runs {
        Runs {
            sup: Supervisor::new(),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Starts (or joins) an `index` or `sync` of registered workspace `id`.
    pub fn start(self: &Arc<Self>, id: i64, purpose: &str) -> Result<RunStarted, ApiError> {
        let purpose = match Purpose::parse(purpose) {
            Some(p) => p,
            None => {
                return Err(ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("`{purpose}` is not a background run (index, sync)"),
                ));
            }
        };
        self.begin(id, purpose)
    }

    /// Starts a rebuild of registered workspace `id` — only with `consent`; without it
    /// nothing is touched and the answer is `consent_required`.
    pub fn rebuild(self: &Arc<Self>, id: i64, consent: bool) -> Result<RunStarted, ApiError> {
        let entry = remote::entry(id)?;
        let Some(consent) = Consent::from_flag(consent) else {
            return Err(ApiError::new(
                ErrorKind::ConsentRequired,
                format!(
                    "rebuilding deletes the index of workspace {id} and builds it again; nothing was touched"
                ),
            )
            .hint(format!(
                "send {{\"consent\": true}} to POST /api/v1/workspaces/{}/rebuild to consent",
                entry.id
            )));
        };
        self.begin(id, Purpose::Rebuild(consent))
    }

    /// Run `run` of workspace `id`.
    pub fn get(&self, id: i64, run: u64) -> Result<RunView, ApiError> {
        self.lock()
            .runs
            .get(&run)
            .filter(|e| e.view.workspace == id)
            .map(Entry::view)
            .ok_or_else(|| {
                ApiError::new(
                    ErrorKind::NotFound,
                    format!("workspace {id} has no run {run}"),
                )
                .hint(format!(
                    "POST /api/v1/workspaces/{id}/index or /sync starts one and answers its id"
                ))
            })
    }

    /// The run of workspace `id` still queued or running, if any: what a live view
    /// shows as the workspace's progress.
    pub fn active(&self, id: i64) -> Option<RunView> {
        self.lock()
            .runs
            .values()
            .find(|e| e.view.workspace == id && e.active())
            .map(Entry::view)
    }

    /// Tears every run's child down now and forgets the queue.
    pub fn shutdown(&self) {
        {
            let mut inner = self.lock();
            let queued: Vec<u64> = inner.queue.drain(..).collect();
            for id in queued {
                if let Some(e) = inner.runs.get_mut(&id) {
                    fail(
                        e,
                        ErrorKind::Interrupted,
                        "the server stopped before the run started",
                    );
                }
            }
        }
        self.sup.shutdown();
    }

    fn begin(self: &Arc<Self>, id: i64, purpose: Purpose) -> Result<RunStarted, ApiError> {
        let entry = remote::entry(id)?;
        let root = PathBuf::from(&entry.root);
        let paths = remote::paths_of(&entry, &entry.root);
        let mut inner = self.lock();
        if let Some(active) = inner
            .runs
            .values()
            .find(|e| e.view.workspace == id && e.active())
        {
            if active.purpose == purpose {
                let run = active.view();
                return Ok(started(run, true));
            }
            return Err(ApiError::new(
                ErrorKind::Busy,
                format!(
                    "workspace {id} already has a {} run in flight (run {})",
                    active.view.purpose, active.view.id
                ),
            )
            .hint(format!("wait for it: GET {}", run_url(id, active.view.id)))
            .detail(serde_json::json!({ "run": active.view.id })));
        }
        if let Some(other) = record::load(&root).live_running()
            && other.owner_pid != std::process::id()
        {
            return Err(ApiError::new(
                ErrorKind::Busy,
                format!(
                    "another loci process (pid {}) is running a {} of workspace {id}",
                    other.owner_pid, other.purpose
                ),
            )
            .hint("try again once it has finished"));
        }
        inner.next += 1;
        let run = inner.next;
        let view = RunView {
            id: run,
            workspace: id,
            purpose: purpose.name().to_string(),
            state: RunState::Queued,
            progress: RunProgressView {
                files_total: 0,
                files_parsed: 0,
            },
            queued_at_ms: now_ms(),
            started_at_ms: None,
            ended_at_ms: None,
            error: None,
            url: run_url(id, run),
        };
        inner.runs.insert(
            run,
            Entry {
                view,
                root,
                purpose,
                progress: RunProgress::default(),
                paths,
            },
        );
        inner.queue.push_back(run);
        forget_old(&mut inner);
        drop(inner);
        self.pump();
        let view = self.get(id, run)?;
        Ok(started(view, false))
    }

    /// Starts queued runs while slots are free (spawning outside the lock, so asking
    /// about runs never waits for a fork).
    fn pump(self: &Arc<Self>) {
        loop {
            let (run, root, purpose, progress) = {
                let mut inner = self.lock();
                if inner.running >= MAX_RUNNING {
                    return;
                }
                let Some(run) = inner.queue.pop_front() else {
                    return;
                };
                let Some(e) = inner.runs.get(&run) else {
                    continue;
                };
                let picked = (run, e.root.clone(), e.purpose, e.progress.clone());
                inner.running += 1;
                picked
            };
            let cfg = crate::config(Some(&root));
            let started = loci_lifecycle::classify::executable(&cfg).and_then(|exe| {
                BackgroundRun::start_observed(&self.sup, &exe, &root, purpose, &cfg, progress)
                    .map_err(|r| r.message.clone().unwrap_or_else(|| "cannot start".into()))
            });
            let mut inner = self.lock();
            match started {
                Ok(background) => {
                    if let Some(e) = inner.runs.get_mut(&run) {
                        e.view.state = RunState::Running;
                        e.view.started_at_ms = Some(now_ms());
                    }
                    drop(inner);
                    let handle = background.handle().clone();
                    let runs = self.clone();
                    let spawned = std::thread::Builder::new()
                        .name(format!("loci-run-{run}"))
                        .spawn(move || runs.finish(run, background));
                    if let Err(e) = spawned {
                        // Nobody could wait for it: stop it rather than leave it unowned.
                        handle.cancel();
                        let _ = handle.wait();
                        let mut inner = self.lock();
                        inner.running -= 1;
                        if let Some(entry) = inner.runs.get_mut(&run) {
                            let message = format!("cannot start the thread that waits for it: {e}");
                            fail(entry, ErrorKind::SpawnFailed, &message);
                        }
                    }
                }
                Err(message) => {
                    inner.running -= 1;
                    if let Some(e) = inner.runs.get_mut(&run) {
                        let message = remote::scrub(&message, &e.paths);
                        fail(e, ErrorKind::SpawnFailed, &message);
                    }
                }
            }
        }
    }

    /// Waits for a run, records it, and lets the next one start.
    fn finish(self: &Arc<Self>, run: u64, background: BackgroundRun) {
        let handle = background.handle().clone();
        let record = background.wait_and_record();
        let outcome = handle.try_outcome();
        {
            let mut inner = self.lock();
            inner.running = inner.running.saturating_sub(1);
            if let Some(e) = inner.runs.get_mut(&run) {
                match judge(&record, outcome.as_ref()) {
                    None => {
                        e.view.state = RunState::Done;
                        e.view.ended_at_ms = Some(now_ms());
                    }
                    Some((kind, message)) => {
                        let message = remote::scrub(&message, &e.paths);
                        fail(e, kind, &message);
                    }
                }
            }
        }
        self.pump();
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        self.sup.shutdown();
    }
}

fn started(run: RunView, joined: bool) -> RunStarted {
    RunStarted {
        progress_url: run.url.clone(),
        run,
        joined,
    }
}

fn fail(e: &mut Entry, kind: ErrorKind, message: &str) {
    e.view.state = RunState::Failed;
    e.view.ended_at_ms = Some(now_ms());
    e.view.error = Some(RunError {
        kind,
        message: message.to_string(),
    });
}

/// `None` for a run that did its work, else its error kind and message: the child's
/// own error object when it printed one (`--json`), else what the lifecycle recorded.
fn judge(record: &RunRecord, outcome: Option<&Outcome>) -> Option<(ErrorKind, String)> {
    let from_child = outcome.and_then(|o| {
        let v: serde_json::Value = serde_json::from_str(&o.stdout.to_string_lossy()).ok()?;
        let e = v.get("error")?;
        let kind = ErrorKind::from_name(e.get("kind")?.as_str()?)?;
        let message = e.get("message")?.as_str()?.to_string();
        Some((kind, message))
    });
    let recorded = record.message.clone().unwrap_or_default();
    match record.result {
        RunResult::Ok => None,
        _ if from_child.is_some() => from_child,
        RunResult::Busy => Some((ErrorKind::Busy, recorded)),
        RunResult::Timeout => Some((ErrorKind::Timeout, recorded)),
        RunResult::Cancelled => Some((ErrorKind::Cancelled, recorded)),
        RunResult::SpawnFailed => Some((ErrorKind::SpawnFailed, recorded)),
        RunResult::UnexpectedOutput => Some((ErrorKind::Internal, recorded)),
        RunResult::Failed => Some((ErrorKind::Failure, recorded)),
    }
}

/// Forgets the oldest finished runs past [`KEPT_FINISHED`].
fn forget_old(inner: &mut Inner) {
    let finished: Vec<u64> = inner
        .runs
        .iter()
        .filter(|(_, e)| !e.active())
        .map(|(id, _)| *id)
        .collect();
    if finished.len() > KEPT_FINISHED {
        for id in &finished[..finished.len() - KEPT_FINISHED] {
            inner.runs.remove(id);
        }
    }
}
