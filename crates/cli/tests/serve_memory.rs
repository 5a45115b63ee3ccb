//! The memory over HTTP (`POST /api/v1/workspaces/{id}/memory/{op}`) against the real
//! `loci serve`: a round trip through every mutation and its versions, purge only with
//! consent, bad bodies refused with their named kind and nothing stored, staleness seen
//! over HTTP once a linked function changes and the workspace is re-indexed, and no
//! absolute path in any answer.

use crate::common;
use crate::serve_support;

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

/// A body limit above the memory's own 512 KiB, so the memory's check is what answers.
const BIG_LIMIT: &str = "4194304";

fn serve(env: &Env) -> (Server, i64) {
    let server = start(env, &[], &[("LOCI_API_MAX_BODY_BYTES", BIG_LIMIT)]);
    let id = workspace_id(&server);
    (server, id)
}

/// `(status, answer)` of `POST .../memory/{op}`.
fn mem(server: &Server, id: i64, op: &str, body: Value) -> (u16, Value) {
    let path = format!("/api/v1/workspaces/{id}/memory/{op}");
    let (status, text) = call(server, "post", &path, Some(&body), bearer());
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{op}: {e}: {text}"));
    (status, v)
}

fn ok(server: &Server, id: i64, op: &str, body: Value) -> Value {
    let (status, v) = mem(server, id, op, body);
    assert_eq!(status, 200, "{op}: {v}");
    v
}

fn refused(server: &Server, id: i64, op: &str, body: Value, kind: ErrorKind) {
    let (status, v) = mem(server, id, op, body);
    assert_eq!(status, kind.http_status(), "{op}: {v}");
    assert_eq!(v["error"]["kind"], kind.name(), "{op}: {v}");
}

fn names(server: &Server, id: i64) -> Vec<String> {
    let listed = ok(server, id, "list", json!({"forgotten": true}));
    listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect()
}

