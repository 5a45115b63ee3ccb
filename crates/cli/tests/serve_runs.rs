//! `loci serve` background runs: `index`/`sync` answer 202 with a run id and its
//! progress URL, the run reports queued/running/done/failed with progress counts and
//! the error kind, a second request joins the run in flight (same purpose) or is
//! `busy` (another), `rebuild` needs consent (else 409 and the index is byte-identical),
//! shutdown leaves no process behind; and the connection limits (a client that
//! trickles its headers is cut off at the header timeout while others are served; an
//! oversized head gets 431).

use crate::common;
use crate::serve_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

/// A projects base with one workspace created over HTTP and `files` written in it.
fn workspace(server: &Server, base: &Path, files: usize) -> (i64, PathBuf) {
    mounted_workspace(server, base, "team/app", files)
}

#[test]
fn an_index_run_answers_202_with_its_id_and_reaches_done_with_its_progress_counts() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let server = start(&env, &[], &[("LOCI_PROJECTS_BASE", &text(base.path()))]);
    let (id, _) = workspace(&server, base.path(), 12);
    let (status, started) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/index"),
        &json!({}),
    );
    assert_eq!(status, 202, "{started}");
    let run = &started["run"];
    assert_eq!(started["joined"], false);
    assert_eq!(run["purpose"], "index");
    assert_eq!(run["workspace"], id);
    let url = format!("/api/v1/workspaces/{id}/runs/{}", run["id"]);
    assert_eq!(started["progress_url"], url.as_str());
    assert_eq!(run["url"], url.as_str());
    assert!(
        ["queued", "running", "done"].contains(&run["state"].as_str().unwrap()),
        "{run}"
    );
    let done = wait_run(&server, &url);
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["progress"]["files_total"], 12, "{done}");
    assert_eq!(done["progress"]["files_parsed"], 12, "{done}");
    assert!(done.get("error").is_none());
    assert!(done["ended_at_ms"].as_u64() >= done["started_at_ms"].as_u64());
    // The index it built answers.
    let (status, found) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/find"),
        &json!({"pattern": "f1*"}),
    );
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["symbols"].as_array().unwrap().len(), 3, "{found}");
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert_eq!(detail["state"], "clean", "{detail}");
    assert_eq!(detail["last_run"]["result"], "ok", "{detail}");
    // A sync with nothing to do is a run too, and ends done.
    let (status, synced) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/sync"),
        &json!({}),
    );
    assert_eq!(status, 202, "{synced}");
    assert_ne!(synced["run"]["id"], run["id"]);
    let done = wait_run(&server, synced["progress_url"].as_str().unwrap());
    assert_eq!(done["state"], "done", "{done}");
    for (path, kind) in [
        (
            format!("/api/v1/workspaces/{id}/runs/999"),
            ErrorKind::NotFound,
        ),
        (
            format!("/api/v1/workspaces/4242/runs/{}", run["id"]),
            ErrorKind::NotFound,
        ),
        (
            format!("/api/v1/workspaces/{id}/runs/x"),
            ErrorKind::InvalidInput,
        ),
    ] {
        let (status, body) = call(&server, "get", &path, None, bearer());
        assert_eq!(status, kind.http_status(), "{path}: {body}");
        assert_eq!(kind_of(&body), kind.name(), "{body}");
    }
    let (status, body) = call(
        &server,
        "post",
        "/api/v1/workspaces/4242/index",
        None,
        bearer(),
    );
    assert_eq!(status, ErrorKind::NotFound.http_status(), "{body}");
}

