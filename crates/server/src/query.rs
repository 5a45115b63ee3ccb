//! `POST /api/v1/workspaces/{id}/query` and `DELETE /api/v1/workspaces/{id}/query/{qid}`:
//! user SQL through the workspace's killable worker (`loci_api::sql_service`). A request
//! whose client goes away (disconnect, the request deadline) is cancelled: its
//! [`CancelGuard`] lives in the handler's future, which axum drops.

use axum::extract::{Path, State};
use loci_api::sql_service::{CancelAnswer, CancelGuard, QueriesInFlight, SqlAnswer, SqlRequest};
use loci_api::{ApiError, ErrorKind};

use crate::body::Body;
use crate::handler::id;
use crate::reply::{HttpError, Reply};
use loci_api::host::redact_paths;

use crate::state::Shared;

/// Runs one read-only statement in the workspace's worker.
pub async fn run(
    State(s): State<Shared>,
    Path(ws): Path<String>,
    Body(req): Body<SqlRequest>,
) -> Reply<SqlAnswer> {
    let ws = id(&ws)?;
    let prepared = s.sql.prepare(&req)?;
    let guard = CancelGuard::new(s.sql.clone(), prepared.query_id());
    let state = s.clone();
    let joined = tokio::task::spawn_blocking(move || {
        let w = state.workspace(ws)?;
        state
            .sql
            .execute(w.index_path(), prepared)
            .map_err(|e| scrub(e, &w))
    })
    .await;
    guard.disarm();
    match joined {
        Ok(answer) => Ok(axum::Json(answer?)),
        Err(e) => Err(HttpError(ApiError::new(
            ErrorKind::Internal,
            format!("the query of workspace {ws} failed: {e}"),
        ))),
    }
}

/// Cancels query `qid` of the workspace: removed when queued, killed when running.
pub async fn cancel(
    State(s): State<Shared>,
    Path((ws, qid)): Path<(String, String)>,
) -> Reply<CancelAnswer> {
    let ws = id(&ws)?;
    let state = s.clone();
    let joined = tokio::task::spawn_blocking(move || {
        let w = state.workspace(ws)?;
        state
            .sql
            .cancel(w.index_path(), &qid)
            .map_err(|e| scrub(e, &w))
    })
    .await;
    match joined {
        Ok(answer) => Ok(axum::Json(answer?)),
        Err(e) => Err(HttpError(ApiError::new(
            ErrorKind::Internal,
            format!("the cancel in workspace {ws} failed: {e}"),
        ))),
    }
}

/// The workspace's running and queued queries, by id.
pub async fn in_flight(State(s): State<Shared>, Path(ws): Path<String>) -> Reply<QueriesInFlight> {
    let ws = id(&ws)?;
    let state = s.clone();
    let joined = tokio::task::spawn_blocking(move || {
        let w = state.workspace(ws)?;
        Ok::<_, ApiError>(state.sql.in_flight(w.index_path()))
    })
    .await;
    match joined {
        Ok(answer) => Ok(axum::Json(answer?)),
        Err(e) => Err(HttpError(ApiError::new(ErrorKind::Internal, e.to_string()))),
    }
}

fn scrub(e: ApiError, w: &loci_api::Workspace) -> ApiError {
    redact_paths(
        e,
        &w.root().to_string_lossy(),
        &w.index_path().to_string_lossy(),
    )
}
