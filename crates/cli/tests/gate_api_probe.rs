//! The gate's API probe chain, end to end: the real `loci gate` against real `loci
//! serve` processes on loopback (started by the test, or by the gate itself through the
//! supervisor), real indexes and real sockets. One test per scenario of the chain's
//! requirements: the chain itself, bounded and secure spawning, the doctrine mapping
//! and the configuration (the routes it asks: serve_repositories.rs).
//!
//! Every test uses ports of its own (never 8000: other tests and servers share this
//! machine); see probe_support for the stand-in `loci` that records each server.

use crate::lifecycle_support;
use crate::probe_support;

use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::free_port;
use lifecycle_support::{SOURCES, Ws, alive, notice_ids, parse, state, wait_for};
use probe_support::*;
use serde_json::Value;

// ---- API-backed indexedness probe chain ----

#[test]
fn api_is_up_and_the_path_is_indexed() {
    // The server's registry (its own LOCI_HOME) knows the workspace; the gate's own
    // registry does not, so only the server's answer can find it.
    let ws = Ws::new(SOURCES);
    let server_home = tempfile::tempdir().unwrap();
    let index = unmarked(&ws, server_home.path());
    let server = serve(&ws, server_home.path(), Some(KEY), &[]);
    let exe = recording_loci(&ws, REAL);
    let vars = with(
        gate_env(server.port),
        &[
            ("LOCI_API_KEY", KEY),
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
        ],
    );

    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "clean", "{v}");
    assert_eq!(decided_by(&v), "registry (api)", "{v}");
    assert!(reason(&v).ends_with("(decided by registry (api))"), "{v}");
    assert_eq!(v["facts"]["index_path"], index.to_str().unwrap(), "{v}");
    assert!(started(&ws).is_empty(), "a server was up: nothing to start");

    // The health check decides exactly as on the marker path: drift...
    ws.write(&[("src/new.py", "def fresh():\n    return 2\n")]);
    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "drift", "{v}");
    assert_eq!(decided_by(&v), "registry (api)");
    // ...and corrupt.
    std::fs::write(
        &index,
        b"this is not a database, and is longer than a header",
    )
    .unwrap();
    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "corrupt", "{v}");
    assert_ne!(v["facts"]["unknown"], true, "{v}");
    assert!(v["started"].is_null(), "{v}");
}

#[test]
fn api_is_up_and_the_path_is_not_indexed() {
    // The gate's own registry knows the workspace; the server's (empty) does not: the
    // API decides, and says absent.
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let server_home = tempfile::tempdir().unwrap();
    let server = serve(&ws, server_home.path(), Some(KEY), &[]);
    let vars = with(gate_env(server.port), &[("LOCI_API_KEY", KEY)]);

    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "unindexed", "{v}");
    assert_eq!(decided_by(&v), "registry (api)", "{v}");
    assert_eq!(
        notice_ids(&v),
        ["unindexed"],
        "the standard one-time notice: {v}"
    );
    assert!(v["started"].is_null(), "absent never triggers work: {v}");
}

#[test]
fn an_up_server_keyed_by_its_key_file_answers_a_gate_without_a_key() {
    // `loci serve` without LOCI_API_KEY writes its key file beside the registry; a gate
    // of the same user without the variable reads that file to ask it.
    let ws = Ws::new(SOURCES);
    let server_home = tempfile::tempdir().unwrap();
    unmarked(&ws, server_home.path());
    let server = serve(&ws, server_home.path(), None, &[]);
    let key_file = server_home.path().join("api-key");
    assert!(
        wait_for(Duration::from_secs(30), || key_file.is_file().then_some(())).is_some(),
        "loci serve wrote no key file"
    );
    // The gate shares the server's LOCI_HOME, where the key file is. Had it sent any
    // other key, the server would refuse it (401) and `registry (cli)` would decide.
    let exe = recording_loci(&ws, REAL);
    let vars = with(
        gate_env(server.port),
        &[
            ("LOCI_HOME", server_home.path().to_str().unwrap()),
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
        ],
    );
    let (v, out) = gate(&ws, &vars);
    assert_eq!(decided_by(&v), "registry (api)", "{v}");
    assert!(
        started(&ws).is_empty(),
        "the up server answered: nothing started"
    );
    let key = std::fs::read_to_string(&key_file).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains(key.trim()), "{text}");
}

