//! A change to a module config that resolution reads — `compilerOptions.paths` in a
//! `tsconfig.json`, the `module` line of a `go.mod` — is drift though no source file
//! changed, and the sync it calls for re-resolves the importers, to exactly what a
//! fresh index of the changed tree holds. A config touched without such a change is not.

use crate::common;

use std::path::Path;

use common::Env;

const TREE: &[(&str, &str)] = &[
    (
        "tsconfig.json",
        "{\n  // aliases\n  \"compilerOptions\": { \"paths\": { \"@lib/*\": [\"lib/*\"] } }\n}\n",
    ),
    ("lib/pad.ts", "export function pad() {}\n"),
    ("alt/pad.ts", "export function pad() {}\n"),
    (
        "app/main.ts",
        "import { pad } from '@lib/pad';\nexport function run() {\n  pad();\n}\n",
    ),
    ("go.mod", "module example.com/old\n"),
    ("pkg/x/x.go", "package x\n\nfunc F() {}\n"),
    ("other/pkg/x/x.go", "package x\n\nfunc F() {}\n"),
    (
        "main.go",
        "package main\n\nimport \"example.com/new/pkg/x\"\n\nfunc main() {\n\tx.F()\n}\n",
    ),
];

fn dump(root: &Path) -> String {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    loci_index::dump(&conn).unwrap()
}

/// The files of the definitions the function `caller` calls.
fn callees(env: &Env, caller: &str) -> Vec<String> {
    let (code, out) = env.json(&[
        "query",
        &format!(
            "SELECT df.path FROM edges e JOIN symbols s ON s.id = e.src_symbol
             JOIN files df ON df.id = e.dst_file
             WHERE e.kind = 'CALLS' AND s.name = '{caller}' ORDER BY 1"
        ),
    ]);
    assert_eq!(code, 0, "{out}");
    out["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect()
}

/// `loci status` after writing `files`: the state and the `module_configs` count.
fn status_after(env: &Env, files: &[(&str, &str)]) -> serde_json::Value {
    env.write(files);
    let (_, status) = env.json(&["status"]);
    status
}

fn assert_same_as_fresh(env: &Env, changed: &[(&str, &str)]) {
    let fresh = Env::new();
    fresh.write(TREE);
    fresh.write(changed);
    let (code, _) = fresh.json(&["index", "."]);
    assert_eq!(code, 0);
    assert_eq!(dump(env.root()), dump(fresh.root()));
}

#[test]
fn a_changed_tsconfig_paths_alias_is_drift_and_sync_reresolves_its_importers() {
    let env = Env::new();
    env.write(TREE);
    let (code, _) = env.json(&["index", "."]);
    assert_eq!(code, 0);
    assert_eq!(callees(&env, "run"), ["lib/pad.ts"]);

    // Rewritten with the same settings (a comment dropped): not drift.
    let same = "{ \"compilerOptions\": { \"paths\": { \"@lib/*\": [\"lib/*\"] } } }\n";
    let status = status_after(&env, &[("tsconfig.json", same)]);
    assert_eq!(status["state"], "clean", "{status}");

    let moved = "{ \"compilerOptions\": { \"paths\": { \"@lib/*\": [\"alt/*\"] } } }\n";
    let status = status_after(&env, &[("tsconfig.json", moved)]);
    assert_eq!(status["state"], "drift", "{status}");
    assert_eq!(status["facts"]["drift"]["module_configs"], 1, "{status}");
    assert_eq!(status["facts"]["drift"]["changed"], 0, "{status}");
    assert!(
        status["reason"].as_str().unwrap().contains("tsconfig.json"),
        "{status}"
    );

    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(callees(&env, "run"), ["alt/pad.ts"]);
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "clean", "{status}");
    assert_same_as_fresh(&env, &[("tsconfig.json", moved)]);
}

#[test]
fn a_changed_go_mod_module_path_is_drift_and_sync_reresolves_its_importers() {
    let env = Env::new();
    env.write(TREE);
    let (code, _) = env.json(&["index", "."]);
    assert_eq!(code, 0);
    // No module declares example.com/new: the import is matched by folder names, both.
    assert_eq!(callees(&env, "main"), ["other/pkg/x/x.go", "pkg/x/x.go"]);

    let status = status_after(&env, &[("go.mod", "module example.com/old\n\ngo 1.22\n")]);
    assert_eq!(status["state"], "clean", "{status}");

    let renamed = "module example.com/new\n";
    let status = status_after(&env, &[("go.mod", renamed)]);
    assert_eq!(status["state"], "drift", "{status}");
    assert_eq!(status["facts"]["drift"]["module_configs"], 1, "{status}");
    assert!(
        status["reason"].as_str().unwrap().contains("go.mod"),
        "{status}"
    );

    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(callees(&env, "main"), ["pkg/x/x.go"]);
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "clean", "{status}");
    assert_same_as_fresh(&env, &[("go.mod", renamed)]);
}
