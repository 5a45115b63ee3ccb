//! Issue 4's targets: 100,000 rows through the worker in at most 1.5x the
//! in-process time, cancel-to-stopped within 50 ms, and at most 200 µs of
//! worker overhead per request on a trivial statement.
//!
//! The worker program is the real `loci` binary when `LOCI_BIN` names it
//! (`LOCI_BIN=target/release/loci cargo bench -p loci-query`), else this
//! crate's stand-in `loci-query-worker`, which runs the same worker code.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use loci_query::{Query, QueryEngine, WorkerConfig};

const HUGE_CTE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c";

fn program() -> PathBuf {
    match std::env::var_os("LOCI_BIN") {
        Some(p) => PathBuf::from(p),
        None => {
            eprintln!(
                "LOCI_BIN is not set: benchmarking the worker through the stand-in loci-query-worker"
            );
            PathBuf::from(env!("CARGO_BIN_EXE_loci-query-worker"))
        }
    }
}

fn database(dir: &tempfile::TempDir) -> PathBuf {
    let path = dir.path().join("bench.db");
    let c = loci_store::rusqlite::Connection::open(&path).unwrap();
    c.execute_batch(
        "CREATE TABLE r(id INTEGER PRIMARY KEY, data BLOB, big INTEGER, name TEXT);
         WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
         INSERT INTO r SELECT x, randomblob(16), 9223372036854775807 - x * 1000003, 'row ' || x FROM c;",
    )
    .unwrap();
    path
}

fn engines(db: &std::path::Path) -> [(&'static str, Arc<QueryEngine>); 2] {
    [
        ("in-process", Arc::new(QueryEngine::in_process(db).unwrap())),
        (
            "worker",
            Arc::new(QueryEngine::worker(WorkerConfig::new(program(), db)).unwrap()),
        ),
    ]
}

fn rows_100k(c: &mut Criterion, engines: &[(&'static str, Arc<QueryEngine>)]) {
    let mut g = c.benchmark_group("rows_100k");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    for (name, engine) in engines {
        let q = Query::new("SELECT id, data, big, name FROM r").max_rows(100_000);
        g.bench_function(*name, |b| {
            b.iter(|| {
                let r = engine.execute(&q).unwrap();
                assert_eq!(r.rows.len(), 100_000);
            })
        });
    }
    g.finish();
}

fn trivial(c: &mut Criterion, engines: &[(&'static str, Arc<QueryEngine>)]) {
    let mut g = c.benchmark_group("trivial_statement");
    g.sample_size(30).measurement_time(Duration::from_secs(4));
    for (name, engine) in engines {
        let q = Query::new("SELECT 1");
        g.bench_function(*name, |b| b.iter(|| engine.execute(&q).unwrap()));
    }
    g.finish();
}

fn cancel_to_stopped(c: &mut Criterion, engines: &[(&'static str, Arc<QueryEngine>)]) {
    let mut g = c.benchmark_group("cancel_to_stopped");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for (name, engine) in engines {
        g.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let q = Query::new(HUGE_CTE).timeout(Duration::from_secs(60));
                    let id = q.id;
                    let e = engine.clone();
                    let t = std::thread::spawn(move || {
                        let r = e.execute(&q);
                        (r, Instant::now())
                    });
                    std::thread::sleep(Duration::from_millis(20));
                    let t0 = Instant::now();
                    assert!(engine.cancel(id));
                    let (r, at) = t.join().unwrap();
                    assert_eq!(r.unwrap_err().kind(), "cancelled");
                    total += at - t0;
                }
                total
            })
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir);
    let engines = engines(&db);
    rows_100k(c, &engines);
    trivial(c, &engines);
    cancel_to_stopped(c, &engines);
}

criterion_group!(query, benches);
criterion_main!(query);
