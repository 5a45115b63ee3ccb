//! The memory's operations over HTTP, declared once: each one's path under
//! `.../memory/`, handler, operationId, request and answer schemas and summary. The
//! workspace store's and the user store's routers and their OpenAPI operations are
//! all expanded from this table, so a route cannot be served undocumented or
//! documented unserved.

/// Expands `$then!` with the table (after `$arg,` when given): one
/// `op, handler, operation_id, request_schema, answer_schema, summary;` per operation.
macro_rules! memory_operations {
    ($then:ident $(, $arg:expr)?) => {
        $then! { $($arg,)?
            "remember", remember, "memory_remember", Some("MemoryRememberRequest"), "MemoryView",
            "Stores a memory with its entities, relationships and code links (a body over 512 KiB is too_long; a taken name is name_taken).";
            "recall", recall, "memory_recall", Some("MemoryRecallRequest"), "MemoryRecallAnswer",
            "Hybrid recall (full text, vectors when installed, entity and code graph), each hit with why it ranked.";
            "read", read, "memory_read", Some("MemoryNameRequest"), "MemoryView",
            "One memory, its code links checked against the index now (stale when the code changed).";
            "list", list, "memory_list", Some("MemoryListRequest"), "MemoryListAnswer",
            "Memories by namespace, type and time, a page at a time.";
            "edit", edit, "memory_edit", Some("MemoryEditRequest"), "MemoryView",
            "Edits a memory; the previous text stays as a version.";
            "rename", rename, "memory_rename", Some("MemoryRenameRequest"), "MemoryView",
            "Renames a memory (a version).";
            "forget", forget, "memory_forget", Some("MemoryNameRequest"), "MemoryView",
            "Forgets a memory softly (restorable).";
            "restore", restore, "memory_restore", Some("MemoryRestoreRequest"), "MemoryView",
            "Restores a forgotten memory, or an earlier version.";
            "purge", purge, "memory_purge", Some("MemoryPurgeRequest"), "MemoryPurged",
            "Deletes a memory and its versions for good, only with {\"consent\": true} (else 409 consent_required, nothing touched).";
            "history", history, "memory_history", Some("MemoryNameRequest"), "MemoryHistory",
            "Every version of a memory.";
            "link", link, "memory_link", Some("MemoryLinkRequest"), "MemoryView",
            "Links entities, relationships or code to a memory.";
            "unlink", unlink, "memory_unlink", Some("MemoryUnlinkRequest"), "MemoryView",
            "Removes an entity or code link from a memory.";
            "merge", merge, "memory_merge", Some("MemoryMergeRequest"), "MemoryMerged",
            "Merges memory `from` into `into` in one namespace: `into` takes its body, entities, relationships and code links; `from` is forgotten with metadata.merged_into (a version of each; restore undoes it).";
            "related", related, "memory_related", Some("MemoryRelatedRequest"), "MemoryRelated",
            "Memories near one in the entity graph, to a depth.";
            "entities", entities, "memory_entities", Some("MemoryNamespaceRequest"), "MemoryEntities",
            "The entities of a namespace, with their degree.";
            "entities/merge", merge_entities, "memory_entity_merge", Some("MemoryEntityMergeRequest"), "MemoryEntity",
            "Merges entity `from` into `into` (its aliases and links move).";
            "entities/rename", rename_entity, "memory_entity_rename", Some("MemoryRenameRequest"), "MemoryEntity",
            "Renames an entity (`name` to `new_name`).";
            "graph", graph, "memory_graph", Some("MemoryGraphRequest"), "MemoryGraphExport",
            "The entity graph as json, dot or mermaid text.";
            "stats", stats, "memory_stats", Some("MemoryNamespaceRequest"), "MemoryStats",
            "Counts of the memory store (no path).";
            "enrich", enrich, "memory_enrich", Some("MemoryEnrichRequest"), "MemoryEnrichAnswer",
            "LLM extraction of stored memories' entities and relationships (capability memory.extract.llm: only when the server's llm.allowSpawn is on; a batch over llm.confirmTokens needs \"yes\": true; a failed memory is kept, marked extraction failed).";
        }
    };
}
pub(crate) use memory_operations;

/// A router with a `POST` route at `$path(op)` for each operation, served by the
/// handler of that name in the module that expands it (each module has the same set).
macro_rules! memory_router {
    ($path:expr, $($op:literal, $handler:ident, $id:literal, $request:expr, $answer:literal, $summary:literal;)*) => {
        axum::Router::new() $(.route(&$path($op), axum::routing::post($handler)))*
    };
}
pub(crate) use memory_router;

/// The workspace store's OpenAPI operations, one `POST /api/v1/workspaces/{id}/memory/{op}`
/// each.
macro_rules! memory_openapi {
    ($($op:literal, $handler:ident, $id:literal, $request:expr, $answer:literal, $summary:literal;)*) => {
        &[$($crate::openapi_operation::op(
            "post",
            concat!("/api/v1/workspaces/{id}/memory/", $op),
            $id,
            $summary,
            $request,
            $answer,
        )),*]
    };
}
pub(crate) use memory_openapi;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::openapi_memory::MEMORY_OPERATIONS;

    /// Each operation once: a path, an operationId and a schema for each, every schema
    /// one the document defines.
    #[test]
    fn each_operation_is_declared_once_with_defined_schemas() {
        let paths: BTreeSet<_> = MEMORY_OPERATIONS.iter().map(|o| o.path).collect();
        let ids: BTreeSet<_> = MEMORY_OPERATIONS.iter().map(|o| o.id).collect();
        assert_eq!(paths.len(), MEMORY_OPERATIONS.len());
        assert_eq!(ids.len(), MEMORY_OPERATIONS.len());
        assert!(paths.contains("/api/v1/workspaces/{id}/memory/entities/merge"));
        let mut defined = BTreeSet::new();
        let mut generator = schemars::SchemaGenerator::default();
        crate::openapi_memory::schemas(&mut generator, &mut |name, _| {
            defined.insert(name.to_string());
        });
        for o in MEMORY_OPERATIONS {
            for schema in o.request.into_iter().chain([o.response]) {
                assert!(
                    defined.contains(schema),
                    "{}: {schema} is not defined",
                    o.id
                );
            }
        }
    }
}
