//! The parent side of worker mode: starts `loci worker` through the
//! supervisor, serializes requests through the [`Queue`], streams answers
//! back, and kills the worker when it does not stop (cancel grace, deadline,
//! watchdog) or when the engine closes.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use loci_supervisor::{
    AUTO_WATCH_VAR, EnvPolicy, Handle, Outcome, SpawnSpec, StdinWriter, Supervisor,
};

use crate::error::QueryError;
use crate::exec::{self, Query, QueryId, QueryResult};
use crate::protocol::{Answer, LineSplitter, Op, Request};
use crate::queue::{Cancelled, Queue};

/// How a worker engine starts and bounds its worker process.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The `loci` binary (its hidden `worker` subcommand is run).
    pub program: PathBuf,
    /// The database file the worker opens read-only; a relative path is
    /// taken relative to this process's working directory (the worker's is
    /// `/`).
    pub db: PathBuf,
    /// The supervisor that spawns the worker; a private one when `None`.
    pub supervisor: Option<Arc<Supervisor>>,
    /// After a cancel (or a missed deadline) the worker gets this long to
    /// answer before it is killed. Zero kills at once.
    pub cancel_grace: Duration,
    /// When set, a request that gets no answer within this bound kills the
    /// worker, whatever its own deadline says.
    pub watchdog: Option<Duration>,
    /// The worker's supervisor budget; the next request after it expires
    /// starts a new worker.
    pub max_lifetime: Duration,
    /// How long a worker may take to open the database and say it is ready.
    pub startup_timeout: Duration,
}

impl WorkerConfig {
    /// Defaults: a private supervisor, 30 ms cancel grace, no watchdog, 24 h
    /// lifetime, 10 s startup.
    pub fn new(program: impl Into<PathBuf>, db: impl Into<PathBuf>) -> WorkerConfig {
        WorkerConfig {
            program: program.into(),
            db: db.into(),
            supervisor: None,
            cancel_grace: Duration::from_millis(30),
            watchdog: None,
            max_lifetime: Duration::from_secs(24 * 3600),
            startup_timeout: Duration::from_secs(10),
        }
    }

    /// Spawns through `sup` (to share it, or to count its children).
    pub fn supervisor(mut self, sup: Arc<Supervisor>) -> Self {
        self.supervisor = Some(sup);
        self
    }

    /// Sets [`WorkerConfig::cancel_grace`].
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// Sets [`WorkerConfig::watchdog`].
    pub fn watchdog(mut self, bound: Duration) -> Self {
        self.watchdog = Some(bound);
        self
    }
}

/// The environment a worker gets: nothing inherited (no tokens, no keys),
/// only the auto-watch pin and, for diagnostics, `LOCI_LOG` when set.
pub fn worker_env() -> EnvPolicy {
    let mut env = EnvPolicy::clear_with([(AUTO_WATCH_VAR, "0")]);
    if let Some(log) = std::env::var_os("LOCI_LOG") {
        env = env.pin("LOCI_LOG", log);
    }
    env
}

enum Msg {
    /// One answer line, decoded on the supervisor's reader thread as it
    /// streams in (or why it could not be).
    Answer(Result<Answer, String>),
    Exited(String),
    Wake,
}

/// One live worker process.
struct Proc {
    handle: Handle,
    /// The worker's stdin; requests are written whole under this lock.
    writer: Mutex<StdinWriter>,
    rx: Mutex<Receiver<Msg>>,
    wake: Sender<Msg>,
}

pub(crate) struct WorkerClient {
    cfg: WorkerConfig,
    sup: Arc<Supervisor>,
    queue: Queue,
    slot: Mutex<Option<Arc<Proc>>>,
    /// The running request's cancel time, set by `cancel`.
    cancel_at: Mutex<Option<(QueryId, Instant)>>,
    starts: AtomicU64,
    closed: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn describe(o: &Outcome) -> String {
    let tail = String::from_utf8_lossy(&o.stderr.tail);
    let head = String::from_utf8_lossy(&o.stderr.head);
    let err = format!("{head}{tail}");
    let err = err.trim();
    if err.is_empty() {
        format!("worker pid {} ended ({})", o.pid, o.exit)
    } else {
        format!("worker pid {} ended ({}): {err}", o.pid, o.exit)
    }
}

impl WorkerClient {
    pub(crate) fn in_flight(&self) -> crate::queue::InFlight {
        self.queue.in_flight()
    }

