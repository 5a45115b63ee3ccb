//! The routes. Every handler converts the request, calls one `loci_api` function on the
//! blocking pool and converts the answer back; none holds product logic.

use axum::Router;
use axum::extract::{Path, State};
use axum::routing::{delete, get, post};
use loci_api::changes::{ChangesAnswer, ChangesRequest};
use loci_api::graph::{
    self, Direction, FindRequest, OutlineRequest, RefsRequest, SearchRequest, SymbolRequest,
    TraversalRequest,
};
use loci_api::meaning::{MeaningPage, MeaningRequest};
use loci_api::{ApiError, ErrorKind};

use crate::answers::{
    Capabilities, Health, STATS_PATH_FIELDS, WorkspaceSummaries, WorkspaceSummary,
};
use crate::body::Body;
use crate::handler::{PREFIX, blocking, id};
use crate::reply::{HttpError, Reply};
use crate::state::Shared;

/// The capabilities this build implements (and nothing it does not).
pub const CAPABILITIES: &[&str] = &[
    "health",
    "openapi",
    "workspaces.list",
    "graph.read",
    "workspace.get",
    "workspace.maintain",
    "query.sql",
    "memory",
    "web",
];

/// The router, without its layers.
pub fn router() -> Router<Shared> {
    let ws = |op: &str| format!("{PREFIX}/workspaces/{{id}}/{op}");
    Router::new()
        .route("/health", get(health))
        .route(&format!("{PREFIX}/capabilities"), get(capabilities))
        .route(&format!("{PREFIX}/openapi.json"), get(openapi))
        .route(
            &format!("{PREFIX}/workspaces"),
            get(workspaces).post(create_workspace),
        )
        .route(&ws("find"), post(find))
        .route(&ws("def"), post(def))
        .route(&ws("refs"), post(refs))
        .route(&ws("callers"), post(callers))
        .route(&ws("callees"), post(callees))
        .route(&ws("impact"), post(impact))
        .route(&ws("changes"), post(changes))
        .route(&ws("outline"), post(outline))
        .route(&ws("search"), post(search))
        .route(&ws("search/meaning"), post(search_meaning))
        .route(&ws("stats"), get(stats))
        .merge(crate::workspace_routes::router())
        .merge(crate::memory_routes::router())
        .merge(crate::memory_user_routes::router())
        .merge(crate::web::router())
        .route(
            &ws("query"),
            post(crate::query::run).get(crate::query::in_flight),
        )
        .route(&ws("query/{qid}"), delete(crate::query::cancel))
        .route(
            crate::repositories::LIST_PATH,
            get(crate::repositories::list),
        )
        .route(
            crate::repositories::LOOKUP_PATH,
            get(crate::repositories::lookup),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> HttpError {
    HttpError(
        ApiError::new(
            ErrorKind::MethodNotAllowed,
            format!("{} does not take {method}", uri.path()),
        )
        .hint(format!(
            "the Allow header lists the methods it takes; GET {PREFIX}/openapi.json lists every route"
        )),
    )
}

/// How long `/health` waits for the memory database before reporting it unreachable.
const MEMORY_HEALTH_BUDGET: std::time::Duration = std::time::Duration::from_secs(3);
/// Memory checks running at once at most: `/health` needs no key, so a flood of it
/// must not open threads and connections without bound. A check holds one permit
/// until its thread ends, even past the answer's budget.
static CHECKS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// `GET /health`. The memory check runs on a thread of its own, not the blocking pool,
/// so `/health` answers while long reads hold every pool thread.
async fn health() -> axum::Json<Health> {
    let no_answer = || loci_api::memory::MemoryHealth::no_answer(MEMORY_HEALTH_BUDGET);
    let memory = match CHECKS.try_acquire() {
        Err(_) => no_answer(),
        Ok(permit) => {
            let (sent, got) = tokio::sync::oneshot::channel();
            // A thread that cannot be spawned drops the closure, and the permit with it.
            let _ = std::thread::Builder::new()
                .name("health-memory".into())
                .spawn(move || {
                    let _permit = permit;
                    let _ = sent.send(loci_api::memory::memory_health());
                });
            match tokio::time::timeout(MEMORY_HEALTH_BUDGET, got).await {
                Ok(Ok(memory)) => memory,
                Ok(Err(_)) | Err(_) => no_answer(),
            }
        }
    };
    let status = if memory.reachable { "ok" } else { "degraded" };
    axum::Json(Health {
        status: status.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        memory,
    })
}

async fn capabilities() -> Reply<Capabilities> {
    Ok(axum::Json(Capabilities {
        capabilities: capabilities_now().await?,
    }))
}

/// What this server offers now: what it implements, and `workspace.create` only while
/// a root is configured.
pub async fn capabilities_now() -> Result<Vec<String>, loci_api::ApiError> {
    let (create, clone, llm) = blocking(|| {
        Ok((
            crate::create::available(),
            crate::create::clone_available(),
            loci_api::memory::llm_spawns_allowed(),
        ))
    })
    .await
    .map_err(|e| e.0)?;
    let mut capabilities: Vec<String> = CAPABILITIES.iter().map(|c| c.to_string()).collect();
    if create {
        capabilities.push(WORKSPACE_CREATE.into());
        capabilities.push(FS_LIST.into());
    }
    if clone {
        capabilities.push(WORKSPACE_CLONE.into());
    }
    if llm {
        capabilities.push(loci_api::memory::LLM_CAPABILITY.into());
    }
    Ok(capabilities)
}

/// Declared only when a root is configured and `git` runs.
pub const WORKSPACE_CLONE: &str = "workspace.clone";
/// The folder picker: declared only when a root is configured to list.
pub const FS_LIST: &str = "fs.list";

/// Declared only when a root is configured to create under.
pub const WORKSPACE_CREATE: &str = "workspace.create";

async fn create_workspace(
    Body(req): Body<crate::create::CreateWorkspaceRequest>,
) -> Reply<crate::create::CreatedWorkspace> {
    let created = blocking(move || crate::create::create(&req)).await?;
    Ok(axum::Json(created))
}

async fn openapi() -> axum::Json<serde_json::Value> {
    axum::Json(crate::openapi::document())
}

async fn not_found(uri: axum::http::Uri) -> HttpError {
    HttpError(
        ApiError::new(ErrorKind::NotFound, format!("no route {}", uri.path()))
            .hint(format!("GET {PREFIX}/openapi.json lists every route")),
    )
}

async fn workspaces() -> Reply<WorkspaceSummaries> {
    let listed = blocking(loci_api::workspaces::list).await?;
    let workspaces = listed
        .workspaces
        .into_iter()
        .map(|e| WorkspaceSummary {
            id: e.id,
            name: std::path::Path::new(&e.root)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            locator: e.locator,
            project_id: e.project_id,
            files: e.files,
            symbols: e.symbols,
            last_indexed_at: e.last_indexed_at,
        })
        .collect();
    Ok(axum::Json(WorkspaceSummaries { workspaces }))
}

/// Over HTTP a file is named relative to the workspace root: the caller never knows,
/// and is never told, where the workspace lives.
fn relative_only(what: &str, value: &str) -> Result<(), HttpError> {
    if std::path::Path::new(value).is_absolute() {
        return Err(HttpError(
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("`{what}` is an absolute path; over HTTP, files are named relative to the workspace root"),
            )
            .hint("pass the path as the index stores it, e.g. `src/lib.rs`"),
        ));
    }
    Ok(())
}

async fn find(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<FindRequest>,
) -> Reply<graph::SymbolsPage> {
    let answer = s
        .read(id(&ws)?, move |w, o| graph::find(w, &req, o))
        .await?;
    Ok(axum::Json(answer))
}

async fn def(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<SymbolRequest>,
) -> Reply<graph::SymbolsPage> {
    let answer = s.read(id(&ws)?, move |w, o| graph::def(w, &req, o)).await?;
    Ok(axum::Json(answer))
}

async fn refs(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<RefsRequest>,
) -> Reply<graph::RefsPage> {
    let answer = s
        .read(id(&ws)?, move |w, o| graph::refs(w, &req, o))
        .await?;
    Ok(axum::Json(answer))
}

async fn traverse(
    s: Shared,
    ws: String,
    direction: Direction,
    req: TraversalRequest,
) -> Reply<graph::TraversalPage> {
    relative_only("target", &req.target)?;
    let answer = s
        .read(id(&ws)?, move |w, o| graph::traverse(w, direction, &req, o))
        .await?;
    Ok(axum::Json(answer))
}

async fn callers(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<TraversalRequest>,
) -> Reply<graph::TraversalPage> {
    traverse(s, ws, Direction::Callers, req).await
}

async fn callees(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<TraversalRequest>,
) -> Reply<graph::TraversalPage> {
    traverse(s, ws, Direction::Callees, req).await
}

async fn impact(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<TraversalRequest>,
) -> Reply<graph::TraversalPage> {
    traverse(s, ws, Direction::Impact, req).await
}

async fn changes(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<ChangesRequest>,
) -> Reply<ChangesAnswer> {
    let answer = s
        .read(id(&ws)?, move |w, o| loci_api::changes::changes(w, &req, o))
        .await?;
    Ok(axum::Json(answer))
}

async fn outline(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<OutlineRequest>,
) -> Reply<graph::OutlinePage> {
    relative_only("file", &req.file)?;
    let answer = s
        .read(id(&ws)?, move |w, o| graph::outline(w, &req, o))
        .await?;
    Ok(axum::Json(answer))
}

async fn search(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<SearchRequest>,
) -> Reply<graph::SearchPage> {
    let answer = s
        .read(id(&ws)?, move |w, o| graph::search(w, &req, o))
        .await?;
    Ok(axum::Json(answer))
}

async fn search_meaning(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<MeaningRequest>,
) -> Reply<MeaningPage> {
    let answer = s
        .read(id(&ws)?, move |w, o| loci_api::meaning::search(w, &req, o))
        .await?;
    Ok(axum::Json(answer))
}

async fn stats(State(s): State<Shared>, Path(ws): Path<String>) -> Reply<serde_json::Value> {
    let answer = s.read(id(&ws)?, graph::stats).await?;
    let mut value = serde_json::to_value(&answer)
        .map_err(|e| HttpError(ApiError::new(ErrorKind::Internal, e.to_string())))?;
    if let Some(map) = value.as_object_mut() {
        for field in STATS_PATH_FIELDS {
            map.remove(*field);
        }
    }
    Ok(axum::Json(value))
}
