//! Worker-mode cases, run against a worker program the including test crate
//! names with `program()`: this crate's stand-in (`tests/worker.rs`) and the
//! real `loci` binary (`crates/cli/tests/query_worker.rs`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use loci_query::{Params, Query, QueryEngine, QueryError, QueryResult, Value, WorkerConfig};
use loci_supervisor::Supervisor;

// The query crate's test helpers, as the including module names them.
use super::common;

use common::{HUGE_CTE, TestDb, eventually, wait_queued, wait_running, wait_stepping};

fn program() -> PathBuf {
    super::program()
}

fn config(db: &TestDb) -> WorkerConfig {
    WorkerConfig::new(program(), &db.path)
}

fn worker(db: &TestDb) -> Arc<QueryEngine> {
    Arc::new(QueryEngine::worker(config(db)).unwrap())
}

fn spawn(
    engine: &Arc<QueryEngine>,
    q: Query,
) -> std::thread::JoinHandle<(Result<QueryResult, QueryError>, Instant)> {
    let e = engine.clone();
    std::thread::spawn(move || {
        let r = e.execute(&q);
        (r, Instant::now())
    })
}

fn long() -> Query {
    Query::new(HUGE_CTE).timeout(Duration::from_secs(60))
}

/// Far above a cancel's cost (0.55 ms in `benches/query.rs`, which holds the speed
/// figure) and far below the statement's own 60 s timeout: what a loaded machine
/// cannot push a working cancel past, and a broken one never meets.
const STOPPED_WITHIN: Duration = Duration::from_secs(5);

#[test]
fn cancel_interrupts_the_running_statement_and_the_queued_one_runs() {
    let db = TestDb::small();
    // A grace no loaded machine exceeds: the interrupt, not the kill, must stop it.
    let engine = Arc::new(QueryEngine::worker(config(&db).cancel_grace(STOPPED_WITHIN)).unwrap());
    let pid = engine.worker_pid();
    let q = long();
    let id = q.id;
    let running = spawn(&engine, q);
    wait_running(&engine, id);
    // A cancel that arrived before the statement began stepping would find nothing
    // to interrupt and take the kill path instead.
    wait_stepping(&engine);
    let queued = Query::new("SELECT 42");
    let queued_id = queued.id;
    let queued = spawn(&engine, queued);
    wait_queued(&engine, queued_id);
    let t0 = Instant::now();
    assert!(engine.cancel(id));
    let (r, at) = running.join().unwrap();
    assert_eq!(r.unwrap_err().kind(), "cancelled");
    assert!(at - t0 < STOPPED_WITHIN, "stopped after {:?}", at - t0);
    // Interrupted, not killed: same worker, and the queued request ran.
    assert_eq!(
        queued.join().unwrap().0.unwrap().rows,
        vec![vec![Value::Integer(42)]]
    );
    assert_eq!(engine.worker_pid(), pid);
    assert_eq!(engine.workers_started(), 1);
    assert!(!engine.cancel(id), "a finished id");
    assert!(
        !engine.cancel(loci_query::QueryId(u64::MAX)),
        "an unknown id"
    );
}

#[test]
fn a_killed_worker_fails_the_queued_request_too_and_the_next_one_restarts_it() {
    let db = TestDb::small();
    // Zero grace: cancel kills the worker at once.
    let engine = Arc::new(QueryEngine::worker(config(&db).cancel_grace(Duration::ZERO)).unwrap());
    let q = long();
    let id = q.id;
    let running = spawn(&engine, q);
    wait_running(&engine, id);
    // A cancel that arrived before the statement began stepping would find nothing
    // to interrupt and take the kill path instead.
    wait_stepping(&engine);
    let queued = Query::new("SELECT 42");
    let queued_id = queued.id;
    let queued = spawn(&engine, queued);
    wait_queued(&engine, queued_id);
    let t0 = Instant::now();
    assert!(engine.cancel(id));
    let (r, at) = running.join().unwrap();
    let err = r.unwrap_err();
    assert_eq!(err.kind(), "cancelled", "{err}");
    assert!(err.to_string().contains("killed"), "{err}");
    assert!(at - t0 < STOPPED_WITHIN, "stopped after {:?}", at - t0);
    let err = queued.join().unwrap().0.unwrap_err();
    assert_eq!(err.kind(), "worker_killed", "{err}");
    assert!(err.to_string().contains("queued"), "{err}");
    assert_eq!(
        engine.execute(&Query::new("SELECT 7")).unwrap().rows,
        vec![vec![Value::Integer(7)]]
    );
    assert_eq!(engine.workers_started(), 2);
}

