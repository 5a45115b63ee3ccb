//! `loci mcp` sessions end to end over stdio: the session-start gate per session, its
//! rebinding when the session is replaced, the teardown of every child on each path
//! (stdin closed, SIGTERM, SIGINT) with a grandchild still running, and two servers on
//! one workspace while one of them syncs.

use crate::mcp_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_support::*;
use serde_json::{Value, json};

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        "#!/bin/sh\nLOCI='{}'\nSCRATCH='{}'\n{body}\n",
        bin().display(),
        dir.display()
    );
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn mcp(home: &Path, ws: &Path, executable: Option<&Path>) -> Command {
    let mut cmd = loci(home);
    cmd.arg("mcp").arg("--workspace").arg(ws);
    if let Some(exe) = executable {
        cmd.env("LOCI_LIFECYCLE_EXECUTABLE", exe);
    }
    cmd
}

fn notice_ids(result: &Value) -> Vec<String> {
    result["structuredContent"]["notices"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Calls `status` until its notices arrive (the gate runs in the background).
fn first_notices(s: &mut Stdio_) -> Vec<String> {
    wait_for(Duration::from_secs(30), || {
        let ids = notice_ids(&s.call("status", json!({})));
        (!ids.is_empty()).then_some(ids)
    })
    .expect("the session-start notices never arrived")
}

fn pid_in(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[test]
fn a_resumed_session_gets_a_gate_evaluation() {
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(ws.path().join("app.py"), "def main():\n    return 1\n").unwrap();
    let mut s = Stdio_::start(mcp(home.path(), ws.path(), None));
    let started = Instant::now();
    let init = s.initialize();
    assert!(init["result"]["serverInfo"]["name"] == "loci", "{init}");
    eprintln!("initialize answered in {:?}", started.elapsed());
    assert_eq!(first_notices(&mut s), ["unindexed"]);
    let again = s.call("status", json!({}));
    assert!(
        notice_ids(&again).is_empty(),
        "the notice came twice in one session: {again}"
    );
    assert_eq!(
        again["structuredContent"]["session_start"]["state"],
        "unindexed"
    );

    // The session is replaced: a full evaluation, and its notices reach the new session.
    s.initialize();
    assert_eq!(first_notices(&mut s), ["unindexed"]);
    assert!(notice_ids(&s.call("status", json!({}))).is_empty());
}

#[derive(Clone, Copy, Debug)]
enum End {
    StdinClosed,
    Sigterm,
    Sigint,
}

/// A session whose gate started a background sync that has a grandchild (a real
/// `loci watch`, holding the workspace's watcher lock), ended by `end`: the child and
/// the grandchild are gone within a second, no lock is left held, and with `replace`
/// a session replacement in between neither doubled nor lost the tracked run.
fn teardown(end: End, replace: bool) {
    let (home, ws, scratch) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    indexed_workspace(home.path(), ws.path());
    std::fs::write(ws.path().join("src/new.rs"), "pub fn fresh() {}\n").unwrap();
    let exe = script(
        scratch.path(),
        "sync-with-grandchild",
        "echo \"$@\" >> \"$SCRATCH/spawns.log\"\n\"$LOCI\" watch \"$2\" >/dev/null 2>&1 &\necho $! > \"$SCRATCH/grandchild.pid\"\necho $$ > \"$SCRATCH/child.pid\"\nwait",
    );
    let mut s = Stdio_::start(mcp(home.path(), ws.path(), Some(&exe)));
    s.initialize();
    let watch_lock = ws.path().join(".loci/watch.lock");
    let held = wait_for(Duration::from_secs(30), || {
        let child = pid_in(&scratch.path().join("child.pid"))?;
        let grandchild = pid_in(&scratch.path().join("grandchild.pid"))?;
        let holder = loci_index::lock::holder_at(&watch_lock).ok()??;
        (holder.pid == grandchild as u32).then_some((child, grandchild))
    });
    let (child, grandchild) = held.expect("the background sync and its grandchild never ran");
    if replace {
        s.initialize();
        let status = s.call("status", json!({}));
        assert_eq!(status["isError"], false, "{status}");
    }
    let ended = Instant::now();
    match end {
        End::StdinClosed => s.close_stdin(),
        End::Sigterm => unsafe_kill(s.child.id() as i32, libc_sig::TERM),
        End::Sigint => unsafe_kill(s.child.id() as i32, libc_sig::INT),
    }
    let unlocked = || loci_index::lock::holder_at(&watch_lock).is_ok_and(|h| h.is_none());
    let gone = wait_for(Duration::from_secs(10), || {
        (!alive(child) && !alive(grandchild) && unlocked()).then(|| ended.elapsed())
    });
    let took = gone.unwrap_or_else(|| {
        panic!("{end:?}: a child loci started survived, or its lock is still held")
    });
    assert!(
        took <= Duration::from_secs(1),
        "{end:?}: the children took {took:?} to go and free the lock"
    );
    let exited = wait_for(Duration::from_secs(10), || s.child.try_wait().unwrap());
    assert!(exited.is_some(), "{end:?}: loci mcp did not exit");
    let holder = loci_index::lock::holder_at(&watch_lock).unwrap();
    assert!(
        holder.is_none(),
        "{end:?}: the watcher lock is still held by {holder:?} (child {child}, grandchild {grandchild}, alive {})",
        alive(holder.as_ref().map_or(0, |h| h.pid as i32))
    );
    assert!(
        loci_index::lock::current_holder(&ws.path().join(".loci"))
            .unwrap()
            .is_none(),
        "{end:?}: the index lock is still held"
    );
    let spawns = std::fs::read_to_string(scratch.path().join("spawns.log")).unwrap();
    assert_eq!(
        spawns.lines().count(),
        1,
        "{end:?}: background runs started: {spawns}"
    );
}

/// Signal numbers, without a libc dependency in the tests.
mod libc_sig {
    pub const TERM: i32 = 15;
    pub const INT: i32 = 2;
}

fn unsafe_kill(pid: i32, signal: i32) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn session_shut_down_by_closing_stdin_leaves_no_child_and_no_lock() {
    teardown(End::StdinClosed, false);
}

#[test]
fn session_shut_down_by_sigterm_leaves_no_child_and_no_lock() {
    teardown(End::Sigterm, false);
}

#[test]
fn session_shut_down_by_sigint_leaves_no_child_and_no_lock() {
    teardown(End::Sigint, false);
}

#[test]
fn the_teardown_sweep_survives_a_session_replacement() {
    teardown(End::StdinClosed, true);
}

#[test]
fn two_mcp_servers_share_one_index_while_one_of_them_syncs() {
    let (home, ws, scratch) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    indexed_workspace(home.path(), ws.path());
    std::fs::write(ws.path().join("src/new.rs"), "pub fn fresh() {}\n").unwrap();
    // Server A's background sync stands in for a long one: a real `loci watch` syncs
    // and keeps holding the workspace's write side.
    let long_sync = script(
        scratch.path(),
        "long-sync",
        "echo $$ > \"$SCRATCH/a-run.pid\"\nexec \"$LOCI\" watch \"$2\"",
    );
    let mut a = Stdio_::start(mcp(home.path(), ws.path(), Some(&long_sync)));
    a.initialize();
    let watch_lock = ws.path().join(".loci/watch.lock");
    let writer = wait_for(Duration::from_secs(30), || {
        let pid = pid_in(&scratch.path().join("a-run.pid"))?;
        let holder = loci_index::lock::holder_at(&watch_lock).ok()??;
        (holder.pid == pid as u32).then_some(pid)
    })
    .expect("server A's sync never took the index");
    // Server B, with a logging loci: it must never start a sync of its own.
    let logging = script(
        scratch.path(),
        "logging-loci",
        "echo \"$@\" >> \"$SCRATCH/b-spawns.log\"\nexec \"$LOCI\" \"$@\"",
    );
    let mut b = Stdio_::start(mcp(home.path(), ws.path(), Some(&logging)));
    b.initialize();
    let notices = first_notices(&mut b);
    assert_eq!(
        notices,
        [format!("busy:{writer}")],
        "B's session start: {notices:?}"
    );
    // Readers are never blocked: B answers while A's run holds the index, and says
    // who holds it.
    let busy = wait_for(Duration::from_secs(30), || {
        let r = b.call("find", json!({"pattern": "parse_config"}));
        assert_eq!(r["isError"], false, "{r}");
        assert_eq!(
            r["structuredContent"]["symbols"][0]["name"], "parse_config",
            "{r}"
        );
        r["structuredContent"]["index"]["busy"]
            .as_str()
            .map(str::to_string)
    })
    .expect("B never said the index is busy");
    assert!(busy.contains(&format!("pid {writer}")), "{busy}");
    let r = a.call("find", json!({"pattern": "parse_config"}));
    assert_eq!(r["structuredContent"]["index"]["sync_running"], true, "{r}");
    assert!(
        !scratch.path().join("b-spawns.log").exists(),
        "B fought A for the index: {}",
        std::fs::read_to_string(scratch.path().join("b-spawns.log")).unwrap_or_default()
    );
    a.close_stdin();
    b.close_stdin();
    assert!(wait_for(Duration::from_secs(10), || (!alive(writer)).then_some(())).is_some());
}

#[test]
fn drift_found_during_a_session_starts_one_background_sync() {
    let (home, ws, scratch) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    indexed_workspace(home.path(), ws.path());
    let logging = script(
        scratch.path(),
        "logging-loci",
        "echo \"$@\" >> \"$SCRATCH/spawns.log\"\nexec \"$LOCI\" \"$@\"",
    );
    let mut s = Stdio_::start(mcp(home.path(), ws.path(), Some(&logging)));
    s.initialize();
    let clean = wait_for(Duration::from_secs(30), || {
        let r = s.call("status", json!({}));
        let state = r["structuredContent"]["session_start"]["state"]
            .as_str()?
            .to_string();
        (state != "pending").then_some(state)
    });
    assert_eq!(clean.as_deref(), Some("clean"));
    // Every answer's stamp says which run it reflects and how old the last check of the
    // tree is.
    let r = s.call("find", json!({"pattern": "*"}));
    let stamp = &r["structuredContent"]["index"];
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let synced = stamp["synced_at"].as_u64().unwrap_or_else(|| panic!("{r}"));
    assert!(synced <= now && now - synced < 600, "{r}");
    let checked = wait_for(Duration::from_secs(30), || {
        let r = s.call("find", json!({"pattern": "*"}));
        r["structuredContent"]["index"]["checked_ms_ago"].as_u64()
    });
    assert!(checked.is_some_and(|ms| ms < 30_000), "{checked:?}");
    std::fs::write(ws.path().join("src/late.rs"), "pub fn arrived_late() {}\n").unwrap();
    // `status` classifies the workspace on the call, not at session start.
    let r = s.call("status", json!({}));
    let sc = &r["structuredContent"];
    assert_eq!(sc["state"], "drift", "{r}");
    assert_eq!(sc["session_start"]["state"], "clean", "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(": drift (")
    );
    // Calls keep answering from the index as it is until the background sync lands.
    let found = wait_for(Duration::from_secs(60), || {
        let r = s.call("find", json!({"pattern": "arrived_late"}));
        assert_eq!(r["isError"], false, "{r}");
        (r["structuredContent"]["page"]["total"] == 1).then_some(r)
    });
    assert!(found.is_some(), "the drift was never synced");
    let later = s.call("find", json!({"pattern": "arrived_late"}))["structuredContent"]["index"]
        ["synced_at"]
        .as_u64()
        .unwrap();
    assert!(
        later >= synced,
        "the sync's stamp is not older than the index's"
    );
    let clean_again = wait_for(Duration::from_secs(30), || {
        let r = s.call("status", json!({}));
        (r["structuredContent"]["state"] == "clean").then_some(r)
    });
    assert!(
        clean_again.is_some(),
        "status kept saying drift after the sync"
    );
    let spawns = std::fs::read_to_string(scratch.path().join("spawns.log")).unwrap();
    let syncs = spawns.lines().filter(|l| l.starts_with("sync ")).count();
    assert_eq!(syncs, 1, "background runs: {spawns}");
}
