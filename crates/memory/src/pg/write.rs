//! The mutations of a memory: each one `SERIALIZABLE` transaction (`retry.rs`) that
//! writes the memory's next version before it commits, the SQLite store's semantics in
//! PostgreSQL's SQL.

use postgres::Transaction;
use rustc_hash::FxHashMap;

use super::ctx::{Ctx, Db};
use super::handle::PgStore;
use super::nul;
use super::rows::{NOW_MS, not_found, origin_name};
use crate::MemoryError;
use crate::chunk;
use crate::model::{
    CodeKey, Edit, EntityInput, Memory, NewCodeLink, NewMemory, Operation, RelationshipInput,
    check_body, check_description, check_metadata, check_name, hash_hex,
};

/// Writes the memory's current row as its version, after a bump by the caller.
fn write_version(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    id: i64,
    op: Operation,
) -> Result<(), MemoryError> {
    tx.execute(
        "INSERT INTO memory_versions (scope, memory_id, version, op, name, type, description, body, metadata, deleted, at)
         SELECT scope, id, version, $2, name, type, description, body, metadata, deleted_at IS NOT NULL, updated_at
         FROM memories WHERE id = $1",
        &[&id, &op.name()],
    )
    .db(c)?;
    Ok(())
}

/// The next version number and timestamp (never earlier than the last), then the
/// version row.
pub(super) fn bump(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    id: i64,
    op: Operation,
) -> Result<(), MemoryError> {
    tx.execute(
        &format!(
            "UPDATE memories SET version = version + 1, updated_at = greatest({NOW_MS}, updated_at)
             WHERE id = $1"
        ),
        &[&id],
    )
    .db(c)?;
    write_version(tx, c, id, op)
}

/// Replaces the memory's chunks (their vectors go with them).
pub(super) fn write_chunks(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    id: i64,
    body: &str,
) -> Result<(), MemoryError> {
    tx.execute("DELETE FROM chunks WHERE memory_id = $1", &[&id])
        .db(c)?;
    let chunks = chunk::chunks(body);
    if chunks.is_empty() {
        return Ok(());
    }
    let seqs: Vec<i32> = (0..chunks.len() as i32).collect();
    let starts: Vec<i32> = chunks.iter().map(|ch| ch.start as i32).collect();
    let ends: Vec<i32> = chunks.iter().map(|ch| ch.end as i32).collect();
    tx.execute(
        "INSERT INTO chunks (scope, memory_id, seq, start_byte, end_byte)
         SELECT $1, $2, s, b, e FROM unnest($3::integer[], $4::integer[], $5::integer[]) AS u(s, b, e)",
        &[&c.scope, &id, &seqs, &starts, &ends],
    )
    .db(c)?;
    Ok(())
}

/// Adds code links (a link to code already linked takes the new hash and line; a manual
/// link stays manual).
fn write_links(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    id: i64,
    links: &[NewCodeLink],
) -> Result<(), MemoryError> {
    let sql = format!(
        "INSERT INTO code_links (scope, memory_id, path, qualified_name, kind, hash, line, origin, mention, linked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, {NOW_MS})
         ON CONFLICT (memory_id, path, qualified_name, kind) DO UPDATE SET
             hash = excluded.hash, line = excluded.line, linked_at = excluded.linked_at,
             origin = CASE WHEN code_links.origin = 'manual' THEN 'manual' ELSE excluded.origin END,
             mention = coalesce(excluded.mention, code_links.mention)"
    );
    for l in links {
        tx.execute(
            &sql,
            &[
                &c.scope,
                &id,
                &l.key.path,
                &l.key.qualified_name,
                &l.key.kind,
                &l.hash,
                &i64::from(l.line),
                &origin_name(l.origin),
                &l.mention,
            ],
        )
        .db(c)?;
    }
    Ok(())
}

/// The entity named `name` (case-insensitively) in `ns`: id, name, aliases.
pub(super) fn find_entity(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    ns: &str,
    name: &str,
) -> Result<Option<(i64, String, Vec<String>)>, MemoryError> {
    let row = tx
        .query_opt(
            "SELECT id, name, aliases FROM entities
             WHERE scope = $1 AND namespace = $2 AND lower(name) = lower($3)",
            &[&c.scope, &ns, &name],
        )
        .db(c)?;
    row.map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .transpose()
        .db(c)
}

