//! The user-level memory store beyond the CLI: over HTTP at `POST /api/v1/memory/{op}`
//! (no workspace id) and over MCP with `scope: "user"` — the same store `loci ... --user`
//! uses, separate from each workspace's, with no absolute path in any answer; and a
//! memory merge over both.

use crate::common;
use crate::mcp_support;
use crate::serve_support;

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    let (status, text) = call(server, "post", path, Some(&body), bearer());
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"));
    (status, v)
}

fn user(server: &Server, op: &str, body: Value) -> Value {
    let (status, v) = post(server, &format!("/api/v1/memory/{op}"), body);
    assert_eq!(status, 200, "user {op}: {v}");
    v
}

fn hit_names(v: &Value) -> Vec<String> {
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_string())
        .collect()
}

/// No string in `v` is an absolute path or names the workspace or LOCI_HOME.
fn assert_no_absolute_path(env: &Env, what: &str, v: &Value) {
    let root = env.root().to_string_lossy().into_owned();
    let home = env.home.path().to_string_lossy().into_owned();
    match v {
        Value::String(s) => assert!(
            !s.starts_with('/') && !s.contains(&root) && !s.contains(&home),
            "{what}: an absolute path crossed the network: {s}"
        ),
        Value::Array(items) => items
            .iter()
            .for_each(|i| assert_no_absolute_path(env, what, i)),
        Value::Object(map) => map
            .values()
            .for_each(|i| assert_no_absolute_path(env, what, i)),
        _ => {}
    }
}

#[test]
fn the_user_store_is_served_over_http_without_a_workspace_id() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let mut answers = Vec::new();

    let stored = user(
        &server,
        "remember",
        json!({"name": "indent", "body": "Tabs for indentation in every project.", "type": "user"}),
    );
    assert_eq!(stored["name"], "indent");
    answers.push(("remember", stored));
    // The same store the CLI's --user reaches, and not the workspace's.
    let (code, cli) = env.json(&["recall", "--user", "indentation"]);
    assert_eq!(code, 0, "{cli}");
    assert_eq!(hit_names(&cli), ["indent"]);
    let (status, ws) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/memory/recall"),
        json!({"query": "indentation"}),
    );
    assert_eq!(status, 200, "{ws}");
    assert!(
        hit_names(&ws).is_empty(),
        "the workspace store is separate: {ws}"
    );

    let recalled = user(&server, "recall", json!({"query": "indentation tabs"}));
    assert_eq!(hit_names(&recalled), ["indent"]);
    answers.push(("recall", recalled));
    user(
        &server,
        "remember",
        json!({"name": "width", "body": "Lines wrap at one hundred columns."}),
    );
    let merged = user(&server, "merge", json!({"from": "width", "into": "indent"}));
    assert_eq!(merged["merged_into"], "indent", "{merged}");
    assert_eq!(
        hit_names(&user(&server, "recall", json!({"query": "columns wrap"}))),
        ["indent"]
    );
    answers.push(("merge", merged));
    for op in ["read", "history"] {
        answers.push((op, user(&server, op, json!({"name": "indent"}))));
    }
    for op in ["list", "stats", "entities", "graph"] {
        answers.push((op, user(&server, op, json!({}))));
    }
    assert!(answers.last().unwrap().1["text"].is_string());
    let stats = &answers[answers.len() - 3].1;
    assert_eq!(stats["memories"], 1, "{stats}");
    assert!(stats.get("path").is_none(), "{stats}");

    // Errors name the memory, never where the store lives.
    let (status, missing) = post(&server, "/api/v1/memory/read", json!({"name": "nope"}));
    assert_eq!(status, ErrorKind::NotFound.http_status(), "{missing}");
    answers.push(("missing", missing));
    let (status, purge) = post(
        &server,
        "/api/v1/memory/purge",
        json!({"name": "indent", "consent": false}),
    );
    assert_eq!(status, ErrorKind::ConsentRequired.http_status(), "{purge}");
    answers.push(("purge", purge));
    for (what, v) in &answers {
        assert_no_absolute_path(&env, what, v);
    }

    // Declared in the OpenAPI document, one user route per workspace memory route.
    let doc = get_json(&server, "/api/v1/openapi.json");
    let paths = doc["paths"].as_object().unwrap();
    let workspace_ops: Vec<&String> = paths
        .keys()
        .filter(|p| p.starts_with("/api/v1/workspaces/{id}/memory/"))
        .collect();
    assert!(workspace_ops.len() >= 19, "{workspace_ops:?}");
    for p in workspace_ops {
        let user_path = p.replace("/workspaces/{id}/memory/", "/memory/");
        let op = &doc["paths"][&user_path]["post"];
        assert!(op["requestBody"].is_object(), "{user_path} is not declared");
        assert!(op.get("parameters").is_none(), "{user_path} takes no id");
        assert_eq!(
            op["requestBody"], doc["paths"][p]["post"]["requestBody"],
            "{user_path}"
        );
    }
}

