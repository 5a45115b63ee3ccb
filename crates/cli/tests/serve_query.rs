//! `loci serve`'s SQL routes end to end: the real binary on a free loopback port, its
//! real `loci worker` children, a real HTTP client. Killing the running statement
//! answers every request, cancelling a queued one touches nothing else, a client that
//! goes away stops its statement, values survive the trip, restarts are single-flight,
//! and no process outlives the server.

use crate::common;
use crate::serve_support;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

/// A statement that never ends on its own (it runs until its deadline or a kill).
const ENDLESS: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
const WAIT: Duration = Duration::from_secs(20);

/// A server whose statements may run for a minute, so only a cancel ends them.
fn serve(env: &Env) -> (Server, i64) {
    let server = start(
        env,
        &[],
        &[
            ("LOCI_LIMITS_QUERY_TIMEOUT_MS", "60000"),
            ("LOCI_API_REQUEST_TIMEOUT_MS", "120000"),
        ],
    );
    let id = workspace_id(&server);
    (server, id)
}

fn query_path(id: i64) -> String {
    format!("/api/v1/workspaces/{id}/query")
}

/// `(status, body as JSON)` of `POST /query`.
fn query(server: &Server, id: i64, body: &Value) -> (u16, Value) {
    let (status, text) = call(server, "post", &query_path(id), Some(body), bearer());
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {status} {text}"));
    (status, v)
}

/// `POST /query` on another thread.
fn query_bg(server: &Server, id: i64, body: Value) -> std::thread::JoinHandle<(u16, Value)> {
    let addr = server.addr.clone();
    std::thread::spawn(move || {
        let url = format!("http://{addr}{}", query_path(id));
        let resp = agent()
            .post(&url)
            .header("Authorization", &format!("Bearer {KEY}"))
            .send_json(body)
            .unwrap();
        let status = resp.status().as_u16();
        let text = resp.into_body().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap())
    })
}

fn cancel(server: &Server, id: i64, qid: &str) -> (u16, Value) {
    let path = format!("{}/{qid}", query_path(id));
    let (status, text) = call(server, "delete", &path, None, bearer());
    (status, serde_json::from_str(&text).unwrap())
}

fn in_flight(server: &Server, id: i64) -> Value {
    get_json(server, &query_path(id))
}

/// Polls `cond` until it holds, failing with `what` at the deadline.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + WAIT;
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until `qid` holds the worker and the worker is busy with it (has burnt
/// 100 ms of CPU): a cancel that lands before the statement reaches the worker has
/// nothing to kill.
fn wait_running(server: &Server, id: i64, qid: &str) {
    wait_for(&format!("{qid} to run"), || {
        in_flight(server, id)["running"] == qid
            && workers(server).iter().any(|w| cpu_ticks(*w) >= 10)
    });
}

/// User plus system CPU time of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    let Some((_, rest)) = stat.rsplit_once(") ") else {
        return 0;
    };
    // After the command: state is field 3, utime 14 and stime 15.
    rest.split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum()
}

fn wait_queued(server: &Server, id: i64, qids: &[&str]) {
    wait_for(&format!("{qids:?} to be queued"), || {
        let now = in_flight(server, id);
        let queued = now["queued"].as_array().cloned().unwrap_or_default();
        qids.iter().all(|q| queued.iter().any(|v| v == q))
    });
}

fn pid_of(server: &Server) -> u32 {
    server.child.id()
}

/// Parent pid of `pid`, from `/proc/PID/stat` (the field after the command's `)`).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state == "Z" {
        return None; // exited, not yet reaped: no longer running anything
    }
    fields.next()?.parse().ok()
}

