//! Data-driven resolution tests: each `tests/fixtures/<lang>/` with an
//! `expected_edges.txt` is indexed for real (SQLite file in a temp dir) and its resolved
//! CALLS / IMPORTS / INHERITS / IMPLEMENTS edges must be exactly the expected ones.
//!
//! Line format: `<KIND> <file>:<src qualified name or -> -> <file>:<dst qualified name or ->`,
//! a name followed by `@<line>` when its file defines it more than once (overloads).

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

/// How an edge's end is shown: its qualified name, and `@line` when its file has several
/// definitions of that name (overloads).
const SHOWN: &str = "s.qualified_name || CASE WHEN (SELECT count(*) FROM symbols o
     WHERE o.file_id = s.file_id AND o.qualified_name = s.qualified_name) > 1
     THEN '@' || s.start_line ELSE '' END";

fn actual_edges(root: &Path) -> BTreeSet<String> {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT e.kind, sf.path, (SELECT {SHOWN} FROM symbols s WHERE id = e.src_symbol),
                    df.path, (SELECT {SHOWN} FROM symbols s WHERE id = e.dst_symbol)
             FROM edges e JOIN files sf ON sf.id = e.src_file LEFT JOIN files df ON df.id = e.dst_file
             WHERE e.kind IN ('CALLS', 'IMPORTS', 'INHERITS', 'IMPLEMENTS')"
        ))
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            Ok(format!(
                "{} {}:{} -> {}:{}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                opt(r.get(2)?),
                opt(r.get(3)?),
                opt(r.get(4)?)
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn every_fixture_resolves_to_its_expected_edges() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in dirs {
        let Ok(expected) = std::fs::read_to_string(dir.join("expected_edges.txt")) else {
            continue;
        };
        let expected: BTreeSet<String> = expected
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        let work = tempfile::tempdir().unwrap();
        common::copy_tree(&dir, work.path());
        for name in ["expected_edges.txt", "expected_facts.txt"] {
            let _ = std::fs::remove_file(work.path().join(name));
        }
        common::index(work.path());
        let actual = actual_edges(work.path());
        let missing: Vec<&String> = expected.difference(&actual).collect();
        let extra: Vec<&String> = actual.difference(&expected).collect();
        if !missing.is_empty() || !extra.is_empty() {
            failures.push(format!(
                "{}:\n  missing: {missing:#?}\n  unexpected: {extra:#?}",
                dir.display()
            ));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked >= 15,
        "expected a fixture per language, found {checked}"
    );
}