#[test]
fn query_errors_fall_back_to_the_repositories_json() {
    let ws = Ws::new(SOURCES);
    let elsewhere = tempfile::tempdir().unwrap();
    let index = unmarked(&ws, elsewhere.path());
    let root = std::fs::canonicalize(ws.root()).unwrap();
    let entry = |r: &str| {
        serde_json::json!({"id": 1, "root": r, "index_path": index, "index_exists": true,
            "last_indexed_at": null, "files": 2, "symbols": 3})
    };
    // Listed exactly: found, and the index's own health decides.
    let listed =
        serde_json::json!({"repositories": [entry("/elsewhere"), entry(root.to_str().unwrap())]});
    let (mut stand_in, port) = list_only_server(&ws, &listed);
    let (v, _) = gate(&ws, &with(gate_env(port), &[("LOCI_API_KEY", KEY)]));
    let _ = stand_in.kill();
    let _ = stand_in.wait();
    assert_eq!(state(&v), "clean", "{v}");
    assert_eq!(decided_by(&v), "registry (api list)", "{v}");
    let seen = std::fs::read_to_string(ws.scratch_file("seen.log")).unwrap();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [
            "/health None".to_string(),
            format!("/api/v1/repositories/lookup Bearer {KEY}"),
            format!("/api/v1/repositories Bearer {KEY}"),
        ],
        "health carries no key; the lookup and the list carry the user's key exactly"
    );

    // Only a root that merely starts with this one (or is its parent) is listed: absent.
    std::fs::remove_file(ws.scratch_file("seen.log")).unwrap();
    let parent = root.parent().unwrap().to_str().unwrap().to_string();
    let near = format!("{}-other", root.display());
    let listed = serde_json::json!({"repositories": [entry(&parent), entry(&near)]});
    let (mut stand_in, port) = list_only_server(&ws, &listed);
    let (v, _) = gate(&ws, &with(gate_env(port), &[("LOCI_API_KEY", KEY)]));
    let _ = stand_in.kill();
    let _ = stand_in.wait();
    assert_eq!(state(&v), "unindexed", "{v}");
    assert_eq!(decided_by(&v), "registry (api list)", "{v}");
}

#[test]
fn no_api_is_reachable_and_the_spawn_budget_succeeds() {
    let ws = Ws::new(SOURCES);
    let index = unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, REAL);
    let port = free_port();
    let vars = with(
        gate_env(port),
        &[("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap())],
    );
    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "clean", "{v}");
    assert_eq!(
        decided_by(&v),
        "registry (api)",
        "the spawned server's lookup decides: {v}"
    );
    assert_eq!(v["facts"]["index_path"], index.to_str().unwrap());
    let servers = started(&ws);
    assert_eq!(servers.len(), 1, "one server, on the configured port");
    assert_eq!(servers[0].port(), port);
    assert_all_gone(&ws);
}

#[test]
fn spawn_budget_exhausted_falls_back_to_the_cli_registry() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, NEVER_HEALTHY);
    let vars = with(
        gate_env(free_port()),
        &[
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
            ("LOCI_API_PROBE_DEADLINE_MS", "600"),
        ],
    );
    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "clean", "{v}");
    assert_eq!(decided_by(&v), "registry (cli)", "{v}");
    assert!(reason(&v).ends_with("(decided by registry (cli))"), "{v}");
    assert_eq!(
        started(&ws).len(),
        1,
        "the one server started never became healthy"
    );
    assert_all_gone(&ws);
}

