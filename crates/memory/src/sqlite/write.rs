//! The mutations: each one immediate transaction (so concurrent writers from several
//! processes queue on the busy timeout instead of losing a version) that writes the
//! memory's next version before it commits.

use std::path::Path;

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use rustc_hash::FxHashMap;

use super::handle::SqliteStore;
use super::rows::now_ms;
use crate::MemoryError;
use crate::chunk;
use crate::model::{
    CodeKey, Edit, EntityInfo, EntityInput, LinkOrigin, Memory, NewCodeLink, NewMemory, Operation,
    RelationshipInput, check_body, check_description, check_metadata, check_name, hash_hex,
};

pub(crate) fn sql_err(path: &Path) -> impl Fn(rusqlite::Error) -> MemoryError + '_ {
    move |source| MemoryError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

/// Runs `f` in one immediate transaction and commits when it succeeds.
pub(super) fn in_tx<T>(
    store: &mut SqliteStore,
    f: impl FnOnce(&Transaction<'_>, &dyn Fn(rusqlite::Error) -> MemoryError) -> Result<T, MemoryError>,
) -> Result<T, MemoryError> {
    let path = store.path.clone();
    let e = sql_err(&path);
    let tx = store
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&e)?;
    let out = f(&tx, &e)?;
    tx.commit().map_err(&e)?;
    Ok(out)
}

/// Writes the memory's current row as its version, after a bump by the caller.
fn write_version(tx: &Transaction<'_>, id: i64, op: Operation) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO memory_versions (memory_id, version, op, name, type, description, body, metadata, deleted, at)
         SELECT id, version, ?2, name, type, description, body, metadata, deleted_at IS NOT NULL, updated_at
         FROM memories WHERE id = ?1",
        params![id, op.name()],
    )?;
    Ok(())
}

/// The next version number and timestamp, then the version row.
pub(super) fn bump(tx: &Transaction<'_>, id: i64, op: Operation) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE memories SET version = version + 1, updated_at = max(?2, updated_at) WHERE id = ?1",
        params![id, now_ms()],
    )?;
    write_version(tx, id, op)
}

pub(super) fn write_chunks(tx: &Transaction<'_>, id: i64, body: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM chunks WHERE memory_id = ?1", [id])?;
    let mut stmt = tx.prepare_cached(
        "INSERT INTO chunks (memory_id, seq, start, end) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (seq, c) in chunk::chunks(body).iter().enumerate() {
        stmt.execute(params![id, seq as i64, c.start as i64, c.end as i64])?;
    }
    Ok(())
}

fn write_links(tx: &Transaction<'_>, id: i64, links: &[NewCodeLink]) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO code_links (memory_id, path, qualified_name, kind, hash, line, origin, mention, linked_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (memory_id, path, qualified_name, kind) DO UPDATE SET
             hash = excluded.hash, line = excluded.line, linked_at = excluded.linked_at,
             origin = CASE WHEN code_links.origin = 'manual' THEN 'manual' ELSE excluded.origin END,
             mention = coalesce(excluded.mention, code_links.mention)",
    )?;
    let now = now_ms();
    for l in links {
        let origin = match l.origin {
            LinkOrigin::Auto => "auto",
            LinkOrigin::Manual => "manual",
        };
        stmt.execute(params![
            id,
            l.key.path,
            l.key.qualified_name,
            l.key.kind,
            l.hash,
            l.line,
            origin,
            l.mention,
            now
        ])?;
    }
    Ok(())
}