/// A stand-in loci whose run never ends: it starts a grandchild (`sleep`) and waits.
fn stuck_loci(dir: &Path) -> PathBuf {
    let script = dir.join("stuck-loci");
    std::fs::write(&script, "#!/bin/sh\nsleep 300 &\nwait\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn wait_for(what: &str, mut ok: impl FnMut() -> Option<Value>) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = ok() {
            return v;
        }
        assert!(Instant::now() < until, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_request_while_a_run_is_in_flight_joins_it_or_is_busy() {
    let env = Env::new();
    let HeldRuns {
        server,
        base,
        release,
        tools: _tools,
    } = serve_held(&env);
    let (id, _) = workspace(&server, base.path(), 3);
    let (status, first) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/index"),
        &json!({}),
    );
    assert_eq!(status, 202, "{first}");
    let url = first["progress_url"].as_str().unwrap().to_string();
    // Running, with the progress the run reported.
    let running = wait_for("the run's progress", || {
        let v = get_json(&server, &url);
        (v["progress"]["files_total"] == 10).then_some(v)
    });
    assert_eq!(running["state"], "running", "{running}");
    assert_eq!(running["progress"]["files_parsed"], 3, "{running}");
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert_eq!(detail["state"], "indexing", "{detail}");
    // The same purpose joins the run in flight; another purpose is busy, naming it.
    let (status, again) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/index"),
        &json!({}),
    );
    assert_eq!(status, 202, "{again}");
    assert_eq!(again["joined"], true);
    assert_eq!(again["run"]["id"], first["run"]["id"]);
    let (status, busy) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/sync"),
        &json!({}),
    );
    assert_eq!(status, ErrorKind::Busy.http_status(), "{busy}");
    assert_eq!(busy["error"]["kind"], ErrorKind::Busy.name());
    assert_eq!(busy["error"]["detail"]["run"], first["run"]["id"]);
    let (status, busy) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/rebuild"),
        &json!({"consent": true}),
    );
    assert_eq!(status, ErrorKind::Busy.http_status(), "{busy}");
    std::fs::write(&release, "").unwrap();
    let done = wait_run(&server, &url);
    assert_eq!(done["state"], "done", "{done}");
    let (status, next) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/sync"),
        &json!({}),
    );
    assert_eq!(status, 202, "{next}");
    assert_ne!(next["run"]["id"], first["run"]["id"]);
    assert_eq!(next["joined"], false);
    assert_eq!(
        wait_run(&server, next["progress_url"].as_str().unwrap())["state"],
        "done"
    );
}

#[test]
fn runs_past_the_two_slots_wait_queued_in_order_and_all_finish() {
    let env = Env::new();
    let HeldRuns {
        server,
        base,
        release,
        tools: _tools,
    } = serve_held(&env);
    let urls: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|name| {
            let (id, _) = mounted_workspace(&server, base.path(), &format!("team/{name}"), 1);
            let (status, started) = post(
                &server,
                &format!("/api/v1/workspaces/{id}/index"),
                &json!({}),
            );
            assert_eq!(status, 202, "{started}");
            started["progress_url"].as_str().unwrap().to_string()
        })
        .collect();
    for url in &urls[..2] {
        wait_for("a run in a slot", || {
            let v = get_json(&server, url);
            (v["progress"]["files_total"] == 10).then_some(v)
        });
    }
    let third = get_json(&server, &urls[2]);
    assert_eq!(third["state"], "queued", "{third}");
    assert!(third.get("started_at_ms").is_none(), "{third}");
    std::fs::write(&release, "").unwrap();
    for url in &urls {
        assert_eq!(wait_run(&server, url)["state"], "done", "{url}");
    }
}

#[test]
fn a_failed_run_names_its_error_kind_without_a_path() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let server = start(&env, &[], &[("LOCI_PROJECTS_BASE", &text(base.path()))]);
    let (id, root) = workspace(&server, base.path(), 1);
    // The index file's place is taken by a directory: the run cannot build it.
    std::fs::create_dir_all(root.join(".loci/index.db")).unwrap();
    let (status, started) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/index"),
        &json!({}),
    );
    assert_eq!(status, 202, "{started}");
    let failed = wait_run(&server, started["progress_url"].as_str().unwrap());
    assert_eq!(failed["state"], "failed", "{failed}");
    let kind = failed["error"]["kind"].as_str().unwrap();
    assert!(ErrorKind::from_name(kind).is_some(), "{failed}");
    assert_ne!(kind, "internal", "{failed}");
    let body = failed.to_string();
    for p in [
        text(base.path()),
        text(&std::fs::canonicalize(base.path()).unwrap()),
    ] {
        assert!(!body.contains(&p), "{body}");
    }
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert!(!detail.to_string().contains(&text(base.path())), "{detail}");
}

/// The index file and its WAL, byte for byte.
fn index_bytes(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for name in ["index.db", "index.db-wal"] {
        if let Ok(bytes) = std::fs::read(root.join(".loci").join(name)) {
            out.push((name.to_string(), bytes));
        }
    }
    out
}

