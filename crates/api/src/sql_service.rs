//! `SqlService`: user SQL for a long-lived front end (the HTTP server, MCP), always in
//! the killable worker process, with one persistent worker engine per index.
//!
//! A server must stay responsive whatever a statement does, so no user statement runs
//! in the server's own process: each index gets one `loci worker` child, started on its
//! first query, restarted lazily (one start shared by every caller) after a kill. A
//! request has an id the caller may choose (else one is generated and returned), so
//! another request can cancel it: a queued id is removed and nothing else is touched;
//! the running id is killed with its worker at once, and the requests queued behind it
//! are all answered (`worker_killed`: submit again). A caller that goes away cancels
//! its request the same way ([`CancelGuard`]).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loci_query::{Params, Query, QueryEngine, QueryError, QueryId, Value, WorkerConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};
use crate::poison::lock;

/// Shortest deadline a caller may ask for: below it, the round trip to the worker (or
/// its restart after a kill) is most of the budget, and the answer would be a
/// `timeout` whatever the statement.
pub const MIN_DEADLINE_MS: u64 = 100;

/// Longest client-chosen query id, in bytes.
pub const MAX_QUERY_ID_BYTES: usize = 128;

/// One statement for [`SqlService::execute`].
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlRequest {
    /// Exactly one read-only statement (SELECT, WITH ... SELECT).
    pub sql: String,
    /// Bound parameters: a JSON array for `?`, an object for `:name`; values in the
    /// tagged form of the answer's rows (`{"$int": "..."}`, `{"$blob": "<base64>"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
    /// The id to cancel it by (`A-Z a-z 0-9 . _ -`, at most 128 bytes); generated
    /// when absent. Unique among this workspace's running and queued queries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9._-]{1,128}$"))]
    pub id: Option<String>,
    /// Deadline in milliseconds, queue time included: at least 100, at most (and by
    /// default) `limits.queryTimeoutMs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100))]
    pub deadline_ms: Option<u64>,
    /// Rows returned at most (default and maximum `limits.maxRows`); more set
    /// `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_rows: Option<u64>,
}

/// What a statement returned.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SqlAnswer {
    /// The query's id (the caller's, or the generated one).
    pub id: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows. Integers beyond ±(2^53 − 1) are `{"$int": "<decimal>"}`, BLOBs
    /// `{"$blob": "<standard base64>"}`, ±infinity `{"$real": "inf"|"-inf"}`.
    #[schemars(with = "Vec<Vec<serde_json::Value>>")]
    pub rows: Vec<Vec<Value>>,
    /// Rows returned.
    pub row_count: usize,
    /// Whether more rows existed than `max_rows`.
    pub truncated: bool,
    /// Time from submission to the last row, in milliseconds.
    pub elapsed_ms: f64,
}

/// Where a cancelled query was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelledWhere {
    /// It was running: its worker was killed.
    Running,
    /// It was queued: it was removed, the running one left alone.
    Queued,
}

/// The answer to a cancel.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CancelAnswer {
    /// The id cancelled.
    pub id: String,
    /// Where it was.
    pub cancelled: CancelledWhere,
}

/// The queries of one workspace now: a status view (and what tests wait on).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct QueriesInFlight {
    /// The query holding the worker, if any.
    pub running: Option<String>,
    /// The queries waiting behind it, first in line first.
    pub queued: Vec<String>,
}

/// The bounds a caller's request must stay within.
#[derive(Debug, Clone, Copy)]
pub struct SqlLimits {
    /// `limits.queryTimeoutMs`: the default and the longest deadline.
    pub max_deadline: Duration,
    /// `limits.maxRows`: the default and the largest row cap.
    pub max_rows: usize,
}

impl SqlLimits {
    /// The limits of the loaded configuration.
    pub fn from_config(cfg: &loci_lifecycle::config::Config) -> SqlLimits {
        SqlLimits {
            max_deadline: cfg.query_timeout(),
            max_rows: cfg.max_rows(),
        }
    }
}

/// A request validated and given its ids, before it runs.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The caller's id, or the generated one.
    pub id: String,
    query: Query,
}

impl Prepared {
    /// The engine's id of this request (what [`CancelGuard`] cancels).
    pub fn query_id(&self) -> QueryId {
        self.query.id
    }
}

/// One index's worker engine and the ids of its requests.
struct Slot {
    /// Started on first use; replaced when the index file is replaced (a rebuild).
    engine: Mutex<Option<Started>>,
    /// Client id → engine id, for every request running or queued.
    ids: Mutex<HashMap<String, QueryId>>,
}