/// Every live process below `root`: children, grandchildren and further.
fn descendants(root: u32) -> Vec<u32> {
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(all.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    found.remove(0);
    found
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// The server's live `loci worker` processes.
fn workers(server: &Server) -> Vec<u32> {
    descendants(pid_of(server))
        .into_iter()
        .filter(|p| cmdline(*p).contains(" worker --db "))
        .collect()
}

fn alive(pid: u32) -> bool {
    parent_of(pid).is_some()
}

/// Every live process anywhere whose command line names `needle` (a worker names its
/// index file; a reparented orphan is found too).
fn processes_naming(needle: &str) -> Vec<(u32, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| alive(*p))
        .map(|p| (p, cmdline(p)))
        .filter(|(_, c)| c.contains(needle) && !c.is_empty())
        .collect()
}

fn index_file(env: &Env) -> String {
    env.root()
        .join(".loci/index.db")
        .to_string_lossy()
        .into_owned()
}

fn sigterm(server: &Server) {
    let pid = rustix::process::Pid::from_child(&server.child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
}

#[test]
fn killing_the_running_statement_answers_it_and_every_request_queued_behind_it() {
    let env = indexed();
    let (server, id) = serve(&env);
    let long = query_bg(&server, id, json!({"sql": ENDLESS, "id": "long"}));
    wait_running(&server, id, "long");
    let first = workers(&server);
    assert_eq!(first.len(), 1, "{first:?}");
    let queued: Vec<_> = ["b", "c"]
        .iter()
        .map(|q| query_bg(&server, id, json!({"sql": "SELECT 1", "id": q})))
        .collect();
    wait_queued(&server, id, &["b", "c"]);

    let (status, v) = cancel(&server, id, "long");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v, json!({"id": "long", "cancelled": "running"}));

    // Every request is answered: none is left pending.
    let (status, v) = long.join().unwrap();
    assert_eq!(status, ErrorKind::Cancelled.http_status(), "{v}");
    assert_eq!(v["error"]["kind"], ErrorKind::Cancelled.name(), "{v}");
    for q in queued {
        let (status, v) = q.join().unwrap();
        assert_eq!(status, ErrorKind::WorkerKilled.http_status(), "{v}");
        assert_eq!(v["error"]["kind"], ErrorKind::WorkerKilled.name(), "{v}");
    }
    wait_for("the killed worker to be gone", || !alive(first[0]));
    assert_eq!(
        in_flight(&server, id),
        json!({"running": null, "queued": []})
    );
    // The next query starts a new worker and is answered.
    let (status, v) = query(&server, id, &json!({"sql": "SELECT 7"}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["rows"], json!([[7]]));
    let now = workers(&server);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, first);
}

#[test]
fn cancelling_a_queued_id_removes_only_it_and_leaves_the_running_one_alone() {
    let env = indexed();
    let (server, id) = serve(&env);
    let long = query_bg(&server, id, json!({"sql": ENDLESS, "id": "long"}));
    wait_running(&server, id, "long");
    let worker = workers(&server);
    // An id already in flight is refused, and nothing else happens.
    let (status, v) = query(&server, id, &json!({"sql": "SELECT 1", "id": "long"}));
    assert_eq!(status, ErrorKind::QueryIdInUse.http_status(), "{v}");
    assert_eq!(v["error"]["kind"], ErrorKind::QueryIdInUse.name(), "{v}");

    let waiting = query_bg(&server, id, json!({"sql": "SELECT 1", "id": "waiting"}));
    wait_queued(&server, id, &["waiting"]);
    let (status, v) = cancel(&server, id, "waiting");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v, json!({"id": "waiting", "cancelled": "queued"}));
    let (status, v) = waiting.join().unwrap();
    assert_eq!(status, ErrorKind::Cancelled.http_status(), "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("queued"),
        "{v}"
    );
    // The running statement was not touched: same worker, still running.
    assert_eq!(
        in_flight(&server, id),
        json!({"running": "long", "queued": []})
    );
    assert_eq!(workers(&server), worker);
    assert!(!long.is_finished());
    // A finished or unknown id is a named 404.
    let (status, v) = cancel(&server, id, "waiting");
    assert_eq!(status, ErrorKind::UnknownQuery.http_status(), "{v}");
    assert_eq!(v["error"]["kind"], ErrorKind::UnknownQuery.name(), "{v}");

    let (status, _) = cancel(&server, id, "long");
    assert_eq!(status, 200);
    let (status, v) = long.join().unwrap();
    assert_eq!(status, ErrorKind::Cancelled.http_status(), "{v}");
}

