//! The extraction record of a memory: set after a failed extraction (no new version:
//! the content did not change), and written with the entities and relationships of a
//! successful one in the same transaction as its `enrich` version.

use rusqlite::params;

use super::handle::SqliteStore;
use super::write::{attach, bump, in_tx, live_id};
use crate::MemoryError;
use crate::extract::{Extracted, Extraction};
use crate::model::{Memory, Operation};

/// Live memories (of a namespace, or all) whose last extraction failed.
pub(crate) const COUNT_FAILED: &str = "SELECT count(*) FROM memories
     WHERE (?1 IS NULL OR namespace = ?1) AND deleted_at IS NULL
       AND json_extract(extraction, '$.state') = 'failed'";

fn to_column(x: &Extraction) -> String {
    serde_json::to_string(x).unwrap_or_else(|_| "null".into())
}

impl SqliteStore {
    pub(crate) fn set_extraction_impl(
        &mut self,
        ns: &str,
        name: &str,
        x: &Extraction,
    ) -> Result<Memory, MemoryError> {
        let id = in_tx(self, |tx, e| {
            let id = live_id(tx, e, ns, name)?;
            tx.execute(
                "UPDATE memories SET extraction = ?2 WHERE id = ?1",
                params![id, to_column(x)],
            )
            .map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(crate) fn enrich_impl(
        &mut self,
        ns: &str,
        name: &str,
        extracted: &Extracted,
        x: &Extraction,
    ) -> Result<Memory, MemoryError> {
        let id = in_tx(self, |tx, e| {
            let id = live_id(tx, e, ns, name)?;
            attach(tx, e, ns, id, &extracted.entities, &extracted.relationships)?;
            tx.execute(
                "UPDATE memories SET extraction = ?2 WHERE id = ?1",
                params![id, to_column(x)],
            )
            .map_err(e)?;
            bump(tx, id, Operation::Enrich).map_err(e)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }
}