#[test]
fn marker_present_path_never_touches_the_api_or_registry() {
    let ws = Ws::indexed();
    // A registry that cannot be read: any registry probe would answer unknown.
    std::fs::write(ws.home.path().join("registry.db"), vec![b'x'; 4096]).unwrap();
    let _ = std::fs::remove_file(ws.home.path().join("registry.db-wal"));
    let _ = std::fs::remove_file(ws.home.path().join("registry.db-shm"));
    let recorder = Recorder::new();
    let exe = recording_loci(&ws, REAL);
    let vars = with(
        gate_env(recorder.port),
        &[("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap())],
    );
    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "clean", "{v}");
    assert_eq!(v["facts"]["decider"], "marker", "{v}");
    assert!(v["facts"]["decided_by"].is_null(), "{v}");
    assert_eq!(
        recorder.connections(),
        0,
        "the marker path made an HTTP connection"
    );
    assert!(started(&ws).is_empty(), "the marker path started a server");
}

// ---- Bounded and secure API spawning ----

#[test]
fn loopback_only_spawn_argv() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, REAL);
    let vars = with(
        gate_env(free_port()),
        &[("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap())],
    );
    let (v, _) = gate(&ws, &vars);
    assert_eq!(decided_by(&v), "registry (api)", "{v}");
    let servers = started(&ws);
    assert_eq!(servers.len(), 1);
    let args = &servers[0].argv[2..]; // after /bin/sh and the script
    assert_eq!(&args[..3], ["serve", "--host", "127.0.0.1"], "{args:?}");
    assert_eq!(
        args.len(),
        5,
        "serve --host 127.0.0.1 --port P, nothing else: {args:?}"
    );
    assert!(
        !args
            .iter()
            .any(|a| a == "--allow-remote" || a.contains("0.0.0.0"))
    );
}

#[test]
fn user_key_passes_through_untouched() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, REAL);
    let user_key = "user key: with spaces, +/= and ~! (used as is)";
    let vars = with(
        gate_env(free_port()),
        &[
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
            ("LOCI_API_KEY", user_key),
        ],
    );
    let (v, out) = gate(&ws, &vars);
    // The spawned server accepted the gate's requests: they carried this exact key.
    assert_eq!(decided_by(&v), "registry (api)", "{v}");
    let servers = started(&ws);
    assert_eq!(servers.len(), 1);
    assert_eq!(
        servers[0].var("LOCI_API_KEY"),
        Some(user_key),
        "the server's key"
    );
    assert_key_hidden(user_key, &servers[0], &out);
}

#[test]
fn ephemeral_key_generated_when_no_user_key_exists() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, REAL);
    let vars = with(
        gate_env(free_port()),
        &[("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap())],
    );
    let (v, out) = gate(&ws, &vars);
    assert_eq!(
        decided_by(&v),
        "registry (api)",
        "the server accepted the key: {v}"
    );
    let (v2, out2) = gate(&ws, &vars);
    assert_eq!(decided_by(&v2), "registry (api)", "{v2}");
    let servers = started(&ws);
    assert_eq!(servers.len(), 2);
    let keys: Vec<&str> = servers
        .iter()
        .map(|s| {
            s.var("LOCI_API_KEY")
                .expect("a key in the server's environment")
        })
        .collect();
    assert!(keys.iter().all(|k| k.len() >= 32), "{keys:?}");
    assert_ne!(keys[0], keys[1], "a fresh key per probe");
    assert_key_hidden(keys[0], &servers[0], &out);
    assert_key_hidden(keys[1], &servers[1], &out2);
    // Nothing was written: the ephemeral key is not the server's key file.
    assert!(!ws.home.path().join("api-key").exists());
}

#[test]
fn exit_code_3_conflicts_retry_on_a_new_port_within_the_deadline() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, REAL);
    // The configured port is held by a plain listener: health gets no answer, and a
    // server started there exits 3.
    let holder = Recorder::new();
    let vars = with(
        gate_env(holder.port),
        &[("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap())],
    );
    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "clean", "{v}");
    assert_eq!(decided_by(&v), "registry (api)", "{v}");
    let servers = started(&ws);
    assert!(servers.len() >= 2, "a retry after the conflict");
    assert_eq!(servers[0].port(), holder.port, "the configured port first");
    assert!(
        servers[1..].iter().all(|s| s.port() != holder.port),
        "then new ports"
    );
    assert!(
        holder.connections() >= 1,
        "health was polled on the configured port"
    );
    assert_all_gone(&ws);
}

#[test]
fn exit_3_retries_stop_at_the_deadline_with_every_child_gone() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    // Every start conflicts: the phase retries on new ports until the deadline.
    let exe = recording_loci(&ws, "sleep 0.05; exit 3");
    let deadline_ms = 700;
    let vars = with(
        gate_env(free_port()),
        &[
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
            ("LOCI_API_PROBE_DEADLINE_MS", &deadline_ms.to_string()),
        ],
    );
    let (v, _) = gate(&ws, &vars);
    assert_eq!(decided_by(&v), "registry (cli)", "{v}");
    let servers = started(&ws);
    assert!(
        servers.len() >= 2,
        "retried after exit 3: {}",
        servers.len()
    );
    let ports: std::collections::HashSet<u16> = servers.iter().map(Started::port).collect();
    assert_eq!(ports.len(), servers.len(), "each attempt on a new port");
    assert_all_gone(&ws);
}

