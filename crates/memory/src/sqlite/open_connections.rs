//! Connections to memory files kept open between the stores of one process, so a
//! long-lived host (`loci mcp`, `loci serve`), which opens a store per call, does not
//! reopen the file each time.
//!
//! Reopening is not just a file open: the memory file keeps its write-ahead log between
//! processes (no checkpoint on close, `loci_store::open_side_db`), and SQLite rebuilds
//! its index of the log — reading and checksumming the whole log, up to a few MB —
//! whenever a connection opens a file no other connection of any process has open.
//! Measured over MCP, that was most of a recall's time (docs/performance.md).
//!
//! A connection is given back when its store is dropped outside a transaction, and taken
//! again only for the same file: the path must still name the file (device and inode)
//! the connection has open, and its schema version must be the one this build knows (a
//! newer loci may have migrated the file since). Otherwise the idle connection is closed
//! and a fresh open checks and migrates the file as usual.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::Connection;

/// Idle connections kept at most, over every file, the least recently used closed first.
const MAX_IDLE: usize = 8;

/// One idle connection and the file it has open.
struct Idle {
    path: PathBuf,
    file: FileId,
    conn: Connection,
}

/// A file's device and inode: what a path names, whatever writes or checkpoints did to
/// its contents and times since.
type FileId = (u64, u64);

/// Idle connections, most recently given back last.
pub(super) struct OpenConnections(Mutex<Vec<Idle>>);

/// The process's idle connections.
pub(super) static SHARED: OpenConnections = OpenConnections(Mutex::new(Vec::new()));

fn file_id(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl OpenConnections {
    /// An idle connection to the file at `path` at schema version `schema`, if one is kept
    /// for that very file; connections kept for a file the path no longer names are closed.
    pub(super) fn take(&self, path: &Path, schema: i64) -> Option<Connection> {
        let now = file_id(path);
        let (found, gone) = {
            let mut idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
            let mut gone = Vec::new();
            let mut found = None;
            let mut i = idle.len();
            while i > 0 {
                i -= 1;
                if idle[i].path != path {
                    continue;
                }
                let entry = idle.remove(i);
                if found.is_none() && Some(entry.file) == now {
                    found = Some(entry.conn);
                } else {
                    gone.push(entry);
                }
            }
            (found, gone)
        };
        // Closed outside the lock: a close may wait on the file.
        drop(gone);
        let conn = found?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .ok()?;
        (version == schema).then_some(conn)
    }

    /// Keeps `conn`, open on the file at `path`, for the next store of that file; a
    /// connection inside a transaction (a store dropped mid-write) is closed instead, which
    /// rolls the transaction back.
    pub(super) fn give_back(&self, path: &Path, conn: Connection) {
        if !conn.is_autocommit() {
            return;
        }
        let Some(file) = file_id(path) else {
            return;
        };
        let evicted = {
            let mut idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
            idle.push(Idle {
                path: path.to_path_buf(),
                file,
                conn,
            });
            (idle.len() > MAX_IDLE).then(|| idle.remove(0))
        };
        drop(evicted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> Connection {
        let c = Connection::open(path).unwrap();
        c.pragma_update(None, "user_version", 3).unwrap();
        c
    }

    #[test]
    fn a_connection_comes_back_only_for_the_same_file_and_schema() {
        let pool = OpenConnections(Mutex::new(Vec::new()));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        pool.give_back(&path, open(&path));
        assert!(
            pool.take(&path, 4).is_none(),
            "another schema version: not reused"
        );
        pool.give_back(&path, open(&path));
        assert!(pool.take(&path, 3).is_some(), "the same file: reused");
        assert!(pool.take(&path, 3).is_none(), "taken once");

        // The file replaced (an import's rename, a deleted `.loci/`): a new inode.
        pool.give_back(&path, open(&path));
        std::fs::remove_file(&path).unwrap();
        let fresh = open(&path);
        assert!(
            pool.take(&path, 3).is_none(),
            "the old file's connection is closed"
        );
        pool.give_back(&path, fresh);
        assert!(pool.take(&path, 3).is_some());
    }

    #[test]
    fn a_connection_inside_a_transaction_is_not_kept() {
        let pool = OpenConnections(Mutex::new(Vec::new()));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        let c = open(&path);
        c.execute_batch("CREATE TABLE t(x); BEGIN; INSERT INTO t VALUES (1);")
            .unwrap();
        pool.give_back(&path, c);
        assert!(pool.take(&path, 3).is_none());
        let c = open(&path);
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0, "the open transaction was rolled back");
    }

    #[test]
    fn idle_connections_are_bounded() {
        let pool = OpenConnections(Mutex::new(Vec::new()));
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = (0..MAX_IDLE + 3)
            .map(|i| dir.path().join(format!("m{i}.db")))
            .collect();
        for p in &paths {
            pool.give_back(p, open(p));
        }
        assert!(pool.0.lock().unwrap().len() <= MAX_IDLE);
        assert!(pool.take(&paths[0], 3).is_none(), "the oldest went first");
        assert!(pool.take(paths.last().unwrap(), 3).is_some());
    }
}