/// Finds or creates each entity, merging aliases; returns lower-cased name → id.
fn upsert_entities(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    ns: &str,
    entities: &[EntityInput],
) -> Result<FxHashMap<String, i64>, MemoryError> {
    let mut ids = FxHashMap::default();
    for ent in entities {
        let id = match find_entity(tx, c, ns, &ent.name)? {
            Some((id, _, mut have)) => {
                let before = have.len();
                for a in &ent.aliases {
                    if !have.iter().any(|h| h.eq_ignore_ascii_case(a)) {
                        have.push(a.clone());
                    }
                }
                if have.len() != before {
                    tx.execute(
                        "UPDATE entities SET aliases = $2 WHERE id = $1",
                        &[&id, &have],
                    )
                    .db(c)?;
                }
                id
            }
            None => tx
                .query_one(
                    &format!(
                        "INSERT INTO entities (scope, namespace, name, type, aliases, created_at)
                         VALUES ($1, $2, $3, $4, $5, {NOW_MS}) RETURNING id"
                    ),
                    &[&c.scope, &ns, &ent.name, &ent.entity_type, &ent.aliases],
                )
                .db(c)?
                .try_get(0)
                .db(c)?,
        };
        ids.insert(ent.name.to_lowercase(), id);
    }
    Ok(ids)
}

/// Attaches entities and relationships to memory `id`; a relationship end that is
/// neither among `entities` nor known in `ns` fails the whole call.
pub(super) fn attach(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    ns: &str,
    id: i64,
    entities: &[EntityInput],
    relationships: &[RelationshipInput],
) -> Result<(), MemoryError> {
    let ids = upsert_entities(tx, c, ns, entities)?;
    for eid in ids.values() {
        tx.execute(
            "INSERT INTO memory_entities (scope, memory_id, entity_id) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[&c.scope, &id, eid],
        )
        .db(c)?;
    }
    for (i, r) in relationships.iter().enumerate() {
        let mut end = |which: &str, name: &str| -> Result<i64, MemoryError> {
            if let Some(id) = ids.get(&name.to_lowercase()) {
                return Ok(*id);
            }
            find_entity(tx, c, ns, name)?.map(|(id, ..)| id).ok_or_else(|| {
                MemoryError::Unresolved(format!(
                    "relationships[{i}]: the {which} entity `{name}` is neither among this call's entities nor known in namespace `{ns}`"
                ))
            })
        };
        let (s, t) = (end("source", &r.source)?, end("target", &r.target)?);
        tx.execute(
            "INSERT INTO relationships (scope, namespace, source_id, target_id, relation, weight, memory_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (source_id, target_id, relation) DO UPDATE SET
                 weight = excluded.weight, memory_id = excluded.memory_id",
            &[&c.scope, &ns, &s, &t, &r.relation, &r.weight, &id],
        )
        .db(c)?;
    }
    Ok(())
}

/// Refuses a name the namespace already holds (live or forgotten).
fn name_taken(tx: &mut Transaction<'_>, c: &Ctx, ns: &str, name: &str) -> Result<(), MemoryError> {
    let holder = tx
        .query_opt(
            "SELECT deleted_at FROM memories WHERE scope = $1 AND namespace = $2 AND name = $3",
            &[&c.scope, &ns, &name],
        )
        .db(c)?;
    match holder {
        Some(row) => Err(MemoryError::NameTaken {
            namespace: ns.into(),
            name: name.into(),
            forgotten: row.try_get::<_, Option<i64>>(0).db(c)?.is_some(),
        }),
        None => Ok(()),
    }
}

/// The id of `name` in `ns` within a transaction, and whether it is forgotten.
pub(super) fn id_in(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    ns: &str,
    name: &str,
) -> Result<(i64, bool), MemoryError> {
    let row = tx
        .query_opt(
            "SELECT id, deleted_at IS NOT NULL FROM memories
             WHERE scope = $1 AND namespace = $2 AND name = $3",
            &[&c.scope, &ns, &name],
        )
        .db(c)?
        .ok_or_else(|| not_found(ns, name))?;
    Ok((row.try_get(0).db(c)?, row.try_get(1).db(c)?))
}

/// The id of `name` in `ns`, refusing a forgotten memory.
pub(super) fn live_id(
    tx: &mut Transaction<'_>,
    c: &Ctx,
    ns: &str,
    name: &str,
) -> Result<i64, MemoryError> {
    let (id, deleted) = id_in(tx, c, ns, name)?;
    if deleted {
        return Err(MemoryError::WrongState(format!(
            "the memory `{name}` in namespace `{ns}` is forgotten; restore it first (`loci memory restore {name}`)"
        )));
    }
    Ok(id)
}

