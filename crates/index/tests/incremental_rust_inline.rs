//! Incremental runs equal a fresh index when Rust's module graph changes through an
//! inline `mod m { .. }` or a `#[path]` attribute: a changed `#[path]` re-points the
//! paths of files that did not change (`crate::imp::f()` in another file), and so does a
//! `#[cfg_attr(.., path = "..")]` file that appears or goes.

use crate::common;

use common::{calls_from, index, reindex_equals_fresh, write_tree};

#[test]
fn a_changed_path_attribute_and_inline_modules_equal_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"pa\"\nversion = \"0.1.0\"\n",
            ),
            (
                "src/lib.rs",
                "#[path = \"a_impl.rs\"]\nmod imp;\nmod caller;\n",
            ),
            ("src/a_impl.rs", "pub fn f() {}\n"),
            ("src/b_impl.rs", "pub fn f() {}\n"),
            ("src/imp.rs", "pub fn f() {}\n"),
            (
                "src/caller.rs",
                "pub fn call() {\n    crate::imp::f();\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(calls_from(root, "call"), ["src/a_impl.rs:f"]);
    let step = |what: &str, lib: &str, expected: &[&str]| {
        write_tree(root, &[("src/lib.rs", lib)]);
        reindex_equals_fresh(root, what, "call", expected);
    };
    step(
        "pointing the #[path] at another file",
        "#[path = \"b_impl.rs\"]\nmod imp;\nmod caller;\n",
        &["src/b_impl.rs:f"],
    );
    step(
        "dropping the #[path] (imp.rs is the module again)",
        "mod imp;\nmod caller;\n",
        &["src/imp.rs:f"],
    );
    step(
        "making the module inline",
        "mod imp {\n    pub fn f() {}\n}\nmod caller;\n",
        &["src/lib.rs:imp::f"],
    );
    // (A file imp.rs beside the root would be taken for the module `imp`.)
    std::fs::remove_file(root.join("src/imp.rs")).unwrap();
    step(
        "a #[path] inside an inline module (relative to src/outer/)",
        "pub mod outer {\n    #[path = \"../a_impl.rs\"]\n    pub mod imp;\n}\npub use outer::imp;\nmod caller;\n",
        &["src/a_impl.rs:f"],
    );
}

#[test]
fn cfg_attr_path_files_that_appear_and_go_equal_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"ca\"\nversion = \"0.1.0\"\n",
            ),
            (
                "src/lib.rs",
                "#[cfg_attr(unix, path = \"u_impl.rs\")]\n#[cfg_attr(windows, path = \"w_impl.rs\")]\nmod imp;\nmod caller;\n",
            ),
            ("src/u_impl.rs", "pub fn f() {}\n"),
            ("src/imp.rs", "pub fn f() {}\n"),
            (
                "src/caller.rs",
                "pub fn call() {\n    crate::imp::f();\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(calls_from(root, "call"), ["src/u_impl.rs:f"]);
    let check = |what: &str, expected: &[&str]| {
        reindex_equals_fresh(root, what, "call", expected);
    };
    write_tree(root, &[("src/w_impl.rs", "pub fn f() {}\n")]);
    check(
        "adding the second cfg_attr path's file",
        &["src/u_impl.rs:f", "src/w_impl.rs:f"],
    );
    std::fs::remove_file(root.join("src/u_impl.rs")).unwrap();
    check("removing the first one's file", &["src/w_impl.rs:f"]);
    std::fs::remove_file(root.join("src/w_impl.rs")).unwrap();
    check(
        "removing the last declared file (imp.rs is the module again)",
        &["src/imp.rs:f"],
    );
    write_tree(root, &[("src/u_impl.rs", "pub fn f() {}\n")]);
    check("a declared file appearing again", &["src/u_impl.rs:f"]);
}
