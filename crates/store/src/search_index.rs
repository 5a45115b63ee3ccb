//! Building the code search index (`code_fts`) of a first index off the writer's path.
//!
//! The indexer's one writer is the bottleneck of a first index, and the search index
//! needs nothing from the rest of the graph. So a first index fills a `code_fts` of the
//! same definition in a side file, on its own connection and thread, and [`install`]
//! copies its FTS5 shadow tables into the index in one transaction at the end. Both
//! tables are created by the same SQLite from the same definition, so the copy is the
//! same index, byte for byte.
//!
//! Crash safety: the run that starts a side build marks the index (`meta.search =
//! 'pending'`) in its first transaction; [`install`] clears the mark in the transaction
//! that copies. A run that finds the mark without a side build of its own calls
//! [`reset_for_reindex`], which makes it re-index every file, search terms included.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::schema::CODE_FTS_DDL;

/// The FTS5 shadow tables of `code_fts` (contentless, detail=none, contentless_delete).
const SHADOW_TABLES: [&str; 4] = [
    "code_fts_data",
    "code_fts_idx",
    "code_fts_docsize",
    "code_fts_config",
];

const PENDING_KEY: &str = "search";

/// Creates (replacing any leftover) the side file of a search index build: no journal
/// and no syncs, since a crash discards it anyway.
pub fn create_side(path: &Path) -> rusqlite::Result<Connection> {
    let _ = std::fs::remove_file(path);
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "OFF")?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    conn.pragma_update(None, "cache_size", -32768)?;
    conn.execute_batch(CODE_FTS_DDL)?;
    Ok(conn)
}

/// Bytes of terms FTS5 buffers in memory before writing a segment during a side build:
/// a ~1M-line tree's worth, so such a build writes one segment and merges none, while a
/// much larger one stays bounded in memory.
const BUILD_BUFFER_BYTES: i64 = 64 << 20;

/// FTS5's default buffer (`hashsize`), restored before a side build commits so the
/// installed index carries the default setting.
const DEFAULT_BUFFER_BYTES: i64 = 1 << 20;

/// Lets a side build buffer a whole tree's terms in memory (until its commit).
pub fn buffer_whole_build(conn: &Connection) -> rusqlite::Result<()> {
    set_buffer(conn, BUILD_BUFFER_BYTES)
}

/// Restores FTS5's default buffer size.
pub fn buffer_default(conn: &Connection) -> rusqlite::Result<()> {
    set_buffer(conn, DEFAULT_BUFFER_BYTES)
}

fn set_buffer(conn: &Connection, bytes: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO code_fts (code_fts, rank) VALUES ('hashsize', ?1)",
        [bytes],
    )?;
    Ok(())
}

/// Inserts one file's search terms into a side build (or the index itself).
pub fn insert_terms(conn: &Connection, file_id: i64, terms: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO code_fts (rowid, terms) VALUES (?1, ?2)")?
        .execute(rusqlite::params![file_id, terms])?;
    Ok(())
}

/// Marks, in the caller's transaction, that the search index is being built on the side.
pub fn mark_pending(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, 'pending') ON CONFLICT(key) DO UPDATE SET value = 'pending'",
        [PENDING_KEY],
    )?;
    Ok(())
}

/// Whether a side build was started and never installed (its run was killed).
pub fn is_pending(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT 1 FROM meta WHERE key = ?1", [PENDING_KEY], |_| {
        Ok(())
    })
    .optional()
    .map(|found| found.is_some())
}

/// Replaces the index's search index with the side build at `side`, and clears the
/// pending mark, in one transaction. The side file is removed afterwards.
pub fn install(conn: &mut Connection, side: &Path) -> rusqlite::Result<()> {
    let side_name = side.to_string_lossy();
    conn.execute("ATTACH DATABASE ?1 AS side", [side_name.as_ref()])?;
    let copied = (|| {
        let tx = conn.transaction()?;
        for table in SHADOW_TABLES {
            tx.execute_batch(&format!(
                "DELETE FROM main.{table}; INSERT INTO main.{table} SELECT * FROM side.{table};"
            ))?;
        }
        tx.execute("DELETE FROM meta WHERE key = ?1", [PENDING_KEY])?;
        tx.commit()
    })();
    let detached = conn.execute("DETACH DATABASE side", []);
    copied?;
    detached?;
    let _ = std::fs::remove_file(side);
    Ok(())
}

/// Empties the search index and resets every file's fingerprint, so the next run
/// re-reads, re-parses and re-indexes every file (symbol ids are kept: files are
/// matched by path). Clears the pending mark, in one transaction.
pub fn reset_for_reindex(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute_batch(
        "INSERT INTO code_fts (code_fts) VALUES ('delete-all');
         UPDATE files SET size = -1, hash = x'', resolved = 0;",
    )?;
    tx.execute("DELETE FROM meta WHERE key = ?1", [PENDING_KEY])?;
    tx.commit()
}
