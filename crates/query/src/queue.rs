//! The FIFO both engines serialize requests through: one statement runs at a
//! time, a queued request can be cancelled (removed, nothing else touched),
//! and every queued request can be failed at once (when a worker is killed).

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use crate::error::QueryError;
use crate::exec::QueryId;

/// Where a cancelled id was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cancelled {
    /// It was running: the engine's `interrupt` callback was called.
    Running,
    /// It was waiting: it is removed from the queue and fails `cancelled`.
    Queued,
    /// Unknown or already finished: nothing happened.
    Unknown,
}

/// What an engine is doing right now: for status pages, and for tests that must wait
/// for a request to hold its turn or to be queued instead of sleeping.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InFlight {
    /// The request that holds the turn (sent to the worker, or running in process).
    pub running: Option<QueryId>,
    /// Requests waiting behind it, first in line first.
    pub queued: Vec<QueryId>,
}

#[derive(Default)]
struct State {
    running: Option<QueryId>,
    waiting: VecDeque<QueryId>,
    /// Errors handed to waiting ids (cancel, fail_all); taken by the waiter.
    verdicts: HashMap<QueryId, QueryError>,
    closed: bool,
}

#[derive(Default)]
pub(crate) struct Queue {
    state: Mutex<State>,
    cv: Condvar,
}

/// The right to run: held while a statement runs, released on drop.
pub(crate) struct Turn<'q> {
    queue: &'q Queue,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.queue.lock().running = None;
        self.queue.cv.notify_all();
    }
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `id` is first in line and nothing runs. Fails when `id` is
    /// cancelled or failed while waiting, when `deadline` passes first
    /// (`on_timeout` builds that error), or when the queue is closed.
    pub(crate) fn enter(
        &self,
        id: QueryId,
        deadline: Instant,
        on_timeout: impl Fn() -> QueryError,
    ) -> Result<Turn<'_>, QueryError> {
        let mut st = self.lock();
        if st.closed {
            return Err(closed());
        }
        st.waiting.push_back(id);
        loop {
            if let Some(err) = st.verdicts.remove(&id) {
                return Err(err);
            }
            if st.running.is_none() && st.waiting.front() == Some(&id) {
                st.waiting.pop_front();
                st.running = Some(id);
                return Ok(Turn { queue: self });
            }
            let now = Instant::now();
            if now >= deadline {
                st.waiting.retain(|w| *w != id);
                drop(st);
                self.cv.notify_all();
                return Err(on_timeout());
            }
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Cancels `id`. When it is running, `interrupt` is called while the
    /// queue is locked, so the id cannot finish and be replaced by the next
    /// request in between.
    pub(crate) fn cancel(&self, id: QueryId, interrupt: impl FnOnce()) -> Cancelled {
        let mut st = self.lock();
        if st.running == Some(id) {
            interrupt();
            return Cancelled::Running;
        }
        let before = st.waiting.len();
        st.waiting.retain(|w| *w != id);
        if st.waiting.len() == before {
            return Cancelled::Unknown;
        }
        st.verdicts.insert(
            id,
            QueryError::Cancelled(format!("request {id} was cancelled while queued")),
        );
        drop(st);
        self.cv.notify_all();
        Cancelled::Queued
    }

    /// Fails every waiting request with `err` (the running one is the
    /// caller's business). Returns how many were failed.
    pub(crate) fn fail_waiting(&self, err: &QueryError) -> usize {
        let mut st = self.lock();
        let ids: Vec<QueryId> = st.waiting.drain(..).collect();
        for id in &ids {
            st.verdicts.insert(*id, err.clone());
        }
        drop(st);
        self.cv.notify_all();
        ids.len()
    }

    /// Refuses new requests and fails the waiting ones.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.fail_waiting(&closed());
    }

    /// The running id, if any.
    /// The running id and the waiting ones, in order.
    pub(crate) fn in_flight(&self) -> InFlight {
        let st = self.lock();
        InFlight {
            running: st.running,
            queued: st.waiting.iter().copied().collect(),
        }
    }

    pub(crate) fn running(&self) -> Option<QueryId> {
        self.lock().running
    }
}

fn closed() -> QueryError {
    QueryError::Closed("the query engine was closed".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    #[test]
    fn queued_cancel_removes_only_that_request() {
        let q = Queue::default();
        let turn = q.enter(QueryId(1), far(), || unreachable!()).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| q.enter(QueryId(2), far(), || unreachable!()).map(|_| ()));
            while q.lock().waiting.is_empty() {
                std::thread::yield_now();
            }
            let mut interrupted = false;
            assert_eq!(
                q.cancel(QueryId(2), || interrupted = true),
                Cancelled::Queued
            );
            assert!(!interrupted);
            assert_eq!(waiter.join().unwrap().unwrap_err().kind(), "cancelled");
        });
        assert_eq!(q.running(), Some(QueryId(1)));
        assert_eq!(q.cancel(QueryId(9), || {}), Cancelled::Unknown);
        drop(turn);
        assert_eq!(q.cancel(QueryId(1), || {}), Cancelled::Unknown);
    }

    #[test]
    fn waiting_times_out_at_its_deadline() {
        let q = Queue::default();
        let _turn = q.enter(QueryId(1), far(), || unreachable!()).unwrap();
        let soon = Instant::now() + Duration::from_millis(20);
        let err = q
            .enter(QueryId(2), soon, || QueryError::Timeout("t".into()))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.kind(), "timeout");
        assert!(q.lock().waiting.is_empty());
    }
}
