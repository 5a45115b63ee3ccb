//! Entities as a whole: listed with their degrees, merged (memories, relationships and
//! aliases folded into the kept one, each memory touched getting a version) and renamed
//! (the old name kept as an alias).

use postgres::GenericClient;

use super::ctx::{Ctx, Db};
use super::handle::PgStore;
use super::write::{bump, find_entity};
use crate::MemoryError;
use crate::model::{EntityInfo, Operation, check_name};

/// The entities of `ns` (or the one named `name`, case-insensitively), by degree.
pub(super) fn entity_rows(
    db: &mut impl GenericClient,
    c: &Ctx,
    ns: &str,
    name: Option<&str>,
) -> Result<Vec<EntityInfo>, MemoryError> {
    db.query(
        "SELECT x.id, x.name, x.type, x.aliases,
            (SELECT count(*) FROM memory_entities me WHERE me.entity_id = x.id)
          + (SELECT count(*) FROM relationships r WHERE r.source_id = x.id OR r.target_id = x.id) AS degree
         FROM entities x
         WHERE x.scope = $1 AND x.namespace = $2 AND ($3::text IS NULL OR lower(x.name) = lower($3))
         ORDER BY degree DESC, x.name COLLATE \"C\"",
        &[&c.scope, &ns, &name],
    )
    .db(c)?
    .iter()
    .map(|r| {
        Ok(EntityInfo {
            id: r.try_get(0)?,
            name: r.try_get(1)?,
            entity_type: r.try_get(2)?,
            aliases: r.try_get(3)?,
            degree: r.try_get::<_, i64>(4)? as u64,
        })
    })
    .collect::<Result<_, postgres::Error>>()
    .db(c)
}

fn no_entity(ns: &str, name: &str) -> MemoryError {
    MemoryError::NotFound(format!("no entity named `{name}` in namespace `{ns}`"))
}

impl PgStore {
    pub(super) fn entity_info(&self, ns: &str, name: &str) -> Result<EntityInfo, MemoryError> {
        let mut client = self.client()?;
        entity_rows(&mut *client, &self.ctx, ns, Some(name))?
            .into_iter()
            .next()
            .ok_or_else(|| no_entity(ns, name))
    }

    pub(super) fn merge_entities_impl(
        &mut self,
        ns: &str,
        from: &str,
        into: &str,
    ) -> Result<EntityInfo, MemoryError> {
        self.write(|tx, c| {
            let (fid, fname, faliases) =
                find_entity(tx, c, ns, from)?.ok_or_else(|| no_entity(ns, from))?;
            let (iid, _, mut ialiases) =
                find_entity(tx, c, ns, into)?.ok_or_else(|| no_entity(ns, into))?;
            if fid == iid {
                return Err(MemoryError::Invalid(format!(
                    "`{from}` and `{into}` are the same entity"
                )));
            }
            let touched: Vec<i64> = tx
                .query(
                    "SELECT memory_id FROM memory_entities WHERE entity_id = $1 ORDER BY memory_id",
                    &[&fid],
                )
                .db(c)?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()
                .db(c)?;
            // What would duplicate a row `into` already has stays on `from` and goes
            // with it (SQLite's `UPDATE OR IGNORE`, then the cascade).
            for sql in [
                "INSERT INTO memory_entities (scope, memory_id, entity_id)
                 SELECT scope, memory_id, $2 FROM memory_entities WHERE entity_id = $1
                 ON CONFLICT DO NOTHING",
                "UPDATE relationships r SET source_id = $2 WHERE r.source_id = $1 AND NOT EXISTS
                 (SELECT 1 FROM relationships o WHERE o.source_id = $2 AND o.target_id = r.target_id AND o.relation = r.relation)",
                "UPDATE relationships r SET target_id = $2 WHERE r.target_id = $1 AND NOT EXISTS
                 (SELECT 1 FROM relationships o WHERE o.target_id = $2 AND o.source_id = r.source_id AND o.relation = r.relation)",
            ] {
                tx.execute(sql, &[&fid, &iid]).db(c)?;
            }
            for a in std::iter::once(fname).chain(faliases) {
                if !ialiases.iter().any(|h| h.eq_ignore_ascii_case(&a)) {
                    ialiases.push(a);
                }
            }
            tx.execute(
                "UPDATE entities SET aliases = $2 WHERE id = $1",
                &[&iid, &ialiases],
            )
            .db(c)?;
            tx.execute("DELETE FROM entities WHERE id = $1", &[&fid])
                .db(c)?;
            for m in &touched {
                bump(tx, c, *m, Operation::Link)?;
            }
            Ok(())
        })?;
        self.entity_info(ns, into)
    }

    pub(super) fn rename_entity_impl(
        &mut self,
        ns: &str,
        name: &str,
        new_name: &str,
    ) -> Result<EntityInfo, MemoryError> {
        check_name("entity", new_name)?;
        self.write(|tx, c| {
            let (id, old, mut aliases) =
                find_entity(tx, c, ns, name)?.ok_or_else(|| no_entity(ns, name))?;
            let clash = tx
                .query_opt(
                    "SELECT id FROM entities WHERE scope = $1 AND namespace = $2
                     AND lower(name) = lower($3) AND id <> $4",
                    &[&c.scope, &ns, &new_name, &id],
                )
                .db(c)?;
            if clash.is_some() {
                return Err(MemoryError::Invalid(format!(
                    "an entity named `{new_name}` already exists in namespace `{ns}`; merge them with `loci memory entities merge {name} {new_name}`"
                )));
            }
            if !aliases.iter().any(|a| a.eq_ignore_ascii_case(&old)) {
                aliases.push(old);
            }
            tx.execute(
                "UPDATE entities SET name = $2, aliases = $3 WHERE id = $1",
                &[&id, &new_name, &aliases],
            )
            .db(c)?;
            Ok(())
        })?;
        self.entity_info(ns, new_name)
    }
}
