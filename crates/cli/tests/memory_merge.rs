//! `loci memory merge FROM INTO` through the real binary over a real index: INTO takes
//! FROM's words, entities and code links and recall finds it by them; FROM is forgotten
//! pointing at INTO; both record a `merge` version and `restore` undoes it; a merge
//! into itself, of a missing memory, across namespaces or past the body limit is
//! refused with its exit code and changes nothing.

use crate::common;

use common::Env;
use loci_api::ErrorKind;
use serde_json::Value;

const LIB: &str = "pub fn parse_args(x: u32) -> u32 {\n    x + 1\n}\n\npub fn run() -> u32 {\n    parse_args(1)\n}\n";

fn indexed() -> Env {
    let env = Env::new();
    env.write(&[("src/lib.rs", LIB)]);
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 0, "{out}");
    env
}

fn ok(env: &Env, args: &[&str]) -> Value {
    let (code, out) = env.json(args);
    assert_eq!(code, 0, "{args:?}: {out}");
    out
}

fn exit(kind: ErrorKind) -> i32 {
    i32::from(kind.exit().code())
}

/// Two memories: `retries` (entity Fetcher, linked to `parse_args`) and `backoff`
/// (entity Scheduler), with no word of their bodies in common.
fn two_memories(env: &Env) {
    ok(
        env,
        &[
            "remember",
            "--name",
            "retries",
            "--entities",
            r#"[{"name": "Fetcher", "type": "component"}]"#,
            "--metadata",
            r#"{"ticket": "T-1"}"#,
            "Flaky upstreams get three attempts; `parse_args` validates the count.",
        ],
    );
    ok(
        env,
        &[
            "remember",
            "--name",
            "backoff",
            "--entities",
            r#"[{"name": "Scheduler", "type": "component"}]"#,
            "Waits double between tries, capped at thirty seconds.",
        ],
    );
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|x| x.as_str().unwrap_or_default().to_string())
        .collect()
}

