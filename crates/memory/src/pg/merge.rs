//! Merging one memory into another in one transaction: the kept memory (`into`) takes
//! the other's body ([`crate::merged_body`]), entities, relationships and code links, and
//! the other (`from`) is forgotten with a pointer to it; each writes a `merge` version.

use postgres::Transaction;

use super::ctx::{Ctx, Db};
use super::handle::PgStore;
use super::rows::NOW_MS;
use super::write::{bump, id_in, live_id, write_chunks};
use crate::model::{Memory, Operation, check_body, hash_hex};
use crate::{MERGED_INTO, MemoryError, merged_body};

/// `into`'s metadata with `from`'s keys it lacks (its own keys win).
fn merged_metadata(into: serde_json::Value, from: serde_json::Value) -> serde_json::Value {
    let mut kept = match into {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    if let serde_json::Value::Object(other) = from {
        for (k, v) in other {
            if k != MERGED_INTO && !kept.contains_key(&k) {
                kept.insert(k, v);
            }
        }
    }
    serde_json::Value::Object(kept)
}

/// A memory's mergeable fields: body, description, metadata.
fn content(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    id: i64,
) -> Result<(String, String, serde_json::Value), MemoryError> {
    let r = tx
        .query_one(
            "SELECT body, description, metadata FROM memories WHERE id = $1",
            &[&id],
        )
        .db(c)?;
    Ok((
        r.try_get(0).db(c)?,
        r.try_get(1).db(c)?,
        r.try_get(2).db(c)?,
    ))
}

/// The live id of `name`, with a not-found that names the namespaces holding it (a merge
/// stays within one namespace).
fn merge_end(tx: &mut Transaction<'_>, c: &Ctx, ns: &str, name: &str) -> Result<i64, MemoryError> {
    if let Err(MemoryError::NotFound(msg)) = id_in(tx, c, ns, name) {
        let others: Option<String> = tx
            .query_one(
                "SELECT string_agg(namespace, ', ' ORDER BY namespace COLLATE \"C\") FROM memories
                 WHERE scope = $1 AND name = $2 AND namespace <> $3",
                &[&c.scope, &name, &ns],
            )
            .db(c)?
            .try_get(0)
            .db(c)?;
        return Err(MemoryError::NotFound(match others {
            Some(others) => format!(
                "{msg} (namespace {others} has one: a merge stays within one namespace, `--namespace`)"
            ),
            None => msg,
        }));
    }
    live_id(tx, c, ns, name)
}

impl PgStore {
    pub(super) fn merge_impl(
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
        let (fid, iid) = self.write(|tx, c| {
            let fid = merge_end(tx, c, ns, from)?;
            let iid = merge_end(tx, c, ns, into)?;
            let (fbody, fdesc, fmeta) = content(tx, c, fid)?;
            let fmeta_kept = fmeta.clone();
            let (ibody, idesc, imeta) = content(tx, c, iid)?;
            let body = merged_body(&ibody, &fbody);
            check_body(&body).map_err(|err| match err {
                MemoryError::TooLong { got, limit, .. } => MemoryError::TooLong {
                    what: format!("the body `{into}` would have after merging `{from}` into it"),
                    got,
                    limit,
                },
                other => other,
            })?;
            let desc = if idesc.trim().is_empty() { fdesc } else { idesc };
            tx.execute(
                "UPDATE memories SET description = $2, metadata = $3 WHERE id = $1",
                &[&iid, &desc, &merged_metadata(imeta, fmeta)],
            )
            .db(c)?;
            if body != ibody {
                tx.execute(
                    "UPDATE memories SET body = $2, body_hash = $3 WHERE id = $1",
                    &[&iid, &body, &hash_hex(body.as_bytes())],
                )
                .db(c)?;
                write_chunks(tx, c, iid, &body)?;
            }
            for sql in [
                "INSERT INTO memory_entities (scope, memory_id, entity_id)
                 SELECT scope, $2, entity_id FROM memory_entities WHERE memory_id = $1
                 ON CONFLICT DO NOTHING",
                // Relationships are unique per (source, target, relation) in a namespace:
                // the union needs no dedup, only the memory they came from moves.
                "UPDATE relationships SET memory_id = $2 WHERE memory_id = $1",
                // The same code linked by both keeps `into`'s hash; manual wins over auto.
                "INSERT INTO code_links (scope, memory_id, path, qualified_name, kind, hash, line, origin, mention, linked_at)
                 SELECT scope, $2, path, qualified_name, kind, hash, line, origin, mention, linked_at
                 FROM code_links WHERE memory_id = $1 ORDER BY id
                 ON CONFLICT (memory_id, path, qualified_name, kind) DO UPDATE SET
                     origin = CASE WHEN excluded.origin = 'manual' THEN 'manual' ELSE code_links.origin END",
            ] {
                tx.execute(sql, &[&fid, &iid]).db(c)?;
            }
            bump(tx, c, iid, Operation::Merge)?;
            let mut pointed = fmeta_kept;
            if let Some(map) = pointed.as_object_mut() {
                map.insert(MERGED_INTO.into(), into.into());
            }
            tx.execute(
                &format!("UPDATE memories SET deleted_at = {NOW_MS}, metadata = $2 WHERE id = $1"),
                &[&fid, &pointed],
            )
            .db(c)?;
            bump(tx, c, fid, Operation::Merge)?;
            Ok((fid, iid))
        })?;
        Ok((self.memory_by_id(iid)?, self.memory_by_id(fid)?))
    }
}
