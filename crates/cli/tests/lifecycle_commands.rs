//! `loci status`, `loci watch`, `loci sync` and `loci config show` through the real binary.

use crate::lifecycle_support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use lifecycle_support::*;

#[test]
fn status_reports_state_reason_workspace_and_notices() {
    let ws = Ws::new(SOURCES);
    let s = ws.status();
    assert_shape(&s);
    assert_eq!(state(&s), "unindexed");
    let out = ws.cmd().args(["sync", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let s = ws.status();
    assert_eq!(state(&s), "clean", "{s}");
    assert_eq!(s["facts"]["decider"], "marker");
    touch_source(&ws);
    let s = ws.status();
    assert_eq!(state(&s), "drift", "{s}");
    assert_eq!(s["facts"]["drift"]["changed"], 1);
}

#[test]
fn a_status_keeps_its_integrity_check_until_the_index_changes() {
    let ws = Ws::new(SOURCES);
    let out = ws.cmd().args(["sync", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let cached = |s: &serde_json::Value| s["facts"]["integrity_cached"] == true;
    // The first status scans the database; the next one of the same file does not
    // (the web view's live page asks every second: a scan is 150 ms on a big index).
    let first = ws.status();
    assert_eq!(state(&first), "clean", "{first}");
    assert!(!cached(&first), "{first}");
    let second = ws.status();
    assert_eq!(state(&second), "clean", "{second}");
    assert!(cached(&second), "the check was not kept: {second}");
    // A sync that writes the index makes the kept check stale: scanned again.
    touch_source(&ws);
    let out = ws.cmd().args(["sync", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let after = ws.status();
    assert_eq!(state(&after), "clean", "{after}");
    assert!(!cached(&after), "a changed index is checked again: {after}");
    assert!(cached(&ws.status()));
}

#[test]
fn a_directory_where_the_index_belongs_is_corrupt_not_unindexed_and_is_kept() {
    let ws = Ws::new(SOURCES);
    std::fs::create_dir_all(ws.index_db().join("keep")).unwrap();
    let s = ws.status();
    assert_eq!(state(&s), "corrupt", "{s}");
    assert!(s["reason"].as_str().unwrap().contains("not a file"), "{s}");
    // Neither a gate nor a rebuild deletes a directory it did not make.
    ws.gate(&[], &[]);
    let out = ws
        .cmd()
        .args(["rebuild", "--yes", "--json"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    assert!(ws.index_db().join("keep").is_dir());
}

#[test]
fn marker_absent_consults_the_registry_marker_present_never_does() {
    let ws = Ws::indexed();
    // Move the index out of the tree and record it there in the registry.
    let outside = ws.scratch_file("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::rename(ws.index_db(), outside.join("index.db")).unwrap();
    std::fs::remove_dir_all(ws.root().join(".loci")).unwrap();
    let reg = loci_store::registry::Registry::open(&ws.home.path().join("registry.db")).unwrap();
    reg.record_index(&ws.root(), &outside.join("index.db"), 2, 2)
        .unwrap();
    let s = ws.status();
    assert_eq!(s["facts"]["decider"], "registry", "{s}");
    assert_eq!(state(&s), "clean", "{s}");
    // With the marker back (and empty), the registry is not consulted.
    std::fs::create_dir_all(ws.root().join(".loci")).unwrap();
    let s = ws.status();
    assert_eq!(s["facts"]["decider"], "marker", "{s}");
    assert_eq!(state(&s), "unindexed", "{s}");
}

#[test]
fn watch_catches_up_on_start_then_syncs_changes() {
    let ws = Ws::indexed();
    touch_source(&ws); // changed while nothing watched
    let mut watcher = ws
        .cmd()
        .args(["watch", "--json"])
        .env("LOCI_LIFECYCLE_WATCH_DEBOUNCE_MS", "100")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watcher.stdout.take().unwrap()).lines();
    let first: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["trigger"], "catch_up");
    assert_eq!(first["files_parsed"], 1, "{first}");
    ws.write(&[("src/new.py", "def fresh():\n    pass\n")]);
    let second: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(second["trigger"], "change");
    assert_eq!(second["files_parsed"], 1, "{second}");
    // A second watcher is refused, naming the first.
    let out = ws.cmd().args(["watch", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(15), "{out:?}");
    assert_eq!(parse(&out)["error"]["detail"]["pid"], watcher.id());
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert_eq!(state(&ws.status()), "clean");
}

#[test]
fn config_layers_apply_in_order_and_show_their_source() {
    let ws = Ws::new(SOURCES);
    let user = ws.home.path().join("xdg/loci/config.toml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(
        &user,
        "[lifecycle]\nautoCreate = true\nlivenessCacheMs = 1000\n[index]\nmaxFileBytes = 5000\n",
    )
    .unwrap();
    ws.write(&[(
        ".loci/config.toml",
        "[lifecycle]\nlivenessCacheMs = 2000\n[index]\nmaintenanceTimeoutMs = 7000\n",
    )]);
    let out = ws
        .cmd()
        .args(["config", "show", "--json"])
        .env("LOCI_INDEX_MAINTENANCE_TIMEOUT_MS", "9000")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v = parse(&out);
    let get = |key: &str| {
        v["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == key)
            .cloned()
            .unwrap()
    };
    assert_eq!(get("lifecycle.autoCreate")["value"], true);
    assert_eq!(get("lifecycle.autoCreate")["source"]["layer"], "user");
    assert_eq!(get("lifecycle.livenessCacheMs")["value"], 2000);
    assert_eq!(
        get("lifecycle.livenessCacheMs")["source"]["layer"],
        "workspace"
    );
    assert_eq!(get("index.maintenanceTimeoutMs")["value"], 9000);
    assert_eq!(
        get("index.maintenanceTimeoutMs")["source"]["var"],
        "LOCI_INDEX_MAINTENANCE_TIMEOUT_MS"
    );
    assert_eq!(get("index.maxFileBytes")["value"], 5000);
    assert_eq!(get("lifecycle.syncOnStart")["source"]["layer"], "default");
    assert!(v["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn invalid_config_values_are_skipped_with_one_warning_naming_key_and_layer() {
    let ws = Ws::new(SOURCES);
    ws.write(&[(
        ".loci/config.toml",
        "[index]\nprobeTimeoutMs = \"soon\"\nmaintenanceTimeoutMs = 8000\n",
    )]);
    let out = ws
        .cmd()
        .args(["config", "show"])
        .env("LOCI_INDEX_MAINTENANCE_TIMEOUT_MS", "-5")
        .env("LOCI_LIFECYCLE_AUTO_CREATE", "perhaps")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("index.probeTimeoutMs") && w.contains("workspace config"))
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("index.maintenanceTimeoutMs")
                && w.contains("LOCI_INDEX_MAINTENANCE_TIMEOUT_MS"))
    );
    assert!(warnings.iter().any(|w| w.contains("lifecycle.autoCreate") && w.contains("LOCI_LIFECYCLE_AUTO_CREATE")));
    // The lower layer's values apply.
    assert!(stdout.contains("index.probeTimeoutMs = 30000"), "{stdout}");
    assert!(
        stdout.contains("index.maintenanceTimeoutMs = 8000"),
        "{stdout}"
    );
    assert!(stdout.contains("lifecycle.autoCreate = false"), "{stdout}");
    // The gate honours the same layering and still answers.
    let (answer, _) = ws.gate(&[], &[("LOCI_LIFECYCLE_AUTO_CREATE", "perhaps")]);
    assert_eq!(state(&answer), "unindexed");
}

#[test]
fn watch_lock_holder_makes_gates_report_busy_until_it_ends() {
    let ws = Ws::indexed();
    let mut watcher = ws
        .cmd()
        .args(["watch"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let busy = wait_for(Duration::from_secs(10), || {
        (state(&ws.status()) == "busy").then_some(())
    });
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert!(busy.is_some());
    assert_eq!(state(&ws.status()), "clean");
}