    pub(crate) fn start(mut cfg: WorkerConfig) -> Result<WorkerClient, QueryError> {
        // The worker runs in `/`: a relative name must mean what it means here.
        cfg.db = std::path::absolute(&cfg.db).map_err(|e| QueryError::Open {
            path: cfg.db.clone(),
            message: format!("cannot make the path absolute: {e}"),
        })?;
        let sup = cfg
            .supervisor
            .clone()
            .unwrap_or_else(|| Arc::new(Supervisor::new()));
        let client = WorkerClient {
            cfg,
            sup,
            queue: Queue::default(),
            slot: Mutex::new(None),
            cancel_at: Mutex::new(None),
            starts: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        };
        client.ensure()?;
        Ok(client)
    }

    /// Workers started so far (the first one included).
    pub(crate) fn starts(&self) -> u64 {
        self.starts.load(Ordering::SeqCst)
    }

    /// The live worker's pid.
    pub(crate) fn pid(&self) -> Option<u32> {
        lock(&self.slot)
            .as_ref()
            .filter(|p| !p.handle.is_finished())
            .map(|p| p.handle.pid())
    }

    /// The live worker, or a new one. Only the request holding the queue's
    /// turn (or the constructor) calls this, under the slot lock, so callers
    /// arriving together after a kill share one start.
    fn ensure(&self) -> Result<Arc<Proc>, QueryError> {
        let mut slot = lock(&self.slot);
        if let Some(p) = slot.as_ref().filter(|p| !p.handle.is_finished()) {
            return Ok(p.clone());
        }
        *slot = None;
        let p = Arc::new(self.spawn()?);
        self.starts.fetch_add(1, Ordering::SeqCst);
        *slot = Some(p.clone());
        Ok(p)
    }

