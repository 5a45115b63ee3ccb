//! `loci watch`: keep one workspace's index fresh. Holds the workspace's watcher lock
//! for its lifetime (gates see `busy`, naming it), catches up with changes made while
//! nothing watched, then syncs after each burst of changes once they have been quiet
//! for `lifecycle.watchDebounceMs`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};
use serde::Serialize;

use crate::lockfile::{WatchLock, WatchLockError};

/// How often the loop looks at the stop flag.
const TICK: Duration = Duration::from_millis(100);
/// A burst that never goes quiet is synced at least this many debounces apart.
const MAX_DEFER: u32 = 10;

/// What to watch and how.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Canonical workspace root.
    pub root: PathBuf,
    /// The index to keep fresh (where [`crate::locate`] places it).
    pub index_path: PathBuf,
    /// Quiet time before a sync.
    pub debounce: Duration,
    /// `index.maxFileBytes`.
    pub max_file_bytes: u64,
    /// `index.fileBudgetMs`.
    pub file_budget: loci_index::FileBudget,
}

/// One sync the watcher did.
#[derive(Debug, Clone, Serialize)]
pub struct WatchEvent {
    /// `catch_up` (at start) or `change`.
    pub trigger: &'static str,
    /// Files re-parsed.
    pub files_parsed: u64,
    /// Files removed from the index.
    pub files_removed: u64,
    /// Files in the index after the sync.
    pub files_indexed: u64,
    /// Whether anything was written.
    pub wrote: bool,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// Why the sync failed, if it did (the watcher keeps going).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Why the watcher could not run.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// Another watcher holds the lock.
    #[error(transparent)]
    Lock(#[from] WatchLockError),
    /// The OS file watcher failed.
    #[error("cannot watch {path}: {source}")]
    Notify {
        /// The workspace.
        path: PathBuf,
        /// What notify said.
        #[source]
        source: notify::Error,
    },
}

/// Watches until `stop` is set, calling `report` after every sync.
pub fn watch(
    opts: &WatchOptions,
    stop: &AtomicBool,
    report: &mut dyn FnMut(&WatchEvent),
) -> Result<(), WatchError> {
    // The watcher's lock sits beside the index it keeps, wherever that lives.
    let index_dir = opts.index_path.parent().unwrap_or(&opts.root);
    let _lock = WatchLock::try_acquire(index_dir)?;
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let _ = tx.send(res);
    })
    .map_err(|source| WatchError::Notify {
        path: opts.root.clone(),
        source,
    })?;
    watcher
        .watch(&opts.root, RecursiveMode::Recursive)
        .map_err(|source| WatchError::Notify {
            path: opts.root.clone(),
            source,
        })?;

    // `HEAD` moves (checkout, pull, rebase, reset, commit) are a reason to sync: the
    // files they change come as their own events, and the index records the commit.
    // The git directory is inside the root, and watched, unless the workspace is a
    // folder of a larger repository or a linked worktree: then it is watched too.
    let head = loci_index::checkout::head_files(&opts.root);
    if let Some(h) = &head {
        watch_head_files(&mut watcher, &opts.root, h);
    }
    let own = OwnFiles::new(&opts.root, head);
    // Catch up with what changed while nothing watched (events from now on are queued).
    let mut dirty_since: Option<Instant> = None;
    let mut last_event = Instant::now();
    if !sync_until_done(opts, "catch_up", stop, report) {
        return Ok(());
    }
    while !stop.load(Ordering::SeqCst) {
        match rx.recv_timeout(TICK) {
            Ok(Ok(event)) => {
                if changes_sources(&own, &event) {
                    dirty_since.get_or_insert_with(Instant::now);
                    last_event = Instant::now();
                }
            }
            Ok(Err(e)) => {
                // An overflow or a vanished directory: resync to be sure.
                tracing::warn!(error = %e, "watcher error; resyncing");
                dirty_since.get_or_insert_with(Instant::now);
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        }
        if let Some(since) = dirty_since {
            let quiet = last_event.elapsed() >= opts.debounce;
            let overdue = since.elapsed() >= opts.debounce * MAX_DEFER;
            if quiet || overdue {
                dirty_since = None;
                if !sync_until_done(opts, "change", stop, report) {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Watches the files that move `HEAD` where the root's recursive watch does not reach
/// them. A failure only logs: files still sync, the commit follows at the next sync.
fn watch_head_files(
    watcher: &mut impl Watcher,
    root: &Path,
    head: &loci_index::checkout::HeadFiles,
) {
    let mut dirs = vec![
        (head.git_dir.clone(), RecursiveMode::NonRecursive),
        (head.common_dir.clone(), RecursiveMode::NonRecursive),
        (head.common_dir.join("refs"), RecursiveMode::Recursive),
    ];
    dirs.dedup();
    for (dir, mode) in dirs {
        if dir.starts_with(root) {
            continue;
        }
        if let Err(e) = watcher.watch(&dir, mode) {
            tracing::warn!(path = %dir.display(), error = %e, "cannot watch git's refs; HEAD moves follow file changes only");
        }
    }
}

/// What loci itself writes inside the watched tree, whose changes are never a reason
/// to sync: `.loci/` (the index, its WAL and shared memory, the locks), and the registry
/// when it lives there (watching one's home directory, or a `LOCI_HOME` inside it).
struct OwnFiles {
    root: PathBuf,
    /// The registry's directory and file name (its `-wal`, `-shm` and `-journal` share it).
    registry: Option<(PathBuf, std::ffi::OsString)>,
    /// The files that move `HEAD` (outside git: none).
    head: Option<loci_index::checkout::HeadFiles>,
}

impl OwnFiles {
    fn new(root: &Path, head: Option<loci_index::checkout::HeadFiles>) -> OwnFiles {
        let registry = loci_store::registry::default_registry_path()
            .ok()
            .and_then(|path| {
                let name = path.file_name()?.to_os_string();
                let dir = path.parent()?;
                // Events name canonical paths under the canonical root; the directory may
                // not exist yet (the first sync that writes creates it).
                let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
                Some((dir, name))
            });
        OwnFiles {
            root: root.to_path_buf(),
            registry,
            head,
        }
    }

    fn is_registry(&self, path: &Path) -> bool {
        let Some((dir, name)) = &self.registry else {
            return false;
        };
        path == dir
            || (path.parent() == Some(dir.as_path())
                && path
                    .file_name()
                    .is_some_and(|n| n.as_encoded_bytes().starts_with(name.as_encoded_bytes())))
    }
}

/// Whether an event can change what the index holds. Opening or reading a file or a
/// directory cannot: a sync's own walk opens every directory and reads changed files,
/// and the OS reports those too, so counting them would sync forever. Changes to loci's
/// own files ([`OwnFiles`]) and VCS data cannot either, except what moves `HEAD`.
fn changes_sources(own: &OwnFiles, event: &notify::Event) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode};
    let writes = match event.kind {
        // A file closed after writing was modified (its `Modify` event says so too).
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    };
    writes
        && event.paths.iter().any(|p| {
            (relevant(&own.root, p) && !own.is_registry(p))
                || own.head.as_ref().is_some_and(|h| h.moves_head(p))
        })
}

/// Whether a changed path can affect the index (loci's own files and VCS data cannot).
fn relevant(root: &Path, path: &Path) -> bool {
    let rel = path.strip_prefix(root).unwrap_or(path);
    !rel.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some(".loci" | ".git" | ".hg" | ".svn")
        )
    })
}

