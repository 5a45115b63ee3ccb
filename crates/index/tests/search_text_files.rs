//! `search` reads every text file the walk sees, not only indexed source: README,
//! manifests, CI configs; never a binary file or one the ignore files leave out; and
//! `source_only` keeps to the index's files. Text files are read as they are now: an
//! edit is found at once, a deleted file is gone. Graph answers do not change.

use std::collections::BTreeSet;

use crate::common;

use loci_index::graph::{self, Graph, SearchOptions, search};

fn hits(g: &Graph, pattern: &str, source_only: bool, path: Option<&str>) -> BTreeSet<String> {
    let opts = SearchOptions {
        limit: 1000,
        source_only,
        path_glob: path.map(str::to_owned),
        ..SearchOptions::default()
    };
    search(g, pattern, &opts)
        .unwrap()
        .0
        .into_iter()
        .map(|h| format!("{}:{}", h.path, h.line))
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn search_covers_every_text_file_and_source_only_keeps_to_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::write_tree(
        root,
        &[
            ("README.md", "# app\n\nMSRV is 1.70.\n"),
            (
                "Cargo.toml",
                "[package]\nname = \"app\"\nrust-version = \"1.70\" # MSRV\n",
            ),
            ("ci/build.yaml", "steps:\n  - run: check MSRV\n"),
            ("src/lib.rs", "// MSRV: keep 1.70\npub fn f() {}\n"),
            (".gitignore", "target/\n"),
            ("target/out.txt", "MSRV in a build output\n"),
        ],
    );
    std::fs::write(root.join("logo.txt"), b"MSRV\0\x01\x02 binary").unwrap();
    let before = common::index(root);
    let g = Graph::open(root).unwrap();
    let all = hits(&g, "MSRV", false, None);
    assert_eq!(
        all,
        set(&[
            "Cargo.toml:3",
            "README.md:3",
            "ci/build.yaml:2",
            "src/lib.rs:1"
        ])
    );
    assert_eq!(hits(&g, "MSRV", true, None), set(&["src/lib.rs:1"]));
    // A path filter naming a text file or folder only.
    assert_eq!(
        hits(&g, "MSRV", false, Some("ci")),
        set(&["ci/build.yaml:2"])
    );
    assert_eq!(hits(&g, "MSRV", false, Some("*.md")), set(&["README.md:3"]));
    assert!(matches!(
        search(
            &g,
            "MSRV",
            &SearchOptions {
                path_glob: Some("*.md".into()),
                source_only: true,
                ..SearchOptions::default()
            }
        ),
        Err(graph::QueryError::NotFound { .. })
    ));

    // Read as they are now: an edit is found, a deleted file is gone.
    std::fs::write(root.join("README.md"), "# app\nthe minimum is 1.75\n").unwrap();
    std::fs::remove_file(root.join("ci/build.yaml")).unwrap();
    assert_eq!(
        hits(&g, "MSRV", false, None),
        set(&["Cargo.toml:3", "src/lib.rs:1"])
    );
    assert_eq!(hits(&g, "minimum is", false, None), set(&["README.md:2"]));

    // The index holds the source file alone: text files add no file, symbol or edge.
    assert_eq!(before.files_indexed, 1, "{before:?}");
    let stats = g.stats().unwrap();
    assert_eq!(stats.files, 1);
}
