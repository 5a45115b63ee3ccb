//! The workspace's write lock: one indexer at a time, and a record saying who holds it.
//!
//! The lock is an advisory lock on `.loci/index.lock` that belongs to the open file (on
//! Linux an open file description lock, elsewhere `flock`), released by the kernel when
//! the holder dies (so a kill -9 never leaves a stale lock). The file's content names
//! the holder (pid, command, purpose, since) so others can report *who* is busy.
//!
//! Looking at a lock never takes it: a status or gate probe tests the lock with
//! `F_OFD_GETLK`, so a writer starting at that instant is never told the index is busy.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// What a write-lock holder is doing: the work loci's runs take the lock for. Written
/// into the lock file by name; a name this build does not know (a newer loci's) reads
/// back as [`WriteWork::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteWork {
    /// Building the first index (`loci index`).
    Index,
    /// Bringing the index up to date (`loci sync`, the gate's runs).
    Sync,
    /// Deleting the index and building it again (`loci rebuild --yes`).
    Rebuild,
    /// Keeping the index up to date as files change (`loci watch`).
    Watch,
    /// Work this build does not name.
    #[serde(other)]
    Other,
}

impl WriteWork {
    /// The work named `name` ([`WriteWork::Other`] for a name this build does not know):
    /// for records other processes wrote.
    pub fn parse(name: &str) -> WriteWork {
        [
            WriteWork::Index,
            WriteWork::Sync,
            WriteWork::Rebuild,
            WriteWork::Watch,
        ]
        .into_iter()
        .find(|w| w.name() == name)
        .unwrap_or(WriteWork::Other)
    }

    /// The name the lock file and reports use.
    pub fn name(self) -> &'static str {
        match self {
            WriteWork::Index => "index",
            WriteWork::Sync => "sync",
            WriteWork::Rebuild => "rebuild",
            WriteWork::Watch => "watch",
            WriteWork::Other => "other",
        }
    }
}

