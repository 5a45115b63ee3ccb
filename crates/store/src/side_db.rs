//! Opening a database that is not the index (the memory's `memory.db`, say) with the same
//! connection settings, and migrating it with the schema its owner crate supplies: the
//! pragmas and the migration mechanics stay in this crate, the tables in the owner's.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::StoreError;

/// How long a writer of a side database waits for another writer's lock.
const SIDE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating if needed) the database at `path` for writing: WAL, NORMAL sync,
/// no checkpoint on close, a busy timeout, foreign keys on, then every step of `migrations` it lacks (step `i`
/// takes `user_version` from `i` to `i + 1`), all in one immediate transaction so two
/// processes opening a new file at once migrate it once. A file with a newer version
/// than `migrations` knows is refused untouched.
pub fn open_side_db(path: &Path, migrations: &[&str]) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    if path.is_dir() {
        return Err(StoreError::NotAFile {
            path: path.to_path_buf(),
            what: "a directory",
        });
    }
    let mut conn = Connection::open(path).map_err(|e| StoreError::sqlite(path, e))?;
    let setup = |conn: &Connection| -> rusqlite::Result<()> {
        conn.busy_timeout(SIDE_BUSY_TIMEOUT)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.pragma_update(None, "cache_size", -65536)?;
        // A short-lived writer (one `loci remember`) must not pay for a checkpoint and
        // its fsyncs when it closes: the log is folded into the file by SQLite's
        // automatic checkpoint every 1,000 pages instead, and kept between processes.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )?;
        Ok(())
    };
    setup(&conn).map_err(|e| StoreError::sqlite(path, e))?;
    let newest = migrations.len() as i64;
    let found: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| StoreError::sqlite(path, e))?;
    let unknown = |found| StoreError::UnknownSchema {
        path: path.to_path_buf(),
        found,
        supported: newest,
    };
    if !(0..=newest).contains(&found) {
        return Err(unknown(found));
    }
    if found == newest {
        return Ok(conn);
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| StoreError::sqlite(path, e))?;
    // Another process may have migrated while this one waited for the lock.
    let found: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| StoreError::sqlite(path, e))?;
    if !(0..=newest).contains(&found) {
        return Err(unknown(found));
    }
    for sql in &migrations[found as usize..] {
        tx.execute_batch(sql)
            .map_err(|e| StoreError::sqlite(path, e))?;
    }
    tx.pragma_update(None, "user_version", newest)
        .map_err(|e| StoreError::sqlite(path, e))?;
    tx.commit().map_err(|e| StoreError::sqlite(path, e))?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_db_migrates_forward_and_refuses_a_newer_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/side.db");
        let conn = open_side_db(&path, &["CREATE TABLE a (x);"]).unwrap();
        drop(conn);
        let conn = open_side_db(&path, &["CREATE TABLE a (x);", "CREATE TABLE b (y);"]).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 2);
        drop(conn);
        let e = open_side_db(&path, &["CREATE TABLE a (x);"]).unwrap_err();
        assert!(
            matches!(e, StoreError::UnknownSchema { found: 2, .. }),
            "{e}"
        );
    }
}
