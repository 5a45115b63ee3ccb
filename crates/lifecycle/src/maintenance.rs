//! Background maintenance runs: loci re-executing itself (`loci index|sync <root>
//! --json`) through the supervisor, with the maintenance budget, bounded output, the
//! `LOCI_AUTO_WATCH=0` pin merged over the inherited environment, one run per
//! workspace (single-flight key here, the index's write lock across processes), and
//! torn down with the process that owns it.
//!
//! The gate does not own its runs: it answers within its host's hook timeout and is
//! then gone (or killed). It hands each run off ([`hand_off`]) to an owner process,
//! `<this loci> gate --own <purpose> <root>`, started in its own session, outside the
//! gate's teardown registry. The owner supervises the run as above, bounds its own
//! life (the run's budget, its kill grace and a margin), records the run as in flight
//! and then its outcome, and keeps the run's bounded output in a log next to the
//! workspace's record. Terminating the owner tears the run down.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use loci_supervisor::{DEFAULT_BUDGET, EnvPolicy, Exit, Handle, Outcome, SpawnSpec, Supervisor};

use crate::config::Config;
use crate::progress::{PROGRESS_LINES, PROGRESS_VAR, ProgressLineReader, RunProgress};
use crate::rebuild::Consent;
use crate::record::{self, RunRecord, RunResult, Running, now_ms};
use crate::state::Started;

/// Bytes of stdout and of stderr kept from a background run.
pub const CAPTURE_CAP: usize = 64 * 1024;
/// Exit code of a loci run that found the index busy.
const EXIT_BUSY: i32 = loci_exit::ExitCode::Busy as i32;
/// Characters of stderr kept in a run record.
const MESSAGE_CHARS: usize = 600;
/// How long a run's owner outlives the run's budget and kill grace at most (recording
/// the outcome, refreshing the caches) before it ends itself.
pub const OWNER_MARGIN: Duration = Duration::from_secs(60);
/// The `loci gate` flag that makes the process a run's owner.
pub const OWN_FLAG: &str = "--own";

/// What a background run does.
#[derive(Debug, Clone, Copy)]
pub enum Purpose {
    /// Build the first index (`loci index`).
    Index,
    /// Bring the index up to date (`loci sync`).
    Sync,
    /// Delete the index and build it again (`loci rebuild --yes`): only with the
    /// caller's [`Consent`], which no name parses into.
    Rebuild(Consent),
}

impl PartialEq for Purpose {
    fn eq(&self, other: &Purpose) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Purpose {}

impl Purpose {
    /// The purpose named `name` (`index`, `sync`). `rebuild` is not parsed: a
    /// rebuild needs consent given with the request, never a name handed around.
    pub fn parse(name: &str) -> Option<Purpose> {
        match name {
            "index" => Some(Purpose::Index),
            "sync" => Some(Purpose::Sync),
            _ => None,
        }
    }

    /// The subcommand and lock purpose.
    pub fn name(self) -> &'static str {
        self.work().name()
    }

    /// The work its run takes the write lock for.
    pub fn work(self) -> loci_index::WriteWork {
        match self {
            Purpose::Index => loci_index::WriteWork::Index,
            Purpose::Sync => loci_index::WriteWork::Sync,
            Purpose::Rebuild(_) => loci_index::WriteWork::Rebuild,
        }
    }
}

/// The single-flight key of a workspace's maintenance.
pub fn flight_key(root: &Path) -> String {
    format!("maintenance:{}", root.display())
}

/// The spec of one maintenance run and what the gate reports about it.
pub fn spec(exe: &Path, root: &Path, purpose: Purpose, cfg: &Config) -> (SpawnSpec, Started) {
    let mut args = vec![
        purpose.name().to_string(),
        root.to_string_lossy().into_owned(),
        "--json".to_string(),
    ];
    if let Purpose::Rebuild(_) = purpose {
        args.push("--yes".to_string());
    }
    let mut spec = SpawnSpec::new(exe.as_os_str())
        .args(&args)
        .cwd(root)
        .env(EnvPolicy::loci_child())
        .capture_cap(CAPTURE_CAP)
        .single_flight(flight_key(root));
    // Absent key: the seam stays unset and the supervisor's own default applies.
    let (budget, source) = match cfg.maintenance_timeout() {
        Some(b) => {
            spec = spec.budget(b);
            (b, "index.maintenanceTimeoutMs")
        }
        None => (DEFAULT_BUDGET, "default"),
    };
    let started = Started {
        purpose: purpose.name().into(),
        pid: 0,
        budget_ms: budget.as_millis() as u64,
        budget_source: source.into(),
        program: exe.to_string_lossy().into_owned(),
        args,
    };
    (spec, started)
}

