//! Front ends the binary mounts beside the HTTP routes (`/mcp`), behind the same guard
//! (API key, loopback `Host`/`Origin` unless `--allow-remote`), body limit and tracing.
//! The server knows only that a service answers under a path: what it serves is the
//! binary's choice, so this crate depends on no other front end.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::IntoResponse;
use loci_api::host::WorkspaceHost;
use loci_api::sql_service::SqlService;

/// What the server shares with a mounted front end.
#[derive(Clone)]
pub struct Served {
    /// The server's user-SQL workers (so HTTP routes see and cancel the mount's
    /// statements too).
    pub sql: Arc<SqlService>,
    /// `limits.readDeadlineMs`, never longer than the request timeout.
    pub read_deadline: Duration,
    /// `--allow-remote`.
    pub allow_remote: bool,
    /// `api.maxBodyBytes`.
    pub max_body_bytes: usize,
    /// The server's workspace handles (so a mount and the routes share one connection
    /// pool per workspace).
    pub workspaces: Arc<WorkspaceHost>,
}

/// A service answering every request under one path.
pub struct Mount(pub(crate) axum::Router);

impl Mount {
    /// `service` answers every request under `path` (and `path` itself).
    pub fn service<S>(path: &str, service: S) -> Mount
    where
        S: tower_service::Service<axum::extract::Request, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Response: IntoResponse,
        S::Future: Send + 'static,
    {
        Mount(axum::Router::new().nest_service(path, service))
    }
}
