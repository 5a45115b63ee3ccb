//! Incremental runs equal a fresh index when Rust's module graph changes through an
//! inline `mod m { .. }` or a `#[path]` attribute: a changed `#[path]` re-points the
//! paths of files that did not change (`crate::imp::f()` in another file).

mod common;

use common::{copy_tree, diff, dump, index, write_tree};

fn differs_from_fresh(root: &std::path::Path) -> Option<String> {
    let fresh = tempfile::tempdir().unwrap();
    copy_tree(root, fresh.path());
    index(fresh.path());
    let (inc, full) = (dump(root), dump(fresh.path()));
    (inc != full).then(|| diff(&inc, &full))
}

/// The `path:qualified name` of every definition `call` (in src/caller.rs) calls.
fn calls_from_caller(root: &std::path::Path) -> Vec<String> {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT df.path || ':' || d.qualified_name FROM edges e
             JOIN symbols s ON s.id = e.src_symbol JOIN symbols d ON d.id = e.dst_symbol
             JOIN files df ON df.id = e.dst_file
             WHERE e.kind = 'CALLS' AND s.name = 'call' ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

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
    assert_eq!(calls_from_caller(root), ["src/a_impl.rs:f"]);
    let step = |what: &str, lib: &str, expected: &[&str]| {
        write_tree(root, &[("src/lib.rs", lib)]);
        assert!(index(root).wrote, "{what}: nothing written");
        if let Some(diff) = differs_from_fresh(root) {
            panic!("after {what}:\n{diff}");
        }
        assert_eq!(calls_from_caller(root), expected, "after {what}");
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
