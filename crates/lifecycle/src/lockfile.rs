//! The watcher lock: the index's kind of write lock ([`WriteLock`]) on
//! `<index dir>/watch.lock`, whose content names the holder like the index's does. A `loci watch` holds it for its lifetime,
//! so gates report the workspace `busy` (kept fresh by a watcher) instead of racing it.

use std::path::{Path, PathBuf};

use loci_index::lock::{LockError, LockRecord, WriteLock, WriteWork, holder_at};

/// The watcher lock file of an index directory.
pub fn watch_lock_path(index_dir: &Path) -> PathBuf {
    index_dir.join("watch.lock")
}

/// A held watcher lock; released on drop (and by the kernel if the holder dies).
#[derive(Debug)]
pub struct WatchLock {
    _lock: WriteLock,
}

/// Why the watcher lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum WatchLockError {
    /// Another watcher holds it.
    #[error("another watcher holds {}: {} (pid {})", .path.display(), .holder.command, .holder.pid)]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// Who holds it.
        holder: LockRecord,
    },
    /// The file could not be used.
    #[error("cannot use lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl WatchLock {
    /// Takes the watcher lock of `index_dir` without waiting.
    pub fn try_acquire(index_dir: &Path) -> Result<WatchLock, WatchLockError> {
        let path = watch_lock_path(index_dir);
        std::fs::create_dir_all(index_dir).map_err(|source| WatchLockError::Io {
            path: path.clone(),
            source,
        })?;
        match WriteLock::try_acquire_at(&path, WriteWork::Watch) {
            Ok(lock) => Ok(WatchLock { _lock: lock }),
            Err(LockError::Busy { holder }) => Err(WatchLockError::Busy {
                path,
                holder: holder.unwrap_or_else(unknown_holder),
            }),
            Err(LockError::Io { path, source }) => Err(WatchLockError::Io { path, source }),
        }
    }
}

/// Who holds the watcher lock of `index_dir`, without taking it.
pub fn watch_holder(index_dir: &Path) -> Result<Option<LockRecord>, std::io::Error> {
    match holder_at(&watch_lock_path(index_dir)) {
        Ok(holder) => Ok(holder.map(|h| if h.pid == 0 { unknown_holder() } else { h })),
        Err(LockError::Io { source, .. }) => Err(source),
        Err(LockError::Busy { .. }) => Ok(None),
    }
}

fn unknown_holder() -> LockRecord {
    LockRecord {
        pid: 0,
        command: "unknown".into(),
        purpose: WriteWork::Watch,
        since: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn watcher_lock_probes_never_make_a_watcher_fail() {
        let dir = tempfile::tempdir().unwrap();
        drop(WatchLock::try_acquire(dir.path()).unwrap());
        let stop = AtomicBool::new(false);
        let failures = std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        watch_holder(dir.path()).unwrap();
                    }
                });
            }
            let failures = (0..3_000)
                .filter(|_| WatchLock::try_acquire(dir.path()).is_err())
                .count();
            stop.store(true, Ordering::Relaxed);
            failures
        });
        assert_eq!(
            failures, 0,
            "watcher lock acquisitions failed beside probes"
        );
        // A held lock is still seen, and still refused to a second watcher.
        let held = WatchLock::try_acquire(dir.path()).unwrap();
        assert_eq!(
            watch_holder(dir.path()).unwrap().map(|h| h.pid),
            Some(std::process::id())
        );
        assert!(matches!(
            WatchLock::try_acquire(dir.path()),
            Err(WatchLockError::Busy { .. })
        ));
        drop(held);
        assert_eq!(watch_holder(dir.path()).unwrap(), None);
    }
}
