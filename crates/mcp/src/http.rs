//! `/mcp` over streamable HTTP: rmcp's service ([`StreamableHttpService`]) over the
//! server's [`Sessions`], behind a small front that (1) reads a `POST` body whole,
//! within its bound, (2) answers a request with malformed params with JSON-RPC's
//! invalid-params code ([`crate::protocol::screen`]), and (3) opens a session only
//! while fewer than `max_sessions` are live, else answers `too_many_sessions` (503).
//! Sessions open one at a time (a few milliseconds each: the body is already read), so
//! the cap holds under concurrent `initialize`s.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full, Limited, combinators::BoxBody};
use loci_api::{ApiError, ErrorKind};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::host::Host;
use crate::server::LociMcp;
use crate::sessions::{DISCONNECT_GRACE, Sessions};

/// The response type of `/mcp`.
pub type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// How `/mcp` is served.
#[derive(Debug, Clone, Copy)]
pub struct HttpOptions {
    /// Accept non-loopback `Host` values (the server's `--allow-remote`).
    pub allow_remote: bool,
    /// Live sessions at most (`mcp.maxSessions`).
    pub max_sessions: usize,
    /// A session without a message for this long is closed (`mcp.sessionIdleMs`).
    pub idle: Duration,
    /// The largest request body read (`api.maxBodyBytes`).
    pub max_body_bytes: usize,
}

/// The `/mcp` service: a `tower` service over any request body.
#[derive(Clone)]
pub struct McpEndpoint {
    inner: StreamableHttpService<LociMcp, Sessions>,
    sessions: Arc<Sessions>,
    opts: HttpOptions,
    opening: Arc<tokio::sync::Mutex<()>>,
}

impl McpEndpoint {
    /// The service: one session per `initialize` (`Mcp-Session-Id`), each bound to its
    /// own workspace, all sharing `host`.
    pub fn new(host: Arc<Host>, opts: HttpOptions) -> McpEndpoint {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(true)
            .with_max_request_body_bytes(opts.max_body_bytes);
        if opts.allow_remote {
            config = config.disable_allowed_hosts();
        }
        let sessions = Arc::new(Sessions::new(opts.idle, DISCONNECT_GRACE));
        sessions.release_heap_after_churn();
        let inner = StreamableHttpService::new(
            move || Ok(LociMcp::new(host.clone())),
            sessions.clone(),
            config,
        );
        McpEndpoint {
            inner,
            sessions,
            opts,
            opening: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// Sessions alive now.
    pub async fn live_sessions(&self) -> usize {
        self.sessions.live().await
    }

    async fn handle<B>(mut self, req: Request<B>) -> HttpResponse
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: std::fmt::Display,
    {
        use tower_service::Service;
        if req.method() != Method::POST {
            let (parts, body) = req.into_parts();
            let body = body.map_err(|e| std::io::Error::other(e.to_string()));
            return unwrap(self.inner.call(Request::from_parts(parts, body)).await);
        }
        let (parts, body) = req.into_parts();
        let body = body.map_err(|e| std::io::Error::other(e.to_string()));
        let bytes = match Limited::new(body, self.opts.max_body_bytes).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => {
                let too_long = e
                    .downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some();
                return loci_error(if too_long {
                    ApiError::new(
                        ErrorKind::TooLong,
                        format!(
                            "the body is over {} bytes (api.maxBodyBytes)",
                            self.opts.max_body_bytes
                        ),
                    )
                } else {
                    ApiError::new(ErrorKind::Usage, "the request body could not be read")
                });
            }
        };
        if let Some(answer) = serde_json::from_slice(&bytes)
            .ok()
            .and_then(|v| crate::protocol::screen(&v))
        {
            return json_response(StatusCode::OK, answer.to_string());
        }
        let opens = !parts.headers.contains_key("mcp-session-id");
        let req = Request::from_parts(parts, Full::new(bytes));
        if !opens {
            return unwrap(self.inner.call(req).await);
        }
        let _one_at_a_time = self.opening.lock().await;
        let live = self.sessions.live().await;
        if live >= self.opts.max_sessions {
            return loci_error(
                ApiError::new(
                    ErrorKind::TooManySessions,
                    format!(
                        "this server holds {live} MCP sessions, its limit (mcp.maxSessions)"
                    ),
                )
                .hint("close a session (DELETE /mcp with its Mcp-Session-Id) or retry later; idle sessions are closed after mcp.sessionIdleMs"),
            );
        }
        unwrap(self.inner.call(req).await)
    }
}

impl<B> tower_service::Service<Request<B>> for McpEndpoint
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<HttpResponse, Infallible>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}

fn unwrap(r: Result<HttpResponse, Infallible>) -> HttpResponse {
    match r {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

fn json_response(status: StatusCode, body: String) -> HttpResponse {
    let mut resp = Response::new(Full::new(Bytes::from(body)).boxed());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// A loci error in the HTTP API's envelope, with its row's status.
fn loci_error(e: ApiError) -> HttpResponse {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_string(&e.envelope()).unwrap_or_default();
    json_response(status, body)
}
