//! Freshness in every answer of a long-lived front end, and drift repaired in the
//! background.
//!
//! Each workspace a session touches is [`Tracked`] once per process (by
//! [`crate::host::WorkspaceHost`]). A tool call reads
//! what is known (never waits): the index's own state from the read, the files the
//! last check found changed since the last sync, whether a sync runs and who else holds
//! the index. When the last check is older than [`CHECK_INTERVAL`], the call starts one
//! check on a thread (a read-only stat walk and a look at the write lock); a check that
//! finds drift starts one background `loci sync` under the host's supervisor, with the
//! lifecycle's rules: `lifecycle.syncOnStart`, the maintenance budget, one run per
//! workspace (and the supervisor's single-flight key), and no more than
//! [`MAX_FAILURES`] failed runs per session. Another process holding the index is
//! `busy`: nothing is started, and every result says who holds it. A run of this
//! process that ends clean also re-embeds what it changed when the workspace keeps
//! vectors for search by meaning ([`crate::meaning::refresh`]), in the background.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::Freshness;
use crate::vocab::index::WriteWork;
use loci_lifecycle::maintenance::{BackgroundRun, Purpose};
use loci_lifecycle::record::RunResult;
use loci_supervisor::Supervisor;
use serde::Serialize;

use crate::handle::Workspace;
use crate::meaning::refresh::{RefreshEvent, Refresher};
use crate::poison::lock;

/// How old a drift check may be before a call starts the next one.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(3);
/// How long a call waits for the drift check it started: the stat walk of most trees
/// ends within it, so an answer made right after an edit says so.
pub const CHECK_WAIT: Duration = Duration::from_millis(150);
/// Failed background runs one session tolerates (the first try and one retry).
pub const MAX_FAILURES: u32 = 2;

/// One workspace's freshness as this process knows it.
#[derive(Debug)]
pub struct Tracked {
    root: PathBuf,
    /// The supervisor the background syncs run under (the host's).
    sup: Arc<Supervisor>,
    state: Mutex<TrackState>,
    /// Re-embeds after this process's clean syncs (made at the first one).
    refresher: Mutex<Option<Refresher>>,
}

#[derive(Debug, Default)]
struct TrackState {
    checked_at: Option<Instant>,
    checking: bool,
    changed_files: u64,
    /// The background run this process started and still waits for.
    run: Option<(String, u32)>,
    /// Another process holding the index.
    holder: Option<loci_index::lock::LockRecord>,
    /// How the last background run of this process ended.
    last_run: Option<String>,
}

/// What a result says about the index it answered from.
#[derive(Debug, Clone, Serialize)]
pub struct IndexNote {
    /// `complete`, `indexing` (a run writes, or one was interrupted: the answer may be
    /// partial) or `missing` (no index yet).
    pub state: String,
    /// Files whose edges are not resolved yet.
    pub stale_files: u64,
    /// Files changed since the last sync, as of the last check.
    pub changed_files: u64,
    /// Whether a sync or index run is in flight (this process's, or another's).
    pub sync_running: bool,
    /// Who else holds the index (busy), if anyone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy: Option<String>,
    /// How the last background run of this process ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<String>,
    /// When the last index or sync run completed (seconds since the epoch): the tree
    /// the answer reflects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synced_at: Option<u64>,
    /// How long ago (ms) the last check of the whole tree for changed files ended;
    /// absent before the first one ends. `changed_files` is as of then, or of this
    /// answer's own files, checked when it was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked_ms_ago: Option<u64>,
    /// The git commit the index reflects, and `HEAD` now when it moved since (absent
    /// outside git).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<crate::CommitStamp>,
}

impl IndexNote {
    /// The short text line a result ends with when the index is not plainly fresh.
    pub fn line(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.state != "complete" {
            parts.push(format!("index {}", self.state));
        }
        if self.stale_files > 0 {
            parts.push(format!("{} files not yet resolved", self.stale_files));
        }
        if self.changed_files > 0 {
            parts.push(format!(
                "{} files changed since the last sync",
                self.changed_files
            ));
        }
        if let Some(c) = self.commit.as_ref().filter(|c| c.head_now.is_some()) {
            parts.push(format!("index {}", c.describe()));
        }
        if self.sync_running {
            parts.push("a sync is running".into());
        }
        if let Some(b) = &self.busy {
            parts.push(format!("busy: {b}"));
        }
        (!parts.is_empty()).then(|| format!("[{}]", parts.join("; ")))
    }
}

