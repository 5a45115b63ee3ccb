//! The MCP `remember` tool's `extract` argument over `loci mcp` (stdio): refused with
//! `capability_missing` and nothing stored unless the host's `llm.allowSpawn` is on;
//! with it on, a stand-in `claude` extracts the entities.

use crate::mcp_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use mcp_support::*;
use serde_json::json;

fn stand_in(dir: &Path) -> String {
    let text = r#"#!/usr/bin/env python3
import json, sys
sys.stdin.read()
answer = json.dumps({"entities": [{"name": "Ledger", "type": "service"}], "relationships": []})
print(json.dumps({"type": "result", "is_error": False, "result": answer}))
"#;
    let p = dir.join("claude");
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

fn mcp(home: &Path, ws: &Path, allow: &str, claude: &str) -> Command {
    let mut cmd = loci(home);
    cmd.arg("mcp")
        .arg("--workspace")
        .arg(ws)
        .env("LOCI_LLM_ALLOW_SPAWN", allow)
        .env("LOCI_LLM_CLAUDE", claude);
    cmd
}

#[test]
fn mcp_remember_extracts_only_when_the_host_allows_llm_spawns() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    indexed_workspace(home.path(), ws.path());
    let claude = stand_in(home.path());

    let mut s = Stdio_::start(mcp(home.path(), ws.path(), "0", &claude));
    s.initialize();
    let refused = s.call(
        "remember",
        json!({"name": "ledger", "body": "Ledger writes to Billing.", "extract": "llm"}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["_meta"]["loci/error"]["kind"], "capability_missing",
        "{refused}"
    );
    let read = s.call("memory", json!({"action": "read", "name": "ledger"}));
    assert_eq!(read["_meta"]["loci/error"]["kind"], "not_found", "{read}");
    drop(s);

    let mut s = Stdio_::start(mcp(home.path(), ws.path(), "1", &claude));
    s.initialize();
    let made = s.call(
        "remember",
        json!({"name": "ledger", "body": "Ledger writes to Billing.", "extract": "llm"}),
    );
    assert_ne!(made["isError"], true, "{made}");
    let memory = &made["structuredContent"]["memory"];
    assert_eq!(memory["extraction"]["state"], "done", "{made}");
    assert_eq!(memory["entities"], json!(["Ledger"]), "{made}");
}
