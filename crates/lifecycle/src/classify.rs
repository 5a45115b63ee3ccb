//! Deciding a workspace's state. Read-only: nothing here writes the workspace or
//! takes a lock from anyone.
//!
//! Order: the workspace must be readable; the marker decides indexedness (absent →
//! a probe, i.e. the registry; present → never a probe); a lock holder means a run in
//! flight or `busy`; the database must open, pass `quick_check` (cached while the file
//! is unchanged), have a known schema and a complete run; then a stat walk decides
//! `drift` or `clean`. Any error deciding is a corrupt-adjacent `unknown`, never drift.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use loci_index::drift::{DriftOptions, drift};
use loci_store::StoreError;

use crate::config::Config;
use crate::locate::LocateError;
use crate::lockfile::watch_holder;
use crate::probe::IndexednessProbe;
use crate::record::{Checked, DbStamp, Record, now_ms};
use crate::state::{Decider, State, Status};

pub use crate::locate::Located;

/// What a classification learned that is worth caching.
#[derive(Debug, Default, Clone)]
pub struct Learned {
    /// `quick_check` passed on this database.
    pub integrity: Option<Checked>,
}

impl Learned {
    /// Stores a passed integrity check in the workspace's record, so the next
    /// classification of the unchanged database skips `quick_check`: a scan of the
    /// whole index (about 150 ms on rust-analyzer's), which a status asked every second
    /// (the web view's live workspaces page) would otherwise pay every time.
    pub fn keep_integrity(&self, root: &Path) -> Result<(), std::io::Error> {
        let Some(checked) = self.integrity else {
            return Ok(());
        };
        crate::record::update(root, |r| r.integrity = Some(checked)).map(|_| ())
    }
}

/// The executable background runs use: `lifecycle.executable`, else this binary
/// (`loci_supervisor::own_executable`: the code this process runs, even after its file
/// was replaced or deleted by an upgrade).
pub fn executable(cfg: &Config) -> Result<PathBuf, String> {
    let path = match cfg.executable() {
        Some(p) => p,
        None => loci_supervisor::own_executable()
            .map_err(|e| format!("cannot find the loci executable: {e}"))?,
    };
    match rustix::fs::access(&path, rustix::fs::Access::EXEC_OK) {
        Ok(()) if path.is_file() => Ok(path),
        Ok(()) => Err(format!(
            "the loci executable {} is not a file",
            path.display()
        )),
        Err(e) => Err(format!(
            "the loci executable {} cannot be run: {e}",
            path.display()
        )),
    }
}

/// Resolves `path` to a canonical, readable directory, or an `unavailable` status.
pub fn resolve_root(path: &Path) -> Result<PathBuf, Box<Status>> {
    let shown = path.to_string_lossy().into_owned();
    let unavailable = |why: String| {
        Box::new(
            Status::new(State::Unavailable, why, shown.clone())
                .with_hint("give a readable workspace directory"),
        )
    };
    let root = loci_index::workspace_root(path).map_err(|e| unavailable(e.to_string()))?;
    std::fs::read_dir(&root)
        .map_err(|e| unavailable(format!("cannot read {}: {e}", root.display())))?;
    Ok(root)
}

/// Classifies the workspace at `root` (canonical). `record` supplies the integrity
/// cache and the run in flight; `check_executable` adds the background-run check.
pub fn classify(
    root: &Path,
    cfg: &Config,
    probe: &dyn IndexednessProbe,
    record: &Record,
    check_executable: bool,
) -> (Status, Learned) {
    let started = Instant::now();
    let (mut status, learned) = classify_inner(root, cfg, probe, record, check_executable);
    if let Some(by) = &status.facts.decided_by {
        status.reason = format!("{} (decided by {by})", status.reason);
    }
    status.facts.elapsed_ms = started.elapsed().as_millis() as u64;
    (status, learned)
}