#[test]
fn cancelling_a_queued_id_leaves_the_running_statement_alone() {
    let db = TestDb::small();
    let engine = worker(&db);
    let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c";
    let first = Query::new(sql);
    let first_id = first.id;
    let running = spawn(&engine, first);
    wait_running(&engine, first_id);
    let queued = Query::new("SELECT 1");
    let queued_id = queued.id;
    let queued = spawn(&engine, queued);
    wait_queued(&engine, queued_id);
    let t0 = Instant::now();
    assert!(engine.cancel(queued_id));
    let (r, at) = queued.join().unwrap();
    assert_eq!(r.unwrap_err().kind(), "cancelled");
    let (r, finished) = running.join().unwrap();
    // Answered at once, not after the statement ahead of it.
    assert!(at < finished, "the cancel waited for the running statement");
    assert!(at - t0 < STOPPED_WITHIN, "stopped after {:?}", at - t0);
    assert_eq!(r.unwrap().rows, vec![vec![Value::Integer(3_000_000)]]);
    assert_eq!(engine.workers_started(), 1, "nothing was killed");
}

#[test]
fn after_a_deadline_kill_the_next_two_statements_succeed() {
    let db = TestDb::small();
    let engine = QueryEngine::worker(config(&db).cancel_grace(Duration::ZERO)).unwrap();
    let t0 = Instant::now();
    let err = engine
        .execute(&Query::new(HUGE_CTE).timeout(Duration::from_millis(150)))
        .unwrap_err();
    assert_eq!(err.kind(), "timeout", "{err}");
    assert!(
        t0.elapsed() < Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
    for i in 0..2 {
        let r = engine.execute(&Query::new(format!("SELECT {i}"))).unwrap();
        assert_eq!(r.rows, vec![vec![Value::Integer(i)]]);
    }
}

#[test]
fn the_watchdog_kills_a_worker_that_does_not_answer() {
    let db = TestDb::small();
    let engine = QueryEngine::worker(config(&db).watchdog(Duration::from_millis(150))).unwrap();
    let t0 = Instant::now();
    let err = engine.execute(&long()).unwrap_err();
    assert_eq!(err.kind(), "timeout", "{err}");
    assert!(err.to_string().contains("watchdog"), "{err}");
    assert!(t0.elapsed() < Duration::from_millis(300));
    for _ in 0..2 {
        assert!(engine.execute(&Query::new("SELECT 1")).is_ok());
    }
    assert_eq!(engine.workers_started(), 2);
}

#[test]
fn parallel_statements_after_a_kill_start_exactly_one_worker_and_none_remains_after_close() {
    let db = TestDb::small();
    let sup = Arc::new(Supervisor::new());
    let engine = Arc::new(
        QueryEngine::worker(
            config(&db)
                .supervisor(sup.clone())
                .cancel_grace(Duration::ZERO),
        )
        .unwrap(),
    );
    let q = long();
    let id = q.id;
    let running = spawn(&engine, q);
    wait_running(&engine, id);
    engine.cancel(id);
    assert_eq!(running.join().unwrap().0.unwrap_err().kind(), "cancelled");
    let callers: Vec<_> = (0..6)
        .map(|i| spawn(&engine, Query::new(format!("SELECT {i}"))))
        .collect();
    for (i, c) in callers.into_iter().enumerate() {
        assert_eq!(
            c.join().unwrap().0.unwrap().rows,
            vec![vec![Value::Integer(i as i64)]]
        );
    }
    assert_eq!(
        engine.workers_started(),
        2,
        "one restart shared by every caller"
    );
    assert!(
        eventually(Duration::from_secs(2), || sup.live_children() == 1),
        "{}",
        sup.live_children()
    );
    engine.close();
    assert!(
        eventually(Duration::from_secs(2), || sup.live_children() == 0),
        "{}",
        sup.live_children()
    );
}

#[test]
fn close_during_a_long_statement_returns_at_once() {
    let db = TestDb::small();
    let sup = Arc::new(Supervisor::new());
    let engine = Arc::new(QueryEngine::worker(config(&db).supervisor(sup.clone())).unwrap());
    let q = long();
    let id = q.id;
    let running = spawn(&engine, q);
    wait_running(&engine, id);
    let queued = Query::new("SELECT 1");
    let queued_id = queued.id;
    let queued = spawn(&engine, queued);
    wait_queued(&engine, queued_id);
    let t0 = Instant::now();
    engine.close();
    // Not held by the 60 s statement.
    assert!(
        t0.elapsed() < STOPPED_WITHIN,
        "close took {:?}",
        t0.elapsed()
    );
    let (r, _) = running.join().unwrap();
    assert_eq!(r.unwrap_err().kind(), "closed");
    assert_eq!(queued.join().unwrap().0.unwrap_err().kind(), "closed");
    assert!(eventually(Duration::from_secs(2), || sup.live_children() == 0));
    assert_eq!(
        engine.execute(&Query::new("SELECT 1")).unwrap_err().kind(),
        "closed"
    );
}

#[test]
fn hundred_thousand_rows_with_a_blob_and_a_64_bit_integer_come_back_exact() {
    let db = TestDb::rows(100_000);
    let q = || Query::new("SELECT id, data, big, name FROM r ORDER BY id").max_rows(100_000);
    let expected = QueryEngine::in_process(&db.path)
        .unwrap()
        .execute(&q())
        .unwrap();
    let got = worker(&db).execute(&q()).unwrap();
    assert_eq!(got.rows.len(), 100_000);
    assert!(!got.truncated);
    assert_eq!(got.columns, expected.columns);
    assert_eq!(got.rows, expected.rows);
    assert_eq!(got.rows[0][2], Value::Integer(i64::MAX - 1_000_003));
    assert!(matches!(&got.rows[99_999][1], Value::Blob(b) if b.len() == 16));
}

#[test]
fn multibyte_text_over_64k_round_trips_as_literal_and_as_bound_parameter() {
    let text = common::multibyte_text();
    assert!(text.len() > 64 * 1024);
    let mut literal_text = String::new();
    for c in text.chars().filter(|c| *c != '\'') {
        if literal_text.len() > 66 * 1024 {
            break;
        }
        literal_text.push(c);
    }
    assert!(literal_text.len() > 64 * 1024 && literal_text.len() < loci_query::MAX_SQL_BYTES - 100);
    let db = TestDb::new("CREATE TABLE m(t TEXT)");
    {
        let c = loci_store::rusqlite::Connection::open(&db.path).unwrap();
        c.execute("INSERT INTO m VALUES (?1)", [&text]).unwrap();
    }
    let engine = worker(&db);
    let r = engine.execute(&Query::new("SELECT t FROM m")).unwrap();
    assert_eq!(
        r.rows,
        vec![vec![Value::Text(text.clone())]],
        "stored text read back"
    );
    let r = engine
        .execute(
            &Query::new("SELECT ?1, ?1 = (SELECT t FROM m)")
                .params(Params::Positional(vec![Value::Text(text.clone())])),
        )
        .unwrap();
    assert_eq!(
        r.rows,
        vec![vec![Value::Text(text.clone()), Value::Integer(1)]],
        "bound parameter"
    );
    let r = engine
        .execute(&Query::new(format!("SELECT '{literal_text}'")))
        .unwrap();
    assert_eq!(
        r.rows,
        vec![vec![Value::Text(literal_text.clone())]],
        "literal"
    );
}

#[test]
fn write_attempts_are_refused_through_the_worker_and_nothing_changes() {
    let db = TestDb::small();
    let elsewhere = tempfile::tempdir().unwrap();
    let before = db.snapshot();
    let engine = worker(&db);
    let target = elsewhere.path().join("x.db");
    for (sql, kind) in [
        (
            "INSERT INTO t(name) VALUES ('x')".to_string(),
            "not_read_only",
        ),
        ("UPDATE t SET name = 'x'".into(), "not_read_only"),
        ("DELETE FROM t".into(), "not_read_only"),
        ("DROP TABLE t".into(), "not_read_only"),
        ("CREATE TABLE u(x)".into(), "not_read_only"),
        ("PRAGMA user_version = 3".into(), "not_read_only"),
        ("PRAGMA query_only = 0".into(), "not_read_only"),
        (
            format!("ATTACH '{}' AS y", target.display()),
            "not_read_only",
        ),
        (
            format!("VACUUM INTO '{}'", target.display()),
            "not_read_only",
        ),
        ("SELECT 1; DELETE FROM t".into(), "multiple_statements"),
        ("SELEC 1".into(), "syntax"),
    ] {
        let err = engine.execute(&Query::new(sql.as_str())).unwrap_err();
        assert_eq!(err.kind(), kind, "{sql}: {err}");
    }
    assert!(!target.exists());
    engine.close();
    assert_eq!(db.snapshot(), before);
}

#[test]
fn the_worker_gets_a_minimal_environment() {
    let db = TestDb::small();
    let engine = worker(&db);
    let pid = engine.worker_pid().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let names: Vec<String> = environ
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| {
            String::from_utf8_lossy(v)
                .split('=')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    for name in &names {
        assert!(
            ["LOCI_AUTO_WATCH", "LOCI_LOG"].contains(&name.as_str()),
            "inherited {name}"
        );
    }
    assert!(names.iter().any(|n| n == "LOCI_AUTO_WATCH"));
}

#[test]
fn worker_capabilities_and_a_missing_database() {
    let db = TestDb::small();
    let engine = worker(&db);
    let c = engine.capabilities();
    assert!(c.supports_cancel && !c.blocks_caller_while_running);
    assert_eq!(engine.mode(), "worker");
    let missing = db.dir.path().join("missing.db");
    let err = QueryEngine::worker(WorkerConfig::new(program(), &missing)).unwrap_err();
    assert_eq!(err.kind(), "open", "{err}");
    assert!(!missing.exists());
}

#[test]
fn the_worker_reads_requests_on_its_stdin_pipe_and_answers_on_stdout() {
    let db = TestDb::small();
    let engine = worker(&db);
    let pid = engine.worker_pid().unwrap();
    for fd in [0, 1] {
        let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).unwrap();
        assert!(
            target.to_string_lossy().starts_with("pipe:"),
            "fd {fd} is {target:?}"
        );
    }
    let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let args: Vec<&[u8]> = args.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
    assert_eq!(args.len(), 4, "worker --db PATH and nothing else");
    assert_eq!(
        engine.execute(&Query::new("SELECT 7")).unwrap().rows,
        vec![vec![Value::Integer(7)]]
    );
}
