//! `loci serve`: parses its flags and runs `loci_server::serve`, with loci's MCP server
//! over streamable HTTP mounted at `/mcp` beside the HTTP routes.

use clap::Args;
use loci_api::ApiError;
use loci_server::mount::{Mount, Served};

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/mcp";

#[derive(Args)]
pub struct ServeArgs {
    /// The address to bind (a loopback address unless --allow-remote).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port (default: config `api.port`; 0 picks a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Allow binding a non-loopback address and answering non-loopback Host/Origin.
    #[arg(long)]
    allow_remote: bool,
}

pub fn run(args: ServeArgs, json: bool) -> Result<(), ApiError> {
    let opts = loci_server::ServeOptions {
        host: args.host,
        port: args.port,
        allow_remote: args.allow_remote,
        json,
    };
    loci_server::serve(&opts, |served| vec![mcp(served)])
}

/// `/mcp`, behind the server's guard (API key, loopback `Host`/`Origin` unless
/// `--allow-remote`). Each `Mcp-Session-Id` is one MCP session, bound only to a
/// workspace inside the server's roots (`roots.base`, `roots.managed`), named by
/// locator (the `Loci-Workspace` header or a tool's `workspace` argument) or by a client
/// root whose real path lies inside one; answers name workspaces by folder name, never
/// by absolute path. All sessions share one host, whose `query` tool runs in the
/// server's own killable workers and whose read handles are the server's.
fn mcp(served: &Served) -> Mount {
    let cfg = loci_api::config(None);
    let roots = loci_api::workspaces::roots(&cfg).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the roots are misconfigured: /mcp binds no workspace");
        Default::default()
    });
    let host = loci_mcp::Host::new(loci_mcp::HostOptions {
        confine: Some(roots),
        sql: Some(served.sql.clone()),
        read_deadline: Some(served.read_deadline),
        workspaces: Some(served.workspaces.clone()),
        ..Default::default()
    });
    let opts = loci_mcp::HttpOptions {
        allow_remote: served.allow_remote,
        max_sessions: cfg.mcp_max_sessions(),
        idle: cfg.mcp_session_idle(),
        max_body_bytes: served.max_body_bytes,
    };
    Mount::service(MCP_PATH, loci_mcp::http_service(host, opts))
}
