//! The in-process engine: one guarded connection owned by a runner thread
//! with a large stack, requests serialized through the [`Queue`], cancel and
//! deadline through SQLite's interrupt and progress handler.
//!
//! Statements never run on the caller's thread (except in the worker, whose
//! executor thread is started with the same stack and whose parent kills the
//! process rather than abandon a statement), for two reasons:
//! - **Stack.** SQLite recurses on some inputs (GLOB/LIKE patterns, nested
//!   subqueries in FROM); the runner's stack ([`SQL_THREAD_STACK`]) is sized
//!   so that no statement within the limits of [`crate::guard`] can overflow
//!   it, whatever stack the caller has.
//! - **Deadline.** The progress handler runs between VM instructions, so one
//!   instruction that takes long (a big `randomblob`, a costly GLOB, the
//!   compilation of a huge statement) delays it. The caller waits only until
//!   its deadline (or cancel) plus [`STOP_GRACE`]; then it interrupts the
//!   statement and returns `timeout` (or `cancelled`) while the runner
//!   finishes that one instruction in the background. The limits bound that
//!   instruction's time and memory; requests behind it wait for it, each
//!   within its own deadline.

use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loci_store::rusqlite::InterruptHandle;

use crate::error::QueryError;
use crate::exec::{self, Collect, Query, QueryId, QueryResult};
use crate::guard::{ReadOnlyConnection, RunState};
use crate::queue::{Cancelled, Queue};

/// Stack of every thread that runs user SQL (the runner, the worker's
/// threads). Reserved address space, touched only as deep as a statement
/// recurses: SQLite's deepest legal inputs (a 1,000-byte GLOB pattern, 256
/// levels of parentheses, expression depth 1,000) need a few MiB at most.
pub(crate) const SQL_THREAD_STACK: usize = 64 << 20;

/// How long past its deadline, or past a cancel, a caller waits for the
/// runner to report before it gives up on the statement.
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(20);

/// A statement's work, run on the runner thread with the connection.
type Work = Box<dyn FnOnce(&ReadOnlyConnection) + Send>;

/// Where statements run.
enum Runner {
    /// The runner thread's inbox; `None` once closed (the runner then ends
    /// and drops the connection).
    Thread(Mutex<Option<mpsc::Sender<Work>>>),
    /// On the calling thread, which must have [`SQL_THREAD_STACK`]: the
    /// worker's executor, whose parent kills the process instead of
    /// abandoning a statement. `None` once closed.
    Caller(Box<Mutex<Option<ReadOnlyConnection>>>),
}

pub(crate) struct InProcess {
    runner: Runner,
    /// The running connection's; replaced when a stale connection is reopened.
    interrupt: Arc<Mutex<InterruptHandle>>,
    state: Arc<RunState>,
    queue: Queue,
    /// The running request's cancel time, set by `cancel`.
    cancel_at: Mutex<Option<(QueryId, Instant)>>,
}

impl InProcess {
    pub(crate) fn in_flight(&self) -> crate::queue::InFlight {
        self.queue.in_flight()
    }

    /// An engine whose statements run on its own runner thread.
    pub(crate) fn open(db: &Path) -> Result<InProcess, QueryError> {
        let conn = ReadOnlyConnection::open(db)?;
        let interrupt = Arc::new(Mutex::new(conn.interrupt_handle()));
        let state = conn.state.clone();
        let (tx, rx) = mpsc::channel::<Work>();
        let runner_interrupt = interrupt.clone();
        std::thread::Builder::new()
            .name("loci-query-run".into())
            .stack_size(SQL_THREAD_STACK)
            .spawn(move || {
                let mut conn = conn;
                for work in rx {
                    refresh(&mut conn, &runner_interrupt);
                    work(&conn);
                }
            })
            .map_err(|e| QueryError::Sqlite(format!("cannot start the query thread: {e}")))?;
        Ok(InProcess {
            runner: Runner::Thread(Mutex::new(Some(tx))),
            interrupt,
            state,
            queue: Queue::default(),
            cancel_at: Mutex::new(None),
        })
    }

    /// An engine whose statements run on the thread that submits them, which
    /// must have been started with [`SQL_THREAD_STACK`]. The caller cannot
    /// return before the statement stops: for the worker, whose parent kills
    /// it when it does not stop in time.
    pub(crate) fn open_on_caller(db: &Path) -> Result<InProcess, QueryError> {
        let conn = ReadOnlyConnection::open(db)?;
        Ok(InProcess {
            interrupt: Arc::new(Mutex::new(conn.interrupt_handle())),
            state: conn.state.clone(),
            runner: Runner::Caller(Box::new(Mutex::new(Some(conn)))),
            queue: Queue::default(),
            cancel_at: Mutex::new(None),
        })
    }

    pub(crate) fn execute(&self, q: &Query) -> Result<QueryResult, QueryError> {
        let started = Instant::now();
        let query = q.clone();
        let (ran, rows) = self.submit(q, started, move |conn, deadline| {
            let mut rows = Collect::default();
            let ran = exec::run(conn, &query, deadline, &mut rows)?;
            Ok((ran, rows.0))
        })?;
        Ok(QueryResult {
            columns: ran.columns,
            rows,
            truncated: ran.truncated,
            elapsed: started.elapsed(),
        })
    }

