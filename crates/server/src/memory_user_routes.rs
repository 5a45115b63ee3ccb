//! The user-level memory store over HTTP: the same operations as a workspace's
//! memory, at `POST /api/v1/memory/{op}` (no workspace id: the store is the user's,
//! `memory.db` beside the registry, for notes that span workspaces; it has no code
//! graph, so its memories hold no code links). Each handler calls the same
//! `loci_api::memory` function with the user store as its target; the store's
//! directory is redacted from any error and `stats` drops its path, so no absolute
//! path leaves.

use axum::Router;
use axum::extract::{Extension, State};
use loci_api::memory::{
    self as mem, EditRequest, EntitiesAnswer, GraphExport, HistoryAnswer, LinkRequest, ListAnswer,
    ListRequest, MemoryAccess, MemoryView, MergeMemoriesRequest, MergeRequest, MergeView,
    NameRequest, Purged, RecallRequest, RelatedAnswer, RelatedRequest, RememberRequest,
    RenameRequest, RestoreRequest, StoreTarget, UnlinkRequest,
};
use loci_api::vocab::memory::EntityInfo;
use loci_api::{ApiError, ErrorKind};

use crate::handler::PREFIX;
use crate::memory_operations::{memory_operations, memory_router};
use crate::memory_routes::{
    MemoryGraphRequest, MemoryNamespaceRequest, MemoryPurgeRequest, Object, plain_memory_ops,
    purge_with_consent, without_paths,
};
use crate::reply::{HttpError, Reply};
use crate::state::Shared;

/// The prefix of the user store's routes (`{PREFIX}/memory/{op}`).
pub const USER_MEMORY: &str = "/api/v1/memory";

/// These routes, without layers.
pub fn router() -> Router<Shared> {
    debug_assert!(USER_MEMORY.starts_with(PREFIX));
    let m = |op: &str| format!("{USER_MEMORY}/{op}");
    memory_operations!(memory_router, m)
}

/// `memory/enrich` on the user store: a batch over the estimate's threshold needs
/// `"yes": true` (there is no one to ask).
async fn enrich(
    State(_): State<Shared>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<mem::EnrichRequest>,
) -> Reply<mem::EnrichAnswer> {
    Ok(axum::Json(
        on_user_memory(access, move |t| {
            mem::enrich(t, &req, &mut |e: &mem::EnrichEstimate| !e.needs_consent)
        })
        .await?,
    ))
}

/// Runs `f` on the user store within the request key's namespaces (`access`), on the
/// blocking pool, its directory redacted from any error.
async fn on_user_memory<T: Send + 'static>(
    access: MemoryAccess,
    f: impl FnOnce(&StoreTarget) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, HttpError> {
    let joined = tokio::task::spawn_blocking(move || {
        let target = StoreTarget {
            workspace: std::path::PathBuf::from("."),
            user: true,
            access,
        };
        let dir = mem::user_store_path()
            .ok()
            .and_then(|p| p.parent().map(|d| d.to_string_lossy().into_owned()))
            .unwrap_or_default();
        f(&target).map_err(|e| loci_api::remote::redact_error(e, &[(dir.clone(), "<user-store>")]))
    })
    .await;
    match joined {
        Ok(answer) => answer.map_err(HttpError),
        Err(e) => Err(HttpError(ApiError::new(ErrorKind::Internal, e.to_string()))),
    }
}

macro_rules! user_handler {
    ($name:ident, $req:ty, $answer:ty, $call:path) => {
        async fn $name(
            State(_): State<Shared>,
            Extension(access): Extension<MemoryAccess>,
            Object(req): Object<$req>,
        ) -> Reply<$answer> {
            Ok(axum::Json(
                on_user_memory(access, move |t| $call(t, &req)).await?,
            ))
        }
    };
}

plain_memory_ops!(user_handler);

async fn purge(
    State(_): State<Shared>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryPurgeRequest>,
) -> Reply<Purged> {
    Ok(axum::Json(
        on_user_memory(access, move |t| purge_with_consent(t, req)).await?,
    ))
}

async fn entities(
    State(_): State<Shared>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryNamespaceRequest>,
) -> Reply<EntitiesAnswer> {
    Ok(axum::Json(
        on_user_memory(access, move |t| mem::entities(t, &req.namespace)).await?,
    ))
}

async fn graph(
    State(_): State<Shared>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryGraphRequest>,
) -> Reply<GraphExport> {
    Ok(axum::Json(
        on_user_memory(access, move |t| {
            mem::graph_export(t, &req.namespace, req.format.as_deref().unwrap_or("json"))
        })
        .await?,
    ))
}

async fn stats(
    State(_): State<Shared>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryNamespaceRequest>,
) -> Reply<serde_json::Value> {
    let answer = on_user_memory(access, move |t| mem::stats(t, &req.namespace)).await?;
    Ok(axum::Json(without_paths(&answer)?))
}
