//! The routes that look after a workspace rather than read its graph: one workspace's
//! state (`GET /workspaces/{id}`), background runs (`index`, `sync`, `rebuild` with
//! consent, and `runs/{run}` for their progress), and the folder picker (`fs`). Each
//! handler converts, calls one `loci_api` function, converts back.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use loci_api::picker::{FsListing, FsRequest};
use loci_api::remote::WorkspaceDetail;
use loci_api::runs::{RunStarted, RunView};
use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::body::Body;
use crate::handler::PREFIX;
use crate::reply::{HttpError, Reply};
use crate::state::Shared;

/// `POST /api/v1/workspaces/{id}/rebuild`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebuildRequest {
    /// Must be `true`: rebuilding deletes the index and builds it again. Without it
    /// the answer is 409 `consent_required` and nothing is touched.
    #[serde(default)]
    pub consent: bool,
}

/// These routes, without layers.
pub fn router() -> Router<Shared> {
    let ws = |op: &str| format!("{PREFIX}/workspaces/{{id}}{op}");
    Router::new()
        .route(&ws(""), get(workspace))
        .route(&ws("/index"), post(index))
        .route(&ws("/sync"), post(sync))
        .route(&ws("/rebuild"), post(rebuild))
        .route(&ws("/runs/{run}"), get(run))
        .route(&format!("{PREFIX}/fs"), post(fs))
}

/// Runs `f` on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, HttpError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(answer) => answer.map_err(HttpError),
        Err(e) => Err(HttpError(ApiError::new(ErrorKind::Internal, e.to_string()))),
    }
}

fn integer<T: std::str::FromStr>(what: &str, raw: &str) -> Result<T, HttpError> {
    raw.parse::<T>().map_err(|_| {
        HttpError(
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("`{raw}` is not a {what} (an integer)"),
            )
            .hint("GET /api/v1/workspaces lists the workspaces and their ids"),
        )
    })
}

async fn workspace(Path(id): Path<String>) -> Reply<WorkspaceDetail> {
    let id = integer("workspace id", &id)?;
    Ok(axum::Json(
        blocking(move || loci_api::remote::describe(id)).await?,
    ))
}

type Accepted = Result<(StatusCode, axum::Json<RunStarted>), HttpError>;

async fn start(s: Shared, id: String, purpose: &'static str) -> Accepted {
    let id = integer("workspace id", &id)?;
    let runs = s.runs.clone();
    let started = blocking(move || runs.start(id, purpose)).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(started)))
}

async fn index(State(s): State<Shared>, Path(id): Path<String>) -> Accepted {
    start(s, id, "index").await
}

async fn sync(State(s): State<Shared>, Path(id): Path<String>) -> Accepted {
    start(s, id, "sync").await
}

async fn rebuild(
    State(s): State<Shared>,
    Path(id): Path<String>,
    Body(req): Body<RebuildRequest>,
) -> Accepted {
    let id = integer("workspace id", &id)?;
    let runs = s.runs.clone();
    let started = blocking(move || runs.rebuild(id, req.consent)).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(started)))
}

async fn run(State(s): State<Shared>, Path((id, run)): Path<(String, String)>) -> Reply<RunView> {
    let id = integer("workspace id", &id)?;
    let run = integer("run id", &run)?;
    Ok(axum::Json(s.runs.get(id, run)?))
}

async fn fs(Body(req): Body<FsRequest>) -> impl IntoResponse {
    let listed = blocking(move || {
        let roots = crate::create::roots()?;
        loci_api::picker::list(&roots, &req)
            .map_err(|e| loci_api::remote::redact_error(e, &loci_api::picker::root_paths(&roots)))
    })
    .await;
    listed.map(axum::Json::<FsListing>)
}
