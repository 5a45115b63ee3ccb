//! docs/query.md lists the tables and columns an agent may name in `loci query`; this
//! keeps that list equal to the schema of a fresh index (names, order and declared
//! types, from `PRAGMA table_info` through `loci query` itself).

use crate::common;

use common::Env;

const SECTION: &str = "## The tables an agent may query";

/// FTS5's own storage behind `code_fts`, named in the doc's prose, not listed.
fn is_fts_storage(table: &str) -> bool {
    table.starts_with("code_fts_")
}

/// `(table, [(column, type)])` in the order docs/query.md lists them.
fn documented() -> Vec<(String, Vec<(String, String)>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/query.md");
    let doc = std::fs::read_to_string(path).expect("docs/query.md");
    let start = doc
        .find(SECTION)
        .unwrap_or_else(|| panic!("docs/query.md has no section `{SECTION}`"));
    let body = &doc[start + SECTION.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut tables: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in body.lines() {
        if let Some(name) = line.strip_prefix("### `").and_then(|l| l.strip_suffix('`')) {
            tables.push((name.to_string(), Vec::new()));
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| `column` | TYPE | meaning |` splits into ["", column, type, meaning, ""].
        if let (Some((_, columns)), [_, column, ty, ..]) = (tables.last_mut(), cells.as_slice())
            && let Some(column) = column.strip_prefix('`').and_then(|c| c.strip_suffix('`'))
        {
            columns.push((column.to_string(), ty.to_string()));
        }
    }
    tables
}

fn rows(env: &Env, sql: &str, params: &str) -> Vec<Vec<String>> {
    let (code, out) = env.json(&["query", sql, "--params", params, "--max-rows", "10000"]);
    assert_eq!(code, 0, "{sql}: {out}");
    out["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn query_md_lists_exactly_the_tables_and_columns_of_a_fresh_index() {
    let env = Env::new();
    env.write(&[(
        "src/lib.rs",
        "/// Doc.\npub fn alpha() { beta(); }\nfn beta() {}\n",
    )]);
    let (code, out) = env.json(&["index", "."]);
    assert_eq!(code, 0, "{out}");

    let mut actual = Vec::new();
    let tables = rows(
        &env,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        "[]",
    );
    for table in tables.into_iter().map(|r| r[0].clone()) {
        if is_fts_storage(&table) {
            continue;
        }
        let columns = rows(
            &env,
            "SELECT name, type FROM pragma_table_info(?1) ORDER BY cid",
            &serde_json::json!([table]).to_string(),
        )
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect::<Vec<_>>();
        actual.push((table, columns));
    }
    let mut doc = documented();
    doc.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!doc.is_empty(), "no tables parsed from docs/query.md");
    for ((doc_table, doc_columns), (table, columns)) in doc.iter().zip(&actual) {
        assert_eq!(
            doc_table, table,
            "docs/query.md tables differ from the index's"
        );
        assert_eq!(
            doc_columns, columns,
            "docs/query.md's `{table}` columns (name, type) differ from PRAGMA table_info"
        );
    }
    let names = |v: &[(String, Vec<(String, String)>)]| -> Vec<String> {
        v.iter().map(|t| t.0.clone()).collect()
    };
    assert_eq!(names(&doc), names(&actual), "docs/query.md tables differ");

    // Every meta key a complete index has is documented in the `meta` table.
    let keys = rows(&env, "SELECT key FROM meta ORDER BY key", "[]");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/query.md");
    let text = std::fs::read_to_string(path).unwrap();
    let meta = &text[text.find("### `meta`").expect("a `meta` table")..];
    let meta_row = meta
        .lines()
        .find(|l| l.starts_with("| `key` |"))
        .expect("the meta table's `key` row");
    for key in keys.into_iter().map(|r| r[0].clone()) {
        assert!(
            meta_row.contains(&format!("`{key}`")),
            "meta key `{key}` is not documented"
        );
    }
}
