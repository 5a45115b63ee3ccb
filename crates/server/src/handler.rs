//! The plumbing every route module shares: the versioned prefix, the blocking pool and
//! the workspace id of a path. It sits below the routers so they never import each
//! other for it.

use loci_api::{ApiError, ErrorKind};

use crate::reply::HttpError;

/// The prefix of every versioned route.
pub const PREFIX: &str = "/api/v1";

/// Runs `f` on the blocking pool; a panic in it is an `internal` error, not a crash.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, HttpError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(answer) => answer.map_err(HttpError),
        Err(e) => Err(HttpError(ApiError::new(ErrorKind::Internal, e.to_string()))),
    }
}

/// A workspace id from the path: the registry's integer id.
pub fn id(raw: &str) -> Result<i64, HttpError> {
    raw.parse::<i64>().map_err(|_| {
        HttpError(
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("`{raw}` is not a workspace id (an integer)"),
            )
            .hint("GET /api/v1/workspaces lists the workspaces and their ids"),
        )
    })
}