#[test]
fn a_client_that_disconnects_during_a_long_statement_stops_it_at_once() {
    let env = indexed();
    let (server, id) = serve(&env);
    let body = json!({"sql": ENDLESS, "id": "gone"}).to_string();
    let mut s = TcpStream::connect(&server.addr).unwrap();
    write!(
        s,
        "POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        query_path(id),
        body.len()
    )
    .unwrap();
    wait_running(&server, id, "gone");
    let worker = workers(&server);
    assert_eq!(worker.len(), 1);
    drop(s);
    // The statement stops with its worker, long before any deadline (a minute).
    let gone = Instant::now();
    wait_for("the disconnected query's worker to be gone", || {
        !alive(worker[0])
    });
    assert!(
        gone.elapsed() < Duration::from_secs(10),
        "{:?}",
        gone.elapsed()
    );
    assert_eq!(
        in_flight(&server, id),
        json!({"running": null, "queued": []})
    );
    let (status, v) = query(&server, id, &json!({"sql": "SELECT 1"}));
    assert_eq!(status, 200, "{v}");
}

#[test]
fn more_than_64_kib_of_multibyte_text_round_trips_unchanged() {
    let env = indexed();
    let (server, id) = serve(&env);
    // Two- to four-byte characters, so pipe reads split them at every offset.
    let unit = "ğüşİöç 漢字かな 🦀🚀 ";
    let big: String = unit.repeat(200_000 / unit.len() + 1);
    assert!(big.len() > 200_000);
    let (status, v) = query(
        &server,
        id,
        &json!({"sql": "SELECT ?1, length(CAST(?1 AS BLOB))", "params": [big]}),
    );
    assert_eq!(
        status,
        200,
        "{}",
        &v.to_string()[..200.min(v.to_string().len())]
    );
    assert!(
        v["rows"][0][0] == big.as_str(),
        "the bound text came back changed"
    );
    assert_eq!(v["rows"][0][1], json!(big.len()));
    // As a literal in the statement (under its 100,000-byte limit) and as text the
    // worker makes itself.
    let literal: String = unit.repeat(90_000 / unit.len());
    assert!(literal.len() > 64 * 1024);
    let (status, v) = query(
        &server,
        id,
        &json!({"sql": format!("SELECT '{literal}', replace(hex(zeroblob(30000)), '00', 'ş漢🦀')")}),
    );
    assert_eq!(status, 200);
    assert!(
        v["rows"][0][0] == literal.as_str(),
        "the literal came back changed"
    );
    assert!(v["rows"][0][1] == "ş漢🦀".repeat(30000).as_str());
}

#[test]
fn i64_extremes_and_blobs_round_trip_in_the_tagged_form() {
    let env = indexed();
    let (server, id) = serve(&env);
    let (status, v) = query(
        &server,
        id,
        &json!({
            "sql": "SELECT 9223372036854775807, -9223372036854775808, x'00ff10', 9007199254740991, ?1, typeof(?1), ?2, typeof(?2), ?1 = 9223372036854775807",
            "params": [{"$int": "9223372036854775807"}, {"$blob": "AP8Q"}],
        }),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["rows"],
        json!([[
            {"$int": "9223372036854775807"},
            {"$int": "-9223372036854775808"},
            {"$blob": "AP8Q"},
            9007199254740991i64,
            {"$int": "9223372036854775807"},
            "integer",
            {"$blob": "AP8Q"},
            "blob",
            1
        ]])
    );
    assert!(
        v["id"].as_str().unwrap().starts_with('q'),
        "a generated id: {v}"
    );
}

