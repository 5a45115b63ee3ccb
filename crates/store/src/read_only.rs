//! Opening a database file for reading only, including for a user who may not write
//! beside it (the index belongs to someone else, or sits on a read-only mount).
//!
//! A reader of a WAL database needs its `-wal` and `-shm` files: SQLite creates them
//! when they are missing, which takes write permission on the directory. Without it the
//! first read fails with `SQLITE_READONLY_DIRECTORY` (or `SQLITE_CANTOPEN` on a
//! read-only mount), which says nothing about the statement. Two cases:
//! - the `-wal` file is absent or empty: every committed transaction is in the main
//!   file, so reading it as `immutable` (no locks, no shared memory) is exact. The log
//!   is looked at again after the first read, so a writer that started meanwhile makes
//!   the open fail as busy (retry) rather than read a file being checkpointed;
//! - the `-wal` file holds changes: reading the main file alone would miss them, so
//!   the open fails naming the missing `-shm` file and the permission it needs.
//!
//! An immutable connection never looks for changes again: it keeps its page cache
//! across statements, so after the owner's next run it would mix old and new pages.
//! It comes with a [`Snapshot`] of the file as it first read it; whoever keeps such a
//! connection asks [`Snapshot::is_current`] before each statement (and reopens when
//! not) and [`Snapshot::file_unchanged`] after it (a checkpoint during the statement
//! may have torn what it read). The query engine does both; a connection used for one
//! command's reads needs neither.

use std::path::{Path, PathBuf};

use crate::file_stamp::FileStamp;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, ffi};

use crate::StoreError;

/// A connection from [`open_read_only`], and how it reads the file.
#[derive(Debug)]
pub struct ReadOnlyDb {
    /// The connection.
    pub conn: Connection,
    /// `Some` when it reads the file as immutable (module doc): the file as it was.
    pub snapshot: Option<Snapshot>,
}

/// The main file as an immutable connection first read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    path: PathBuf,
    wal: PathBuf,
    stamp: FileStamp,
}

impl Snapshot {
    /// Whether the connection still reads what is there: the main file is as it was
    /// and no write-ahead log holds changes for it. When not, reopen.
    pub fn is_current(&self) -> bool {
        self.file_unchanged() && !log_holds_changes(&self.wal)
    }

    /// Whether the main file is as it was (a writer may have started, but nothing it
    /// wrote reached the file): what the connection read since the snapshot is whole.
    pub fn file_unchanged(&self) -> bool {
        FileStamp::of(&self.path) == Some(self.stamp)
    }
}

/// Opens `path` read-only (no create, no URI: the name is a file name, never options)
/// and reads its header once, so a reader that cannot create the WAL's side files
/// learns it here and reads the file as immutable when that is exact (module doc).
/// Any other failure of that first read (a writer's lock, say) is left to the caller's
/// own first statement: the read does not wait, and the connection comes back with no
/// busy wait, for the caller to set its own.
pub fn open_read_only(path: &Path) -> Result<ReadOnlyDb, StoreError> {
    // The name is a file name, never a URI (`file:x?immutable=1` opens `./file:x...`).
    let conn = open_read_only_file(path).map_err(|e| StoreError::sqlite(path, e))?;
    conn.busy_timeout(Duration::ZERO)
        .map_err(|e| StoreError::sqlite(path, e))?;
    match header_read(&conn) {
        Err(e) if cannot_create_side_files(&e) => open_immutable(path),
        _ => Ok(ReadOnlyDb {
            conn,
            snapshot: None,
        }),
    }
}

/// A read that opens the WAL (the schema version is in page 1).
fn header_read(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// SQLite could not create the `-wal` or `-shm` file beside the database.
fn cannot_create_side_files(e: &rusqlite::Error) -> bool {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            f.extended_code == ffi::SQLITE_READONLY_DIRECTORY || f.code == ErrorCode::CannotOpen
        }
        _ => false,
    }
}

fn open_immutable(path: &Path) -> Result<ReadOnlyDb, StoreError> {
    let wal = side_file(path, "-wal");
    let before = FileStamp::of(path);
    if log_holds_changes(&wal) {
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        return Err(StoreError::NoSharedMemory {
            path: path.to_path_buf(),
            wal,
            shm: side_file(path, "-shm"),
            dir,
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let uri = format!("{}?mode=ro&immutable=1", file_uri(path));
    let conn = Connection::open_with_flags(&uri, flags).map_err(|e| StoreError::sqlite(path, e))?;
    header_read(&conn).map_err(|e| StoreError::sqlite(path, e))?;
    let snapshot = before.map(|stamp| Snapshot {
        path: path.to_path_buf(),
        wal: wal.clone(),
        stamp,
    });
    if !snapshot.as_ref().is_some_and(Snapshot::is_current) {
        let busy = rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_BUSY),
            Some(format!(
                "a writer started while the index was opened without shared memory ({} or {} changed)",
                path.display(),
                wal.display()
            )),
        );
        return Err(StoreError::sqlite(path, busy));
    }
    Ok(ReadOnlyDb { conn, snapshot })
}

/// `path` with `suffix` appended to its file name (`index.db-wal`).
fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Whether the write-ahead log may hold committed pages the main file lacks. A log
/// that cannot be looked at counts as holding changes.
fn log_holds_changes(wal: &Path) -> bool {
    match std::fs::metadata(wal) {
        Ok(meta) => meta.len() > 0,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// A `file:` URI naming exactly `path`: every byte but unreserved ones and `/` is
/// percent-encoded, so no part of the name is read as a query parameter.
fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// Opens the existing file at exactly `path` read-only (no create), never as
/// a URI: every read-only open in loci goes through here.
///
/// The bundled SQLite is built with `SQLITE_USE_URI`, so dropping
/// `SQLITE_OPEN_URI` is not enough: a name that starts with `file:` would
/// still be parsed as a URI (`?immutable=1`, `?vfs=`, `?mode=` honoured, the
/// rest taken as another file's name). Such a relative name is opened as
/// `./file:...`, which SQLite takes literally; `?` and `#` elsewhere in a
/// plain name are ordinary characters.
pub(crate) fn open_read_only_file(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(literal_name(path), flags)
}

/// `path` as a name SQLite cannot read as a URI.
fn literal_name(path: &Path) -> std::borrow::Cow<'_, Path> {
    use std::os::unix::ffi::OsStrExt;
    if path.as_os_str().as_bytes().starts_with(b"file:") {
        std::borrow::Cow::Owned(Path::new(".").join(path))
    } else {
        std::borrow::Cow::Borrowed(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uri_encodes_everything_that_could_be_an_option() {
        assert_eq!(
            file_uri(Path::new("/a b/x?mode=rw#f%.db")),
            "file:/a%20b/x%3Fmode%3Drw%23f%25.db"
        );
        assert_eq!(file_uri(Path::new("rel/i.db")), "file:rel/i.db");
    }

    #[test]
    fn an_empty_or_absent_log_holds_no_changes() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("i.db-wal");
        assert!(!log_holds_changes(&wal));
        std::fs::write(&wal, b"").unwrap();
        assert!(!log_holds_changes(&wal));
        std::fs::write(&wal, b"x").unwrap();
        assert!(log_holds_changes(&wal));
    }
}
