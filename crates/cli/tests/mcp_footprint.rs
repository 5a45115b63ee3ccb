//! What an idle `loci mcp` keeps running: its stdio runtime is the main thread alone
//! (no worker threads, no blocking thread parked on a read of stdin), and a tool runs on
//! a blocking thread while the connection keeps reading.

mod mcp_support;

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
