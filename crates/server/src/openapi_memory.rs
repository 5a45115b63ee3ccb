//! The memory's routes in the OpenAPI document: their operations and the schemas of
//! their requests and answers (`Memory...`), kept beside the generic document builder.

use schemars::SchemaGenerator;

use crate::openapi_operation::{Operation, op};

/// The memory routes, one `POST .../memory/{op}` each.
pub const MEMORY_OPERATIONS: &[Operation] = &[
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/remember",
        "memory_remember",
        "Stores a memory with its entities, relationships and code links (a body over 512 KiB is too_long; a taken name is name_taken).",
        Some("MemoryRememberRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/recall",
        "memory_recall",
        "Hybrid recall (full text, vectors when installed, entity and code graph), each hit with why it ranked.",
        Some("MemoryRecallRequest"),
        "MemoryRecallAnswer",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/read",
        "memory_read",
        "One memory, its code links checked against the index now (stale when the code changed).",
        Some("MemoryNameRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/list",
        "memory_list",
        "Memories by namespace, type and time, a page at a time.",
        Some("MemoryListRequest"),
        "MemoryListAnswer",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/edit",
        "memory_edit",
        "Edits a memory; the previous text stays as a version.",
        Some("MemoryEditRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/rename",
        "memory_rename",
        "Renames a memory (a version).",
        Some("MemoryRenameRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/forget",
        "memory_forget",
        "Forgets a memory softly (restorable).",
        Some("MemoryNameRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/restore",
        "memory_restore",
        "Restores a forgotten memory, or an earlier version.",
        Some("MemoryRestoreRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/purge",
        "memory_purge",
        "Deletes a memory and its versions for good, only with {\"consent\": true} (else 409 consent_required, nothing touched).",
        Some("MemoryPurgeRequest"),
        "MemoryPurged",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/history",
        "memory_history",
        "Every version of a memory.",
        Some("MemoryNameRequest"),
        "MemoryHistory",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/link",
        "memory_link",
        "Links entities, relationships or code to a memory.",
        Some("MemoryLinkRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/unlink",
        "memory_unlink",
        "Removes an entity or code link from a memory.",
        Some("MemoryUnlinkRequest"),
        "MemoryView",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/merge",
        "memory_merge",
        "Merges memory `from` into `into` in one namespace: `into` takes its body, entities, relationships and code links; `from` is forgotten with metadata.merged_into (a version of each; restore undoes it).",
        Some("MemoryMergeRequest"),
        "MemoryMerged",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/related",
        "memory_related",
        "Memories near one in the entity graph, to a depth.",
        Some("MemoryRelatedRequest"),
        "MemoryRelated",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/entities",
        "memory_entities",
        "The entities of a namespace, with their degree.",
        Some("MemoryNamespaceRequest"),
        "MemoryEntities",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/entities/merge",
        "memory_entity_merge",
        "Merges entity `from` into `into` (its aliases and links move).",
        Some("MemoryEntityMergeRequest"),
        "MemoryEntity",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/entities/rename",
        "memory_entity_rename",
        "Renames an entity (`name` to `new_name`).",
        Some("MemoryRenameRequest"),
        "MemoryEntity",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/graph",
        "memory_graph",
        "The entity graph as json, dot or mermaid text.",
        Some("MemoryGraphRequest"),
        "MemoryGraphExport",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/stats",
        "memory_stats",
        "Counts of the memory store (no path).",
        Some("MemoryNamespaceRequest"),
        "MemoryStats",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/memory/enrich",
        "memory_enrich",
        "LLM extraction of stored memories' entities and relationships (capability memory.extract.llm: only when the server's llm.allowSpawn is on; a batch over llm.confirmTokens needs \"yes\": true; a failed memory is kept, marked extraction failed).",
        Some("MemoryEnrichRequest"),
        "MemoryEnrichAnswer",
    ),
];

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
        generator.root_schema_for::<loci_memory::recall::RecallAnswer>(),
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
        generator.root_schema_for::<loci_memory::EntityInfo>(),
    );
}
