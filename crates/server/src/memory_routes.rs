//! The memory of a workspace over HTTP: one `POST /api/v1/workspaces/{id}/memory/{op}`
//! per operation (remember, recall, read, list, edit, rename, forget, restore, purge,
//! history, link, unlink, merge, related, entities, entities/merge, entities/rename,
//! graph, stats), each taking its
//! `loci_api::memory` request as the JSON body. Each handler resolves the registry id to
//! the workspace, calls one `loci_api::memory` function on the blocking pool, and
//! answers; no absolute path leaves: errors are redacted, and `stats` drops the store's
//! path. The user-level store has the same operations at `POST /api/v1/memory/{op}`
//! ([`crate::memory_user_routes`]).

use std::path::PathBuf;

use axum::Router;
use axum::extract::{Extension, Path, State};
use loci_api::memory::{
    self as mem, EditRequest, EntitiesAnswer, GraphExport, HistoryAnswer, LinkRequest, ListAnswer,
    ListRequest, MemoryAccess, MemoryView, MergeMemoriesRequest, MergeRequest, MergeView,
    NameRequest, PurgeRequest, Purged, RecallRequest, RelatedAnswer, RelatedRequest,
    RememberRequest, RenameRequest, RestoreRequest, StoreTarget, UnlinkRequest,
};
use loci_api::vocab::memory::EntityInfo;
use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::body::Body;
use crate::handler::{PREFIX, id};
use crate::memory_operations::{memory_operations, memory_router};
use crate::reply::{HttpError, Reply};
use crate::state::Shared;

/// The fields of `MemoryStats` that hold absolute paths; the HTTP answer omits them.
pub const MEMORY_STATS_PATH_FIELDS: &[&str] = &["path"];

/// `POST .../memory/purge`: deleting for good needs consent in the body.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryPurgeRequest {
    /// The namespace (default `default`).
    #[serde(default)]
    #[schemars(regex(pattern = loci_api::vocab::memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// The memory's name.
    #[schemars(regex(pattern = loci_api::vocab::memory::NAME_PATTERN), length(max = 200))]
    pub name: String,
    /// Must be `true`: purging deletes the memory and every version of it. Without it
    /// the answer is 409 `consent_required` and nothing is touched.
    #[serde(default)]
    pub consent: bool,
}

/// `POST .../memory/entities` and `.../memory/stats`: a namespace, or every one.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryNamespaceRequest {
    /// The namespace (entities: default `default`; stats: every namespace).
    #[serde(default)]
    #[schemars(regex(pattern = loci_api::vocab::memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
}

/// `POST .../memory/graph`: the entity graph as text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryGraphRequest {
    /// The namespace (default `default`).
    #[serde(default)]
    #[schemars(regex(pattern = loci_api::vocab::memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// `json`, `dot` or `mermaid` (default `json`).
    #[serde(default)]
    #[schemars(regex(pattern = "^(json|dot|mermaid)$"))]
    pub format: Option<String>,
}

/// These routes, without layers.
pub fn router() -> Router<Shared> {
    let m = |op: &str| format!("{PREFIX}/workspaces/{{id}}/memory/{op}");
    memory_operations!(memory_router, m)
}

/// `memory/enrich`: a batch over the estimate's threshold needs `"yes": true` (there
/// is no one to ask).
async fn enrich(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<mem::EnrichRequest>,
) -> Reply<mem::EnrichAnswer> {
    Ok(axum::Json(
        on_memory(&s, &ws, access, move |t| {
            mem::enrich(t, &req, &mut |e: &mem::EnrichEstimate| !e.needs_consent)
        })
        .await?,
    ))
}

/// Runs `f` on the workspace `ws`'s memory within the request key's namespaces
/// (`access`), on the blocking pool, with the workspace's paths redacted from any error.
pub(crate) async fn on_memory<T: Send + 'static>(
    s: &Shared,
    ws: &str,
    access: MemoryAccess,
    f: impl FnOnce(&StoreTarget) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, HttpError> {
    let wid = id(ws)?;
    let state = s.clone();
    let joined = tokio::task::spawn_blocking(move || {
        let w = state.workspace(wid)?;
        let root: PathBuf = w.root().to_path_buf();
        let target = StoreTarget {
            workspace: root.clone(),
            user: false,
            access,
        };
        f(&target).map_err(|e| {
            loci_api::host::redact_paths(
                e,
                &root.to_string_lossy(),
                &w.index_path().to_string_lossy(),
            )
        })
    })
    .await;
    match joined {
        Ok(answer) => answer.map_err(HttpError),
        Err(e) => Err(HttpError(ApiError::new(ErrorKind::Internal, e.to_string()))),
    }
}

/// A request body that must be a JSON object (serde would also take a struct from an
/// array: `[null, null]` is not a request).
pub(crate) struct Object<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned> axum::extract::FromRequest<Shared> for Object<T> {
    type Rejection = HttpError;

