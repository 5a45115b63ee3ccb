//! Files are keyed by the exact bytes of their names. Two names that differ only in
//! bytes that are not UTF-8 (`x\xff.rs`, `x\xfe.rs`) show as the same text, yet are two
//! files: both are indexed, searched, compared for drift and kept incrementally, and an
//! index from before (schema v3, keyed by the lossy text) migrates keeping its ids.

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use common::{assert_same_as_fresh, downgrade_to_v3, dump, index, write_tree};
use loci_index::drift::{DriftOptions, drift};
use loci_index::graph::{Graph, QueryError, SearchOptions, find, impact, search};
use loci_store::rusqlite;

/// `root` joined with a name given as raw bytes.
fn raw(root: &Path, name: &[u8]) -> PathBuf {
    root.join(OsStr::from_bytes(name))
}

/// The two colliding names and their definitions.
fn write_colliding(root: &Path) {
    std::fs::write(raw(root, b"x\xff.rs"), "fn alpha_fn() { beta_fn(); }\n").unwrap();
    std::fs::write(raw(root, b"x\xfe.rs"), "fn beta_fn() { /* needle */ }\n").unwrap();
}

fn names_found(root: &Path, pattern: &str) -> Vec<(String, String)> {
    let graph = Graph::open(root).unwrap();
    let (found, _) = find(&graph, pattern, None, None, 100).unwrap();
    let mut out: Vec<(String, String)> = found.into_iter().map(|s| (s.name, s.path)).collect();
    out.sort();
    out
}

#[test]
fn colliding_lossy_names_are_both_indexed_and_later_runs_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("lib.rs", "fn gamma_fn() {}\n")]);
    write_colliding(root);
    let report = index(root);
    assert_eq!(report.files_indexed, 3, "{report:?}");
    let shown = "x\u{fffd}.rs".to_string();
    assert_eq!(
        names_found(root, "*_fn"),
        [
            ("alpha_fn".to_string(), shown.clone()),
            ("beta_fn".to_string(), shown.clone()),
            ("gamma_fn".to_string(), "lib.rs".to_string()),
        ]
    );

    // A change elsewhere is indexed: the index is not stuck.
    write_tree(root, &[("lib.rs", "fn delta_fn() {}\n")]);
    let report = index(root);
    assert_eq!((report.files_parsed, report.files_indexed), (1, 3));
    assert_eq!(names_found(root, "delta_fn").len(), 1);
    assert_eq!(names_found(root, "*_fn").len(), 3);
    // And a run with no change writes nothing.
    assert!(!index(root).wrote);
}

#[test]
fn search_reads_each_colliding_file_by_its_exact_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_colliding(root);
    index(root);
    let graph = Graph::open(root).unwrap();
    let hits = |pattern: &str| {
        let (hits, _) = search(&graph, pattern, &SearchOptions::default()).unwrap();
        hits.into_iter()
            .map(|h| (h.path, h.line, h.text))
            .collect::<Vec<_>>()
    };
    let shown = "x\u{fffd}.rs".to_string();
    assert_eq!(
        hits("alpha_fn"),
        [(shown.clone(), 1, "fn alpha_fn() { beta_fn(); }".to_string())]
    );
    assert_eq!(
        hits("needle"),
        [(
            shown.clone(),
            1,
            "fn beta_fn() { /* needle */ }".to_string()
        )]
    );
    // `beta_fn` is in both files.
    assert_eq!(hits("beta_fn").len(), 2);
}

#[test]
fn incremental_equals_fresh_as_names_that_are_not_utf8_come_and_go() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[("main.rs", "fn main() { alpha_fn(); beta_fn(); }\n")],
    );
    index(root);

    write_colliding(root);
    let report = index(root);
    assert_eq!(report.files_parsed, 2);
    assert_same_as_fresh(root);

    // A third name shown the same way, then one of the first two removed.
    std::fs::write(raw(root, b"x\x80.rs"), "fn alpha_fn() {}\n").unwrap();
    index(root);
    assert_same_as_fresh(root);
    std::fs::remove_file(raw(root, b"x\xff.rs")).unwrap();
    let report = index(root);
    assert_eq!(report.files_removed, 1);
    assert_same_as_fresh(root);

    // A changed one is re-parsed in place, the other untouched.
    std::fs::write(raw(root, b"x\xfe.rs"), "fn beta_fn() { alpha_fn(); }\n").unwrap();
    let report = index(root);
    assert_eq!((report.files_parsed, report.files_unchanged), (1, 2));
    assert_same_as_fresh(root);
}

