//! Shared by the API probe tests (gate_api_probe.rs, serve_repositories.rs): real
//! `loci serve` processes on loopback ports of their own, workspaces indexed outside
//! their tree (no `.loci/` marker), and a stand-in `loci` (a `/bin/sh` wrapper,
//! `lifecycle.executable`) that records each server the gate starts — its pid,
//! `/proc/PID/cmdline` and `/proc/PID/environ` — before it `exec`s the real binary (or
//! `sleep`, for a server that never becomes healthy).

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::lifecycle_support::{Ws, alive, parse};
use serde_json::Value;

pub const KEY: &str = "probe-test-key-0123456789abcdef";

/// A running `loci serve` the test started, killed on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `loci serve --port 0 --json` with `home` as its LOCI_HOME and `key` (if any) as its
/// key; waits for its listening line.
pub fn serve(ws: &Ws, home: &Path, key: Option<&str>, extra: &[&str]) -> Server {
    let mut cmd = ws.cmd();
    cmd.args(["serve", "--port", "0", "--json"])
        .args(extra)
        .env("LOCI_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(k) = key {
        cmd.env("LOCI_API_KEY", k);
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
        .recv_timeout(Duration::from_secs(60))
        .expect("loci serve printed no listening line");
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    let addr = v["listening"].as_str().expect("listening").to_string();
    let port = addr.rsplit(':').next().unwrap().parse().unwrap();
    Server { child, port }
}

/// A plain listener that never answers: it holds its port and counts connections.
pub struct Recorder {
    pub listener: TcpListener,
    pub port: u16,
}

impl Recorder {
    pub fn new() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        Recorder { listener, port }
    }

    /// Connections made to it so far (they wait in the backlog until accepted here).
    pub fn connections(&self) -> usize {
        let mut n = 0;
        while self.listener.accept().is_ok() {
            n += 1;
        }
        n
    }
}

/// The workspace indexed with its index outside the tree (no `.loci/` marker), in
/// the registry of `home`.
pub fn unmarked(ws: &Ws, home: &Path) -> PathBuf {
    let index = ws.scratch_file("outside-index.db");
    let out = ws
        .cmd()
        .env("LOCI_HOME", home)
        .arg("index")
        .arg(ws.root())
        .arg("--index-path")
        .arg(&index)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!ws.root().join(".loci").exists());
    index
}

/// The stand-in `loci`: records each start (pid, cmdline, environ) in
/// `$SCRATCH/servers/PID.*`, then runs `then` (`exec "$LOCI" "$@"` for the real server).
pub fn recording_loci(ws: &Ws, then: &str) -> PathBuf {
    std::fs::create_dir_all(ws.scratch_file("servers")).unwrap();
    ws.script(
        "loci-recorded",
        &format!(
            "cat /proc/$$/cmdline > \"$SCRATCH/servers/$$.cmdline\"\n\
             cat /proc/$$/environ > \"$SCRATCH/servers/$$.environ\"\n\
             echo $$ >> \"$SCRATCH/servers/pids\"\n{then}"
        ),
    )
}

pub const REAL: &str = "exec \"$LOCI\" \"$@\"";
pub const NEVER_HEALTHY: &str = "exec sleep 600";

/// One started server as the stand-in recorded it.
pub struct Started {
    pub pid: i32,
    pub argv: Vec<String>,
    pub environ: Vec<String>,
}

impl Started {
    pub fn var(&self, name: &str) -> Option<&str> {
        self.environ
            .iter()
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
    }
    pub fn port(&self) -> u16 {
        let at = self.argv.iter().position(|a| a == "--port").unwrap();
        self.argv[at + 1].parse().unwrap()
    }
}

