//! Incremental indexing must end in exactly the index a fresh full run builds.

use crate::common;

use common::{assert_same_as_fresh, dump, index, write_tree};

const BASE: &[(&str, &str)] = &[
    (
        "src/lib.rs",
        "mod util;\npub use util::helper;\n/// Entry.\npub fn run() { helper(); Shape::area(); }\npub struct Shape;\nimpl Shape { pub fn area() -> u32 { util::helper() } }\n",
    ),
    (
        "src/util.rs",
        "pub fn helper() -> u32 { 1 }\npub fn unused() {}\n",
    ),
    (
        "app/main.py",
        "from app.models import Model\n\ndef main():\n    m = Model()\n    return m.save()\n",
    ),
    (
        "app/models.py",
        "class Base:\n    def save(self):\n        return 1\n\nclass Model(Base):\n    pass\n",
    ),
    (
        "web/index.js",
        "import { greet } from './greet.js';\nexport function start() { return greet('x'); }\n",
    ),
    (
        "web/greet.js",
        "export function greet(n) { return 'hi ' + n; }\n",
    ),
];

#[test]
fn modify_add_delete_rename_equals_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, BASE);
    let first = index(root);
    assert_eq!(first.files_indexed, 6);
    assert!(first.symbols > 0 && first.edges > 0);

    // Modify: helper renamed to aid; callers now unresolved until they change too.
    write_tree(
        root,
        &[(
            "src/util.rs",
            "pub fn aid() -> u32 { 2 }\npub fn unused() {}\n",
        )],
    );
    let report = index(root);
    assert_eq!(report.files_parsed, 1);
    assert_same_as_fresh(root);

    // Add a file that defines what was missing.
    write_tree(root, &[("src/extra.rs", "pub fn helper() -> u32 { 3 }\n")]);
    let report = index(root);
    assert_eq!(report.files_parsed, 1);
    assert_same_as_fresh(root);

    // Delete the defining file of a base class.
    std::fs::remove_file(root.join("app/models.py")).unwrap();
    let report = index(root);
    assert_eq!(report.files_removed, 1);
    assert_same_as_fresh(root);

    // Rename a file (delete + add) that others import.
    std::fs::rename(root.join("web/greet.js"), root.join("web/hello.js")).unwrap();
    write_tree(
        root,
        &[(
            "web/index.js",
            "import { greet } from './hello.js';\nexport function start() { return greet('x'); }\n",
        )],
    );
    let report = index(root);
    assert_eq!(report.files_parsed, 2);
    assert_eq!(report.files_removed, 1);
    assert_same_as_fresh(root);
}

#[test]
fn no_change_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), BASE);
    index(dir.path());
    let before = database_bytes(dir.path());
    let report = index(dir.path());
    assert!(!report.wrote);
    assert_eq!(report.files_parsed, 0);
    assert_eq!(report.files_unchanged, 6);
    assert!(
        before == database_bytes(dir.path()),
        "a no-change run modified the database files"
    );
}

/// The bytes of the index and of its write-ahead log (empty when there is none).
fn database_bytes(root: &std::path::Path) -> (Vec<u8>, Vec<u8>) {
    let db = loci_store::index_path_for(root);
    (
        std::fs::read(&db).unwrap(),
        std::fs::read(db.with_extension("db-wal")).unwrap_or_default(),
    )
}

#[test]
fn no_change_run_with_skipped_files_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), BASE);
    let huge = "// filler\n".repeat(120_000);
    write_tree(
        dir.path(),
        &[
            ("src/binary.rs", "fn a() {}\0\0"),
            ("src/huge.rs", huge.as_str()),
        ],
    );
    let first = index(dir.path());
    let reasons = |report: &loci_index::IndexReport| -> Vec<(String, &'static str)> {
        report
            .skipped
            .iter()
            .map(|s| (s.path.clone(), s.reason.name()))
            .collect()
    };
    let expected = [
        ("src/binary.rs".to_string(), "binary"),
        ("src/huge.rs".to_string(), "too_large"),
    ];
    assert_eq!(reasons(&first), expected);
    let before = database_bytes(dir.path());
    let report = index(dir.path());
    assert!(!report.wrote);
    assert_eq!(report.files_parsed, 0);
    assert_eq!(reasons(&report), expected);
    assert_eq!((report.symbols, report.edges), (first.symbols, first.edges));
    assert!(
        before == database_bytes(dir.path()),
        "a run that only skipped files modified the database files"
    );
}

#[test]
fn source_files_are_the_files_an_index_run_considers() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), BASE);
    write_tree(
        dir.path(),
        &[
            (".gitignore", "ignored/\n"),
            ("ignored/skip.rs", "fn hidden() {}\n"),
            ("README.md", "# not source\n"),
            ("bin/tool", "#!/usr/bin/env python3\nprint('hi')\n"),
            ("bin/notes", "no shebang here\n"),
            ("src/binary.rs", "fn a() {}\0"),
        ],
    );
    let report = index(dir.path());
    let mut considered: Vec<String> = loci_index::source_files(dir.path())
        .into_iter()
        .map(|(path, _)| {
            let rel = path.strip_prefix(dir.path()).unwrap();
            rel.to_string_lossy().replace('\\', "/")
        })
        .collect();
    considered.sort();
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(dir.path())).unwrap();
    let mut expected: Vec<String> = conn
        .prepare("SELECT path FROM files")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    expected.extend(report.skipped.iter().map(|s| s.path.clone()));
    expected.sort();
    assert_eq!(considered, expected);
    assert!(
        considered.contains(&"bin/tool".to_string()),
        "{considered:?}"
    );
    assert_eq!(considered.len(), BASE.len() + 2, "{considered:?}");
}

