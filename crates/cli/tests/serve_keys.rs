//! API keys scoped to memory namespaces (docs/http.md, "Keys scoped to namespaces"),
//! against the real `loci serve` over loopback sockets: two keys, `alpha` scoped to
//! `team-a` and `beta` to `team-b` and `shared-b`, each remembering through HTTP and
//! `/mcp`. Neither reads, recalls, lists, counts, updates, forgets, merges, links or
//! purges the other's memories: not by naming the other namespace, nor a look-alike of
//! it (case, whitespace, zero-width and homoglyph characters, a decomposed accent),
//! nor by the other's memory names and ids guessed directly; what the other holds is
//! unchanged after every attempt. The server's own key keeps seeing everything, and a
//! bad keys file stops the server before it listens. The HTTP and MCP checks run twice:
//! with the workspace's memories in its SQLite file, and in a team PostgreSQL database
//! (`memory.url`, a real cluster: `pg_cluster`), whose scoping must hold the same.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::pg_cluster;
use crate::serve_support::agent;
use crate::serve_support::mcp::{APP, INIT, KEY, Served, error_kind};

const ALPHA: &str = "alpha-key-0123456789abcdef";
const BETA: &str = "beta-key-0123456789abcdef";
/// A word only alpha's memory holds.
const SECRET_WORD: &str = "zanzibarquux";

const KEYS_FILE: &str = r#"
[[keys]]
name = "alpha"
key = "alpha-key-0123456789abcdef"
namespaces = ["team-a"]

[[keys]]
name = "beta"
key = "beta-key-0123456789abcdef"
namespaces = ["team-b", "shared-b"]
"#;

/// `team-a` as a hostile caller might spell it to slip past a careless comparison.
const LOOK_ALIKES: &[&str] = &[
    "team-a",
    "Team-A",
    "TEAM-A",
    "team-a ",
    " team-a",
    "team-a\t",
    "team-a\u{200b}",
    "\u{feff}team-a",
    "team\u{2011}a",
    "t\u{435}am-a",
    "team-\u{430}",
    "team-a\u{301}",
    "default",
];

/// Where the server keeps the workspace's memories.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Store {
    /// The workspace's `.loci/memory.db`.
    Sqlite,
    /// A database of the test cluster, as `memory.url`.
    Postgres,
}

/// The server with both keys over `store`, and the keys file's folder (kept alive with
/// it); `None` when PostgreSQL is asked for and skipped (not installed, not CI). The
/// store is checked to be the one asked for.
fn serve(store: Store) -> Option<(Served, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api-keys.toml");
    std::fs::write(&path, KEYS_FILE).unwrap();
    let mut vars = vec![("LOCI_API_KEYS_FILE", path.to_str().unwrap().to_string())];
    if store == Store::Postgres {
        vars.push((
            "LOCI_MEMORY_URL",
            pg_cluster::database_with_password("serve-keys-pw")?,
        ));
        vars.push((
            "LOCI_MEMORY_REPOSITORY_ID",
            "github.com/loci/serve-keys".into(),
        ));
    }
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let served = Served::start(&vars);
    let stats = ok(&served, KEY, served.workspace_id("app"), "stats", json!({}));
    let kind = if store == Store::Postgres {
        "postgres"
    } else {
        "sqlite"
    };
    assert_eq!(stats["store"]["kind"], kind, "{stats}");
    Some((served, dir))
}

/// `(status, answer)` of `POST {path}` with `key`.
fn post(s: &Served, key: &str, path: &str, body: &Value) -> (u16, Value) {
    let resp = agent()
        .post(&format!("http://{}{path}", s.addr))
        .header("Authorization", &format!("Bearer {key}"))
        .send_json(body)
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.into_body().read_to_string().unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"));
    (status, v)
}

fn mem(s: &Served, key: &str, id: i64, op: &str, body: Value) -> (u16, Value) {
    post(
        s,
        key,
        &format!("/api/v1/workspaces/{id}/memory/{op}"),
        &body,
    )
}

fn ok(s: &Served, key: &str, id: i64, op: &str, body: Value) -> Value {
    let (status, v) = mem(s, key, id, op, body.clone());
    assert_eq!(status, 200, "{op} {body}: {v}");
    v
}

/// The answer is 403 `forbidden_namespace`.
fn forbidden(what: &str, status: u16, v: &Value) {
    assert_eq!(status, 403, "{what}: {v}");
    assert_eq!(v["error"]["kind"], "forbidden_namespace", "{what}: {v}");
}