#[test]
fn parallel_queries_after_a_cancel_start_exactly_one_worker_and_none_remains_after_shutdown() {
    let env = indexed();
    let (mut server, id) = serve(&env);
    let long = query_bg(&server, id, json!({"sql": ENDLESS, "id": "long"}));
    wait_running(&server, id, "long");
    let first = workers(&server);
    let (status, _) = cancel(&server, id, "long");
    assert_eq!(status, 200);
    let _ = long.join().unwrap();
    wait_for("the killed worker to be gone", || !alive(first[0]));
    let parallel: Vec<_> = (0..6)
        .map(|i| query_bg(&server, id, json!({"sql": format!("SELECT {i}")})))
        .collect();
    for (i, q) in parallel.into_iter().enumerate() {
        let (status, v) = q.join().unwrap();
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["rows"], json!([[i]]));
    }
    let now = workers(&server);
    assert_eq!(now.len(), 1, "one restart shared by every caller: {now:?}");
    let below = descendants(pid_of(&server));

    sigterm(&server);
    let status = wait_exit(&mut server.child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{status:?}");
    for pid in below {
        wait_for(&format!("process {pid} to be gone"), || !alive(pid));
    }
    assert_eq!(processes_naming(&index_file(&env)), vec![]);
}

#[test]
fn sigterm_with_a_long_query_in_flight_answers_it_and_leaves_no_process_behind() {
    let env = indexed();
    let (mut server, id) = serve(&env);
    let long = query_bg(&server, id, json!({"sql": ENDLESS, "id": "long"}));
    wait_running(&server, id, "long");
    let queued = query_bg(&server, id, json!({"sql": "SELECT 1", "id": "next"}));
    wait_queued(&server, id, &["next"]);
    let below = descendants(pid_of(&server));
    assert!(!below.is_empty());

    let stopped = Instant::now();
    sigterm(&server);
    for q in [long, queued] {
        let (status, v) = q.join().unwrap();
        assert_eq!(status, ErrorKind::Interrupted.http_status(), "{v}");
        assert_eq!(v["error"]["kind"], ErrorKind::Interrupted.name(), "{v}");
    }
    let status = wait_exit(&mut server.child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{status:?}");
    // Not held for the drain: the statement was killed, not waited for.
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "{:?}",
        stopped.elapsed()
    );
    for pid in below {
        wait_for(&format!("process {pid} to be gone"), || !alive(pid));
    }
    assert_eq!(processes_naming(&index_file(&env)), vec![]);
}

