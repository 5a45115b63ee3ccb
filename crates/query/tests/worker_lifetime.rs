//! A query worker never outlives its owner: it dies with a SIGKILLed parent
//! (the supervisor's parent-death signal), and it exits when its stdin ends
//! even while a statement runs.
//!
//! The parent that gets SIGKILLed is this test binary itself, re-executed to
//! run only `harness_process` with [`PARENT_VAR`] naming the database.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{HUGE_CTE, TestDb, eventually, wait_running};
use loci_query::{Query, QueryEngine, WorkerConfig};

/// Set (to a database path) only in the harness process.
const PARENT_VAR: &str = "LOCI_QUERY_TEST_PARENT_DB";

fn worker_program() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loci-query-worker"))
}

/// Whether `pid` is a live process (a zombie is dead).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 2..].split(' ').next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Not a test of its own: in the harness process, start a worker, run a
/// long statement on it from a short-lived request thread, report the
/// worker's pid and wait to be killed.
#[test]
fn harness_process() {
    let Ok(db) = std::env::var(PARENT_VAR) else {
        return;
    };
    let engine = Arc::new(QueryEngine::worker(WorkerConfig::new(worker_program(), db)).unwrap());
    let q = Query::new(HUGE_CTE).timeout(Duration::from_secs(120));
    let id = q.id;
    let e = engine.clone();
    std::thread::spawn(move || e.execute(&q));
    wait_running(&engine, id);
    println!("worker {}", engine.worker_pid().unwrap());
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::park();
    }
}

#[test]
fn a_worker_is_gone_within_a_second_of_its_parent_being_sigkilled_mid_statement() {
    let db = TestDb::small();
    let mut parent = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "worker_lifetime::harness_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PARENT_VAR, &db.path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(parent.stdout.take().unwrap()).lines();
    let pid: u32 = loop {
        let line = lines
            .next()
            .expect("the harness reports its worker")
            .unwrap();
        // Amid libtest's own output, maybe on its `test ... ` line.
        if let Some((_, pid)) = line.split_once("worker ") {
            break pid.trim().parse().unwrap();
        }
    };
    assert!(alive(pid));
    parent.kill().unwrap(); // SIGKILL: no teardown path runs in the parent
    parent.wait().unwrap();
    let t0 = Instant::now();
    let gone = eventually(Duration::from_secs(1), || !alive(pid));
    if !gone {
        // SAFETY: kill(2) on the worker this test started; only a signal.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    assert!(
        gone,
        "the worker outlived its SIGKILLed parent by {:?}",
        t0.elapsed()
    );
}

#[test]
fn the_worker_exits_when_its_stdin_ends_even_while_a_statement_runs() {
    let db = TestDb::small();
    let mut worker = Command::new(worker_program())
        .args(["worker", "--db"])
        .arg(&db.path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(worker.stdout.take().unwrap()).lines();
    let greeting = out.next().unwrap().unwrap();
    assert!(greeting.contains("\"ready\":true"), "{greeting}");
    let mut stdin = worker.stdin.take().unwrap();
    let query = serde_json::json!({"id": 1, "op": "query", "sql": HUGE_CTE, "timeout_ms": 120_000});
    writeln!(stdin, "{query}").unwrap();
    // A ping is answered by the reader while the statement runs: once its
    // answer is back, the query has been read.
    writeln!(stdin, "{}", serde_json::json!({"id": 2, "op": "ping"})).unwrap();
    let pong = out.next().unwrap().unwrap();
    assert!(pong.contains("\"id\":2"), "{pong}");
    drop(stdin);
    let t0 = Instant::now();
    let exited = eventually(Duration::from_secs(1), || {
        worker.try_wait().unwrap().is_some()
    });
    if !exited {
        let _ = worker.kill();
    }
    let _ = worker.wait();
    assert!(
        exited,
        "the worker ran on {:?} after its stdin ended",
        t0.elapsed()
    );
}
