//! `loci remember`, `recall` and `memory ...` through the real binary over a real
//! index: versions and consent, concurrent writers from two processes, staleness
//! when linked code changes, moves or disappears, and bad input refused whole.

use crate::common;

use std::io::Write;
use std::process::Stdio;

use common::Env;
use loci_api::ErrorKind;

const LIB: &str = "pub fn parse_args(x: u32) -> u32 {\n    x + 1\n}\n\npub fn run() -> u32 {\n    parse_args(1)\n}\n";

fn indexed() -> Env {
    let env = Env::new();
    env.write(&[("src/lib.rs", LIB)]);
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

fn reindex(env: &Env) {
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 0, "{out}");
}

fn link_states(view: &serde_json::Value) -> Vec<String> {
    view["checked_links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["status"]["state"].as_str().unwrap().to_string())
        .collect()
}

fn exit(kind: ErrorKind) -> i32 {
    i32::from(kind.exit().code())
}

#[test]
fn a_mentioned_function_is_linked_and_the_memory_turns_stale_when_it_changes() {
    let env = indexed();
    let out = remember(
        &env,
        "args",
        "We chose that `parse_args` adds one.",
        &["--type", "decision"],
    );
    assert_eq!(
        out["checked_links"][0]["key"]["qualified_name"],
        "parse_args"
    );
    assert_eq!(out["checked_links"][0]["origin"], "auto");
    assert_eq!(link_states(&out), ["fresh"]);
    assert_eq!(out["stale"], false);

    env.write(&[("src/lib.rs", &LIB.replace("x + 1", "x + 2"))]);
    reindex(&env);
    let (code, read) = env.json(&["memory", "read", "args"]);
    assert_eq!(code, 0, "{read}");
    assert_eq!(read["stale"], true, "{read}");
    let reason = read["stale_reasons"][0].as_str().unwrap();
    assert!(
        reason.contains("src/lib.rs:parse_args (function) changed since it was linked"),
        "{reason}"
    );
    // Every result that shows the memory says so: recall and impact too.
    let (_, hits) = env.json(&["recall", "adds", "one"]);
    assert_eq!(hits["hits"][0]["name"], "args");
    assert_eq!(hits["hits"][0]["stale"], true, "{hits}");
    assert_eq!(
        hits["hits"][0]["snippet"], "We chose that `parse_args` adds one.",
        "{hits}"
    );
    let (_, impact) = env.json(&["impact", "parse_args"]);
    assert_eq!(impact["memories"][0]["name"], "args", "{impact}");
    assert_eq!(impact["memories"][0]["stale"], true);
}

#[test]
fn a_renamed_file_is_followed_and_a_moved_and_changed_function_is_reported_missing() {
    let env = indexed();
    remember(&env, "args", "`parse_args` is pure.", &[]);
    std::fs::rename(
        env.root().join("src/lib.rs"),
        env.root().join("src/core.rs"),
    )
    .unwrap();
    reindex(&env);
    let (_, read) = env.json(&["memory", "read", "args"]);
    assert_eq!(link_states(&read), ["followed"], "{read}");
    assert_eq!(
        read["checked_links"][0]["status"]["to"]["path"],
        "src/core.rs"
    );
    assert_eq!(read["stale"], false);
    // The move is stored: the next read finds it in place.
    let (_, again) = env.json(&["memory", "read", "args"]);
    assert_eq!(link_states(&again), ["fresh"], "{again}");
    assert_eq!(again["links"][0]["key"]["path"], "src/core.rs");

    // Moved again and changed: never silently followed.
    std::fs::remove_file(env.root().join("src/core.rs")).unwrap();
    env.write(&[("src/other.rs", &LIB.replace("x + 1", "x * 3"))]);
    reindex(&env);
    let (_, read) = env.json(&["memory", "read", "args"]);
    assert_eq!(link_states(&read), ["missing"], "{read}");
    let reason = read["stale_reasons"][0].as_str().unwrap();
    assert!(
        reason.contains("src/other.rs:parse_args"),
        "names the candidate: {reason}"
    );
    assert_eq!(read["stale"], true);
}

#[test]
fn a_deleted_function_makes_its_memory_stale() {
    let env = indexed();
    remember(
        &env,
        "run-note",
        "See src/lib.rs:5 for the entry point.",
        &[],
    );
    let (_, read) = env.json(&["memory", "read", "run-note"]);
    assert_eq!(
        read["checked_links"][0]["key"]["qualified_name"], "run",
        "path:line is the enclosing symbol: {read}"
    );
    env.write(&[(
        "src/lib.rs",
        "pub fn parse_args(x: u32) -> u32 {\n    x + 1\n}\n",
    )]);
    reindex(&env);
    let (_, read) = env.json(&["memory", "read", "run-note"]);
    assert_eq!(link_states(&read), ["missing"], "{read}");
    assert!(
        read["stale_reasons"][0]
            .as_str()
            .unwrap()
            .contains("no longer in the index")
    );
}

#[test]
fn every_mutation_is_in_history_and_purge_needs_consent() {
    let env = indexed();
    remember(&env, "n", "first", &[]);
    for args in [
        vec!["memory", "edit", "n", "second"],
        vec!["memory", "rename", "n", "m"],
        vec!["memory", "forget", "m"],
        vec!["memory", "restore", "m"],
        vec!["memory", "restore", "m", "1"],
    ] {
        let (code, out) = env.json(&args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    let (_, h) = env.json(&["memory", "history", "m"]);
    let ops: Vec<&str> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["op"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        ["create", "edit", "rename", "forget", "restore", "restore"]
    );
    let (_, read) = env.json(&["memory", "read", "m"]);
    assert_eq!(read["body"], "first");

    let (code, out) = env.json(&["memory", "purge", "m"]);
    assert_eq!(code, exit(ErrorKind::ConsentRequired), "{out}");
    assert_eq!(out["error"]["kind"], "consent_required");
    let (code, _) = env.json(&["memory", "read", "m"]);
    assert_eq!(code, 0, "nothing purged without consent");
    let (code, out) = env.json(&["memory", "purge", "m", "--yes"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["versions"], 6);
    let (code, _) = env.json(&["memory", "read", "m"]);
    assert_eq!(code, exit(ErrorKind::NotFound));
}

#[test]
fn two_processes_editing_at_once_never_lose_a_version() {
    let env = indexed();
    remember(&env, "shared", "v0", &[]);
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let mut cmd = std::process::Command::new("sh");
            cmd.arg("-c")
                .arg(format!(
                    "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do \"$LOCI\" memory edit shared \"w{w}-$i\" --json >/dev/null || exit 1; done"
                ))
                .env("LOCI", common::bin())
                .env("LOCI_HOME", env.home.path())
                .current_dir(env.root());
            cmd.spawn().unwrap()
        })
        .collect();
    for mut w in writers {
        assert!(w.wait().unwrap().success());
    }
    let (_, h) = env.json(&["memory", "history", "shared"]);
    let versions = h["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 25);
    let numbers: Vec<u64> = versions
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=25).collect::<Vec<u64>>());
    for w in 0..2 {
        for i in 1..=12 {
            let body = format!("w{w}-{i}");
            assert!(
                versions.iter().any(|v| v["body"] == body.as_str()),
                "{body} lost"
            );
        }
    }
}

#[test]
fn a_memory_in_the_wrong_state_is_memory_state_and_keeps_its_versions() {
    let env = indexed();
    remember(&env, "w", "kept body", &[]);
    // Restoring a live memory without a version: nothing to undo.
    let (code, out) = env.json(&["memory", "restore", "w"]);
    assert_eq!(code, exit(ErrorKind::MemoryState), "{out}");
    assert_eq!(out["error"]["kind"], "memory_state");
    assert_eq!(ErrorKind::MemoryState.http_status(), 409);
    let (code, out) = env.json(&["memory", "forget", "w"]);
    assert_eq!(code, 0, "{out}");
    // A forgotten memory is neither edited nor forgotten again.
    for args in [
        vec!["memory", "edit", "w", "new body"],
        vec!["memory", "forget", "w"],
    ] {
        let (code, out) = env.json(&args);
        assert_eq!(code, exit(ErrorKind::MemoryState), "{args:?}: {out}");
        assert!(
            out["error"]["message"]
                .as_str()
                .unwrap()
                .contains("restore it first"),
            "{out}"
        );
    }
    let (_, h) = env.json(&["memory", "history", "w"]);
    assert_eq!(h["versions"].as_array().unwrap().len(), 2, "{h}");
    let (code, out) = env.json(&["memory", "restore", "w"]);
    assert_eq!(code, 0, "{out}");
    let (_, read) = env.json(&["memory", "read", "w"]);
    assert_eq!(read["body"], "kept body");
}

#[test]
fn bad_input_is_refused_with_its_exit_code_and_nothing_is_stored() {
    let env = indexed();
    remember(&env, "kept", "the one good memory", &[]);
    let count = || {
        let (_, l) = env.json(&["memory", "list", "--forgotten"]);
        (
            l["total"].as_u64().unwrap(),
            env.json(&["memory", "stats"]).1["entities"]
                .as_u64()
                .unwrap(),
        )
    };
    assert_eq!(count(), (1, 0));

    let big = env.root().join("big.txt");
    std::fs::write(&big, vec![b'a'; 512 * 1024 + 1]).unwrap();
    let (code, out) = env.json(&["remember", "--name", "big", "--file", big.to_str().unwrap()]);
    assert_eq!(code, exit(ErrorKind::TooLong), "{out}");
    assert!(
        out["error"]["message"].as_str().unwrap().contains("524288"),
        "{out}"
    );

    let mut child = env
        .cmd()
        .args(["remember", "--name", "latin1", "--stdin", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"caf\xe9").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(exit(ErrorKind::InvalidInput)));
    let v = common::parse(&out);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid UTF-8"),
        "{v}"
    );

    for (args, kind) in [
        (
            vec!["--entities", r#"[{"name": "A", "kind": "x"}]"#],
            ErrorKind::InvalidInput,
        ),
        (
            vec![
                "--entities",
                r#"[{"name": "A", "type": "service"}]"#,
                "--relationships",
                r#"[{"source": "A", "target": "Ghost", "relation": "calls"}]"#,
            ],
            ErrorKind::NotFound,
        ),
        (vec!["--type", "gossip"], ErrorKind::InvalidInput),
        (vec!["--link", "no_such_function"], ErrorKind::NotFound),
    ] {
        let mut full = vec!["remember", "--name", "bad", "body"];
        full.extend(args.iter().copied());
        let (code, out) = env.json(&full);
        assert_eq!(code, exit(kind), "{args:?}: {out}");
    }
    let (code, out) = env.json(&["remember", "--name", "kept", "again"]);
    assert_eq!(code, exit(ErrorKind::NameTaken), "{out}");
    assert_eq!(out["error"]["kind"], "name_taken");
    assert_eq!(count(), (1, 0), "nothing stored half-way");
    let (_, read) = env.json(&["memory", "read", "kept"]);
    assert_eq!(read["body"], "the one good memory");
}

#[test]
fn memory_survives_a_rebuild_and_lives_beside_an_index_placed_elsewhere() {
    let env = indexed();
    remember(&env, "durable", "kept across rebuilds", &[]);
    let (code, out) = env.json(&["rebuild", "--yes"]);
    assert_eq!(code, 0, "{out}");
    let (code, read) = env.json(&["memory", "read", "durable"]);
    assert_eq!(code, 0, "{read}");

    let other = Env::new();
    other.write(&[("a.py", "def f():\n    return 1\n")]);
    let place = tempfile::tempdir().unwrap();
    let index = place.path().join("idx/index.db");
    let (code, out) = other.json(&["index", "--index-path", index.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let out = remember(&other, "f-note", "`f` returns one", &[]);
    assert_eq!(out["checked_links"][0]["key"]["qualified_name"], "f");
    assert!(place.path().join("idx/memory.db").is_file());
    assert!(
        !other.root().join(".loci").exists(),
        "nothing written into the tree"
    );
}

#[test]
fn recall_names_its_sources_and_says_vectors_are_off() {
    let env = indexed();
    remember(
        &env,
        "ledger",
        "The ledger writes invoices hourly",
        &[
            "--entities",
            r#"[{"name": "Ledger", "type": "service"}, {"name": "Billing", "type": "service"}]"#,
            "--relationships",
            r#"[{"source": "Ledger", "target": "Billing", "relation": "writes_to", "weight": 0.8}]"#,
        ],
    );
    remember(
        &env,
        "compaction",
        "Nightly compaction of tables",
        &["--entities", r#"[{"name": "Billing", "type": "service"}]"#],
    );
    remember(&env, "args", "`parse_args` must stay pure", &[]);
    let (code, a) = env.json(&["recall", "ledger"]);
    assert_eq!(code, 0, "{a}");
    assert_eq!(a["vectors"]["state"], "off");
    let names: Vec<&str> = a["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ledger", "compaction"]);
    assert_eq!(a["hits"][0]["why"]["fts"]["rank"], 1);
    assert!(
        a["hits"][1]["why"]["graph"]["path"]
            .to_string()
            .contains("entity:Billing"),
        "{a}"
    );

    // --symbol: memories linked to the symbol or to what its change reaches.
    let (_, s) = env.json(&["recall", "--symbol", "parse_args"]);
    let names: Vec<&str> = s["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["args"], "{s}");
    let (_, s) = env.json(&["recall", "--symbol", "run"]);
    assert!(
        s["hits"].as_array().unwrap().is_empty(),
        "run's change reaches no linked code: {s}"
    );
    let (code, s) = env.json(&["recall", "--symbol", "nope"]);
    assert_eq!(code, exit(ErrorKind::NotFound), "{s}");

    let out = env.cmd().args(["recall", "ledger"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("vectors: off"));
}

#[test]
fn the_user_store_is_separate_and_needs_no_index() {
    let env = Env::new();
    let (code, out) = env.json(&[
        "remember",
        "--user",
        "--name",
        "style",
        "I like short names",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(env.home.path().join("memory.db").is_file());
    let (_, l) = env.json(&["memory", "list"]);
    assert_eq!(l["total"], 0, "the workspace store does not see it");
    let (_, l) = env.json(&["memory", "list", "--user"]);
    assert_eq!(l["memories"][0]["name"], "style");
}

#[test]
fn graph_export_and_entities_commands_work_on_the_binary() {
    let env = indexed();
    remember(
        &env,
        "a",
        "a",
        &[
            "--entities",
            r#"[{"name": "X", "type": "t"}, {"name": "Y", "type": "t"}]"#,
            "--relationships",
            r#"[{"source": "X", "target": "Y", "relation": "uses"}]"#,
        ],
    );
    let out = env
        .cmd()
        .args(["memory", "graph-export", "--format", "dot"])
        .output()
        .unwrap();
    let dot = String::from_utf8(out.stdout).unwrap();
    assert!(dot.contains("\"entity:X\" -> \"entity:Y\""), "{dot}");
    let out = env
        .cmd()
        .args(["memory", "graph-export", "--format", "mermaid"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("flowchart LR")
    );
    let (code, out) = env.json(&["memory", "graph-export", "--format", "svg"]);
    assert_eq!(code, exit(ErrorKind::InvalidInput), "{out}");
    let (code, out) = env.json(&["memory", "entities", "merge", "Y", "X"]);
    assert_eq!(code, 0, "{out}");
    assert!(out["aliases"].to_string().contains("Y"));
    let (_, e) = env.json(&["memory", "entities"]);
    assert_eq!(e["entities"].as_array().unwrap().len(), 1);
}
