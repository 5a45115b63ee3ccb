//! `loci mcp`: loci's code graph for coding agents over the Model Context Protocol,
//! built on the official Rust SDK (`rmcp`), over stdio ([`serve_stdio`]) and as the
//! streamable-HTTP service `loci serve` mounts at `/mcp` ([`http_service`]).
//!
//! A front end over `loci_api`, like the CLI and the HTTP API: every tool converts its
//! arguments, calls `loci_api` and converts the answer back. What MCP adds:
//! - **a small tool set** ([`tools::TOOLS`], one module per tool): precise
//!   descriptions, JSON Schema input and output, read-only annotations;
//! - **bounded answers**: every result fits its `max_chars` budget, says how many more
//!   items exist and the cursor that fetches them ([`budget`]);
//! - **freshness in every result**: the index state, files changed since the last sync,
//!   whether a sync runs; drift found during a session starts one background sync and
//!   never blocks a call ([`fresh`]);
//! - **sessions** ([`session`]): on `initialize` the lifecycle gate evaluates the
//!   session's workspace in the background; a new session (a new `initialize`, a new
//!   HTTP session, a roots change) is bound anew, while the process-lifetime [`Host`]
//!   (read handles, tracked children, recorded snapshots) stays.
//!
//! ```no_run
//! let host = loci_mcp::Host::new(loci_mcp::HostOptions::default());
//! loci_mcp::serve_stdio(host, std::process::exit).unwrap();
//! ```
#![deny(missing_docs)]

pub mod args;
pub mod budget;
pub mod cancel;
mod hints;
pub mod host;
pub mod http;
mod poison;
pub mod protocol;
pub mod server;
pub mod session;
pub mod sessions;
pub mod stdio;
pub mod tools;

use std::sync::Arc;

use loci_api::{ApiError, ErrorKind};
use rmcp::ServiceExt;

pub use host::{Host, HostOptions};
pub use http::{HttpOptions, McpEndpoint};
pub use server::LociMcp;

/// How long calls in flight may run on once stdin has closed, and the runtime's
/// shutdown after (the process exits within half a second of stdin's end).
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// Serves one MCP client over stdin/stdout until stdin closes (or a signal arrives),
/// then tears every child this process started down. On a signal the process ends
/// through `end_process` (the binary's `std::process::exit`).
pub fn serve_stdio(host: Arc<Host>, end_process: fn(i32) -> !) -> Result<(), ApiError> {
    host.install_teardown(end_process);
    // A session's `remember` answers without waiting for its vectors.
    loci_api::memory::embed_in_background(true);
    // An agent has memories extracted by an LLM only when `llm.allowSpawn` is on.
    loci_api::memory::require_llm_opt_in(true);
    // One client, one connection: the runtime is this thread alone (no worker threads
    // to wake, keep stacks and malloc arenas for). Tools run on the blocking pool, so
    // the connection keeps reading (a cancel arrives while a call runs).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_name("loci-mcp-tool")
        .build()
        .map_err(|e| ApiError::new(ErrorKind::Failure, format!("cannot start the runtime: {e}")))?;
    let result = runtime.block_on(async {
        let server = LociMcp::new(host.clone());
        // Pipes (as every host starts a stdio server) are read and written on the
        // runtime's reactor: no blocking-pool thread hop per message each way.
        let (reader, writer) = rmcp::transport::stdio_pipes();
        let transport = stdio::StdioTransport::new(reader, writer);
        let eof = transport.eof();
        let running = server
            .serve(transport)
            .await
            .map_err(|e| ApiError::new(ErrorKind::Failure, format!("MCP handshake failed: {e}")))?;
        let mut waiting = std::pin::pin!(running.waiting());
        let ended = tokio::select! {
            ended = &mut waiting => ended,
            // Stdin closed: the client is gone. Calls in flight get a moment to answer
            // (rmcp would wait up to 5 s for them), then the process stops.
            _ = eof.notified() => match tokio::time::timeout(EXIT_GRACE, &mut waiting).await {
                Ok(ended) => ended,
                Err(_) => return Ok(()),
            },
        };
        ended.map_err(|e| {
            ApiError::new(ErrorKind::Internal, format!("the MCP session failed: {e}"))
        })?;
        Ok(())
    });
    runtime.shutdown_timeout(EXIT_GRACE);
    loci_api::vocab::process::teardown_all_children();
    result
}

/// The MCP service over streamable HTTP: one session per `initialize` (the
/// `Mcp-Session-Id` header), each bound to its own workspace, all sharing `host`,
/// reaped and capped as `opts` says ([`McpEndpoint`]). The caller (`loci serve`) puts
/// its API key and `Host`/`Origin` guard in front; the service itself also accepts
/// only loopback `Host` names unless `allow_remote`. Make it inside the tokio runtime
/// that serves it: its sessions' heap release runs there.
pub fn http_service(host: Arc<Host>, opts: HttpOptions) -> McpEndpoint {
    McpEndpoint::new(host, opts)
}