    fn spawn(&self) -> Result<Proc, QueryError> {
        let werr = |what: &str, e: &dyn std::fmt::Display| {
            QueryError::Worker(format!("cannot start the query worker: {what}: {e}"))
        };
        let (tx, rx) = mpsc::channel::<Msg>();
        let line_tx = tx.clone();
        let mut splitter = LineSplitter::default();
        let spec = SpawnSpec::new(&self.cfg.program)
            .arg("worker")
            .arg("--db")
            .arg(&self.cfg.db)
            .stdin_stream()
            .env(worker_env())
            .cwd("/")
            .budget(self.cfg.max_lifetime)
            .kill_grace(Duration::from_millis(50))
            // Killed by the kernel if loci dies, even by SIGKILL.
            .die_with_parent(true)
            .capture_cap(16 * 1024)
            .on_stdout(move |chunk| {
                splitter.push(chunk, |line| {
                    let _ = line_tx.send(Msg::Answer(crate::fastrows::decode(line)));
                });
                ControlFlow::Continue(())
            });
        let done_tx = tx.clone();
        let handle = self
            .sup
            .spawn_detached(spec, move |outcome| {
                let _ = done_tx.send(Msg::Exited(describe(&outcome)));
            })
            .map_err(|e| werr("spawn", &e))?;
        let until = Instant::now() + self.cfg.startup_timeout;
        let fail = |e: QueryError| {
            handle.cancel();
            e
        };
        let writer = handle
            .take_stdin()
            .ok_or_else(|| fail(werr("stdin", &"the supervisor gave no stdin stream")))?;
        // The worker answers id 0 once its connection is open.
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Msg::Answer(r)) => {
                    let r = r.map_err(|e| fail(werr("bad greeting", &e)))?;
                    if r.id != 0 {
                        continue;
                    }
                    if let Some(e) = r.error {
                        // The worker's message is its own `Open` error, which
                        // already names the path: keep only what SQLite said.
                        let prefix = format!("cannot open {} read-only: ", self.cfg.db.display());
                        let message = match e.message.strip_prefix(&prefix) {
                            Some(rest) => rest.to_string(),
                            None => e.message,
                        };
                        return Err(fail(QueryError::Open {
                            path: self.cfg.db.clone(),
                            message,
                        }));
                    }
                    break;
                }
                Ok(Msg::Exited(why)) => return Err(werr("exited", &why)),
                Ok(Msg::Wake) => {}
                Err(_) => return Err(fail(werr("startup", &"no greeting in time"))),
            }
        }
        tracing::debug!(pid = handle.pid(), "query worker ready");
        Ok(Proc {
            handle,
            writer: Mutex::new(writer),
            rx: Mutex::new(rx),
            wake: tx,
        })
    }

    /// Kills `proc` (if still current), and fails every queued request.
    fn kill(&self, proc: &Arc<Proc>, why: &str) {
        proc.handle.cancel();
        {
            let mut slot = lock(&self.slot);
            if slot.as_ref().is_some_and(|p| Arc::ptr_eq(p, proc)) {
                *slot = None;
            }
        }
        let failed = self.queue.fail_waiting(&QueryError::WorkerKilled(format!(
            "the query worker was killed ({why}) while this request was queued; submit it again"
        )));
        tracing::debug!(pid = proc.handle.pid(), why, failed, "query worker killed");
    }

    pub(crate) fn execute(&self, q: &Query) -> Result<QueryResult, QueryError> {
        let started = Instant::now();
        let deadline = started + q.timeout;
        let _turn = self
            .queue
            .enter(q.id, deadline, || exec::timeout_error(q.timeout))?;
        if self.closed.load(Ordering::SeqCst) {
            return Err(QueryError::Closed("the query engine was closed".into()));
        }
        let proc = self.ensure()?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        let req = Request {
            id: q.id.0,
            op: Op::Query,
            sql: Some(q.sql.clone()),
            params: serde_json::to_value(&q.params)
                .map_err(|e| QueryError::InvalidParams(e.to_string()))?,
            timeout_ms: Some((remaining.as_millis() as u64).max(1)),
            max_rows: Some(q.max_rows),
            max_bytes: Some(q.max_bytes),
            target: None,
        };
        let mut line = serde_json::to_vec(&req).expect("requests always serialize");
        line.push(b'\n');
        let sent_at;
        {
            // Checked under the writer lock, which `cancel` also takes: a
            // cancel either lands before (nothing is sent) or after the
            // request line.
            let mut w = lock(&proc.writer);
            let mut cancel_at = lock(&self.cancel_at);
            if cancel_at.is_some_and(|(id, _)| id == q.id) {
                *cancel_at = None;
                return Err(QueryError::Cancelled(format!(
                    "request {} was cancelled",
                    q.id
                )));
            }
            drop(cancel_at);
            if let Err(e) = w.write_all(&line) {
                drop(w);
                self.kill(&proc, "its stdin broke");
                return Err(QueryError::WorkerKilled(format!(
                    "cannot send request {} to the query worker: {e}",
                    q.id
                )));
            }
            sent_at = Instant::now();
        }
        let result = self.await_answer(&proc, q, started, deadline, sent_at);
        *lock(&self.cancel_at) = None;
        result
    }

    fn await_answer(
        &self,
        proc: &Arc<Proc>,
        q: &Query,
        started: Instant,
        deadline: Instant,
        sent_at: Instant,
    ) -> Result<QueryResult, QueryError> {
        let grace = self.cfg.cancel_grace;
        let rx = lock(&proc.rx);
        let mut rows = Vec::new();
        loop {
            let now = Instant::now();
            let cancelled_at = lock(&self.cancel_at)
                .filter(|(id, _)| *id == q.id)
                .map(|(_, t)| t);
            let by_deadline = deadline + grace;
            let by_cancel = cancelled_at.map(|t| t + grace);
            let by_watchdog = self.cfg.watchdog.map(|w| sent_at + w);
            let kill_at = [Some(by_deadline), by_cancel, by_watchdog]
                .into_iter()
                .flatten()
                .min()
                .expect("the deadline is always there");
            if now >= kill_at {
                let ms = grace.as_millis();
                let (why, err) = if by_cancel.is_some_and(|t| now >= t) {
                    let why = format!(
                        "request {} was cancelled and did not stop within {ms} ms",
                        q.id
                    );
                    (
                        why.clone(),
                        QueryError::Cancelled(format!("{why}; the worker was killed")),
                    )
                } else if by_watchdog.is_some_and(|t| now >= t) {
                    let why = format!(
                        "watchdog: no answer to request {} within {} ms",
                        q.id,
                        self.cfg.watchdog.unwrap_or_default().as_millis()
                    );
                    (
                        why.clone(),
                        QueryError::Timeout(format!("{why}; the worker was killed")),
                    )
                } else {
                    let why = format!(
                        "request {} ran past its deadline of {} ms",
                        q.id,
                        q.timeout.as_millis()
                    );
                    (
                        why.clone(),
                        QueryError::Timeout(format!("{why}; the worker was killed")),
                    )
                };
                self.kill(proc, &why);
                return Err(err);
            }
            match rx.recv_timeout(kill_at - now) {
                Ok(Msg::Answer(r)) => {
                    let r = match r {
                        Ok(r) => r,
                        Err(e) => {
                            self.kill(proc, "it broke the protocol");
                            return Err(QueryError::Worker(format!(
                                "unreadable answer from the query worker: {e}"
                            )));
                        }
                    };
                    if r.id != q.id.0 {
                        continue; // a cancel acknowledgement
                    }
                    if !r.ok {
                        let e = r.error.unwrap_or(crate::protocol::WireError {
                            kind: "worker".into(),
                            message: "failed without saying why".into(),
                        });
                        // The close's signal can interrupt the statement before it
                        // kills the worker: the worker then answers `cancelled`.
                        if e.kind == "cancelled" && self.closed.load(Ordering::SeqCst) {
                            return Err(closed_while_running(q.id));
                        }
                        return Err(QueryError::from_wire(&e.kind, e.message));
                    }
                    let batch = r.rows;
                    if rows.is_empty() {
                        rows = batch;
                    } else {
                        rows.extend(batch);
                    }
                    if !r.more {
                        return Ok(QueryResult {
                            columns: r.columns,
                            rows,
                            truncated: r.truncated,
                            elapsed: started.elapsed(),
                        });
                    }
                }
                Ok(Msg::Wake) | Err(RecvTimeoutError::Timeout) => {}
                Ok(Msg::Exited(why)) => {
                    self.kill(proc, &why);
                    if cancelled_at.is_some()
                        || lock(&self.cancel_at).is_some_and(|(id, _)| id == q.id)
                    {
                        return Err(QueryError::Cancelled(format!(
                            "request {} was cancelled; the worker was killed",
                            q.id
                        )));
                    }
                    if self.closed.load(Ordering::SeqCst) {
                        return Err(closed_while_running(q.id));
                    }
                    return Err(QueryError::WorkerKilled(format!(
                        "the query worker died while running request {}: {why}",
                        q.id
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.kill(proc, "its output ended");
                    return Err(QueryError::WorkerKilled(format!(
                        "the query worker went away while running request {}",
                        q.id
                    )));
                }
            }
        }
    }

    pub(crate) fn cancel(&self, id: QueryId) -> bool {
        let outcome = self.queue.cancel(id, || {
            let proc = lock(&self.slot).clone();
            let Some(proc) = proc else {
                *lock(&self.cancel_at) = Some((id, Instant::now()));
                return;
            };
            if self.cfg.cancel_grace.is_zero() {
                // No grace: the worker is killed at once. Asking it to interrupt
                // first would race the kill (a quick worker answers `cancelled`
                // before its reader wakes, and is kept).
                *lock(&self.cancel_at) = Some((id, Instant::now()));
                // Killed from here, not after the request's thread wakes: one thread
                // hop less between the cancel and the worker's end.
                proc.handle.cancel();
                let _ = proc.wake.send(Msg::Wake);
                return;
            }
            let mut w = lock(&proc.writer);
            *lock(&self.cancel_at) = Some((id, Instant::now()));
            let req = Request {
                id: QueryId::next().0,
                op: Op::Cancel,
                sql: None,
                params: serde_json::Value::Null,
                timeout_ms: None,
                max_rows: None,
                max_bytes: None,
                target: Some(id.0),
            };
            let mut line = serde_json::to_vec(&req).expect("requests always serialize");
            line.push(b'\n');
            let _ = w.write_all(&line);
            drop(w);
            let _ = proc.wake.send(Msg::Wake);
        });
        outcome != Cancelled::Unknown
    }

    /// Fails queued requests, kills the worker (a running request ends with
    /// `closed`) and returns without waiting for the process to be reaped.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.queue.close();
        if let Some(proc) = lock(&self.slot).take() {
            proc.handle.cancel();
        }
    }
}

/// What a request running when the engine was closed ends with.
fn closed_while_running(id: QueryId) -> QueryError {
    QueryError::Closed(format!(
        "the query engine was closed while request {id} ran"
    ))
}

impl Drop for WorkerClient {
    fn drop(&mut self) {
        self.close();
    }
}
