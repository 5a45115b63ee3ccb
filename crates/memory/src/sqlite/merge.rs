//! Merging one memory into another in one immediate transaction: the kept memory
//! (`into`) takes the other's body, entities, relationships and code links, and the
//! other (`from`) is forgotten with a pointer to it; each writes a `merge` version, so
//! `history` shows it and `restore` undoes it.

use rusqlite::{OptionalExtension, Transaction, params};

use super::handle::SqliteStore;
use super::rows::now_ms;
use super::write::{bump, id_in, in_tx, live_id, write_chunks};
use crate::MemoryError;
use crate::model::{Memory, Operation, check_body, hash_hex};

/// The metadata key a merged-away memory points at the memory it went into with.
pub const MERGED_INTO: &str = "merged_into";

/// The body `into` has after taking `from`'s: unchanged when `from`'s is empty or
/// already in it verbatim, else `into`'s, a blank line, then `from`'s.
pub fn merged_body(into: &str, from: &str) -> String {
    let from_trimmed = from.trim();
    if from_trimmed.is_empty() || into.contains(from_trimmed) {
        return into.to_string();
    }
    if into.trim().is_empty() {
        return from.to_string();
    }
    format!("{}\n\n{}", into.trim_end(), from_trimmed)
}

/// `into`'s metadata with `from`'s keys it lacks (its own keys win).
fn merged_metadata(into: &str, from: &str) -> String {
    let mut kept: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(into).unwrap_or_default();
    let other: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(from).unwrap_or_default();
    for (k, v) in other {
        if k != MERGED_INTO && !kept.contains_key(&k) {
            kept.insert(k, v);
        }
    }
    serde_json::Value::Object(kept).to_string()
}

/// A memory's mergeable fields: body, description, metadata.
fn content(
    tx: &Transaction<'_>,
    e: &dyn Fn(rusqlite::Error) -> MemoryError,
    id: i64,
) -> Result<(String, String, String), MemoryError> {
    tx.query_row(
        "SELECT body, description, metadata FROM memories WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .map_err(e)
}

/// The namespaces other than `ns` holding a memory named `name`.
fn elsewhere(
    tx: &Transaction<'_>,
    e: &dyn Fn(rusqlite::Error) -> MemoryError,
    ns: &str,
    name: &str,
) -> Result<Option<String>, MemoryError> {
    tx.query_row(
        "SELECT group_concat(namespace, ', ') FROM
             (SELECT namespace FROM memories WHERE name = ?2 AND namespace != ?1 ORDER BY namespace)",
        params![ns, name],
        |r| r.get::<_, Option<String>>(0),
    )
    .optional()
    .map_err(e)
    .map(Option::flatten)
}

/// The live id of `name`, with a not-found that names the namespaces holding it
/// (a merge stays within one namespace).
fn merge_end(
    tx: &Transaction<'_>,
    e: &dyn Fn(rusqlite::Error) -> MemoryError,
    ns: &str,
    name: &str,
) -> Result<i64, MemoryError> {
    if let Err(MemoryError::NotFound(msg)) = id_in(tx, e, ns, name) {
        return Err(MemoryError::NotFound(match elsewhere(tx, e, ns, name)? {
            Some(others) => format!(
                "{msg} (namespace {others} has one: a merge stays within one namespace, `--namespace`)"
            ),
            None => msg,
        }));
    }
    live_id(tx, e, ns, name)
}

impl SqliteStore {
    /// Merges `from` into `into` within `ns`; answers `(into, from)` after.
    pub(crate) fn merge_impl(
        &mut self,
        ns: &str,
        from: &str,
        into: &str,
    ) -> Result<(Memory, Memory), MemoryError> {
        if from == into {
            return Err(MemoryError::Invalid(format!(
                "cannot merge the memory `{from}` into itself: name two memories"
            )));
        }
        let (fid, iid) = in_tx(self, |tx, e| {
            let fid = merge_end(tx, e, ns, from)?;
            let iid = merge_end(tx, e, ns, into)?;
            let (fbody, fdesc, fmeta) = content(tx, e, fid)?;
            let (ibody, idesc, imeta) = content(tx, e, iid)?;
            let body = merged_body(&ibody, &fbody);
            check_body(&body).map_err(|err| match err {
                MemoryError::TooLong { got, limit, .. } => MemoryError::TooLong {
                    what: format!("the body `{into}` would have after merging `{from}` into it"),
                    got,
                    limit,
                },
                other => other,
            })?;
            let desc = if idesc.trim().is_empty() {
                fdesc
            } else {
                idesc
            };
            tx.execute(
                "UPDATE memories SET description = ?2, metadata = ?3 WHERE id = ?1",
                params![iid, desc, merged_metadata(&imeta, &fmeta)],
            )
            .map_err(e)?;
            if body != ibody {
                tx.execute(
                    "UPDATE memories SET body = ?2, body_hash = ?3 WHERE id = ?1",
                    params![iid, body, hash_hex(body.as_bytes())],
                )
                .map_err(e)?;
                write_chunks(tx, iid, &body).map_err(e)?;
            }
            for sql in [
                "INSERT OR IGNORE INTO memory_entities (memory_id, entity_id)
                 SELECT ?2, entity_id FROM memory_entities WHERE memory_id = ?1",
                // Relationships are unique per (source, target, relation) in a namespace:
                // the union needs no dedup, only the memory they came from moves.
                "UPDATE relationships SET memory_id = ?2 WHERE memory_id = ?1",
                // The same code linked by both keeps `into`'s hash; manual wins over auto.
                "INSERT INTO code_links (memory_id, path, qualified_name, kind, hash, line, origin, mention, linked_at)
                 SELECT ?2, path, qualified_name, kind, hash, line, origin, mention, linked_at
                 FROM code_links WHERE memory_id = ?1 ORDER BY id
                 ON CONFLICT (memory_id, path, qualified_name, kind) DO UPDATE SET
                     origin = CASE WHEN excluded.origin = 'manual' THEN 'manual' ELSE code_links.origin END",
            ] {
                tx.execute(sql, params![fid, iid]).map_err(e)?;
            }
            bump(tx, iid, Operation::Merge).map_err(e)?;
            tx.execute(
                "UPDATE memories SET deleted_at = ?2, metadata = json_set(metadata, '$.merged_into', ?3)
                 WHERE id = ?1",
                params![fid, now_ms(), into],
            )
            .map_err(e)?;
            bump(tx, fid, Operation::Merge).map_err(e)?;
            Ok((fid, iid))
        })?;
        Ok((self.memory_by_id(iid)?, self.memory_by_id(fid)?))
    }
}