#[test]
fn adversarial_sql_bodies_get_a_named_4xx_and_the_index_is_untouched() {
    let env = indexed();
    let (server, id) = serve(&env);
    let before = std::fs::read(index_file(&env)).unwrap();
    let not_read_only = ErrorKind::NotReadOnly;
    let cases: Vec<(Value, ErrorKind)> = vec![
        (
            json!({"sql": "INSERT INTO meta VALUES ('k', 'v')"}),
            not_read_only,
        ),
        (json!({"sql": "UPDATE files SET path = 'x'"}), not_read_only),
        (json!({"sql": "DELETE FROM symbols"}), not_read_only),
        (json!({"sql": "DROP TABLE files"}), not_read_only),
        (json!({"sql": "CREATE TABLE t(x)"}), not_read_only),
        (
            json!({"sql": "ATTACH DATABASE '/tmp/loci-attack.db' AS a"}),
            not_read_only,
        ),
        (json!({"sql": "PRAGMA query_only = 0"}), not_read_only),
        (
            json!({"sql": "PRAGMA journal_mode = DELETE"}),
            not_read_only,
        ),
        (json!({"sql": "PRAGMA writable_schema = 1"}), not_read_only),
        (
            json!({"sql": "SELECT load_extension('/tmp/evil.so')"}),
            not_read_only,
        ),
        (json!({"sql": "VACUUM"}), not_read_only),
        (
            json!({"sql": "SELECT 1; DELETE FROM files"}),
            ErrorKind::MultipleStatements,
        ),
        (json!({"sql": "SELEKT 1"}), ErrorKind::Syntax),
        (
            json!({"sql": format!("SELECT '{}'", "x".repeat(200_000))}),
            ErrorKind::TooLong,
        ),
        (
            json!({"sql": "SELECT ?1", "params": [{"$int": "nope"}]}),
            ErrorKind::InvalidParams,
        ),
        (
            json!({"sql": "SELECT 1", "params": "x"}),
            ErrorKind::InvalidParams,
        ),
        (
            json!({"sql": "SELECT 1", "deadline_ms": 60001}),
            ErrorKind::LimitExceeded,
        ),
        (
            json!({"sql": "SELECT 1", "max_rows": 0}),
            ErrorKind::LimitExceeded,
        ),
        (
            json!({"sql": "SELECT 1", "id": "../etc"}),
            ErrorKind::InvalidInput,
        ),
        (json!({"sql": 3}), ErrorKind::InvalidInput),
        (
            json!({"sql": "SELECT 1", "engine": "in-process"}),
            ErrorKind::InvalidInput,
        ),
        (json!({}), ErrorKind::InvalidInput),
    ];
    for (body, kind) in cases {
        let (status, v) = query(&server, id, &body);
        let shown = body.to_string().chars().take(120).collect::<String>();
        assert_eq!(status, kind.http_status(), "{shown}: {v}");
        assert_eq!(v["error"]["kind"], kind.name(), "{shown}: {v}");
    }
    // Bodies no JSON parser or size limit accepts.
    let path = query_path(id);
    for (body, kind) in [
        ("{\"sql\": ".to_string(), ErrorKind::InvalidInput),
        ("not json".to_string(), ErrorKind::InvalidInput),
        (
            format!("{{\"sql\": \"SELECT '{}'\"}}", "x".repeat(2 << 20)),
            ErrorKind::TooLong,
        ),
    ] {
        let (status, text) = raw(
            &server.addr,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
        );
        assert_eq!(status, kind.http_status(), "{text}");
        assert_eq!(kind_of(&text), kind.name(), "{text}");
    }
    // The worker survived all of it, and nothing was written.
    let (status, v) = query(&server, id, &json!({"sql": "SELECT count(*) FROM files"}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["rows"], json!([[2]]));
    assert!(
        std::fs::read(index_file(&env)).unwrap() == before,
        "the index changed"
    );
    assert!(!std::path::Path::new("/tmp/loci-attack.db").exists());
}

#[test]
fn cancel_and_query_name_what_is_missing() {
    let env = indexed();
    let (server, id) = serve(&env);
    let (status, v) = cancel(&server, id, "never-ran");
    assert_eq!(status, ErrorKind::UnknownQuery.http_status(), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("never-ran"),
        "{v}"
    );
    let (status, v) = cancel(&server, id + 1000, "q1");
    assert_eq!(status, ErrorKind::NotFound.http_status(), "{v}");
    let (status, v) = query(&server, id + 1000, &json!({"sql": "SELECT 1"}));
    assert_eq!(status, ErrorKind::NotFound.http_status(), "{v}");
    assert_eq!(v["error"]["kind"], ErrorKind::NotFound.name(), "{v}");
}

#[test]
fn a_rebuilt_index_is_queried_by_a_new_worker_that_sees_the_new_file() {
    let env = indexed();
    let (server, id) = serve(&env);
    let count = "SELECT count(*) FROM files";
    let (status, v) = query(&server, id, &json!({"sql": count}));
    assert_eq!((status, &v["rows"]), (200, &json!([[2]])), "{v}");
    let old = workers(&server);
    env.write(&[("src/extra.rs", "pub fn extra() {}\n")]);
    let (code, out) = env.json(&["rebuild", env.root().to_str().unwrap(), "--yes"]);
    assert_eq!(code, 0, "{out}");
    let (status, v) = query(&server, id, &json!({"sql": count}));
    assert_eq!((status, &v["rows"]), (200, &json!([[3]])), "{v}");
    wait_for("the old index's worker to be gone", || !alive(old[0]));
    assert_eq!(workers(&server).len(), 1);
}