impl std::fmt::Display for WriteWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Who holds a workspace's write lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRecord {
    /// Process id of the holder.
    pub pid: u32,
    /// The holder's command line (program and subcommand).
    pub command: String,
    /// What it is doing.
    pub purpose: WriteWork,
    /// Unix seconds when it took the lock.
    pub since: u64,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("the index is busy: {} (pid {}) has held it since {} for {}", .holder.as_ref().map(|h| h.command.as_str()).unwrap_or("another process"), .holder.as_ref().map(|h| h.pid).unwrap_or(0), .holder.as_ref().map(|h| h.since).unwrap_or(0), .holder.as_ref().map(|h| h.purpose.name()).unwrap_or("unknown work"))]
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
    pub fn try_acquire(index_dir: &Path, purpose: WriteWork) -> Result<WriteLock, LockError> {
        std::fs::create_dir_all(index_dir).map_err(|source| LockError::Io {
            path: index_dir.to_path_buf(),
            source,
        })?;
        WriteLock::try_acquire_at(&lock_path(index_dir), purpose)
    }

    /// Takes the lock held on any lock file `path` (the watcher's, say) the same way.
    pub fn try_acquire_at(path: &Path, purpose: WriteWork) -> Result<WriteLock, LockError> {
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
        if !os::try_lock(&file).map_err(io)? {
            return Err(LockError::Busy {
                holder: read_record(&mut file),
            });
        }
        let record = LockRecord {
            pid: std::process::id(),
            command: std::env::args().take(2).collect::<Vec<_>>().join(" "),
            purpose,
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
        os::unlock(&self.file);
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
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    // A writer writes its record right after it takes the lock: a probe landing in
    // between reads an empty file, so it looks again for a moment before it names an
    // unknown holder (a record that names no one would make "once per holder" notices
    // repeat).
    let until = std::time::Instant::now() + RECORD_WAIT;
    loop {
        if !os::is_locked(&file).map_err(io)? {
            return Ok(None);
        }
        if let Some(record) = read_record(&mut file) {
            return Ok(Some(record));
        }
        if std::time::Instant::now() >= until {
            return Ok(Some(LockRecord {
                pid: 0,
                command: "unknown".into(),
                purpose: WriteWork::Other,
                since: 0,
            }));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// How long a probe waits for a lock holder's record to appear.
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The lock itself. On Linux an open file description lock (`F_OFD_SETLK`) on the whole
/// file: like `flock` it belongs to the open file (a second open, even in the same
/// process, conflicts; closing it or dying releases it), and unlike `flock` it can be
/// tested without being taken (`F_OFD_GETLK`), so probes never collide with writers.
#[cfg(target_os = "linux")]
mod os {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;

    fn whole_file(kind: libc::c_int) -> libc::flock {
        // SAFETY: `flock` is a plain C struct of integers, for which all zeroes is a
        // valid value (and `l_pid` must be 0 for open file description locks).
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = kind as _;
        lock.l_whence = libc::SEEK_SET as _;
        // `l_start` 0 and `l_len` 0: the whole file, however long it grows.
        lock
    }

    fn fcntl(file: &File, cmd: libc::c_int, lock: &mut libc::flock) -> io::Result<()> {
        // SAFETY: the descriptor is open for as long as `file` is borrowed, and `lock`
        // points to a live `flock` that `F_OFD_SETLK` reads and `F_OFD_GETLK` rewrites.
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), cmd, lock as *mut libc::flock) };
        if rc == -1 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Takes the exclusive lock without waiting; `false` when someone holds it.
    pub(super) fn try_lock(file: &File) -> io::Result<bool> {
        match fcntl(file, libc::F_OFD_SETLK, &mut whole_file(libc::F_WRLCK)) {
            Ok(()) => Ok(true),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(super) fn unlock(file: &File) {
        let _ = fcntl(file, libc::F_OFD_SETLK, &mut whole_file(libc::F_UNLCK));
    }

    /// Whether another open file holds the lock, without taking anything.
    pub(super) fn is_locked(file: &File) -> io::Result<bool> {
        let mut lock = whole_file(libc::F_WRLCK);
        fcntl(file, libc::F_OFD_GETLK, &mut lock)?;
        Ok(lock.l_type != libc::F_UNLCK as libc::c_short)
    }
}

/// Elsewhere `flock`, whose only test is taking a shared lock for an instant (a writer
/// starting in that instant is told the index is busy).
#[cfg(not(target_os = "linux"))]
mod os {
    use std::fs::File;
    use std::io;

    use rustix::fs::{FlockOperation, flock};

    pub(super) fn try_lock(file: &File) -> io::Result<bool> {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    pub(super) fn unlock(file: &File) {
        let _ = flock(file, FlockOperation::Unlock);
    }

    pub(super) fn is_locked(file: &File) -> io::Result<bool> {
        match flock(file, FlockOperation::NonBlockingLockShared) {
            Ok(()) => {
                let _ = flock(file, FlockOperation::Unlock);
                Ok(false)
            }
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(true),
            Err(e) => Err(e.into()),
        }
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
        let held = WriteLock::try_acquire(dir.path(), WriteWork::Index).unwrap();
        match WriteLock::try_acquire(dir.path(), WriteWork::Sync) {
            Err(LockError::Busy { holder: Some(h) }) => {
                assert_eq!(h.pid, std::process::id());
                assert_eq!(h.purpose, WriteWork::Index);
            }
            other => panic!("expected busy, got {:?}", other.map(|_| ())),
        }
        assert_eq!(
            current_holder(dir.path()).unwrap().map(|h| h.purpose),
            Some(WriteWork::Index)
        );
        drop(held);
        assert_eq!(current_holder(dir.path()).unwrap(), None);
        WriteLock::try_acquire(dir.path(), WriteWork::Sync).unwrap();
    }

    /// A lock file written by a loci that names work this build does not know still
    /// names its holder (as other work), never "another process".
    #[test]
    fn a_holder_doing_unknown_work_is_still_named() {
        let dir = tempfile::tempdir().unwrap();
        let record = r#"{"pid":7,"command":"loci future","purpose":"defrag","since":1}"#;
        std::fs::write(lock_path(dir.path()), record).unwrap();
        let _held = {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(lock_path(dir.path()))
                .unwrap();
            assert!(os::try_lock(&file).unwrap());
            file
        };
        match WriteLock::try_acquire(dir.path(), WriteWork::Sync) {
            Err(LockError::Busy { holder: Some(h) }) => {
                assert_eq!((h.pid, h.purpose), (7, WriteWork::Other));
            }
            other => panic!("expected busy with a holder, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn probes_never_make_a_writer_fail() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let dir = tempfile::tempdir().unwrap();
        drop(WriteLock::try_acquire(dir.path(), WriteWork::Index).unwrap());
        let stop = AtomicBool::new(false);
        let probes = AtomicU64::new(0);
        let failures = std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        current_holder(dir.path()).unwrap();
                        probes.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            let mut failures = Vec::new();
            for _ in 0..5_000 {
                match WriteLock::try_acquire(dir.path(), WriteWork::Sync) {
                    Ok(lock) => drop(lock),
                    Err(e) => failures.push(e.to_string()),
                }
            }
            stop.store(true, Ordering::Relaxed);
            failures
        });
        assert!(probes.load(Ordering::Relaxed) > 0);
        assert!(
            failures.is_empty(),
            "{} of 5000 acquisitions failed beside probes, e.g. {}",
            failures.len(),
            failures[0]
        );
    }
}
