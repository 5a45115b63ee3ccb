//! The edges of the MCP protocol: `loci mcp` on stdio exits within half a second of
//! stdin closing in every state (idle, a background run in flight, a statement running),
//! and malformed parameters get JSON-RPC's invalid-params code (-32602) with the
//! request's id, over stdio and over `/mcp`.

use crate::mcp_support;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use crate::serve_support::mcp::*;
use mcp_support::*;
use serde_json::{Value, json};

/// How long `loci mcp` may take to exit after stdin closes.
const EXIT_BOUND: Duration = Duration::from_millis(500);
const ENDLESS: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

/// Closes stdin and times the exit; asserts the bound.
fn exits_within_bound(s: &mut Stdio_, state: &str) {
    let closed = Instant::now();
    s.close_stdin();
    let until = closed + Duration::from_secs(10);
    while s.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < until,
            "{state}: still running 10 s after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let took = closed.elapsed();
    eprintln!("{state}: exited {took:?} after stdin closed");
    assert!(
        took <= EXIT_BOUND,
        "{state}: exited {took:?} after stdin closed"
    );
}

/// CPU time (user + system) the process has used, from /proc.
fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    ticks * 1000 / rustix::param::clock_ticks_per_second()
}

/// `loci mcp` on an indexed workspace, initialized (keep the folders alive with it).
fn stdio_on_indexed() -> (tempfile::TempDir, tempfile::TempDir, Stdio_) {
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), ws.path());
    let mut cmd = loci(home.path());
    cmd.arg("mcp").arg("--workspace").arg(ws.path());
    let mut s = Stdio_::start(cmd);
    s.initialize();
    (home, ws, s)
}

#[test]
fn stdio_exits_promptly_when_idle() {
    let (_home, _ws, mut s) = stdio_on_indexed();
    assert_eq!(s.call("status", json!({}))["isError"], false);
    exits_within_bound(&mut s, "idle");
}

#[test]
fn stdio_exits_promptly_mid_query() {
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), ws.path());
    for worker in [false, true] {
        let mut cmd = loci(home.path());
        cmd.arg("mcp").arg("--workspace").arg(ws.path());
        if worker {
            cmd.arg("--query-worker");
        }
        let mut s = Stdio_::start(cmd);
        s.initialize();
        let pid = s.child.id();
        let before = cpu_ms(pid);
        s.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
            "params": {"name": "query", "arguments": {"sql": ENDLESS, "timeout_ms": 60000}}}));
        // The statement is running once CPU is being burnt on it (here or in the worker).
        let running = wait_for(Duration::from_secs(20), || {
            let here = cpu_ms(pid) - before;
            let in_worker = children(pid).iter().map(|c| cpu_ms(*c)).sum::<u64>();
            (here + in_worker > 300).then_some(())
        });
        assert!(running.is_some(), "the statement never ran");
        exits_within_bound(
            &mut s,
            if worker {
                "mid-query (worker)"
            } else {
                "mid-query"
            },
        );
    }
}

/// The pids whose parent is `pid` (started by any of its threads).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .flat_map(|t| {
            std::fs::read_to_string(t.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

#[test]
fn stdio_exits_promptly_with_a_background_run_in_flight() {
    let (home, ws, scratch) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::write(ws.path().join("app.py"), "def main():\n    return 1\n").unwrap();
    // The gate's first index (autoCreate): a run that does not end on its own.
    let exe = scratch.path().join("slow-index");
    std::fs::write(
        &exe,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nsleep 60 &\nwait\n",
            scratch.path().join("run.pid").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = loci(home.path());
    cmd.arg("mcp")
        .arg("--workspace")
        .arg(ws.path())
        .env("LOCI_LIFECYCLE_AUTO_CREATE", "1")
        .env("LOCI_LIFECYCLE_EXECUTABLE", &exe);
    let mut s = Stdio_::start(cmd);
    s.initialize();
    let run = wait_for(Duration::from_secs(30), || {
        std::fs::read_to_string(scratch.path().join("run.pid"))
            .ok()?
            .trim()
            .parse::<i32>()
            .ok()
    })
    .expect("the background run never started");
    exits_within_bound(&mut s, "background run in flight");
    assert!(
        wait_for(Duration::from_secs(2), || (!alive(run)).then_some(())).is_some(),
        "the background run outlived the session"
    );
}

/// `(request, what it breaks)`: each must be answered -32602 with its id.
fn bad_params() -> Vec<(Value, &'static str)> {
    vec![
        (
            json!({"name": "find", "arguments": "x"}),
            "arguments a string",
        ),
        (
            json!({"name": "find", "arguments": [1]}),
            "arguments an array",
        ),
        (json!({"arguments": {}}), "no tool name"),
        (json!({"name": 5}), "a tool name that is a number"),
        (json!([1, 2]), "params an array"),
        (json!("x"), "params a string"),
        (json!({"name": "no_such_tool"}), "an unknown tool"),
    ]
}

fn check_invalid_params(answer: &Value, id: u64, what: &str) {
    assert_eq!(answer["id"], json!(id), "{what}: {answer}");
    assert_eq!(answer["error"]["code"], -32602, "{what}: {answer}");
}

#[test]
fn bad_params_are_invalid_params_over_stdio() {
    let (_home, _ws, mut s) = stdio_on_indexed();
    for (params, what) in bad_params() {
        let answer = s.request("tools/call", params);
        let id = answer["id"].as_u64().unwrap_or(0);
        check_invalid_params(&answer, id, what);
    }
    // tools/call with no params at all.
    let answer = request_without_params(&mut s, "tools/call");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // An unknown method stays method-not-found, and the session still answers.
    assert_eq!(s.request("no/such", json!({}))["error"]["code"], -32601);
    assert_eq!(s.call("status", json!({}))["isError"], false);
}

fn request_without_params(s: &mut Stdio_, method: &str) -> Value {
    s.send(&json!({"jsonrpc": "2.0", "id": 4242, "method": method}));
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(
            Instant::now() < until,
            "no answer to {method} without params"
        );
        if let Some(v) = s.try_next(Duration::from_millis(100))
            && v["id"] == json!(4242)
        {
            return v;
        }
    }
}

#[test]
fn bad_params_are_invalid_params_over_http() {
    let s = Served::start(&[]);
    let session = s.open_session(&[("loci-workspace", APP)]);
    for (n, (params, what)) in bad_params().into_iter().enumerate() {
        let id = 100 + n as u64;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let post = s.post(Some(&session), &[], &body.to_string());
        let answer = answer_of(&post.body, id).unwrap_or_else(|| {
            panic!(
                "{what}: no answer with id {id}: {} {}",
                post.status, post.body
            )
        });
        check_invalid_params(&answer, id, what);
    }
    let post = s.post(
        Some(&session),
        &[],
        r#"{"jsonrpc":"2.0","id":77,"method":"tools/call"}"#,
    );
    let answer =
        answer_of(&post.body, 77).unwrap_or_else(|| panic!("{} {}", post.status, post.body));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(s.call_tool(&session, "status", json!({}))["isError"], false);
}