/// Hands `purpose` on `root` off to an owner process (`<owner_exe> gate --own <purpose>
/// [--session ID] <root>`, normally this very binary) and records it as in flight, so
/// later gates see the run before it takes the write lock. Returns at once with what
/// the gate reports: the owner's pid and the budget the owner will give the run.
pub fn hand_off(
    sup: &Supervisor,
    owner_exe: &Path,
    run_exe: &Path,
    root: &Path,
    purpose: Purpose,
    cfg: &Config,
    session: Option<&str>,
) -> Result<Started, Box<RunRecord>> {
    let (_, mut started) = spec(run_exe, root, purpose, cfg);
    let mut args: Vec<OsString> = vec!["gate".into(), OWN_FLAG.into(), purpose.name().into()];
    if let Some(s) = session {
        args.extend(["--session".into(), s.into()]);
    }
    args.push(root.as_os_str().to_owned());
    let owner = SpawnSpec::new(owner_exe.as_os_str())
        .args(args)
        .cwd(root)
        .env(EnvPolicy::loci_child());
    let started_at_ms = now_ms();
    match sup.hand_off(owner) {
        Ok(pid) => {
            started.pid = pid;
            let running = Running {
                purpose: purpose.name().into(),
                pid,
                owner_pid: pid,
                started_at_ms,
            };
            if let Err(e) = record::update(root, |r| r.running = Some(running)) {
                tracing::warn!(error = %e, "cannot record the handed-off run");
            }
            Ok(started)
        }
        Err(e) => Err(spawn_failed(
            root,
            purpose,
            &started,
            started_at_ms,
            session,
            &e,
        )),
    }
}

/// Records a run that could not be spawned, and returns its record.
fn spawn_failed(
    root: &Path,
    purpose: Purpose,
    started: &Started,
    started_at_ms: u64,
    session: Option<&str>,
    e: &dyn std::fmt::Display,
) -> Box<RunRecord> {
    let run = RunRecord {
        purpose: purpose.name().into(),
        result: RunResult::SpawnFailed,
        budget_ms: started.budget_ms,
        started_at_ms,
        ended_at_ms: now_ms(),
        exit: None,
        message: Some(e.to_string()),
        session: session.map(str::to_string),
    };
    finish(root, &run);
    Box::new(run)
}

/// The longest an owner of a run with `budget` may live: the budget, the supervisor's
/// kill grace, and [`OWNER_MARGIN`].
pub fn owner_deadline(budget: Duration) -> Duration {
    budget + loci_supervisor::DEFAULT_KILL_GRACE + OWNER_MARGIN
}

/// A maintenance run in flight, owned by this process.
#[derive(Debug)]
pub struct BackgroundRun {
    handle: Handle,
    root: PathBuf,
    started: Started,
    started_at_ms: u64,
    session: Option<String>,
}

impl BackgroundRun {
    /// Starts `purpose` on `root` under `sup` and records it as running. Returns at once.
    pub fn start(
        sup: &Supervisor,
        exe: &Path,
        root: &Path,
        purpose: Purpose,
        cfg: &Config,
        session: Option<&str>,
    ) -> Result<BackgroundRun, Box<RunRecord>> {
        let (spec, started) = spec(exe, root, purpose, cfg);
        Self::start_spec(sup, spec, started, root, purpose, session)
    }

    /// [`start`](Self::start), with the run's parse progress (the files it has to
    /// parse and has parsed) kept in `progress` as the run reports it.
    pub fn start_observed(
        sup: &Supervisor,
        exe: &Path,
        root: &Path,
        purpose: Purpose,
        cfg: &Config,
        progress: RunProgress,
    ) -> Result<BackgroundRun, Box<RunRecord>> {
        let (spec, started) = spec(exe, root, purpose, cfg);
        let mut reader = ProgressLineReader::default();
        let spec = spec
            .env(EnvPolicy::loci_child().pin(PROGRESS_VAR, PROGRESS_LINES))
            .on_stderr(move |chunk| {
                reader.feed(chunk, &progress);
                std::ops::ControlFlow::Continue(())
            });
        Self::start_spec(sup, spec, started, root, purpose, None)
    }

