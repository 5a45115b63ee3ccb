//! Incremental runs equal fresh ones for what lives in macro bodies: a definition that
//! appears inside `cfg_x! { .. }`, a macro definition added and removed (macro
//! invocations reach only macros), and a call moved into a macro's arguments.

use crate::common;

use std::fs;

#[test]
fn edits_inside_macro_bodies_give_the_index_a_fresh_run_builds() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::write_tree(
        root,
        &[
            ("src/lib.rs", "mod run;\npub fn start() { run::go(); }\n"),
            ("src/run.rs", "pub fn go() {}\npub fn panic() {}\n"),
        ],
    );
    common::index(root);

    // A definition moves into an item macro; a caller calls it inside `assert!`.
    fs::write(
        root.join("src/run.rs"),
        "cfg_rt! {\n    pub fn go() {}\n}\npub fn panic() {}\n",
    )
    .unwrap();
    fs::write(
        root.join("src/lib.rs"),
        "mod run;\npub fn start() { assert!(run::ok(run::go())); panic!(\"x\"); }\n",
    )
    .unwrap();
    common::index(root);
    assert_eq!(common::calls_from(root, "start"), ["src/run.rs:go"]);
    common::assert_same_as_fresh(root);

    // A macro named like the invocation appears: `panic!` reaches it, not `run::panic`.
    fs::write(
        root.join("src/macros.rs"),
        "#[macro_export]\nmacro_rules! panic { () => {} }\n",
    )
    .unwrap();
    common::index(root);
    assert_eq!(
        common::calls_from(root, "start"),
        ["src/macros.rs:panic", "src/run.rs:go"]
    );
    common::assert_same_as_fresh(root);

    // And goes again.
    fs::remove_file(root.join("src/macros.rs")).unwrap();
    common::index(root);
    assert_eq!(common::calls_from(root, "start"), ["src/run.rs:go"]);
    common::assert_same_as_fresh(root);
}