#[test]
fn the_spawn_phase_never_runs_past_its_deadline() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, NEVER_HEALTHY);
    let deadline_ms: u128 = 500;
    // The registry cannot decide either, so the reason carries the API's failure,
    // which says when the probe stopped: at the deadline, plus the stop of the server
    // it started (SIGTERM, SIGKILL after 100 ms).
    let garbage = ws.home.path().join("registry.db");
    std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
    let vars = with(
        gate_env(free_port()),
        &[
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
            ("LOCI_API_PROBE_DEADLINE_MS", &deadline_ms.to_string()),
        ],
    );
    let t = Instant::now();
    let (v, _) = gate(&ws, &vars);
    let wall = t.elapsed();
    let r = reason(&v);
    let stopped: u128 = r
        .split("stopped after ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the reason says when the probe stopped: {r}"));
    assert!(stopped >= deadline_ms, "{r}");
    assert!(
        stopped <= deadline_ms + 400,
        "the spawn phase ran {stopped} ms past a {deadline_ms} ms deadline: {r}"
    );
    assert!(
        wall < Duration::from_secs(30),
        "the never-healthy server sleeps 600 s"
    );
    assert_all_gone(&ws);
}

#[test]
fn teardown_sweeps_spawned_servers() {
    for signal in [libc_sigterm(), libc_sigkill()] {
        let ws = Ws::new(SOURCES);
        unmarked(&ws, ws.home.path());
        let exe = recording_loci(&ws, NEVER_HEALTHY);
        let mut cmd = ws.cmd();
        cmd.arg("gate").arg(ws.root()).arg("--json");
        for (k, v) in with(
            gate_env(free_port()),
            &[("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap())],
        ) {
            cmd.env(k, v);
        }
        let mut gate = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = wait_for(Duration::from_secs(30), || started(&ws).pop())
            .expect("the gate started a server");
        assert!(alive(server.pid));
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(gate.id() as i32).unwrap(),
            signal,
        )
        .unwrap();
        let _ = gate.wait();
        let gone = wait_for(Duration::from_secs(10), || {
            (!alive(server.pid)).then_some(())
        });
        assert!(
            gone.is_some(),
            "{signal:?} of the gate left its server (pid {}) running",
            server.pid
        );
    }
}

fn libc_sigterm() -> rustix::process::Signal {
    rustix::process::Signal::TERM
}

fn libc_sigkill() -> rustix::process::Signal {
    rustix::process::Signal::KILL
}

// ---- Doctrine mapping unchanged for API-decided outcomes ----

#[test]
fn busy_is_not_converted_by_the_api_path() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    // The registry held exclusively by another process's connection.
    let registry =
        loci_store::rusqlite::Connection::open(ws.home.path().join("registry.db")).unwrap();
    registry
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE workspaces SET files = files;")
        .unwrap();
    let exe = recording_loci(&ws, NEVER_HEALTHY);
    let vars = with(
        gate_env(free_port()),
        &[
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
            ("LOCI_API_PROBE_DEADLINE_MS", "300"),
        ],
    );
    let (v, _) = gate(&ws, &vars);
    drop(registry);
    assert_eq!(state(&v), "busy", "{v}");
    assert!(reason(&v).contains("registry (cli)"), "{v}");
    assert!(v["started"].is_null(), "{v}");
}

#[test]
fn total_api_path_failure_fails_safe() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    std::fs::write(ws.home.path().join("registry.db"), vec![b'x'; 4096]).unwrap();
    let _ = std::fs::remove_file(ws.home.path().join("registry.db-wal"));
    let _ = std::fs::remove_file(ws.home.path().join("registry.db-shm"));
    let exe = recording_loci(&ws, NEVER_HEALTHY);
    let vars = with(
        gate_env(free_port()),
        &[
            ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
            ("LOCI_API_PROBE_DEADLINE_MS", "300"),
            ("LOCI_LIFECYCLE_AUTO_CREATE", "1"),
        ],
    );
    let (v, _) = gate(&ws, &vars);
    assert_eq!(state(&v), "corrupt", "{v}");
    assert_eq!(v["facts"]["unknown"], true, "{v}");
    let r = reason(&v);
    assert!(r.starts_with("unknown: "), "{r}");
    assert!(
        r.contains("registry (api): ") && r.contains("registry (cli): "),
        "both failures: {r}"
    );
    assert!(
        v["started"].is_null(),
        "no action without confirmation: {v}"
    );
    assert_eq!(notice_ids(&v), ["unknown"], "{v}");
    assert_all_gone(&ws);
}

// ---- API probe configuration ----