#[test]
fn a_merge_over_http_folds_one_workspace_memory_into_another() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let m = |op: &str| format!("/api/v1/workspaces/{id}/memory/{op}");
    for (name, body) in [
        ("a", "`parse_config` reads the settings file."),
        ("b", "Settings live in one file per workspace."),
    ] {
        let (status, v) = post(&server, &m("remember"), json!({"name": name, "body": body}));
        assert_eq!(status, 200, "{v}");
    }
    let (status, merged) = post(&server, &m("merge"), json!({"from": "a", "into": "b"}));
    assert_eq!(status, 200, "{merged}");
    assert_eq!(
        merged["into"]["checked_links"][0]["key"]["qualified_name"], "parse_config",
        "{merged}"
    );
    assert_no_absolute_path(&env, "merge", &merged);
    let (_, hits) = post(&server, &m("recall"), json!({"query": "reads"}));
    assert_eq!(hit_names(&hits), ["b"], "{hits}");
    // Into itself: refused, nothing changed.
    let (status, refused) = post(&server, &m("merge"), json!({"from": "b", "into": "b"}));
    assert_eq!(status, ErrorKind::InvalidInput.http_status(), "{refused}");
    let (_, history) = post(&server, &m("history"), json!({"name": "b"}));
    assert_eq!(
        history["versions"].as_array().unwrap().len(),
        2,
        "{history}"
    );
}

#[test]
fn mcp_memory_tools_reach_the_user_store_with_scope_user() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    mcp_support::indexed_workspace(home.path(), dir.path());
    let mut cmd = mcp_support::loci(home.path());
    cmd.arg("mcp").current_dir(dir.path());
    let mut mcp = mcp_support::Stdio_::start(cmd);
    mcp.initialize();

    let stored = mcp.call(
        "remember",
        json!({"name": "editor", "body": "Prefers a dark theme everywhere.", "scope": "user"}),
    );
    assert_ne!(stored["isError"], true, "{stored}");
    let ws = mcp.call(
        "remember",
        json!({"name": "editor-ws", "body": "This workspace uses a dark theme too."}),
    );
    assert_ne!(ws["isError"], true, "{ws}");

    let recall = |mcp: &mut mcp_support::Stdio_, scope: Option<&str>| -> Vec<String> {
        let mut args = json!({"query": "dark theme"});
        if let Some(s) = scope {
            args["scope"] = json!(s);
        }
        let r = mcp.call("recall", args);
        assert_ne!(r["isError"], true, "{r}");
        hit_names(&r["structuredContent"])
    };
    assert_eq!(recall(&mut mcp, Some("user")), ["editor"]);
    assert_eq!(recall(&mut mcp, Some("workspace")), ["editor-ws"]);
    assert_eq!(
        recall(&mut mcp, None),
        ["editor-ws"],
        "workspace by default"
    );

    let stats = mcp.call("memory", json!({"action": "stats", "scope": "user"}));
    assert_eq!(
        stats["structuredContent"]["stats"]["memories"], 1,
        "{stats}"
    );
    // The CLI sees the same user store.
    let out = mcp_support::loci(home.path())
        .args(["memory", "read", "--user", "editor", "--json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // Merge as a `memory` action, then a scope that is neither: a named error.
    mcp.call(
        "remember",
        json!({"name": "font", "body": "Monospace fonts at size fourteen.", "scope": "user"}),
    );
    let merged = mcp.call(
        "memory",
        json!({"action": "merge", "name": "font", "into": "editor", "scope": "user"}),
    );
    assert_ne!(merged["isError"], true, "{merged}");
    assert_eq!(
        merged["structuredContent"]["memory"]["from"]["name"], "font",
        "{merged}"
    );
    let read = mcp.call(
        "memory",
        json!({"action": "read", "name": "editor", "scope": "user"}),
    );
    let body = read["structuredContent"]["memory"]["body"]
        .as_str()
        .unwrap();
    assert!(body.contains("Monospace"), "{read}");
    let bad = mcp.call("recall", json!({"query": "x", "scope": "team"}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(bad["_meta"]["loci/error"]["kind"], "invalid_input", "{bad}");
    let text = bad["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("team"), "{bad}");
}