/// Finds or creates each entity, merging aliases; returns lower-cased name → id.
fn upsert_entities(
    tx: &Transaction<'_>,
    ns: &str,
    entities: &[EntityInput],
) -> rusqlite::Result<FxHashMap<String, i64>> {
    let mut ids = FxHashMap::default();
    for ent in entities {
        let found: Option<(i64, String)> = tx
            .query_row(
                "SELECT id, aliases FROM entities WHERE namespace = ?1 AND name = ?2 COLLATE NOCASE",
                params![ns, ent.name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let id = match found {
            Some((id, aliases)) => {
                let mut have: Vec<String> = serde_json::from_str(&aliases).unwrap_or_default();
                let before = have.len();
                for a in &ent.aliases {
                    if !have.iter().any(|h| h.eq_ignore_ascii_case(a)) {
                        have.push(a.clone());
                    }
                }
                if have.len() != before {
                    tx.execute(
                        "UPDATE entities SET aliases = ?2 WHERE id = ?1",
                        params![id, serde_json::to_string(&have).unwrap_or_default()],
                    )?;
                }
                id
            }
            None => {
                tx.execute(
                    "INSERT INTO entities (namespace, name, type, aliases, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        ns,
                        ent.name,
                        ent.entity_type,
                        serde_json::to_string(&ent.aliases).unwrap_or_default(),
                        now_ms()
                    ],
                )?;
                tx.last_insert_rowid()
            }
        };
        ids.insert(ent.name.to_lowercase(), id);
    }
    Ok(ids)
}

/// Attaches entities and relationships to memory `id`; a relationship end that is
/// neither among `entities` nor known in `ns` fails the whole call.
pub(super) fn attach(
    tx: &Transaction<'_>,
    e: &dyn Fn(rusqlite::Error) -> MemoryError,
    ns: &str,
    id: i64,
    entities: &[EntityInput],
    relationships: &[RelationshipInput],
) -> Result<(), MemoryError> {
    let ids = upsert_entities(tx, ns, entities).map_err(e)?;
    for eid in ids.values() {
        tx.execute(
            "INSERT OR IGNORE INTO memory_entities (memory_id, entity_id) VALUES (?1, ?2)",
            params![id, eid],
        )
        .map_err(e)?;
    }
    let known = |name: &str| -> Result<Option<i64>, MemoryError> {
        if let Some(id) = ids.get(&name.to_lowercase()) {
            return Ok(Some(*id));
        }
        tx.query_row(
            "SELECT id FROM entities WHERE namespace = ?1 AND name = ?2 COLLATE NOCASE",
            params![ns, name],
            |r| r.get(0),
        )
        .optional()
        .map_err(e)
    };
    for (i, r) in relationships.iter().enumerate() {
        let end = |which: &str, name: &str| -> Result<i64, MemoryError> {
            known(name)?.ok_or_else(|| {
                MemoryError::Unresolved(format!(
                    "relationships[{i}]: the {which} entity `{name}` is neither among this call's entities nor known in namespace `{ns}`"
                ))
            })
        };
        let (s, t) = (end("source", &r.source)?, end("target", &r.target)?);
        tx.execute(
            "INSERT INTO relationships (namespace, source_id, target_id, relation, weight, memory_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (source_id, target_id, relation) DO UPDATE SET
                 weight = excluded.weight, memory_id = excluded.memory_id",
            params![ns, s, t, r.relation, r.weight, id],
        )
        .map_err(e)?;
    }
    Ok(())
}

fn name_taken(
    tx: &Transaction<'_>,
    e: &dyn Fn(rusqlite::Error) -> MemoryError,
    ns: &str,
    name: &str,
) -> Result<(), MemoryError> {
    let holder: Option<Option<i64>> = tx
        .query_row(
            "SELECT deleted_at FROM memories WHERE namespace = ?1 AND name = ?2",
            params![ns, name],
            |r| r.get(0),
        )
        .optional()
        .map_err(e)?;
    match holder {
        Some(deleted) => Err(MemoryError::NameTaken {
            namespace: ns.into(),
            name: name.into(),
            forgotten: deleted.is_some(),
        }),
        None => Ok(()),
    }
}

/// The id of `name` in `ns` within a transaction, and whether it is forgotten.
pub(super) fn id_in(
    tx: &Transaction<'_>,
    e: &dyn Fn(rusqlite::Error) -> MemoryError,
    ns: &str,
    name: &str,
) -> Result<(i64, bool), MemoryError> {
    tx.query_row(
        "SELECT id, deleted_at IS NOT NULL FROM memories WHERE namespace = ?1 AND name = ?2",
        params![ns, name],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .map_err(e)?
    .ok_or_else(|| super::rows::not_found(ns, name))
}

pub(super) fn live_id(
    tx: &Transaction<'_>,
    e: &dyn Fn(rusqlite::Error) -> MemoryError,
    ns: &str,
    name: &str,
) -> Result<i64, MemoryError> {
    let (id, deleted) = id_in(tx, e, ns, name)?;
    if deleted {
        return Err(MemoryError::WrongState(format!(
            "the memory `{name}` in namespace `{ns}` is forgotten; restore it first (`loci memory restore {name}`)"
        )));
    }
    Ok(id)
}

impl SqliteStore {
    pub(crate) fn create_impl(
        &mut self,
        m: &NewMemory,
        ns: &str,
        links: &[NewCodeLink],
    ) -> Result<Memory, MemoryError> {
        let id = in_tx(self, |tx, e| {
            name_taken(tx, e, ns, &m.name)?;
            let now = now_ms();
            let metadata = m.metadata.clone().unwrap_or_else(|| serde_json::json!({}));
            tx.execute(
                "INSERT INTO memories (namespace, name, type, description, body, body_hash, source,
                     session_id, metadata, version, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10)",
                params![
                    ns,
                    m.name,
                    m.memory_type.unwrap_or(crate::MemoryType::Note).name(),
                    m.description,
                    m.body,
                    hash_hex(m.body.as_bytes()),
                    m.source,
                    m.session_id,
                    metadata.to_string(),
                    now
                ],
            )
            .map_err(e)?;
            let id = tx.last_insert_rowid();
            attach(tx, e, ns, id, &m.entities, &m.relationships)?;
            write_chunks(tx, id, &m.body).map_err(e)?;
            write_links(tx, id, links).map_err(e)?;
            write_version(tx, id, Operation::Create).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn edit_impl(
        &mut self,
        ns: &str,
        name: &str,
        edit: &Edit,
        auto_links: Option<&[NewCodeLink]>,
    ) -> Result<Memory, MemoryError> {
        if edit.body.is_none()
            && edit.description.is_none()
            && edit.memory_type.is_none()
            && edit.metadata.is_none()
        {
            return Err(MemoryError::Invalid(
                "the edit changes nothing: give a body, a description, a type or metadata".into(),
            ));
        }
        if let Some(b) = &edit.body {
            check_body(b)?;
        }
        if let Some(d) = &edit.description {
            check_description(d)?;
        }
        if let Some(m) = &edit.metadata {
            check_metadata(m)?;
        }
        let id = in_tx(self, |tx, e| {
            let id = live_id(tx, e, ns, name)?;
            if let Some(body) = &edit.body {
                tx.execute(
                    "UPDATE memories SET body = ?2, body_hash = ?3 WHERE id = ?1",
                    params![id, body, hash_hex(body.as_bytes())],
                )
                .map_err(e)?;
                write_chunks(tx, id, body).map_err(e)?;
            }
            if let Some(d) = &edit.description {
                tx.execute(
                    "UPDATE memories SET description = ?2 WHERE id = ?1",
                    params![id, d],
                )
                .map_err(e)?;
            }
            if let Some(t) = edit.memory_type {
                tx.execute(
                    "UPDATE memories SET type = ?2 WHERE id = ?1",
                    params![id, t.name()],
                )
                .map_err(e)?;
            }
            if let Some(m) = &edit.metadata {
                tx.execute(
                    "UPDATE memories SET metadata = ?2 WHERE id = ?1",
                    params![id, m.to_string()],
                )
                .map_err(e)?;
            }
            if let Some(links) = auto_links {
                tx.execute(
                    "DELETE FROM code_links WHERE memory_id = ?1 AND origin = 'auto'",
                    [id],
                )
                .map_err(e)?;
                write_links(tx, id, links).map_err(e)?;
            }
            bump(tx, id, Operation::Edit).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn rename_impl(
        &mut self,
        ns: &str,
        name: &str,
        new_name: &str,
    ) -> Result<Memory, MemoryError> {
        check_name("memory", new_name)?;
        let id = in_tx(self, |tx, e| {
            let (id, _) = id_in(tx, e, ns, name)?;
            name_taken(tx, e, ns, new_name)?;
            tx.execute(
                "UPDATE memories SET name = ?2 WHERE id = ?1",
                params![id, new_name],
            )
            .map_err(e)?;
            bump(tx, id, Operation::Rename).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn forget_impl(&mut self, ns: &str, name: &str) -> Result<Memory, MemoryError> {
        let id = in_tx(self, |tx, e| {
            let id = live_id(tx, e, ns, name)?;
            tx.execute(
                "UPDATE memories SET deleted_at = ?2 WHERE id = ?1",
                params![id, now_ms()],
            )
            .map_err(e)?;
            bump(tx, id, Operation::Forget).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn restore_impl(
        &mut self,
        ns: &str,
        name: &str,
        version: Option<u32>,
    ) -> Result<Memory, MemoryError> {
        let id = in_tx(self, |tx, e| {
            let (id, deleted) = id_in(tx, e, ns, name)?;
            match version {
                None if !deleted => {
                    return Err(MemoryError::WrongState(format!(
                        "the memory `{name}` is not forgotten; give a version number to bring an old version back (`loci memory restore {name} N`) (see `loci memory history {name}`)"
                    )));
                }
                None => {}
                Some(v) => {
                    let old: Option<(String, String, String, String)> = tx
                        .query_row(
                            "SELECT type, description, body, metadata FROM memory_versions
                             WHERE memory_id = ?1 AND version = ?2",
                            params![id, v],
                            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                        )
                        .optional()
                        .map_err(e)?;
                    let Some((t, d, b, m)) = old else {
                        return Err(MemoryError::NotFound(format!(
                            "the memory `{name}` has no version {v} (see `loci memory history {name}`)"
                        )));
                    };
                    tx.execute(
                        "UPDATE memories SET type = ?2, description = ?3, body = ?4, body_hash = ?5, metadata = ?6
                         WHERE id = ?1",
                        params![id, t, d, b, hash_hex(b.as_bytes()), m],
                    )
                    .map_err(e)?;
                    write_chunks(tx, id, &b).map_err(e)?;
                }
            }
            // A memory merged into another comes back without its pointer to it.
            tx.execute(
                "UPDATE memories SET deleted_at = NULL,
                     metadata = json_remove(metadata, '$.merged_into') WHERE id = ?1",
                [id],
            )
            .map_err(e)?;
            bump(tx, id, Operation::Restore).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn purge_impl(&mut self, ns: &str, name: &str) -> Result<(), MemoryError> {
        in_tx(self, |tx, e| {
            let (id, _) = id_in(tx, e, ns, name)?;
            tx.execute("DELETE FROM memories WHERE id = ?1", [id])
                .map_err(e)?;
            Ok(())
        })
    }

    pub(crate) fn link_impl(
        &mut self,
        ns: &str,
        name: &str,
        entities: &[EntityInput],
        relationships: &[RelationshipInput],
        code: &[NewCodeLink],
    ) -> Result<Memory, MemoryError> {
        let id = in_tx(self, |tx, e| {
            let id = live_id(tx, e, ns, name)?;
            attach(tx, e, ns, id, entities, relationships)?;
            write_links(tx, id, code).map_err(e)?;
            bump(tx, id, Operation::Link).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn unlink_impl(
        &mut self,
        ns: &str,
        name: &str,
        entity: Option<&str>,
        code: Option<&CodeKey>,
    ) -> Result<Memory, MemoryError> {
        let id = in_tx(self, |tx, e| {
            let id = live_id(tx, e, ns, name)?;
            let mut removed = 0;
            if let Some(ent) = entity {
                removed += tx
                    .execute(
                        "DELETE FROM memory_entities WHERE memory_id = ?1 AND entity_id IN
                         (SELECT id FROM entities WHERE namespace = ?2 AND name = ?3 COLLATE NOCASE)",
                        params![id, ns, ent],
                    )
                    .map_err(e)?;
            }
            if let Some(k) = code {
                removed += tx
                    .execute(
                        "DELETE FROM code_links WHERE memory_id = ?1 AND path = ?2
                         AND (qualified_name = ?3 OR ?3 = '') AND (kind = ?4 OR ?4 = '')",
                        params![id, k.path, k.qualified_name, k.kind],
                    )
                    .map_err(e)?;
            }
            if removed == 0 {
                return Err(MemoryError::NotFound(format!(
                    "the memory `{name}` has no such link ({})",
                    entity
                        .map(|e| format!("entity `{e}`"))
                        .or_else(|| code.map(|k| format!("code {k}")))
                        .unwrap_or_else(|| "nothing named".into())
                )));
            }
            bump(tx, id, Operation::Link).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn move_link_impl(
        &mut self,
        link_id: i64,
        to: &CodeKey,
        line: u32,
    ) -> Result<(), MemoryError> {
        in_tx(self, |tx, e| {
            tx.execute(
                "UPDATE OR IGNORE code_links SET path = ?2, qualified_name = ?3, kind = ?4, line = ?5 WHERE id = ?1",
                params![link_id, to.path, to.qualified_name, to.kind, line],
            )
            .map_err(e)?;
            Ok(())
        })
    }

    fn entity_id(
        tx: &Transaction<'_>,
        e: &dyn Fn(rusqlite::Error) -> MemoryError,
        ns: &str,
        name: &str,
    ) -> Result<(i64, String, Vec<String>), MemoryError> {
        tx.query_row(
            "SELECT id, name, aliases FROM entities WHERE namespace = ?1 AND name = ?2 COLLATE NOCASE",
            params![ns, name],
            |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?)),
        )
        .optional()
        .map_err(e)?
        .map(|(id, n, a)| (id, n, serde_json::from_str(&a).unwrap_or_default()))
        .ok_or_else(|| MemoryError::NotFound(format!("no entity named `{name}` in namespace `{ns}`")))
    }

    pub(crate) fn merge_entities_impl(
        &mut self,
        ns: &str,
        from: &str,
        into: &str,
    ) -> Result<EntityInfo, MemoryError> {
        let into_name = into.to_string();
        in_tx(self, |tx, e| {
            let (fid, fname, faliases) = Self::entity_id(tx, e, ns, from)?;
            let (iid, _, mut ialiases) = Self::entity_id(tx, e, ns, into)?;
            if fid == iid {
                return Err(MemoryError::Invalid(format!(
                    "`{from}` and `{into}` are the same entity"
                )));
            }
            let touched: Vec<i64> = {
                let mut stmt = tx
                    .prepare("SELECT memory_id FROM memory_entities WHERE entity_id = ?1")
                    .map_err(e)?;
                stmt.query_map([fid], |r| r.get(0))
                    .map_err(e)?
                    .collect::<Result<_, _>>()
                    .map_err(e)?
            };
            for sql in [
                "UPDATE OR IGNORE memory_entities SET entity_id = ?2 WHERE entity_id = ?1",
                "UPDATE OR IGNORE relationships SET source_id = ?2 WHERE source_id = ?1",
                "UPDATE OR IGNORE relationships SET target_id = ?2 WHERE target_id = ?1",
            ] {
                tx.execute(sql, params![fid, iid]).map_err(e)?;
            }
            for a in std::iter::once(fname).chain(faliases) {
                if !ialiases.iter().any(|h| h.eq_ignore_ascii_case(&a)) {
                    ialiases.push(a);
                }
            }
            tx.execute(
                "UPDATE entities SET aliases = ?2 WHERE id = ?1",
                params![iid, serde_json::to_string(&ialiases).unwrap_or_default()],
            )
            .map_err(e)?;
            tx.execute("DELETE FROM entities WHERE id = ?1", [fid])
                .map_err(e)?;
            for m in touched {
                bump(tx, m, Operation::Link).map_err(e)?;
            }
            Ok(())
        })?;
        self.entity_info(ns, &into_name)
    }

    pub(crate) fn rename_entity_impl(
        &mut self,
        ns: &str,
        name: &str,
        new_name: &str,
    ) -> Result<EntityInfo, MemoryError> {
        check_name("entity", new_name)?;
        in_tx(self, |tx, e| {
            let (id, old, mut aliases) = Self::entity_id(tx, e, ns, name)?;
            let clash: Option<i64> = tx
                .query_row(
                    "SELECT id FROM entities WHERE namespace = ?1 AND name = ?2 COLLATE NOCASE AND id != ?3",
                    params![ns, new_name, id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(e)?;
            if clash.is_some() {
                return Err(MemoryError::Invalid(format!(
                    "an entity named `{new_name}` already exists in namespace `{ns}`; merge them with `loci memory entities merge {name} {new_name}`"
                )));
            }
            if !aliases.iter().any(|a| a.eq_ignore_ascii_case(&old)) {
                aliases.push(old);
            }
            tx.execute(
                "UPDATE entities SET name = ?2, aliases = ?3 WHERE id = ?1",
                params![
                    id,
                    new_name,
                    serde_json::to_string(&aliases).unwrap_or_default()
                ],
            )
            .map_err(e)?;
            Ok(())
        })?;
        self.entity_info(ns, new_name)
    }

    pub(crate) fn store_vectors_impl(
        &mut self,
        model: &str,
        dim: usize,
        rows: &[(i64, u32, Vec<f32>)],
    ) -> Result<(), MemoryError> {
        in_tx(self, |tx, e| {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO embeddings (model, memory_id, seq, dim, vector)
                     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS
                         (SELECT 1 FROM chunks WHERE memory_id = ?2 AND seq = ?3)",
                )
                .map_err(e)?;
            for (id, seq, v) in rows {
                if v.len() != dim {
                    return Err(MemoryError::Embed(format!(
                        "the embedder gave a vector of {} values for a {dim}-dimension model",
                        v.len()
                    )));
                }
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                stmt.execute(params![model, id, seq, dim as i64, bytes])
                    .map_err(e)?;
            }
            Ok(())
        })
    }
}
