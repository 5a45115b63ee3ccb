//! The per-file breakdowns `loci stats` sums (`file_counts`): written by the file writer
//! (symbol kinds, languages) and by resolution (edge kinds, confidences), so it sits
//! below both.

use rusqlite::{Transaction, params};

/// Replaces, in the caller's transaction, one of a file's breakdowns (`what`) with the
/// counts of `keys` (which may repeat): what `loci stats` sums.
pub(crate) fn replace_counts<'k>(
    tx: &Transaction<'_>,
    file_id: i64,
    what: &str,
    keys: impl IntoIterator<Item = &'k str>,
) -> rusqlite::Result<()> {
    let mut counts: std::collections::BTreeMap<&str, i64> = std::collections::BTreeMap::new();
    for key in keys {
        *counts.entry(key).or_insert(0) += 1;
    }
    tx.prepare_cached("DELETE FROM file_counts WHERE file_id = ?1 AND what = ?2")?
        .execute(params![file_id, what])?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO file_counts (file_id, what, key, n) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (key, n) in counts {
        insert.execute(params![file_id, what, key, n])?;
    }
    Ok(())
}