/// Nothing of alpha's memory (its body's word, its id) appears in `v`; with `named`
/// false, not its name either (a request that names it gets the name echoed back).
fn no_trace(what: &str, v: &Value, alpha_id: i64) {
    let text = v.to_string();
    assert!(
        !text.contains(SECRET_WORD),
        "{what}: alpha's memory leaked: {text}"
    );
    let ids = ids_in(v);
    assert!(
        !ids.contains(&alpha_id),
        "{what}: alpha's id leaked: {text}"
    );
}

/// Nothing of alpha's memory, not even its name, appears in an answer to a request
/// that did not name it.
fn no_trace_at_all(what: &str, v: &Value, alpha_id: i64) {
    no_trace(what, v, alpha_id);
    let text = v.to_string();
    assert!(
        !text.contains("alpha-"),
        "{what}: alpha's names leaked: {text}"
    );
}

/// The ids of the memories in `v` (objects with an `id` and a `namespace`).
fn ids_in(v: &Value) -> Vec<i64> {
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            if m.contains_key("namespace")
                && let Some(i) = m.get("id").and_then(Value::as_i64)
            {
                out.push(i);
            }
            for x in m.values() {
                out.extend(ids_in(x));
            }
        }
        Value::Array(a) => a.iter().for_each(|x| out.extend(ids_in(x))),
        _ => {}
    }
    out
}

/// Alpha's memory as alpha reads it: its version, body and whether it is forgotten.
fn alpha_state(s: &Served, id: i64) -> (u64, String, bool) {
    let v = ok(s, ALPHA, id, "read", json!({"name": "alpha-plan"}));
    (
        v["version"].as_u64().unwrap(),
        v["body"].as_str().unwrap().to_string(),
        !v["deleted_at"].is_null(),
    )
}

#[test]
fn two_scoped_keys_cannot_reach_each_others_memories_over_http() {
    over_http(Store::Sqlite);
}

#[test]
fn two_scoped_keys_cannot_reach_each_others_memories_over_http_on_postgres() {
    over_http(Store::Postgres);
}