struct Started {
    engine: Arc<QueryEngine>,
    file: (u64, u64),
}

/// User SQL through one killable worker per index (see the module doc). `Send + Sync`;
/// share it (`Arc`).
pub struct SqlService {
    program: PathBuf,
    limits: SqlLimits,
    slots: Mutex<HashMap<PathBuf, Arc<Slot>>>,
    closed: AtomicBool,
}

impl std::fmt::Debug for SqlService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlService")
            .field("program", &self.program)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SqlService {
    /// A service whose workers run `program worker` (the loci executable).
    pub fn new(program: impl Into<PathBuf>, limits: SqlLimits) -> SqlService {
        SqlService {
            program: program.into(),
            limits,
            slots: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// The bounds requests are held to.
    pub fn limits(&self) -> SqlLimits {
        self.limits
    }

    /// Checks `req` against the limits and gives it its ids; nothing runs yet.
    pub fn prepare(&self, req: &SqlRequest) -> Result<Prepared, ApiError> {
        let qid = QueryId::next();
        let id = match &req.id {
            Some(id) => valid_id(id)?,
            None => format!("q{}", qid.0),
        };
        let params = match &req.params {
            Some(v) => Params::from_json_value(v.clone()).map_err(|m| {
                ApiError::new(ErrorKind::InvalidParams, m)
                    .hint("params take a JSON array for ? or an object for :name")
            })?,
            None => Params::None,
        };
        let max_ms = self.limits.max_deadline.as_millis();
        let deadline = match req.deadline_ms {
            None => self.limits.max_deadline,
            Some(ms) if ms >= MIN_DEADLINE_MS && u128::from(ms) <= max_ms => {
                Duration::from_millis(ms)
            }
            Some(ms) => {
                return Err(ApiError::new(
                    ErrorKind::LimitExceeded,
                    format!(
                        "deadline_ms {ms} is outside {MIN_DEADLINE_MS}..={max_ms} (limits.queryTimeoutMs)"
                    ),
                )
                .hint("ask for a shorter deadline, or raise limits.queryTimeoutMs"));
            }
        };
        let cap = self.limits.max_rows;
        let max_rows = match req.max_rows {
            None => cap,
            Some(n) if n >= 1 && n <= cap as u64 => n as usize,
            Some(n) => {
                return Err(ApiError::new(
                    ErrorKind::LimitExceeded,
                    format!("max_rows {n} is outside 1..={cap} (limits.maxRows)"),
                )
                .hint("page with LIMIT/OFFSET, or raise limits.maxRows"));
            }
        };
        let mut query = Query::new(req.sql.clone())
            .params(params)
            .timeout(deadline)
            .max_rows(max_rows);
        query.id = qid;
        Ok(Prepared { id, query })
    }

    /// Runs a prepared request on the worker of the index at `index_path`, waiting its
    /// turn behind the requests before it.
    pub fn execute(&self, index_path: &Path, p: Prepared) -> Result<SqlAnswer, ApiError> {
        let slot = self.slot(index_path);
        {
            let mut ids = lock(&slot.ids);
            if ids.contains_key(&p.id) {
                return Err(ApiError::new(
                    ErrorKind::QueryIdInUse,
                    format!("a query with id `{}` is already running or queued", p.id),
                )
                .hint("choose another id, or leave `id` out to have one generated"));
            }
            ids.insert(p.id.clone(), p.query.id);
        }
        let result = self
            .engine(&slot, index_path)
            .and_then(|engine| engine.execute(&p.query).map_err(|e| self.error(e)));
        lock(&slot.ids).remove(&p.id);
        let r = result?;
        Ok(SqlAnswer {
            id: p.id,
            row_count: r.rows.len(),
            columns: r.columns,
            rows: r.rows,
            truncated: r.truncated,
            elapsed_ms: r.elapsed.as_secs_f64() * 1000.0,
        })
    }

    /// Cancels the query `id` of the index at `index_path`: a queued one is removed,
    /// the running one is killed with its worker. An id that is neither is
    /// `unknown_query`.
    pub fn cancel(&self, index_path: &Path, id: &str) -> Result<CancelAnswer, ApiError> {
        let unknown = || {
            ApiError::new(
                ErrorKind::UnknownQuery,
                format!("no query with id `{id}` is running or queued in this workspace"),
            )
            .hint("it may have finished already; an answer carries its query's id")
        };
        let slot = lock(&self.slots).get(index_path).cloned();
        let Some(slot) = slot else {
            return Err(unknown());
        };
        let Some(qid) = lock(&slot.ids).get(id).copied() else {
            return Err(unknown());
        };
        match cancel_in(&slot, qid) {
            Some(cancelled) => Ok(CancelAnswer {
                id: id.to_string(),
                cancelled,
            }),
            None => Err(unknown()),
        }
    }

    /// The queries running and queued on the index at `index_path`.
    pub fn in_flight(&self, index_path: &Path) -> QueriesInFlight {
        let Some(slot) = lock(&self.slots).get(index_path).cloned() else {
            return QueriesInFlight::default();
        };
        let Some(engine) = lock(&slot.engine).as_ref().map(|s| s.engine.clone()) else {
            return QueriesInFlight::default();
        };
        let now = engine.in_flight();
        let ids = lock(&slot.ids);
        let name = |qid: QueryId| {
            ids.iter()
                .find(|(_, q)| **q == qid)
                .map(|(id, _)| id.clone())
        };
        QueriesInFlight {
            running: now.running.and_then(name),
            queued: now.queued.into_iter().filter_map(name).collect(),
        }
    }

    /// Cancels engine request `qid` wherever it is (what a dropped request does).
    pub fn cancel_query(&self, qid: QueryId) {
        let slots: Vec<Arc<Slot>> = lock(&self.slots).values().cloned().collect();
        for slot in slots {
            if lock(&slot.ids).values().any(|q| *q == qid) {
                cancel_in(&slot, qid);
                return;
            }
        }
    }

    /// Stops everything: queued and running queries fail (`interrupted`), every worker
    /// is killed, and later requests are refused.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let slots: Vec<Arc<Slot>> = lock(&self.slots).drain().map(|(_, s)| s).collect();
        for slot in slots {
            if let Some(started) = lock(&slot.engine).take() {
                started.engine.close();
            }
        }
    }

    /// The pid of the worker of the index at `index_path`, while one runs.
    pub fn worker_pid(&self, index_path: &Path) -> Option<u32> {
        let slot = lock(&self.slots).get(index_path).cloned()?;
        let engine = lock(&slot.engine).as_ref()?.engine.clone();
        engine.worker_pid()
    }

    fn slot(&self, index_path: &Path) -> Arc<Slot> {
        lock(&self.slots)
            .entry(index_path.to_path_buf())
            .or_insert_with(|| {
                Arc::new(Slot {
                    engine: Mutex::new(None),
                    ids: Mutex::new(HashMap::new()),
                })
            })
            .clone()
    }

    /// The slot's engine, started now if there is none or the index file was
    /// replaced since. Callers arriving together share one start (the slot's lock).
    fn engine(&self, slot: &Slot, index_path: &Path) -> Result<Arc<QueryEngine>, ApiError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(stopping());
        }
        let file = match std::fs::metadata(index_path) {
            Ok(m) => (m.dev(), m.ino()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ApiError::new(
                    ErrorKind::NoIndex,
                    format!("no index at {}", index_path.display()),
                )
                .hint("run `loci index` in the workspace first"));
            }
            Err(e) => {
                return Err(ApiError::new(
                    ErrorKind::Storage,
                    format!("cannot read {}: {e}", index_path.display()),
                ));
            }
        };
        let mut current = lock(&slot.engine);
        if let Some(started) = current.as_ref() {
            if started.file == file {
                return Ok(started.engine.clone());
            }
            // A rebuild replaced the file: the old worker reads the old one.
            started.engine.close();
        }
        let cfg = WorkerConfig::new(&self.program, index_path).cancel_grace(Duration::ZERO);
        let engine = Arc::new(QueryEngine::worker(cfg).map_err(|e| self.error(e))?);
        *current = Some(Started {
            engine: engine.clone(),
            file,
        });
        Ok(engine)
    }

    fn error(&self, e: QueryError) -> ApiError {
        // Once closing, whatever a request in flight sees (its engine closed, its worker
        // killed, its request cancelled by the close) is the stop, and says so.
        let in_flight_at_stop = matches!(
            e,
            QueryError::Closed(_) | QueryError::Cancelled(_) | QueryError::WorkerKilled(_)
        );
        match e {
            _ if in_flight_at_stop && self.closed.load(Ordering::SeqCst) => stopping(),
            other => other.into(),
        }
    }
}