    /// Runs `work` for request `q` (submitted at `started`) on the runner
    /// thread once `q` holds the turn, and returns its result, or `timeout`
    /// / `cancelled` if the runner has not answered by the deadline (or the
    /// cancel) plus [`STOP_GRACE`]. `work` gets the connection and the
    /// absolute deadline.
    pub(crate) fn submit<T: Send + 'static>(
        &self,
        q: &Query,
        started: Instant,
        work: impl FnOnce(&ReadOnlyConnection, Instant) -> Result<T, QueryError> + Send + 'static,
    ) -> Result<T, QueryError> {
        let deadline = started + q.timeout;
        let _turn = self
            .queue
            .enter(q.id, deadline, || exec::timeout_error(q.timeout))?;
        let jobs = match &self.runner {
            Runner::Caller(conn) => {
                let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
                let Some(conn) = conn.as_mut() else {
                    return Err(QueryError::Closed("the query engine was closed".into()));
                };
                refresh(conn, &self.interrupt);
                return work(conn, deadline);
            }
            Runner::Thread(jobs) => jobs,
        };
        let (reply_tx, reply) = mpsc::sync_channel::<Result<T, QueryError>>(1);
        let job: Work = Box::new(move |conn| {
            let _ = reply_tx.send(work(conn, deadline));
        });
        {
            let jobs = jobs.lock().unwrap_or_else(|p| p.into_inner());
            let sent = jobs.as_ref().is_some_and(|tx| tx.send(job).is_ok());
            if !sent {
                return Err(QueryError::Closed("the query engine was closed".into()));
            }
        }
        let result = self.await_reply(q, deadline, &reply);
        *self.cancel_at.lock().unwrap_or_else(|p| p.into_inner()) = None;
        result
    }

    fn await_reply<T>(
        &self,
        q: &Query,
        deadline: Instant,
        reply: &mpsc::Receiver<Result<T, QueryError>>,
    ) -> Result<T, QueryError> {
        loop {
            let cancelled_at = self
                .cancel_at
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .filter(|(id, _)| *id == q.id)
                .map(|(_, t)| t);
            let give_up = cancelled_at
                .map_or(deadline, |t| t.min(deadline))
                .checked_add(STOP_GRACE)
                .unwrap_or(deadline);
            let now = Instant::now();
            if now >= give_up {
                // The runner is inside one long instruction; it stops at the
                // next check and its answer is dropped. Interrupting also ends
                // a long compilation; only while this request's statement is
                // the one on the connection.
                if self.state.current() == Some(q.id) {
                    interrupt(&self.interrupt);
                }
                let ms = STOP_GRACE.as_millis();
                return Err(if cancelled_at.is_some() {
                    QueryError::Cancelled(format!(
                        "request {} was cancelled; the statement is stopping in the background",
                        q.id
                    ))
                } else {
                    QueryError::Timeout(format!(
                        "the statement did not finish within its deadline of {} ms \
                         (it did not stop within {ms} ms of it and was abandoned)",
                        q.timeout.as_millis()
                    ))
                });
            }
            // Short slices, so a cancel is noticed while the runner is busy.
            match reply.recv_timeout((give_up - now).min(Duration::from_millis(5))) {
                Ok(result) => return result,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(QueryError::Closed("the query engine was closed".into()));
                }
            }
        }
    }

    pub(crate) fn cancel(&self, id: QueryId) -> bool {
        let outcome = self.queue.cancel(id, || {
            *self.cancel_at.lock().unwrap_or_else(|p| p.into_inner()) = Some((id, Instant::now()));
            self.state.cancel(id);
            interrupt(&self.interrupt);
        });
        outcome != Cancelled::Unknown
    }

    /// Interrupts a running statement, fails queued ones and lets the runner
    /// end (dropping the connection) once the running statement has stopped.
    pub(crate) fn close(&self) {
        self.queue.close();
        if let Some(id) = self.queue.running() {
            self.cancel(id);
        }
        match &self.runner {
            Runner::Thread(jobs) => drop(jobs.lock().unwrap_or_else(|p| p.into_inner()).take()),
            // The running statement (if any) holds the lock and returns within
            // one progress tick; a later close or drop finds the slot empty.
            Runner::Caller(conn) => {
                if let Ok(mut conn) = conn.try_lock() {
                    conn.take();
                }
            }
        }
    }
}

/// Interrupts the statement on the engine's current connection.
fn interrupt(handle: &Mutex<InterruptHandle>) {
    handle.lock().unwrap_or_else(|p| p.into_inner()).interrupt();
}

/// Reopens a connection that reads the file as immutable once the file changed, so it
/// sees the owner's changes instead of mixing cached pages (see `ReadOnlyConnection::
/// is_stale`). A failed reopen keeps the old connection; its statement then reports
/// the change as `busy`.
fn refresh(conn: &mut ReadOnlyConnection, handle: &Mutex<InterruptHandle>) {
    if !conn.is_stale() {
        return;
    }
    match ReadOnlyConnection::open_with(&conn.path.clone(), conn.state.clone()) {
        Ok(fresh) => {
            *handle.lock().unwrap_or_else(|p| p.into_inner()) = fresh.interrupt_handle();
            *conn = fresh;
        }
        Err(e) => tracing::debug!(error = %e, "reopening a stale read-only connection failed"),
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.close();
    }
}
