//! Session replacement rebinds the session, never the host (in a process of its own:
//! LOCI_HOME and the lifecycle's executable point at its temp dirs from the start).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use loci_mcp::args::Args;
use loci_mcp::{Host, HostOptions, LociMcp};

use crate::alone;

fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn cross_session_state_survives_the_rebind() {
    const TEST: &str = "cross_session_state_survives_the_rebind";
    if !alone::here(module_path!(), TEST) {
        let home = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let sync = scratch.path().join("slow-sync");
        std::fs::write(&sync, "#!/bin/sh\necho $$ >> \"$0.pids\"\nexec sleep 60\n").unwrap();
        std::fs::set_permissions(&sync, std::fs::Permissions::from_mode(0o755)).unwrap();
        let xdg = home.path().join("xdg");
        let env = [
            ("LOCI_HOME", home.path().as_os_str()),
            ("XDG_CONFIG_HOME", xdg.as_os_str()),
            ("LOCI_LIFECYCLE_EXECUTABLE", sync.as_os_str()),
            ("LOCI_LIFECYCLE_GATE_BUDGET_MS", "10000".as_ref()),
        ];
        return alone::run(module_path!(), TEST, &env);
    }
    let sync = PathBuf::from(std::env::var_os("LOCI_LIFECYCLE_EXECUTABLE").unwrap());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.py"), "def helper():\n    return 1\n").unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let cfg = loci_api::config(Some(&root));
    let req = loci_api::IndexRequest {
        path: root.clone(),
        index_path: None,
        max_file_bytes: None,
        threads: 1,
    };
    loci_api::index(&req, &cfg, &loci_api::vocab::index::NoProgress).unwrap();
    // Drift: the session-start gate starts a background sync (the stand-in sleeps).
    std::fs::write(dir.path().join("new.py"), "def fresh():\n    return 2\n").unwrap();

    let host = Host::new(HostOptions {
        workspace: Some(root.clone()),
        ..Default::default()
    });
    let server = LociMcp::new(host.clone());
    server.start_session(false, None);
    assert_eq!(server.generation(), 1);
    let first_id = server.session_id().unwrap();
    assert!(
        wait_for(Duration::from_secs(20), || server.gate_settled()),
        "the session-start evaluation never answered"
    );
    assert_eq!(
        host.live_children(),
        1,
        "the gate did not start its background sync"
    );
    let find = loci_mcp::tools::tool("find").unwrap();
    let args = || {
        Args::new(
            serde_json::json!({"pattern": "helper"})
                .as_object()
                .cloned(),
        )
    };
    let before = server.call(
        find,
        args(),
        loci_mcp::cancel::CallCancel::new(),
        loci_api::memory::MemoryAccess::All,
    );
    assert_eq!(before.is_error, Some(false), "{before:?}");
    let ws_before = host.workspace(&root).unwrap();
    let tracked_before = host.tracked(&root);
    assert!(host.snapshot(&root).is_some());

    // The session is replaced (a new `initialize` on the same connection).
    server.start_session(false, None);
    assert_eq!(server.generation(), 2);
    let second_id = server.session_id().unwrap();
    assert_ne!(
        first_id, second_id,
        "the once-per-session records did not re-arm"
    );
    let after = server.call(
        find,
        args(),
        loci_mcp::cancel::CallCancel::new(),
        loci_api::memory::MemoryAccess::All,
    );
    assert_eq!(after.is_error, Some(false), "{after:?}");

    // The host's stores and its tracked child are the same ones.
    assert!(Arc::ptr_eq(&ws_before, &host.workspace(&root).unwrap()));
    assert!(Arc::ptr_eq(&tracked_before, &host.tracked(&root)));
    assert!(
        host.snapshot(&root).is_some(),
        "the recorded snapshot is gone"
    );
    assert_eq!(
        host.live_children(),
        1,
        "the rebind lost or doubled the tracked child"
    );
    let pids = std::fs::read_to_string(format!("{}.pids", sync.display())).unwrap_or_default();
    // The second evaluation saw the run in flight and started none.
    assert!(wait_for(Duration::from_secs(20), || server.gate_settled()));
    let pids_later =
        std::fs::read_to_string(format!("{}.pids", sync.display())).unwrap_or_default();
    assert_eq!(
        pids_later.lines().count(),
        1,
        "started twice: {pids} / {pids_later}"
    );
    loci_api::vocab::process::teardown_all_children();
    assert_eq!(host.live_children(), 0);
}
