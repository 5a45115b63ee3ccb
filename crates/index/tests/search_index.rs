//! The code search index must never hide a match: every line that contains a literal is
//! found, whatever its characters, case or the runs that changed the file.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{dump, index, write_tree};
use loci_index::graph::{Graph, SearchOptions, search};

const TREE: &[(&str, &str)] = &[
    (
        "src/lib.rs",
        "/// Parses a line.\npub fn parse_line(s: &str) -> Result<(), Error> {\n    let v = s.split(\"::\").collect::<Vec<_>>();\n    Ok(())\n}\n",
    ),
    (
        "src/unicode.rs",
        "// Ünïcödé naïve café — 日本語のテキスト\nconst GREETING: &str = \"Grüße, Wörld!\";\nfn éclair() -> u8 { 0x7f }\n",
    ),
    (
        "app/main.py",
        "import os.path\r\n\r\ndef main(argv):\r\n    return os.path.join(*argv) or '{}[]()<>'\r\n",
    ),
    (
        "web/app.ts",
        "export const URL = 'https://example.com/a?b=c&d=e';\nexport function MixedCase() { return `${URL}`; }\n",
    ),
];

fn lines_with(root: &Path, needle: &str, ignore_case: bool) -> BTreeSet<(String, u32)> {
    let mut out = BTreeSet::new();
    for (rel, _) in TREE {
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        for (i, line) in text.lines().enumerate() {
            let hit = if ignore_case {
                line.to_lowercase().contains(&needle.to_lowercase())
            } else {
                line.contains(needle)
            };
            if hit {
                out.insert((rel.to_string(), i as u32 + 1));
            }
        }
    }
    out
}

fn found(root: &Path, needle: &str, ignore_case: bool) -> BTreeSet<(String, u32)> {
    found_in(&Graph::open(root).unwrap(), needle, ignore_case)
}

fn found_in(graph: &Graph, needle: &str, ignore_case: bool) -> BTreeSet<(String, u32)> {
    let opts = SearchOptions {
        ignore_case,
        limit: 10_000,
        ..SearchOptions::default()
    };
    let (hits, truncated) = search(graph, needle, &opts).unwrap();
    assert!(!truncated);
    hits.into_iter().map(|h| (h.path, h.line)).collect()
}

/// Every substring of 3 to 9 characters of every line, as written and upper-cased.
fn needles() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, text) in TREE {
        for line in text.lines() {
            let chars: Vec<char> = line.chars().collect();
            for start in 0..chars.len() {
                for len in 3..=9 {
                    if start + len <= chars.len() {
                        let s: String = chars[start..start + len].iter().collect();
                        out.insert(s.to_uppercase());
                        out.insert(s);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_literal_finds_exactly_the_lines_that_contain_it() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), TREE);
    index(dir.path());
    let needles = needles();
    assert!(needles.len() > 1000, "{}", needles.len());
    let graph = Graph::open(dir.path()).unwrap();
    for needle in &needles {
        for ignore_case in [false, true] {
            assert_eq!(
                found_in(&graph, needle, ignore_case),
                lines_with(dir.path(), needle, ignore_case),
                "{needle:?} ignore_case={ignore_case}"
            );
        }
    }
}

#[test]
fn text_added_by_a_later_run_is_found() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), TREE);
    index(dir.path());
    assert!(found(dir.path(), "brand_new_ident", false).is_empty());
    write_tree(
        dir.path(),
        &[
            ("src/lib.rs", "fn brand_new_ident() -> Ωmega {}\n"),
            ("src/added.rs", "// brand_new_ident again\n"),
        ],
    );
    let report = index(dir.path());
    assert_eq!(report.files_parsed, 2);
    let expected: BTreeSet<(String, u32)> = [("src/added.rs", 1), ("src/lib.rs", 1)]
        .into_iter()
        .map(|(p, l)| (p.to_string(), l))
        .collect();
    assert_eq!(found(dir.path(), "brand_new_ident", false), expected);
    assert_eq!(found(dir.path(), "-> ωMEGA", true).len(), 1);
}

/// Rewrites a current index into what schema version 2 left on disk: a row per
/// reference, indexed by name, and `CONTAINS` edges with a target file, in the index of
/// edges by target.
fn downgrade_to_v2(conn: &rusqlite::Connection) {
    common::downgrade_to_v3(conn);
    conn.execute_batch(
        "UPDATE edges SET dst_file = src_file WHERE kind = 'CONTAINS';
         DROP INDEX edges_in;
         CREATE INDEX edges_in ON edges(dst_file, kind, dst_symbol);
         DROP TABLE file_refs;
         DROP TABLE ref_names;
         CREATE TABLE refs (
             file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
             seq INTEGER NOT NULL, from_symbol INTEGER, name TEXT NOT NULL, qualifier TEXT,
             kind TEXT NOT NULL, line INTEGER NOT NULL, col INTEGER NOT NULL,
             PRIMARY KEY (file_id, seq)) WITHOUT ROWID;
         CREATE INDEX refs_name ON refs(name);
         PRAGMA user_version = 2;",
    )
    .unwrap();
}