fn classify_inner(
    root: &Path,
    cfg: &Config,
    probe: &dyn IndexednessProbe,
    record: &Record,
    check_executable: bool,
) -> (Status, Learned) {
    let ws = root.to_string_lossy().into_owned();
    if check_executable {
        return match executable(cfg) {
            Ok(exe) => {
                let mut s = classify_inner(root, cfg, probe, record, false);
                s.0.facts.executable = Some(exe.to_string_lossy().into_owned());
                s
            }
            Err(why) => {
                let s = Status::new(State::Unavailable, why, ws).with_hint(
                    "install loci on PATH or set lifecycle.executable (LOCI_LIFECYCLE_EXECUTABLE)",
                );
                (s, Learned::default())
            }
        };
    }
    let mut learned = Learned::default();
    let status = match decide(root, cfg, probe, record, &ws, &mut learned) {
        ControlFlow::Continue(s) | ControlFlow::Break(s) => s,
    };
    (status, learned)
}

/// A rule's verdict: go on to the next rule (with what it found), or this is the answer.
type Rule<T> = ControlFlow<Status, T>;

/// The rules in their order; the first to break decides the state.
fn decide(
    root: &Path,
    cfg: &Config,
    probe: &dyn IndexednessProbe,
    record: &Record,
    ws: &str,
    learned: &mut Learned,
) -> Rule<Status> {
    let found = indexedness(root, probe, record, ws)?;
    no_run_in_flight(&found, record)?;
    index_file_present(&found)?;
    maintainable(&found)?;
    let stored = database(&found, record, learned)?;
    completed(&found, &stored)?;
    ControlFlow::Continue(tree_state(root, cfg, &found, stored))
}

/// An indexed workspace: where its index lives and what decided it.
struct Indexed {
    ws: String,
    located: Located,
    decided_by: Option<String>,
    index_dir: PathBuf,
}

impl Indexed {
    /// `s` with the facts every status past indexedness carries.
    fn status(&self, mut s: Status) -> Status {
        s.facts.decider = Some(self.located.decider);
        s.facts.decided_by = self.decided_by.clone();
        s.facts.index_path = Some(self.located.index_path.to_string_lossy().into_owned());
        s
    }

    fn new_status(&self, state: State, why: impl Into<String>) -> Status {
        self.status(Status::new(state, why, self.ws.clone()))
    }

    fn corrupt(&self, why: String) -> Status {
        self.new_status(State::Corrupt, why)
            .with_hint("run `loci rebuild --yes` to rebuild it (the old index is deleted)")
    }

    fn unknown(&self, why: String) -> Status {
        self.status(unknown(self.ws.clone(), self.located.decider, why))
    }
}

/// Indexedness: the one rule every operation uses (the marker, else a probe).
fn indexedness(
    root: &Path,
    probe: &dyn IndexednessProbe,
    record: &Record,
    ws: &str,
) -> Rule<Indexed> {
    let (located, decided_by) = match crate::locate::locate_decided(root, probe) {
        Ok((l, by)) if l.decider != Decider::None => (l, by),
        Ok((_, by)) => {
            // A first index a gate handed off may not have created the marker yet.
            if let Some(s) = run_in_flight(record, ws) {
                return ControlFlow::Break(s);
            }
            let marker = root.join(loci_store::INDEX_DIR);
            if rustix::fs::access(root, rustix::fs::Access::WRITE_OK).is_err() {
                let s = Status::new(
                    State::Unavailable,
                    format!("no index, and {} is not writable for one", marker.display()),
                    ws,
                )
                .with_hint("make the workspace writable");
                return ControlFlow::Break(s);
            }
            let mut s = Status::new(
                State::Unindexed,
                "no .loci/ marker and no registry entry for this workspace",
                ws,
            )
            .with_hint("run `loci index`, or set lifecycle.autoCreate = true");
            s.facts.decider = Some(Decider::None);
            s.facts.decided_by = by;
            return ControlFlow::Break(s);
        }
        Err(LocateError::Busy { why, .. }) => {
            let mut s = Status::new(State::Busy, format!("registry is locked: {why}"), ws);
            s.facts.decider = Some(Decider::Registry);
            return ControlFlow::Break(s);
        }
        Err(LocateError::Unknown { why, .. }) => {
            return ControlFlow::Break(unknown(ws.to_string(), Decider::Registry, why));
        }
    };
    let index_dir = located
        .index_path
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    ControlFlow::Continue(Indexed {
        ws: ws.to_string(),
        located,
        decided_by,
        index_dir,
    })
}

