//! Read-only SQL over a loci index that can always be stopped. `loci-query`
//! runs one user-supplied statement at a time against a workspace's index,
//! either in process (cancel and deadline through SQLite's interrupt and a
//! progress handler) or in a `loci worker` child process started through the
//! supervisor, which can additionally be killed when a statement will not
//! stop (a stuck busy wait, runaway memory, a crash). Both sit behind one
//! API, [`QueryEngine`], with the same behaviour.
//!
//! It carries seed `003_b6662243a514f95d.txt` (a killable SQLite worker:
//! JSON lines with tagged 64-bit integers and BLOBs, UTF-8-safe framing, a
//! serialized queue, cancel of a queued request that leaves the running one
//! alone, a single-flight restart, a watchdog, a minimal environment) and
//! keeps DESIGN.md invariant 5, **user queries are read-only and
//! preemptible**: the file is opened read-only, `query_only` is re-asserted
//! before every statement, an authorizer denies ATTACH, writes and all but a
//! few PRAGMAs, `SQLITE_LIMIT_ATTACHED` is 0, one statement per request, and
//! `sqlite3_stmt_readonly` must hold before a statement runs. Resource limits
//! (a value's size, LIKE pattern length, nesting, SQLite's heap, the answer's
//! bytes) fail a statement with `limit_exceeded`, and statements run on
//! threads with a large stack, so no statement can outrun its deadline by
//! much or crash a thread. It spawns only through `loci-supervisor`
//! (invariant 3).
//!
//! ```
//! use std::time::Duration;
//! use loci_query::{Query, QueryEngine, QueryError, Value};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let db = dir.path().join("index.db");
//! let setup = loci_store::rusqlite::Connection::open(&db).unwrap();
//! setup.execute_batch("CREATE TABLE files(path TEXT); INSERT INTO files VALUES ('src/lib.rs');").unwrap();
//! drop(setup);
//!
//! let engine = QueryEngine::in_process(&db)?;
//! let r = engine.execute(&Query::new("SELECT path FROM files").timeout(Duration::from_secs(1)))?;
//! assert_eq!(r.rows, vec![vec![Value::Text("src/lib.rs".into())]]);
//!
//! let refused = engine.execute(&Query::new("DELETE FROM files")).unwrap_err();
//! assert_eq!(refused.kind(), "not_read_only");
//! # Ok::<(), QueryError>(())
//! ```
//!
//! See [`QueryEngine`] for cancel and close semantics, [`WorkerConfig`] for
//! worker mode, [`value`] for the JSON form of values, and `docs/query.md`
//! for the guarantees and the wire protocol in prose.

#![deny(missing_docs)]

mod error;
mod exec;
mod fastrows;
mod guard;
mod id;
mod in_process;
mod protocol;
mod queue;
pub mod value;
mod worker_client;
mod worker_server;

use std::path::Path;
use std::time::Duration;

pub use error::QueryError;
pub use exec::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT, MAX_BUSY_TIMEOUT, Query, QueryId,
    QueryResult, busy_timeout_for,
};
pub use guard::{
    HEAP_LIMIT_BYTES, MAX_EXPR_DEPTH, MAX_LIKE_PATTERN_BYTES, MAX_NESTING, MAX_SQL_BYTES,
    MAX_VALUE_BYTES, ReadOnlyConnection,
};
pub use queue::InFlight;
pub use value::{Params, Value};
pub use worker_client::{WorkerConfig, worker_env};
pub use worker_server::{run_worker, serve};

use in_process::InProcess;
use worker_client::WorkerClient;

/// What an engine can do, for callers that advertise it (DESIGN.md
/// invariant 9: a capability is declared only when implemented).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Capabilities {
    /// `cancel(id)` stops a running statement and removes a queued one.
    pub supports_cancel: bool,
    /// The statement runs on the caller's thread, in the caller's process:
    /// something SQLite cannot interrupt (a busy wait, a crash, runaway
    /// memory) holds or harms the caller. False for the worker, whose
    /// process is killed instead.
    pub blocks_caller_while_running: bool,
}

