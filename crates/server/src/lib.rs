//! `loci serve`: loci's authenticated HTTP API over `loci_api`.
//!
//! A front end and nothing more: every handler converts the request, calls one
//! `loci_api` function on the blocking pool and converts the answer back; errors are
//! `loci_api::ApiError`s with the HTTP status of their kind in the one error table.
//! What the server adds is only what HTTP needs: the API key on every route but
//! `GET /health`, loopback-only `Host`/`Origin` unless `--allow-remote`, a body limit
//! (`api.maxBodyBytes`), a deadline per request (`api.requestTimeoutMs`), no absolute
//! path in any answer, and a graceful stop (SIGTERM/SIGINT: stop accepting, drain the
//! requests in flight for at most [`DRAIN`], tear every child down, exit 0). The
//! binary mounts `/mcp` beside the routes ([`mount`]), behind the same guard.
#![deny(missing_docs)]

pub mod answers;
pub mod body;
pub mod conn;
pub mod create;
pub mod guard;
pub mod handler;
pub mod head_limit;
pub mod key;
pub mod key_ring;
mod memory_operations;
pub mod memory_routes;
pub mod memory_user_routes;
pub mod mount;
pub mod openapi;
pub mod openapi_memory;
pub mod openapi_memory_user;
pub mod openapi_operation;
pub mod query;
pub mod reply;
pub mod repositories;
pub mod routes;
pub mod state;
pub mod web;
pub mod workspace_routes;

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use loci_api::{ApiError, ErrorKind};
use tower_http::trace::TraceLayer;

use crate::mount::{Mount, Served};
use crate::state::AppState;

/// How long in-flight requests may run on after a stop signal.
pub const DRAIN: Duration = Duration::from_secs(5);
/// Threads the blocking pool may start: pool reads (bounded apart, see
/// `state::concurrent_reads`), memory operations, workspace creation and clones.
const MAX_BLOCKING_THREADS: usize = 64;

/// How `loci serve` was asked to run.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The host or address to bind.
    pub host: String,
    /// The port (default `api.port`; 0 picks a free one).
    pub port: Option<u16>,
    /// Accept non-loopback binds, `Host` and `Origin`.
    pub allow_remote: bool,
    /// Print `{"listening": "ADDR"}` on stdout once bound.
    pub json: bool,
}

/// Runs the server until SIGTERM or SIGINT, then drains and returns `Ok`. `mounts`
/// adds the front ends the binary serves beside the routes (`/mcp`), given what the
/// server shares with them; it runs inside the server's runtime.
pub fn serve(
    opts: &ServeOptions,
    mounts: impl FnOnce(&Served) -> Vec<Mount>,
) -> Result<(), ApiError> {
    // Many concurrent graph reads, no user SQL in this process: SQLite's allocation
    // statistics (a global mutex) would serialise the readers.
    loci_api::prefer_parallel_reads();
    // A memory written over HTTP or /mcp is answered before its vectors are computed.
    loci_api::memory::embed_in_background(true);
    // A caller across the socket has memories extracted by an LLM only when the
    // server's config allows it (`llm.allowSpawn`).
    loci_api::memory::require_llm_opt_in(true);
    let cfg = loci_api::config(None);
    let port = opts.port.unwrap_or_else(|| cfg.api_port());
    let addr = resolve(&opts.host, port)?;
    if !addr.ip().is_loopback() {
        if !opts.allow_remote {
            return Err(ApiError::new(
                ErrorKind::Usage,
                format!("{} is not a loopback address", opts.host),
            )
            .hint("binding beyond this machine needs `--allow-remote` (then anyone who can reach it and has the key can read every registered workspace)"));
        }
        eprintln!(
            "loci serve: warning: listening on {addr}, reachable from other machines; every request still needs the API key"
        );
    }
    // A clone policy it cannot read stops the server now, not the first clone.
    loci_api::workspaces::remote_clone_policy(&cfg)?;
    let keys = key_ring::KeyRing::load()?;
    let max_body = usize::try_from(cfg.api_max_body_bytes()).unwrap_or(usize::MAX);
    let state = Arc::new(AppState::new(
        keys,
        opts.allow_remote,
        max_body,
        cfg.api_request_timeout(),
        cfg.read_deadline(),
        web::session::SignIn::new(cfg.web_signin_ttl(), cfg.web_session_ttl()),
    ));
    let limits = conn::ConnLimits {
        header_read_timeout: cfg.api_header_read_timeout(),
        max_header_bytes: usize::try_from(cfg.api_max_header_bytes()).unwrap_or(usize::MAX),
    };
    let listener = bind(addr)?;
    let bound = listener.local_addr().map_err(|e| {
        ApiError::new(
            ErrorKind::Failure,
            format!("cannot read the bound address: {e}"),
        )
    })?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_name("loci-serve")
        .build()
        .map_err(|e| ApiError::new(ErrorKind::Failure, format!("cannot start the runtime: {e}")))?;
    let served = Served {
        sql: state.sql.clone(),
        read_deadline: state.read_deadline,
        allow_remote: state.allow_remote,
        max_body_bytes: state.max_body_bytes,
        workspaces: state.workspaces.clone(),
    };
    let result = runtime.block_on(async {
        // Inside the runtime: a mount may start its own tasks (the MCP sessions' reaper
        // and heap release).
        let mounts = mounts(&served);
        run(listener, bound, state.clone(), mounts, limits, opts.json).await
    });
    state.runs.shutdown();
    // Reads still running past the drain are cancelled with the runtime.
    runtime.shutdown_timeout(Duration::from_millis(100));
    loci_api::vocab::process::teardown_all_children();
    result
}