impl Drop for SqlService {
    fn drop(&mut self) {
        self.close();
    }
}

fn stopping() -> ApiError {
    ApiError::new(ErrorKind::Interrupted, "the server is stopping").hint("retry once it is back")
}

/// How long a cancel waits for a request that is registered but has not reached the
/// engine's queue yet (microseconds, in practice).
const ENTER_WAIT: Duration = Duration::from_millis(200);

/// Cancels `qid` in `slot`'s engine; `None` once it is no longer there.
fn cancel_in(slot: &Slot, qid: QueryId) -> Option<CancelledWhere> {
    let until = Instant::now() + ENTER_WAIT;
    loop {
        let engine = lock(&slot.engine).as_ref().map(|s| s.engine.clone());
        if let Some(engine) = engine {
            let queued = engine.in_flight().queued.contains(&qid);
            if engine.cancel(qid) {
                return Some(if queued {
                    CancelledWhere::Queued
                } else {
                    CancelledWhere::Running
                });
            }
        }
        // Registered but not yet in the engine (or just finished): look again.
        if !lock(&slot.ids).values().any(|q| *q == qid) || Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn valid_id(id: &str) -> Result<String, ApiError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_QUERY_ID_BYTES
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(id.to_string())
    } else {
        Err(ApiError::new(
            ErrorKind::InvalidInput,
            format!(
                "query id {id:?} is not 1 to {MAX_QUERY_ID_BYTES} characters of A-Z a-z 0-9 . _ -"
            ),
        ))
    }
}

