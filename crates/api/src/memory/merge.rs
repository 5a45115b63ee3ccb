//! `memory merge FROM INTO`: two memories that say the same thing become one, within a
//! namespace. INTO takes FROM's body (appended after a blank line, unless INTO already
//! holds it), the union of their entities, relationships and code links, and FROM is
//! forgotten with `metadata.merged_into` naming INTO. Both get a `merge` version:
//! `restore FROM` brings it back, `restore INTO N` brings INTO's earlier body back.

use loci_memory::merge::MergeView;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Ctx, StoreTarget, ns, vectors};
use crate::error::ApiError;

/// `memory merge`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeMemoriesRequest {
    /// The namespace of both (default `default`): a merge stays within one.
    #[serde(default)]
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// The memory folded away (forgotten after, restorable).
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 200))]
    pub from: String,
    /// The memory kept.
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 200))]
    pub into: String,
}

/// Merges memory `from` into `into` (a version of each); INTO's new chunks get their
/// vectors as after any write.
pub fn merge(target: &StoreTarget, req: &MergeMemoriesRequest) -> Result<MergeView, ApiError> {
    let mut c = Ctx::open(target)?;
    let have = c.have_index();
    let n = ns(target, &req.namespace)?;
    let mut view =
        loci_memory::merge::merge(&mut *c.store, &c.code, have, &n, &req.from, &req.into)?;
    view.into.vectors = Some(vectors::after_write(
        &mut *c.store,
        &c.location,
        view.into.memory.id,
    ));
    Ok(view)
}
