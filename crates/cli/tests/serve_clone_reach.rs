//! Clone URLs never reach this machine's or its network's private addresses — not
//! even through a redirect — unless the operator allows them (`clone.allowAddresses`),
//! and a failed clone says nothing of which ports are open (issue #27, item 6). Real
//! git against real HTTP servers on loopback (python3's `http.server`).

use crate::common;
use crate::serve_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

// ---------------------------------------------------------------------------------
// Item 6: clone URLs that reach loopback, link-local, private or unspecified addresses.

/// A bare repository `app.git` (one commit, a README) under `dir`, ready for git's
/// dumb HTTP protocol.
fn served_repository(dir: &Path) {
    let src = dir.join("src");
    git(&["init", "--quiet", &text(&src)]);
    std::fs::write(src.join("README.md"), "cloned over http\n").unwrap();
    git(&["-C", &text(&src), "add", "README.md"]);
    git(&["-C", &text(&src), "commit", "--quiet", "-m", "first"]);
    let bare = dir.join("app.git");
    git(&["clone", "--quiet", "--bare", &text(&src), &text(&bare)]);
    git(&["-C", &text(&bare), "update-server-info"]);
}

/// A python3 HTTP server on `host`, its request log kept: a file server over `dir`,
/// or, with `redirect_to`, one that redirects every GET there (path and query kept).
struct Http {
    child: Child,
    port: u16,
    log: Arc<Mutex<String>>,
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Http {
    fn start(host: &str, dir: &Path, redirect_to: Option<&str>) -> Http {
        const SERVER: &str = r#"
import http.server, sys, functools
host, root, target = sys.argv[1], sys.argv[2], sys.argv[3]
class Redirect(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()
handler = Redirect if target else functools.partial(http.server.SimpleHTTPRequestHandler, directory=root)
server = http.server.ThreadingHTTPServer((host, 0), handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-c",
                SERVER,
                host,
                &text(dir),
                redirect_to.unwrap_or(""),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{e}: {line:?}"));
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        Http { child, port, log }
    }

    fn requests(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

/// A port nothing listens on (bound, then released).
fn closed_port(host: &str) -> u16 {
    std::net::TcpListener::bind((host, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn roots_vars(base: &Path) -> Vec<(String, String)> {
    vec![
        ("LOCI_PROJECTS_BASE".into(), text(base)),
        ("LOCI_CLONE_ALLOW_HTTP".into(), "1".into()),
        ("LOCI_CLONE_ALLOW_GIT".into(), "1".into()),
    ]
}

fn clone_into(server: &Server, segment: &str, url: &str) -> (u16, Value) {
    let mut body = mounted(segment);
    body["clone"] = json!(url);
    post(server, "/api/v1/workspaces", &body)
}

#[test]
fn clone_urls_that_reach_loopback_or_private_addresses_are_refused_unless_allowed() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let served = tempfile::tempdir().unwrap();
    served_repository(served.path());
    let repo = Http::start("127.0.0.1", served.path(), None);
    let port = repo.port;
    let server = serve_vars(&env, &roots_vars(base.path()));
    let refused = ErrorKind::InvalidCloneUrl;
    let closed = closed_port("127.0.0.1");
    let mut messages = Vec::new();
    for url in [
        format!("http://127.0.0.1:{port}/app.git"),
        format!("http://127.0.0.1:{closed}/app.git"),
        format!("http://localhost:{port}/app.git"),
        format!("http://127.1:{port}/app.git"),
        format!("http://2130706433:{port}/app.git"),
        format!("http://[::1]:{port}/app.git"),
        format!("http://[::ffff:127.0.0.1]:{port}/app.git"),
        format!("http://0.0.0.0:{port}/app.git"),
        format!("git://127.0.0.1:{port}/app.git"),
        "https://169.254.169.254/latest/meta-data".to_string(),
        "https://10.1.2.3/team/app.git".to_string(),
        "https://192.168.0.10/team/app.git".to_string(),
        "https://[fd00::1]/team/app.git".to_string(),
        "https://[fe80::1]/team/app.git".to_string(),
        "ssh://git@127.0.0.1/app.git".to_string(),
        "git@localhost:team/app.git".to_string(),
    ] {
        let (status, v) = clone_into(&server, "team/app", &url);
        assert_eq!(status, refused.http_status(), "{url}: {v}");
        assert_eq!(v["error"]["kind"], refused.name(), "{url}: {v}");
        assert_eq!(
            v["error"]["detail"]["reason"], "forbidden_address",
            "{url}: {v}"
        );
        assert!(
            v["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("clone.allowAddresses"),
            "{v}"
        );
        messages.push((url, v["error"]["message"].as_str().unwrap().to_string()));
    }
    // An open port and a closed one are refused alike: no port oracle.
    assert_eq!(messages[0].1, messages[1].1, "{messages:?}");
    assert!(!messages[0].1.contains(&port.to_string()), "{messages:?}");
    assert!(
        !base.path().join("team").exists(),
        "a refused clone made a folder"
    );
    assert_eq!(repo.requests(), "", "git reached the loopback server");
    drop(server);

    // The operator allows loopback: the same URL clones.
    let mut vars = roots_vars(base.path());
    vars.push(("LOCI_CLONE_ALLOW_ADDRESSES".into(), "loopback".into()));
    let server = serve_vars(&env, &vars);
    let (status, v) = clone_into(
        &server,
        "team/app",
        &format!("http://127.0.0.1:{port}/app.git"),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["action"], "cloned", "{v}");
    assert_eq!(
        std::fs::read_to_string(base.path().join("team/app/README.md")).unwrap(),
        "cloned over http\n"
    );
    assert!(
        repo.requests().contains("GET /app.git/info/refs"),
        "{}",
        repo.requests()
    );
    // Still never link-local or private: only what is allowed.
    let (status, v) = clone_into(&server, "team/meta", "https://169.254.169.254/x.git");
    assert_eq!(status, refused.http_status(), "{v}");
    assert_eq!(v["error"]["detail"]["reason"], "forbidden_address", "{v}");
}

/// Redirects are checked at every hop: an allowed host that redirects to a forbidden
/// one is refused and the forbidden one never sees a request; followed when allowed.
#[test]
fn a_redirect_to_a_forbidden_address_is_refused_at_the_hop() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let served = tempfile::tempdir().unwrap();
    served_repository(served.path());
    let repo = Http::start("127.0.0.1", served.path(), None);
    let target = format!("http://127.0.0.1:{}", repo.port);
    let hop = Http::start("127.0.0.2", served.path(), Some(&target));
    let url = format!("http://127.0.0.2:{}/app.git", hop.port);

    // Only 127.0.0.2 is allowed: the redirect to 127.0.0.1 is refused.
    let mut vars = roots_vars(base.path());
    vars.push(("LOCI_CLONE_ALLOW_ADDRESSES".into(), "127.0.0.2/32".into()));
    let server = serve_vars(&env, &vars);
    let (status, v) = clone_into(&server, "team/app", &url);
    assert_eq!(status, ErrorKind::InvalidCloneUrl.http_status(), "{v}");
    assert_eq!(v["error"]["detail"]["reason"], "forbidden_address", "{v}");
    assert!(
        hop.requests().contains("GET /app.git/info/refs"),
        "{}",
        hop.requests()
    );
    assert_eq!(
        repo.requests(),
        "",
        "the redirect reached the forbidden host"
    );
    assert!(
        !base.path().join("team/app/.git").exists(),
        "a refused clone left a repository"
    );
    // Errors of an allowed address say nothing of its ports: a closed port and an open
    // one that is no repository fail alike.
    let closed = closed_port("127.0.0.2");
    let (s1, closed_v) = clone_into(
        &server,
        "team/closed",
        &format!("http://127.0.0.2:{closed}/app.git"),
    );
    let nothing = tempfile::tempdir().unwrap();
    let empty = Http::start("127.0.0.2", nothing.path(), None);
    let (s2, open_v) = clone_into(
        &server,
        "team/open",
        &format!("http://127.0.0.2:{}/app.git", empty.port),
    );
    assert_eq!(s1, s2, "{closed_v} / {open_v}");
    assert_eq!(
        closed_v["error"]["message"]
            .as_str()
            .unwrap()
            .replace("team/closed", "X"),
        open_v["error"]["message"]
            .as_str()
            .unwrap()
            .replace("team/open", "X"),
        "the failures differ by port state"
    );
    drop(server);

    // Loopback allowed: the redirect is followed to the repository.
    let mut vars = roots_vars(base.path());
    vars.push(("LOCI_CLONE_ALLOW_ADDRESSES".into(), "loopback".into()));
    let server = serve_vars(&env, &vars);
    let (status, v) = clone_into(&server, "team/app", &url);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["action"], "cloned", "{v}");
    assert!(base.path().join("team/app/README.md").is_file());
}
