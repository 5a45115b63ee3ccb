//! Live updates of the workspaces page, as server-sent events: while a workspace
//! indexes, its row shows the run's progress without a reload.
//!
//! One poller per server reads the rows ([`workspaces::rows`], every
//! [`BUSY_EVERY`] while a workspace is busy, every [`IDLE_EVERY`] otherwise), renders
//! them once and publishes them on a watch channel; it runs only while a page listens,
//! so the cost does not grow with the pages open. Each stream sends its page the rows
//! that differ from what it last sent (`row`, with the row's HTML as the page renders
//! it) and the ids that are gone (`gone`); the built-in script (`live.js`) swaps them
//! in. A stream ends when its session ends or the server stops; at most
//! [`MAX_STREAMS`] are open at once, more are refused `too_many_sessions`.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use loci_api::{ApiError, ErrorKind};
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, watch};

use crate::state::Shared;
use crate::web::auth::SessionId;
use crate::web::layout::PageError;
use crate::web::live_rows::{LiveRow, MAX_STREAMS};
use crate::web::session::Session;
use crate::web::workspaces::{self, Row};

/// How often the rows are read while a workspace is busy (a run's progress moves).
pub const BUSY_EVERY: Duration = Duration::from_millis(500);
/// How often the rows are read while every workspace is idle.
pub const IDLE_EVERY: Duration = Duration::from_secs(2);
/// How often a stream checks that its session is still live.
const SESSION_CHECK: Duration = Duration::from_secs(2);
/// A comment line sent this often keeps proxies from closing a quiet stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /web/events/workspaces`: the workspaces page's rows as they change.
pub async fn events(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Extension(SessionId(cookie)): Extension<SessionId>,
) -> Response {
    let Ok(permit) = state.live.streams.clone().try_acquire_owned() else {
        let e = ApiError::new(
            ErrorKind::TooManySessions,
            format!("{MAX_STREAMS} live pages are already open on this server"),
        )
        .hint("close a workspaces page in another tab; this page still works without live updates");
        return PageError::new(e, Some(session)).into_response();
    };
    let follow = Follow {
        rows: state.live.rows.subscribe(),
        stop: state.stopping(),
        sent: BTreeMap::new(),
        pending: VecDeque::new(),
        fresh: true,
        cookie,
        _permit: permit,
        state: state.clone(),
    };
    keep_polling(&state);
    Sse::new(futures::stream::unfold(follow, Follow::next))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

/// Starts the poller unless it runs.
fn keep_polling(state: &Shared) {
    if !state.live.polling.swap(true, Ordering::SeqCst) {
        tokio::spawn(poll(state.clone()));
    }
}

/// Reads and publishes the rows until no page listens or the server stops.
async fn poll(state: Shared) {
    let live = &state.live;
    let mut stop = state.stopping();
    let mut rows: Vec<Row> = Vec::new();
    loop {
        match workspaces::rows(&state, &rows).await {
            Ok(read) => {
                rows = read;
                let rendered: Vec<LiveRow> = rows.iter().map(render).collect();
                live.rows.send_if_modified(|current| {
                    let changed = current.as_deref() != Some(&rendered);
                    if changed {
                        *current = Some(Arc::new(rendered));
                    }
                    changed
                });
            }
            // The last rows stay published; the next round tries again.
            Err(e) => {
                tracing::warn!(error = %e.0, "the live workspaces view could not read the rows")
            }
        }
        let every = if rows.iter().any(Row::busy) {
            BUSY_EVERY
        } else {
            IDLE_EVERY
        };
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
        if live.rows.receiver_count() == 0 {
            // Rows read now would be stale for the next page: it waits for fresh ones.
            live.rows.send_replace(None);
            live.polling.store(false, Ordering::SeqCst);
            // A page that subscribed between the count and the store found `polling`
            // still set and started no poller: this one goes on for it.
            if live.rows.receiver_count() == 0 || live.polling.swap(true, Ordering::SeqCst) {
                return;
            }
        }
    }
    live.polling.store(false, Ordering::SeqCst);
}

fn render(r: &Row) -> LiveRow {
    LiveRow {
        id: r.detail.id,
        html: workspaces::row(r).into_string(),
        says: r.says(),
    }
}

/// Why a waiting stream woke.
enum Woke {
    /// New rows were published.
    Rows,
    /// Time to check the session.
    Check,
    /// The rows' publisher or the server stopped.
    End,
}

/// One page's stream: what it was sent, and what it is still to be sent.
struct Follow {
    rows: watch::Receiver<Option<Arc<Vec<LiveRow>>>>,
    stop: watch::Receiver<bool>,
    sent: BTreeMap<i64, String>,
    pending: VecDeque<Event>,
    fresh: bool,
    cookie: String,
    _permit: OwnedSemaphorePermit,
    state: Shared,
}

impl Follow {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Follow)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
            }
            if self.fresh {
                // The rows published before this stream began, if any.
                self.fresh = false;
                self.take();
                continue;
            }
            let woke = tokio::select! {
                changed = self.rows.changed() => {
                    if changed.is_ok() { Woke::Rows } else { Woke::End }
                }
                _ = self.stop.wait_for(|s| *s) => Woke::End,
                _ = tokio::time::sleep(SESSION_CHECK) => Woke::Check,
            };
            match woke {
                Woke::Rows => self.take(),
                Woke::Check if self.state.signin.session(&self.cookie).is_some() => {}
                Woke::Check | Woke::End => return None,
            }
        }
    }

    /// Queues the rows that differ from what was sent, and the ones that are gone.
    fn take(&mut self) {
        let Some(rows) = self.rows.borrow_and_update().clone() else {
            return;
        };
        for r in rows.iter() {
            if self.sent.get(&r.id) != Some(&r.html) {
                self.sent.insert(r.id, r.html.clone());
                let data = json!({"id": r.id, "html": r.html, "says": r.says}).to_string();
                self.pending
                    .push_back(Event::default().event("row").data(data));
            }
        }
        let gone: Vec<i64> = self
            .sent
            .keys()
            .filter(|id| !rows.iter().any(|r| r.id == **id))
            .copied()
            .collect();
        for id in gone {
            self.sent.remove(&id);
            self.pending
                .push_back(Event::default().event("gone").data(id.to_string()));
        }
    }
}
