//! `loci mcp` with real clients: the official MCP Python SDK over stdio and over
//! streamable HTTP against `loci serve`, and the MCP Inspector CLI. The client script
//! (`tests/mcp/client.py`) lists the tools, calls each, validates the structured output
//! against the tool's output schema, walks cursors, holds budgets and checks errors.

use crate::mcp_support;

use std::process::Stdio;
use std::time::Duration;

use mcp_support::*;
use serde_json::Value;

const KEY: &str = "mcp-test-key-0123456789";

struct Serve(std::process::Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `loci serve` on a free loopback port from `cwd`, with `base` as its projects base
/// (`/mcp` binds sessions only inside it); returns it and its address.
fn serve(home: &std::path::Path, cwd: &std::path::Path, base: &std::path::Path) -> (Serve, String) {
    let mut child = loci(home)
        .args(["serve", "--port", "0", "--json"])
        .env("LOCI_API_KEY", KEY)
        .env("LOCI_PROJECTS_BASE", base)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = listening_addr(&mut child);
    (Serve(child), addr)
}

#[test]
fn python_sdk_over_stdio_lists_calls_validates_pages_and_gets_tool_errors() {
    if !python_sdk_ready() {
        return;
    }
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), dir.path());
    let bin = bin();
    let out = run_client(
        home.path(),
        dir.path(),
        &[
            "contract",
            "stdio",
            bin.to_str().unwrap(),
            dir.path().to_str().unwrap(),
        ],
    );
    assert!(
        out["tools_list_bytes"].as_u64().unwrap() <= 15_123 + 1_560 + 213,
        "{out}"
    );
    assert!(out["pages"].as_u64().unwrap() >= 3, "{out}");
}

#[test]
fn python_sdk_over_streamable_http_on_loci_serve_gets_the_same_contract() {
    if !python_sdk_ready() {
        return;
    }
    let (home, base) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dir = base.path().join("team/app");
    std::fs::create_dir_all(&dir).unwrap();
    indexed_workspace(home.path(), &dir);
    // No roots from this client: the session names its workspace by locator.
    let (_server, addr) = serve(home.path(), &dir, base.path());
    let url = format!("http://{addr}/mcp");
    let locator = r#"{"kind":"mounted","segment":"team/app"}"#;
    run_client(home.path(), &dir, &["contract", "http", &url, KEY, locator]);
}

#[test]
fn each_http_session_is_bound_to_its_own_clients_root() {
    if !python_sdk_ready() {
        return;
    }
    let (home, base, elsewhere) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (a, b) = (base.path().join("a"), base.path().join("b"));
    for dir in [&a, &b] {
        std::fs::create_dir_all(dir).unwrap();
        indexed_workspace(home.path(), dir);
    }
    let (_server, addr) = serve(home.path(), elsewhere.path(), base.path());
    let url = format!("http://{addr}/mcp");
    let (ra, rb) = (
        std::fs::canonicalize(&a).unwrap(),
        std::fs::canonicalize(&b).unwrap(),
    );
    // Over HTTP a workspace is named by its folder name, never its absolute path.
    let name = |p: &std::path::Path| p.file_name().unwrap().to_str().unwrap().to_string();
    let out = run_client(
        home.path(),
        elsewhere.path(),
        &[
            "sessions",
            &url,
            KEY,
            ra.to_str().unwrap(),
            rb.to_str().unwrap(),
        ],
    );
    assert_eq!(out["a"]["workspace"], name(&ra), "{out}");
    assert_eq!(out["b"]["workspace"], name(&rb), "{out}");
}

#[test]
fn session_working_directory_is_the_source_of_truth() {
    if !python_sdk_ready() {
        return;
    }
    // The client's root decides, not the process's working directory (`/`).
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), dir.path());
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let bin = bin();
    let out = run_client(
        home.path(),
        dir.path(),
        &["roots", bin.to_str().unwrap(), root.to_str().unwrap()],
    );
    assert_eq!(out["workspace"], root.to_str().unwrap(), "{out}");
}

#[test]
fn budgets_hold_on_a_huge_answer_from_the_python_standard_library() {
    if !python_sdk_ready() {
        return;
    }
    let stdlib = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .unwrap();
    let stdlib = std::path::PathBuf::from(String::from_utf8(stdlib.stdout).unwrap().trim());
    // A copy of its top-level modules (nothing is written into the real one).
    let (home, copy) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for entry in std::fs::read_dir(&stdlib).unwrap().flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "py") && p.is_file() {
            std::fs::copy(&p, copy.path().join(entry.file_name())).unwrap();
        }
    }
    let out = loci(home.path())
        .args(["index", "--json"])
        .arg(copy.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let bin = bin();
    let out = run_client(
        home.path(),
        copy.path(),
        &["huge", bin.to_str().unwrap(), copy.path().to_str().unwrap()],
    );
    assert!(
        out["total"].as_u64().unwrap() > out["shown"].as_u64().unwrap(),
        "{out}"
    );
}

