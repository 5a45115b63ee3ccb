//! A key holder never reaches past the server's roots (issue #27, the HTTP half): the
//! server's children survive an upgrade of its binary, a segment never lands inside a
//! `.git`, concurrent creates of one workspace agree, and the small HTTP answers are
//! whole (405, 413, 431 with the error envelope; errors that name no host path and no
//! CLI flag). Clone URLs: `serve_clone_reach.rs`. Real binary, real git, real sockets.

use crate::common;
use crate::serve_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

/// A row of the error table by name (the test fails when there is none).
fn kind(name: &str) -> ErrorKind {
    ErrorKind::from_name(name).unwrap_or_else(|| panic!("no error kind `{name}`"))
}

// ---------------------------------------------------------------------------------
// Item 5: the binary replaced or deleted under a running server.

/// The server runs from a copy of the binary; the copy is replaced (another file
/// renamed over it), then deleted. Every later child — a query's worker, an index run,
/// a rebuild and the worker after it — still runs the server's own binary.
#[test]
fn children_run_the_servers_own_binary_after_it_is_replaced_or_deleted() {
    let env = indexed();
    let bin_dir = tempfile::tempdir().unwrap();
    let copy = bin_dir.path().join("loci");
    std::fs::copy(common::bin(), &copy).unwrap();
    let server = start_program(&env, &copy, &[], &[]);
    let id = workspace_id(&server);

    // An upgrade: another file renamed over the path the server was started from.
    let other = bin_dir.path().join("loci.new");
    std::fs::write(&other, "#!/bin/sh\necho 'not loci' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::rename(&other, &copy).unwrap();
    let query = format!("/api/v1/workspaces/{id}/query");
    let (status, v) = post(
        &server,
        &query,
        &json!({"sql": "SELECT count(*) AS n FROM files"}),
    );
    assert_eq!(status, 200, "the first worker after the replacement: {v}");
    assert_eq!(v["rows"][0][0], 2, "{v}");
    let (status, run) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/index"),
        &json!({}),
    );
    assert_eq!(status, 202, "{run}");
    let done = wait_run(&server, run["progress_url"].as_str().unwrap());
    assert_eq!(
        done["state"], "done",
        "an index run after the replacement: {done}"
    );

    // The path deleted: a rebuild (a new index file, so the next query needs a new
    // worker) and that worker both still start.
    std::fs::remove_file(&copy).unwrap();
    let (status, run) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/rebuild"),
        &json!({"consent": true}),
    );
    assert_eq!(status, 202, "{run}");
    let done = wait_run(&server, run["progress_url"].as_str().unwrap());
    assert_eq!(
        done["state"], "done",
        "a rebuild after the deletion: {done}"
    );
    let (status, v) = post(
        &server,
        &query,
        &json!({"sql": "SELECT count(*) AS n FROM symbols WHERE name = 'helper'"}),
    );
    assert_eq!(status, 200, "a new worker after the deletion: {v}");
    assert_eq!(v["rows"][0][0], 1, "{v}");
}

// ---------------------------------------------------------------------------------
// Item 8: segments inside a repository's `.git`.

#[test]
fn a_segment_with_a_git_component_is_refused_and_nothing_is_made() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let server = serve_vars(&env, &[("LOCI_PROJECTS_BASE".into(), text(base.path()))]);
    let (status, v) = post(&server, "/api/v1/workspaces", &mounted("team/app"));
    assert_eq!(status, 200, "{v}");
    let before = tree_under(base.path());
    for segment in [
        "team/app/.git/hooks",
        "team/app/.git",
        ".git",
        ".git/x",
        "team/app/.GIT/objects",
        "team/.Git/y",
    ] {
        let (status, v) = post(&server, "/api/v1/workspaces", &mounted(segment));
        assert_eq!(
            status,
            ErrorKind::InvalidSegment.http_status(),
            "{segment}: {v}"
        );
        assert_eq!(v["error"]["kind"], ErrorKind::InvalidSegment.name(), "{v}");
        assert_eq!(
            v["error"]["detail"]["reason"], "git_dir_component",
            "{segment}: {v}"
        );
        let (status, v) = post(
            &server,
            "/api/v1/fs",
            &json!({"kind": "mounted", "segment": segment}),
        );
        assert_eq!(
            status,
            ErrorKind::InvalidSegment.http_status(),
            "fs {segment}: {v}"
        );
    }
    let (status, v) = post(
        &server,
        "/api/v1/fs",
        &json!({"kind": "mounted", "segment": "team/app", "path": ".git"}),
    );
    assert_eq!(
        status,
        ErrorKind::InvalidSegment.http_status(),
        "fs path .git: {v}"
    );
    assert_eq!(
        tree_under(base.path()),
        before,
        "a refused segment made something"
    );
    // A name that only contains `.git` is fine.
    let (status, v) = post(
        &server,
        "/api/v1/workspaces",
        &mounted("team/app.git-mirror"),
    );
    assert_eq!(status, 200, "{v}");
}

