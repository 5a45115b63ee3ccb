//! `loci serve` looking after workspaces: creation through the one ruler (adversarial
//! segments and names refused by name, nothing made outside the roots, create twice →
//! one confirmation), clone over HTTP from a real `git daemon` on loopback under the
//! clone policy, the folder picker, one workspace's state, the capabilities, and the
//! invariant that no route of the OpenAPI document answers a root or a temp path.

use crate::common;
use crate::serve_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

/// Two roots side by side in one temp dir, with a folder outside both.
struct Roots {
    dir: tempfile::TempDir,
}

impl Roots {
    fn new() -> Roots {
        let dir = tempfile::tempdir().unwrap();
        for d in ["base", "managed", "outside"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        Roots { dir }
    }
    fn base(&self) -> PathBuf {
        self.dir.path().join("base")
    }
    fn managed(&self) -> PathBuf {
        self.dir.path().join("managed")
    }
    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }
    fn vars(&self) -> Vec<(String, String)> {
        vec![
            ("LOCI_PROJECTS_BASE".into(), text(&self.base())),
            ("LOCI_MANAGED_ROOT".into(), text(&self.managed())),
        ]
    }
    /// Every path under the temp dir, relative, sorted.
    fn tree(&self) -> Vec<String> {
        tree_under(self.dir.path())
    }
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn serve_with(env: &Env, vars: &[(String, String)]) -> Server {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    start(env, &[], &vars)
}

fn post(server: &Server, path: &str, body: &Value) -> (u16, Value) {
    let (status, text) = call(server, "post", path, Some(body), bearer());
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    )
}

fn mounted(segment: &str) -> Value {
    json!({"locator": {"kind": "mounted", "segment": segment}})
}