#[test]
fn defaults_enable_the_api_path_on_port_8000() {
    let ws = Ws::new(SOURCES);
    let out = ws
        .cmd()
        .env_remove("LOCI_API_ENABLED")
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown = parse(&out).to_string();
    let v: Value = serde_json::from_str(&shown).unwrap();
    let setting = |key: &str| {
        let all = v["settings"]
            .as_array()
            .or(v.as_array())
            .cloned()
            .unwrap_or_default();
        all.into_iter()
            .find(|s| s["key"] == key)
            .unwrap_or_else(|| panic!("{key} not in {v}"))
    };
    assert_eq!(setting("api.enabled")["value"], true);
    assert_eq!(setting("api.port")["value"], 8000);
    assert_eq!(setting("api.port")["source"]["layer"], "default");

    // With nothing configured, the chain asks port 8000 first. A stand-in that
    // conflicts at once keeps this test off the real port 8000 whatever holds it.
    unmarked(&ws, ws.home.path());
    let exe = recording_loci(&ws, "exit 3");
    let mut vars: Vec<(&str, String)> = gate_env(0)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("LOCI_API_"))
        .collect();
    vars.push(("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap().into()));
    vars.push(("LOCI_API_PROBE_DEADLINE_MS", "500".into()));
    let mut cmd = ws.cmd();
    cmd.env_remove("LOCI_API_ENABLED");
    cmd.arg("gate").arg(ws.root()).arg("--json");
    for (k, val) in &vars {
        cmd.env(k, val);
    }
    let out = cmd.output().unwrap();
    let v = parse(&out);
    let servers = started(&ws);
    match servers.first() {
        Some(first) => assert_eq!(first.port(), 8000, "the default port first"),
        // Something answered health on 8000 (a server of someone else's): the chain
        // asked it, and started nothing.
        None => assert!(TcpStream::connect("127.0.0.1:8000").is_ok(), "{v}"),
    }
    assert_eq!(state(&v), "clean", "{v}");
}

#[test]
fn disabling_the_api_path_restores_the_cli_only_behavior() {
    let ws = Ws::new(SOURCES);
    unmarked(&ws, ws.home.path());
    let recorder = Recorder::new();
    let exe = recording_loci(&ws, REAL);
    let base = with(
        gate_env(recorder.port),
        &[("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap())],
    );
    // By the environment...
    let (v, _) = gate(&ws, &with(base.clone(), &[("LOCI_API_ENABLED", "0")]));
    assert_eq!(state(&v), "clean", "{v}");
    assert_eq!(decided_by(&v), "registry (cli)", "{v}");
    // ...and by the user's config file.
    let xdg = ws.home.path().join("xdg/loci");
    std::fs::create_dir_all(&xdg).unwrap();
    std::fs::write(xdg.join("config.toml"), "[api]\nenabled = false\n").unwrap();
    let vars: Vec<_> = base
        .into_iter()
        .filter(|(k, _)| *k != "LOCI_API_ENABLED")
        .collect();
    let (v, _) = gate(&ws, &vars);
    assert_eq!(decided_by(&v), "registry (cli)", "{v}");
    assert_eq!(recorder.connections(), 0, "no HTTP request");
    assert!(started(&ws).is_empty(), "no server spawn");
}

#[test]
fn invalid_port_values_are_rejected_with_a_warning() {
    for bad in ["70000", "0", "eighty"] {
        let ws = Ws::new(SOURCES);
        unmarked(&ws, ws.home.path());
        // The lower layer (the user's file) names a listener that records the attempt.
        let recorder = Recorder::new();
        let xdg = ws.home.path().join("xdg/loci");
        std::fs::create_dir_all(&xdg).unwrap();
        std::fs::write(
            xdg.join("config.toml"),
            format!("[api]\nport = {}\n", recorder.port),
        )
        .unwrap();
        let exe = recording_loci(&ws, NEVER_HEALTHY);
        let vars = with(
            gate_env(0),
            &[
                ("LOCI_API_PORT", bad),
                ("LOCI_LIFECYCLE_EXECUTABLE", exe.to_str().unwrap()),
                ("LOCI_API_PROBE_DEADLINE_MS", "400"),
            ],
        );
        let (v, out) = gate(&ws, &vars);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("api.port") && stderr.contains("LOCI_API_PORT") && stderr.contains(bad),
            "a warning naming the key, the variable and the value: {stderr}"
        );
        assert!(
            recorder.connections() >= 1,
            "the lower layer's port was asked ({bad})"
        );
        assert_eq!(started(&ws)[0].port(), recorder.port, "{v}");
        assert_eq!(decided_by(&v), "registry (cli)", "{v}");
    }
}
