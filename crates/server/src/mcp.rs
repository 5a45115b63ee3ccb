//! `/mcp`: loci's MCP server over streamable HTTP (`loci_mcp::http_service`), behind the
//! same guard as every route (API key, loopback `Host`/`Origin` unless
//! `--allow-remote`). Each `Mcp-Session-Id` is one MCP session, bound only to a
//! workspace inside this server's roots (`roots.base`, `roots.managed`), named by
//! locator (the `Loci-Workspace` header or a tool's `workspace` argument) or by a client
//! root whose real path lies inside one; all sessions share one process-lifetime
//! `loci_mcp::Host`, whose `query` tool runs in this server's own killable workers.

use axum::Router;

use crate::state::Shared;

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/mcp";

/// The `/mcp` routes. Answers name workspaces by folder name, never by absolute path.
pub fn routes(state: &Shared) -> Router<Shared> {
    let cfg = loci_api::config(None);
    let roots = crate::create::roots().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the roots are misconfigured: /mcp binds no workspace");
        loci_paths::Roots::default()
    });
    let host = loci_mcp::Host::new(loci_mcp::HostOptions {
        confine: Some(roots),
        sql: Some(state.sql.clone()),
        read_deadline: Some(state.read_deadline),
        ..Default::default()
    });
    let opts = loci_mcp::HttpOptions {
        allow_remote: state.allow_remote,
        max_sessions: cfg.mcp_max_sessions(),
        idle: cfg.mcp_session_idle(),
        max_body_bytes: state.max_body_bytes,
    };
    Router::new().nest_service(MCP_PATH, loci_mcp::http_service(host, opts))
}
