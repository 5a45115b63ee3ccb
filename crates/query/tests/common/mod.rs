//! Test databases (plain SQLite files in temp dirs) and snapshots of a
//! directory, shared by the in-process and worker tests (the CLI's worker
//! tests include this file too).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use loci_store::rusqlite::Connection;

/// A statement that would produce 300 million rows: long enough that only
/// a cancel, a deadline or a kill ends it.
pub const HUGE_CTE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c";

/// A temp dir holding `t.db`, created with `setup`.
pub struct TestDb {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl TestDb {
    pub fn new(setup: &str) -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(setup).unwrap();
        drop(conn);
        TestDb { dir, path }
    }

    /// A small table `t(id, name, data, big)` with one row.
    pub fn small() -> TestDb {
        TestDb::new(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB, big INTEGER);
             INSERT INTO t VALUES (1, 'one', x'00ff', 9223372036854775807);
             CREATE INDEX t_name ON t(name);",
        )
    }

    /// `rows` rows of `(id, blob of 16 bytes, 64-bit integer, text)`.
    pub fn rows(rows: u64) -> TestDb {
        TestDb::new(&format!(
            "CREATE TABLE r(id INTEGER PRIMARY KEY, data BLOB, big INTEGER, name TEXT);
             WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows})
             INSERT INTO r SELECT x, randomblob(16), 9223372036854775807 - x * 1000003, 'row ' || x FROM c;"
        ))
    }

    /// Every file in the directory with its bytes.
    pub fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        snapshot(self.dir.path())
    }
}

pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect()
}

/// Polls `cond` for up to `within`.
pub fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// More than 64 KiB of Turkish, CJK and emoji text.
pub fn multibyte_text() -> String {
    let unit = "Şişli'de ığdır çağrı İĞÜ 漢字かな交じり文 한국어 🦀🎉👩‍💻 ";
    let mut s = String::new();
    while s.len() < 200 * 1024 {
        s.push_str(unit);
    }
    s
}

/// Waits (10 s at most) until request `id` holds `engine`'s turn.
pub fn wait_running(engine: &loci_query::QueryEngine, id: loci_query::QueryId) {
    assert!(
        eventually(Duration::from_secs(10), || engine.in_flight().running
            == Some(id)),
        "request {id:?} never took its turn: {:?}",
        engine.in_flight()
    );
}

/// Waits (10 s at most) until request `id` is queued behind the running one.
pub fn wait_queued(engine: &loci_query::QueryEngine, id: loci_query::QueryId) {
    assert!(
        eventually(Duration::from_secs(10), || engine
            .in_flight()
            .queued
            .contains(&id)),
        "request {id:?} was never queued: {:?}",
        engine.in_flight()
    );
}

/// CPU time (user + system, in clock ticks) process `pid` has used, from
/// `/proc/PID/stat`.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis: state is field 3, utime 14,
    // stime 15 (1-based), so 11 and 12 of the rest.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Waits (10 s at most) until the worker is stepping the running statement: an idle
/// worker burns no CPU (it blocks reading its stdin), so three clock ticks of CPU
/// after the statement took its turn mean SQLite is inside it. The worker cannot say
/// so itself; a cancel sent before this point would find nothing to interrupt.
pub fn wait_stepping(engine: &loci_query::QueryEngine) {
    let pid = engine.worker_pid().expect("a worker engine");
    let start = cpu_ticks(pid).expect("the worker's /proc stat");
    assert!(
        eventually(Duration::from_secs(10), || cpu_ticks(pid)
            .is_some_and(|now| now >= start + 3)),
        "the worker (pid {pid}) never started stepping its statement"
    );
}
