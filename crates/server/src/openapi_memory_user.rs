//! The user store's routes in the OpenAPI document: each workspace memory operation
//! again at `POST /api/v1/memory/{op}` (operationId `user_` + the workspace one), with
//! the same request and answer schemas; derived from
//! [`crate::openapi_memory::MEMORY_OPERATIONS`] so the two lists cannot drift.

use std::sync::LazyLock;

use crate::openapi_memory::MEMORY_OPERATIONS;
use crate::openapi_operation::Operation;

const WORKSPACE_MEMORY: &str = "/api/v1/workspaces/{id}/memory/";

static USER_OPERATIONS: LazyLock<Vec<Operation>> = LazyLock::new(|| {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    MEMORY_OPERATIONS
        .iter()
        .map(|o| Operation {
            path: leak(o.path.replacen(
                WORKSPACE_MEMORY,
                &format!("{}/", crate::memory_user_routes::USER_MEMORY),
                1,
            )),
            id: leak(format!("user_{}", o.id)),
            summary: leak(format!("User-level store: {}", o.summary)),
            ..*o
        })
        .collect()
});

/// The user store's operations (built once, the first time the document is made).
pub fn user_operations() -> &'static [Operation] {
    &USER_OPERATIONS
}
