//! Deadlines, cancel, the queue and close for the in-process engine.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{HUGE_CTE, TestDb, wait_queued, wait_running};
use loci_query::{Query, QueryEngine, QueryError, QueryResult, Value};

/// Runs `q` on another thread; the handle yields the result and when it came.
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

#[test]
fn cancelling_a_running_statement_stops_it_within_50ms_and_the_queued_one_then_runs() {
    let db = TestDb::small();
    let engine = Arc::new(QueryEngine::in_process(&db.path).unwrap());
    let long = Query::new(HUGE_CTE).timeout(Duration::from_secs(60));
    let long_id = long.id;
    let running = spawn(&engine, long);
    wait_running(&engine, long_id);
    let queued = Query::new("SELECT 42");
    let queued_id = queued.id;
    let queued = spawn(&engine, queued);
    wait_queued(&engine, queued_id);
    let t0 = Instant::now();
    assert!(engine.cancel(long_id));
    let (r, at) = running.join().unwrap();
    assert_eq!(r.unwrap_err().kind(), "cancelled");
    let stopped = at - t0;
    assert!(
        stopped < Duration::from_millis(50),
        "stopped after {stopped:?}"
    );
    // Only interrupted: the request queued behind it runs.
    let (r, _) = queued.join().unwrap();
    assert_eq!(r.unwrap().rows, vec![vec![Value::Integer(42)]]);
    // Finished and unknown ids: false.
    assert!(!engine.cancel(long_id));
    assert!(!engine.cancel(loci_query::QueryId(u64::MAX)));
}

#[test]
fn cancelling_a_queued_id_leaves_the_running_statement_alone() {
    let db = TestDb::small();
    let engine = Arc::new(QueryEngine::in_process(&db.path).unwrap());
    // About half a second of work, with a known answer.
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
    assert!(
        at - t0 < Duration::from_millis(50),
        "a queued cancel returns at once"
    );
    let (r, _) = running.join().unwrap();
    assert_eq!(r.unwrap().rows, vec![vec![Value::Integer(3_000_000)]]);
}

#[test]
fn a_deadline_stops_a_long_statement_with_timeout() {
    let db = TestDb::small();
    let engine = QueryEngine::in_process(&db.path).unwrap();
    let t0 = Instant::now();
    let err = engine
        .execute(&Query::new(HUGE_CTE).timeout(Duration::from_millis(100)))
        .unwrap_err();
    assert_eq!(err.kind(), "timeout", "{err}");
    let took = t0.elapsed();
    assert!(took < Duration::from_millis(160), "took {took:?}");
    // The next two statements succeed.
    for _ in 0..2 {
        assert_eq!(
            engine.execute(&Query::new("SELECT 1")).unwrap().rows.len(),
            1
        );
    }
}

#[test]
fn a_busy_wait_never_outlasts_the_deadline() {
    let db = TestDb::small();
    // A writer holding an exclusive lock (rollback journal: readers wait).
    let writer = loci_store::rusqlite::Connection::open(&db.path).unwrap();
    writer
        .execute_batch("BEGIN EXCLUSIVE; UPDATE t SET name = 'locked';")
        .unwrap();
    let engine = QueryEngine::in_process(&db.path).unwrap();
    let t0 = Instant::now();
    let err = engine
        .execute(&Query::new("SELECT * FROM t").timeout(Duration::from_millis(300)))
        .unwrap_err();
    let took = t0.elapsed();
    assert!(
        took < Duration::from_millis(300),
        "busy wait took {took:?}: {err}"
    );
    assert!(err.to_string().contains("locked"), "{err}");
    writer.execute_batch("ROLLBACK").unwrap();
    assert!(engine.execute(&Query::new("SELECT * FROM t")).is_ok());
}

#[test]
fn close_during_a_long_statement_returns_at_once() {
    let db = TestDb::small();
    let engine = Arc::new(QueryEngine::in_process(&db.path).unwrap());
    let long = Query::new(HUGE_CTE).timeout(Duration::from_secs(60));
    let long_id = long.id;
    let running = spawn(&engine, long);
    wait_running(&engine, long_id);
    let queued = Query::new("SELECT 1");
    let queued_id = queued.id;
    let queued = spawn(&engine, queued);
    wait_queued(&engine, queued_id);
    let t0 = Instant::now();
    engine.close();
    assert!(t0.elapsed() < Duration::from_millis(50));
    let (r, at) = running.join().unwrap();
    assert!(at - t0 < Duration::from_millis(50));
    assert_eq!(r.unwrap_err().kind(), "cancelled");
    assert_eq!(queued.join().unwrap().0.unwrap_err().kind(), "closed");
    assert_eq!(
        engine.execute(&Query::new("SELECT 1")).unwrap_err().kind(),
        "closed"
    );
}

#[test]
fn in_process_capabilities() {
    let db = TestDb::small();
    let engine = QueryEngine::in_process(&db.path).unwrap();
    let c = engine.capabilities();
    assert!(c.supports_cancel && c.blocks_caller_while_running);
    assert_eq!(engine.mode(), "in-process");
}