impl PgStore {
    pub(super) fn create_impl(
        &mut self,
        m: &NewMemory,
        ns: &str,
        links: &[NewCodeLink],
    ) -> Result<Memory, MemoryError> {
        nul::text("the body", &m.body)?;
        nul::text("the description", &m.description)?;
        nul::text("the source", m.source.as_deref().unwrap_or_default())?;
        nul::text(
            "the session id",
            m.session_id.as_deref().unwrap_or_default(),
        )?;
        let metadata = m.metadata.clone().unwrap_or_else(|| serde_json::json!({}));
        nul::json("the metadata", &metadata)?;
        nul::graph(&m.entities, &m.relationships)?;
        let memory_type = m.memory_type.unwrap_or(crate::MemoryType::Note).name();
        let body_hash = hash_hex(m.body.as_bytes());
        let id = self.write(|tx, c| {
            name_taken(tx, c, ns, &m.name)?;
            let id: i64 = tx
                .query_one(
                    &format!(
                        "INSERT INTO memories (scope, namespace, name, type, description, body, body_hash,
                             source, session_id, metadata, version, created_at, updated_at)
                         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, now_ms, now_ms
                         FROM (SELECT {NOW_MS} AS now_ms) t RETURNING id"
                    ),
                    &[
                        &c.scope,
                        &ns,
                        &m.name,
                        &memory_type,
                        &m.description,
                        &m.body,
                        &body_hash,
                        &m.source,
                        &m.session_id,
                        &metadata,
                    ],
                )
                .db(c)?
                .try_get(0)
                .db(c)?;
            attach(tx, c, ns, id, &m.entities, &m.relationships)?;
            write_chunks(tx, c, id, &m.body)?;
            write_links(tx, c, id, links)?;
            write_version(tx, c, id, Operation::Create)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn edit_impl(
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
            nul::text("the body", b)?;
        }
        if let Some(d) = &edit.description {
            check_description(d)?;
            nul::text("the description", d)?;
        }
        if let Some(m) = &edit.metadata {
            check_metadata(m)?;
            nul::json("the metadata", m)?;
        }
        let id = self.write(|tx, c| {
            let id = live_id(tx, c, ns, name)?;
            if let Some(body) = &edit.body {
                tx.execute(
                    "UPDATE memories SET body = $2, body_hash = $3 WHERE id = $1",
                    &[&id, body, &hash_hex(body.as_bytes())],
                )
                .db(c)?;
                write_chunks(tx, c, id, body)?;
            }
            if let Some(d) = &edit.description {
                tx.execute(
                    "UPDATE memories SET description = $2 WHERE id = $1",
                    &[&id, d],
                )
                .db(c)?;
            }
            if let Some(t) = edit.memory_type {
                tx.execute(
                    "UPDATE memories SET type = $2 WHERE id = $1",
                    &[&id, &t.name()],
                )
                .db(c)?;
            }
            if let Some(m) = &edit.metadata {
                tx.execute("UPDATE memories SET metadata = $2 WHERE id = $1", &[&id, m])
                    .db(c)?;
            }
            if let Some(links) = auto_links {
                tx.execute(
                    "DELETE FROM code_links WHERE memory_id = $1 AND origin = 'auto'",
                    &[&id],
                )
                .db(c)?;
                write_links(tx, c, id, links)?;
            }
            bump(tx, c, id, Operation::Edit)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn rename_impl(
        &mut self,
        ns: &str,
        name: &str,
        new_name: &str,
    ) -> Result<Memory, MemoryError> {
        check_name("memory", new_name)?;
        let id = self.write(|tx, c| {
            let (id, _) = id_in(tx, c, ns, name)?;
            name_taken(tx, c, ns, new_name)?;
            tx.execute(
                "UPDATE memories SET name = $2 WHERE id = $1",
                &[&id, &new_name],
            )
            .db(c)?;
            bump(tx, c, id, Operation::Rename)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn forget_impl(&mut self, ns: &str, name: &str) -> Result<Memory, MemoryError> {
        let id = self.write(|tx, c| {
            let id = live_id(tx, c, ns, name)?;
            tx.execute(
                &format!("UPDATE memories SET deleted_at = {NOW_MS} WHERE id = $1"),
                &[&id],
            )
            .db(c)?;
            bump(tx, c, id, Operation::Forget)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn restore_impl(
        &mut self,
        ns: &str,
        name: &str,
        version: Option<u32>,
    ) -> Result<Memory, MemoryError> {
        let id = self.write(|tx, c| {
            let (id, deleted) = id_in(tx, c, ns, name)?;
            match version {
                None if !deleted => {
                    return Err(MemoryError::WrongState(format!(
                        "the memory `{name}` is not forgotten; give a version number to bring an old version back (`loci memory restore {name} N`) (see `loci memory history {name}`)"
                    )));
                }
                None => {}
                Some(v) => {
                    let v_row = i32::try_from(v).unwrap_or(i32::MAX);
                    let old = tx
                        .query_opt(
                            "SELECT body FROM memory_versions WHERE memory_id = $1 AND version = $2",
                            &[&id, &v_row],
                        )
                        .db(c)?;
                    let Some(old) = old else {
                        return Err(MemoryError::NotFound(format!(
                            "the memory `{name}` has no version {v} (see `loci memory history {name}`)"
                        )));
                    };
                    let body: String = old.try_get(0).db(c)?;
                    tx.execute(
                        "UPDATE memories m SET type = v.type, description = v.description,
                             body = v.body, body_hash = $3, metadata = v.metadata
                         FROM memory_versions v
                         WHERE m.id = $1 AND v.memory_id = m.id AND v.version = $2",
                        &[&id, &v_row, &hash_hex(body.as_bytes())],
                    )
                    .db(c)?;
                    write_chunks(tx, c, id, &body)?;
                }
            }
            // A memory merged into another comes back without its pointer to it (the
            // other keys kept in their order).
            let mut metadata: serde_json::Value = tx
                .query_one("SELECT metadata FROM memories WHERE id = $1", &[&id])
                .db(c)?
                .try_get(0)
                .db(c)?;
            if let Some(map) = metadata.as_object_mut() {
                map.retain(|k, _| k != crate::MERGED_INTO);
            }
            tx.execute(
                "UPDATE memories SET deleted_at = NULL, metadata = $2 WHERE id = $1",
                &[&id, &metadata],
            )
            .db(c)?;
            bump(tx, c, id, Operation::Restore)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn purge_impl(&mut self, ns: &str, name: &str) -> Result<(), MemoryError> {
        self.write(|tx, c| {
            let (id, _) = id_in(tx, c, ns, name)?;
            tx.execute("DELETE FROM memories WHERE id = $1", &[&id])
                .db(c)?;
            Ok(())
        })
    }

    pub(super) fn link_impl(
        &mut self,
        ns: &str,
        name: &str,
        entities: &[EntityInput],
        relationships: &[RelationshipInput],
        code: &[NewCodeLink],
    ) -> Result<Memory, MemoryError> {
        nul::graph(entities, relationships)?;
        let id = self.write(|tx, c| {
            let id = live_id(tx, c, ns, name)?;
            attach(tx, c, ns, id, entities, relationships)?;
            write_links(tx, c, id, code)?;
            bump(tx, c, id, Operation::Link)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn unlink_impl(
        &mut self,
        ns: &str,
        name: &str,
        entity: Option<&str>,
        code: Option<&CodeKey>,
    ) -> Result<Memory, MemoryError> {
        let id = self.write(|tx, c| {
            let id = live_id(tx, c, ns, name)?;
            let mut removed = 0;
            if let Some(ent) = entity {
                removed += tx
                    .execute(
                        "DELETE FROM memory_entities WHERE memory_id = $1 AND entity_id IN
                         (SELECT id FROM entities WHERE scope = $2 AND namespace = $3 AND lower(name) = lower($4))",
                        &[&id, &c.scope, &ns, &ent],
                    )
                    .db(c)?;
            }
            if let Some(k) = code {
                removed += tx
                    .execute(
                        "DELETE FROM code_links WHERE memory_id = $1 AND path = $2
                         AND (qualified_name = $3 OR $3 = '') AND (kind = $4 OR $4 = '')",
                        &[&id, &k.path, &k.qualified_name, &k.kind],
                    )
                    .db(c)?;
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
            bump(tx, c, id, Operation::Link)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn move_link_impl(
        &mut self,
        link_id: i64,
        to: &CodeKey,
        line: u32,
    ) -> Result<(), MemoryError> {
        self.write(|tx, c| {
            // Left as it is when the memory already links the new key (SQLite's
            // `UPDATE OR IGNORE`).
            tx.execute(
                "UPDATE code_links l SET path = $3, qualified_name = $4, kind = $5, line = $6
                 WHERE l.id = $1 AND l.scope = $2 AND NOT EXISTS (
                     SELECT 1 FROM code_links o WHERE o.memory_id = l.memory_id AND o.id <> l.id
                       AND o.path = $3 AND o.qualified_name = $4 AND o.kind = $5)",
                &[
                    &link_id,
                    &c.scope,
                    &to.path,
                    &to.qualified_name,
                    &to.kind,
                    &i64::from(line),
                ],
            )
            .db(c)?;
            Ok(())
        })
    }
}