fn ops(env: &Env, name: &str) -> Vec<(String, bool)> {
    let h = ok(env, &["memory", "history", name]);
    h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["op"].as_str().unwrap().to_string(),
                v["deleted"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_merged_memory_is_recalled_through_the_one_it_went_into() {
    let env = indexed();
    two_memories(&env);
    let m = ok(&env, &["memory", "merge", "retries", "backoff"]);
    assert_eq!(m["merged_into"], "backoff", "{m}");
    assert_eq!(m["from"]["name"], "retries");
    assert!(m["from"]["deleted_at"].is_i64(), "{m}");
    let body = m["into"]["body"].as_str().unwrap();
    assert!(
        body.starts_with("Waits double between tries") && body.contains("Flaky upstreams"),
        "{body}"
    );
    // The union of entities and code links, the links checked against the index.
    let mut entities = names(&m["into"], "entities");
    entities.sort();
    assert_eq!(entities, ["Fetcher", "Scheduler"], "{m}");
    assert_eq!(
        m["into"]["checked_links"][0]["key"]["qualified_name"], "parse_args",
        "{m}"
    );
    assert_eq!(
        m["into"]["metadata"]["ticket"], "T-1",
        "FROM's metadata key joins"
    );

    // FROM's words find INTO; FROM itself is never recalled.
    let hits = ok(&env, &["recall", "flaky", "upstreams", "attempts"]);
    let hit_names: Vec<&str> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(hit_names, ["backoff"], "{hits}");
    let by_code = ok(&env, &["recall", "--symbol", "parse_args"]);
    assert!(
        by_code["hits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["name"] == "backoff"),
        "{by_code}"
    );

    // FROM is forgotten and points at INTO; both have a `merge` version.
    let from = ok(&env, &["memory", "read", "retries"]);
    assert_eq!(from["metadata"]["merged_into"], "backoff", "{from}");
    assert!(from["deleted_at"].is_i64());
    assert_eq!(
        ops(&env, "retries").last().unwrap(),
        &("merge".to_string(), true)
    );
    assert_eq!(
        ops(&env, "backoff").last().unwrap(),
        &("merge".to_string(), false)
    );
    let list = ok(&env, &["memory", "list"]);
    assert_eq!(list["total"], 1, "{list}");
}

#[test]
fn restore_undoes_a_merge_on_both_sides() {
    let env = indexed();
    two_memories(&env);
    ok(&env, &["memory", "merge", "retries", "backoff"]);

    // FROM comes back as it was, without its pointer.
    let back = ok(&env, &["memory", "restore", "retries"]);
    assert!(back["deleted_at"].is_null(), "{back}");
    assert!(back["metadata"].get("merged_into").is_none(), "{back}");
    assert_eq!(back["metadata"]["ticket"], "T-1");
    assert_eq!(
        back["body"],
        "Flaky upstreams get three attempts; `parse_args` validates the count."
    );
    assert_eq!(names(&back, "entities"), ["Fetcher"]);

    // INTO's version before the merge brings its own body back.
    let h = ok(&env, &["memory", "history", "backoff"]);
    let before = h["versions"].as_array().unwrap().len() - 1;
    let restored = ok(&env, &["memory", "restore", "backoff", &before.to_string()]);
    assert_eq!(
        restored["body"],
        "Waits double between tries, capped at thirty seconds."
    );
    // FROM's words are FROM's again: full text finds it alone (INTO keeps the entities
    // and links it took, so the graph may still reach it, not the text).
    let hits = ok(&env, &["recall", "flaky", "upstreams", "attempts"]);
    assert_eq!(hits["hits"][0]["name"], "retries", "{hits}");
    for h in hits["hits"].as_array().unwrap() {
        assert_eq!(
            h["why"]["fts"].is_object(),
            h["name"] == "retries",
            "{hits}"
        );
    }
}

#[test]
fn a_refused_merge_names_the_problem_and_changes_nothing() {
    let env = indexed();
    two_memories(&env);
    ok(
        &env,
        &["remember", "-n", "team", "--name", "elsewhere", "team note"],
    );
    let snapshot = |env: &Env| {
        (
            ok(env, &["memory", "list", "--forgotten"]),
            ops(env, "retries"),
            ops(env, "backoff"),
            ok(env, &["memory", "read", "backoff"])["body"].clone(),
        )
    };
    let before = snapshot(&env);

    let (code, out) = env.json(&["memory", "merge", "backoff", "backoff"]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("into itself"),
        "{out}"
    );

    let (code, out) = env.json(&["memory", "merge", "nothing-here", "backoff"]);
    assert_eq!(code, exit(ErrorKind::NotFound), "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`nothing-here`"),
        "{out}"
    );

    // The other namespace's memory is named, with where it lives.
    let (code, out) = env.json(&["memory", "merge", "elsewhere", "backoff"]);
    assert_eq!(code, exit(ErrorKind::NotFound), "{out}");
    let msg = out["error"]["message"].as_str().unwrap();
    assert!(msg.contains("namespace team has one"), "{msg}");

    // A forgotten memory is neither merged nor merged into.
    ok(&env, &["remember", "--name", "gone", "old words"]);
    ok(&env, &["memory", "forget", "gone"]);
    let (code, out) = env.json(&["memory", "merge", "gone", "backoff"]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    let (code, out) = env.json(&["memory", "merge", "backoff", "gone"]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    ok(&env, &["memory", "purge", "gone", "--yes"]);

    // Two bodies that fit alone but not together: too_long naming both.
    let big = "word ".repeat(60 * 1024);
    for name in ["big-a", "big-b"] {
        let file = env.root().join(format!("{name}.txt"));
        std::fs::write(&file, format!("{name} {big}")).unwrap();
        ok(
            &env,
            &["remember", "--name", name, "--file", file.to_str().unwrap()],
        );
    }
    let big_before = ok(&env, &["memory", "history", "big-b"]);
    let (code, out) = env.json(&["memory", "merge", "big-a", "big-b"]);
    assert_eq!(code, exit(ErrorKind::TooLong), "{out}");
    let msg = out["error"]["message"].as_str().unwrap();
    assert!(msg.contains("`big-b`") && msg.contains("`big-a`"), "{msg}");
    assert_eq!(ok(&env, &["memory", "history", "big-b"]), big_before);
    for name in ["big-a", "big-b"] {
        ok(&env, &["memory", "purge", name, "--yes"]);
    }

    assert_eq!(snapshot(&env), before, "a refused merge changed something");
}

#[test]
fn the_user_store_merges_without_a_workspace_index() {
    let env = Env::new();
    ok(&env, &["remember", "--user", "--name", "a", "alpha words"]);
    ok(&env, &["remember", "--user", "--name", "b", "beta words"]);
    let m = ok(&env, &["memory", "merge", "--user", "a", "b"]);
    assert_eq!(m["into"]["body"], "beta words\n\nalpha words", "{m}");
    let hits = ok(&env, &["recall", "--user", "alpha"]);
    assert_eq!(hits["hits"][0]["name"], "b", "{hits}");
}
