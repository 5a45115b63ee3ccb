//! Data-driven selector tests: each `tests/fixtures/<dir>/` with an
//! `expected_selectors.txt` is indexed for real (SQLite file in a temp dir) and every
//! selector in it must name exactly the expected definitions.
//!
//! Line format: `<selector> -> <file>:<qualified name>[, <file>:<qualified name>...]`,
//! or `<selector> -> not found`.

use crate::common;

use std::path::Path;

use loci_index::graph::{Graph, QueryError};

fn named(graph: &Graph, selector: &str) -> String {
    match graph.def(selector) {
        Ok(found) => found
            .iter()
            .map(|s| format!("{}:{}", s.path, s.qualified_name))
            .collect::<Vec<_>>()
            .join(", "),
        Err(QueryError::NotFound { .. }) => "not found".into(),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn every_fixture_selector_names_its_expected_definitions() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in dirs {
        let Ok(expected) = std::fs::read_to_string(dir.join("expected_selectors.txt")) else {
            continue;
        };
        let work = tempfile::tempdir().unwrap();
        common::copy_tree(&dir, work.path());
        common::index(work.path());
        let graph = Graph::open(work.path()).unwrap();
        for line in expected
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let (selector, want) = line.split_once(" -> ").expect("`selector -> expected`");
            let got = named(&graph, selector);
            if got != want {
                failures.push(format!(
                    "{}: `{selector}`\n  expected: {want}\n  got:      {got}",
                    dir.display()
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 10, "expected selector fixtures, found {checked}");
}

/// On tokio: `task::spawn_blocking`, written as code inside tokio names it, reaches the
/// definition `tokio::task::spawn_blocking` reaches (through `task/mod.rs`'s `pub use`).
#[test]
fn a_path_relative_to_a_crate_names_what_the_full_path_names_on_tokio() {
    let tokio = common::newest_registry_crate("tokio-1.");
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(tokio.join("Cargo.toml"), work.path().join("Cargo.toml")).unwrap();
    std::fs::create_dir_all(work.path().join("src")).unwrap();
    std::fs::copy(tokio.join("src/lib.rs"), work.path().join("src/lib.rs")).unwrap();
    common::copy_tree(&tokio.join("src/task"), &work.path().join("src/task"));
    common::index(work.path());
    let graph = Graph::open(work.path()).unwrap();
    let full = named(&graph, "tokio::task::spawn_blocking");
    assert_eq!(full, "src/task/blocking.rs:spawn_blocking");
    assert_eq!(named(&graph, "task::spawn_blocking"), full);
    // A path no crate leads through stays not found.
    assert_eq!(named(&graph, "nowhere::spawn_blocking"), "not found");
}