#[test]
fn touched_file_with_same_content_is_not_reparsed() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), BASE);
    index(dir.path());
    let before = dump(dir.path());
    // Rewrite with identical bytes: stat changes, hash does not.
    let path = dir.path().join("src/util.rs");
    let content = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, content).unwrap();
    let report = index(dir.path());
    assert_eq!(report.files_parsed, 0);
    assert_eq!(report.files_touched, 1);
    assert_eq!(dump(dir.path()), before);
}

#[test]
fn cross_file_edges_are_resolved() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), BASE);
    index(dir.path());
    let d = dump(dir.path());
    for expected in [
        "edge | CALLS | src/lib.rs | run | src/util.rs | helper |",
        "edge | CALLS | src/lib.rs | Shape::area | src/util.rs | helper |",
        "edge | CALLS | web/index.js | start | web/greet.js | greet |",
        "edge | CALLS | app/main.py | main | app/models.py | Model |",
        "edge | INHERITS | app/models.py | Model | app/models.py | Base |",
        "edge | IMPORTS | app/main.py | - | app/models.py | Model |",
        "edge | IMPORTS | web/index.js | - | web/greet.js | greet |",
    ] {
        assert!(
            d.lines().any(|l| l.starts_with(expected)),
            "missing `{expected}` in:\n{d}"
        );
    }
}

#[test]
fn editing_a_body_re_resolves_only_that_file() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), BASE);
    index(dir.path());
    // helper() is called from two other places; its definition keeps its id.
    write_tree(
        dir.path(),
        &[(
            "src/util.rs",
            "pub fn helper() -> u32 { 41 + 1 }\npub fn unused() {}\n",
        )],
    );
    let report = index(dir.path());
    assert_eq!(report.files_parsed, 1);
    assert_eq!(
        report.files_resolved, 1,
        "callers of unchanged definitions need no re-resolution"
    );
    assert_same_as_fresh(dir.path());
    // Adding a definition re-resolves the files that use its name.
    write_tree(
        dir.path(),
        &[(
            "src/util.rs",
            "pub fn helper() -> u32 { 42 }\npub fn unused() {}\npub fn area() {}\n",
        )],
    );
    let report = index(dir.path());
    assert_eq!(
        report.files_resolved, 2,
        "util.rs, and lib.rs which calls an `area`"
    );
    assert_same_as_fresh(dir.path());
}

#[test]
fn unresolved_reference_counts_follow_the_definitions_that_appear() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[(
            "src/lib.rs",
            "fn a() { b(); missing(); also_missing(); }\nfn b() {}\n",
        )],
    );
    index(dir.path());
    let unresolved = |root: &std::path::Path| {
        let graph = loci_index::graph::Graph::open(root).unwrap();
        let stats = graph.stats().unwrap();
        (stats.refs, stats.unresolved_refs)
    };
    assert_eq!(unresolved(dir.path()), (3, 2));
    // A definition of one of them appears in another file: the using file is re-resolved.
    write_tree(dir.path(), &[("src/more.rs", "pub fn missing() {}\n")]);
    index(dir.path());
    assert_eq!(unresolved(dir.path()), (3, 1));
    assert_same_as_fresh(dir.path());
}

#[test]
fn stats_breakdowns_equal_the_tables_after_every_kind_of_change() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), BASE);
    let check = |root: &std::path::Path, when: &str| {
        let report = index(root);
        let graph = loci_index::graph::Graph::open(root).unwrap();
        let stats = graph.stats().unwrap();
        let count = |sql: &str| -> u64 {
            graph
                .connection()
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .unwrap() as u64
        };
        assert_eq!(
            report.symbols,
            count("SELECT count(*) FROM symbols"),
            "{when}"
        );
        assert_eq!(report.edges, count("SELECT count(*) FROM edges"), "{when}");
        assert_eq!(
            (stats.symbols, stats.edges),
            (report.symbols, report.edges),
            "{when}"
        );
        let grouped = |sql: &str| -> std::collections::BTreeMap<String, u64> {
            let mut stmt = graph.connection().prepare(sql).unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(
            stats.kinds,
            grouped("SELECT kind, count(*) FROM symbols GROUP BY kind"),
            "{when}"
        );
        assert_eq!(
            stats.edge_kinds,
            grouped("SELECT kind, count(*) FROM edges GROUP BY kind"),
            "{when}"
        );
        assert_eq!(
            stats.confidence,
            grouped("SELECT confidence, count(*) FROM edges GROUP BY confidence"),
            "{when}"
        );
        assert!(
            !stats.kinds.is_empty() && !stats.edge_kinds.is_empty(),
            "{when}"
        );
    };
    check(dir.path(), "fresh");
    // Modify: a definition disappears and a call to it stays.
    write_tree(
        dir.path(),
        &[(
            "src/util.rs",
            "pub fn helper() -> u32 { 1 }
",
        )],
    );
    check(dir.path(), "modified");
    // Add a file with new kinds of definitions.
    write_tree(
        dir.path(),
        &[(
            "src/shapes.rs",
            "pub trait Area { fn area(&self) -> u32; }
pub enum Kind { A }
",
        )],
    );
    check(dir.path(), "added");
    // Delete one.
    std::fs::remove_file(dir.path().join("app/models.py")).unwrap();
    check(dir.path(), "deleted");
}