/// Cancels its request when dropped before [`CancelGuard::disarm`]: a front end holds
/// one across the request, so a caller that goes away (disconnect, timeout) stops its
/// statement at once.
pub struct CancelGuard {
    service: Arc<SqlService>,
    qid: QueryId,
    armed: bool,
}

impl CancelGuard {
    /// Guards request `qid` of `service`.
    pub fn new(service: Arc<SqlService>, qid: QueryId) -> CancelGuard {
        CancelGuard {
            service,
            qid,
            armed: true,
        }
    }

    /// The request finished: dropping the guard does nothing.
    pub fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.armed {
            self.service.cancel_query(self.qid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service() -> SqlService {
        SqlService::new(
            "/nonexistent/loci",
            SqlLimits {
                max_deadline: Duration::from_secs(10),
                max_rows: 1000,
            },
        )
    }

    fn req(json: serde_json::Value) -> SqlRequest {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn limits_and_ids_are_checked_before_anything_runs() {
        let s = service();
        let p = s
            .prepare(&req(serde_json::json!({"sql": "SELECT 1"})))
            .unwrap();
        assert_eq!(p.id, format!("q{}", p.query_id().0));
        assert_eq!(p.query.timeout, Duration::from_secs(10));
        assert_eq!(p.query.max_rows, 1000);
        for (body, kind) in [
            (
                serde_json::json!({"sql": "x", "deadline_ms": 10001}),
                ErrorKind::LimitExceeded,
            ),
            (
                serde_json::json!({"sql": "x", "deadline_ms": 99}),
                ErrorKind::LimitExceeded,
            ),
            (
                serde_json::json!({"sql": "x", "max_rows": 1001}),
                ErrorKind::LimitExceeded,
            ),
            (
                serde_json::json!({"sql": "x", "max_rows": 0}),
                ErrorKind::LimitExceeded,
            ),
            (
                serde_json::json!({"sql": "x", "id": ""}),
                ErrorKind::InvalidInput,
            ),
            (
                serde_json::json!({"sql": "x", "id": "a b"}),
                ErrorKind::InvalidInput,
            ),
            (
                serde_json::json!({"sql": "x", "id": "x".repeat(129)}),
                ErrorKind::InvalidInput,
            ),
            (
                serde_json::json!({"sql": "x", "params": 3}),
                ErrorKind::InvalidParams,
            ),
        ] {
            let e = s.prepare(&req(body.clone())).unwrap_err();
            assert_eq!(e.kind, kind, "{body}: {e}");
        }
        let p = s
            .prepare(&req(serde_json::json!({"sql": "x", "id": "mine-1.a_b", "deadline_ms": 100, "max_rows": 1})))
            .unwrap();
        assert_eq!(p.id, "mine-1.a_b");
        assert_eq!(p.query.timeout, Duration::from_millis(100));
    }

    #[test]
    fn cancelling_an_id_nobody_runs_is_unknown_query() {
        let e = service()
            .cancel(Path::new("/no/index.db"), "q1")
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnknownQuery);
    }
}
