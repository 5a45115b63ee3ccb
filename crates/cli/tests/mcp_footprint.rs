//! What an idle `loci mcp` keeps running: its stdio runtime is the main thread alone
//! (no worker threads, no blocking thread parked on a read of stdin), a tool runs on
//! a blocking thread while the connection keeps reading, and once the session-start
//! gate has answered the process holds little memory of its own.

use crate::mcp_support;

use std::time::Duration;

use mcp_support::*;
use serde_json::json;

/// The names of the process's threads (`/proc/PID/task/*/comm`).
fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect()
}

/// Threads of the stdio runtime (workers and its blocking pool carry its name).
fn runtime_threads(pid: u32) -> Vec<String> {
    thread_names(pid)
        .into_iter()
        .filter(|n| n == "loci-mcp" || n.starts_with("loci-mcp-tool"))
        .collect()
}

#[test]
fn an_idle_stdio_session_runs_its_runtime_on_the_main_thread_alone() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), dir.path());
    let mut cmd = loci(home.path());
    cmd.arg("mcp").arg("--workspace").arg(dir.path());
    let mut s = Stdio_::start(cmd);
    s.initialize();
    // Answered by the runtime itself: nothing has needed a blocking thread yet.
    assert!(s.request("ping", json!({}))["result"].is_object());
    let pid = s.child.id();
    let idle = runtime_threads(pid);
    assert!(
        idle.is_empty(),
        "runtime threads at idle: {idle:?} (all: {:?})",
        thread_names(pid)
    );

    // A tool runs on the blocking pool; once answered, the pool's threads (the call's,
    // and the drift check a `status` may start beside it) are the only runtime
    // threads, and the session still answers on the main thread.
    let status = s.call("status", json!({}));
    assert!(status["structuredContent"]["index"].is_object(), "{status}");
    let after = runtime_threads(pid);
    assert!(
        after.len() <= 2,
        "runtime threads after one call: {after:?}"
    );
    assert!(s.request("ping", json!({}))["result"].is_object());

    // Stdin closed: the process ends (no thread left blocked on a read of it).
    s.close_stdin();
    let ended = wait_for(Duration::from_secs(10), || {
        s.child.try_wait().ok().flatten()
    });
    assert!(ended.is_some(), "loci mcp still running after stdin closed");
}

/// A field of `/proc/PID/smaps_rollup`, in kilobytes.
fn rollup_kb(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in smaps_rollup: {text}"))
}

/// The process's own memory (anonymous pages: heap, stacks, relocated data) once the
/// session is idle. The binary's clean pages are not counted: they are shared by every
/// loci process and their number depends on the release link's layout
/// (crates/cli/build.rs), not on what the session keeps. An unoptimised build holds
/// about 6 MB here, a release build 2 MB; the bound catches a session that keeps what
/// it needs only for a call (a model, a vector cache, the gate's walk, a thread pool's
/// arenas) from start-up on.
const IDLE_ANONYMOUS_KB: u64 = 16 * 1024;

#[test]
fn an_idle_session_after_its_gate_holds_little_memory_of_its_own() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), dir.path());
    let mut cmd = loci(home.path());
    cmd.arg("mcp").arg("--workspace").arg(dir.path());
    let mut s = Stdio_::start(cmd);
    s.initialize();
    let listed = s.request("tools/list", json!({}));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    // The gate has answered (its walk done, its heap trimmed) when `status` says so.
    let settled = wait_for(Duration::from_secs(30), || {
        let status = s.call("status", json!({}));
        let state = status["structuredContent"]["session_start"]["state"].clone();
        (state.as_str().is_some_and(|st| st != "pending")).then_some(state)
    });
    assert!(settled.is_some(), "the session-start gate never answered");
    let pid = s.child.id();
    let anonymous = rollup_kb(pid, "Anonymous");
    assert!(
        anonymous <= IDLE_ANONYMOUS_KB,
        "an idle session holds {anonymous} kB of its own memory (bound {IDLE_ANONYMOUS_KB} kB)"
    );
    s.close_stdin();
    let ended = wait_for(Duration::from_secs(10), || {
        s.child.try_wait().ok().flatten()
    });
    assert!(ended.is_some(), "loci mcp still running after stdin closed");
}