// ---------------------------------------------------------------------------------
// Item 9: concurrent creates of one workspace.

/// 12 workspaces, each created by 10 requests at once: 120 attempts, every one answers
/// the same id for its workspace, and exactly one of each 10 made it.
#[test]
fn concurrent_creates_of_one_workspace_answer_one_id_and_make_it_once() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let server = serve_vars(&env, &[("LOCI_PROJECTS_BASE".into(), text(base.path()))]);
    let addr = server.addr.clone();
    let mut failures = Vec::new();
    for round in 0..12 {
        let segment = format!("team/race-{round}");
        let barrier = Arc::new(Barrier::new(10));
        let answers: Vec<(u16, String)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..10)
                .map(|_| {
                    let barrier = barrier.clone();
                    let (addr, segment) = (addr.clone(), segment.clone());
                    s.spawn(move || {
                        barrier.wait();
                        let resp = agent()
                            .post(&format!("http://{addr}/api/v1/workspaces"))
                            .header("Authorization", &format!("Bearer {KEY}"))
                            .send_json(mounted(&segment))
                            .unwrap();
                        let status = resp.status().as_u16();
                        (status, resp.into_body().read_to_string().unwrap())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let ok: Vec<Value> = answers
            .iter()
            .filter(|(status, _)| *status == 200)
            .map(|(_, t)| serde_json::from_str(t).unwrap())
            .collect();
        for (status, t) in &answers {
            if *status != 200 {
                failures.push(format!("{segment}: {status} {t}"));
            }
        }
        if ok.is_empty() {
            continue;
        }
        let ids: std::collections::BTreeSet<i64> =
            ok.iter().map(|v| v["id"].as_i64().unwrap()).collect();
        if ids.len() != 1 {
            failures.push(format!("{segment}: ids {ids:?}"));
        }
        let changed = ok.iter().filter(|v| v["changed"] == true).count();
        let made = ok.iter().filter(|v| v["action"] == "initialized").count();
        if changed != 1 || made != 1 {
            failures.push(format!(
                "{segment}: {changed} confirmed it, {made} initialized it: {ok:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 120 broke:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let list = get_json(&server, "/api/v1/workspaces");
    assert_eq!(list["workspaces"].as_array().unwrap().len(), 12, "{list}");
}

// ---------------------------------------------------------------------------------
// Item 10: small answers made whole.

/// Sends `head`, then `body` a few bytes at a time every 100 ms, until the server
/// answers (or 10 s pass); the status and body of the answer.
fn trickle(addr: &str, head: &str, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let mut answer = Vec::new();
    let mut sent = 0;
    let mut buf = [0u8; 4096];
    while Instant::now() < until {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
                if sent < body.len() {
                    let end = (sent + 8).min(body.len());
                    if s.write_all(&body[sent..end]).is_err() {
                        break;
                    }
                    sent = end;
                }
            }
            Err(_) => break,
        }
    }
    status_and_body(&String::from_utf8_lossy(&answer))
}

#[test]
fn an_oversized_body_sent_slowly_is_413_at_once_not_504() {
    let env = indexed();
    let server = start(
        &env,
        &[],
        &[
            ("LOCI_API_MAX_BODY_BYTES", "1024"),
            ("LOCI_API_REQUEST_TIMEOUT_MS", "1500"),
        ],
    );
    let id = workspace_id(&server);
    let body = format!("{{\"pattern\": \"{}\"}}", "x".repeat(4000));
    let started = Instant::now();
    let (status, answer) = trickle(
        &server.addr,
        &format!(
            "POST /api/v1/workspaces/{id}/search HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ),
        body.as_bytes(),
    );
    assert_eq!(status, ErrorKind::TooLong.http_status(), "{answer}");
    assert!(answer.contains("\"too_long\""), "{answer}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "answered only after {:?}",
        started.elapsed()
    );
}

/// A refusal before the handler leaves the request's body unread, so the server says
/// `Connection: close` and closes: a keep-alive client that sent its next request on
/// that socket would meet a peer that hung up (the flake this fixes: `/mcp`'s 403
/// then 200 over one pooled connection). Without a key, a wrong origin, and a body
/// announced over the limit; the body itself is never sent.
#[test]
fn a_refusal_with_an_unread_body_closes_the_connection_and_says_so() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_API_MAX_BODY_BYTES", "1024")]);
    let cases = [
        ("", 401),
        (
            "Authorization: Bearer {KEY}\r\nOrigin: http://evil.example\r\n",
            403,
        ),
        ("Authorization: Bearer {KEY}\r\n", 413),
    ];
    for (extra, want) in cases {
        let length = if want == 413 { 4096 } else { 200 };
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{}Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n",
            extra.replace("{KEY}", KEY)
        );
        let mut s = TcpStream::connect(&server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        // The server must answer and then hang up by itself, with the body unsent.
        let mut answer = String::new();
        s.read_to_string(&mut answer)
            .unwrap_or_else(|e| panic!("{want}: no close within 20 s ({e}): {answer}"));
        let (status, _) = status_and_body(&answer);
        assert_eq!(status, want, "{answer}");
        let head = answer
            .split("\r\n\r\n")
            .next()
            .unwrap()
            .to_ascii_lowercase();
        assert!(head.contains("\r\nconnection: close"), "{want}: {head}");
    }
}

#[test]
fn a_head_over_the_limit_is_431_with_the_error_envelope() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_API_MAX_HEADER_BYTES", "8192")]);
    for big in [9_000, 60_000] {
        let (status, body) = raw(
            &server.addr,
            &format!(
                "GET /api/v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
                "a".repeat(big)
            ),
        );
        assert_eq!(status, 431, "{big}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
        assert_eq!(v["error"]["kind"], "headers_too_large", "{v}");
        assert_eq!(kind("headers_too_large").http_status(), 431);
        assert!(
            v["error"]["message"].as_str().unwrap().contains("8192"),
            "{v}"
        );
    }
    // The server still answers.
    let (status, _) = call(&server, "get", "/api/v1/workspaces", None, bearer());
    assert_eq!(status, 200);
}

#[test]
fn a_method_a_route_does_not_take_is_405_with_the_error_envelope() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    for (method, path) in [
        ("DELETE", "/api/v1/workspaces".to_string()),
        ("PUT", format!("/api/v1/workspaces/{id}/find")),
        ("POST", "/health".to_string()),
    ] {
        let (status, body) = raw(
            &server.addr,
            &format!(
                "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(status, 405, "{method} {path}: {body}");
        assert_eq!(kind("method_not_allowed").http_status(), 405);
        assert_eq!(kind_of(&body), "method_not_allowed", "{body}");
    }
}

#[test]
fn empty_sql_is_invalid_input_that_says_what_is_wrong() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    for sql in ["", "   \n\t", "-- only a comment", ";"] {
        let (status, v) = post(
            &server,
            &format!("/api/v1/workspaces/{id}/query"),
            &json!({ "sql": sql }),
        );
        assert_eq!(
            status,
            ErrorKind::InvalidInput.http_status(),
            "{sql:?}: {v}"
        );
        assert_eq!(
            v["error"]["kind"],
            ErrorKind::InvalidInput.name(),
            "{sql:?}: {v}"
        );
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("no SQL statement"), "{sql:?}: {v}");
        assert!(!message.contains("misuse"), "{sql:?}: {v}");
    }
}

#[test]
fn errors_over_http_name_fields_never_cli_flags() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let (status, v) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/memory/remember"),
        &json!({"name": "n", "body": "b"}),
    );
    assert_eq!(status, 200, "{v}");
    for (op, body) in [
        ("recall", json!({})),
        ("recall", json!({"query": "  "})),
        ("unlink", json!({"name": "n"})),
        ("enrich", json!({})),
    ] {
        let (status, v) = post(
            &server,
            &format!("/api/v1/workspaces/{id}/memory/{op}"),
            &body,
        );
        assert!((400..500).contains(&status), "{op} {body}: {v}");
        let text = v["error"].to_string();
        assert!(!text.contains("--"), "{op} {body} names a CLI flag: {v}");
    }
}

/// A workspace whose index lives outside its root (`--index-path`) keeps its memory
/// beside the index: an error about that file names no host path.
#[test]
fn an_error_about_a_file_outside_the_root_names_no_host_path() {
    let env = Env::new();
    env.write(&[("src/lib.rs", "pub fn a() {}\n")]);
    let elsewhere = tempfile::tempdir().unwrap();
    let index = elsewhere.path().join("idx.db");
    let (code, v) = env.json(&["index", &text(env.root()), "--index-path", &text(&index)]);
    assert_eq!(code, 0, "{v}");
    std::fs::create_dir(elsewhere.path().join("memory.db")).unwrap();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let (status, answer) = call(
        &server,
        "post",
        &format!("/api/v1/workspaces/{id}/memory/list"),
        Some(&json!({})),
        bearer(),
    );
    assert!(status >= 400, "{answer}");
    let shown = elsewhere.path().to_string_lossy().into_owned();
    let canonical = text(&std::fs::canonicalize(elsewhere.path()).unwrap());
    assert!(
        !answer.contains(&shown) && !answer.contains(&canonical),
        "{status}: {answer}"
    );
    assert!(
        answer.contains("<path>") || answer.contains("<index>"),
        "{answer}"
    );
}
