//! Opening a workspace's index database with the settings every writer and reader shares.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::StoreError;
use crate::guard;
use crate::read_only::open_read_only;
use crate::schema::{self, MigrateError, SCHEMA_VERSION};

/// The marker directory loci keeps inside a workspace.
pub const INDEX_DIR: &str = ".loci";
/// The index file name inside [`INDEX_DIR`].
pub const INDEX_FILE: &str = "index.db";

/// How long a writer waits for another writer's lock before reporting busy.
const WRITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// `<workspace>/.loci/index.db`.
pub fn index_path_for(workspace: &Path) -> PathBuf {
    workspace.join(INDEX_DIR).join(INDEX_FILE)
}

/// Opens (creating if needed) an index for writing: WAL, NORMAL sync (durable at
/// checkpoints, never corrupt), foreign keys on, schema migrated. An existing file is
/// first checked without writing (a regular file, a SQLite database, a schema version
/// this build knows), so a refused file is left byte for byte as it was.
pub fn open_index(path: &Path) -> Result<Connection, StoreError> {
    if guard::existing_file(path)? {
        guard::check_existing(path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let mut conn = Connection::open(path).map_err(|e| StoreError::sqlite(path, e))?;
    let setup = |conn: &Connection| -> rusqlite::Result<()> {
        conn.busy_timeout(WRITE_BUSY_TIMEOUT)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Off while migrating: a migration may rebuild a table others reference.
        conn.pragma_update(None, "foreign_keys", false)?;
        // Sorts (a first index builds its indexes over millions of rows at the end) go
        // through temporary files: in memory they held hundreds of MB, growing with
        // the tree.
        conn.pragma_update(None, "temp_store", "FILE")?;
        conn.pragma_update(None, "cache_size", -65536)?;
        Ok(())
    };
    setup(&conn).map_err(|e| StoreError::sqlite(path, e))?;
    schema::migrate(&mut conn).map_err(|e| match e {
        MigrateError::Unknown(found) => guard::unknown_schema(path, found),
        MigrateError::Sqlite(e) => StoreError::sqlite(path, e),
    })?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(|e| StoreError::sqlite(path, e))?;
    Ok(conn)
}

/// Opens an existing index read-only; refuses an unknown schema version, and a
/// directory at the path with the writer's error. Readers never block on the writer (WAL).
/// A reader that cannot create the WAL's side files still reads (see [`open_read_only`]);
/// such a connection is for one command's reads: kept longer, it must be checked as
/// [`open_read_only`] says.
pub fn open_index_read_only(path: &Path) -> Result<Connection, StoreError> {
    guard::existing_file(path)?;
    let conn = open_read_only(path)?.conn;
    conn.busy_timeout(Duration::from_secs(2))
        .map_err(|e| StoreError::sqlite(path, e))?;
    let found: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| StoreError::sqlite(path, e))?;
    if found != SCHEMA_VERSION {
        return Err(StoreError::UnknownSchema {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(conn)
}

/// Runs `PRAGMA quick_check`; `Ok(None)` when the file is sound, else the first problem.
pub fn quick_check(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let first: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    Ok((first != "ok").then_some(first))
}