impl Tracked {
    /// Nothing known yet about `root`; its background syncs run under `sup`.
    pub fn new(root: &Path, sup: Arc<Supervisor>) -> Tracked {
        Tracked {
            root: root.to_path_buf(),
            sup,
            state: Mutex::new(TrackState::default()),
            refresher: Mutex::new(None),
        }
    }

    /// What is known now, combined with the read's own `freshness` (`None`: no index);
    /// when the last check is stale, starts the next one and waits for it at most
    /// [`CHECK_WAIT`].
    pub fn observe(
        self: &Arc<Self>,
        freshness: Option<Freshness>,
        session: &SessionRuns,
    ) -> IndexNote {
        self.observe_within(freshness, session, CHECK_WAIT)
    }

    /// [`Tracked::observe`], waiting at most `wait` for a check it starts.
    fn observe_within(
        self: &Arc<Self>,
        freshness: Option<Freshness>,
        session: &SessionRuns,
        wait: Duration,
    ) -> IndexNote {
        let mut st = lock(&self.state);
        let due = !st.checking
            && st
                .checked_at
                .is_none_or(|at| at.elapsed() >= CHECK_INTERVAL);
        if due {
            st.checking = true;
            let (me, session) = (self.clone(), session.clone());
            let (done, finished) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("loci-mcp-drift".into())
                .spawn(move || {
                    lower_priority();
                    // No heap trim here: malloc_trim holds every arena's lock, and on
                    // this lowest-priority thread the calls would wait behind it.
                    me.check(&session);
                    let _ = done.send(());
                });
            if spawned.is_err() {
                st.checking = false;
            } else {
                // A short wait for what the check finds (never the lock held: the
                // check takes it to record its result).
                drop(st);
                let _ = finished.recv_timeout(wait);
                st = lock(&self.state);
            }
        }
        let state = match &freshness {
            None => "missing".to_string(),
            Some(f) => f.state.to_string(),
        };
        // The answer's own files checked now, or the last check of the whole tree:
        // whichever saw more changed.
        let answer_changed = freshness
            .as_ref()
            .map_or(0, |f| f.changed_files.len() as u64);
        IndexNote {
            state,
            stale_files: freshness.as_ref().map_or(0, |f| f.stale_files),
            changed_files: st.changed_files.max(answer_changed),
            sync_running: st.run.is_some()
                || st.holder.as_ref().is_some_and(|h| {
                    matches!(
                        h.purpose,
                        WriteWork::Sync | WriteWork::Index | WriteWork::Rebuild
                    )
                }),
            busy: st
                .holder
                .as_ref()
                .map(|h| format!("pid {} ({}: {})", h.pid, h.purpose, h.command)),
            last_run: st.last_run.clone(),
            synced_at: freshness.as_ref().and_then(|f| f.synced_at),
            checked_ms_ago: st.checked_at.map(|at| at.elapsed().as_millis() as u64),
            commit: freshness.and_then(|f| f.commit),
        }
    }

    /// Takes over a background run (the gate's): this workspace's run in flight until
    /// it ends.
    pub fn adopt(self: &Arc<Self>, run: BackgroundRun, session: &SessionRuns) {
        {
            let mut st = lock(&self.state);
            st.run = Some((run.started().purpose.clone(), run.started().pid));
        }
        let (me, session) = (self.clone(), session.clone());
        let _ = std::thread::Builder::new()
            .name("loci-mcp-run".into())
            .spawn(move || {
                let record = run.wait_and_record();
                if record.result == RunResult::Ok {
                    me.index_changed();
                }
                let mut st = lock(&me.state);
                st.run = None;
                st.checked_at = None;
                st.last_run = Some(format!(
                    "{} {}",
                    record.purpose,
                    serde_json::to_value(record.result)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                ));
                if record.result.is_failure() {
                    session.failures.fetch_add(1, Ordering::SeqCst);
                }
                if record.result == RunResult::Ok {
                    st.changed_files = 0;
                }
            });
    }

    /// A sync of this process left the index clean: when the workspace keeps vectors
    /// (it ran `loci embed`), re-embed what changed on the refresher's own thread, as
    /// `loci watch` does; otherwise nothing.
    fn index_changed(&self) {
        let refresher = {
            let mut slot = lock(&self.refresher);
            if slot.is_none() {
                let Ok(located) = crate::locate(&self.root) else {
                    return;
                };
                *slot = Some(Refresher::new(
                    Workspace::new(located),
                    Box::new(log_refresh),
                ));
            }
            slot.clone()
        };
        if let Some(refresher) = refresher {
            refresher.index_changed();
        }
    }

