//! The watcher lock: `flock` on `<index dir>/watch.lock`, whose content names the
//! holder like the index's write lock does. A `loci watch` holds it for its lifetime,
//! so gates report the workspace `busy` (kept fresh by a watcher) instead of racing it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use loci_index::lock::LockRecord;

/// The watcher lock file of an index directory.
pub fn watch_lock_path(index_dir: &Path) -> PathBuf {
    index_dir.join("watch.lock")
}

/// A held watcher lock; released on drop (and by the kernel if the holder dies).
#[derive(Debug)]
pub struct WatchLock {
    file: File,
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
        let io = |source| WatchLockError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(index_dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(WatchLockError::Busy {
                    holder: read_record(&mut file).unwrap_or_else(unknown_holder),
                    path,
                });
            }
            Err(e) => return Err(io(e.into())),
        }
        let record = LockRecord {
            pid: std::process::id(),
            command: std::env::args().take(2).collect::<Vec<_>>().join(" "),
            purpose: "watch".into(),
            since: crate::record::now_ms() / 1000,
        };
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(&serde_json::to_vec(&record).unwrap_or_default())
            .map_err(io)?;
        Ok(WatchLock { file })
    }
}

impl Drop for WatchLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = rustix::fs::flock(&self.file, rustix::fs::FlockOperation::Unlock);
    }
}

/// Who holds the watcher lock of `index_dir`, without taking it.
pub fn watch_holder(index_dir: &Path) -> Result<Option<LockRecord>, std::io::Error> {
    let path = watch_lock_path(index_dir);
    let mut file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared) {
        Ok(()) => {
            let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::Unlock);
            Ok(None)
        }
        Err(rustix::io::Errno::WOULDBLOCK) => {
            Ok(Some(read_record(&mut file).unwrap_or_else(unknown_holder)))
        }
        Err(e) => Err(e.into()),
    }
}

fn unknown_holder() -> LockRecord {
    LockRecord {
        pid: 0,
        command: "unknown".into(),
        purpose: "watch".into(),
        since: 0,
    }
}

fn read_record(file: &mut File) -> Option<LockRecord> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}
