//! The extraction record of a memory: set after a failed extraction (no new version:
//! the content did not change), and written with the entities and relationships of a
//! successful one in the same transaction as its `enrich` version.

use super::ctx::Db;
use super::handle::PgStore;
use super::write::{attach, bump, live_id};
use crate::MemoryError;
use crate::extract::{Extracted, Extraction};
use crate::model::{Memory, Operation};

/// The record as its `jsonb` column holds it.
fn to_column(x: &Extraction) -> serde_json::Value {
    serde_json::to_value(x).unwrap_or(serde_json::Value::Null)
}

impl PgStore {
    pub(super) fn set_extraction_impl(
        &mut self,
        ns: &str,
        name: &str,
        x: &Extraction,
    ) -> Result<Memory, MemoryError> {
        let record = to_column(x);
        let id = self.write(|tx, c| {
            let id = live_id(tx, c, ns, name)?;
            tx.execute(
                "UPDATE memories SET extraction = $2 WHERE id = $1",
                &[&id, &record],
            )
            .db(c)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }

    pub(super) fn enrich_impl(
        &mut self,
        ns: &str,
        name: &str,
        extracted: &Extracted,
        x: &Extraction,
    ) -> Result<Memory, MemoryError> {
        super::nul::graph(&extracted.entities, &extracted.relationships)?;
        let record = to_column(x);
        let id = self.write(|tx, c| {
            let id = live_id(tx, c, ns, name)?;
            attach(tx, c, ns, id, &extracted.entities, &extracted.relationships)?;
            tx.execute(
                "UPDATE memories SET extraction = $2 WHERE id = $1",
                &[&id, &record],
            )
            .db(c)?;
            bump(tx, c, id, Operation::Enrich)?;
            Ok(id)
        })?;
        self.memory_by_id(id)
    }
}