    fn check(self: &Arc<Self>, session: &SessionRuns) {
        let located = crate::locate(&self.root).ok();
        let cfg = crate::config(Some(&self.root));
        let mut holder = None;
        let mut changed = None;
        if let Some(l) = &located
            && l.index_path.is_file()
        {
            let dir = l.index_path.parent().unwrap_or(&self.root);
            let ours = lock(&self.state).run.as_ref().map(|r| r.1);
            for lock_file in [
                loci_index::lock::lock_path(dir),
                loci_lifecycle::lockfile::watch_lock_path(dir),
            ] {
                if let Ok(Some(h)) = loci_index::lock::holder_at(&lock_file)
                    && Some(h.pid) != ours
                {
                    holder = Some(h);
                }
            }
            let mut opts = loci_index::drift::DriftOptions::new(&self.root);
            opts.index_path = Some(l.index_path.clone());
            opts.max_file_bytes = cfg.max_file_bytes();
            // One walker thread, at the lowest priority (inherited from this thread):
            // the check must not take a core from the calls it serves.
            opts.threads = 1;
            changed = loci_index::drift::drift(&opts)
                .ok()
                .map(|d| d.pending_work());
        }
        let start = {
            let mut st = lock(&self.state);
            st.checking = false;
            st.checked_at = Some(Instant::now());
            st.holder = holder;
            if let Some(n) = changed {
                st.changed_files = n;
            }
            changed.unwrap_or(0) > 0
                && st.run.is_none()
                && st.holder.is_none()
                && cfg.sync_on_start()
                && session.failures.load(Ordering::SeqCst) < MAX_FAILURES
        };
        if !start {
            return;
        }
        let Ok(exe) = loci_lifecycle::classify::executable(&cfg) else {
            return;
        };
        if let Ok(run) = BackgroundRun::start(
            &self.sup,
            &exe,
            &self.root,
            Purpose::Sync,
            &cfg,
            Some(&session.id),
        ) {
            self.adopt(run, session);
        }
    }
}

/// Gives this thread (and the threads it starts) the lowest CPU priority: Linux applies
/// `setpriority` to one thread, and a new thread inherits its creator's.
/// A background embed's events go to the process's log (a long-lived front end has no
/// stream of its own for them; its answers say `unembedded_files` meanwhile).
fn log_refresh(e: &RefreshEvent) {
    match e {
        RefreshEvent::Progress { done, total } => {
            tracing::debug!(done, total, "embedding code units");
        }
        RefreshEvent::Done(r) => tracing::info!(
            embedded = r.embedded,
            files = r.files_embedded,
            "code units embedded in the background"
        ),
        RefreshEvent::Failed { error } => tracing::warn!(%error, "background embed failed"),
        RefreshEvent::NoModel { error, .. } => {
            tracing::warn!(%error, "no embedding model: vectors are not kept fresh");
        }
    }
}

fn lower_priority() {
    let tid = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(tid), 19) {
        tracing::debug!(error = %e, "could not lower the drift check's priority");
    }
}

/// A session's share of the background work: its lifecycle session id and its failure
/// budget (re-armed when the session is replaced).
#[derive(Debug, Clone)]
pub struct SessionRuns {
    /// The lifecycle session id (notices once per id, failures counted per id).
    pub id: String,
    /// Failed background runs in this session.
    pub failures: Arc<AtomicU32>,
}

impl SessionRuns {
    /// A fresh budget under `id`.
    pub fn new(id: String) -> SessionRuns {
        SessionRuns {
            id,
            failures: Arc::new(AtomicU32::new(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call that finds the last check stale starts the next one and answers with what
    /// it found: an edit made just before the call is in its note.
    #[test]
    fn a_due_check_is_waited_for_and_its_finding_is_in_the_answer() {
        let (_dir, root) = crate::test_support::indexed_workspace();
        let host = crate::host::WorkspaceHost::new();
        let tracked = host.tracked(&root);
        let session = SessionRuns::new("test".into());
        // No background sync from a unit test: the failure budget is spent.
        session.failures.store(MAX_FAILURES, Ordering::SeqCst);
        std::fs::write(root.join("a.rs"), "pub fn a() {}\npub fn b() {}\n").unwrap();
        // A generous bound here; calls wait at most CHECK_WAIT.
        let note = tracked.observe_within(None, &session, Duration::from_secs(60));
        assert_eq!(note.changed_files, 1, "{note:?}");
        assert!(note.checked_ms_ago.is_some());
        assert!(
            note.line()
                .unwrap()
                .contains("1 files changed since the last sync")
        );
        // Not due again: the next call answers at once with the same finding.
        let again = tracked.observe_within(None, &session, Duration::ZERO);
        assert_eq!(again.changed_files, 1);
    }
}
