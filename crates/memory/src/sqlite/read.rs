//! The reads, and recall's candidate queries (entities, code links, vectors; full text
//! is `fts.rs`).

use rusqlite::{ToSql, params_from_iter};

use super::handle::SqliteStore;
use super::rows::{LINK_COLUMNS, SUMMARY_COLUMNS, link_at, placeholders, summary_from_row};
use crate::MemoryError;
use crate::model::{CodeKey, CodeLink, EntityInfo, Memory, MemorySummary, Relationship, Version};
use crate::store::{EntityEdge, Filter, PendingChunk, StoreStats};

/// The `WHERE` conditions and values of a filter over `memories` aliased `m`.
fn filter_sql(f: &Filter, values: &mut Vec<Box<dyn ToSql>>) -> String {
    filter_sql_on(f, values, "m.namespace = ?")
}

/// [`filter_sql`] for a query that already names its memories by id: the namespace test
/// must not steer SQLite onto the `(namespace, updated_at)` index, which would scan a
/// whole namespace instead of looking the ids up.
pub(super) fn filter_sql_by_id(f: &Filter, values: &mut Vec<Box<dyn ToSql>>) -> String {
    filter_sql_on(f, values, "+m.namespace = ?")
}

fn filter_sql_on(f: &Filter, values: &mut Vec<Box<dyn ToSql>>, first: &str) -> String {
    let mut sql = String::from(first);
    values.push(Box::new(f.namespace.clone()));
    if !f.include_forgotten {
        sql.push_str(" AND m.deleted_at IS NULL");
    }
    if !f.types.is_empty() {
        sql.push_str(&format!(" AND m.type IN ({})", placeholders(f.types.len())));
        for t in &f.types {
            values.push(Box::new(t.name()));
        }
    }
    if let Some(s) = f.since {
        sql.push_str(" AND m.updated_at >= ?");
        values.push(Box::new(s));
    }
    if let Some(u) = f.until {
        sql.push_str(" AND m.updated_at <= ?");
        values.push(Box::new(u));
    }
    sql
}

/// A relationship from a row of `(source, target, relation, weight)`.
fn relationship_at(r: &rusqlite::Row) -> rusqlite::Result<Relationship> {
    Ok(Relationship {
        source: r.get(0)?,
        target: r.get(1)?,
        relation: r.get(2)?,
        weight: r.get(3)?,
    })
}

impl SqliteStore {
    pub(crate) fn read_impl(&self, ns: &str, name: &str) -> Result<Memory, MemoryError> {
        let (id, _) = self.find_id(ns, name)?;
        self.memory_by_id(id)
    }

