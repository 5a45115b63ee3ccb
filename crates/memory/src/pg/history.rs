//! An imported memory's history put back ([`crate::MemoryStore::replace_history`]): the
//! versions of an export file, with their clocks, instead of the one an import's
//! `create` wrote.

use super::ctx::Db;
use super::handle::PgStore;
use super::nul;
use super::write::id_in;
use crate::MemoryError;
use crate::model::Version;

impl PgStore {
    pub(super) fn replace_history_impl(
        &mut self,
        ns: &str,
        name: &str,
        versions: &[Version],
    ) -> Result<(), MemoryError> {
        let (Some(first), Some(last)) = (versions.first(), versions.last()) else {
            return Ok(());
        };
        for v in versions {
            nul::text("a version's name", &v.name)?;
            nul::text("a version's description", &v.description)?;
            nul::text("a version's body", &v.body)?;
            nul::json("a version's metadata", &v.metadata)?;
        }
        let number = |v: &Version| i32::try_from(v.version).unwrap_or(i32::MAX);
        self.write(|tx, c| {
            let (id, _) = id_in(tx, c, ns, name)?;
            tx.execute("DELETE FROM memory_versions WHERE memory_id = $1", &[&id])
                .db(c)?;
            let insert = tx
                .prepare(
                    "INSERT INTO memory_versions
                     (scope, memory_id, version, op, name, type, description, body, metadata, deleted, at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                )
                .db(c)?;
            for v in versions {
                tx.execute(
                    &insert,
                    &[
                        &c.scope,
                        &id,
                        &number(v),
                        &v.op.name(),
                        &v.name,
                        &v.memory_type.name(),
                        &v.description,
                        &v.body,
                        &v.metadata,
                        &v.deleted,
                        &v.at,
                    ],
                )
                .db(c)?;
            }
            // The memory's clocks are its history's; a forgotten one was forgotten at
            // its last version.
            tx.execute(
                "UPDATE memories SET version = $2, created_at = $3, updated_at = $4,
                     deleted_at = CASE WHEN deleted_at IS NULL THEN NULL ELSE $4::bigint END
                 WHERE id = $1",
                &[&id, &number(last), &first.at, &last.at],
            )
            .db(c)?;
            Ok(())
        })
    }
}
