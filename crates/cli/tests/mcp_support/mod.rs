//! Shared by the `loci mcp` tests: the official MCP Python SDK client script
//! (`tests/mcp/client.py`), the MCP Inspector CLI, and a plain JSON-RPC-over-stdio
//! driver for the session and teardown scenarios.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Variables the tests control; removed from the inherited environment.
pub const CONTROLLED: &[&str] = &[
    "LOCI_SESSION_ID",
    "LOCI_AUTO_WATCH",
    "LOCI_LOG",
    "LOCI_LIFECYCLE_AUTO_CREATE",
    "LOCI_LIFECYCLE_SYNC_ON_START",
    "LOCI_LIFECYCLE_LIVENESS_CACHE_MS",
    "LOCI_LIFECYCLE_GATE_BUDGET_MS",
    "LOCI_LIFECYCLE_EXECUTABLE",
    "LOCI_INDEX_PROBE_TIMEOUT_MS",
    "LOCI_INDEX_MAINTENANCE_TIMEOUT_MS",
    "LOCI_API_KEY",
];

/// The address a `loci serve --json` child prints on its first stdout line
/// (`{"listening": "127.0.0.1:PORT"}`), waited for at most 30 s.
pub fn listening_addr(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("stdout piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("loci serve printed no listening line");
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    v["listening"].as_str().expect("listening").to_string()
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loci"))
}

pub fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

/// Whether the official MCP Python SDK (and jsonschema) can be imported. Under CI
/// (`.ci/run` installs them) a missing SDK fails the test; else the test is skipped
/// with the reason printed.
pub fn python_sdk_ready() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import mcp, jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the MCP Python SDK is not installed (pip install mcp jsonschema) and CI is set"
        );
        eprintln!("skipped: the MCP Python SDK is not installed (pip install mcp jsonschema)");
    }
    ok
}

/// Where `.ci/run` installs the npm tools (the MCP Inspector).
pub fn node_tools() -> PathBuf {
    std::env::var_os("LOCI_NODE_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/loci-ci/node")
        })
}

/// A `loci` command with a private LOCI_HOME and config dir.
pub fn loci(home: &Path) -> Command {
    let mut cmd = Command::new(bin());
    for var in CONTROLLED {
        cmd.env_remove(var);
    }
    cmd.env("LOCI_HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .env("LOCI_LIFECYCLE_GATE_BUDGET_MS", "10000");
    cmd
}

/// Runs the client script with `args` under `home`; returns its JSON summary, or
/// panics with its output.
pub fn run_client(home: &Path, cwd: &Path, args: &[&str]) -> Value {
    let mut cmd = Command::new("python3");
    for var in CONTROLLED {
        cmd.env_remove(var);
    }
    let out = cmd
        .arg(client_script())
        .args(args)
        .env("LOCI_HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .env("LOCI_LIFECYCLE_GATE_BUDGET_MS", "10000")
        .current_dir(cwd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client.py {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The test workspace: a small Rust crate, indexed.
pub fn indexed_workspace(home: &Path, dir: &Path) {
    for (rel, text) in [
        (
            "src/lib.rs",
            "pub fn parse_config() -> u32 { helper() }\nfn helper() -> u32 { 1 }\npub struct Settings { pub depth: u32 }\nimpl Settings { pub fn load() -> u32 { parse_config() } }\n",
        ),
        (
            "src/main.rs",
            "fn main() { let _ = lib::parse_config(); }\n",
        ),
    ] {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = loci(home)
        .args(["index", "--json"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// Polls `f` until it returns Some, for at most `limit`.
pub fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn alive(pid: i32) -> bool {
    // A zombie whose every thread has exited is gone for our purposes: it holds no file
    // and runs no code. (A leader can be a zombie while its other threads still run.)
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let zombie = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
    !(zombie && threads <= 1)
}

/// `loci mcp` driven over stdio with plain JSON-RPC lines.
pub struct Stdio_ {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Stdio_ {
    /// Starts `cmd` (a `loci mcp` command) with piped stdio.
    pub fn start(mut cmd: Command) -> Stdio_ {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        Stdio_ {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 1,
        }
    }

    pub fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits (at most 30 s) for its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let msg = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within 30 s"));
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    /// `initialize` then `notifications/initialized`.
    pub fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "loci-tests", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// `tools/call NAME ARGS`; returns the result object.
    pub fn call(&mut self, name: &str, args: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": args}));
        answer["result"].clone()
    }

    /// The next message from the server within `wait`, if any.
    pub fn try_next(&mut self, wait: Duration) -> Option<Value> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Closes stdin (the client went away).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }
}
