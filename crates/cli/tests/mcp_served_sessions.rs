//! `/mcp` sessions on `loci serve` under churn and abuse: the session-start check never
//! starts another server, sessions are reaped (DELETE, idle timeout, a client that
//! vanishes), a cap on live sessions answers a named error, the server's threads and
//! descriptors come back to their baseline after hundreds of sessions, and the `query`
//! tool runs in the server's killable worker, stopped by a cancel or a vanished client.

use crate::mcp_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::serve_support::mcp::*;
use mcp_support::python_sdk_ready;
use serde_json::{Value, json};

const FRESH: &str = r#"{"kind":"mounted","segment":"team/fresh"}"#;

fn ping_status(s: &Served, session: &str) -> u16 {
    s.post(Some(session), &[], PING).status
}

#[test]
fn the_session_start_check_inside_the_server_starts_no_server() {
    let s = Served::start(&[("LOCI_LIFECYCLE_AUTO_CREATE", "1")]);
    let fresh = s.base.path().join("team/fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    std::fs::write(fresh.join("app.py"), "def fresh_fn():\n    return 1\n").unwrap();
    let session = s.open_session(&[("loci-workspace", FRESH)]);
    // The gate runs; with autoCreate its first index runs as the server's own child.
    wait_until(
        "the first index of team/fresh",
        Duration::from_secs(60),
        || {
            let status = s.call_tool(&session, "status", json!({}));
            status["structuredContent"]["counts"]["symbols"].as_u64() > Some(0)
        },
    );
    let spawns = s.spawns();
    assert!(
        spawns.iter().all(|l| !l.starts_with("serve")),
        "the probe chain started a server inside the server: {spawns:?}"
    );
    assert!(
        spawns.iter().any(|l| l.starts_with("index")),
        "the first index was not run by the server's supervisor: {spawns:?}"
    );
}

#[test]
fn live_sessions_are_capped_with_a_named_error() {
    let s = Served::start(&[("LOCI_MCP_MAX_SESSIONS", "3")]);
    let sessions: Vec<String> = (0..3)
        .map(|_| s.open_session(&[("loci-workspace", APP)]))
        .collect();
    let refused = s.initialize(&[("loci-workspace", APP)]);
    assert_eq!(refused.status, 503, "{}", refused.body);
    let v: Value =
        serde_json::from_str(&refused.body).unwrap_or_else(|e| panic!("{e}: {}", refused.body));
    assert_eq!(v["error"]["kind"], "too_many_sessions", "{v}");
    assert!(refused.session.is_none());
    // The sessions already open are untouched; closing one makes room.
    assert_eq!(ping_status(&s, &sessions[0]), 200);
    let closed = agent()
        .delete(&s.url())
        .header("authorization", &format!("Bearer {KEY}"))
        .header("mcp-session-id", &sessions[0])
        .call()
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    assert_eq!(ping_status(&s, &sessions[0]), 404);
    let again = s.initialize(&[("loci-workspace", APP)]);
    assert_eq!(again.status, 200, "{}", again.body);
}

#[test]
fn an_idle_session_is_reaped_after_its_timeout() {
    let s = Served::start(&[("LOCI_MCP_SESSION_IDLE_MS", "500")]);
    let session = s.open_session(&[("loci-workspace", APP)]);
    assert_eq!(ping_status(&s, &session), 200);
    let idle = Instant::now();
    wait_until(
        "the idle session to be reaped",
        Duration::from_secs(20),
        || {
            // Polling would keep it alive: look only after the timeout has passed.
            idle.elapsed() > Duration::from_millis(1500) && ping_status(&s, &session) == 404
        },
    );
}

#[test]
fn a_session_whose_client_vanishes_is_reaped() {
    let s = Served::start(&[]);
    let session = s.open_session(&[("loci-workspace", APP)]);
    // The client's standalone stream (GET), then the client is gone without a DELETE.
    let mut stream = TcpStream::connect(&s.addr).unwrap();
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n"
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200", "{}", String::from_utf8_lossy(&head));
    assert_eq!(ping_status(&s, &session), 200);
    drop(stream);
    wait_until(
        "the vanished client's session to be reaped",
        Duration::from_secs(20),
        || ping_status(&s, &session) == 404,
    );
}

/// How many sessions the churn test opens (`LOCI_TEST_CHURN` to measure more).
fn churn_count() -> usize {
    std::env::var("LOCI_TEST_CHURN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(240)
}

#[test]
fn threads_and_descriptors_return_to_baseline_after_session_churn() {
    if !python_sdk_ready() {
        return;
    }
    let s = Served::start(&[]);
    // Warm: the workspace's pool, the runtime's threads.
    let warm = s.adversary(&["churn", "5", "delete"], &[("LOCI_TEST_HEADER", APP)]);
    assert_eq!(warm["answered"], 5, "{warm}");
    let base = settled(&s);
    let n = churn_count();
    let started = Instant::now();
    let half = (n / 2).to_string();
    let a = s.adversary(&["churn", &half, "delete"], &[("LOCI_TEST_HEADER", APP)]);
    let b = s.adversary(&["churn", &half, "vanish"], &[("LOCI_TEST_HEADER", APP)]);
    assert_eq!(
        a["answered"].as_u64().unwrap() + b["answered"].as_u64().unwrap(),
        2 * (n as u64 / 2)
    );
    let peak = s.stats();
    let after = settled(&s);
    eprintln!(
        "{n} sessions in {:?}: baseline {base:?}, right after {peak:?}, settled {after:?}",
        started.elapsed()
    );
    assert!(
        after.threads <= base.threads + 2,
        "threads {base:?} -> {after:?}"
    );
    assert!(
        after.fds <= base.fds + 2,
        "descriptors {base:?} -> {after:?}"
    );
    // The heap the sessions freed is handed back (glibc would keep it mapped).
    assert!(
        after.rss_kb <= base.rss_kb + base.rss_kb / 10,
        "memory {base:?} -> {after:?}"
    );
}

/// The server's footprint once it stops moving: threads and descriptors at their
/// lowest over a quiet stretch (the blocking pool's idle threads leave after 10 s).
fn settled(s: &Served) -> Stats {
    let until = Instant::now() + Duration::from_secs(40);
    let mut low = s.stats();
    let mut quiet_since = Instant::now();
    while Instant::now() < until && quiet_since.elapsed() < Duration::from_secs(12) {
        std::thread::sleep(Duration::from_millis(200));
        let now = s.stats();
        if now.threads < low.threads || now.fds < low.fds {
            quiet_since = Instant::now();
        }
        low = Stats {
            threads: low.threads.min(now.threads),
            fds: low.fds.min(now.fds),
            rss_kb: now.rss_kb,
        };
    }
    low
}

/// A server with a long query deadline, and a never-ending `query` seen running in its
/// worker, then ended by the client as `mode` says (`cancel` or `vanish`).
fn endless_query(mode: &str) -> (Served, String, Value) {
    let s = Served::start(&[
        ("LOCI_LIMITS_QUERY_TIMEOUT_MS", "60000"),
        ("LOCI_API_REQUEST_TIMEOUT_MS", "120000"),
    ]);
    let id = s.workspace_id("app").to_string();
    let out = s.adversary(&["query", APP, &id, mode], &[]);
    assert_eq!(
        out["seen_running"], true,
        "the statement never ran in the server's worker: {out}"
    );
    (s, id, out)
}

#[test]
fn the_query_tool_runs_in_the_worker_and_a_cancel_stops_it() {
    if !python_sdk_ready() {
        return;
    }
    let (s, id, out) = endless_query("cancel");
    assert!(out["stopped_ms"].as_u64().unwrap() < 3_000, "{out}");
    let idle = s.get_json(&format!("/api/v1/workspaces/{id}/query"));
    assert_eq!(idle, json!({"running": null, "queued": []}));
}

#[test]
fn a_query_whose_client_vanishes_is_stopped() {
    if !python_sdk_ready() {
        return;
    }
    let (s, id, _) = endless_query("vanish");
    let gone = Instant::now();
    wait_until(
        "the vanished client's statement to stop",
        Duration::from_secs(20),
        || s.get_json(&format!("/api/v1/workspaces/{id}/query"))["running"].is_null(),
    );
    assert!(
        gone.elapsed() < Duration::from_secs(5),
        "{:?}",
        gone.elapsed()
    );
}
