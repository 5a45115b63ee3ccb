//! docs/cli.md carries a copy of the error table and the JSON fields of every answer;
//! these tests keep that copy true to the code.

use std::collections::BTreeSet;

fn cli_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md");
    std::fs::read_to_string(path).expect("docs/cli.md")
}

#[test]
fn docs_cli_md_lists_every_row_of_the_error_table_exactly() {
    let doc = cli_md();
    let documented: BTreeSet<String> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            // | `kind` | exit | HTTP |
            (cells.len() == 5 && cells[2].parse::<u8>().is_ok() && cells[3].parse::<u16>().is_ok())
                .then(|| format!("{} {} {}", cells[1].trim_matches('`'), cells[2], cells[3]))
        })
        .collect();
    let table: BTreeSet<String> = loci_api::ErrorKind::TABLE
        .iter()
        .map(|r| format!("{} {} {}", r.name, r.exit.code(), r.http))
        .collect();
    assert_eq!(
        documented, table,
        "docs/cli.md's error table differs from ErrorKind::TABLE: run `cargo run -p loci-api --example error_table`"
    );
}

#[test]
fn docs_cli_md_names_every_page_field_the_api_serializes() {
    let doc = cli_md();
    let page = loci_api::PageRequest::first(1)
        .window(1)
        .unwrap()
        .slice(vec![1, 2], true)
        .1;
    let value = serde_json::to_value(page).unwrap();
    for key in value.as_object().unwrap().keys() {
        assert!(
            doc.contains(&format!("\"{key}\"")),
            "docs/cli.md does not show `{key}`"
        );
    }
    for key in ["state", "stale_files"] {
        assert!(
            doc.contains(&format!("\"{key}\"")),
            "docs/cli.md does not show `{key}`"
        );
    }
}