async fn run(
    listener: TcpListener,
    bound: SocketAddr,
    state: Arc<AppState>,
    mounts: Vec<Mount>,
    limits: conn::ConnLimits,
    json: bool,
) -> Result<(), ApiError> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| ApiError::new(ErrorKind::Failure, format!("cannot listen on {bound}: {e}")))?;
    let stop_rx = state.stopping();
    let stopping = state.clone();
    loci_api::vocab::process::on_shutdown_signal(Arc::new(move |signal| {
        tracing::info!(signal, "stopping: draining requests in flight");
        // User statements are not drained: they are killed and answered now.
        stopping.sql.close();
        // Live streams end now, not at the drain's deadline.
        stopping.stop();
    }));
    let app = mounts
        .into_iter()
        .fold(routes::router().with_state(state.clone()), |app, m| {
            app.merge(m.0)
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::guard,
        ))
        .layer(DefaultBodyLimit::max(state.max_body_bytes))
        .layer(TraceLayer::new_for_http());
    let mut serving = tokio::spawn(conn::serve(listener, app, limits, stop_rx.clone()));

    eprintln!("loci serve: listening on http://{bound}");
    // The web view's one-time sign-in URL, as notebook servers print theirs: good once
    // and for `web.signinTtlMs`; `POST /api/v1/web/signin` mints another.
    // The server's own (unscoped) key prints it.
    let signin = web::signin_path(&state, loci_api::memory::MemoryAccess::All)?;
    eprintln!(
        "loci serve: web view: open http://{bound}{signin} (good once, for {} s)",
        state.signin.token_ttl().as_secs()
    );
    if json {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{}",
            serde_json::json!({ "listening": bound.to_string(), "web_signin": signin })
        );
        let _ = out.flush();
    }

    let mut stop = stop_rx;
    tokio::select! {
        ended = &mut serving => return served(ended),
        _ = stop.wait_for(|s| *s) => {}
    }
    match tokio::time::timeout(DRAIN, &mut serving).await {
        Ok(ended) => served(ended),
        Err(_) => {
            tracing::warn!(
                "requests still in flight after {} s: stopping anyway",
                DRAIN.as_secs()
            );
            serving.abort();
            Ok(())
        }
    }
}

fn served(ended: Result<std::io::Result<()>, tokio::task::JoinError>) -> Result<(), ApiError> {
    match ended {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(ApiError::new(
            ErrorKind::Failure,
            format!("the server failed: {e}"),
        )),
        Err(e) => Err(ApiError::new(
            ErrorKind::Internal,
            format!("the server task failed: {e}"),
        )),
    }
}

/// The address of `host:port` (an IP, or a name such as `localhost`).
fn resolve(host: &str, port: u16) -> Result<SocketAddr, ApiError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| {
            ApiError::new(
                ErrorKind::Usage,
                format!("cannot resolve the host `{host}`"),
            )
            .hint("pass an address such as 127.0.0.1 or ::1")
        })
}

/// Binds `addr`; a port already in use is `bind_conflict`.
fn bind(addr: SocketAddr) -> Result<TcpListener, ApiError> {
    let listener = TcpListener::bind(addr).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            ApiError::new(ErrorKind::BindConflict, format!("{addr} is already in use"))
                .hint("stop the other server, or pass another --port (0 picks a free one)")
        } else {
            ApiError::new(ErrorKind::Failure, format!("cannot bind {addr}: {e}"))
        }
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| ApiError::new(ErrorKind::Failure, format!("cannot listen on {addr}: {e}")))?;
    Ok(listener)
}