/// A writer, a watcher, or a run a gate handed off, in flight.
fn no_run_in_flight(found: &Indexed, record: &Record) -> Rule<()> {
    match loci_index::lock::current_holder(&found.index_dir) {
        Ok(Some(holder)) => {
            let s = match State::of_run(holder.purpose) {
                Some(state) => found.new_status(
                    state,
                    format!(
                        "a loci {} run (pid {}) is in flight since {}",
                        holder.purpose, holder.pid, holder.since
                    ),
                ),
                None => found.new_status(
                    State::Busy,
                    format!(
                        "`{}` (pid {}, {}) holds the index since {}",
                        holder.command, holder.pid, holder.purpose, holder.since
                    ),
                ),
            };
            let mut s = s;
            s.facts.holder = Some(holder);
            return ControlFlow::Break(s);
        }
        Ok(None) => {}
        Err(e) => return ControlFlow::Break(found.unknown(e.to_string())),
    }
    match watch_holder(&found.index_dir) {
        Ok(Some(holder)) => {
            let mut s = found.new_status(
                State::Busy,
                format!(
                    "a loci watcher (`{}`, pid {}) keeps this index fresh since {}",
                    holder.command, holder.pid, holder.since
                ),
            );
            s.facts.holder = Some(holder);
            return ControlFlow::Break(s);
        }
        Ok(None) => {}
        Err(e) => return ControlFlow::Break(found.unknown(format!("watcher lock: {e}"))),
    }
    match run_in_flight(record, &found.ws) {
        Some(s) => ControlFlow::Break(found.status(s)),
        None => ControlFlow::Continue(()),
    }
}

/// The index file is there, and is a file.
fn index_file_present(found: &Indexed) -> Rule<()> {
    let index_path = &found.located.index_path;
    if index_path.exists() && !index_path.is_file() {
        let s = found
            .new_status(
                State::Corrupt,
                format!(
                    "{} is not a file (a directory or a special file stands where the index belongs)",
                    index_path.display()
                ),
            )
            .with_hint("move it away, then run `loci index` (loci never deletes a directory)");
        return ControlFlow::Break(s);
    }
    if !index_path.is_file() {
        let s = found
            .new_status(
                State::Unindexed,
                match found.located.decider {
                    Decider::Registry => format!(
                        "the registry names {} but it does not exist",
                        index_path.display()
                    ),
                    _ => "the .loci/ marker exists but holds no index".into(),
                },
            )
            .with_hint("run `loci index`, or set lifecycle.autoCreate = true");
        return ControlFlow::Break(s);
    }
    ControlFlow::Continue(())
}

/// A user who may not write the index can read it (queries work) but no run of theirs
/// could sync, rebuild or repair it: nothing for the lifecycle to do.
fn maintainable(found: &Indexed) -> Rule<()> {
    match not_writable(&found.index_dir, &found.located.index_path) {
        Some(why) => ControlFlow::Break(found.new_status(State::Unavailable, why).with_hint(
            "queries still read the index; run loci as the index's owner to sync or rebuild it, or grant this user write permission",
        )),
        None => ControlFlow::Continue(()),
    }
}

/// What the database itself says, once it opened and passed `quick_check`.
struct Stored {
    index_state: Option<String>,
    completed_before: bool,
    skipped: loci_index::SkippedFiles,
    /// `quick_check` was served from the integrity cache.
    integrity_cached: bool,
}