#[test]
fn drift_compares_colliding_names_by_their_exact_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    write_colliding(&root);
    index(&root);
    let check = || drift(&DriftOptions::new(&root)).unwrap();
    let clean = check();
    assert!(!clean.is_drift(), "{clean:?}");
    assert_eq!(clean.unchanged, 2);

    // One removed and another of the same shown name added: one of each, not "unchanged".
    std::fs::remove_file(raw(&root, b"x\xff.rs")).unwrap();
    std::fs::write(raw(&root, b"x\x80.rs"), "fn alpha_fn() {}\n").unwrap();
    let r = check();
    assert_eq!((r.added, r.removed, r.unchanged), (1, 1, 1), "{r:?}");
}

#[test]
fn outline_and_impact_take_a_shown_name_that_names_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(raw(root, b"y\xff.rs"), "fn only_fn() {}\n").unwrap();
    write_colliding(root);
    index(root);
    let graph = Graph::open(root).unwrap();

    let outline = graph.outline("y\u{fffd}.rs").unwrap();
    assert_eq!(outline.len(), 1);
    assert_eq!(outline[0].symbol.name, "only_fn");
    assert_eq!(outline[0].symbol.path, "y\u{fffd}.rs");
    assert!(impact(&graph, "y\u{fffd}.rs", 1, false).is_ok());

    // The shown name of two files names neither: a clear refusal naming both.
    for refused in [
        graph.outline("x\u{fffd}.rs").map(|_| ()),
        impact(&graph, "x\u{fffd}.rs", 1, false).map(|_| ()),
    ] {
        match refused {
            Err(QueryError::Invalid(message)) => {
                assert!(
                    message.contains(r"x\xFF.rs") && message.contains(r"x\xFE.rs"),
                    "{message}"
                );
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}

#[test]
fn a_v3_index_migrates_keeping_symbol_ids_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            (
                "src/lib.rs",
                "mod util;\npub fn run() { util::helper(); }\n",
            ),
            ("src/util.rs", "pub fn helper() {}\n"),
            ("app/main.py", "def main():\n    return 1\n"),
        ],
    );
    index(root);
    let before = dump(root);
    let db = loci_store::index_path_for(root);
    let ids = |conn: &rusqlite::Connection| -> Vec<(i64, String, String)> {
        conn.prepare(
            "SELECT s.id, f.path, s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id
             ORDER BY s.id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let ids_before = ids(&rusqlite::Connection::open(&db).unwrap());
    downgrade_to_v3(&rusqlite::Connection::open(&db).unwrap());
    assert!(loci_store::open_index_read_only(&db).is_err());

    // The writer migrates it: same ids and facts.
    let conn = loci_store::open_index(&db).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, loci_store::SCHEMA_VERSION);
    let foreign_keys: bool = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert!(foreign_keys, "foreign keys are back on once migrated");
    assert_eq!(ids(&conn), ids_before);
    drop(conn);
    // V5 (references carry their receiver's type) re-parses every file, keeping ids.
    let report = index(root);
    assert_eq!((report.files_parsed, report.files_unchanged), (3, 0));
    assert_eq!(dump(root), before);
    assert_eq!(ids(&rusqlite::Connection::open(&db).unwrap()), ids_before);

    // And the migrated index takes the names v3 could not.
    write_colliding(root);
    let report = index(root);
    assert_eq!(report.files_parsed, 2);
    assert_eq!(names_found(root, "*_fn").len(), 2);
    assert_same_as_fresh(root);
}

#[test]
fn a_v3_index_holding_a_lossy_name_recovers_to_the_fresh_index() {
    // What v3 left when a name was not UTF-8: its lossy text as the key, and a second
    // file of the same shown name then failed every run.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("main.rs", "fn main() { alpha_fn(); }\n")]);
    std::fs::write(raw(root, b"x\xff.rs"), "fn alpha_fn() {}\n").unwrap();
    index(root);
    let db = loci_store::index_path_for(root);
    downgrade_to_v3(&rusqlite::Connection::open(&db).unwrap());
    std::fs::write(raw(root, b"x\xfe.rs"), "fn beta_fn() {}\n").unwrap();

    let report = index(root);
    // The lossy row names no file: it goes, and both true names come in (V5 re-parses
    // `main.rs` too).
    assert_eq!(
        (
            report.files_removed,
            report.files_parsed,
            report.files_indexed
        ),
        (1, 3, 3),
        "{report:?}"
    );
    assert_same_as_fresh(root);
    assert_eq!(names_found(root, "*_fn").len(), 2);
}
