//! The index's `meta` table: one value per [`MetaKey`], read and written here only.

use rusqlite::{Connection, OptionalExtension, params};

use crate::MetaKey;

/// Reads a `meta` value.
pub fn meta_get(conn: &Connection, key: MetaKey) -> rusqlite::Result<Option<String>> {
    // Cached: every read of a served workspace asks for its state.
    conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([key.name()], |r| r.get(0))
        .optional()
}

pub(crate) fn meta_set(conn: &Connection, key: MetaKey, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
        params![key.name(), value],
    )?;
    Ok(())
}

pub(crate) fn meta_delete(conn: &Connection, key: MetaKey) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM meta WHERE key = ?1", [key.name()])?;
    Ok(())
}
