//! Rows of the memory database as the model's values, and the small helpers every
//! query shares: below the store and its operations.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::MemoryError;
use crate::model::{CodeKey, CodeLink, Extraction, LinkOrigin, MemorySummary, MemoryType};

pub(crate) const LINK_COLUMNS: &str =
    "id, path, qualified_name, kind, hash, line, origin, mention, linked_at";

pub(crate) fn link_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CodeLink> {
    link_at(r, 0)
}

/// A code link read from `LINK_COLUMNS` starting at column `at` (a query may put other
/// columns, such as the memory's id, before them).
pub(crate) fn link_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<CodeLink> {
    Ok(CodeLink {
        id: r.get(at)?,
        key: CodeKey {
            path: r.get(at + 1)?,
            qualified_name: r.get(at + 2)?,
            kind: r.get(at + 3)?,
        },
        hash: r.get(at + 4)?,
        line: r.get(at + 5)?,
        origin: if r.get::<_, String>(at + 6)? == "auto" {
            LinkOrigin::Auto
        } else {
            LinkOrigin::Manual
        },
        mention: r.get(at + 7)?,
        linked_at: r.get(at + 8)?,
    })
}

pub(crate) const SUMMARY_COLUMNS: &str =
    "id, namespace, name, type, description, version, updated_at, deleted_at, extraction";

pub(crate) fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<MemorySummary> {
    Ok(MemorySummary {
        id: r.get(0)?,
        namespace: r.get(1)?,
        name: r.get(2)?,
        memory_type: parse_type(&r.get::<_, String>(3)?),
        description: r.get(4)?,
        version: r.get(5)?,
        updated_at: r.get(6)?,
        deleted_at: r.get(7)?,
        extraction: from_column(r.get(8)?),
    })
}

/// A stored type (written by this crate, so always known; `note` if not).
pub(super) fn parse_type(text: &str) -> MemoryType {
    MemoryType::parse(text).unwrap_or(MemoryType::Note)
}

pub(super) fn not_found(ns: &str, name: &str) -> MemoryError {
    MemoryError::NotFound(format!("no memory named `{name}` in namespace `{ns}`"))
}

/// Now, in unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `?,?,?` for `n` values.
pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// The record stored in the `extraction` column (one this build cannot read is shown
/// as absent rather than failing the read).
pub(crate) fn from_column(text: Option<String>) -> Option<Extraction> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}
