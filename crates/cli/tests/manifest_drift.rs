//! A `Cargo.toml` change that renames a crate is drift (no source file changed), and
//! the sync it calls for re-resolves the Rust files that name the crate, to exactly
//! what a fresh index of the renamed tree holds.

use crate::common;

use std::path::Path;

use common::Env;

const TREE: &[(&str, &str)] = &[
    ("alpha/Cargo.toml", "[package]\nname = \"alpha\"\n"),
    ("alpha/src/lib.rs", "pub fn run() {}\n"),
    ("app/Cargo.toml", "[package]\nname = \"app\"\n"),
    ("app/src/lib.rs", "pub fn go() {\n    beta::run();\n}\n"),
];

fn dump(root: &Path) -> String {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    loci_index::dump(&conn).unwrap()
}

/// The CALLS edges from `app::go`, as (target qualified name, confidence).
fn calls_from_go(env: &Env) -> serde_json::Value {
    let (code, out) = env.json(&[
        "query",
        "SELECT d.qualified_name, e.confidence FROM edges e
         JOIN symbols s ON s.id = e.src_symbol JOIN symbols d ON d.id = e.dst_symbol
         WHERE e.kind = 'CALLS' AND s.name = 'go'",
    ]);
    assert_eq!(code, 0, "{out}");
    out["rows"].clone()
}

#[test]
fn a_crate_rename_in_cargo_toml_is_drift_and_sync_reresolves_the_crates_users() {
    let env = Env::new();
    env.write(TREE);
    let (code, _) = env.json(&["index", "."]);
    assert_eq!(code, 0);
    // No crate is named `beta` yet: the call reaches nothing.
    assert_eq!(calls_from_go(&env), serde_json::json!([]));

    // Touched without a change to the crate map: not drift.
    env.write(&[("alpha/Cargo.toml", "[package]\nname = \"alpha\"\n\n")]);
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "clean", "{status}");

    env.write(&[("alpha/Cargo.toml", "[package]\nname = \"beta\"\n")]);
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "drift", "{status}");
    assert_eq!(status["facts"]["drift"]["manifests"], 1, "{status}");
    assert_eq!(status["facts"]["drift"]["changed"], 0, "{status}");
    assert!(
        status["reason"].as_str().unwrap().contains("Cargo.toml"),
        "{status}"
    );

    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        calls_from_go(&env),
        serde_json::json!([["run", "exact"]]),
        "the call now reaches the renamed crate's function"
    );
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "clean", "{status}");

    // Equal to a fresh index of the renamed tree.
    let fresh = Env::new();
    fresh.write(TREE);
    fresh.write(&[("alpha/Cargo.toml", "[package]\nname = \"beta\"\n")]);
    let (code, _) = fresh.json(&["index", "."]);
    assert_eq!(code, 0);
    assert_eq!(dump(env.root()), dump(fresh.root()));
}
