//! Accepting connections: hyper's HTTP/1 connection builder under the axum router,
//! for what `axum::serve` does not expose — a deadline on reading each request's head
//! (`api.headerReadTimeoutMs`: a client that trickles its headers, slowloris-style, is
//! disconnected when it passes) and a bound on the head's size (`api.maxHeaderBytes`:
//! larger gets 431, with the error envelope: `head_limit`). Each request carries its
//! peer as axum's `ConnectInfo`. On stop,
//! accepting ends and every connection finishes its request in flight, then closes.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::watch;
use tower_service::Service;

/// Per-connection limits.
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    /// How long a client may take to send a request's line and headers.
    pub header_read_timeout: Duration,
    /// The largest request head, in bytes.
    pub max_header_bytes: usize,
}

/// Serves `app` on `listener` until `stop` turns true, then waits for every
/// connection to finish its request in flight.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ConnLimits,
    stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut connections = tokio::task::JoinSet::new();
    let mut stopping = stop.clone();
    loop {
        let stopped = async {
            let _ = stopping.wait_for(|s| *s).await;
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stopped => break,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Out of descriptors, or a connection reset before it was accepted:
                // keep serving the others.
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        connections.spawn(connection(stream, peer, app.clone(), limits, stop.clone()));
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
    Ok(())
}

async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: ConnLimits,
    mut stop: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let mut app = app.clone();
        async move { Ok::<_, Infallible>(app.call(req).await.unwrap_or_else(|e| match e {})) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_header_size(limits.max_header_bytes)
        .keep_alive(true);
    let io = crate::head_limit::HeadLimitAnswer::new(stream, limits.max_header_bytes);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let stopped = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    let ended = tokio::select! {
        ended = conn.as_mut() => ended,
        () = stopped => {
            conn.as_mut().graceful_shutdown();
            conn.as_mut().await
        }
    };
    if let Err(e) = ended {
        tracing::debug!(%peer, error = %e, "connection closed");
    }
}
