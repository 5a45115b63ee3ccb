//! Seed 004's safe-execution scenarios: budgets, teardown, the watcher pin, the
//! inherited environment, one run per workspace. Real processes throughout.

use crate::lifecycle_support;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use lifecycle_support::*;

#[test]
fn hung_run_is_cancelled_at_its_budget_and_the_state_records_a_timeout() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let hung = ws.script("loci-hung", "exec sleep 60");
    let started = Instant::now();
    let (answer, _) = ws.gate(
        &["--session", "s1"],
        &[
            ("LOCI_LIFECYCLE_EXECUTABLE", path_str(&hung)),
            ("LOCI_INDEX_MAINTENANCE_TIMEOUT_MS", "300"),
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the budget was not enforced"
    );
    assert_eq!(answer["started"]["budget_ms"], 300);
    let status = ws.status();
    assert_eq!(status["last_run"]["result"], "timeout", "{status}");
    assert_eq!(status["last_run"]["budget_ms"], 300);
    assert_eq!(
        state(&status),
        "drift",
        "the session is unaffected: {status}"
    );
}

#[test]
fn terminating_a_runs_owner_leaves_no_orphan() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let hung = ws.script(
        "loci-hung",
        "echo $$ > \"$SCRATCH/child.pid\"\nexec sleep 60",
    );
    // The gate answers and exits; the run belongs to the owner it handed it off to.
    let (answer, _) = ws.gate_no_wait(
        &["--session", "s1"],
        &[("LOCI_LIFECYCLE_EXECUTABLE", path_str(&hung))],
    );
    assert_eq!(state(&answer), "syncing", "{answer}");
    let owner = answer["started"]["pid"].as_i64().unwrap() as i32;
    let child: i32 = wait_for(Duration::from_secs(10), || {
        std::fs::read_to_string(ws.scratch_file("child.pid"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
    })
    .expect("the run never started");
    assert!(alive(child) && alive(owner));
    // Whoever ends the work (a host's teardown, the user) terminates the owner.
    unsafe { libc_kill(owner, 15) };
    let gone = wait_for(Duration::from_secs(10), || {
        (!alive(child) && !alive(owner)).then_some(())
    });
    assert!(gone.is_some(), "child {child} outlived its owner {owner}");
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn auto_watch_in_the_parent_environment_is_pinned_off_for_maintenance_runs() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let wrapper = ws.script(
        "loci-env",
        "env > \"$SCRATCH/child.env\"\nexec \"$LOCI\" \"$@\"",
    );
    let started = Instant::now();
    let (answer, _) = ws.gate(
        &["--session", "s1"],
        &[
            ("LOCI_AUTO_WATCH", "1"),
            ("LOCI_LIFECYCLE_EXECUTABLE", path_str(&wrapper)),
            ("LOCI_INDEX_MAINTENANCE_TIMEOUT_MS", "30000"),
        ],
    );
    assert_eq!(answer["started"]["purpose"], "sync", "{answer}");
    // The run settled on its own: it neither turned into a watcher nor hit its budget.
    assert!(started.elapsed() < Duration::from_secs(25));
    let env = std::fs::read_to_string(ws.scratch_file("child.env")).unwrap();
    assert!(env.lines().any(|l| l == "LOCI_AUTO_WATCH=0"), "{env}");
    let status = ws.status();
    assert_eq!(status["last_run"]["result"], "ok", "{status}");
    assert_eq!(state(&status), "clean", "{status}");
}

#[test]
fn without_the_pin_a_sync_with_auto_watch_keeps_watching() {
    // The control for the test above: what the pin prevents.
    let ws = Ws::indexed();
    let mut sync = ws
        .cmd()
        .args(["sync", "--json"])
        .env("LOCI_AUTO_WATCH", "1")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let watching = wait_for(Duration::from_secs(10), || {
        let s = ws.status();
        (state(&s) == "busy" && s["facts"]["holder"]["purpose"] == "watch").then_some(())
    });
    let still_running = sync.try_wait().unwrap().is_none();
    let _ = sync.kill();
    let _ = sync.wait();
    assert!(watching.is_some() && still_running);
}

#[test]
fn inherited_environment_is_otherwise_untouched() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let wrapper = ws.script(
        "loci-env",
        "env > \"$SCRATCH/child.env\"\nexec \"$LOCI\" \"$@\"",
    );
    let ours = [
        ("LOCI_TEST_CREDENTIAL", "sk-test-123 with spaces"),
        ("ANTHROPIC_API_KEY", "ant-key-456"),
        ("LOCI_AUTO_WATCH", "true"),
        ("LANG", "C.UTF-8"),
    ];
    let mut envs: Vec<(&str, &str)> = ours.to_vec();
    envs.push(("LOCI_LIFECYCLE_EXECUTABLE", path_str(&wrapper)));
    let (answer, _) = ws.gate(&["--session", "s1"], &envs);
    assert_eq!(answer["started"]["purpose"], "sync", "{answer}");
    let child: std::collections::HashMap<String, String> =
        std::fs::read_to_string(ws.scratch_file("child.env"))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    // Everything the gate had (but the pin and what sh itself sets) reached the child as is.
    let mut gate_env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !k.starts_with("LOCI_") && k != "XDG_CONFIG_HOME")
        .collect();
    gate_env.extend(envs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    gate_env.push(("LOCI_HOME".into(), path_str(ws.home.path()).into()));
    for (k, v) in gate_env {
        if k == "LOCI_AUTO_WATCH" || ["PWD", "OLDPWD", "SHLVL", "_"].contains(&k.as_str()) {
            continue;
        }
        if v.contains('\n') {
            continue;
        }
        assert_eq!(child.get(&k), Some(&v), "{k} changed in the child");
    }
    assert_eq!(child.get("LOCI_AUTO_WATCH").map(String::as_str), Some("0"));
}

#[test]
fn one_maintenance_run_per_workspace_at_a_time() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let slow = ws.script(
        "loci-slow",
        "echo \"$@\" >> \"$SCRATCH/spawns.log\"\nsleep 2\nexec \"$LOCI\" \"$@\"",
    );
    let mut first = ws
        .cmd()
        .args(["gate", "--json", "--session", "a"])
        .env("LOCI_LIFECYCLE_EXECUTABLE", &slow)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut text = String::new();
    first
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(state(&answer), "syncing");
    // A second session starts while the first run is in flight.
    let (second, _) = ws.gate(
        &["--session", "b"],
        &[("LOCI_LIFECYCLE_EXECUTABLE", path_str(&slow))],
    );
    assert_eq!(state(&second), "syncing", "{second}");
    assert!(
        second.get("started").is_none(),
        "a second run started: {second}"
    );
    let _ = first.wait();
    ws.wait_for_owners();
    assert_eq!(ws.spawns().len(), 1, "{:?}", ws.spawns());
    assert_eq!(state(&ws.status()), "clean");
}
