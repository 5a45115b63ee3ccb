//! Seed 004's session-start scenarios, through the real `loci gate` and real files.

use crate::lifecycle_support;

use std::io::Write;
use std::process::Stdio;

use lifecycle_support::*;

#[test]
fn existing_index_is_reported_ready_without_blocking() {
    let ws = Ws::indexed();
    let (answer, _) = ws.gate(&["--session", "s1"], &[]);
    assert_shape(&answer);
    assert_eq!(state(&answer), "clean", "{answer}");
    assert!(answer.get("started").is_none(), "{answer}");
    assert!(answer["facts"]["elapsed_ms"].is_u64());
}

#[test]
fn unindexed_workspace_is_reported_and_the_session_proceeds() {
    let ws = Ws::new(SOURCES);
    let (answer, _) = ws.gate(&[], &[]);
    assert_shape(&answer);
    assert_eq!(state(&answer), "unindexed", "{answer}");
    assert_eq!(answer["workspace"], path_str(&ws.root()));
    assert!(!ws.root().join(".loci").exists(), "the gate wrote a marker");
}

#[test]
fn session_working_directory_is_the_source_of_truth() {
    // The process runs in an indexed workspace; the session's cwd is another one.
    let process_ws = Ws::indexed();
    let session_ws = Ws::new(SOURCES);
    let mut child = process_ws
        .cmd()
        .args(["gate", "--json", "--hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::json!({
        "session_id": "hook-session",
        "cwd": session_ws.root(),
        "hook_event_name": "SessionStart",
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answer = parse(&out);
    assert_eq!(
        answer["workspace"],
        path_str(&session_ws.root()),
        "{answer}"
    );
    assert_eq!(state(&answer), "unindexed");
}

#[test]
fn auto_create_disabled_informs_once_with_guidance() {
    let ws = Ws::new(SOURCES);
    let exe = ws.logging_loci();
    let envs = [("LOCI_LIFECYCLE_EXECUTABLE", path_str(&exe))];
    let (first, _) = ws.gate(&["--session", "s1"], &envs);
    assert_eq!(state(&first), "unindexed");
    assert_eq!(notice_ids(&first), ["unindexed"]);
    let text = first["notices"][0]["message"].as_str().unwrap();
    assert!(
        text.contains("autoCreate") && text.contains("LOCI_LIFECYCLE_AUTO_CREATE"),
        "{text}"
    );
    let (second, _) = ws.gate(&["--session", "s1"], &envs);
    assert!(notice_ids(&second).is_empty(), "notice repeated: {second}");
    // A new session is told again.
    let (other, _) = ws.gate(&[], &[envs[0], ("LOCI_SESSION_ID", "s2")]);
    assert_eq!(notice_ids(&other), ["unindexed"]);
    assert!(
        ws.spawns().is_empty(),
        "no indexing may start: {:?}",
        ws.spawns()
    );
    assert!(!ws.root().join(".loci").exists());
}

#[test]
fn auto_create_enabled_indexes_in_the_background_with_the_maintenance_budget() {
    let ws = Ws::new(SOURCES);
    let (answer, _) = ws.gate(
        &["--session", "s1"],
        &[
            ("LOCI_LIFECYCLE_AUTO_CREATE", "1"),
            ("LOCI_INDEX_MAINTENANCE_TIMEOUT_MS", "123456"),
        ],
    );
    assert_eq!(state(&answer), "indexing", "{answer}");
    assert_eq!(notice_ids(&answer), ["indexing-started"]);
    let started = &answer["started"];
    assert_eq!(started["purpose"], "index");
    assert_eq!(started["budget_ms"], 123456);
    assert_eq!(started["budget_source"], "index.maintenanceTimeoutMs");
    // The run's owner (which `ws.gate` waits for) finished it: the index is there now.
    let status = ws.status();
    assert_eq!(state(&status), "clean", "{status}");
    assert_eq!(status["last_run"]["result"], "ok");
    assert_eq!(status["last_run"]["budget_ms"], 123456);
    let (again, _) = ws.gate(&["--session", "s1"], &[("LOCI_LIFECYCLE_AUTO_CREATE", "1")]);
    assert_eq!(state(&again), "clean");
    assert!(notice_ids(&again).is_empty());
}

#[test]
fn maintenance_key_absent_leaves_the_pre_existing_default_budget() {
    let ws = Ws::new(SOURCES);
    let cfg = ws.home.path().join("xdg/loci/config.toml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(&cfg, "[lifecycle]\nautoCreate = true\n").unwrap();
    let (answer, _) = ws.gate(&["--session", "s1"], &[]);
    assert_eq!(state(&answer), "indexing", "{answer}");
    assert_eq!(answer["started"]["budget_ms"], 600_000);
    assert_eq!(answer["started"]["budget_source"], "default");
}

#[test]
fn drift_starts_a_background_sync_and_reports_syncing() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let (answer, _) = ws.gate(&["--session", "s1"], &[]);
    assert_eq!(state(&answer), "syncing", "{answer}");
    assert_eq!(answer["started"]["purpose"], "sync");
    assert_eq!(answer["facts"]["drift"]["changed"], 1, "{answer}");
    let status = ws.status();
    assert_eq!(state(&status), "clean", "the sync did not run: {status}");
    assert_eq!(status["last_run"]["purpose"], "sync");
}

#[test]
fn sync_on_start_disabled_reports_drift_and_starts_nothing() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let exe = ws.logging_loci();
    let (answer, _) = ws.gate(
        &["--session", "s1"],
        &[
            ("LOCI_LIFECYCLE_SYNC_ON_START", "0"),
            ("LOCI_LIFECYCLE_EXECUTABLE", path_str(&exe)),
        ],
    );
    assert_eq!(state(&answer), "drift", "{answer}");
    assert_eq!(notice_ids(&answer), ["drift"]);
    assert!(ws.spawns().is_empty());
}

#[test]
fn indexed_workspace_with_no_drift_does_nothing() {
    let ws = Ws::indexed();
    let exe = ws.logging_loci();
    let (answer, _) = ws.gate(
        &["--session", "s1"],
        &[("LOCI_LIFECYCLE_EXECUTABLE", path_str(&exe))],
    );
    assert_eq!(state(&answer), "clean", "{answer}");
    assert!(answer.get("started").is_none());
    assert!(notice_ids(&answer).is_empty());
    assert!(
        ws.spawns().is_empty(),
        "a child was spawned: {:?}",
        ws.spawns()
    );
}

#[test]
fn corrupt_index_is_reported_nothing_deleted_and_rebuilt_only_with_consent() {
    let ws = Ws::indexed();
    let db = ws.index_db();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let garbage = b"this is not a sqlite database, but it is the user's file".repeat(100);
    std::fs::write(&db, &garbage).unwrap();
    let exe = ws.logging_loci();
    let envs = [("LOCI_LIFECYCLE_EXECUTABLE", path_str(&exe))];
    let (answer, _) = ws.gate(&["--session", "s1"], &envs);
    assert_eq!(state(&answer), "corrupt", "{answer}");
    assert_eq!(notice_ids(&answer), ["corrupt"]);
    assert!(
        answer["notices"][0]["message"]
            .as_str()
            .unwrap()
            .contains("loci rebuild --yes")
    );
    assert!(
        ws.spawns().is_empty(),
        "the gate started work on a corrupt index"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "the gate touched the index"
    );

    let out = ws.cmd().args(["rebuild", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(17), "{out:?}");
    assert_eq!(parse(&out)["error"]["kind"], "consent_required");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "rebuild without --yes deleted"
    );

    let out = ws
        .cmd()
        .args(["rebuild", "--yes", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(state(&ws.status()), "clean");
}

#[test]
fn unknown_schema_is_corrupt_an_interrupted_first_index_is_resumable_an_interrupted_sync_is_drift()
{
    let ws = Ws::indexed();
    // A later sync interrupted after a complete index: sound but behind → drift.
    let conn = rusqlite_open(&ws.index_db());
    conn.execute("UPDATE meta SET value = 'indexing' WHERE key = 'state'", [])
        .unwrap();
    drop(conn);
    let status = ws.status();
    assert_eq!(state(&status), "drift", "{status}");
    assert!(status["reason"].as_str().unwrap().contains("interrupted"));

    // A first index that never completed: not corruption, no usable index either; the
    // next index run (a sync, or the gate with autoCreate) starts it over.
    let conn = rusqlite_open(&ws.index_db());
    conn.execute("DELETE FROM meta WHERE key = 'completed_at'", [])
        .unwrap();
    drop(conn);
    let status = ws.status();
    assert_eq!(state(&status), "unindexed", "{status}");
    assert_eq!(status["facts"]["interrupted"], true, "{status}");
    assert!(status["reason"].as_str().unwrap().contains("interrupted"));

    let conn = rusqlite_open(&ws.index_db());
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let status = ws.status();
    assert_eq!(state(&status), "corrupt", "{status}");
    assert!(
        status["reason"]
            .as_str()
            .unwrap()
            .contains("schema version 99"),
        "{status}"
    );
}

fn rusqlite_open(p: &std::path::Path) -> loci_store::rusqlite::Connection {
    loci_store::rusqlite::Connection::open(p).unwrap()
}

#[test]
fn busy_index_is_skipped_with_a_notice_naming_the_holder() {
    let ws = Ws::indexed();
    let mut watcher = ws
        .cmd()
        .args(["watch", "--json"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let held = wait_for(std::time::Duration::from_secs(10), || {
        let s = ws.status();
        (state(&s) == "busy").then_some(s)
    });
    touch_source(&ws);
    let exe = ws.logging_loci();
    let envs = [("LOCI_LIFECYCLE_EXECUTABLE", path_str(&exe))];
    let (answer, _) = ws.gate(&["--session", "s1"], &envs);
    let (again, _) = ws.gate(&["--session", "s1"], &envs);
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert!(held.is_some(), "the watcher never held the index");
    assert_eq!(state(&answer), "busy", "{answer}");
    let pid = watcher.id();
    assert_eq!(notice_ids(&answer), [format!("busy:{pid}")]);
    let text = answer["notices"][0]["message"].as_str().unwrap();
    assert!(
        text.contains(&format!("pid {pid}")) && text.contains("watch"),
        "{text}"
    );
    assert_eq!(answer["facts"]["holder"]["pid"], pid);
    assert!(
        notice_ids(&again).is_empty(),
        "busy notice repeated: {again}"
    );
    assert!(ws.spawns().is_empty(), "the gate fought the holder");
}

#[test]
fn healthy_index_on_repeated_sessions_does_no_redundant_work() {
    let ws = Ws::indexed();
    let exe = ws.logging_loci();
    let exe_env = ("LOCI_LIFECYCLE_EXECUTABLE", path_str(&exe));
    let (first, _) = ws.gate(&["--session", "a"], &[exe_env]);
    assert_eq!(state(&first), "clean");
    assert!(first["facts"].get("cached").is_none(), "{first}");
    for session in ["b", "c", "d"] {
        let (next, _) = ws.gate(&["--session", session], &[exe_env]);
        assert_eq!(state(&next), "clean");
        assert_eq!(next["facts"]["cached"], true, "re-walked: {next}");
        assert!(next["facts"].get("drift").is_none(), "{next}");
    }
    // With the cache off every gate checks again, still without maintenance.
    let (uncached, _) = ws.gate(
        &["--session", "e"],
        &[exe_env, ("LOCI_LIFECYCLE_LIVENESS_CACHE_MS", "0")],
    );
    assert!(uncached["facts"].get("cached").is_none());
    assert!(ws.spawns().is_empty(), "{:?}", ws.spawns());
}

#[test]
fn missing_executable_is_unavailable_and_the_session_proceeds() {
    let ws = Ws::indexed();
    let missing = ws.scratch_file("no-such-loci");
    let envs = [("LOCI_LIFECYCLE_EXECUTABLE", path_str(&missing))];
    let (answer, _) = ws.gate(&["--session", "s1"], &envs);
    assert_eq!(state(&answer), "unavailable", "{answer}");
    assert_eq!(notice_ids(&answer), ["unavailable"]);
    assert!(answer["reason"].as_str().unwrap().contains("no-such-loci"));
    let (again, _) = ws.gate(&["--session", "s1"], &envs);
    assert!(notice_ids(&again).is_empty());
}

#[test]
fn gate_errors_are_captured_and_failing_work_is_retried_once_per_session() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let broken = ws.script(
        "loci-broken",
        "echo \"$@\" >> \"$SCRATCH/spawns.log\"\necho 'not json at all'\nexit 0",
    );
    let envs = [("LOCI_LIFECYCLE_EXECUTABLE", path_str(&broken))];
    let (first, _) = ws.gate(&["--session", "s1"], &envs);
    assert_eq!(first["started"]["purpose"], "sync", "{first}");
    let (second, _) = ws.gate(&["--session", "s1"], &envs);
    assert_eq!(
        second["last_run"]["result"], "unexpected_output",
        "{second}"
    );
    assert_eq!(
        second["started"]["purpose"], "sync",
        "one retry is allowed: {second}"
    );
    let (third, _) = ws.gate(&["--session", "s1"], &envs);
    assert!(third.get("started").is_none(), "retried twice: {third}");
    assert_eq!(notice_ids(&third), ["gave-up:sync"]);
    assert_eq!(ws.spawns().len(), 2);
    // The failure is in the state, not thrown.
    let status = ws.status();
    assert_eq!(status["last_run"]["result"], "unexpected_output");
    assert!(
        status["last_run"]["message"]
            .as_str()
            .unwrap()
            .contains("not json")
    );
    // A new session may try again.
    let (other, _) = ws.gate(&["--session", "s2"], &envs);
    assert_eq!(other["started"]["purpose"], "sync");
}

#[test]
fn gate_over_its_budget_answers_with_what_it_knows_and_finishes_in_the_background() {
    let ws = Ws::indexed();
    touch_source(&ws);
    let (answer, _) = ws.gate(
        &["--session", "s1"],
        &[("LOCI_LIFECYCLE_GATE_BUDGET_MS", "1")],
    );
    if answer["facts"]["pending"] == true {
        assert_eq!(state(&answer), "clean", "{answer}");
        assert!(answer.get("started").is_none());
    } else {
        assert_eq!(state(&answer), "syncing", "{answer}");
    }
    // Either way the gate finished the check and handed the sync off before it exited.
    let status = ws.status();
    assert_eq!(state(&status), "clean", "{status}");
    assert_eq!(status["last_run"]["purpose"], "sync", "{status}");
}
