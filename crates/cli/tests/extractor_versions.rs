//! A file indexed by older extractor rules is re-extracted by the next `loci sync`,
//! even though the file itself did not change, and the result equals a fresh index.

use crate::common;

use std::path::Path;

use common::Env;

const TREE: &[(&str, &str)] = &[
    (
        "app/models.py",
        "class Store:\n    def save(self, item):\n        return item\n\ndef helper():\n    return Store()\n",
    ),
    (
        "app/main.py",
        "from app.models import Store, helper\n\ndef run():\n    s = Store()\n    s.save(1)\n    helper()\n",
    ),
    (
        "web/util.ts",
        "export function fmt(x: number): string { return String(x); }\n",
    ),
    (
        "web/page.ts",
        "import { fmt } from './util';\nexport function show() { return fmt(1); }\n",
    ),
];

fn dump(root: &Path) -> String {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    loci_index::dump(&conn).unwrap()
}

/// Makes `rel`'s stored facts what an older extractor gave (here: nothing at all, its
/// definitions, references and the edges into them gone) and records that older
/// extractor's version with it, as a previous loci would have left the row.
fn as_if_extracted_by_older_rules(root: &Path, rel: &str) {
    let conn = loci_store::rusqlite::Connection::open(loci_store::index_path_for(root)).unwrap();
    let (id, version): (i64, i64) = conn
        .query_row(
            "SELECT id, extractor FROM files WHERE path = ?1",
            [rel],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        version,
        i64::from(loci_index::extract::version(loci_index::Lang::Python)),
        "a fresh index records this build's extractor version"
    );
    conn.execute_batch(&format!(
        "DELETE FROM edges WHERE src_file = {id} OR dst_file = {id};
         DELETE FROM symbols WHERE file_id = {id};
         DELETE FROM file_refs WHERE file_id = {id};
         DELETE FROM ref_names WHERE file_id = {id};
         DELETE FROM file_counts WHERE file_id = {id};
         UPDATE files SET extractor = {} WHERE id = {id};",
        version - 1
    ))
    .unwrap();
}

#[test]
fn a_file_indexed_by_an_older_extractor_is_reextracted_by_sync_and_equals_a_fresh_index() {
    let env = Env::new();
    env.write(TREE);
    let (code, _) = env.json(&["index", "."]);
    assert_eq!(code, 0);
    let fresh = dump(env.root());

    as_if_extracted_by_older_rules(env.root(), "app/models.py");
    assert_ne!(dump(env.root()), fresh);
    // Nothing changed on disk, yet the index is behind: drift, naming the file.
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "drift", "{status}");
    assert_eq!(status["facts"]["drift"]["outdated"], 1, "{status}");
    assert_eq!(
        status["facts"]["drift"]["sample"],
        serde_json::json!(["outdated:app/models.py"]),
        "{status}"
    );

    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        report["files_parsed"], 1,
        "only the outdated file: {report}"
    );
    assert_eq!(dump(env.root()), fresh);
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "clean", "{status}");
    // The callers of its definitions are linked again.
    let (code, callers) = env.json(&["callers", "app/models.py:helper"]);
    assert_eq!(code, 0, "{callers}");
    assert!(callers.to_string().contains("app/main.py"), "{callers}");

    // Current rows are left alone: a second sync parses nothing and writes nothing.
    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        (report["files_parsed"].as_u64(), report["wrote"].as_bool()),
        (Some(0), Some(false)),
        "{report}"
    );
}

#[test]
fn edges_linked_by_older_resolution_rules_are_relinked_by_sync_and_equal_a_fresh_index() {
    let env = Env::new();
    env.write(TREE);
    let (code, _) = env.json(&["index", "."]);
    assert_eq!(code, 0);
    let fresh = dump(env.root());

    // As an older loci would have left it: other edges, recorded under other rules.
    let conn =
        loci_store::rusqlite::Connection::open(loci_store::index_path_for(env.root())).unwrap();
    let rules: String = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'resolver_rules'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rules, loci_index::RULES_VERSION.to_string());
    conn.execute_batch(
        "DELETE FROM edges WHERE kind = 'CALLS';
         DELETE FROM meta WHERE key = 'resolver_rules';",
    )
    .unwrap();
    drop(conn);
    assert_ne!(dump(env.root()), fresh);

    // No file changed, yet the index is behind: drift, saying why.
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "drift", "{status}");
    assert_eq!(status["facts"]["drift"]["rules"], 1, "{status}");
    assert!(
        status["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("older resolution rules"),
        "{status}"
    );

    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["files_parsed"], 0, "nothing re-extracted: {report}");
    assert_eq!(dump(env.root()), fresh);
    let (_, status) = env.json(&["status"]);
    assert_eq!(status["state"], "clean", "{status}");

    // Recorded: the next sync writes nothing.
    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["wrote"], false, "{report}");
}