    fn start_spec(
        sup: &Supervisor,
        spec: SpawnSpec,
        mut started: Started,
        root: &Path,
        purpose: Purpose,
        session: Option<&str>,
    ) -> Result<BackgroundRun, Box<RunRecord>> {
        let started_at_ms = now_ms();
        let handle = match sup.spawn(spec) {
            Ok(h) => h,
            Err(e) => {
                return Err(spawn_failed(
                    root,
                    purpose,
                    &started,
                    started_at_ms,
                    session,
                    &e,
                ));
            }
        };
        started.pid = handle.pid();
        let running = Running {
            purpose: purpose.name().into(),
            pid: handle.pid(),
            owner_pid: std::process::id(),
            started_at_ms,
        };
        if let Err(e) = record::update(root, |r| r.running = Some(running)) {
            tracing::warn!(error = %e, "cannot record the background run");
        }
        Ok(BackgroundRun {
            handle,
            root: root.to_path_buf(),
            started,
            started_at_ms,
            session: session.map(str::to_string),
        })
    }

    /// What the gate reports about this run.
    pub fn started(&self) -> &Started {
        &self.started
    }

    /// The supervisor's handle (cancel, wait).
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Waits for the run to end (its budget bounds this), records the outcome as the
    /// workspace's last run, and returns it.
    pub fn wait_and_record(self) -> RunRecord {
        let outcome = self.handle.wait();
        write_log(&self.root, &self.started, &outcome);
        let run = judge(
            &self.started,
            &outcome,
            self.started_at_ms,
            self.session.clone(),
        );
        finish(&self.root, &run);
        run
    }
}

/// Keeps the run's bounded capture (at most [`CAPTURE_CAP`] per stream) as the
/// workspace's run log, replacing the previous run's.
fn write_log(root: &Path, started: &Started, o: &Outcome) {
    let Some(path) = record::log_path(root) else {
        return;
    };
    let text = format!(
        "{} {} ({})\n--- stdout ---\n{}\n--- stderr ---\n{}\n",
        started.program,
        started.args.join(" "),
        o.exit,
        o.stdout.to_string_lossy(),
        o.stderr.to_string_lossy()
    );
    if let Err(e) = std::fs::write(&path, text) {
        tracing::warn!(error = %e, path = %path.display(), "cannot write the run log");
    }
}

fn finish(root: &Path, run: &RunRecord) {
    let result = record::update(root, |r| {
        if r.running
            .as_ref()
            .is_some_and(|x| x.owner_pid == std::process::id() || !record::pid_alive(x.owner_pid))
        {
            r.running = None;
        }
        r.last_run = Some(run.clone());
        if run.result.is_failure()
            && let Some(s) = &run.session
        {
            *r.session(s)
                .failures
                .entry(run.purpose.clone())
                .or_insert(0) += 1;
        }
    });
    if let Err(e) = result {
        tracing::warn!(error = %e, "cannot record the run's outcome");
    }
}

/// Maps a supervisor outcome to a run record.
fn judge(started: &Started, o: &Outcome, started_at_ms: u64, session: Option<String>) -> RunRecord {
    let stderr = tail(&o.stderr.to_string_lossy());
    let (result, message) = if o.timed_out {
        (
            RunResult::Timeout,
            Some(format!(
                "cancelled after its budget of {} ms",
                started.budget_ms
            )),
        )
    } else if o.cancelled {
        (RunResult::Cancelled, Some("cancelled".into()))
    } else {
        match o.exit {
            Exit::Code(0) => {
                let out = o.stdout.to_string_lossy();
                match serde_json::from_str::<serde_json::Value>(&out) {
                    Ok(v) if v.get("workspace").is_some() => (RunResult::Ok, None),
                    _ => (
                        RunResult::UnexpectedOutput,
                        Some(format!("unexpected output: {}", tail(&out))),
                    ),
                }
            }
            Exit::Code(EXIT_BUSY) => (RunResult::Busy, Some(stderr)),
            _ => (RunResult::Failed, Some(stderr)),
        }
    };
    RunRecord {
        purpose: started.purpose.clone(),
        result,
        budget_ms: started.budget_ms,
        started_at_ms,
        ended_at_ms: now_ms(),
        exit: Some(o.exit.to_string()),
        message: message.filter(|m| !m.is_empty()),
        session,
    }
}

fn tail(text: &str) -> String {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !crate::progress::is_progress_line(l))
        .collect();
    let kept = kept.join("\n");
    let text = kept.trim();
    let n = text.chars().count();
    if n <= MESSAGE_CHARS {
        text.to_string()
    } else {
        text.chars().skip(n - MESSAGE_CHARS).collect()
    }
}

/// The default budget of a maintenance run when `index.maintenanceTimeoutMs` is unset.
pub fn default_budget() -> Duration {
    DEFAULT_BUDGET
}