/// Syncs; while another writer holds the index, waits a debounce and tries again.
/// Returns false if stopped meanwhile.
fn sync_until_done(
    opts: &WatchOptions,
    trigger: &'static str,
    stop: &AtomicBool,
    report: &mut dyn FnMut(&WatchEvent),
) -> bool {
    let mut index = loci_index::IndexOptions::new(&opts.root);
    index.index_path = Some(opts.index_path.clone());
    index.purpose = loci_index::WriteWork::Watch;
    index.max_file_bytes = opts.max_file_bytes;
    index.file_budget = opts.file_budget;
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let started = Instant::now();
        match loci_index::index_workspace(&index, &loci_index::NoProgress) {
            Ok(r) => {
                record_in_registry(&r);
                report(&WatchEvent {
                    trigger,
                    files_parsed: r.files_parsed,
                    files_removed: r.files_removed,
                    files_indexed: r.files_indexed,
                    wrote: r.wrote,
                    elapsed_ms: r.elapsed_ms,
                    error: None,
                });
                return true;
            }
            Err(loci_index::IndexError::Lock(loci_index::lock::LockError::Busy { .. })) => {
                std::thread::sleep(opts.debounce);
            }
            Err(e) => {
                report(&WatchEvent {
                    trigger,
                    files_parsed: 0,
                    files_removed: 0,
                    files_indexed: 0,
                    wrote: false,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    error: Some(e.to_string()),
                });
                return true;
            }
        }
    }
}

/// Registers a run that wrote, as `loci index` does.
pub fn record_in_registry(r: &loci_index::IndexReport) {
    if !r.wrote {
        return;
    }
    match loci_store::registry::Registry::open_default() {
        Ok(reg) => {
            if let Err(e) = reg.record_index(
                Path::new(&r.workspace),
                Path::new(&r.index_path),
                r.files_indexed as i64,
                r.symbols as i64,
            ) {
                tracing::warn!(error = %e, "index updated but not registered");
            }
        }
        Err(e) => tracing::warn!(error = %e, "index updated but the registry could not be opened"),
    }
}
