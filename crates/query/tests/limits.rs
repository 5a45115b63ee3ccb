//! Resource limits and deadlines on statements made of few, heavy steps, on
//! both engines: every probe stops within twice its deadline, a limit is a
//! clear `limit_exceeded` naming it, and no statement can crash a thread or a
//! worker by recursing.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{HUGE_CTE, TestDb};
use loci_query::{Query, QueryEngine, QueryError, QueryResult, Value, WorkerConfig};

const DEADLINE: Duration = Duration::from_millis(300);

fn worker_program() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loci-query-worker"))
}

/// Both engines over `db`, each with a name.
fn engines(db: &TestDb) -> Vec<(&'static str, QueryEngine)> {
    vec![
        ("in-process", QueryEngine::in_process(&db.path).unwrap()),
        (
            "worker",
            QueryEngine::worker(WorkerConfig::new(worker_program(), &db.path)).unwrap(),
        ),
    ]
}

fn columns(n: usize, expr: &str) -> String {
    format!("SELECT {}", vec![expr; n].join(", "))
}

/// `n` heavy calls whose results are summed as they come, so memory stays at
/// one or two values (the heap limit is per process, and tests run at once).
fn summed(n: usize, expr: &str) -> String {
    format!("SELECT {}", vec![expr; n].join(" + "))
}

/// A chain of `n` CTEs, each selecting from the one before: costly to compile.
fn cte_chain(n: usize) -> String {
    let mut s = String::from("WITH c0 AS (SELECT 1 AS x)");
    for i in 1..n {
        s.push_str(&format!(", c{i} AS (SELECT x FROM c{})", i - 1));
    }
    s + &format!(" SELECT x FROM c{}", n - 1)
}

/// Statements whose work is one or a few long steps, or long compilation.
fn probes() -> Vec<(&'static str, String)> {
    vec![
        (
            "16 huge randomblobs",
            columns(16, "length(randomblob(5e8))"),
        ),
        (
            "many 16 MB randomblobs",
            summed(40, "length(randomblob(16000000))"),
        ),
        (
            "hex of zeroblobs",
            summed(30, "length(hex(zeroblob(8000000)))"),
        ),
        (
            "replace blow-up",
            summed(
                30,
                "length(replace(printf('%.*c', 16000, 'a'), 'a', printf('%.*c', 1000, 'b')))",
            ),
        ),
        (
            "printf blow-up",
            summed(30, "length(printf('%.*c', 16000000, 'x'))"),
        ),
        ("recursive CTE", HUGE_CTE.to_string()),
        (
            "big sort",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000000) \
             SELECT x FROM c ORDER BY random() LIMIT 1"
                .into(),
        ),
        (
            "costly GLOB",
            "SELECT printf('%.*c', 1000000, 'a') GLOB ('*' || printf('%.*c', 900, 'a') || 'b*')"
                .into(),
        ),
        (
            "costly LIKE",
            "SELECT printf('%.*c', 1000000, 'a') LIKE ('%' || printf('%.*c', 900, 'a') || 'b%')"
                .into(),
        ),
        (
            "group_concat blow-up",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) \
             SELECT length(group_concat(randomblob(1000000))) FROM c"
                .into(),
        ),
        ("long compilation", cte_chain(2500)),
    ]
}

#[test]
fn every_heavy_probe_stops_within_twice_its_deadline_on_both_engines() {
    let db = TestDb::small();
    let mut late = Vec::new();
    for (name, sql) in probes() {
        for (engine_name, engine) in engines(&db) {
            let t0 = Instant::now();
            let r = engine.execute(&Query::new(sql.clone()).timeout(DEADLINE));
            let took = t0.elapsed();
            let outcome = match &r {
                Ok(_) => "ok".to_string(),
                Err(e) => e.kind().to_string(),
            };
            assert!(
                matches!(outcome.as_str(), "ok" | "timeout" | "limit_exceeded"),
                "{name} on {engine_name}: {r:?}"
            );
            if took >= 2 * DEADLINE {
                late.push(format!("{name} on {engine_name}: {outcome} after {took:?}"));
            }
        }
    }
    assert!(late.is_empty(), "past twice the deadline: {late:#?}");
}

fn expect_limit(r: Result<QueryResult, QueryError>, names: &str, what: &str) {
    match r {
        Err(QueryError::LimitExceeded(m)) => assert!(m.contains(names), "{what}: {m}"),
        other => panic!("{what}: expected limit_exceeded naming {names}, got {other:?}"),
    }
}