/// No string anywhere in `v` is an absolute path or contains the workspace's root.
fn assert_no_absolute_path(env: &Env, what: &str, v: &Value) {
    let root = env.root().to_string_lossy().into_owned();
    let home = env.home.path().to_string_lossy().into_owned();
    match v {
        Value::String(s) => {
            assert!(
                !s.starts_with('/') && !s.contains(&root) && !s.contains(&home),
                "{what}: an absolute path crossed the network: {s}"
            );
        }
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
fn a_memory_round_trips_over_http_and_purge_needs_consent() {
    let env = indexed();
    let (server, id) = serve(&env);

    let made = ok(
        &server,
        id,
        "remember",
        json!({
            "name": "config",
            "type": "decision",
            "body": "We keep `parse_config` pure: it reads the settings once.",
            "entities": [{"name": "settings", "type": "concept"}],
        }),
    );
    assert_eq!(made["name"], "config");
    assert_eq!(
        made["checked_links"][0]["key"]["path"], "src/lib.rs",
        "{made}"
    );
    assert_eq!(
        made["checked_links"][0]["key"]["qualified_name"],
        "parse_config"
    );
    assert_no_absolute_path(&env, "remember", &made);

    let hits = ok(&server, id, "recall", json!({"query": "settings once"}));
    assert_eq!(hits["hits"][0]["name"], "config", "{hits}");
    assert_no_absolute_path(&env, "recall", &hits);
    let by_symbol = ok(&server, id, "recall", json!({"symbol": "parse_config"}));
    assert_eq!(by_symbol["hits"][0]["name"], "config", "{by_symbol}");

    let read = ok(&server, id, "read", json!({"name": "config"}));
    assert!(read["body"].as_str().unwrap().contains("pure"), "{read}");
    assert_eq!(read["stale"], false);

    let edited = ok(
        &server,
        id,
        "edit",
        json!({"name": "config", "body": "`parse_config` caches nothing."}),
    );
    assert!(edited["body"].as_str().unwrap().contains("caches nothing"));
    let history = ok(&server, id, "history", json!({"name": "config"}));
    let versions = history["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{history}");

    let restored = ok(
        &server,
        id,
        "restore",
        json!({"name": "config", "version": versions[0]["version"]}),
    );
    assert!(
        restored["body"].as_str().unwrap().contains("pure"),
        "{restored}"
    );

    let linked = ok(
        &server,
        id,
        "link",
        json!({"name": "config", "code": ["Settings"], "entities": [{"name": "cache", "type": "concept"}],
               "relationships": [{"source": "settings", "target": "cache", "relation": "avoids"}]}),
    );
    assert!(
        linked["checked_links"].as_array().unwrap().len() >= 2,
        "{linked}"
    );
    let entities = ok(&server, id, "entities", json!({}));
    assert!(
        entities["entities"].to_string().contains("cache"),
        "{entities}"
    );
    let graph = ok(&server, id, "graph", json!({"format": "mermaid"}));
    assert!(
        graph["text"].as_str().unwrap().contains("avoids"),
        "{graph}"
    );
    ok(
        &server,
        id,
        "remember",
        json!({"name": "cache-note", "body": "The cache is off.", "entities": [{"name": "cache", "type": "concept"}]}),
    );
    let related = ok(&server, id, "related", json!({"name": "config"}));
    assert!(
        related["related"].to_string().contains("cache-note"),
        "{related}"
    );
    let unlinked = ok(
        &server,
        id,
        "unlink",
        json!({"name": "config", "entity": "cache"}),
    );
    assert!(
        !unlinked["entities"].to_string().contains("\"cache\""),
        "{unlinked}"
    );
    let renamed = ok(
        &server,
        id,
        "rename",
        json!({"name": "cache-note", "new_name": "cache-off"}),
    );
    assert_eq!(renamed["name"], "cache-off");

    ok(
        &server,
        id,
        "link",
        json!({"name": "config", "entities": [{"name": "caching", "type": "concept"}]}),
    );
    let merged = ok(
        &server,
        id,
        "entities/merge",
        json!({"from": "caching", "into": "cache"}),
    );
    assert_eq!(merged["name"], "cache", "{merged}");
    let renamed_entity = ok(
        &server,
        id,
        "entities/rename",
        json!({"name": "cache", "new_name": "memo-cache"}),
    );
    assert_eq!(renamed_entity["name"], "memo-cache", "{renamed_entity}");
    let entities = ok(&server, id, "entities", json!({}));
    let listed: Vec<&Value> = entities["entities"].as_array().unwrap().iter().collect();
    assert!(
        listed
            .iter()
            .all(|e| e["name"] != "caching" && e["name"] != "cache"),
        "merged and renamed away: {entities}"
    );
    let kept = listed
        .iter()
        .find(|e| e["name"] == "memo-cache")
        .expect("memo-cache");
    assert!(kept["aliases"].to_string().contains("caching"), "{kept}");
    let stats = ok(&server, id, "stats", json!({}));
    assert!(stats.get("path").is_none(), "{stats}");
    assert_no_absolute_path(&env, "stats", &stats);

    let forgotten = ok(&server, id, "forget", json!({"name": "config"}));
    assert!(forgotten["deleted_at"].is_i64(), "{forgotten}");
    let gone = ok(&server, id, "recall", json!({"query": "settings once"}));
    assert!(
        !gone.to_string().contains("\"config\""),
        "a forgotten memory is not recalled: {gone}"
    );

    // Without consent: 409, and the memory and its versions stay.
    let before = history_after(&server, id);
    refused(
        &server,
        id,
        "purge",
        json!({"name": "config"}),
        ErrorKind::ConsentRequired,
    );
    refused(
        &server,
        id,
        "purge",
        json!({"name": "config", "consent": false}),
        ErrorKind::ConsentRequired,
    );
    assert_eq!(
        history_after(&server, id),
        before,
        "a refused purge touched nothing"
    );
    let purged = ok(
        &server,
        id,
        "purge",
        json!({"name": "config", "consent": true}),
    );
    assert_eq!(purged["name"], "config");
    assert!(purged["versions"].as_u64().unwrap() >= 4, "{purged}");
    refused(
        &server,
        id,
        "read",
        json!({"name": "config"}),
        ErrorKind::NotFound,
    );
    assert_eq!(names(&server, id), ["cache-off"]);
}

fn history_after(server: &Server, id: i64) -> Value {
    ok(server, id, "history", json!({"name": "config"}))["versions"].clone()
}

#[test]
fn bad_memory_bodies_get_named_errors_and_store_nothing() {
    let env = indexed();
    let (server, id) = serve(&env);
    ok(
        &server,
        id,
        "remember",
        json!({"name": "kept", "body": "The first one."}),
    );

    let oversize = "x".repeat(512 * 1024 + 1);
    refused(
        &server,
        id,
        "remember",
        json!({"name": "big", "body": oversize}),
        ErrorKind::TooLong,
    );
    let (status, v) = mem(
        &server,
        id,
        "remember",
        json!({"name": "ent", "body": "b", "entities": [{"name": "x"}]}),
    );
    assert_eq!(status, 400, "an entity without its type: {v}");
    assert_eq!(v["error"]["kind"], ErrorKind::InvalidInput.name(), "{v}");
    let (status, v) = mem(
        &server,
        id,
        "remember",
        json!({"name": "rel", "body": "b", "entities": [{"name": "a", "type": "t"}],
               "relationships": [{"source": "a", "target": "nowhere", "relation": "uses"}]}),
    );
    assert!(
        (400..500).contains(&status),
        "a relationship to a missing entity: {v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("nowhere"),
        "{v}"
    );
    refused(
        &server,
        id,
        "remember",
        json!({"name": "kept", "body": "Again."}),
        ErrorKind::NameTaken,
    );

    assert_eq!(names(&server, id), ["kept"], "nothing half-stored");
    let kept = ok(&server, id, "read", json!({"name": "kept"}));
    assert_eq!(
        kept["body"], "The first one.",
        "the collision changed nothing"
    );
    assert_eq!(
        ok(&server, id, "history", json!({"name": "kept"}))["versions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_changed_linked_function_makes_the_memory_stale_over_http() {
    let env = indexed();
    let (server, id) = serve(&env);
    let made = ok(
        &server,
        id,
        "remember",
        json!({"name": "helper", "body": "`helper` returns one."}),
    );
    assert_eq!(made["stale"], false, "{made}");

    let lib = std::fs::read_to_string(env.root().join("src/lib.rs")).unwrap();
    env.write(&[(
        "src/lib.rs",
        &lib.replace("fn helper() -> u32 { 1 }", "fn helper() -> u32 { 2 }"),
    )]);
    let (code, out) = env.json(&["index", env.root().to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");

    let read = ok(&server, id, "read", json!({"name": "helper"}));
    assert_eq!(read["stale"], true, "{read}");
    let reason = read["stale_reasons"][0].as_str().unwrap();
    assert!(reason.contains("src/lib.rs:helper"), "{reason}");
    assert!(reason.contains("changed"), "{reason}");
    assert_no_absolute_path(&env, "read", &read);
    let hits = ok(&server, id, "recall", json!({"query": "returns one"}));
    assert_eq!(hits["hits"][0]["stale"], true, "{hits}");
}

#[test]
fn memory_routes_are_declared_and_documented() {
    let env = indexed();
    let (server, _) = serve(&env);
    let caps = get_json(&server, "/api/v1/capabilities");
    assert!(
        caps["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("memory")),
        "{caps}"
    );
    let doc = get_json(&server, "/api/v1/openapi.json");
    for op in [
        "remember",
        "recall",
        "read",
        "list",
        "edit",
        "rename",
        "forget",
        "restore",
        "purge",
        "history",
        "link",
        "unlink",
        "related",
        "entities",
        "entities/merge",
        "entities/rename",
        "graph",
        "stats",
    ] {
        let path = format!("/api/v1/workspaces/{{id}}/memory/{op}");
        assert!(
            doc["paths"][&path]["post"]["requestBody"].is_object(),
            "{path}"
        );
    }
    let stats = &doc["components"]["schemas"]["MemoryStats"]["properties"];
    assert!(
        stats.get("path").is_none(),
        "the schema omits the path: {stats}"
    );
}