/// The database opens, passes `quick_check` (cached while the file is unchanged) and
/// its state can be read.
fn database(found: &Indexed, record: &Record, learned: &mut Learned) -> Rule<Stored> {
    let index_path = &found.located.index_path;
    let conn = match loci_store::open_index_read_only(index_path) {
        Ok(c) => c,
        Err(e) if e.is_busy() => {
            return ControlFlow::Break(found.new_status(
                State::Busy,
                format!("SQLite reports the index locked by another process: {e}"),
            ));
        }
        Err(e @ StoreError::UnknownSchema { .. }) => {
            return ControlFlow::Break(found.corrupt(e.to_string()));
        }
        Err(e) => {
            return ControlFlow::Break(found.corrupt(format!("the index does not open: {e}")));
        }
    };
    let stamp = DbStamp::of(index_path);
    let integrity_cached = matches!((record.integrity, stamp), (Some(c), Some(s)) if c.db == s);
    if !integrity_cached {
        match loci_store::quick_check(&conn) {
            Ok(None) => {
                learned.integrity = stamp.map(|db| Checked {
                    at_ms: now_ms(),
                    db,
                });
            }
            Ok(Some(problem)) => {
                return ControlFlow::Break(found.corrupt(format!("quick_check failed: {problem}")));
            }
            Err(e) if is_busy(&e) => {
                return ControlFlow::Break(
                    found.new_status(State::Busy, "SQLite reports the index locked"),
                );
            }
            Err(e) => return ControlFlow::Break(found.corrupt(format!("quick_check failed: {e}"))),
        }
    }
    match (
        loci_index::meta_get(&conn, loci_index::MetaKey::State),
        loci_index::meta_get(&conn, loci_index::MetaKey::CompletedAt),
        loci_index::recorded_skips(&conn, STATUS_SKIPPED_LISTED),
    ) {
        (Ok(index_state), Ok(completed), Ok(skipped)) => ControlFlow::Continue(Stored {
            index_state,
            completed_before: completed.is_some(),
            skipped,
            integrity_cached,
        }),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            ControlFlow::Break(found.corrupt(format!("cannot read the index state: {e}")))
        }
    }
}

/// The last run completed: an interrupted sync is drift (resumable), an interrupted
/// first index is `unindexed` (it starts over).
fn completed(found: &Indexed, stored: &Stored) -> Rule<()> {
    if stored.index_state.as_deref() == Some("complete") {
        return ControlFlow::Continue(());
    }
    let mut s = if stored.completed_before {
        // A sync after a complete index was interrupted: the index is sound, only
        // behind; the next sync resumes it (no consent needed, nothing destroyed).
        found.new_status(
            State::Drift,
            "an interrupted sync left work to finish; the next sync resumes it",
        )
    } else {
        // A first index was interrupted (no run ever completed): not corruption, since
        // quick_check passed, but no usable index either. Resuming it is index creation
        // (the gate does it with `lifecycle.autoCreate`); the run starts it over as a
        // first index, which is no slower than a rebuild.
        let mut s = found
            .new_status(
                State::Unindexed,
                format!(
                    "the first index of this workspace was interrupted before it completed (state {}; nothing is running now)",
                    stored.index_state.as_deref().unwrap_or("none")
                ),
            )
            .with_hint(
                "run `loci sync` to finish it (it starts over as a first index), or set lifecycle.autoCreate = true and the next session's gate does",
            );
        s.facts.interrupted = true;
        s
    };
    s.facts.index_state = stored.index_state.clone();
    s.facts.integrity_cached = stored.integrity_cached;
    ControlFlow::Break(s)
}

