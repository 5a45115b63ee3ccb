//! An imported memory's history put back ([`crate::MemoryStore::replace_history`]): the
//! versions of an export file, with their clocks, instead of the one an import's
//! `create` wrote.

use rusqlite::params;

use super::handle::SqliteStore;
use super::write::{id_in, in_tx};
use crate::MemoryError;
use crate::model::Version;

impl SqliteStore {
    pub(crate) fn replace_history_impl(
        &mut self,
        ns: &str,
        name: &str,
        versions: &[Version],
    ) -> Result<(), MemoryError> {
        let (Some(first), Some(last)) = (versions.first(), versions.last()) else {
            return Ok(());
        };
        in_tx(self, |tx, e| {
            let (id, _) = id_in(tx, e, ns, name)?;
            tx.execute("DELETE FROM memory_versions WHERE memory_id = ?1", [id])
                .map_err(e)?;
            let mut insert = tx
                .prepare(
                    "INSERT INTO memory_versions
                     (memory_id, version, op, name, type, description, body, metadata, deleted, at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(e)?;
            for v in versions {
                insert
                    .execute(params![
                        id,
                        v.version,
                        v.op.name(),
                        v.name,
                        v.memory_type.name(),
                        v.description,
                        v.body,
                        v.metadata.to_string(),
                        v.deleted,
                        v.at
                    ])
                    .map_err(e)?;
            }
            // The memory's clocks are its history's; a forgotten one was forgotten at
            // its last version.
            tx.execute(
                "UPDATE memories SET version = ?2, created_at = ?3, updated_at = ?4,
                     deleted_at = CASE WHEN deleted_at IS NULL THEN NULL ELSE ?4 END
                 WHERE id = ?1",
                params![id, last.version, first.at, last.at],
            )
            .map_err(e)?;
            Ok(())
        })
    }
}
