//! The reads, and recall's candidate queries over entities and code links (full text is
//! `fts.rs`, vectors `vectors.rs`). Every one is confined to the store's scope; id lists
//! go to the server as one array each.

use postgres::GenericClient;

use super::ctx::{Ctx, Db};
use super::entities::entity_rows;
use super::handle::PgStore;
use super::rows::{
    Args, LINK_COLUMNS, SUMMARY_COLUMNS, filter_sql, link_at, not_found, summary_at, version_at,
};
use crate::MemoryError;
use crate::model::{CodeKey, CodeLink, EntityInfo, Memory, MemorySummary, Relationship, Version};
use crate::store::{EntityEdge, Filter, StoreStats};

/// The id of `name` in `ns`.
fn find_id(db: &mut impl GenericClient, c: &Ctx, ns: &str, name: &str) -> Result<i64, MemoryError> {
    db.query_opt(
        "SELECT id FROM memories WHERE scope = $1 AND namespace = $2 AND name = $3",
        &[&c.scope, &ns, &name],
    )
    .db(c)?
    .ok_or_else(|| not_found(ns, name))?
    .try_get(0)
    .db(c)
}

/// Rows of `sql` (taking `args`) as values.
fn rows<T>(
    db: &mut impl GenericClient,
    c: &Ctx,
    sql: &str,
    args: &Args,
    each: impl Fn(&postgres::Row) -> Result<T, postgres::Error>,
) -> Result<Vec<T>, MemoryError> {
    db.query(sql, &args.refs())
        .db(c)?
        .iter()
        .map(each)
        .collect::<Result<_, _>>()
        .db(c)
}

/// A relationship from a row of `(source, target, relation, weight)`.
fn relationship_at(r: &postgres::Row) -> Result<Relationship, postgres::Error> {
    Ok(Relationship {
        source: r.try_get(0)?,
        target: r.try_get(1)?,
        relation: r.try_get(2)?,
        weight: r.try_get(3)?,
    })
}

impl PgStore {
    pub(super) fn read_impl(&self, ns: &str, name: &str) -> Result<Memory, MemoryError> {
        self.read_tx(|tx, c| {
            let id = find_id(tx, c, ns, name)?;
            super::handle::memory_in(tx, c, id)
        })
    }

    pub(super) fn list_impl(
        &self,
        f: &Filter,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<MemorySummary>, u64), MemoryError> {
        self.read_tx(|tx, c| {
            let mut a = Args::default();
            let cond = filter_sql(&c.scope, f, &mut a);
            let total: i64 = tx
                .query_one(
                    &format!("SELECT count(*) FROM memories m WHERE {cond}"),
                    &a.refs(),
                )
                .db(c)?
                .try_get(0)
                .db(c)?;
            let lim = a.add(limit.min(i64::MAX as usize) as i64);
            let off = a.add(offset.min(i64::MAX as usize) as i64);
            let page = rows(
                tx,
                c,
                &format!(
                    "SELECT {SUMMARY_COLUMNS} FROM memories m WHERE {cond}
                     ORDER BY m.updated_at DESC, m.id DESC LIMIT {lim} OFFSET {off}"
                ),
                &a,
                summary_at,
            )?;
            Ok((page, total as u64))
        })
    }

    pub(super) fn history_impl(&self, ns: &str, name: &str) -> Result<Vec<Version>, MemoryError> {
        self.read_tx(|tx, c| {
            let id = find_id(tx, c, ns, name)?;
            let mut a = Args::default();
            a.add(id);
            rows(
                tx,
                c,
                "SELECT version, op, name, type, description, body, metadata, at, deleted
                 FROM memory_versions WHERE memory_id = $1 ORDER BY version",
                &a,
                version_at,
            )
        })
    }

    pub(super) fn entities_impl(&self, ns: &str) -> Result<Vec<EntityInfo>, MemoryError> {
        let mut client = self.client()?;
        entity_rows(&mut *client, &self.ctx, ns, None)
    }

