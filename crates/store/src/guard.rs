//! What an index file must be before loci touches it: a regular file (or nothing yet)
//! with a schema version this build knows. Checked without writing a byte, before any
//! pragma that could write (`journal_mode`), so a file loci refuses is left as it was.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::StoreError;
use crate::schema::{SCHEMA_VERSION, known_version};

/// Refuses a path that exists but is not a regular file (a directory, a socket...);
/// returns whether a file is there.
pub(crate) fn existing_file(path: &Path) -> Result<bool, StoreError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(true),
        Ok(meta) => Err(StoreError::NotAFile {
            path: path.to_path_buf(),
            what: if meta.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            },
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        // Let SQLite say what is wrong with it (permissions, say).
        Err(_) => Ok(true),
    }
}

/// Reads the schema version of the existing file at `path` on a read-only connection
/// that sets nothing, and refuses a version this build does not know. A file that is
/// not a SQLite database fails here (`file is not a database`, a storage error).
pub(crate) fn check_existing(path: &Path) -> Result<(), StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| StoreError::sqlite(path, e))?;
    conn.busy_timeout(std::time::Duration::from_secs(2))
        .map_err(|e| StoreError::sqlite(path, e))?;
    let found = user_version(&conn).map_err(|e| StoreError::sqlite(path, e))?;
    match known_version(found) {
        Some(_) => Ok(()),
        None => Err(unknown_schema(path, found)),
    }
}

/// The file's `PRAGMA user_version` (a read).
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// The refusal of a file whose schema version is `found`.
pub(crate) fn unknown_schema(path: &Path, found: i64) -> StoreError {
    StoreError::UnknownSchema {
        path: path.to_path_buf(),
        found,
        supported: SCHEMA_VERSION,
    }
}