fn over_http(store: Store) {
    let Some((s, _keys)) = serve(store) else {
        return;
    };
    let id = s.workspace_id("app");
    // Each key remembers without naming a namespace: its first one.
    let a = ok(
        &s,
        ALPHA,
        id,
        "remember",
        json!({"name": "alpha-plan", "body": format!("the {SECRET_WORD} rollout waits for the audit"),
               "entities": [{"name": "Audit", "type": "concept"}]}),
    );
    assert_eq!(a["namespace"], "team-a", "{a}");
    let alpha_id = a["id"].as_i64().unwrap();
    ok(
        &s,
        ALPHA,
        id,
        "remember",
        json!({"name": "alpha-two", "body": "second"}),
    );
    let b = ok(
        &s,
        BETA,
        id,
        "remember",
        json!({"name": "beta-plan", "body": "beta ships on friday",
               "entities": [{"name": "Audit", "type": "concept"}]}),
    );
    assert_eq!(b["namespace"], "team-b", "{b}");
    let shared = ok(
        &s,
        BETA,
        id,
        "remember",
        json!({"name": "beta-shared", "body": "shared note", "namespace": "shared-b"}),
    );
    assert_eq!(shared["namespace"], "shared-b");
    let before = alpha_state(&s, id);

    // Every operation naming alpha's namespace, or a look-alike of it, is refused
    // before anything is read or written.
    for ns in LOOK_ALIKES {
        let target = json!({"name": "alpha-plan", "namespace": ns});
        for (op, body) in [
            ("read", target.clone()),
            ("history", target.clone()),
            ("forget", target.clone()),
            (
                "restore",
                json!({"name": "alpha-plan", "namespace": ns, "version": 1}),
            ),
            (
                "edit",
                json!({"name": "alpha-plan", "namespace": ns, "body": "overwritten"}),
            ),
            (
                "rename",
                json!({"name": "alpha-plan", "namespace": ns, "new_name": "stolen"}),
            ),
            (
                "link",
                json!({"name": "alpha-plan", "namespace": ns,
                            "entities": [{"name": "Mine", "type": "concept"}]}),
            ),
            (
                "unlink",
                json!({"name": "alpha-plan", "namespace": ns, "entity": "Audit"}),
            ),
            ("related", target.clone()),
            (
                "purge",
                json!({"name": "alpha-plan", "namespace": ns, "consent": true}),
            ),
            (
                "merge",
                json!({"from": "alpha-two", "into": "alpha-plan", "namespace": ns}),
            ),
            (
                "merge",
                json!({"from": "alpha-plan", "into": "beta-plan", "namespace": ns}),
            ),
            (
                "remember",
                json!({"name": "planted", "body": "x", "namespace": ns}),
            ),
            ("recall", json!({"query": SECRET_WORD, "namespace": ns})),
            ("list", json!({"namespace": ns, "forgotten": true})),
            ("stats", json!({"namespace": ns})),
            ("entities", json!({"namespace": ns})),
            (
                "entities/rename",
                json!({"name": "Audit", "new_name": "Gone", "namespace": ns}),
            ),
            (
                "entities/merge",
                json!({"from": "Audit", "into": "Audit2", "namespace": ns}),
            ),
            ("graph", json!({"namespace": ns})),
        ] {
            let (status, v) = mem(&s, BETA, id, op, body.clone());
            forbidden(&format!("beta {op} {body}"), status, &v);
            no_trace(&format!("beta {op} {body}"), &v, alpha_id);
        }
    }

    // Without a namespace beta works in team-b: alpha's names are not there, and what
    // beta may see (list, recall, stats, entities, graph, related) holds nothing of alpha's.
    for (op, body) in [
        ("read", json!({"name": "alpha-plan"})),
        ("history", json!({"name": "alpha-plan"})),
        ("forget", json!({"name": "alpha-plan"})),
        ("edit", json!({"name": "alpha-plan", "body": "overwritten"})),
        (
            "link",
            json!({"name": "alpha-plan", "entities": [{"name": "X", "type": "concept"}]}),
        ),
        ("merge", json!({"from": "alpha-plan", "into": "beta-plan"})),
        ("merge", json!({"from": "beta-plan", "into": "alpha-plan"})),
        ("purge", json!({"name": "alpha-plan", "consent": true})),
        // The id, guessed as a name.
        ("read", json!({"name": alpha_id.to_string()})),
    ] {
        let (status, v) = mem(&s, BETA, id, op, body.clone());
        assert_eq!(status, 404, "beta {op} {body}: {v}");
        assert_eq!(v["error"]["kind"], "not_found", "beta {op} {body}: {v}");
        no_trace(&format!("beta {op} {body}"), &v, alpha_id);
    }
    // An id field is no way in either: the requests take names.
    let (status, v) = mem(&s, BETA, id, "read", json!({"id": alpha_id}));
    assert_eq!(status, 400, "{v}");
    for (op, body) in [
        ("list", json!({"forgotten": true})),
        (
            "recall",
            json!({"query": format!("{SECRET_WORD} rollout audit")}),
        ),
        ("recall", json!({"query": "audit", "limit": 200})),
        ("stats", json!({})),
        ("entities", json!({})),
        ("graph", json!({})),
        ("related", json!({"name": "beta-plan", "depth": 5})),
    ] {
        let v = ok(&s, BETA, id, op, body.clone());
        no_trace_at_all(&format!("beta {op} {body}"), &v, alpha_id);
    }
    let listed = ok(&s, BETA, id, "list", json!({"forgotten": true}));
    let names: Vec<&str> = listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["beta-plan"], "{listed}");
    let stats = ok(&s, BETA, id, "stats", json!({}));
    assert_eq!(
        stats["memories"], 1,
        "beta's stats count team-b alone: {stats}"
    );
    let shared_list = ok(&s, BETA, id, "list", json!({"namespace": "shared-b"}));
    assert_eq!(shared_list["memories"][0]["name"], "beta-shared");

    // Alpha likewise cannot reach beta's namespaces.
    for ns in ["team-b", "shared-b", "Team-B", "team-b "] {
        let (status, v) = mem(&s, ALPHA, id, "list", json!({"namespace": ns}));
        forbidden(&format!("alpha list {ns:?}"), status, &v);
        let (status, v) = mem(
            &s,
            ALPHA,
            id,
            "read",
            json!({"name": "beta-plan", "namespace": ns}),
        );
        forbidden(&format!("alpha read {ns:?}"), status, &v);
    }
    let alpha_sees = ok(
        &s,
        ALPHA,
        id,
        "recall",
        json!({"query": "beta ships friday shared note"}),
    );
    assert!(!alpha_sees.to_string().contains("beta-"), "{alpha_sees}");

    // Nothing of alpha's changed through all of that.
    assert_eq!(alpha_state(&s, id), before);
    let history = ok(&s, ALPHA, id, "history", json!({"name": "alpha-plan"}));
    assert_eq!(
        history["versions"].as_array().unwrap().len(),
        1,
        "{history}"
    );
    let entities = ok(&s, ALPHA, id, "entities", json!({}));
    assert_eq!(entities["entities"][0]["name"], "Audit", "{entities}");
    let alpha_list = ok(&s, ALPHA, id, "list", json!({"forgotten": true}));
    assert_eq!(alpha_list["total"], 2, "{alpha_list}");

    // The user-level store has the same rule.
    let (status, v) = post(
        &s,
        BETA,
        "/api/v1/memory/list",
        &json!({"namespace": "team-a"}),
    );
    forbidden("beta user list team-a", status, &v);
    let (status, v) = post(
        &s,
        ALPHA,
        "/api/v1/memory/remember",
        &json!({"name": "user-note", "body": "alpha's user note"}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["namespace"], "team-a", "{v}");
    let (status, v) = post(&s, BETA, "/api/v1/memory/list", &json!({}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["total"], 0, "{v}");

    // The server's own key is unscoped, as before: every namespace, `default` when
    // none is named.
    let (status, v) = mem(
        &s,
        KEY,
        id,
        "read",
        json!({"name": "alpha-plan", "namespace": "team-a"}),
    );
    assert_eq!(status, 200, "{v}");
    let (status, v) = mem(&s, KEY, id, "list", json!({}));
    assert_eq!((status, v["total"].as_u64()), (200, Some(0)), "{v}");
    let (_, v) = mem(&s, KEY, id, "stats", json!({}));
    assert_eq!(v["memories"], 4, "every namespace: {v}");

    // Two different keys in one request are no key.
    let resp = agent()
        .post(&format!(
            "http://{}/api/v1/workspaces/{id}/memory/list",
            s.addr
        ))
        .header("Authorization", &format!("Bearer {BETA}"))
        .header("X-API-Key", ALPHA)
        .send_json(json!({}))
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
}

/// A session of `key` on the workspace `APP`.
fn session(s: &Served, key: &str) -> String {
    let init = s.post_as(key, None, &[("loci-workspace", APP)], INIT);
    assert_eq!(init.status, 200, "{}", init.body);
    let session = init.session.expect("an Mcp-Session-Id");
    let note = s.post_as(
        key,
        Some(&session),
        &[],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(note.status, 202, "{}", note.body);
    session
}

fn tool(s: &Served, key: &str, session: &str, name: &str, args: Value) -> Value {
    let answer = s.rpc_as(
        key,
        session,
        9,
        "tools/call",
        json!({"name": name, "arguments": args}),
    );
    answer["result"].clone()
}

#[test]
fn two_scoped_keys_cannot_reach_each_others_memories_over_mcp() {
    over_mcp(Store::Sqlite);
}

#[test]
fn two_scoped_keys_cannot_reach_each_others_memories_over_mcp_on_postgres() {
    over_mcp(Store::Postgres);
}

fn over_mcp(store: Store) {
    let Some((s, _keys)) = serve(store) else {
        return;
    };
    let alpha = session(&s, ALPHA);
    let beta = session(&s, BETA);
    let made = tool(
        &s,
        ALPHA,
        &alpha,
        "remember",
        json!({"name": "alpha-plan", "body": format!("the {SECRET_WORD} rollout waits"),
               "entities": [{"name": "Audit", "type": "concept"}]}),
    );
    assert_eq!(error_kind(&made), None, "{made}");
    assert!(made.to_string().contains("team-a"), "{made}");
    let alpha_id = ids_in(&made["structuredContent"])
        .into_iter()
        .next()
        .expect("the memory's id");
    tool(
        &s,
        ALPHA,
        &alpha,
        "remember",
        json!({"name": "alpha-two", "body": "second"}),
    );
    let b = tool(
        &s,
        BETA,
        &beta,
        "remember",
        json!({"name": "beta-plan", "body": "beta note"}),
    );
    assert_eq!(error_kind(&b), None, "{b}");
    assert!(b.to_string().contains("team-b"), "{b}");

    for ns in LOOK_ALIKES {
        for (name, args) in [
            ("recall", json!({"query": SECRET_WORD, "namespace": ns})),
            (
                "remember",
                json!({"name": "planted", "body": "x", "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "read", "name": "alpha-plan", "namespace": ns}),
            ),
            ("memory", json!({"action": "list", "namespace": ns})),
            (
                "memory",
                json!({"action": "history", "name": "alpha-plan", "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "edit", "name": "alpha-plan", "body": "mine", "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "rename", "name": "alpha-plan", "new_name": "x", "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "forget", "name": "alpha-plan", "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "restore", "name": "alpha-plan", "version": 1, "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "link", "name": "alpha-plan", "namespace": ns,
                              "entities": [{"name": "Mine", "type": "concept"}]}),
            ),
            (
                "memory",
                json!({"action": "unlink", "name": "alpha-plan", "entity": "Audit", "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "merge", "name": "alpha-two", "into": "alpha-plan", "namespace": ns}),
            ),
            (
                "memory",
                json!({"action": "related", "name": "alpha-plan", "namespace": ns}),
            ),
            ("memory", json!({"action": "entities", "namespace": ns})),
            ("memory", json!({"action": "stats", "namespace": ns})),
            (
                "memory",
                json!({"action": "list", "namespace": ns, "scope": "user"}),
            ),
        ] {
            let r = tool(&s, BETA, &beta, name, args.clone());
            assert_eq!(
                error_kind(&r).as_deref(),
                Some("forbidden_namespace"),
                "beta {name} {args}: {r}"
            );
            no_trace(&format!("beta {name} {args}"), &r, alpha_id);
        }
    }
    // Without a namespace: beta's own, where alpha's names are not.
    for args in [
        json!({"action": "read", "name": "alpha-plan"}),
        json!({"action": "forget", "name": "alpha-plan"}),
        json!({"action": "merge", "name": "alpha-plan", "into": "beta-plan"}),
        json!({"action": "read", "name": alpha_id.to_string()}),
    ] {
        let r = tool(&s, BETA, &beta, "memory", args.clone());
        assert_eq!(error_kind(&r).as_deref(), Some("not_found"), "{args}: {r}");
        no_trace(&format!("beta memory {args}"), &r, alpha_id);
    }
    for (name, args) in [
        ("recall", json!({"query": format!("{SECRET_WORD} rollout")})),
        ("memory", json!({"action": "list"})),
        ("memory", json!({"action": "stats"})),
        ("memory", json!({"action": "entities"})),
    ] {
        let r = tool(&s, BETA, &beta, name, args.clone());
        assert_eq!(error_kind(&r), None, "{name} {args}: {r}");
        no_trace_at_all(&format!("beta {name} {args}"), &r, alpha_id);
    }
    // A session is no key: alpha's session driven with beta's key has beta's scope.
    let r = tool(
        &s,
        BETA,
        &alpha,
        "memory",
        json!({"action": "read", "name": "alpha-plan", "namespace": "team-a"}),
    );
    assert_eq!(
        error_kind(&r).as_deref(),
        Some("forbidden_namespace"),
        "{r}"
    );
    let r = tool(
        &s,
        BETA,
        &alpha,
        "memory",
        json!({"action": "read", "name": "alpha-plan"}),
    );
    assert_eq!(error_kind(&r).as_deref(), Some("not_found"), "{r}");
    // Alpha's memory is as it was.
    let r = tool(
        &s,
        ALPHA,
        &alpha,
        "memory",
        json!({"action": "history", "name": "alpha-plan"}),
    );
    assert_eq!(error_kind(&r), None, "{r}");
    assert_eq!(
        r["structuredContent"]["versions"].as_array().map(Vec::len),
        Some(1),
        "{r}"
    );
    let r = tool(
        &s,
        ALPHA,
        &alpha,
        "memory",
        json!({"action": "read", "name": "alpha-plan"}),
    );
    assert!(r.to_string().contains(SECRET_WORD), "{r}");
    assert!(
        r["structuredContent"]["memory"]["deleted_at"].is_null(),
        "{r}"
    );
}

#[test]
fn a_bad_keys_file_stops_the_server_naming_the_entry_not_the_key() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api-keys.toml");
    std::fs::write(
        &path,
        "[[keys]]\nname = \"ci\"\nkey = \"a-secret-key-long-enough\"\nnamespaces = [\"a\", \"a\"]\n",
    )
    .unwrap();
    let out = crate::mcp_support::loci(home.path())
        .args(["serve", "--port", "0", "--json"])
        .env("LOCI_API_KEY", KEY)
        .env("LOCI_API_KEYS_FILE", &path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["error"]["kind"], "invalid_input", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("keys entry 1 (\"ci\")") && message.contains("twice"),
        "{v}"
    );
    assert!(
        !text.contains("a-secret-key")
            && !String::from_utf8_lossy(&out.stderr).contains("a-secret-key")
    );
    // A keys file named but missing is refused too.
    let out = crate::mcp_support::loci(home.path())
        .args(["serve", "--port", "0", "--json"])
        .env("LOCI_API_KEY", KEY)
        .env("LOCI_API_KEYS_FILE", dir.path().join("missing.toml"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
}