#[test]
fn going_past_a_limit_is_limit_exceeded_naming_it_on_both_engines() {
    let db = TestDb::small();
    for (engine_name, engine) in engines(&db) {
        let run = |sql: &str| engine.execute(&Query::new(sql).timeout(Duration::from_secs(10)));
        let what = |s: &str| format!("{s} on {engine_name}");
        expect_limit(
            run(&columns(16, "length(randomblob(5e8))")),
            "SQLITE_LIMIT_LENGTH",
            &what("randomblob"),
        );
        expect_limit(
            run("SELECT zeroblob(100000000)"),
            "SQLITE_LIMIT_LENGTH",
            &what("zeroblob"),
        );
        expect_limit(
            run(
                "SELECT length(replace(printf('%.*c', 100000, 'a'), 'a', printf('%.*c', 1000, 'b')))",
            ),
            "SQLITE_LIMIT_LENGTH",
            &what("replace"),
        );
        // printf past the limit gives NULL (SQLite's choice), at once.
        assert_eq!(
            run("SELECT length(printf('%.*c', 100000000, 'x'))")
                .unwrap()
                .rows,
            vec![vec![Value::Null]],
            "{engine_name}"
        );
        expect_limit(
            run(&format!("SELECT 'x' LIKE '{}'", "%x".repeat(600))),
            "SQLITE_LIMIT_LIKE_PATTERN_LENGTH",
            &what("LIKE pattern"),
        );
        expect_limit(
            run(&format!("SELECT 1{}", "+1".repeat(2000))),
            "SQLITE_LIMIT_EXPR_DEPTH",
            &what("expression depth"),
        );
        expect_limit(
            run(&format!(
                "SELECT * FROM {}t{}",
                "(SELECT * FROM ".repeat(300),
                ")".repeat(300)
            )),
            "parentheses 300 deep; the limit is 256",
            &what("nesting"),
        );
        // The answer's byte budget: 10 rows of 1 MB against 5 MB.
        let q = Query::new(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) \
             SELECT randomblob(1000000) FROM c",
        )
        .max_bytes(5_000_000);
        expect_limit(engine.execute(&q), "max_bytes", &what("answer bytes"));
        // Within the budget, the same rows come back.
        let r = engine.execute(&q.clone().max_bytes(20_000_000)).unwrap();
        assert_eq!(r.rows.len(), 10, "{engine_name}");
        // The engine is still usable after each of these.
        assert_eq!(
            run("SELECT 1").unwrap().rows,
            vec![vec![Value::Integer(1)]],
            "{engine_name}"
        );
    }
}

/// Statements that make SQLite recurse deeply: a GLOB with 20,000 wildcards
/// (it overflowed the worker's thread stack), nesting and expression trees at
/// and past their limits.
fn deep_statements() -> Vec<String> {
    vec![
        "SELECT printf('%.*c',50000,'a') GLOB (replace(printf('%.*c',20000,'x'),'x','*a')||'b')"
            .into(),
        "SELECT printf('%.*c',50000,'a') LIKE (replace(printf('%.*c',20000,'x'),'x','%a')||'b')"
            .into(),
        // Just within the pattern limit: 499 wildcards.
        "SELECT printf('%.*c',50000,'a') GLOB (replace(printf('%.*c',499,'x'),'x','*a')||'b')"
            .into(),
        format!(
            "SELECT * FROM {}t{}",
            "(SELECT * FROM ".repeat(6000),
            ")".repeat(6000)
        ),
        format!(
            "SELECT count(*) FROM {}t{}",
            "(SELECT * FROM ".repeat(250),
            ")".repeat(250)
        ),
        format!("SELECT {}1{}", "(".repeat(49_000), ")".repeat(49_000)),
        format!("SELECT {}1{}", "(SELECT ".repeat(990), ")".repeat(990)),
        format!("SELECT 1{}", "+1".repeat(990)),
        format!("SELECT {}1", "~".repeat(90_000)),
        format!(
            "SELECT {}1{}",
            "CASE WHEN 1 THEN ".repeat(990),
            " END".repeat(990)
        ),
        format!("SELECT json_valid('{}')", "[".repeat(95_000)),
        cte_chain(2500),
    ]
}

#[test]
fn deeply_recursive_statements_crash_neither_engine_nor_a_small_stack_caller() {
    let db = TestDb::small();
    for (engine_name, engine) in engines(&db) {
        let engine = Arc::new(engine);
        let pid = engine.worker_pid();
        for sql in deep_statements() {
            let e = engine.clone();
            let q = Query::new(sql.clone()).timeout(Duration::from_secs(20));
            // The caller's own stack is small: statements must not run on it.
            let r = std::thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || e.execute(&q))
                .unwrap()
                .join()
                .expect("the calling thread survives");
            let short = &sql[..sql.len().min(60)];
            if let Err(e) = &r {
                assert!(
                    matches!(e.kind(), "limit_exceeded" | "sqlite"),
                    "{short} on {engine_name}: {e:?}"
                );
            }
            assert_eq!(engine.worker_pid(), pid, "{short} killed the worker");
        }
        assert_eq!(engine.workers_started(), pid.map_or(0, |_| 1));
        assert_eq!(
            engine.execute(&Query::new("SELECT 2")).unwrap().rows,
            vec![vec![Value::Integer(2)]]
        );
    }
}

#[test]
fn a_statement_past_sqlites_heap_limit_fails_limit_exceeded_and_the_worker_lives_on() {
    let db = TestDb::small();
    let engine = QueryEngine::worker(WorkerConfig::new(worker_program(), &db.path)).unwrap();
    let pid = engine.worker_pid();
    // 70 live values of 16 MB each: past the 1 GiB heap limit, each value
    // within the length limit.
    let r = engine.execute(
        &Query::new(columns(70, "printf('%.*c', 16000000, 'x')")).timeout(Duration::from_secs(60)),
    );
    expect_limit(r, "heap limit", "70 x 16 MB");
    assert_eq!(engine.worker_pid(), pid);
    assert_eq!(
        engine.execute(&Query::new("SELECT 3")).unwrap().rows,
        vec![vec![Value::Integer(3)]]
    );
}