#[test]
fn a_rebuild_without_consent_is_409_and_leaves_the_index_byte_identical() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let server = start(&env, &[], &[("LOCI_PROJECTS_BASE", &text(base.path()))]);
    let (id, root) = workspace(&server, base.path(), 4);
    let out = env
        .cmd()
        .args(["index", &text(&root), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let before = index_bytes(&root);
    assert!(!before.is_empty());
    let path = format!("/api/v1/workspaces/{id}/rebuild");
    let refused = ErrorKind::ConsentRequired;
    for body in [json!({}), json!({"consent": false})] {
        let (status, v) = post(&server, &path, &body);
        assert_eq!(status, refused.http_status(), "{body}: {v}");
        assert_eq!(v["error"]["kind"], refused.name(), "{v}");
        assert!(!v.to_string().contains(&text(base.path())), "{v}");
    }
    let (status, v) = post(&server, &path, &json!({"consent": "yes"}));
    assert_eq!(status, ErrorKind::InvalidInput.http_status(), "{v}");
    assert_eq!(
        index_bytes(&root),
        before,
        "a refused rebuild touched the index"
    );
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert_eq!(detail["state"], "clean", "{detail}");

    // With consent it runs, and the rebuilt index answers.
    let (status, started) = post(&server, &path, &json!({"consent": true}));
    assert_eq!(status, 202, "{started}");
    assert_eq!(started["run"]["purpose"], "rebuild");
    let done = wait_run(&server, started["progress_url"].as_str().unwrap());
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["progress"]["files_total"], 4, "{done}");
    let (status, found) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/find"),
        &json!({"pattern": "f*"}),
    );
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["symbols"].as_array().unwrap().len(), 4, "{found}");
}

/// Pids of live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker)
            && let Some(pgid) = process_group(pid)
        {
            out.push((pid, pgid));
        }
    }
    out
}

/// The process group of a live (not zombie) process.
fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit(')').next()?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    (fields.first() != Some(&"Z")).then(|| fields.get(2)?.parse().ok())?
}

fn group_members(pgid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| process_group(*pid) == Some(pgid))
        .collect()
}

#[test]
fn shutdown_with_a_run_in_flight_leaves_no_process_behind() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let exe = stuck_loci(tools.path());
    let mut server = start(
        &env,
        &[],
        &[
            ("LOCI_PROJECTS_BASE", &text(base.path())),
            ("LOCI_LIFECYCLE_EXECUTABLE", &text(&exe)),
        ],
    );
    let (id, _) = workspace(&server, base.path(), 2);
    let (status, started) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/sync"),
        &json!({}),
    );
    assert_eq!(status, 202, "{started}");
    let url = started["progress_url"].as_str().unwrap().to_string();
    wait_for("the run", || {
        let v = get_json(&server, &url);
        (v["state"] == "running").then_some(v)
    });
    let marker = text(&exe);
    let children = processes_with(&marker);
    assert!(!children.is_empty(), "the held run is in the process table");
    let pgid = children[0].1;
    assert!(
        children.iter().all(|(_, g)| *g == pgid),
        "one run, one group: {children:?}"
    );
    // The run and its own child (the `sleep`): a grandchild of the server.
    wait_for("the run's grandchild", || {
        (group_members(pgid).len() >= 2).then_some(Value::Null)
    });
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(server.child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let status = wait_exit(&mut server.child, Duration::from_secs(20));
    assert!(status.success(), "{status:?}");
    // No child, no grandchild: nothing of the run's group is left.
    let until = Instant::now() + Duration::from_secs(10);
    while !processes_with(&marker).is_empty() || !group_members(pgid).is_empty() {
        assert!(
            Instant::now() < until,
            "left behind: {:?} {:?}",
            processes_with(&marker),
            group_members(pgid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_client_that_trickles_its_headers_is_cut_off_at_the_header_timeout_while_others_are_served() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_API_HEADER_READ_TIMEOUT_MS", "400")]);
    let mut slow = TcpStream::connect(&server.addr).unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    let opened = Instant::now();
    // A slowloris client keeps trickling bytes; the deadline is on the whole head.
    let mut writer = slow.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        for _ in 0..500 {
            if writer.write_all(b"X").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    // Meanwhile every other request is answered.
    for _ in 0..5 {
        let (status, body) = call(&server, "get", "/health", None, None);
        assert_eq!(status, 200, "{body}");
    }
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    let closed = slow.read_to_end(&mut answer);
    let elapsed = opened.elapsed();
    assert!(
        closed.is_ok()
            || matches!(closed, Err(ref e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "the slow connection was not closed: {closed:?}"
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(!answer.contains("200 OK"), "{answer}");
    assert!(
        elapsed >= Duration::from_millis(350),
        "closed before the timeout: {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "closed only after {elapsed:?}"
    );
    trickle.join().unwrap();
    let (status, _) = call(&server, "get", "/health", None, None);
    assert_eq!(status, 200);
}

#[test]
fn a_request_head_over_the_bound_is_refused_with_431() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_API_MAX_HEADER_BYTES", "8192")]);
    let (status, _) = raw(
        &server.addr,
        &format!(
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
            "a".repeat(10_000)
        ),
    );
    assert_eq!(status, 431);
    let (status, _) = raw(
        &server.addr,
        &format!(
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Small: {}\r\nConnection: close\r\n\r\n",
            "a".repeat(4_000)
        ),
    );
    assert_eq!(status, 200);
}