/// Runs read-only statements, one at a time, with deadline and cancel.
///
/// `Send + Sync`: share it (`Arc`) and call [`QueryEngine::cancel`] from
/// another thread while [`QueryEngine::execute`] runs. Requests are served in
/// arrival order. Cancelling a queued request removes it from the queue
/// (it fails `cancelled`) and leaves the running one alone. Cancelling the
/// running one interrupts it (`cancelled`); the requests queued behind it
/// then run. In worker mode, if the worker has not answered within the
/// cancel grace it is killed, and then every queued request fails too
/// (`worker_killed`); the next request starts a new worker.
pub struct QueryEngine {
    inner: Inner,
}

enum Inner {
    InProcess(InProcess),
    Worker(WorkerClient),
}

impl std::fmt::Debug for QueryEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryEngine")
            .field("capabilities", &self.capabilities())
            .finish_non_exhaustive()
    }
}

impl QueryEngine {
    /// An engine that runs statements on the caller's thread over one
    /// guarded connection to `db` (which must exist).
    pub fn in_process(db: &Path) -> Result<QueryEngine, QueryError> {
        Ok(QueryEngine {
            inner: Inner::InProcess(InProcess::open(db)?),
        })
    }

    /// An engine that runs statements in a `loci worker` process, started
    /// now through the supervisor, restarted on the next request after a
    /// kill.
    pub fn worker(config: WorkerConfig) -> Result<QueryEngine, QueryError> {
        Ok(QueryEngine {
            inner: Inner::Worker(WorkerClient::start(config)?),
        })
    }

    /// Runs `q` and returns its rows, or why it failed.
    pub fn execute(&self, q: &Query) -> Result<QueryResult, QueryError> {
        match &self.inner {
            Inner::InProcess(e) => e.execute(q),
            Inner::Worker(e) => e.execute(q),
        }
    }

    /// Cancels request `id`: true when it was running or queued, false when
    /// it is unknown or already finished.
    pub fn cancel(&self, id: QueryId) -> bool {
        match &self.inner {
            Inner::InProcess(e) => e.cancel(id),
            Inner::Worker(e) => e.cancel(id),
        }
    }

    /// Refuses further requests, fails queued ones (`closed`) and stops a
    /// running one (interrupt in process, kill for the worker). Returns at
    /// once; a worker is reaped by the supervisor moments later.
    pub fn close(&self) {
        match &self.inner {
            Inner::InProcess(e) => e.close(),
            Inner::Worker(e) => e.close(),
        }
    }

    /// What this engine can do.
    pub fn capabilities(&self) -> Capabilities {
        match &self.inner {
            Inner::InProcess(_) => Capabilities {
                supports_cancel: true,
                blocks_caller_while_running: true,
            },
            Inner::Worker(_) => Capabilities {
                supports_cancel: true,
                blocks_caller_while_running: false,
            },
        }
    }

    /// The request holding the turn and the ones queued behind it.
    pub fn in_flight(&self) -> InFlight {
        match &self.inner {
            Inner::InProcess(e) => e.in_flight(),
            Inner::Worker(e) => e.in_flight(),
        }
    }

    /// `"in-process"` or `"worker"`.
    pub fn mode(&self) -> &'static str {
        match &self.inner {
            Inner::InProcess(_) => "in-process",
            Inner::Worker(_) => "worker",
        }
    }

    /// Worker mode: the live worker's pid.
    pub fn worker_pid(&self) -> Option<u32> {
        match &self.inner {
            Inner::InProcess(_) => None,
            Inner::Worker(e) => e.pid(),
        }
    }

    /// Worker mode: how many workers this engine has started (restarts
    /// included); 0 in process.
    pub fn workers_started(&self) -> u64 {
        match &self.inner {
            Inner::InProcess(_) => 0,
            Inner::Worker(e) => e.starts(),
        }
    }
}

/// Parses a duration as the CLI takes it: `250ms`, `10s`, `2m`, or a bare
/// number of seconds (`1.5`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (try 500ms, 10s or 2m)"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("{text:?} is not a positive duration"));
    }
    Duration::try_from_secs_f64(v * scale).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn engine_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<QueryEngine>();
    }
}
