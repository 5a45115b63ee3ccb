//! The workspace's write lock: one indexer at a time, and a record saying who holds it.
//!
//! The lock is an advisory `flock` on `.loci/index.lock`, released by the kernel when the
//! holder dies (so a kill -9 never leaves a stale lock). The file's content names the
//! holder (pid, command, purpose, since) so others can report *who* is busy.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Who holds a workspace's write lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRecord {
    /// Process id of the holder.
    pub pid: u32,
    /// The holder's command line (program and subcommand).
    pub command: String,
    /// What it is doing: `index`, `sync`, `rebuild`, `watch`.
    pub purpose: String,
    /// Unix seconds when it took the lock.
    pub since: u64,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("the index is busy: {} (pid {}) has held it since {} for {}", .holder.as_ref().map(|h| h.command.as_str()).unwrap_or("another process"), .holder.as_ref().map(|h| h.pid).unwrap_or(0), .holder.as_ref().map(|h| h.since).unwrap_or(0), .holder.as_ref().map(|h| h.purpose.as_str()).unwrap_or("unknown work"))]
    Busy {
        /// What the lock file says about the holder, if readable.
        holder: Option<LockRecord>,
    },
    /// The lock file could not be created or locked.
    #[error("cannot use lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// A held write lock; released on drop.
#[derive(Debug)]
pub struct WriteLock {
    file: File,
    path: PathBuf,
}

/// The lock file for an index directory.
pub fn lock_path(index_dir: &Path) -> PathBuf {
    index_dir.join("index.lock")
}

impl WriteLock {
    /// Takes the index's write lock (`<index_dir>/index.lock`) without waiting, writing a
    /// record of `purpose` into it.
    pub fn try_acquire(index_dir: &Path, purpose: &str) -> Result<WriteLock, LockError> {
        std::fs::create_dir_all(index_dir).map_err(|source| LockError::Io {
            path: index_dir.to_path_buf(),
            source,
        })?;
        WriteLock::try_acquire_at(&lock_path(index_dir), purpose)
    }

    /// Takes the lock held on any lock file `path` (the watcher's, say) the same way.
    pub fn try_acquire_at(path: &Path, purpose: &str) -> Result<WriteLock, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(LockError::Busy {
                    holder: read_record(&mut file),
                });
            }
            Err(e) => return Err(io(e.into())),
        }
        let record = LockRecord {
            pid: std::process::id(),
            command: std::env::args().take(2).collect::<Vec<_>>().join(" "),
            purpose: purpose.to_string(),
            since: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        };
        let json = serde_json::to_vec(&record).unwrap_or_default();
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(&json).map_err(io)?;
        Ok(WriteLock {
            file,
            path: path.to_path_buf(),
        })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = rustix::fs::flock(&self.file, rustix::fs::FlockOperation::Unlock);
    }
}

/// Who holds the index's write lock right now, without taking it: `None` when nobody does.
pub fn current_holder(index_dir: &Path) -> Result<Option<LockRecord>, LockError> {
    holder_at(&lock_path(index_dir))
}

/// Who holds the lock file `path`, without taking it: `None` when nobody does.
pub fn holder_at(path: &Path) -> Result<Option<LockRecord>, LockError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(LockError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared) {
        Ok(()) => {
            let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::Unlock);
            Ok(None)
        }
        Err(rustix::io::Errno::WOULDBLOCK) => {
            Ok(Some(read_record(&mut file).unwrap_or(LockRecord {
                pid: 0,
                command: "unknown".into(),
                purpose: "unknown".into(),
                since: 0,
            })))
        }
        Err(e) => Err(LockError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        }),
    }
}

fn read_record(file: &mut File) -> Option<LockRecord> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_acquire_is_busy_and_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let held = WriteLock::try_acquire(dir.path(), "index").unwrap();
        match WriteLock::try_acquire(dir.path(), "sync") {
            Err(LockError::Busy { holder: Some(h) }) => {
                assert_eq!(h.pid, std::process::id());
                assert_eq!(h.purpose, "index");
            }
            other => panic!("expected busy, got {:?}", other.map(|_| ())),
        }
        assert_eq!(
            current_holder(dir.path()).unwrap().map(|h| h.purpose),
            Some("index".to_string())
        );
        drop(held);
        assert_eq!(current_holder(dir.path()).unwrap(), None);
        WriteLock::try_acquire(dir.path(), "sync").unwrap();
    }
}
