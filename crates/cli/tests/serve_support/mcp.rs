//! Shared by the `/mcp` security tests: a `loci serve` with a projects base, a folder
//! outside every root (an indexed workspace and a plain folder, the server's working
//! directory among them), symlinks both ways across the base's edge, the hostile client
//! script (`tests/mcp/adversary.py`, the official MCP Python SDK) and the server's
//! threads, descriptors and memory read from `/proc`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub use super::agent;
pub use crate::common::{free_port, wait_until};
use crate::mcp_support::{CONTROLLED, indexed_workspace, listening_addr, loci};

pub const KEY: &str = "mcp-served-key-0123456789";
/// How the tests name the workspace inside the base.
pub const APP: &str = r#"{"kind":"mounted","segment":"team/app"}"#;

pub fn adversary_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/adversary.py")
}

/// The fixture: `base/team/app` (indexed), `base/team/link-out` → `outside/victim`,
/// `outside/victim` (indexed, a `victim_secret` definition), `outside/plain` (the
/// server's working directory, no index), `outside/link-in` → `base/team/app`.
pub struct Served {
    pub home: tempfile::TempDir,
    pub base: tempfile::TempDir,
    pub outside: tempfile::TempDir,
    pub scratch: tempfile::TempDir,
    pub child: Child,
    pub addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// The fixture and a server over it, with `vars` in its environment.
    pub fn start(vars: &[(&str, &str)]) -> Served {
        let (home, base, outside, scratch) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let app = base.path().join("team/app");
        std::fs::create_dir_all(&app).unwrap();
        indexed_workspace(home.path(), &app);
        let victim = outside.path().join("victim");
        std::fs::create_dir_all(victim.join("src")).unwrap();
        std::fs::write(
            victim.join("src/lib.rs"),
            "pub fn victim_secret() -> u32 { 7 }\n",
        )
        .unwrap();
        let out = loci(home.path())
            .args(["index", "--json"])
            .arg(&victim)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        std::fs::create_dir_all(outside.path().join("plain")).unwrap();
        std::os::unix::fs::symlink(&victim, base.path().join("team/link-out")).unwrap();
        std::os::unix::fs::symlink(&app, outside.path().join("link-in")).unwrap();
        let spawn_log = scratch.path().join("spawns.log");
        let exe = scratch.path().join("loci-logged");
        std::fs::write(
            &exe,
            format!(
                "#!/bin/sh\necho \"$@\" >> '{}'\nexec '{}' \"$@\"\n",
                spawn_log.display(),
                crate::mcp_support::bin().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut cmd = loci(home.path());
        cmd.args(["serve", "--port", "0", "--json"])
            .env("LOCI_API_KEY", KEY)
            .env("LOCI_PROJECTS_BASE", base.path())
            .env_remove("LOCI_MANAGED_ROOT")
            .env("LOCI_LIFECYCLE_EXECUTABLE", &exe)
            // Nothing listens there: the probe chain, if it ran, would start a server.
            .env("LOCI_API_PORT", free_port().to_string())
            .current_dir(outside.path().join("plain"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let addr = listening_addr(&mut child);
        Served {
            home,
            base,
            outside,
            scratch,
            child,
            addr,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server's supervisor ran, one line of arguments each.
    pub fn spawns(&self) -> Vec<String> {
        std::fs::read_to_string(self.scratch.path().join("spawns.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Every absolute path of the fixture that must never reach a client.
    pub fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in [
            self.home.path(),
            self.base.path(),
            self.outside.path(),
            self.scratch.path(),
        ] {
            out.push(p.to_string_lossy().into_owned());
            if let Ok(real) = std::fs::canonicalize(p) {
                out.push(real.to_string_lossy().into_owned());
            }
        }
        out
    }

    /// Runs the adversary script with `args`; its last stdout line as JSON.
    pub fn adversary(&self, args: &[&str], env: &[(&str, &str)]) -> Value {
        let out = self.adversary_cmd(args, env).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "adversary.py {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout.lines().last().unwrap_or(""))
            .unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }

    pub fn adversary_cmd(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new("python3");
        for var in CONTROLLED {
            cmd.env_remove(var);
        }
        cmd.arg(adversary_script())
            .arg(args[0])
            .arg(self.url())
            .arg(KEY)
            .args(&args[1..])
            .current_dir(self.scratch.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// `GET path` with the key, as JSON (panics on a non-200).
    pub fn get_json(&self, path: &str) -> Value {
        let (status, text) = self.get(path);
        assert_eq!(status, 200, "{path}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        let resp = agent()
            .get(&format!("http://{}{path}", self.addr))
            .header("Authorization", &format!("Bearer {KEY}"))
            .call()
            .unwrap();
        let status = resp.status().as_u16();
        (
            status,
            resp.into_body().read_to_string().unwrap_or_default(),
        )
    }

    /// The registry id of the workspace whose folder is `name`.
    pub fn workspace_id(&self, name: &str) -> i64 {
        let list = self.get_json("/api/v1/workspaces");
        list["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .and_then(|w| w["id"].as_i64())
            .unwrap_or_else(|| panic!("no workspace {name}: {list}"))
    }

    /// One raw `/mcp` POST: `(status, Mcp-Session-Id, body)`.
    pub fn post(&self, session: Option<&str>, headers: &[(&str, &str)], body: &str) -> Post {
        self.post_as(KEY, session, headers, body)
    }

    /// [`Served::post`] with API key `key`.
    pub fn post_as(
        &self,
        key: &str,
        session: Option<&str>,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Post {
        let mut req = agent()
            .post(&self.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", &format!("Bearer {key}"));
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(body).unwrap();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        Post {
            status: resp.status().as_u16(),
            session,
            body: resp.body_mut().read_to_string().unwrap_or_default(),
        }
    }

    /// `initialize` (raw), returning the session id.
    pub fn initialize(&self, headers: &[(&str, &str)]) -> Post {
        self.post(None, headers, INIT)
    }

    /// Threads, open descriptors and resident memory of the server now.
    pub fn stats(&self) -> Stats {
        Stats::of(self.pid())
    }
}

pub struct Post {
    pub status: u16,
    pub session: Option<String>,
    pub body: String,
}

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
pub const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

/// A process's footprint, from `/proc`.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub threads: usize,
    pub fds: usize,
    pub rss_kb: u64,
}

impl Stats {
    pub fn of(pid: u32) -> Stats {
        let count =
            |dir: &str| std::fs::read_dir(format!("/proc/{pid}/{dir}")).map_or(0, |d| d.count());
        let rss_kb = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        Stats {
            threads: count("task"),
            fds: count("fd"),
            rss_kb,
        }
    }
}

impl Served {
    /// A raw session: `initialize` with `headers`, then `notifications/initialized`.
    pub fn open_session(&self, headers: &[(&str, &str)]) -> String {
        let init = self.initialize(headers);
        assert_eq!(init.status, 200, "{}", init.body);
        let session = init.session.expect("an Mcp-Session-Id");
        let note = self.post(
            Some(&session),
            headers,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(note.status, 202, "{}", note.body);
        session
    }

    /// One JSON-RPC request in `session`; its answer (the message carrying `id`).
    pub fn rpc(&self, session: &str, id: u64, method: &str, params: Value) -> Value {
        self.rpc_as(KEY, session, id, method, params)
    }

    /// [`Served::rpc`] with API key `key`.
    pub fn rpc_as(&self, key: &str, session: &str, id: u64, method: &str, params: Value) -> Value {
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let post = self.post_as(key, Some(session), &[], &body.to_string());
        answer_of(&post.body, id)
            .unwrap_or_else(|| panic!("no answer to {method}: {} {}", post.status, post.body))
    }

    /// `tools/call NAME ARGS` in `session`: the result object.
    pub fn call_tool(&self, session: &str, name: &str, args: Value) -> Value {
        let answer = self.rpc(
            session,
            7,
            "tools/call",
            serde_json::json!({"name": name, "arguments": args}),
        );
        answer["result"].clone()
    }
}

/// The JSON-RPC message with `id` in a response body (SSE `data:` lines, or one JSON).
pub fn answer_of(body: &str, id: u64) -> Option<Value> {
    let mut messages: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect();
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        messages.push(v);
    }
    messages
        .into_iter()
        .find(|m| m["id"] == serde_json::json!(id))
}

/// The error kind of a tool result (`_meta.loci/error.kind`), if it is an error.
pub fn error_kind(result: &Value) -> Option<String> {
    (result["isError"] == true).then(|| {
        result["_meta"]["loci/error"]["kind"]
            .as_str()
            .unwrap_or("")
            .to_string()
    })
}