/// Drift or clean: a stat walk against the stored fingerprints.
fn tree_state(root: &Path, cfg: &Config, found: &Indexed, stored: Stored) -> Status {
    let mut opts = DriftOptions::new(root);
    opts.index_path = Some(found.located.index_path.clone());
    opts.max_file_bytes = cfg.max_file_bytes();
    let s = match drift(&opts) {
        Ok(report) if report.is_drift() => {
            let mut s = Status::new(State::Drift, drift_reason(&report), found.ws.clone())
                .with_hint("run `loci sync`");
            s.facts.drift = Some(report);
            s
        }
        Ok(report) => {
            let mut s = Status::new(
                State::Clean,
                "the index matches the working tree",
                found.ws.clone(),
            );
            s.facts.drift = Some(report);
            s
        }
        Err(e) => unknown(
            found.ws.clone(),
            found.located.decider,
            format!("drift check failed: {e}"),
        ),
    };
    let mut s = found.status(s);
    s.facts.index_state = stored.index_state;
    s.facts.integrity_cached = stored.integrity_cached;
    s.facts.skipped = (stored.skipped.total > 0).then_some(stored.skipped);
    s
}

/// Why the index is behind, in one sentence.
fn drift_reason(report: &loci_index::drift::DriftReport) -> String {
    let mut why = format!(
        "the index is behind the working tree: {} added, {} changed, {} removed",
        report.added, report.changed, report.removed
    );
    if report.pending_resolve > 0 {
        why.push_str(&format!(", {} files to re-resolve", report.pending_resolve));
    }
    if report.outdated > 0 {
        why.push_str(&format!(
            ", {} files indexed by older extractor rules",
            report.outdated
        ));
    }
    if report.manifests > 0 {
        why.push_str(", the crate names in Cargo.toml changed");
    }
    if report.rules > 0 {
        why.push_str(", the edges were linked by older resolution rules");
    }
    if report.module_configs > 0 {
        why.push_str(", the module settings in tsconfig.json/jsconfig.json/go.mod changed");
    }
    if report.head_moved > 0 {
        why.push_str(", HEAD moved to another commit");
    }
    why
}

/// Most skipped files a status lists by name (`loci stats` lists more).
const STATUS_SKIPPED_LISTED: usize = 20;

/// The in-flight state of a run a gate handed off, while its owner and the run live
/// (this covers the time before the run takes the write lock, or creates the marker).
fn run_in_flight(record: &Record, ws: &str) -> Option<Status> {
    let run = record.live_running()?;
    let state = State::of_run(loci_index::WriteWork::parse(&run.purpose))?;
    Some(Status::new(
        state,
        format!(
            "a background {} (pid {}, owned by pid {}) is in flight",
            run.purpose, run.pid, run.owner_pid
        ),
        ws,
    ))
}

/// Why this user cannot maintain the index at `index_path`: the directory (where
/// SQLite creates the `-wal`, `-shm` and lock files) or the file itself is not
/// writable for them. `None` when both are.
fn not_writable(index_dir: &Path, index_path: &Path) -> Option<String> {
    use rustix::fs::{Access, access};
    let (what, path) = if let Err(e) = access(index_dir, Access::WRITE_OK) {
        ("directory", (index_dir, e))
    } else if let Err(e) = access(index_path, Access::WRITE_OK) {
        ("file", (index_path, e))
    } else {
        return None;
    };
    let (path, e) = path;
    Some(format!(
        "the index {what} {} is not writable by this user (uid {}): {e}; loci needs write permission on it to sync or rebuild the index",
        path.display(),
        rustix::process::geteuid().as_raw(),
    ))
}

fn is_busy(e: &loci_store::rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            loci_store::rusqlite::ErrorCode::DatabaseBusy
                | loci_store::rusqlite::ErrorCode::DatabaseLocked
        )
    )
}

/// The corrupt-adjacent unknown: the state could not be decided. No work follows.
pub fn unknown(workspace: String, decider: Decider, why: String) -> Status {
    let mut s = Status::new(State::Corrupt, format!("unknown: {why}"), workspace)
        .with_hint("nothing was changed; `loci status` shows the state once it can be read");
    s.facts.unknown = true;
    s.facts.decider = Some(decider);
    s
}