pub fn started(ws: &Ws) -> Vec<Started> {
    let pids = std::fs::read_to_string(ws.scratch_file("servers/pids")).unwrap_or_default();
    let split = |b: Vec<u8>| -> Vec<String> {
        b.split(|&c| c == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    };
    pids.lines()
        .map(|p| {
            let read = |ext: &str| std::fs::read(ws.scratch_file(&format!("servers/{p}.{ext}")));
            Started {
                pid: p.parse().unwrap(),
                argv: split(read("cmdline").unwrap()),
                environ: split(read("environ").unwrap()),
            }
        })
        .collect()
}

/// The settings every gate here runs with: the API probe on `port`, a generous
/// deadline (a loaded machine must not turn a scenario into the deadline's), a gate
/// budget long enough to answer with the finished check, no background sync.
pub fn gate_env(port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("LOCI_API_ENABLED", "1".into()),
        ("LOCI_API_PORT", port.to_string()),
        ("LOCI_API_PROBE_DEADLINE_MS", "30000".into()),
        ("LOCI_LIFECYCLE_GATE_BUDGET_MS", "60000".into()),
        ("LOCI_LIFECYCLE_SYNC_ON_START", "0".into()),
    ]
}

/// `loci gate ROOT --json` with these variables (later ones win); the answer and the
/// whole output.
pub fn gate(ws: &Ws, vars: &[(&str, String)]) -> (Value, Output) {
    let mut cmd = ws.cmd();
    cmd.arg("gate").arg(ws.root()).arg("--json");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the gate always exits 0: {out:?}"
    );
    (parse(&out), out)
}

pub fn with(
    mut vars: Vec<(&'static str, String)>,
    more: &[(&'static str, &str)],
) -> Vec<(&'static str, String)> {
    vars.extend(more.iter().map(|(k, v)| (*k, v.to_string())));
    vars
}

pub fn reason(v: &Value) -> &str {
    v["reason"].as_str().unwrap()
}

pub fn decided_by(v: &Value) -> &str {
    v["facts"]["decided_by"].as_str().unwrap_or("")
}

/// Every server the gate started is gone once it has returned.
pub fn assert_all_gone(ws: &Ws) {
    for s in started(ws) {
        assert!(
            !alive(s.pid),
            "the server the gate started (pid {}) outlived it",
            s.pid
        );
    }
}

/// A stand-in loci server (python3): healthy, its lookup fails with a storage error,
/// its repositories list is `list` (JSON); it records the Authorization headers it got.
pub fn list_only_server(ws: &Ws, list: &Value) -> (Child, u16) {
    let list_file = ws.scratch_file("list.json");
    std::fs::write(&list_file, list.to_string()).unwrap();
    let script = r#"
import http.server, json, sys
listing, seen = open(sys.argv[1], 'rb').read(), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def answer(self, status, body):
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        with open(seen, 'a') as f:
            f.write('%s %s\n' % (self.path.split('?')[0], self.headers.get('Authorization')))
        if self.path == '/health':
            self.answer(200, b'{"status": "ok", "version": "stand-in"}')
        elif self.path.startswith('/api/v1/repositories/lookup'):
            self.answer(500, b'{"error": {"code": 10, "kind": "storage", "message": "stand-in failure"}}')
        elif self.path == '/api/v1/repositories':
            self.answer(200, listing)
        else:
            self.answer(404, b'{}')
s = http.server.HTTPServer(('127.0.0.1', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
    let Some(python) = python3() else {
        panic!("python3 is needed for the stand-in server");
    };
    let mut child = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(&list_file)
        .arg(ws.scratch_file("seen.log"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().parse().unwrap())
}

pub fn python3() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("python3"))
            .find(|p| p.is_file())
    })
}

/// The key is in no argument of the spawned server and nowhere in the gate's output
/// (reason, notices, facts, errors, warnings).
pub fn assert_key_hidden(key: &str, server: &Started, out: &Output) {
    assert!(
        !server.argv.iter().any(|a| a.contains(key)),
        "the key is in the server's argv: {:?}",
        server.argv
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains(key),
        "the key is in the gate's output: {text}"
    );
}

pub fn http_get(port: u16, host: &str, path: &str, key: Option<&str>) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut req = agent.get(format!("http://{host}:{port}{path}"));
    if let Some(k) = key {
        req = req.header("X-API-Key", k);
    }
    let mut resp = req.call().unwrap();
    let status = resp.status().as_u16();
    (status, resp.body_mut().read_json().unwrap_or(Value::Null))
}
