//! The in-process engine: one guarded connection, statements run on the
//! caller's thread, cancel and deadline through SQLite's interrupt.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use loci_store::rusqlite::InterruptHandle;

use crate::error::QueryError;
use crate::exec::{self, Collect, Query, QueryId, QueryResult, Ran, RowSink};
use crate::guard::ReadOnlyConnection;
use crate::queue::{Cancelled, Queue};

pub(crate) struct InProcess {
    conn: Mutex<Option<ReadOnlyConnection>>,
    /// The running connection's; replaced when a stale connection is reopened.
    interrupt: Mutex<InterruptHandle>,
    state: std::sync::Arc<crate::guard::RunState>,
    queue: Queue,
}

impl InProcess {
    pub(crate) fn in_flight(&self) -> crate::queue::InFlight {
        self.queue.in_flight()
    }

    pub(crate) fn open(db: &Path) -> Result<InProcess, QueryError> {
        let conn = ReadOnlyConnection::open(db)?;
        Ok(InProcess {
            interrupt: Mutex::new(conn.interrupt_handle()),
            state: conn.state.clone(),
            conn: Mutex::new(Some(conn)),
            queue: Queue::default(),
        })
    }

    pub(crate) fn execute(&self, q: &Query) -> Result<QueryResult, QueryError> {
        let started = Instant::now();
        let mut rows = Collect::default();
        let ran = self.execute_with(q, started, &mut rows)?;
        Ok(QueryResult {
            columns: ran.columns,
            rows: rows.0,
            truncated: ran.truncated,
            elapsed: started.elapsed(),
        })
    }

    /// Runs `q` (submitted at `started`), handing rows to `sink`.
    pub(crate) fn execute_with(
        &self,
        q: &Query,
        started: Instant,
        sink: &mut dyn RowSink,
    ) -> Result<Ran, QueryError> {
        let deadline = started + q.timeout;
        let _turn = self
            .queue
            .enter(q.id, deadline, || exec::timeout_error(q.timeout))?;
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let Some(conn) = guard.as_mut() else {
            return Err(QueryError::Closed("the query engine was closed".into()));
        };
        if conn.is_stale() {
            // Read as immutable, and the file changed: a new connection sees the
            // owner's changes (normally, if their log's -shm is there now).
            let fresh = ReadOnlyConnection::open_with(&conn.path, self.state.clone())?;
            *self.interrupt.lock().unwrap_or_else(|p| p.into_inner()) = fresh.interrupt_handle();
            *conn = fresh;
        }
        exec::run(conn, q, deadline, sink)
    }

    pub(crate) fn cancel(&self, id: QueryId) -> bool {
        let outcome = self.queue.cancel(id, || {
            self.state.cancel(id);
            self.interrupt
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .interrupt();
        });
        outcome != Cancelled::Unknown
    }

    /// Interrupts a running statement, fails queued ones and closes the
    /// connection once the running statement has let go of it.
    pub(crate) fn close(&self) {
        self.queue.close();
        if let Some(id) = self.queue.running() {
            self.cancel(id);
        }
        // The running statement (if any) returns within one progress tick
        // and drops the connection lock; the caller's thread need not wait
        // for that, but a later close or drop finds the slot empty.
        if let Ok(mut guard) = self.conn.try_lock() {
            guard.take();
        }
    }
}