    async fn from_request(req: axum::extract::Request, state: &Shared) -> Result<Self, HttpError> {
        let Body(value) = Body::<serde_json::Value>::from_request(req, state).await?;
        if !value.is_object() {
            return Err(HttpError(ApiError::new(
                ErrorKind::InvalidInput,
                "the request body is not a valid request: it must be a JSON object",
            )));
        }
        serde_json::from_value(value).map(Object).map_err(|e| {
            HttpError(ApiError::new(
                ErrorKind::InvalidInput,
                format!("the request body is not a valid request: {e}"),
            ))
        })
    }
}

macro_rules! handler {
    ($name:ident, $req:ty, $answer:ty, $call:path) => {
        async fn $name(
            State(s): State<Shared>,
            Path(ws): Path<String>,
            Extension(access): Extension<MemoryAccess>,
            Object(req): Object<$req>,
        ) -> Reply<$answer> {
            Ok(axum::Json(
                on_memory(&s, &ws, access, move |t| $call(t, &req)).await?,
            ))
        }
    };
}

/// The operations whose handler only calls the `loci_api::memory` function of the same
/// name, one list for both stores: `$handler` is the module's handler-making macro
/// (workspace or user store), given (handler name, request, answer, function).
macro_rules! plain_memory_ops {
    ($handler:ident) => {
        $handler!(remember, RememberRequest, MemoryView, mem::remember);
        $handler!(
            recall,
            RecallRequest,
            loci_api::vocab::memory::RecallAnswer,
            mem::recall
        );
        $handler!(read, NameRequest, MemoryView, mem::read);
        $handler!(list, ListRequest, ListAnswer, mem::list);
        $handler!(edit, EditRequest, MemoryView, mem::edit);
        $handler!(rename, RenameRequest, MemoryView, mem::rename);
        $handler!(forget, NameRequest, MemoryView, mem::forget);
        $handler!(restore, RestoreRequest, MemoryView, mem::restore);
        $handler!(history, NameRequest, HistoryAnswer, mem::history);
        $handler!(link, LinkRequest, MemoryView, mem::link);
        $handler!(unlink, UnlinkRequest, MemoryView, mem::unlink);
        $handler!(merge, MergeMemoriesRequest, MergeView, mem::merge);
        $handler!(related, RelatedRequest, RelatedAnswer, mem::related);
        $handler!(
            merge_entities,
            MergeRequest,
            EntityInfo,
            mem::merge_entities
        );
        $handler!(rename_entity, RenameRequest, EntityInfo, mem::rename_entity);
    };
}
pub(crate) use plain_memory_ops;

plain_memory_ops!(handler);

async fn purge(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryPurgeRequest>,
) -> Reply<Purged> {
    Ok(axum::Json(
        on_memory(&s, &ws, access, move |t| purge_with_consent(t, req)).await?,
    ))
}

/// `purge` with the consent the body carries (its hint names the HTTP way to give it).
pub(crate) fn purge_with_consent(
    t: &StoreTarget,
    req: MemoryPurgeRequest,
) -> Result<Purged, ApiError> {
    let call = PurgeRequest {
        name: NameRequest {
            namespace: req.namespace,
            name: req.name,
        },
        yes: req.consent,
    };
    mem::purge(t, &call).map_err(|mut e| {
        if e.kind == ErrorKind::ConsentRequired {
            e.hint = Some(
                "send {\"consent\": true} to purge, or POST .../memory/forget instead (restorable)"
                    .into(),
            );
        }
        e
    })
}

async fn entities(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryNamespaceRequest>,
) -> Reply<EntitiesAnswer> {
    let answer = on_memory(&s, &ws, access, move |t| mem::entities(t, &req.namespace)).await?;
    Ok(axum::Json(answer))
}

async fn graph(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryGraphRequest>,
) -> Reply<GraphExport> {
    let answer = on_memory(&s, &ws, access, move |t| {
        mem::graph_export(t, &req.namespace, req.format.as_deref().unwrap_or("json"))
    })
    .await?;
    Ok(axum::Json(answer))
}

async fn stats(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Extension(access): Extension<MemoryAccess>,
    Object(req): Object<MemoryNamespaceRequest>,
) -> Reply<serde_json::Value> {
    let answer = on_memory(&s, &ws, access, move |t| mem::stats(t, &req.namespace)).await?;
    Ok(axum::Json(without_paths(&answer)?))
}

/// The stats as JSON without the fields that hold absolute paths.
pub(crate) fn without_paths(answer: &mem::MemoryStats) -> Result<serde_json::Value, HttpError> {
    let mut value = serde_json::to_value(answer)
        .map_err(|e| HttpError(ApiError::new(ErrorKind::Internal, e.to_string())))?;
    if let Some(map) = value.as_object_mut() {
        for field in MEMORY_STATS_PATH_FIELDS {
            map.remove(*field);
        }
        // A repository named by a local `origin` path has a path for its scope.
        if let Some(store) = map.get_mut("store").and_then(|s| s.as_object_mut())
            && store
                .get("scope")
                .and_then(|s| s.as_str())
                .is_some_and(|s| s.starts_with('/'))
        {
            store.remove("scope");
        }
    }
    Ok(value)
}
