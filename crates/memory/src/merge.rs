//! `merge`: two memories that say the same thing become one. The kept memory answers
//! with its links checked against the code now; the merged-away one is forgotten
//! (restorable) and points at the kept one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::code::CodeGraph;
use crate::model::MemorySummary;
use crate::ops::{self, MemoryView};
use crate::store::MemoryStore;

/// What a merge answers: the memory kept, and the one folded into it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MergeView {
    /// The kept memory (`into`) after the merge, its links checked.
    pub into: MemoryView,
    /// The merged-away memory (`from`): forgotten, its `merged_into` the kept one's name.
    pub from: MemorySummary,
    /// The kept memory's name, as `from`'s metadata records it.
    pub merged_into: String,
}

/// Merges `from` into `into` within `ns` (see [`MemoryStore::merge`]).
pub fn merge(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    ns: &str,
    from: &str,
    into: &str,
) -> Result<MergeView, MemoryError> {
    let (kept, gone) = store.merge(ns, from, into)?;
    let view = ops::read(store, code, have_index, ns, &kept.name)?;
    Ok(MergeView {
        into: view,
        from: MemorySummary {
            id: gone.id,
            namespace: gone.namespace,
            name: gone.name,
            memory_type: gone.memory_type,
            description: gone.description,
            version: gone.version,
            updated_at: gone.updated_at,
            deleted_at: gone.deleted_at,
            extraction: gone.extraction,
        },
        merged_into: kept.name,
    })
}
