//! LLM extraction over HTTP against the real `loci serve`: off by default (the
//! capability is not declared, `extract: "llm"` and `memory/enrich` are
//! `capability_missing` with nothing stored or started), on with `llm.allowSpawn`
//! (declared; a stand-in `claude` runs once per memory and its entities are attached;
//! a failing one leaves the memory marked `extraction: failed`).

use crate::common;
use crate::serve_support;

use std::path::Path;

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

/// A stand-in `claude` that counts its runs in `calls` beside itself and answers
/// good JSON, or fails when a `fail` file is there.
fn stand_in(dir: &Path) -> String {
    let script = format!(
        r#"#!/usr/bin/env python3
import json, os, sys
d = {d:?}
sys.stdin.read()
open(os.path.join(d, "calls"), "a").write("x")
if os.path.exists(os.path.join(d, "fail")):
    sys.exit(2)
text = json.dumps({{"entities": [{{"name": "Ledger", "type": "service"}}], "relationships": []}})
print(json.dumps({{"type": "result", "is_error": False, "result": text}}))
"#,
        d = dir.display().to_string()
    );
    let p = dir.join("claude");
    std::fs::write(&p, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

fn calls(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("calls"))
        .map(|s| s.len())
        .unwrap_or(0)
}

fn mem(server: &Server, id: i64, op: &str, body: Value) -> (u16, Value) {
    let path = format!("/api/v1/workspaces/{id}/memory/{op}");
    let (status, text) = call(server, "post", &path, Some(&body), bearer());
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
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
fn llm_extraction_over_http_is_refused_unless_the_server_allows_spawns() {
    let env: Env = indexed();
    let bin = tempfile::tempdir().unwrap();
    let claude = stand_in(bin.path());
    let server = start(
        &env,
        &[],
        &[("LOCI_LLM_ALLOW_SPAWN", "0"), ("LOCI_LLM_CLAUDE", &claude)],
    );
    let id = workspace_id(&server);
    assert!(!capabilities(&server).contains(&"memory.extract.llm".to_string()));

    let kind = ErrorKind::CapabilityMissing;
    let (status, v) = mem(
        &server,
        id,
        "remember",
        json!({"name": "ledger", "body": "Ledger writes to Billing.", "extract": "llm"}),
    );
    assert_eq!(status, kind.http_status(), "{v}");
    assert_eq!(v["error"]["kind"], kind.name(), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("llm.allowSpawn"),
        "{v}"
    );
    let (_, list) = mem(&server, id, "list", json!({}));
    assert_eq!(list["memories"], json!([]), "nothing stored: {list}");

    let (status, v) = mem(&server, id, "enrich", json!({"all": true}));
    assert_eq!(status, kind.http_status(), "{v}");
    assert_eq!(calls(bin.path()), 0, "the stand-in ran");
}

#[test]
fn an_allowed_server_declares_the_capability_and_enriches_over_http() {
    let env: Env = indexed();
    let bin = tempfile::tempdir().unwrap();
    let claude = stand_in(bin.path());
    let server = start(
        &env,
        &[],
        &[("LOCI_LLM_ALLOW_SPAWN", "1"), ("LOCI_LLM_CLAUDE", &claude)],
    );
    let id = workspace_id(&server);
    assert!(capabilities(&server).contains(&"memory.extract.llm".to_string()));

    let (status, v) = mem(
        &server,
        id,
        "remember",
        json!({"name": "ledger", "body": "Ledger writes to Billing.", "extract": "llm"}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["extraction"]["state"], "done", "{v}");
    assert_eq!(v["entities"], json!(["Ledger"]), "{v}");
    assert_eq!(calls(bin.path()), 1);

    // A failing tool: the memory is kept, marked failed, and the answer is the error.
    std::fs::write(bin.path().join("fail"), "").unwrap();
    let (status, v) = mem(
        &server,
        id,
        "remember",
        json!({"name": "second", "body": "Billing owns invoices.", "extract": "llm"}),
    );
    let kind = ErrorKind::ExtractionFailed;
    assert_eq!(status, kind.http_status(), "{v}");
    assert_eq!(v["error"]["detail"]["memory"]["stored"], true, "{v}");
    let (_, read) = mem(&server, id, "read", json!({"name": "second"}));
    assert_eq!(read["extraction"]["state"], "failed", "{read}");
    let (_, stats) = mem(&server, id, "stats", json!({}));
    assert_eq!(stats["extraction_failed"], 1, "{stats}");

    // enrich retries it once the tool works.
    std::fs::remove_file(bin.path().join("fail")).unwrap();
    let (status, v) = mem(&server, id, "enrich", json!({"all": true, "yes": true}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["done"], 1, "{v}");
    assert_eq!(v["results"][0]["name"], "second", "{v}");
    let (_, read) = mem(&server, id, "read", json!({"name": "second"}));
    assert_eq!(read["extraction"]["state"], "done", "{read}");
}
