//! Vectors filled in the background by a long-lived host: `loci serve` answers a
//! `remember` at once with its vectors `pending`, a background thread fills them, and
//! recall then runs with `vectors: on` — with a tiny random-weight model of the pinned
//! architecture installed under the test's `LOCI_HOME`. A model that fails to embed
//! never costs the memory: it is stored and recalled by full text all the same.

use crate::serve_support;
use crate::tiny_model_support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serve_support::*;
use tiny_model_support::Tiny;

const VECTORS_DEADLINE: Duration = Duration::from_secs(120);

fn mem(server: &Server, id: i64, op: &str, body: Value) -> Value {
    let (status, text) = call(
        server,
        "post",
        &format!("/api/v1/workspaces/{id}/memory/{op}"),
        Some(&body),
        bearer(),
    );
    assert_eq!(status, 200, "{op}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// A body of many chunks (paragraphs of ~900 bytes), so filling its vectors takes the
/// background thread a while after the answer.
fn long_body(words: &str) -> String {
    let paragraph = format!("{words} ").repeat(900 / (words.len() + 1));
    (0..120)
        .map(|i| format!("{i} {paragraph}"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[test]
fn remember_over_http_answers_pending_and_the_vectors_follow_in_the_background() {
    let env = indexed();
    tiny_model_support::install(env.home.path(), Tiny::Working);
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);

    let body = long_body("the cat sits on the mat");
    let stored = mem(
        &server,
        id,
        "remember",
        json!({"name": "mat-notes", "body": body}),
    );
    let v = &stored["vectors"];
    assert_eq!(v["state"], "pending", "answered before the vectors: {v}");
    assert!(v["pending"].as_u64().unwrap() > 100, "{v}");
    assert_eq!(v["model"], "all-MiniLM-L6-v2", "{v}");

    // The background thread fills them: polled until on, within a deadline.
    let started = Instant::now();
    let read = loop {
        let read = mem(&server, id, "read", json!({"name": "mat-notes"}));
        if read["vectors"]["state"] == "on" {
            break read;
        }
        assert!(
            started.elapsed() < VECTORS_DEADLINE,
            "vectors still not on after {VECTORS_DEADLINE:?}: {}",
            read["vectors"]
        );
        std::thread::yield_now();
    };
    assert_eq!(read["vectors"]["pending"], 0, "{}", read["vectors"]);
    let stats = mem(&server, id, "stats", json!({}));
    assert_eq!(stats["chunks"], stats["embedded_chunks"], "{stats}");
    assert_eq!(stats["vectors"]["state"], "on", "{stats}");

    let hits = mem(&server, id, "recall", json!({"query": "cat mat"}));
    assert_eq!(hits["vectors"]["state"], "on", "{hits}");
    assert_eq!(hits["hits"][0]["name"], "mat-notes", "{hits}");
    assert!(
        hits["hits"][0]["why"]["vector"].is_object(),
        "the vector source ranked it: {hits}"
    );
}

#[test]
fn a_model_that_fails_to_embed_never_loses_the_memory() {
    let env = indexed();
    tiny_model_support::install(env.home.path(), Tiny::FailsToEmbed);

    // The CLI embeds inline: the memory is stored and the answer says why it has no vectors.
    let (code, out) = env.json(&[
        "remember",
        "--name",
        "cli-note",
        "the memory of the code graph",
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["vectors"]["state"], "failed", "{out}");
    assert!(
        out["vectors"]["error"].as_str().unwrap().contains("embed"),
        "{out}"
    );

    // The server answers at once and its background thread fails: stored all the same.
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let stored = mem(
        &server,
        id,
        "remember",
        json!({"name": "http-note", "body": "the index of the code is fast"}),
    );
    assert_eq!(stored["vectors"]["state"], "pending", "{stored}");
    for name in ["cli-note", "http-note"] {
        let read = mem(&server, id, "read", json!({"name": name}));
        assert_eq!(read["name"], name);
        assert_eq!(read["vectors"]["state"], "pending", "{read}");
    }
    // Recall cannot embed the query: full text and graph answer, and it says so.
    let hits = mem(
        &server,
        id,
        "recall",
        json!({"query": "the index of the code"}),
    );
    assert_eq!(hits["vectors"]["state"], "failed", "{hits}");
    assert_eq!(hits["hits"][0]["name"], "http-note", "{hits}");
    let stats = mem(&server, id, "stats", json!({}));
    assert_eq!(stats["memories"], 2, "{stats}");
    assert_eq!(stats["embedded_chunks"], 0, "{stats}");
}
