//! The live `/mcp` sessions of a server: rmcp's own [`LocalSessionManager`] (its idle
//! timeout, `keep_alive`, reaps a session nobody uses; `DELETE` closes one), and what a
//! server needs on top of it:
//!
//! - **a client that vanished**: when a session's standalone stream (the client's
//!   `GET`, which a live client keeps open or reopens) drops and no new one opens within
//!   [`DISCONNECT_GRACE`] (longer than the SSE retry a client waits before it
//!   reconnects), the session is closed; a client that never opened one is left to the
//!   idle timeout;
//! - **a request whose client went away**: a request's response stream dropped before
//!   its answer was sent is cancelled, through rmcp's own `notifications/cancelled`,
//!   so its tool stops (a statement in the worker is killed);
//! - [`Sessions::live`], what the cap on live sessions counts;
//! - the heap ended sessions freed, handed back to the kernel once the churn stops.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use crate::poison::lock;

/// How long a session whose standalone stream dropped waits for its client to come back
/// (rmcp tells clients to retry after 3 s).
pub const DISCONNECT_GRACE: Duration = Duration::from_secs(5);

/// How often [`Sessions::release_heap_after_churn`] looks at the live sessions.
const HEAP_RELEASE_TICK: Duration = Duration::from_secs(3);

/// The live sessions (share it: `Arc`).
pub struct Sessions {
    inner: Arc<Shared>,
}

struct Shared {
    local: LocalSessionManager,
    streams: Mutex<HashMap<SessionId, Streams>>,
    grace: Duration,
}

/// A session's open standalone streams, and when the last one opened.
#[derive(Debug, Clone, Copy)]
struct Streams {
    open: usize,
    opened_at: Instant,
}

impl Sessions {
    /// Sessions reaped after `idle` without a message, and `grace` after their client
    /// vanished.
    pub fn new(idle: Duration, grace: Duration) -> Sessions {
        let mut config = SessionConfig::default();
        config.keep_alive = Some(idle);
        let mut local = LocalSessionManager::default();
        local.session_config = config;
        Sessions {
            inner: Arc::new(Shared {
                local,
                streams: Mutex::new(HashMap::new()),
                grace,
            }),
        }
    }

    /// Sessions alive now (rmcp removes a session once its worker has ended).
    pub async fn live(&self) -> usize {
        self.inner.local.sessions.read().await.len()
    }

    /// Hands the heap that ended sessions freed back to the kernel, once the number of
    /// live sessions has fallen and then held still for a tick: glibc keeps the freed
    /// pages of its arenas mapped, so a burst of sessions would otherwise leave the
    /// server's memory above its baseline for good. Runs on the current tokio runtime
    /// (outside one, nothing is started) and ends with the sessions.
    pub fn release_heap_after_churn(&self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                "the MCP endpoint was made outside a runtime: the heap its sessions free is not handed back"
            );
            return;
        };
        let weak = Arc::downgrade(&self.inner);
        rt.spawn(async move {
            let (mut seen, mut fell) = (0usize, false);
            let mut tick = tokio::time::interval(HEAP_RELEASE_TICK);
            loop {
                tick.tick().await;
                let Some(shared) = weak.upgrade() else {
                    return;
                };
                let live = shared.local.sessions.read().await.len();
                drop(shared);
                if live < seen {
                    fell = true;
                } else if live == seen && fell {
                    fell = false;
                    // A few milliseconds, on this worker: no blocking-pool thread
                    // is started (and left idle) for it.
                    crate::host::release_free_heap();
                }
                seen = live;
            }
        });
    }
}

impl Shared {
    fn stream_opened(&self, id: &SessionId) {
        let mut streams = lock(&self.streams);
        let s = streams.entry(id.clone()).or_insert(Streams {
            open: 0,
            opened_at: Instant::now(),
        });
        s.open += 1;
        s.opened_at = Instant::now();
    }

    /// The standalone stream of `id` dropped: close the session after the grace unless
    /// its client opened another.
    fn stream_dropped(self: &Arc<Self>, id: SessionId) {
        let dropped = Instant::now();
        if let Some(s) = lock(&self.streams).get_mut(&id) {
            s.open = s.open.saturating_sub(1);
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                "the MCP endpoint was made outside a runtime: the heap its sessions free is not handed back"
            );
            return;
        };
        let me = self.clone();
        rt.spawn(async move {
            tokio::time::sleep(me.grace).await;
            let gone = lock(&me.streams)
                .get(&id)
                .is_some_and(|s| s.open == 0 && s.opened_at <= dropped);
            if gone {
                tracing::debug!(session = %id, "the client vanished: closing its session");
                lock(&me.streams).remove(&id);
                let _ = me.local.close_session(&id).await;
            }
        });
    }

    /// A request's response stream dropped before its answer: cancel the request.
    fn request_abandoned(self: &Arc<Self>, id: SessionId, request: RequestId) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                "the MCP endpoint was made outside a runtime: the heap its sessions free is not handed back"
            );
            return;
        };
        let cancelled = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request, "reason": "the client went away"}
        });
        let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(cancelled) else {
            return;
        };
        let me = self.clone();
        rt.spawn(async move {
            let _ = me.local.accept_message(&id, message).await;
        });
    }
}

/// A stream that tells [`Shared`] when it is dropped: a standalone stream (`request`
/// `None`), or a request's response stream until its answer went by.
struct Watched<S> {
    inner: Pin<Box<S>>,
    shared: Arc<Shared>,
    session: SessionId,
    kind: Watch,
}

enum Watch {
    Standalone,
    Request(Option<RequestId>),
}

impl<S: Stream<Item = ServerSseMessage>> Stream for Watched<S> {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        if let (Poll::Ready(Some(item)), Watch::Request(pending)) = (&polled, &mut self.kind)
            && let (Some(message), Some(id)) = (&item.message, pending.as_ref())
        {
            let answered = match message.as_ref() {
                ServerJsonRpcMessage::Response(r) => &r.id == id,
                ServerJsonRpcMessage::Error(e) => e.id.as_ref() == Some(id),
                _ => false,
            };
            if answered {
                *pending = None;
            }
        }
        polled
    }
}

impl<S> Drop for Watched<S> {
    fn drop(&mut self) {
        match &mut self.kind {
            Watch::Standalone => self.shared.stream_dropped(self.session.clone()),
            Watch::Request(pending) => {
                if let Some(request) = pending.take() {
                    self.shared.request_abandoned(self.session.clone(), request);
                }
            }
        }
    }
}

impl<S> Watched<S> {
    fn new(inner: S, shared: &Arc<Shared>, session: &SessionId, kind: Watch) -> Watched<S> {
        Watched {
            inner: Box::pin(inner),
            shared: shared.clone(),
            session: session.clone(),
            kind,
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.local.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.inner.streams).remove(id);
        self.inner.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let request = match &message {
            ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let stream = self.inner.local.create_stream(id, message).await?;
        Ok(Watched::new(
            stream,
            &self.inner,
            id,
            Watch::Request(request),
        ))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.local.create_standalone_stream(id).await?;
        self.inner.stream_opened(id);
        Ok(Watched::new(stream, &self.inner, id, Watch::Standalone))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // A resumed stream is not watched: the idle timeout covers a client that
        // resumes and then vanishes.
        let stream = self.inner.local.resume(id, last_event_id).await?;
        Ok(Watched::new(stream, &self.inner, id, Watch::Request(None)))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.local.restore_session(id).await
    }
}