    pub(crate) fn list_impl(
        &self,
        f: &Filter,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<MemorySummary>, u64), MemoryError> {
        let e = self.err();
        let mut values = Vec::new();
        let cond = filter_sql(f, &mut values);
        let total: u64 = self
            .conn
            .query_row(
                &format!("SELECT count(*) FROM memories m WHERE {cond}"),
                params_from_iter(values.iter()),
                |r| r.get(0),
            )
            .map_err(&e)?;
        values.push(Box::new(limit as i64));
        values.push(Box::new(offset as i64));
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM memories m WHERE {cond}
                 ORDER BY m.updated_at DESC, m.id DESC LIMIT ? OFFSET ?"
            ))
            .map_err(&e)?;
        let rows = stmt
            .query_map(params_from_iter(values.iter()), summary_from_row)
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok((rows, total))
    }

    pub(crate) fn history_impl(&self, ns: &str, name: &str) -> Result<Vec<Version>, MemoryError> {
        let (id, _) = self.find_id(ns, name)?;
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT version, op, name, type, description, body, metadata, at, deleted
                 FROM memory_versions WHERE memory_id = ?1 ORDER BY version",
            )
            .map_err(&e)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(Version {
                    version: r.get(0)?,
                    op: crate::model::Operation::parse(&r.get::<_, String>(1)?)
                        .unwrap_or(crate::model::Operation::Edit),
                    name: r.get(2)?,
                    memory_type: super::rows::parse_type(&r.get::<_, String>(3)?),
                    description: r.get(4)?,
                    body: r.get(5)?,
                    metadata: serde_json::from_str(&r.get::<_, String>(6)?)
                        .unwrap_or(serde_json::Value::Null),
                    at: r.get(7)?,
                    deleted: r.get(8)?,
                })
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    fn entity_rows(&self, ns: &str, name: Option<&str>) -> Result<Vec<EntityInfo>, MemoryError> {
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT x.id, x.name, x.type, x.aliases,
                    (SELECT count(*) FROM memory_entities me WHERE me.entity_id = x.id)
                  + (SELECT count(*) FROM relationships r WHERE r.source_id = x.id OR r.target_id = x.id)
                 FROM entities x WHERE x.namespace = ?1 AND (?2 IS NULL OR x.name = ?2 COLLATE NOCASE)
                 ORDER BY 5 DESC, x.name",
            )
            .map_err(&e)?;
        let rows = stmt
            .query_map(rusqlite::params![ns, name], |r| {
                Ok(EntityInfo {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    entity_type: r.get(2)?,
                    aliases: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or_default(),
                    degree: r.get(4)?,
                })
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    pub(crate) fn entities_impl(&self, ns: &str) -> Result<Vec<EntityInfo>, MemoryError> {
        self.entity_rows(ns, None)
    }

    pub(crate) fn entity_info(&self, ns: &str, name: &str) -> Result<EntityInfo, MemoryError> {
        self.entity_rows(ns, Some(name))?
            .into_iter()
            .next()
            .ok_or_else(|| {
                MemoryError::NotFound(format!("no entity named `{name}` in namespace `{ns}`"))
            })
    }

    pub(crate) fn relationships_impl(&self, ns: &str) -> Result<Vec<Relationship>, MemoryError> {
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT s.name, t.name, r.relation, r.weight FROM relationships r
                 JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id
                 WHERE r.namespace = ?1 ORDER BY s.name, t.name, r.relation",
            )
            .map_err(&e)?;
        let rows = stmt
            .query_map([ns], relationship_at)
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    /// The names go as one JSON array (`json_each`), so one statement serves any count;
    /// `e` finds them by `entities_name` (`namespace, name COLLATE NOCASE`), and each
    /// one's relationships are the `(source_id, target_id, relation)` key's range.
    pub(crate) fn relationships_among_impl(
        &self,
        ns: &str,
        entities: &[String],
        limit: usize,
    ) -> Result<Vec<Relationship>, MemoryError> {
        if !crate::store::among_wanted(entities, limit)? {
            return Ok(Vec::new());
        }
        let e = self.err();
        let names = serde_json::to_string(entities)
            .map_err(|err| MemoryError::Invalid(format!("entity names: {err}")))?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "WITH e(id, name) AS MATERIALIZED (
                   SELECT x.id, x.name FROM entities x
                   WHERE x.namespace = ?1
                     AND x.name COLLATE NOCASE IN (SELECT value FROM json_each(?2)))
                 SELECT s.name, t.name, r.relation, r.weight
                 FROM e s JOIN relationships r ON r.source_id = s.id
                 JOIN e t ON t.id = r.target_id
                 ORDER BY s.name, t.name, r.relation LIMIT ?3",
            )
            .map_err(&e)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(rusqlite::params![ns, names, limit], relationship_at)
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    pub(crate) fn namespaces_impl(&self) -> Result<Vec<String>, MemoryError> {
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT namespace FROM memories ORDER BY namespace")
            .map_err(&e)?;
        stmt.query_map([], |r| r.get(0))
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)
    }

    pub(crate) fn stats_impl(&self, ns: Option<&str>) -> Result<StoreStats, MemoryError> {
        let e = self.err();
        let count = |sql: &str| -> Result<u64, MemoryError> {
            self.conn
                .query_row(sql, rusqlite::params![ns], |r| r.get(0))
                .map_err(&e)
        };
        let mut s = StoreStats {
            memories: count(
                "SELECT count(*) FROM memories WHERE (?1 IS NULL OR namespace = ?1) AND deleted_at IS NULL",
            )?,
            forgotten: count(
                "SELECT count(*) FROM memories WHERE (?1 IS NULL OR namespace = ?1) AND deleted_at IS NOT NULL",
            )?,
            versions: count(
                "SELECT count(*) FROM memory_versions v JOIN memories m ON m.id = v.memory_id WHERE ?1 IS NULL OR m.namespace = ?1",
            )?,
            chunks: count(
                "SELECT count(*) FROM chunks c JOIN memories m ON m.id = c.memory_id WHERE ?1 IS NULL OR m.namespace = ?1",
            )?,
            embedded_chunks: count(
                "SELECT count(DISTINCT x.memory_id || ':' || x.seq) FROM embeddings x JOIN memories m ON m.id = x.memory_id WHERE ?1 IS NULL OR m.namespace = ?1",
            )?,
            entities: count("SELECT count(*) FROM entities WHERE ?1 IS NULL OR namespace = ?1")?,
            relationships: count(
                "SELECT count(*) FROM relationships WHERE ?1 IS NULL OR namespace = ?1",
            )?,
            code_links: count(
                "SELECT count(*) FROM code_links c JOIN memories m ON m.id = c.memory_id WHERE ?1 IS NULL OR m.namespace = ?1",
            )?,
            extraction_failed: count(super::extraction::COUNT_FAILED)?,
            ..StoreStats::default()
        };
        let mut stmt = self
            .conn
            .prepare("SELECT type, count(*) FROM memories WHERE (?1 IS NULL OR namespace = ?1) AND deleted_at IS NULL GROUP BY type")
            .map_err(&e)?;
        s.types = stmt
            .query_map(rusqlite::params![ns], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        let mut stmt = self
            .conn
            .prepare("SELECT namespace, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY namespace")
            .map_err(&e)?;
        s.namespaces = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(s)
    }

    pub(crate) fn entities_named_impl(
        &self,
        ns: &str,
        words: &[String],
    ) -> Result<Vec<(i64, String)>, MemoryError> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let e = self.err();
        let mut values: Vec<Box<dyn ToSql>> = vec![Box::new(ns.to_string())];
        for w in words {
            values.push(Box::new(w.clone()));
        }
        let ph = placeholders(words.len());
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT x.id, x.name FROM entities x WHERE x.namespace = ?1 AND (lower(x.name) IN ({ph})
                   OR EXISTS (SELECT 1 FROM json_each(x.aliases) a WHERE lower(a.value) IN ({ph})))"
            ))
            .map_err(&e)?;
        let mut all: Vec<Box<dyn ToSql>> = values;
        for w in words {
            all.push(Box::new(w.clone()));
        }
        let rows = stmt
            .query_map(params_from_iter(all.iter()), |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    pub(crate) fn entity_edges_impl(&self, ids: &[i64]) -> Result<Vec<EntityEdge>, MemoryError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let e = self.err();
        let ph = placeholders(ids.len());
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT r.source_id, r.target_id, t.name, r.relation, r.weight FROM relationships r
                   JOIN entities t ON t.id = r.target_id WHERE r.source_id IN ({ph})
                 UNION ALL
                 SELECT r.target_id, r.source_id, s.name, r.relation, r.weight FROM relationships r
                   JOIN entities s ON s.id = r.source_id WHERE r.target_id IN ({ph})"
            ))
            .map_err(&e)?;
        let rows = stmt
            .query_map(params_from_iter(ids.iter().chain(ids.iter())), |r| {
                Ok(EntityEdge {
                    from: r.get(0)?,
                    to: r.get(1)?,
                    to_name: r.get(2)?,
                    relation: r.get(3)?,
                    weight: r.get(4)?,
                })
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    pub(crate) fn memories_of_entities_impl(
        &self,
        f: &Filter,
        ids: &[i64],
    ) -> Result<Vec<(i64, i64)>, MemoryError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let e = self.err();
        let mut values: Vec<Box<dyn ToSql>> = Vec::new();
        for id in ids {
            values.push(Box::new(*id));
        }
        let ph = placeholders(ids.len());
        let cond = filter_sql_by_id(f, &mut values);
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT me.memory_id, me.entity_id FROM memory_entities me CROSS JOIN memories m ON m.id = me.memory_id
                 WHERE me.entity_id IN ({ph}) AND {cond} ORDER BY +m.updated_at DESC LIMIT 500"
            ))
            .map_err(&e)?;
        let rows = stmt
            .query_map(params_from_iter(values.iter()), |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    pub(crate) fn entities_of_memories_impl(
        &self,
        ids: &[i64],
    ) -> Result<Vec<(i64, i64, String)>, MemoryError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT me.memory_id, x.id, x.name FROM memory_entities me JOIN entities x ON x.id = me.entity_id
                 WHERE me.memory_id IN ({})",
                placeholders(ids.len())
            ))
            .map_err(&e)?;
        let rows = stmt
            .query_map(params_from_iter(ids.iter()), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    pub(crate) fn memories_linked_to_impl(
        &self,
        f: &Filter,
        keys: &[CodeKey],
        paths: &[String],
    ) -> Result<Vec<(i64, CodeKey)>, MemoryError> {
        let e = self.err();
        let mut out = Vec::new();
        let mut run =
            |match_sql: &str, mut values: Vec<Box<dyn ToSql>>| -> Result<(), MemoryError> {
                let cond = filter_sql(f, &mut values);
                let mut stmt = self
                    .conn
                    .prepare_cached(&format!(
                        "SELECT c.memory_id, c.path, c.qualified_name, c.kind FROM code_links c
                     JOIN memories m ON m.id = c.memory_id WHERE {match_sql} AND {cond}"
                    ))
                    .map_err(&e)?;
                let rows = stmt
                    .query_map(params_from_iter(values.iter()), |r| {
                        Ok((
                            r.get(0)?,
                            CodeKey {
                                path: r.get(1)?,
                                qualified_name: r.get(2)?,
                                kind: r.get(3)?,
                            },
                        ))
                    })
                    .map_err(&e)?;
                for row in rows {
                    out.push(row.map_err(&e)?);
                }
                Ok(())
            };
        for k in keys {
            run(
                "c.path = ? AND c.qualified_name = ? AND c.kind = ?",
                vec![
                    Box::new(k.path.clone()),
                    Box::new(k.qualified_name.clone()),
                    Box::new(k.kind.clone()),
                ],
            )?;
        }
        for p in paths {
            run("c.path = ?", vec![Box::new(p.clone())])?;
        }
        Ok(out)
    }

    pub(crate) fn links_of_impl(&self, ids: &[i64]) -> Result<Vec<(i64, CodeLink)>, MemoryError> {
        let sql = format!(
            "SELECT memory_id, {LINK_COLUMNS} FROM code_links WHERE memory_id IN ({{ids}}) ORDER BY path, qualified_name"
        );
        // The link's columns start after memory_id.
        self.by_ids(&sql, ids, |r| Ok((r.get::<_, i64>(0)?, link_at(r, 1)?)))
    }

    pub(crate) fn bodies_impl(&self, ids: &[i64]) -> Result<Vec<(i64, String)>, MemoryError> {
        self.by_ids(
            "SELECT id, body FROM memories WHERE id IN ({ids})",
            ids,
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    pub(crate) fn summaries_impl(&self, ids: &[i64]) -> Result<Vec<MemorySummary>, MemoryError> {
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM memories m WHERE m.id IN ({{ids}})");
        self.by_ids(&sql, ids, summary_from_row)
    }

    /// The rows of `sql` for the memories `ids` (their placeholders where `sql` says
    /// `{ids}`), each read by `row`, through the connection's statement cache: the shape
    /// of recall's reads of its few hits.
    fn by_ids<T>(
        &self,
        sql: &str,
        ids: &[i64],
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, MemoryError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare_cached(&sql.replace("{ids}", &placeholders(ids.len())))
            .map_err(&e)?;
        let rows = stmt
            .query_map(params_from_iter(ids.iter()), row)
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }

    pub(crate) fn scan_vectors_impl(
        &self,
        model: &str,
        f: &Filter,
        visit: &mut dyn FnMut(i64, u32, &[f32]),
    ) -> Result<(), MemoryError> {
        let e = self.err();
        let mut values: Vec<Box<dyn ToSql>> = vec![Box::new(model.to_string())];
        let cond = filter_sql_by_id(f, &mut values);
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT x.memory_id, x.seq, x.vector FROM embeddings x CROSS JOIN memories m ON m.id = x.memory_id
                 WHERE x.model = ? AND {cond}"
            ))
            .map_err(&e)?;
        let mut rows = stmt.query(params_from_iter(values.iter())).map_err(&e)?;
        let mut buf: Vec<f32> = Vec::new();
        while let Some(r) = rows.next().map_err(&e)? {
            let id: i64 = r.get(0).map_err(&e)?;
            let seq: u32 = r.get(1).map_err(&e)?;
            let blob = r
                .get_ref(2)
                .map_err(&e)?
                .as_blob()
                .map_err(|err| MemoryError::Sqlite {
                    path: self.path.clone(),
                    source: err.into(),
                })?;
            buf.clear();
            buf.extend(
                blob.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            visit(id, seq, &buf);
        }
        Ok(())
    }

    pub(crate) fn pending_chunks_impl(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<PendingChunk>, MemoryError> {
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT c.memory_id, c.seq, substr(CAST(m.body AS BLOB), c.start + 1, c.end - c.start)
                 FROM chunks c JOIN memories m ON m.id = c.memory_id
                 WHERE m.deleted_at IS NULL AND NOT EXISTS
                   (SELECT 1 FROM embeddings x WHERE x.model = ?1 AND x.memory_id = c.memory_id AND x.seq = c.seq)
                 ORDER BY c.memory_id, c.seq LIMIT ?2",
            )
            .map_err(&e)?;
        let rows = stmt
            .query_map(rusqlite::params![model, limit as i64], |r| {
                let bytes: Vec<u8> = r.get(2)?;
                Ok(PendingChunk {
                    memory_id: r.get(0)?,
                    seq: r.get(1)?,
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                })
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }
}
