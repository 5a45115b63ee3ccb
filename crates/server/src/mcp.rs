//! `/mcp`: loci's MCP server over streamable HTTP (`loci_mcp::http_service`), behind the
//! same guard as every route (API key, loopback `Host`/`Origin` unless
//! `--allow-remote`). Each `Mcp-Session-Id` is one MCP session bound to its own
//! workspace (the client's roots, else the server's working directory); all sessions
//! share one process-lifetime `loci_mcp::Host`, so a host can point every agent session
//! at one `loci serve` instead of one `loci mcp` process each.

use axum::Router;

use crate::state::Shared;

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/mcp";

/// The `/mcp` routes. Answers name workspaces by folder name, never by absolute path.
pub fn routes(allow_remote: bool) -> Router<Shared> {
    let host = loci_mcp::Host::new(loci_mcp::HostOptions {
        hide_paths: true,
        ..Default::default()
    });
    Router::new().nest_service(MCP_PATH, loci_mcp::http_service(host, allow_remote))
}
