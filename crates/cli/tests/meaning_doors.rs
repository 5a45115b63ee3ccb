//! Search by meaning through its two other doors: the MCP `search` tool's `meaning`
//! mode over a real `loci mcp` process, and `POST .../search/meaning` on a real
//! `loci serve` over loopback; both with the real model (see `meaning.rs`: without it
//! these fail under `CI` and skip the model's part otherwise). A long-lived process
//! keeps the vectors in memory: after `loci embed` changes the file (another
//! process), its next answer is the new file's, never the vectors it held.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Env, wait_until};
use crate::mcp_support::Stdio_;
use crate::meaning::{embed, indexed};
use crate::memory_vectors::{install_model, model_source};
use crate::serve_support::{bearer, call, kind_of, start, workspace_id};

/// `loci mcp` on the env's workspace.
fn mcp(env: &Env) -> Stdio_ {
    let mut cmd = env.cmd();
    cmd.arg("mcp").arg("--workspace").arg(env.root());
    let mut s = Stdio_::start(cmd);
    s.initialize();
    s
}

/// The error kind of a tool result, or `None` when it is an answer.
fn tool_error(result: &Value) -> Option<String> {
    if result["isError"] != json!(true) {
        return None;
    }
    Some(
        result["_meta"]["loci/error"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn hint(result: &Value) -> String {
    result["_meta"]["loci/error"]["hint"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `stats/mean.py` as the workspace wrote it, with `code` after it.
fn add_to_mean(env: &Env, code: &str) {
    let first = crate::meaning::FILES[3].1;
    std::fs::write(
        env.root().join("stats/mean.py"),
        format!("{first}\n\n{code}"),
    )
    .unwrap();
}

/// The names of a meaning answer's hits, best first.
fn names(result: &Value) -> Vec<String> {
    assert_eq!(tool_error(result), None, "{result}");
    result["structuredContent"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{result}"))
        .iter()
        .map(|h| h["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_search_tool_refuses_bad_arguments_and_says_what_is_missing_before_vectors() {
    let env = indexed();
    let mut s = mcp(&env);
    let huge = "retry ".repeat(500);
    for (args, kind) in [
        (
            json!({"pattern": "def", "meaning": "retry a download"}),
            "invalid_input",
        ),
        (json!({}), "invalid_input"),
        (json!({"meaning": "   "}), "invalid_input"),
        (json!({"meaning": ""}), "invalid_input"),
        (json!({"meaning": huge}), "too_long"),
        (
            json!({"meaning": "retry", "signals": "loud"}),
            "invalid_input",
        ),
        (json!({"meaning": 5}), "invalid_input"),
        (
            json!({"pattern": "def", "signals": "text"}),
            "invalid_input",
        ),
        (json!({"meaning": "retry", "regex": true}), "invalid_input"),
        (json!({"meaning": "retry", "path": "net/"}), "invalid_input"),
        (json!({"meaning": "retry", "limit": 0}), "limit_exceeded"),
    ] {
        let r = s.call("search", args.clone());
        assert_eq!(tool_error(&r).as_deref(), Some(kind), "{args}: {r}");
    }
    // No model in this home: vectors are refused with how to get one, said as the
    // tool's own argument for full text.
    let r = s.call("search", json!({"meaning": "retry a download"}));
    assert_eq!(tool_error(&r).as_deref(), Some("model_missing"), "{r}");
    assert!(hint(&r).contains("signals: \"text\""), "{r}");
    // Full text needs no model, but needs `loci embed`.
    let r = s.call(
        "search",
        json!({"meaning": "retry a download", "signals": "text"}),
    );
    assert_eq!(tool_error(&r).as_deref(), Some("no_vectors"), "{r}");
    assert!(hint(&r).contains("loci embed"), "{r}");
    // The text mode is what it was.
    let r = s.call("search", json!({"pattern": "fetch_with_backoff"}));
    assert_eq!(tool_error(&r), None, "{r}");
    assert_eq!(
        r["structuredContent"]["hits"][0]["path"], "net/client.py",
        "{r}"
    );
    assert_eq!(r["structuredContent"]["hits"][0]["col"], 5, "{r}");
}

#[test]
fn the_search_tool_finds_units_by_meaning_and_a_re_embed_is_seen_at_once() {
    let Some(source) = model_source() else {
        return;
    };
    let env = indexed();
    install_model(&env, &source);
    let mut s = mcp(&env);
    let r = s.call("search", json!({"meaning": "retry a download"}));
    assert_eq!(tool_error(&r).as_deref(), Some("no_vectors"), "{r}");
    embed(&env);

    let query = "retry a failed network download, waiting longer each time";
    for signals in ["hybrid", "vectors"] {
        let r = s.call("search", json!({"meaning": query, "signals": signals}));
        assert_eq!(names(&r)[0], "fetch_with_backoff", "{signals}: {r}");
        let top = &r["structuredContent"]["hits"][0];
        assert_eq!(top["path"], "net/client.py", "{r}");
        assert_eq!(top["line"], 3, "{r}");
        assert_eq!(top["kind"], "function", "{r}");
        assert!(top["score"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            top["why"].as_str().unwrap().starts_with("vector #1 "),
            "{r}"
        );
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("net/client.py:3 fetch_with_backoff function"),
            "{text}"
        );
    }
    // Full text alone, and a bounded page with its cursor.
    let r = s.call(
        "search",
        json!({"meaning": "pbkdf2 password", "signals": "text"}),
    );
    assert_eq!(names(&r)[0], "hash_password", "{r}");
    let r = s.call("search", json!({"meaning": query, "limit": 2}));
    assert_eq!(names(&r).len(), 2, "{r}");
    assert_eq!(r["structuredContent"]["page"]["next_cursor"], "2", "{r}");

    // Another process re-embeds a changed file: this process's next answer sees it.
    let median = "the middle element of the sorted numbers";
    let r = s.call("search", json!({"meaning": median, "signals": "vectors"}));
    assert!(!names(&r).contains(&"median".to_string()), "{r}");
    add_to_mean(
        &env,
        "def median(values):\n    s = sorted(values)\n    return s[len(s) // 2]\n",
    );
    let (rc, out) = env.json(&["sync"]);
    assert_eq!(rc, 0, "{out}");
    embed(&env);
    let r = s.call("search", json!({"meaning": median, "signals": "vectors"}));
    assert_eq!(names(&r)[0], "median", "{r}");
    // A deleted file's units are gone from the next answer, in every mode.
    std::fs::remove_file(env.root().join("report/table.py")).unwrap();
    let (rc, out) = env.json(&["sync"]);
    assert_eq!(rc, 0, "{out}");
    embed(&env);
    for signals in ["hybrid", "vectors", "text"] {
        let r = s.call(
            "search",
            json!({"meaning": "render rows as an aligned text table", "signals": signals}),
        );
        assert!(
            !names(&r).contains(&"render_table".to_string()),
            "{signals}: {r}"
        );
    }
    // The vectors file deleted and made again: a new file, read anew.
    std::fs::remove_file(env.root().join(".loci/meaning.db")).unwrap();
    let r = s.call("search", json!({"meaning": median}));
    assert_eq!(tool_error(&r).as_deref(), Some("no_vectors"), "{r}");
    embed(&env);
    let r = s.call("search", json!({"meaning": median, "signals": "vectors"}));
    assert_eq!(names(&r)[0], "median", "{r}");
}

#[test]
fn a_background_sync_of_loci_mcp_re_embeds_what_it_changed() {
    let Some(source) = model_source() else {
        return;
    };
    let env = indexed();
    install_model(&env, &source);
    embed(&env);
    let mut s = mcp(&env);
    let query = "mail a greeting to a newly registered account";
    let r = s.call("search", json!({"meaning": query, "signals": "vectors"}));
    assert!(
        !names(&r).contains(&"send_welcome_email".to_string()),
        "{r}"
    );

    // An edit no one syncs or embeds by hand: the server's drift check starts a
    // background sync, and its clean end re-embeds the changed file.
    add_to_mean(
        &env,
        "def send_welcome_email(user):\n    message = compose_greeting(user.name)\n    smtp_deliver(user.email_address, message)\n",
    );
    let mut last = Value::Null;
    wait_until(
        "the new function found by meaning, nothing unembedded",
        Duration::from_secs(120),
        || {
            last = s.call("search", json!({"meaning": query, "signals": "vectors"}));
            // Vectors alone find it only once its file was embedded again; the
            // answer's title then says no file waits (no `loci embed` hint).
            names(&last).first().map(String::as_str) == Some("send_welcome_email")
                && !last.to_string().contains("since their units were embedded")
        },
    );
    assert_eq!(
        last["structuredContent"]["hits"][0]["path"], "stats/mean.py",
        "{last}"
    );
}

#[test]
fn a_background_sync_of_loci_mcp_makes_no_vectors_file_for_a_workspace_without_one() {
    let Some(source) = model_source() else {
        return;
    };
    let env = indexed();
    install_model(&env, &source);
    let mut s = mcp(&env);
    add_to_mean(
        &env,
        "def spread_of(values):\n    return max(values) - min(values)\n",
    );
    // The background sync's end is said (`last_run`) only after the refresher was
    // asked; by then the new function is found.
    let mut last = Value::Null;
    wait_until(
        "the background sync's end",
        Duration::from_secs(120),
        || {
            last = s.call("symbol", json!({"symbol": "spread_of"}));
            last["structuredContent"]["index"]["last_run"]
                .as_str()
                .is_some_and(|r| r.starts_with("sync"))
        },
    );
    assert_eq!(
        last["structuredContent"]["index"]["last_run"], "sync ok",
        "{last}"
    );
    assert!(last.to_string().contains("stats/mean.py"), "{last}");
    // Nothing embeds a workspace that never ran `loci embed`.
    drop(s);
    assert!(!env.root().join(".loci/meaning.db").exists());
}

/// `POST .../search/meaning` with `body`: status and parsed answer.
fn post(server: &crate::serve_support::Server, id: i64, body: &Value) -> (u16, String) {
    call(
        server,
        "post",
        &format!("/api/v1/workspaces/{id}/search/meaning"),
        Some(body),
        bearer(),
    )
}

#[test]
fn the_meaning_route_answers_pages_and_its_documented_errors_over_loopback() {
    let env = indexed();
    {
        let server = start(&env, &[], &[]);
        let id = workspace_id(&server);
        let doc: Value =
            serde_json::from_str(&call(&server, "get", "/api/v1/openapi.json", None, bearer()).1)
                .unwrap();
        let op = &doc["paths"]["/api/v1/workspaces/{id}/search/meaning"]["post"];
        assert_eq!(op["operationId"], "search_meaning", "{op}");
        assert!(op["responses"]["412"].is_object(), "{op}");
        for (body, status, kind) in [
            (
                json!({"text": "retry a download", "signals": "text"}),
                412,
                "no_vectors",
            ),
            (json!({"text": "retry a download"}), 412, "model_missing"),
            (json!({"text": "  "}), 400, "invalid_input"),
            (json!({}), 400, "invalid_input"),
            (
                json!({"text": "x", "signals": "loud"}),
                400,
                "invalid_input",
            ),
            (json!({"text": "x ".repeat(1_500)}), 413, "too_long"),
            (json!({"text": "x", "limit": 0}), 422, "limit_exceeded"),
        ] {
            let (got, text) = post(&server, id, &body);
            assert_eq!(
                (got, kind_of(&text).as_str()),
                (status, kind),
                "{body}: {text}"
            );
        }
    }
    let Some(source) = model_source() else {
        return;
    };
    install_model(&env, &source);
    embed(&env);
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let body =
        json!({"text": "retry a failed network download, waiting longer each time", "limit": 3});
    let (status, text) = post(&server, id, &body);
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["hits"][0]["name"], "fetch_with_backoff", "{v}");
    assert_eq!(v["hits"][0]["why"]["vector"]["rank"], 1, "{v}");
    assert_eq!(v["hits"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(v["signals"], "hybrid", "{v}");
    assert_eq!(v["index"]["state"], "complete", "{v}");
    let root = env.root().to_string_lossy().into_owned();
    assert!(!text.contains(&root), "no absolute path crosses: {text}");
}

/// A running `loci mcp` takes `loci models install` and `loci models use` from another
/// process at its next call, without a restart: its recall answers with the model now
/// chosen for memories (and search by meaning, which resolves the same way, keeps
/// finding by the code's model).
#[test]
fn a_running_loci_mcp_takes_a_model_switch_without_a_restart() {
    let (Some(minilm), Some(e5)) = (model_source(), crate::models::e5_wheel()) else {
        return;
    };
    let env = indexed();
    install_model(&env, &minilm);
    embed(&env);
    let (rc, out) = env.json(&[
        "remember",
        "--name",
        "deploy-day",
        "Deployments go out on Tuesdays after the release train leaves.",
    ]);
    assert_eq!(rc, 0, "{out}");
    let mut s = mcp(&env);
    let model_of_recall = |s: &mut Stdio_| {
        let r = s.call("recall", json!({"query": "when do we ship to production"}));
        assert_eq!(tool_error(&r), None, "{r}");
        r["structuredContent"]["vectors"]["model"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string()
    };
    let query = "retry a failed network download, waiting longer each time";
    assert_eq!(model_of_recall(&mut s), loci_embed::pinned::MINILM.id);

    install_model(&env, &e5);
    assert_eq!(model_of_recall(&mut s), loci_embed::pinned::E5_SMALL.id);
    // Code follows too: e5 has no vectors of the code yet, then finds by them.
    let r = s.call("search", json!({"meaning": query, "signals": "vectors"}));
    assert_eq!(tool_error(&r).as_deref(), Some("no_vectors"), "{r}");
    embed(&env);
    let r = s.call("search", json!({"meaning": query, "signals": "vectors"}));
    assert_eq!(names(&r)[0], "fetch_with_backoff", "{r}");

    let (rc, out) = env.json(&["models", "use", "minilm", "--for", "memory"]);
    assert_eq!(rc, 0, "{out}");
    assert_eq!(model_of_recall(&mut s), loci_embed::pinned::MINILM.id);
}