    pub(super) fn relationships_impl(&self, ns: &str) -> Result<Vec<Relationship>, MemoryError> {
        let c = &self.ctx;
        let mut a = Args::default();
        a.add(c.scope.clone());
        a.add(ns.to_string());
        rows(
            &mut *self.client()?,
            c,
            "SELECT s.name, t.name, r.relation, r.weight FROM relationships r
             JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id
             WHERE r.scope = $1 AND r.namespace = $2
             ORDER BY s.name COLLATE \"C\", t.name COLLATE \"C\", r.relation COLLATE \"C\"",
            &a,
            relationship_at,
        )
    }

    /// The names go as one array, lower-cased by the server as `entities_name`'s
    /// expression (`scope, namespace, lower(name)`) is, so `e` is that index's lookups;
    /// each one's relationships are the `(source_id, target_id, relation)` key's range.
    pub(super) fn relationships_among_impl(
        &self,
        ns: &str,
        entities: &[String],
        limit: usize,
    ) -> Result<Vec<Relationship>, MemoryError> {
        if !crate::store::among_wanted(entities, limit)? {
            return Ok(Vec::new());
        }
        let c = &self.ctx;
        let mut a = Args::default();
        a.add(c.scope.clone());
        a.add(ns.to_string());
        a.add(entities.to_vec());
        a.add(i64::try_from(limit).unwrap_or(i64::MAX));
        rows(
            &mut *self.client()?,
            c,
            "WITH e AS MATERIALIZED (
               SELECT x.id, x.name FROM entities x
               WHERE x.scope = $1 AND x.namespace = $2
                 AND lower(x.name) = ANY (ARRAY(SELECT lower(n) FROM unnest($3::text[]) n)))
             SELECT s.name, t.name, r.relation, r.weight
             FROM e s JOIN relationships r ON r.source_id = s.id
             JOIN e t ON t.id = r.target_id
             WHERE r.scope = $1
             ORDER BY s.name COLLATE \"C\", t.name COLLATE \"C\", r.relation COLLATE \"C\"
             LIMIT $4",
            &a,
            relationship_at,
        )
    }

    pub(super) fn namespaces_impl(&self) -> Result<Vec<String>, MemoryError> {
        let c = &self.ctx;
        self.client()?
            .query(
                "SELECT DISTINCT namespace FROM memories WHERE scope = $1 ORDER BY namespace",
                &[&c.scope],
            )
            .db(c)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .db(c)
    }

    pub(super) fn stats_impl(&self, ns: Option<&str>) -> Result<StoreStats, MemoryError> {
        self.read_tx(|tx, c| {
            let mut count = |sql: &str| -> Result<u64, MemoryError> {
                let n: i64 = tx
                    .query_one(sql, &[&c.scope, &ns])
                    .db(c)?
                    .try_get(0)
                    .db(c)?;
                Ok(n as u64)
            };
            const IN_NS: &str = "m.scope = $1 AND ($2::text IS NULL OR m.namespace = $2)";
            let mut s = StoreStats {
                memories: count(&format!(
                    "SELECT count(*) FROM memories m WHERE {IN_NS} AND m.deleted_at IS NULL"
                ))?,
                forgotten: count(&format!(
                    "SELECT count(*) FROM memories m WHERE {IN_NS} AND m.deleted_at IS NOT NULL"
                ))?,
                versions: count(&format!(
                    "SELECT count(*) FROM memory_versions v JOIN memories m ON m.id = v.memory_id WHERE {IN_NS}"
                ))?,
                chunks: count(&format!(
                    "SELECT count(*) FROM chunks x JOIN memories m ON m.id = x.memory_id WHERE {IN_NS}"
                ))?,
                embedded_chunks: count(&format!(
                    "SELECT count(DISTINCT (x.memory_id, x.seq)) FROM embeddings x
                     JOIN memories m ON m.id = x.memory_id WHERE {IN_NS}"
                ))?,
                entities: count(
                    "SELECT count(*) FROM entities m WHERE m.scope = $1 AND ($2::text IS NULL OR m.namespace = $2)",
                )?,
                relationships: count(
                    "SELECT count(*) FROM relationships m WHERE m.scope = $1 AND ($2::text IS NULL OR m.namespace = $2)",
                )?,
                code_links: count(&format!(
                    "SELECT count(*) FROM code_links x JOIN memories m ON m.id = x.memory_id WHERE {IN_NS}"
                ))?,
                extraction_failed: count(&format!(
                    "SELECT count(*) FROM memories m WHERE {IN_NS} AND m.deleted_at IS NULL
                       AND m.extraction ->> 'state' = 'failed'"
                ))?,
                ..StoreStats::default()
            };
            let counts = |r: &postgres::Row| -> Result<(String, u64), postgres::Error> {
                Ok((r.try_get(0)?, r.try_get::<_, i64>(1)? as u64))
            };
            s.types = tx
                .query(
                    &format!(
                        "SELECT m.type, count(*) FROM memories m WHERE {IN_NS} AND m.deleted_at IS NULL
                         GROUP BY m.type"
                    ),
                    &[&c.scope, &ns],
                )
                .db(c)?
                .iter()
                .map(counts)
                .collect::<Result<_, _>>()
                .db(c)?;
            s.namespaces = tx
                .query(
                    "SELECT namespace, count(*) FROM memories WHERE scope = $1 AND deleted_at IS NULL
                     GROUP BY namespace",
                    &[&c.scope],
                )
                .db(c)?
                .iter()
                .map(counts)
                .collect::<Result<_, _>>()
                .db(c)?;
            Ok(s)
        })
    }

    pub(super) fn entities_named_impl(
        &self,
        ns: &str,
        words: &[String],
    ) -> Result<Vec<(i64, String)>, MemoryError> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let c = &self.ctx;
        let mut a = Args::default();
        a.add(c.scope.clone());
        a.add(ns.to_string());
        a.add(words.to_vec());
        rows(
            &mut *self.client()?,
            c,
            "SELECT x.id, x.name FROM entities x WHERE x.scope = $1 AND x.namespace = $2
               AND (lower(x.name) = ANY($3)
                    OR EXISTS (SELECT 1 FROM unnest(x.aliases) a WHERE lower(a) = ANY($3)))",
            &a,
            |r| Ok((r.try_get(0)?, r.try_get(1)?)),
        )
    }

    /// The rows of `sql` (its `$1` the memory or entity ids `ids`, its `$2` this
    /// store's scope), each made by `each`; none without a query when `ids` is empty.
    fn rows_of_ids<T>(
        &self,
        ids: &[i64],
        sql: &str,
        each: impl Fn(&postgres::Row) -> Result<T, postgres::Error>,
    ) -> Result<Vec<T>, MemoryError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let c = &self.ctx;
        let mut a = Args::default();
        a.add(ids.to_vec());
        a.add(c.scope.clone());
        rows(&mut *self.client()?, c, sql, &a, each)
    }

    pub(super) fn entity_edges_impl(&self, ids: &[i64]) -> Result<Vec<EntityEdge>, MemoryError> {
        self.rows_of_ids(
            ids,
            "SELECT r.source_id, r.target_id, t.name, r.relation, r.weight FROM relationships r
               JOIN entities t ON t.id = r.target_id WHERE r.source_id = ANY($1) AND r.scope = $2
             UNION ALL
             SELECT r.target_id, r.source_id, s.name, r.relation, r.weight FROM relationships r
               JOIN entities s ON s.id = r.source_id WHERE r.target_id = ANY($1) AND r.scope = $2",
            |r| {
                Ok(EntityEdge {
                    from: r.try_get(0)?,
                    to: r.try_get(1)?,
                    to_name: r.try_get(2)?,
                    relation: r.try_get(3)?,
                    weight: r.try_get(4)?,
                })
            },
        )
    }

    pub(super) fn memories_of_entities_impl(
        &self,
        f: &Filter,
        ids: &[i64],
    ) -> Result<Vec<(i64, i64)>, MemoryError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let c = &self.ctx;
        let mut a = Args::default();
        let ent = a.add(ids.to_vec());
        let cond = filter_sql(&c.scope, f, &mut a);
        rows(
            &mut *self.client()?,
            c,
            &format!(
                "SELECT me.memory_id, me.entity_id FROM memory_entities me JOIN memories m ON m.id = me.memory_id
                 WHERE me.entity_id = ANY({ent}) AND {cond} ORDER BY m.updated_at DESC LIMIT 500"
            ),
            &a,
            |r| Ok((r.try_get(0)?, r.try_get(1)?)),
        )
    }

    pub(super) fn entities_of_memories_impl(
        &self,
        ids: &[i64],
    ) -> Result<Vec<(i64, i64, String)>, MemoryError> {
        self.rows_of_ids(
            ids,
            "SELECT me.memory_id, x.id, x.name FROM memory_entities me JOIN entities x ON x.id = me.entity_id
             WHERE me.memory_id = ANY($1) AND me.scope = $2",
            |r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)),
        )
    }

    pub(super) fn memories_linked_to_impl(
        &self,
        f: &Filter,
        keys: &[CodeKey],
        paths: &[String],
    ) -> Result<Vec<(i64, CodeKey)>, MemoryError> {
        let c = &self.ctx;
        let mut client = self.client()?;
        let mut out = Vec::new();
        let mut run = |matching: &dyn Fn(&mut Args) -> String| -> Result<(), MemoryError> {
            let mut a = Args::default();
            let m = matching(&mut a);
            let cond = filter_sql(&c.scope, f, &mut a);
            out.extend(rows(
                &mut *client,
                c,
                &format!(
                    "SELECT l.memory_id, l.path, l.qualified_name, l.kind FROM code_links l
                     JOIN memories m ON m.id = l.memory_id WHERE {m} AND {cond}"
                ),
                &a,
                |r| {
                    Ok((
                        r.try_get(0)?,
                        CodeKey {
                            path: r.try_get(1)?,
                            qualified_name: r.try_get(2)?,
                            kind: r.try_get(3)?,
                        },
                    ))
                },
            )?);
            Ok(())
        };
        for k in keys {
            run(&|a: &mut Args| {
                format!(
                    "l.path = {} AND l.qualified_name = {} AND l.kind = {}",
                    a.add(k.path.clone()),
                    a.add(k.qualified_name.clone()),
                    a.add(k.kind.clone())
                )
            })?;
        }
        for p in paths {
            run(&|a: &mut Args| format!("l.path = {}", a.add(p.clone())))?;
        }
        Ok(out)
    }

    pub(super) fn links_of_impl(&self, ids: &[i64]) -> Result<Vec<(i64, CodeLink)>, MemoryError> {
        let cols = LINK_COLUMNS;
        self.rows_of_ids(
            ids,
            &format!(
                "SELECT memory_id, {cols} FROM code_links WHERE memory_id = ANY($1) AND scope = $2
                 ORDER BY path COLLATE \"C\", qualified_name COLLATE \"C\""
            ),
            |r| Ok((r.try_get(0)?, link_at(r, 1)?)),
        )
    }

    pub(super) fn summaries_impl(&self, ids: &[i64]) -> Result<Vec<MemorySummary>, MemoryError> {
        self.rows_of_ids(
            ids,
            &format!(
                "SELECT {SUMMARY_COLUMNS} FROM memories m WHERE m.id = ANY($1) AND m.scope = $2"
            ),
            summary_at,
        )
    }

    pub(super) fn bodies_impl(&self, ids: &[i64]) -> Result<Vec<(i64, String)>, MemoryError> {
        self.rows_of_ids(
            ids,
            "SELECT m.id, m.body FROM memories m WHERE m.id = ANY($1) AND m.scope = $2",
            |r| Ok((r.try_get(0)?, r.try_get(1)?)),
        )
    }
}