/// On top of [`downgrade_to_v2`], what version 1 left: FTS5's own trigram tokenizer over
/// the raw text, no unresolved counts, and rowid reference and edge tables with their
/// per-file indexes.
fn downgrade_to_v1(conn: &rusqlite::Connection) {
    downgrade_to_v2(conn);
    conn.execute_batch(
        "DROP TABLE code_fts;
         CREATE VIRTUAL TABLE code_fts USING fts5(
             body, content='', contentless_delete=1, tokenize='trigram', detail='none');
         ALTER TABLE files DROP COLUMN unresolved_refs;
         DROP TABLE file_counts;
         DROP TABLE refs;
         CREATE TABLE refs (
             id INTEGER PRIMARY KEY,
             file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
             from_symbol INTEGER, name TEXT NOT NULL, qualifier TEXT, kind TEXT NOT NULL,
             line INTEGER NOT NULL, col INTEGER NOT NULL);
         CREATE INDEX refs_file ON refs(file_id);
         CREATE INDEX refs_name ON refs(name);
         DROP TABLE edges;
         CREATE TABLE edges (
             id INTEGER PRIMARY KEY, kind TEXT NOT NULL,
             src_file INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
             src_symbol INTEGER, dst_file INTEGER, dst_symbol INTEGER,
             confidence TEXT NOT NULL, line INTEGER NOT NULL);
         CREATE INDEX edges_src ON edges(src_symbol, kind);
         CREATE INDEX edges_dst ON edges(dst_symbol, kind);
         CREATE INDEX edges_src_file ON edges(src_file);
         CREATE INDEX edges_dst_file ON edges(dst_file, kind);
         PRAGMA user_version = 1;",
    )
    .unwrap();
}

/// Indexes [`TREE`], rewrites the index as an older schema left it, and checks that the
/// next run migrates it to the current layout and re-indexes every file into the same
/// facts and search results.
fn migrates_and_re_indexes(downgrade: fn(&rusqlite::Connection)) {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), TREE);
    index(dir.path());
    let before = dump(dir.path());
    assert!(before.contains("search | src/unicode.rs | "), "{before}");
    assert!(before.contains("ref | src/lib.rs | "), "{before}");
    let db = loci_store::index_path_for(dir.path());
    downgrade(&rusqlite::Connection::open(&db).unwrap());
    // Readers refuse it until a writer migrates it.
    assert!(loci_store::open_index_read_only(&db).is_err());

    let report = index(dir.path());
    assert_eq!(report.files_parsed, TREE.len() as u64);
    assert_eq!(dump(dir.path()), before);
    let conn = loci_store::open_index_read_only(&db).unwrap();
    let names = |sql: &str| -> Vec<String> {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        names(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'edges' ORDER BY name"
        ),
        ["edges_in"]
    );
    assert_eq!(
        names("SELECT name FROM sqlite_master WHERE name IN ('refs', 'symbols_qualified')"),
        Vec::<String>::new()
    );
    let edges_in: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'edges_in'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        edges_in.ends_with("WHERE dst_file IS NOT NULL"),
        "{edges_in}"
    );
    for table in ["ref_names", "edges"] {
        let sql: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        assert!(sql.ends_with("WITHOUT ROWID"), "{sql}");
    }
    assert_eq!(
        found(dir.path(), "split(\"::\")", false),
        lines_with(dir.path(), "split(\"::\")", false)
    );
    assert_eq!(found(dir.path(), "GRÜSSE", true).len(), 0);
    assert_eq!(found(dir.path(), "GRÜßE", true).len(), 1);
    // Nothing left to redo.
    assert_eq!(index(dir.path()).files_parsed, 0);
}

#[test]
fn a_version_1_index_is_migrated_and_every_file_re_indexed() {
    migrates_and_re_indexes(downgrade_to_v1);
}

#[test]
fn a_version_2_index_is_migrated_and_every_file_re_indexed() {
    migrates_and_re_indexes(downgrade_to_v2);
}

#[test]
fn a_first_index_killed_before_its_search_index_was_installed_is_re_indexed() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), TREE);
    index(dir.path());
    let before = dump(dir.path());
    // What a first index killed after writing the graph, but before installing the
    // search index it built on the side, leaves: the mark, an empty search index and
    // a leftover side file.
    let db = loci_store::index_path_for(dir.path());
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "INSERT INTO code_fts (code_fts) VALUES ('delete-all');
             INSERT INTO meta (key, value) VALUES ('search', 'pending');",
        )
        .unwrap();
    }
    let side = db.with_file_name("search-build.db");
    std::fs::write(&side, b"partial").unwrap();
    assert!(found(dir.path(), "parse_line", false).is_empty());

    let report = index(dir.path());
    assert_eq!(report.files_parsed, TREE.len() as u64);
    assert_eq!(dump(dir.path()), before);
    assert_eq!(found(dir.path(), "parse_line", false).len(), 1);
    assert!(!side.exists());
    // Nothing left to redo.
    assert_eq!(index(dir.path()).files_parsed, 0);
}

#[test]
fn a_limited_search_returns_the_first_hits_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    // More files than one scan chunk, hits on several lines of each, in an order the
    // walk does not follow, and files without the word in between.
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 0..150 {
        let text = match i % 3 {
            0 => "fn nothing_here() {}\n".to_string(),
            _ => format!("// needle {i}\nfn f{i}() {{}}\n// needle again\nneedle();\n"),
        };
        files.push((format!("d{}/f{:03}.rs", i % 7, 149 - i), text));
    }
    let tree: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    write_tree(dir.path(), &tree);
    index(dir.path());
    let graph = Graph::open(dir.path()).unwrap();
    let run = |limit: usize| {
        let opts = SearchOptions {
            limit,
            ..SearchOptions::default()
        };
        let (hits, truncated) = search(&graph, "needle", &opts).unwrap();
        let hits: Vec<(String, u32)> = hits.into_iter().map(|h| (h.path, h.line)).collect();
        (hits, truncated)
    };
    let (all, truncated) = run(10_000);
    assert!(!truncated);
    assert_eq!(all.len(), 100 * 3);
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
    for limit in [1, 2, 3, 5, 31, 64, 97, 299] {
        let (first, truncated) = run(limit);
        assert_eq!(first, all[..limit], "limit {limit}");
        assert!(truncated, "limit {limit}");
    }
    assert_eq!(run(300), (all.clone(), false));
}