fn capabilities(server: &Server) -> Vec<String> {
    get_json(server, "/api/v1/capabilities")["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn adversarial_segments_and_names_are_refused_by_name_and_nothing_is_created_anywhere() {
    let env = Env::new();
    let roots = Roots::new();
    std::os::unix::fs::symlink(roots.outside(), roots.base().join("link")).unwrap();
    let server = serve_with(&env, &roots.vars());
    let before = roots.tree();
    let refused = ErrorKind::InvalidSegment;
    // The paths ruler's own table of hostile segments, sent over HTTP.
    for (segment, reason) in [
        ("", "empty"),
        ("/", "absolute"),
        ("/etc", "absolute"),
        ("//etc", "absolute"),
        ("../etc", "parent_dir_component"),
        ("..", "parent_dir_component"),
        ("a/../../etc", "parent_dir_component"),
        ("a/..", "parent_dir_component"),
        (".", "current_dir_component"),
        ("./a", "current_dir_component"),
        ("a/./b", "current_dir_component"),
        ("a//b", "empty_component"),
        ("a/", "empty_component"),
        ("a\0b", "nul"),
        ("a\\b", "backslash"),
        ("..\\etc", "backslash"),
        ("a\nb", "control_character"),
        ("a\x1bb", "control_character"),
        ("a\x7fb", "control_character"),
        ("a\u{85}b", "control_character"),
        ("a\u{202E}b", "format_character"),
        ("\u{FEFF}a", "format_character"),
        ("a\u{FF0F}b", "look_alike"),
        ("\u{2024}\u{2024}/etc", "look_alike"),
        ("a\u{2215}b", "look_alike"),
        ("\u{FF0E}\u{FF0E}", "look_alike"),
        ("cafe\u{301}", "not_nfc"),
        ("a/cafe\u{301}", "not_nfc"),
        ("link/inside", "escapes_root"),
        ("link", "escapes_root"),
    ] {
        let (status, v) = post(&server, "/api/v1/workspaces", &mounted(segment));
        assert_eq!(status, refused.http_status(), "{segment:?}: {v}");
        assert_eq!(v["error"]["kind"], refused.name(), "{segment:?}: {v}");
        assert_eq!(v["error"]["detail"]["reason"], reason, "{segment:?}: {v}");
    }
    for (name, reason) in [
        ("", "empty_name"),
        (" app", "invalid_name_character"),
        ("a/b", "invalid_name_character"),
        ("a.b", "invalid_name_character"),
        ("..", "invalid_name_character"),
        ("ação", "invalid_name_character"),
        ("a\0", "invalid_name_character"),
    ] {
        let body = json!({"locator": {"kind": "managed", "name": name}});
        let (status, v) = post(&server, "/api/v1/workspaces", &body);
        assert_eq!(status, refused.http_status(), "{name:?}: {v}");
        assert_eq!(v["error"]["detail"]["reason"], reason, "{name:?}: {v}");
    }
    assert_eq!(roots.tree(), before, "a refused request created something");
    assert!(
        get_json(&server, "/api/v1/workspaces")["workspaces"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn create_then_confirm_is_idempotent_with_one_id_and_one_verified_at() {
    let env = Env::new();
    let roots = Roots::new();
    let server = serve_with(&env, &roots.vars());
    for body in [
        mounted("team/app"),
        json!({"locator": {"kind": "managed", "name": "ws-1"}}),
    ] {
        let (status, first) = post(&server, "/api/v1/workspaces", &body);
        assert_eq!(status, 200, "{first}");
        assert_eq!(first["changed"], true);
        assert!(first["verified_at"].as_i64().is_some(), "{first}");
        let (status, again) = post(&server, "/api/v1/workspaces", &body);
        assert_eq!(status, 200, "{again}");
        assert_eq!(again["id"], first["id"]);
        assert_eq!(again["changed"], false);
        assert_eq!(again["verified_at"], first["verified_at"], "verified once");
        let id = first["id"].as_i64().unwrap();
        let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
        assert_eq!(detail["verified_at"], first["verified_at"], "{detail}");
    }
    assert!(roots.base().join("team/app/.git").is_dir());
    assert!(roots.managed().join("ws-1/.git").is_dir());
    let list = get_json(&server, "/api/v1/workspaces");
    assert_eq!(list["workspaces"].as_array().unwrap().len(), 2, "{list}");
}

#[test]
fn one_workspace_answers_its_state_reason_notices_and_freshness_without_a_path() {
    let env = Env::new();
    let roots = Roots::new();
    let server = serve_with(&env, &roots.vars());
    let (_, created) = post(&server, "/api/v1/workspaces", &mounted("team/app"));
    let id = created["id"].as_i64().unwrap();
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert_eq!(detail["state"], "unindexed", "{detail}");
    assert_eq!(detail["name"], "app");
    assert_eq!(detail["locator"], "mounted:team/app");
    assert!(!detail["reason"].as_str().unwrap().is_empty());
    assert_eq!(detail["notices"][0]["id"], "unindexed", "{detail}");
    let notice = detail["notices"][0]["message"].as_str().unwrap();
    assert!(
        notice.contains(&format!("POST /api/v1/workspaces/{id}/index")),
        "{notice}"
    );
    assert!(detail.get("index").is_none(), "no index yet: {detail}");

    // Indexed through the CLI, the same route answers clean and the index's freshness.
    let ws = roots.base().join("team/app");
    std::fs::write(ws.join("lib.rs"), "pub fn alpha() {}\n").unwrap();
    let out = env
        .cmd()
        .args(["index", &text(&ws), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert_eq!(detail["state"], "clean", "{detail}");
    assert_eq!(detail["index"]["state"], "complete", "{detail}");
    assert_eq!(detail["index"]["stale_files"], 0);
    assert!(detail["notices"].as_array().unwrap().is_empty(), "{detail}");
    // A change on disk is drift, with the route that syncs it.
    std::fs::write(ws.join("more.rs"), "pub fn beta() {}\n").unwrap();
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert_eq!(detail["state"], "drift", "{detail}");
    let notice = detail["notices"][0]["message"].as_str().unwrap();
    assert!(notice.contains("/sync"), "{notice}");
    let body = detail.to_string();
    for root in [
        roots.dir.path().to_path_buf(),
        std::fs::canonicalize(roots.dir.path()).unwrap(),
    ] {
        assert!(!body.contains(&text(&root)), "{body}");
    }
    let (status, text) = call(&server, "get", "/api/v1/workspaces/4242", None, bearer());
    assert_eq!(status, ErrorKind::NotFound.http_status(), "{text}");
}

#[test]
fn the_folder_picker_lists_directories_by_segment_in_pages_and_refuses_escapes() {
    let env = Env::new();
    let roots = Roots::new();
    let base = roots.base();
    for d in ["team/app/src", "team/lib", "team/.cache", "solo"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::fs::create_dir(base.join("team/app/.git")).unwrap();
    std::fs::write(base.join("team/file.txt"), "not a folder").unwrap();
    std::os::unix::fs::symlink(roots.outside(), base.join("team/link")).unwrap();
    std::fs::create_dir(roots.outside().join("secret")).unwrap();
    let server = serve_with(&env, &roots.vars());
    assert!(capabilities(&server).contains(&"fs.list".to_string()));
    let names = |v: &Value| -> Vec<String> {
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (status, top) = post(&server, "/api/v1/fs", &json!({"kind": "mounted"}));
    assert_eq!(status, 200, "{top}");
    assert_eq!(names(&top), ["solo", "team"]);
    let (_, team) = post(
        &server,
        "/api/v1/fs",
        &json!({"kind": "mounted", "segment": "team"}),
    );
    assert_eq!(
        names(&team),
        [".cache", "app", "lib"],
        "no file, no symlink: {team}"
    );
    assert_eq!(team["segment"], "team");
    assert_eq!(team["entries"][1]["segment"], "team/app");
    assert_eq!(team["entries"][1]["repository"], true);
    assert_eq!(team["entries"][0]["hidden"], true);
    assert_eq!(team["total"], 3);
    // A sub-path inside the workspace, and pages with the usual fields.
    let (_, src) = post(
        &server,
        "/api/v1/fs",
        &json!({"kind": "mounted", "segment": "team", "path": "app"}),
    );
    // `.git` is never a segment (issue #27, item 8), so the picker leaves it out.
    assert_eq!(names(&src), ["src"], "{src}");
    assert_eq!(src["skipped"], 1, "{src}");
    let (_, page1) = post(
        &server,
        "/api/v1/fs",
        &json!({"kind": "mounted", "segment": "team", "limit": 2}),
    );
    assert_eq!(names(&page1), [".cache", "app"]);
    assert_eq!(page1["truncated"], true);
    let cursor = page1["next_cursor"].as_str().unwrap().to_string();
    let (_, page2) = post(
        &server,
        "/api/v1/fs",
        &json!({"kind": "mounted", "segment": "team", "limit": 2, "cursor": cursor}),
    );
    assert_eq!(names(&page2), ["lib"]);
    assert_eq!(page2["truncated"], false);
    // Escapes are refused by the ruler, by name; nothing outside is ever listed.
    let mut answers = vec![top, team, src, page1, page2];
    for (body, kind, reason) in [
        (
            json!({"kind": "mounted", "segment": "../outside"}),
            ErrorKind::InvalidSegment,
            Some("parent_dir_component"),
        ),
        (
            json!({"kind": "mounted", "path": "/etc"}),
            ErrorKind::InvalidSegment,
            Some("absolute"),
        ),
        (
            json!({"kind": "mounted", "segment": "team", "path": "../.."}),
            ErrorKind::InvalidSegment,
            Some("parent_dir_component"),
        ),
        (
            json!({"kind": "mounted", "segment": "team/link"}),
            ErrorKind::InvalidSegment,
            Some("escapes_root"),
        ),
        (
            json!({"kind": "managed", "segment": "a/b"}),
            ErrorKind::InvalidSegment,
            Some("invalid_name_character"),
        ),
        (
            json!({"kind": "mounted", "segment": "nowhere"}),
            ErrorKind::NotFound,
            None,
        ),
        (
            json!({"kind": "mounted", "segment": "team/file.txt"}),
            ErrorKind::NotADirectory,
            None,
        ),
        (
            json!({"kind": "mounted", "limit": 0}),
            ErrorKind::LimitExceeded,
            None,
        ),
        (json!({"kind": "elsewhere"}), ErrorKind::InvalidInput, None),
    ] {
        let (status, v) = post(&server, "/api/v1/fs", &body);
        assert_eq!(status, kind.http_status(), "{body}: {v}");
        assert_eq!(v["error"]["kind"], kind.name(), "{body}: {v}");
        if let Some(reason) = reason {
            assert_eq!(v["error"]["detail"]["reason"], reason, "{body}: {v}");
        }
        answers.push(v);
    }
    for v in &answers {
        let body = v.to_string();
        assert!(!body.contains("secret"), "{body}");
        assert!(!body.contains(&text(roots.dir.path())), "{body}");
        assert!(
            !body.contains(&text(&std::fs::canonicalize(roots.dir.path()).unwrap())),
            "{body}"
        );
    }
}

#[test]
fn capabilities_declare_create_clone_and_the_picker_only_when_they_can_work() {
    let env = Env::new();
    let server = start(&env, &[], &[]);
    let caps = capabilities(&server);
    for absent in ["workspace.create", "workspace.clone", "fs.list"] {
        assert!(!caps.contains(&absent.to_string()), "{absent}: {caps:?}");
    }
    assert!(caps.contains(&"workspace.maintain".to_string()), "{caps:?}");
    let (status, v) = post(&server, "/api/v1/fs", &json!({"kind": "mounted"}));
    assert_eq!(status, ErrorKind::NoRoot.http_status(), "{v}");
    drop(server);

    let roots = Roots::new();
    let server = serve_with(&env, &roots.vars());
    let caps = capabilities(&server);
    for present in ["workspace.create", "workspace.clone", "fs.list"] {
        assert!(caps.contains(&present.to_string()), "{present}: {caps:?}");
    }
    drop(server);

    // A root but no git to run: creation is declared, cloning is not.
    let mut vars = roots.vars();
    vars.push(("PATH".into(), text(&roots.outside())));
    let server = serve_with(&env, &vars);
    let caps = capabilities(&server);
    assert!(caps.contains(&"workspace.create".to_string()), "{caps:?}");
    assert!(!caps.contains(&"workspace.clone".to_string()), "{caps:?}");
}

#[test]
fn clone_urls_a_remote_caller_may_not_use_are_refused_by_name_before_anything_is_made() {
    let env = Env::new();
    let roots = Roots::new();
    // A real repository on this machine: a remote caller must not make the server read it.
    let local = roots.outside().join("app");
    git(&["init", "--quiet", &text(&local)]);
    let server = serve_with(&env, &roots.vars());
    let before = roots.tree();
    let refused = ErrorKind::InvalidCloneUrl;
    for (url, reason) in [
        (format!("file://{}", text(&local)), "local_repository"),
        (text(&local), "local_repository"),
        ("../outside/app".to_string(), "local_repository"),
        (
            "ext::sh -c touch% /tmp/loci-pwned".to_string(),
            "control_character",
        ),
        ("ext::sh".to_string(), "remote_helper"),
        ("--upload-pack=touch".to_string(), "option_like"),
        ("-u".to_string(), "option_like"),
        ("ssh://-oProxyCommand=x/y".to_string(), "option_like"),
        (
            "https://user:secret@example.com/app.git".to_string(),
            "credentials",
        ),
        (
            "https://token@example.com/app.git".to_string(),
            "credentials",
        ),
        ("https://example.com/a\nb".to_string(), "control_character"),
        ("git://127.0.0.1/app.git".to_string(), "scheme_not_allowed"),
        ("http://127.0.0.1/app.git".to_string(), "scheme_not_allowed"),
    ] {
        let mut body = mounted("cloned/app");
        body["clone"] = json!(url);
        let (status, v) = post(&server, "/api/v1/workspaces", &body);
        assert_eq!(status, refused.http_status(), "{url:?}: {v}");
        assert_eq!(v["error"]["kind"], refused.name(), "{url:?}: {v}");
        assert_eq!(v["error"]["detail"]["reason"], reason, "{url:?}: {v}");
    }
    assert_eq!(roots.tree(), before, "a refused clone created something");
    assert!(!Path::new("/tmp/loci-pwned").exists());
}

/// A `git daemon` serving `dir` on a free loopback port, killed on drop.
struct Daemon {
    child: Child,
    port: u16,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn git_daemon(dir: &Path) -> Option<Daemon> {
    let exec = Command::new("git").arg("--exec-path").output().ok()?;
    let exec = PathBuf::from(String::from_utf8_lossy(&exec.stdout).trim());
    if !exec.join("git-daemon").is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "git daemon is not installed and CI is set"
        );
        eprintln!("skipped: git daemon is not installed");
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("git")
        .args([
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--listen=127.0.0.1",
        ])
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", text(dir)))
        .arg(text(dir))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let daemon = Daemon { child, port };
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < until,
            "git daemon did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(daemon)
}

#[test]
fn a_clone_from_a_loopback_git_daemon_is_confirmed_like_any_create() {
    let env = Env::new();
    let roots = Roots::new();
    let served = tempfile::tempdir().unwrap();
    let src = served.path().join("src");
    git(&["init", "--quiet", &text(&src)]);
    std::fs::write(src.join("README.md"), "cloned over git://\n").unwrap();
    git(&["-C", &text(&src), "add", "README.md"]);
    git(&["-C", &text(&src), "commit", "--quiet", "-m", "first"]);
    git(&[
        "clone",
        "--quiet",
        "--bare",
        &text(&src),
        &text(&served.path().join("app.git")),
    ]);
    let Some(daemon) = git_daemon(served.path()) else {
        return;
    };
    let url = format!("git://127.0.0.1:{}/app.git", daemon.port);
    let mut vars = roots.vars();
    vars.push(("LOCI_CLONE_ALLOW_GIT".into(), "1".into()));
    // The daemon is on loopback, which clones reach only when the operator allows it.
    vars.push(("LOCI_CLONE_ALLOW_ADDRESSES".into(), "loopback".into()));
    let server = serve_with(&env, &vars);
    assert!(capabilities(&server).contains(&"workspace.clone".to_string()));
    let mut body = mounted("team/cloned");
    body["clone"] = json!(url);
    let (status, first) = post(&server, "/api/v1/workspaces", &body);
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["action"], "cloned", "{first}");
    assert_eq!(first["changed"], true);
    assert_eq!(
        std::fs::read_to_string(roots.base().join("team/cloned/README.md")).unwrap(),
        "cloned over git://\n"
    );
    // No hooks came with it: the template was empty.
    let hooks = roots.base().join("team/cloned/.git/hooks");
    assert!(!hooks.exists() || std::fs::read_dir(&hooks).unwrap().next().is_none());
    // Confirmed like any create: the same id again, verified once.
    let (status, again) = post(&server, "/api/v1/workspaces", &body);
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["changed"], false);
    assert_eq!(again["action"], "already_a_repository");
    assert_eq!(again["verified_at"], first["verified_at"]);
    drop(server);

    // Without the operator's allowance the same URL is refused, and nothing is made.
    let server = serve_with(&env, &roots.vars());
    let mut body = mounted("team/other");
    body["clone"] = json!(url);
    let (status, v) = post(&server, "/api/v1/workspaces", &body);
    assert_eq!(status, ErrorKind::InvalidCloneUrl.http_status(), "{v}");
    assert_eq!(v["error"]["detail"]["reason"], "scheme_not_allowed", "{v}");
    assert!(!roots.base().join("team/other").exists());
}

/// Every route of the server's own OpenAPI document, called with the key and plausible
/// inputs (and some failing ones), answers no root and no absolute path of this test's
/// temp dirs.
#[test]
fn no_route_of_the_openapi_document_answers_a_root_or_a_temp_path() {
    let env = Env::new();
    let roots = Roots::new();
    let server = serve_with(&env, &roots.vars());
    let (_, created) = post(&server, "/api/v1/workspaces", &mounted("team/app"));
    let id = created["id"].as_i64().unwrap();
    let ws = roots.base().join("team/app");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("src/lib.rs"),
        "pub fn parse_config() -> u32 { helper() }\nfn helper() -> u32 { 1 }\n",
    )
    .unwrap();
    let (status, run) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/index"),
        &json!({}),
    );
    assert_eq!(status, 202, "{run}");
    let done = wait_run(&server, run["progress_url"].as_str().unwrap());
    assert_eq!(done["state"], "done", "{done}");

    let mut forbidden: Vec<String> = vec![
        text(roots.dir.path()),
        text(env.home.path()),
        text(env.root()),
        text(&std::env::temp_dir()),
    ];
    for p in forbidden.clone() {
        if let Ok(real) = std::fs::canonicalize(&p) {
            forbidden.push(text(&real));
        }
    }
    let mut answers = Vec::new();
    for (method, path, body) in routes(&server, id) {
        answers.push((
            format!("{method} {path}"),
            call(&server, &method, &path, body.as_ref(), bearer()),
        ));
    }
    for (path, body) in [
        (
            format!("/api/v1/workspaces/{id}/outline"),
            json!({"file": "src/missing.rs"}),
        ),
        (
            format!("/api/v1/workspaces/{id}/def"),
            json!({"symbol": "nothing_here"}),
        ),
        (format!("/api/v1/workspaces/{id}/rebuild"), json!({})),
        (
            "/api/v1/fs".to_string(),
            json!({"kind": "mounted", "segment": "missing"}),
        ),
        (
            "/api/v1/fs".to_string(),
            json!({"kind": "managed", "segment": "nope"}),
        ),
        (
            "/api/v1/fs".to_string(),
            json!({"kind": "mounted", "segment": "team", "path": "app/src"}),
        ),
        (
            "/api/v1/workspaces".to_string(),
            json!({"locator": {"kind": "mounted", "segment": "team/app/src/lib.rs/x"}}),
        ),
    ] {
        answers.push((
            format!("post {path} {body}"),
            call(&server, "post", &path, Some(&body), bearer()),
        ));
    }
    for run in 1..=2 {
        let p = format!("/api/v1/workspaces/{id}/runs/{run}");
        answers.push((p.clone(), call(&server, "get", &p, None, bearer())));
    }
    assert!(answers.len() >= 28, "{}", answers.len());
    for (what, (status, body)) in &answers {
        assert!(*status < 500, "{what}: {status} {body}");
        // The documented exception: the loopback-only repositories routes exist to name
        // roots (serve_repositories.rs checks they do, and refuse other peers).
        if what.starts_with("get /api/v1/repositories") {
            continue;
        }
        for f in &forbidden {
            assert!(!body.contains(f.as_str()), "{what} answered {f}: {body}");
        }
    }
}
