//! `loci serve` end to end: the real binary on a free loopback port, a real index, a
//! real HTTP client: binding, the key file, timeouts and shutdown. (Here and not in crates/server/tests: only this package's tests
//! get the `loci` binary.)

use crate::common;
use crate::serve_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

#[test]
fn a_port_in_use_exits_with_bind_conflict() {
    let env = Env::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = env
        .cmd()
        .args(["serve", "--port", &port, "--json"])
        .env("LOCI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(i32::from(ErrorKind::BindConflict.exit().code())),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::parse(&out);
    assert_eq!(v["error"]["kind"], "bind_conflict", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains(&port),
        "{v}"
    );
}

#[test]
fn a_non_loopback_bind_needs_allow_remote() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--json"])
        .env("LOCI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(i32::from(ErrorKind::Usage.exit().code()))
    );
    let v = common::parse(&out);
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--allow-remote"),
        "{v}"
    );
}

#[test]
fn sigterm_with_a_request_in_flight_drains_it_and_exits_0() {
    let env = indexed();
    let mut server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let body = json!({"pattern": "parse_*"}).to_string();
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST /api/v1/workspaces/{id}/find HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    // `100 Continue` means the handler is reading the body: the request is in flight.
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 100"), "{line:?}");
    let mut blank = String::new();
    reader.read_line(&mut blank).unwrap();

    let pid = rustix::process::Pid::from_child(&server.child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();

    // The server stops accepting new connections...
    let until = Instant::now() + START_DEADLINE;
    while TcpStream::connect(&server.addr).is_ok() {
        assert!(Instant::now() < until, "still accepting after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    // ...but the request in flight gets its answer.
    s.write_all(body.as_bytes()).unwrap();
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    assert!(rest.starts_with("HTTP/1.1 200"), "{rest}");
    assert!(rest.contains("parse_config"), "{rest}");

    let status = wait_exit(&mut server.child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{status:?}");
    // No child of the server outlives it.
    let orphans: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
        .filter(|stat| {
            stat.rsplit_once(") ")
                .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string))
                == Some(pid.as_raw_nonzero().to_string())
        })
        .collect();
    assert!(orphans.is_empty(), "{orphans:?}");
}

#[test]
fn the_generated_key_is_private_reused_and_never_printed() {
    let env = indexed();
    let serve = || {
        let mut cmd = env.cmd();
        cmd.args(["serve", "--port", "0", "--json"])
            .env_remove("LOCI_API_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().unwrap()
    };
    let key_file = env.home.path().join("api-key");
    let mut keys = Vec::new();
    for _ in 0..2 {
        let mut child = serve();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        let server = Server {
            child,
            addr: v["listening"].as_str().unwrap().to_string(),
            web_signin: String::new(),
        };
        let key = std::fs::read_to_string(&key_file)
            .unwrap()
            .trim()
            .to_string();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
        let (status, _) = call(
            &server,
            "get",
            "/api/v1/capabilities",
            None,
            Some(("X-API-Key", &key)),
        );
        assert_eq!(status, 200);
        let mut server = server;
        let pid = rustix::process::Pid::from_child(&server.child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let _ = wait_exit(&mut server.child, Duration::from_secs(20));
        let mut printed = line;
        stdout.read_to_string(&mut printed).unwrap();
        server
            .child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut printed)
            .unwrap();
        assert!(!printed.contains(&key), "the key was printed: {printed}");
        keys.push(key);
    }
    assert!(keys[0].len() >= 40);
    assert_eq!(keys[0], keys[1], "the key file is reused");
}

/// schemathesis's configuration for the run below. Valid-by-schema requests may still
/// be refused for rules the request schemas do not carry yet (a limit outside
/// 1..=10000, a depth outside 1..=32, a cursor this API did not return, a pattern
/// that does not parse): those answer 400/413/422 with the error envelope, so the
/// positive-data check accepts them too, and 412 (`no_root`: this server has no root
/// to create workspaces under). Every other check runs unchanged.
#[test]
fn a_request_that_outlasts_the_timeout_gets_504_with_the_timeout_kind() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_API_REQUEST_TIMEOUT_MS", "300")]);
    let id = workspace_id(&server);
    // The body never comes: the request is still running when its deadline passes.
    let started = Instant::now();
    let (status, body) = raw(
        &server.addr,
        &format!(
            "POST /api/v1/workspaces/{id}/find HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{{"
        ),
    );
    assert_eq!(status, ErrorKind::Timeout.http_status(), "{body}");
    assert_eq!(kind_of(&body), ErrorKind::Timeout.name(), "{body}");
    assert!(body.contains("300 ms"), "the limit is named: {body}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_request_that_never_finishes_does_not_hold_the_stop_past_the_drain() {
    let env = indexed();
    let mut server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST /api/v1/workspaces/{id}/find HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: 50\r\nExpect: 100-continue\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 100"), "{line:?}");
    // The body never comes; the stop waits for it at most the drain (5 s).
    let pid = rustix::process::Pid::from_child(&server.child);
    let stopped = Instant::now();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = wait_exit(&mut server.child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        stopped.elapsed() < Duration::from_secs(12),
        "the drain is bounded: {:?}",
        stopped.elapsed()
    );
}

#[test]
fn allow_remote_binds_beyond_loopback_with_a_warning_and_still_needs_the_key() {
    let env = indexed();
    let mut child = env
        .cmd()
        .args([
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--allow-remote",
            "--json",
        ])
        .env("LOCI_API_KEY", KEY)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut warning = String::new();
    stderr.read_line(&mut warning).unwrap();
    assert!(
        warning.contains("warning") && warning.contains("0.0.0.0"),
        "{warning}"
    );
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    let port = v["listening"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let server = Server {
        child,
        addr: format!("127.0.0.1:{port}"),
        web_signin: String::new(),
    };
    let request = |auth: &str| {
        raw(
            &server.addr,
            &format!(
                "GET /api/v1/workspaces HTTP/1.1\r\nHost: evil.example\r\n{auth}Connection: close\r\n\r\n"
            ),
        )
    };
    let (status, body) = request(&format!("X-API-Key: {KEY}\r\n"));
    assert_eq!(
        status, 200,
        "a remote Host is accepted with --allow-remote: {body}"
    );
    let (status, body) = request("");
    assert_eq!(status, ErrorKind::Unauthorized.http_status(), "{body}");
}
