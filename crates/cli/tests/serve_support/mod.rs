//! Shared by the `loci serve` tests: start the real binary on a free loopback port,
//! call it with a real HTTP client, wait for it to exit.

#![allow(dead_code)]

pub mod mcp;
pub mod web;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::Env;
use serde_json::{Value, json};

pub const KEY: &str = "test-key-0123456789";
pub const START_DEADLINE: Duration = Duration::from_secs(30);

/// A running `loci serve`, killed on drop.
pub struct Server {
    pub child: Child,
    pub addr: String,
    /// The web view's one-time sign-in path the server printed (`/web/signin?token=...`).
    pub web_signin: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `src/lib.rs` of [`indexed`]: `helper` (line 2) is called by `parse_config`, called by
/// `Settings::load` and by `main` in `src/main.rs`.
pub const LIB: &str = "pub fn parse_config() -> u32 { helper() }\nfn helper() -> u32 { 1 }\npub struct Settings { pub depth: u32 }\nimpl Settings { pub fn load() -> u32 { parse_config() } }\n";

/// [`LIB`] after an edit of `helper`'s body (what makes a memory linked to it stale).
pub fn lib_with_helper_changed() -> String {
    LIB.replace("{ 1 }", "{ 2 }")
}

/// Remembers `helper-is-one`, whose body names `helper`: the memory is linked to it.
pub fn remember_about_helper(env: &Env) {
    let (code, out) = env.json(&[
        "remember",
        "--name",
        "helper-is-one",
        "We keep `helper` returning one: callers count on it.",
    ]);
    assert_eq!(code, 0, "{out}");
}

pub fn indexed() -> Env {
    let env = Env::new();
    env.write(&[
        ("src/lib.rs", LIB),
        (
            "src/main.rs",
            "fn main() { let _ = lib::parse_config(); }\n",
        ),
    ]);
    let (code, v) = env.json(&["index", env.root().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    env
}

pub fn start(env: &Env, extra: &[&str], vars: &[(&str, &str)]) -> Server {
    start_program(env, &crate::common::bin(), extra, vars)
}

/// [`start`] with owned variables.
pub fn serve_vars(env: &Env, vars: &[(String, String)]) -> Server {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    start(env, &[], &vars)
}

/// [`start`] of another copy of the `loci` binary.
pub fn start_program(
    env: &Env,
    program: &std::path::Path,
    extra: &[&str],
    vars: &[(&str, &str)],
) -> Server {
    let mut cmd = env.cmd_of(program);
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
    let web_signin = v["web_signin"].as_str().unwrap_or_default().to_string();
    Server {
        child,
        addr,
        web_signin,
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `(status, body)` of one request; `auth` is a header to send, if any.
pub fn call(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<&Value>,
    auth: Option<(&str, &str)>,
) -> (u16, String) {
    let url = format!("http://{}{path}", server.addr);
    let a = agent();
    let resp = match (method, body) {
        ("delete", _) => {
            let mut r = a.delete(&url);
            if let Some((k, v)) = auth {
                r = r.header(k, v);
            }
            r.call()
        }
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

pub fn bearer() -> Option<(&'static str, &'static str)> {
    Some(("Authorization", "Bearer test-key-0123456789"))
}

pub fn get_json(server: &Server, path: &str) -> Value {
    let (status, body) = call(server, "get", path, None, bearer());
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// The one workspace's registry id.
pub fn workspace_id(server: &Server) -> i64 {
    let list = get_json(server, "/api/v1/workspaces");
    list["workspaces"][0]["id"]
        .as_i64()
        .expect("a workspace id")
}

/// The query id the sample routes cancel: never running, so `unknown_query`.
pub const NO_SUCH_QUERY: &str = "no-such-query";

/// Every documented route as (method, concrete path, a request body).
pub fn routes(server: &Server, id: i64) -> Vec<(String, String, Option<Value>)> {
    let doc = get_json(server, "/api/v1/openapi.json");
    let mut out = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            // The user store's routes take the workspace ones' bodies (but the user
            // store has no code to link).
            let op_id = op["operationId"].as_str().unwrap();
            let user = op_id.starts_with("user_");
            let body = op
                .get("requestBody")
                .map(|_| match op_id.trim_start_matches("user_") {
                    "memory_link" if user => json!({"name": "nope"}),
                    "find" => json!({"pattern": "*"}),
                    "def" | "refs" => json!({"symbol": "parse_config"}),
                    "callers" | "callees" | "impact" => {
                        json!({"target": "parse_config", "depth": 3})
                    }
                    "outline" => json!({"file": "src/lib.rs"}),
                    "changes" => json!({}),
                    "search" => json!({"pattern": "parse"}),
                    "search_meaning" => json!({"text": "read the settings", "signals": "text"}),
                    "create_workspace" => {
                        json!({"locator": {"kind": "mounted", "segment": "made/here"}, "project_id": "walk-1"})
                    }
                    "rebuild_workspace" => json!({"consent": false}),
                    "fs" => json!({"kind": "mounted"}),
                    "query" => json!({"sql": "SELECT count(*) FROM files"}),
                    "memory_remember" => {
                        json!({"name": "sample", "body": "`parse_config` reads it"})
                    }
                    "memory_recall" => json!({"query": "parse"}),
                    "memory_list" | "memory_entities" | "memory_graph" | "memory_stats" => {
                        json!({})
                    }
                    "memory_entity_merge" | "memory_merge" => {
                        json!({"from": "nope", "into": "nope2"})
                    }
                    "memory_entity_rename" => json!({"name": "nope", "new_name": "nope2"}),
                    "memory_edit" => json!({"name": "nope", "body": "b"}),
                    "memory_rename" => json!({"name": "nope", "new_name": "nope2"}),
                    "memory_purge" => json!({"name": "nope", "consent": false}),
                    "memory_link" => json!({"name": "nope", "code": ["parse_config"]}),
                    "memory_unlink" => json!({"name": "nope", "entity": "x"}),
                    "memory_enrich" => json!({"names": ["nope"]}),
                    op if op.starts_with("memory_") => json!({"name": "nope"}),
                    other => panic!("no sample body for {other}"),
                });
            let concrete = path
                .replace("{id}", &id.to_string())
                .replace("{run}", "1")
                .replace("{qid}", NO_SUCH_QUERY);
            // A required query parameter (the repositories lookup's `path`) gets `/`.
            let query: String = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query")
                .map(|p| format!("?{}=/", p["name"].as_str().unwrap()))
                .collect();
            out.push((method.clone(), format!("{concrete}{query}"), body));
        }
    }
    assert!(out.len() >= 13, "{out:?}");
    out
}

/// The statuses a route may answer with the right key on a server without roots,
/// when `routes()` is called in the document's order (so `index` has made run 1).
pub fn with_key(method: &str, path: &str) -> &'static [u16] {
    use loci_api::ErrorKind as K;
    const NO_ROOT: u16 = 412;
    const BUSY_OR_STARTED: &[u16] = &[202, 409];
    match (method, path.rsplit('/').next().unwrap_or("")) {
        ("post", "workspaces") | ("post", "fs") => {
            assert_eq!(K::NoRoot.http_status(), NO_ROOT);
            &[NO_ROOT]
        }
        ("post", "index") | ("post", "sync") => {
            assert_eq!(K::Busy.http_status(), 409);
            BUSY_OR_STARTED
        }
        ("post", "rebuild") => {
            assert_eq!(K::ConsentRequired.http_status(), 409);
            &[409]
        }
        // The sample workspace has no vectors (`loci embed` never ran).
        ("post", "meaning") => {
            assert_eq!(K::NoVectors.http_status(), 412);
            &[412]
        }
        // The sample workspace is in no git repository.
        ("post", "changes") => {
            assert_eq!(K::NotARepository.http_status(), 409);
            &[409]
        }
        _ if path.contains("/memory/") => memory_statuses(path),
        ("delete", _) => {
            assert_eq!(K::UnknownQuery.http_status(), 404);
            &[404]
        }
        _ => &[200],
    }
}

/// A memory route with a sample body: what names no memory is 404, a second
/// `remember` of the same name 409, purge without consent 409 or 404.
fn memory_statuses(path: &str) -> &'static [u16] {
    use loci_api::ErrorKind as K;
    assert_eq!(K::NameTaken.http_status(), 409);
    match path.rsplit('/').next().unwrap_or("") {
        "remember" => &[200, 409],
        "purge" => &[404, 409],
        "recall" | "list" | "entities" | "graph" | "stats" => &[200],
        // LLM extraction is off unless the server's config allows spawns.
        "enrich" => {
            assert_eq!(K::CapabilityMissing.http_status(), 412);
            &[412, 404]
        }
        _ => &[200, 404],
    }
}

pub fn kind_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    v["error"]["kind"].as_str().unwrap_or("").to_string()
}

/// One raw HTTP/1.1 exchange (for headers a client library sets itself, like Host).
pub fn raw(addr: &str, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    status_and_body(&text)
}

/// The status and the body of a raw HTTP answer (0 and "" when there is none).
pub fn status_and_body(text: &str) -> (u16, String) {
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

/// A path as text.
pub fn text(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A POST with the key; the status and the parsed JSON answer.
pub fn post(server: &Server, path: &str, body: &Value) -> (u16, Value) {
    let (status, text) = call(server, "post", path, Some(body), bearer());
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    )
}

/// The creation request of a workspace under the projects base.
pub fn mounted(segment: &str) -> Value {
    json!({"locator": {"kind": "mounted", "segment": segment}})
}

pub fn wait_exit(child: &mut Child, deadline: Duration) -> std::process::ExitStatus {
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

/// A workspace created over HTTP under the projects base at `base/segment`, with
/// `files` small Rust files written in it: its id and root.
pub fn mounted_workspace(
    server: &Server,
    base: &std::path::Path,
    segment: &str,
    files: usize,
) -> (i64, std::path::PathBuf) {
    let (status, created) = post(server, "/api/v1/workspaces", &mounted(segment));
    assert_eq!(status, 200, "{created}");
    let root = base.join(segment);
    std::fs::create_dir_all(root.join("src")).unwrap();
    for i in 0..files {
        std::fs::write(
            root.join(format!("src/m{i}.rs")),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n"),
        )
        .unwrap();
    }
    (created["id"].as_i64().unwrap(), root)
}

/// A stand-in for the loci executable that background runs use: it reports progress
/// (3 of 10 files), then waits for `release` to exist before running the real loci.
pub fn held_loci(dir: &std::path::Path, release: &std::path::Path) -> std::path::PathBuf {
    let script = dir.join("held-loci");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho 'loci-progress 10 3' >&2\nwhile [ ! -e '{}' ]; do sleep 0.02; done\nexec '{}' \"$@\"\n",
            release.display(),
            env!("CARGO_BIN_EXE_loci")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// A server whose background runs are held ([`held_loci`]): each reports 3 of 10
/// files and waits until `release` exists. Workspaces go under `base`.
pub struct HeldRuns {
    pub server: Server,
    pub base: tempfile::TempDir,
    /// Creating this file lets every held run go on.
    pub release: std::path::PathBuf,
    /// Holds the stand-in: keep it bound while the server runs.
    pub tools: tempfile::TempDir,
}

/// Starts [`HeldRuns`] for `env`.
pub fn serve_held(env: &Env) -> HeldRuns {
    let base = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let release = tools.path().join("release");
    let exe = held_loci(tools.path(), &release);
    let server = start(
        env,
        &[],
        &[
            ("LOCI_PROJECTS_BASE", &text(base.path())),
            ("LOCI_LIFECYCLE_EXECUTABLE", &text(&exe)),
        ],
    );
    HeldRuns {
        server,
        base,
        release,
        tools,
    }
}

/// Polls a run's URL until it is `done` or `failed` (a minute at most).
pub fn wait_run(server: &Server, url: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let v = get_json(server, url);
        if v["state"] == "done" || v["state"] == "failed" {
            return v;
        }
        assert!(Instant::now() < until, "the run did not end: {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every path under `top`, relative to it, sorted: a snapshot to compare before and after
/// a request that must make nothing.
pub fn tree_under(top: &std::path::Path) -> Vec<String> {
    fn walk(top: &std::path::Path, dir: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            out.push(p.strip_prefix(top).unwrap().to_string_lossy().into_owned());
            if e.file_type().unwrap().is_dir() {
                walk(top, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(top, top, &mut out);
    out.sort();
    out
}

/// Runs real git with a fixed identity; a failure fails the test.
pub fn git(args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}
