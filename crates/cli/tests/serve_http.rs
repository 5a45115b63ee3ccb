//! `loci serve` end to end: the real binary on a free loopback port, a real index, a
//! real HTTP client. (Here and not in crates/server/tests: only this package's tests
//! get the `loci` binary.)

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};

const KEY: &str = "test-key-0123456789";
const START_DEADLINE: Duration = Duration::from_secs(30);

/// A running `loci serve`, killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn indexed() -> Env {
    let env = Env::new();
    env.write(&[
        (
            "src/lib.rs",
            "pub fn parse_config() -> u32 { helper() }\nfn helper() -> u32 { 1 }\npub struct Settings { pub depth: u32 }\nimpl Settings { pub fn load() -> u32 { parse_config() } }\n",
        ),
        ("src/main.rs", "fn main() { let _ = lib::parse_config(); }\n"),
    ]);
    let (code, v) = env.json(&["index", env.root().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    env
}

fn start(env: &Env, extra: &[&str], vars: &[(&str, &str)]) -> Server {
    let mut cmd = env.cmd();
    cmd.args(["serve", "--port", "0", "--json"])
        .args(extra)
        .env("LOCI_API_KEY", KEY)
        .env_remove("LOCI_PROJECTS_BASE")
        .env_remove("LOCI_MANAGED_ROOT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(START_DEADLINE)
        .expect("loci serve printed no listening line");
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    let addr = v["listening"].as_str().expect("listening").to_string();
    Server { child, addr }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `(status, body)` of one request; `auth` is a header to send, if any.
fn call(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<&Value>,
    auth: Option<(&str, &str)>,
) -> (u16, String) {
    let url = format!("http://{}{path}", server.addr);
    let a = agent();
    let resp = match (method, body) {
        ("get", _) => {
            let mut r = a.get(&url);
            if let Some((k, v)) = auth {
                r = r.header(k, v);
            }
            r.call()
        }
        (_, b) => {
            let mut r = a.post(&url);
            if let Some((k, v)) = auth {
                r = r.header(k, v);
            }
            r.send_json(b.cloned().unwrap_or(json!({})))
        }
    }
    .unwrap();
    let status = resp.status().as_u16();
    let text = resp.into_body().read_to_string().unwrap();
    (status, text)
}

fn bearer() -> Option<(&'static str, &'static str)> {
    Some(("Authorization", "Bearer test-key-0123456789"))
}

fn get_json(server: &Server, path: &str) -> Value {
    let (status, body) = call(server, "get", path, None, bearer());
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// The one workspace's registry id.
fn workspace_id(server: &Server) -> i64 {
    let list = get_json(server, "/api/v1/workspaces");
    list["workspaces"][0]["id"]
        .as_i64()
        .expect("a workspace id")
}

/// Every documented route as (method, concrete path, a request body).
fn routes(server: &Server, id: i64) -> Vec<(String, String, Option<Value>)> {
    let doc = get_json(server, "/api/v1/openapi.json");
    let mut out = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let body = op
                .get("requestBody")
                .map(|_| match op["operationId"].as_str().unwrap() {
                    "find" => json!({"pattern": "*"}),
                    "def" | "refs" => json!({"symbol": "parse_config"}),
                    "callers" | "callees" | "impact" => {
                        json!({"target": "parse_config", "depth": 3})
                    }
                    "outline" => json!({"file": "src/lib.rs"}),
                    "search" => json!({"pattern": "parse"}),
                    "create_workspace" => {
                        json!({"locator": {"kind": "mounted", "segment": "made/here"}})
                    }
                    other => panic!("no sample body for {other}"),
                });
            out.push((method.clone(), path.replace("{id}", &id.to_string()), body));
        }
    }
    assert!(out.len() >= 13, "{out:?}");
    out
}

fn kind_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    v["error"]["kind"].as_str().unwrap_or("").to_string()
}

/// One raw HTTP/1.1 exchange (for headers a client library sets itself, like Host).
fn raw(addr: &str, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn wait_exit(child: &mut Child, deadline: Duration) -> std::process::ExitStatus {
    let until = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < until,
            "loci serve did not exit within {deadline:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn health_answers_without_a_key() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let (status, body) = call(&server, "get", "/health", None, None);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn every_route_refuses_a_missing_or_wrong_key_with_401() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let unauthorized = ErrorKind::Unauthorized;
    for (method, path, body) in routes(&server, id) {
        if path == "/health" {
            continue;
        }
        for auth in [
            None,
            Some(("Authorization", "Bearer wrong-key")),
            Some(("Authorization", "Bearer test-key-012345678")),
            Some(("X-API-Key", "test-key-01234567890")),
            Some(("Authorization", "test-key-0123456789")),
        ] {
            let (status, text) = call(&server, &method, &path, body.as_ref(), auth);
            assert_eq!(
                status,
                unauthorized.http_status(),
                "{method} {path} {auth:?}: {text}"
            );
            assert_eq!(kind_of(&text), unauthorized.name(), "{text}");
        }
        // Both header forms of the right key pass, the scheme in any case (creation then answers `no_root`:
        // this server has no root to create under).
        for auth in [
            bearer(),
            Some(("X-API-Key", KEY)),
            Some(("Authorization", "bearer test-key-0123456789")),
        ] {
            let (status, text) = call(&server, &method, &path, body.as_ref(), auth);
            let expected = if method == "post" && path == "/api/v1/workspaces" {
                ErrorKind::NoRoot.http_status()
            } else {
                200
            };
            assert_eq!(status, expected, "{method} {path} {auth:?}: {text}");
        }
    }
}

#[test]
fn a_graph_read_over_http_returns_the_same_symbols_as_the_cli() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    for (op, body, args) in [
        ("find", json!({"pattern": "*"}), vec!["find", "*"]),
        (
            "def",
            json!({"symbol": "parse_config"}),
            vec!["def", "parse_config"],
        ),
    ] {
        let (status, text) = call(
            &server,
            "post",
            &format!("/api/v1/workspaces/{id}/{op}"),
            Some(&body),
            bearer(),
        );
        assert_eq!(status, 200, "{text}");
        let http: Value = serde_json::from_str(&text).unwrap();
        let (code, cli) = env.json(&args);
        assert_eq!(code, 0, "{cli}");
        assert!(!cli["symbols"].as_array().unwrap().is_empty(), "{cli}");
        assert_eq!(http["symbols"], cli["symbols"], "{op}");
        assert_eq!(http["page"], cli["page"], "{op}");
    }
    let (status, text) = call(
        &server,
        "post",
        &format!("/api/v1/workspaces/{id}/callers"),
        Some(&json!({"target": "helper"})),
        bearer(),
    );
    assert_eq!(status, 200, "{text}");
    let (_, cli) = env.json(&["callers", "helper"]);
    let http: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(http["reached"], cli["reached"]);
}

#[test]
fn errors_carry_the_status_and_envelope_of_their_kind() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    for (path, body, kind) in [
        (
            format!("/api/v1/workspaces/{id}/def"),
            json!({"symbol": "no_such_symbol"}),
            ErrorKind::NotFound,
        ),
        (
            format!("/api/v1/workspaces/{id}/find"),
            json!({"pattern": "x", "limit": 0}),
            ErrorKind::LimitExceeded,
        ),
        (
            format!("/api/v1/workspaces/{id}/callers"),
            json!({"target": "helper", "depth": 99}),
            ErrorKind::InvalidInput,
        ),
        (
            format!("/api/v1/workspaces/{id}/find"),
            json!({"nothing": 1}),
            ErrorKind::InvalidInput,
        ),
        (
            "/api/v1/workspaces/999999/find".to_string(),
            json!({"pattern": "x"}),
            ErrorKind::NotFound,
        ),
        (
            "/api/v1/workspaces/abc/find".to_string(),
            json!({"pattern": "x"}),
            ErrorKind::InvalidInput,
        ),
        (
            "/api/v1/nowhere".to_string(),
            json!({}),
            ErrorKind::NotFound,
        ),
    ] {
        let (status, text) = call(&server, "post", &path, Some(&body), bearer());
        assert_eq!(status, kind.http_status(), "{path} {body}: {text}");
        assert_eq!(kind_of(&text), kind.name(), "{text}");
    }
}

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
fn a_foreign_host_or_origin_is_refused_with_403() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let forbidden = ErrorKind::ForbiddenHost;
    for headers in [
        "Host: evil.example",
        "Host: evil.example:8000",
        "Host: localhost.evil.example",
        "Host: 127.0.0.1\r\nOrigin: http://evil.example",
        "Host: 127.0.0.1\r\nOrigin: null",
    ] {
        let (status, body) = raw(
            &server.addr,
            &format!(
                "GET /api/v1/workspaces HTTP/1.1\r\n{headers}\r\nAuthorization: Bearer {KEY}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(status, forbidden.http_status(), "{headers}: {body}");
        assert_eq!(kind_of(&body), forbidden.name(), "{body}");
    }
    for headers in [
        "Host: localhost:1234",
        "Host: [::1]",
        "Host: 127.0.0.1\r\nOrigin: http://localhost:3000",
    ] {
        let (status, body) = raw(
            &server.addr,
            &format!(
                "GET /api/v1/workspaces HTTP/1.1\r\n{headers}\r\nAuthorization: Bearer {KEY}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(status, 200, "{headers}: {body}");
    }
}

#[test]
fn a_body_over_the_limit_is_refused_with_413() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_API_MAX_BODY_BYTES", "1024")]);
    let id = workspace_id(&server);
    let big = json!({"pattern": "x".repeat(4096)});
    let (status, text) = call(
        &server,
        "post",
        &format!("/api/v1/workspaces/{id}/search"),
        Some(&big),
        bearer(),
    );
    assert_eq!(status, ErrorKind::TooLong.http_status(), "{text}");
    assert_eq!(kind_of(&text), ErrorKind::TooLong.name());
    assert!(text.contains("1024"), "the limit is named: {text}");
    // Under the limit, the same route answers.
    let (status, text) = call(
        &server,
        "post",
        &format!("/api/v1/workspaces/{id}/search"),
        Some(&json!({"pattern": "parse"})),
        bearer(),
    );
    assert_eq!(status, 200, "{text}");
}

#[test]
fn no_answer_of_any_route_contains_the_workspace_root() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let root = env.root().to_string_lossy().into_owned();
    let canonical = std::fs::canonicalize(env.root())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut checked = 0;
    let mut answers = Vec::new();
    for (method, path, body) in routes(&server, id) {
        answers.push((
            format!("{method} {path}"),
            call(&server, &method, &path, body.as_ref(), bearer()),
        ));
    }
    // Failures name things too: a missing file, symbol and workspace.
    for (path, body) in [
        ("outline", json!({"file": "src/missing.rs"})),
        (
            "outline",
            json!({"file": format!("{canonical}/src/lib.rs")}),
        ),
        ("def", json!({"symbol": "nothing_here"})),
        (
            "impact",
            json!({"target": format!("{canonical}/src/lib.rs")}),
        ),
        ("search", json!({"pattern": "(", "regex": true})),
    ] {
        let p = format!("/api/v1/workspaces/{id}/{path}");
        answers.push((
            format!("post {p} {body}"),
            call(&server, "post", &p, Some(&body), bearer()),
        ));
    }
    for (what, (status, text)) in &answers {
        assert!(*status < 500, "{what}: {status} {text}");
        for forbidden in [&root, &canonical] {
            assert!(
                !text.contains(forbidden.as_str()),
                "{what} answered the workspace root {forbidden}: {text}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 18);
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
const SCHEMATHESIS_CONFIG: &str = r#"
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "403", "404", "409", "412", "413", "422"]
"#;

fn on_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

#[test]
fn schemathesis_finds_no_failure_against_the_openapi_document() {
    let Some(st) = on_path("st").or_else(|| on_path("schemathesis")) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "schemathesis is not installed (pip install schemathesis) and CI is set"
        );
        eprintln!("skipped: schemathesis is not installed (pip install schemathesis)");
        return;
    };
    let env = indexed();
    // A real projects base, so creation is fuzzed too (every folder lands inside it).
    let base = tempfile::tempdir().unwrap();
    let server = start(
        &env,
        &[],
        &[("LOCI_PROJECTS_BASE", base.path().to_str().unwrap())],
    );
    assert!(workspace_id(&server) > 0);
    let config = env.home.path().join("schemathesis.toml");
    std::fs::write(&config, SCHEMATHESIS_CONFIG).unwrap();
    let reports = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(st)
        .current_dir(reports.path())
        .arg("--config-file")
        .arg(&config)
        .args([
            "run",
            &format!("http://{}/api/v1/openapi.json", server.addr),
        ])
        .args(["--header", &format!("Authorization: Bearer {KEY}")])
        .args(["--checks", "all", "--max-examples", "20", "--workers", "1"])
        .args(["--seed", "1", "--no-color"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = wait_exit(&mut child, Duration::from_secs(300));
    assert!(status.success(), "schemathesis found failures:\n{out}");
    assert!(out.contains("passed"), "{out}");
    assert!(!out.contains("Failed to extract data"), "{out}");
}

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
fn workspace_create_over_http_makes_the_folder_once_and_refuses_adversarial_segments() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), base.path().join("link")).unwrap();
    let base_text = base.path().to_string_lossy().into_owned();
    let server = start(&env, &[], &[("LOCI_PROJECTS_BASE", &base_text)]);
    let caps = get_json(&server, "/api/v1/capabilities");
    assert!(
        caps["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("workspace.create")),
        "{caps}"
    );
    let create = |body: Value| call(&server, "post", "/api/v1/workspaces", Some(&body), bearer());
    let mounted = |segment: &str| json!({"locator": {"kind": "mounted", "segment": segment}});

    let (status, first) = create(mounted("team/app"));
    assert_eq!(status, 200, "{first}");
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["action"], "initialized");
    assert_eq!(first["changed"], true);
    assert_eq!(
        first["locator"],
        json!({"kind": "mounted", "segment": "team/app"})
    );
    assert!(base.path().join("team/app/.git").is_dir());
    let (status, again) = create(mounted("team/app"));
    assert_eq!(status, 200, "{again}");
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["id"], first["id"], "one workspace, confirmed once");
    assert_eq!(again["changed"], false);
    assert_eq!(again["action"], "already_a_repository");
    let list = get_json(&server, "/api/v1/workspaces");
    assert_eq!(list["workspaces"][0]["id"], first["id"]);
    assert_eq!(list["workspaces"][0]["locator"], "mounted:team/app");

    let mut answers = Vec::new();
    for (segment, reason) in [
        ("../escape", "parent_dir_component"),
        ("/etc", "absolute"),
        ("a//b", "empty_component"),
        ("", "empty"),
        ("a\u{0}b", "nul"),
    ] {
        let (status, text) = create(mounted(segment));
        assert_eq!(
            status,
            ErrorKind::InvalidSegment.http_status(),
            "{segment:?}: {text}"
        );
        assert_eq!(kind_of(&text), ErrorKind::InvalidSegment.name(), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["error"]["detail"]["reason"], reason,
            "{segment:?}: {text}"
        );
        answers.push(text);
    }
    // Through a symlink out of the base: refused, and nothing is made outside.
    let (status, text) = create(mounted("link/inside"));
    assert!((400..500).contains(&status), "{text}");
    assert!(!outside.path().join("inside").exists());
    answers.push(text);
    // A path can never ride along, and an unknown kind is named.
    for body in [
        json!({"locator": {"kind": "mounted", "segment": "x", "path": "/tmp"}}),
        json!({"locator": {"kind": "elsewhere", "segment": "x"}}),
        json!({"locator": {"kind": "mounted", "segment": "x"}, "root": "/tmp"}),
    ] {
        let (status, text) = create(body.clone());
        assert_eq!(
            status,
            ErrorKind::InvalidInput.http_status(),
            "{body}: {text}"
        );
        answers.push(text);
    }
    // The managed root is not configured: named, with its variable.
    let (status, text) = create(json!({"locator": {"kind": "managed", "name": "app"}}));
    assert_eq!(status, ErrorKind::NoRoot.http_status(), "{text}");
    assert!(text.contains("LOCI_MANAGED_ROOT"), "{text}");
    answers.push(text);
    let canonical = std::fs::canonicalize(base.path())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for text in &answers {
        assert!(
            !text.contains(&base_text) && !text.contains(&canonical),
            "{text}"
        );
    }
}

#[test]
fn without_a_root_workspace_create_is_not_declared_and_answers_no_root() {
    let env = Env::new();
    let server = start(&env, &[], &[]);
    let caps = get_json(&server, "/api/v1/capabilities");
    let caps = caps["capabilities"].as_array().unwrap();
    assert!(caps.contains(&json!("graph.read")), "{caps:?}");
    assert!(!caps.contains(&json!("workspace.create")), "{caps:?}");
    let (status, text) = call(
        &server,
        "post",
        "/api/v1/workspaces",
        Some(&json!({"locator": {"kind": "mounted", "segment": "team/app"}})),
        bearer(),
    );
    assert_eq!(status, ErrorKind::NoRoot.http_status(), "{text}");
    assert_eq!(kind_of(&text), ErrorKind::NoRoot.name());
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
