//! The memory's routes in the OpenAPI document: their operations and the schemas of
//! their requests and answers (`Memory...`), kept beside the generic document builder.

use schemars::SchemaGenerator;

use crate::memory_operations::{memory_openapi, memory_operations};
use crate::openapi_operation::Operation;

/// The memory routes, one `POST .../memory/{op}` each (from the one table in
/// [`crate::memory_operations`]).
pub const MEMORY_OPERATIONS: &[Operation] = memory_operations!(memory_openapi);

/// Adds the memory's schemas through `own` (name, root schema).
pub fn schemas(generator: &mut SchemaGenerator, own: &mut impl FnMut(&str, schemars::Schema)) {
    own(
        "MemoryRememberRequest",
        generator.root_schema_for::<loci_api::memory::RememberRequest>(),
    );
    own(
        "MemoryEnrichRequest",
        generator.root_schema_for::<loci_api::memory::EnrichRequest>(),
    );
    own(
        "MemoryEnrichAnswer",
        generator.root_schema_for::<loci_api::memory::EnrichAnswer>(),
    );
    own(
        "MemoryRecallRequest",
        generator.root_schema_for::<loci_api::memory::RecallRequest>(),
    );
    own(
        "MemoryRecallAnswer",
        generator.root_schema_for::<loci_api::vocab::memory::RecallAnswer>(),
    );
    own(
        "MemoryNameRequest",
        generator.root_schema_for::<loci_api::memory::NameRequest>(),
    );
    own(
        "MemoryListRequest",
        generator.root_schema_for::<loci_api::memory::ListRequest>(),
    );
    own(
        "MemoryListAnswer",
        generator.root_schema_for::<loci_api::memory::ListAnswer>(),
    );
    own(
        "MemoryEditRequest",
        generator.root_schema_for::<loci_api::memory::EditRequest>(),
    );
    own(
        "MemoryRenameRequest",
        generator.root_schema_for::<loci_api::memory::RenameRequest>(),
    );
    own(
        "MemoryRestoreRequest",
        generator.root_schema_for::<loci_api::memory::RestoreRequest>(),
    );
    own(
        "MemoryPurgeRequest",
        generator.root_schema_for::<crate::memory_routes::MemoryPurgeRequest>(),
    );
    own(
        "MemoryPurged",
        generator.root_schema_for::<loci_api::memory::Purged>(),
    );
    own(
        "MemoryHistory",
        generator.root_schema_for::<loci_api::memory::HistoryAnswer>(),
    );
    own(
        "MemoryLinkRequest",
        generator.root_schema_for::<loci_api::memory::LinkRequest>(),
    );
    own(
        "MemoryUnlinkRequest",
        generator.root_schema_for::<loci_api::memory::UnlinkRequest>(),
    );
    own(
        "MemoryRelatedRequest",
        generator.root_schema_for::<loci_api::memory::RelatedRequest>(),
    );
    own(
        "MemoryRelated",
        generator.root_schema_for::<loci_api::memory::RelatedAnswer>(),
    );
    own(
        "MemoryNamespaceRequest",
        generator.root_schema_for::<crate::memory_routes::MemoryNamespaceRequest>(),
    );
    own(
        "MemoryEntities",
        generator.root_schema_for::<loci_api::memory::EntitiesAnswer>(),
    );
    own(
        "MemoryGraphRequest",
        generator.root_schema_for::<crate::memory_routes::MemoryGraphRequest>(),
    );
    own(
        "MemoryGraphExport",
        generator.root_schema_for::<loci_api::memory::GraphExport>(),
    );
    own(
        "MemoryStats",
        generator.root_schema_for::<loci_api::memory::MemoryStats>(),
    );
    own(
        "MemoryView",
        generator.root_schema_for::<loci_api::memory::MemoryView>(),
    );
    own(
        "MemoryEntityMergeRequest",
        generator.root_schema_for::<loci_api::memory::MergeRequest>(),
    );
    own(
        "MemoryMergeRequest",
        generator.root_schema_for::<loci_api::memory::MergeMemoriesRequest>(),
    );
    own(
        "MemoryMerged",
        generator.root_schema_for::<loci_api::memory::MergeView>(),
    );
    own(
        "MemoryEntity",
        generator.root_schema_for::<loci_api::vocab::memory::EntityInfo>(),
    );
}