#[test]
fn mcp_inspector_cli_lists_and_calls_the_tools() {
    let inspector = node_tools().join("node_modules/.bin/mcp-inspector");
    if !inspector.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the MCP Inspector is not installed in {} and CI is set",
            node_tools().display()
        );
        eprintln!(
            "skipped: the MCP Inspector is not installed ({})",
            inspector.display()
        );
        return;
    }
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), dir.path());
    let run = |args: &[&str]| -> Value {
        let mut cmd = std::process::Command::new(&inspector);
        for var in CONTROLLED {
            cmd.env_remove(var);
        }
        let out = cmd
            .arg("--cli")
            .arg(bin())
            .args(["mcp", "--workspace"])
            .arg(dir.path())
            .args(args)
            .env("LOCI_HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("xdg"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    let listed = run(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "status",
            "find",
            "symbol",
            "relations",
            "search",
            "changes",
            "query",
            "remember",
            "recall",
            "memory"
        ]
    );
    let found = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "find",
        "--tool-arg",
        "pattern=parse_config",
        "--tool-arg",
        "limit=5",
    ]);
    assert_eq!(
        found["structuredContent"]["symbols"][0]["name"], "parse_config",
        "{found}"
    );
    let callers = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "relations",
        "--tool-arg",
        "target=helper",
        "--tool-arg",
        "direction=callers",
    ]);
    assert_eq!(
        callers["structuredContent"]["relations"][0]["symbol"], "parse_config",
        "{callers}"
    );
    let missing = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "symbol",
        "--tool-arg",
        "symbol=no_such_thing",
    ]);
    assert_eq!(missing["isError"], true, "{missing}");
    assert_eq!(
        missing["_meta"]["loci/error"]["kind"], "not_found",
        "{missing}"
    );
}

/// The host entries the README gives (Claude Code's `.mcp.json`, Codex's
/// `config.toml`), with `loci` resolved to the binary under test.
fn readme_entries() -> Vec<(String, Vec<String>)> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let block = |lang: &str, marker: &str| -> String {
        readme
            .split(&format!("```{lang}\n"))
            .skip(1)
            .filter_map(|b| b.split("```").next())
            .find(|b| b.contains(marker))
            .unwrap_or_else(|| panic!("README has no {lang} block with {marker}"))
            .to_string()
    };
    let json: Value = serde_json::from_str(&block("json", "mcpServers")).unwrap();
    let claude = &json["mcpServers"]["loci"];
    let claude_args = claude["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let toml = block("toml", "[mcp_servers.loci]");
    let value_of = |key: &str| -> String {
        toml.lines()
            .find_map(|l| l.strip_prefix(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} in {toml}"))
            .to_string()
    };
    let codex_command: String = serde_json::from_str(&value_of("command")).unwrap();
    let codex_args: Vec<String> = serde_json::from_str(&value_of("args")).unwrap();
    vec![
        (claude["command"].as_str().unwrap().to_string(), claude_args),
        (codex_command, codex_args),
    ]
}

#[test]
fn readme_host_entries_start_a_working_server() {
    if !python_sdk_ready() {
        return;
    }
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), dir.path());
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for (command, args) in readme_entries() {
        assert_eq!(command, "loci", "the entry runs something else: {command}");
        // The host starts the command in the project directory.
        let spec = serde_json::json!({"command": bin(), "args": args, "cwd": root});
        let out = run_client(home.path(), dir.path(), &["launch", &spec.to_string()]);
        assert_eq!(out["workspace"], root.to_str().unwrap(), "{args:?}: {out}");
    }
}

#[test]
fn a_roots_change_rebinds_the_session() {
    if !python_sdk_ready() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), a.path());
    indexed_workspace(home.path(), b.path());
    let (ra, rb) = (
        std::fs::canonicalize(a.path()).unwrap(),
        std::fs::canonicalize(b.path()).unwrap(),
    );
    let bin = bin();
    let out = run_client(
        home.path(),
        a.path(),
        &[
            "roots_change",
            bin.to_str().unwrap(),
            ra.to_str().unwrap(),
            rb.to_str().unwrap(),
        ],
    );
    assert_eq!(out["first"], ra.to_str().unwrap(), "{out}");
}

#[test]
fn mcp_over_http_needs_the_key_and_a_loopback_host_and_origin() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    indexed_workspace(home.path(), dir.path());
    let (_server, addr) = serve(home.path(), dir.path(), dir.path());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let post = |headers: &[(&str, &str)]| {
        let mut req = agent
            .post(&format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(init).unwrap();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        (
            resp.status().as_u16(),
            session,
            resp.body_mut().read_to_string().unwrap_or_default(),
        )
    };
    let bearer = format!("Bearer {KEY}");
    let (status, _, body) = post(&[]);
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("unauthorized"), "{body}");
    let (status, _, body) = post(&[("authorization", "Bearer wrong-key")]);
    assert_eq!(status, 401, "{body}");
    let (status, _, body) = post(&[
        ("authorization", &bearer),
        ("origin", "http://evil.example"),
    ]);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("forbidden_host"), "{body}");
    let (status, session, body) = post(&[
        ("authorization", &bearer),
        ("origin", "http://localhost:3000"),
    ]);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"serverInfo\""), "{body}");
    let first = session.expect("no Mcp-Session-Id");
    let (_, second, _) = post(&[("x-api-key", KEY)]);
    assert_ne!(Some(first), second, "two initializes share a session id");
}
