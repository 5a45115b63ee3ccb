//! Rust items written inside item-position macro invocations (tokio's `cfg_rt! { pub fn
//! spawn .. }`): how many of them loci finds, on tokio's own sources.
//!
//! The oracle is lexical and independent of loci's parse of the macro: every item
//! keyword token (`fn`, `struct`, `enum`, `union`, `trait`, `type`, `const`, `static`,
//! `mod` with a body, `macro_rules!`) followed by a name, among the tokens of each item-position
//! macro invocation as tree-sitter tokenizes them (comments, so doc examples, are not
//! tokens; `macro_rules!` bodies and `quote!`-like templates are left out). An item
//! counts as found when loci has a definition of that name whose span holds the name's
//! line. Run with `-- --nocapture` for the figures and the misses.

use crate::common;

use std::path::{Path, PathBuf};

use loci_index::Lang;
use loci_index::extract::extract;

/// Item keywords and the token that must follow (`macro_rules` takes a `!`).
const ITEM_KEYWORDS: &[&str] = &[
    "fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod",
];

#[test]
fn rust_items_inside_tokio_macro_bodies_are_at_least_95_percent_found() {
    let tokio = common::newest_registry_crate("tokio-1.");
    let mut files = Vec::new();
    collect_rs(&tokio.join("src"), &mut files);
    assert!(!files.is_empty(), "no .rs files under {}", tokio.display());
    let mut parser = loci_index::extract::new_parser(Lang::Rust).expect("the Rust grammar");
    let (mut total, mut found) = (0usize, 0usize);
    let mut misses = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap_or_default();
        let tree = parser.parse(&source, None).expect("a tree");
        let expected = items_in_item_macros(&tree, &source);
        if expected.is_empty() {
            continue;
        }
        let facts = extract(Lang::Rust, &source).expect("tokio's files extract");
        for (name, line) in expected {
            total += 1;
            let hit = facts
                .symbols
                .iter()
                .any(|s| s.name == name && (s.span.start_line..=s.span.end_line).contains(&line));
            if hit {
                found += 1;
            } else {
                misses.push(format!("{}:{line} {name}", file.display()));
            }
        }
    }
    let recall = found as f64 / total.max(1) as f64;
    eprintln!(
        "tokio {}: {found} / {total} items inside item macros found ({:.2}%)",
        tokio.display(),
        recall * 100.0
    );
    for miss in misses.iter().take(40) {
        eprintln!("  missed {miss}");
    }
    assert!(
        total > 500,
        "only {total} items in tokio's macros: is the oracle broken?"
    );
    assert!(
        recall >= 0.95,
        "{:.2}% of the items inside tokio's item macros found, below 95%",
        recall * 100.0
    );
}

/// (name, 1-based line) of every item keyword followed by a name among the tokens of the
/// file's item-position macro invocations (nested ones included).
fn items_in_item_macros(tree: &tree_sitter::Tree, source: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    let mut cursor = tree.walk();
    while let Some(node) = stack.pop() {
        let item_position = node
            .parent()
            .is_some_and(|p| matches!(p.kind(), "source_file" | "declaration_list"));
        if node.kind() == "macro_invocation" && item_position {
            let name = node
                .child_by_field_name("macro")
                .map(|m| &source[m.byte_range()])
                .unwrap_or_default();
            if let Some(tokens) = node.named_children(&mut cursor).last()
                && !matches!(name, "quote" | "quote_spanned")
            {
                let mut leaves = Vec::new();
                leaves_of(tokens, &mut leaves);
                scan(&leaves, source, &mut out);
            }
            continue;
        }
        stack.extend(node.named_children(&mut cursor));
    }
    out
}

/// The leaf tokens under `node`, in order, a `macro_rules!` body left out.
fn leaves_of<'t>(node: tree_sitter::Node<'t>, out: &mut Vec<tree_sitter::Node<'t>>) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.child_count() == 0 {
            out.push(child);
        } else {
            leaves_of(child, out);
        }
    }
}

fn scan(leaves: &[tree_sitter::Node<'_>], source: &str, out: &mut Vec<(String, u32)>) {
    let text = |n: &tree_sitter::Node<'_>| &source[n.byte_range()];
    let mut i = 0;
    while i < leaves.len() {
        let word = text(&leaves[i]);
        let after_quote = i > 0 && text(&leaves[i - 1]) == "'";
        if word == "macro_rules" && leaves.get(i + 1).is_some_and(|n| text(n) == "!") {
            if let Some(name) = leaves.get(i + 2).filter(|n| n.kind() == "identifier") {
                out.push((text(name).to_string(), name.start_position().row as u32 + 1));
            }
            // Skip the rules: the next balanced group.
            i = skip_group(leaves, source, i + 3);
            continue;
        }
        // `mod m;` only points at the module's file (not a definition in loci either).
        let declares_only = word == "mod" && leaves.get(i + 2).is_some_and(|n| text(n) == ";");
        if ITEM_KEYWORDS.contains(&word)
            && !after_quote
            && !declares_only
            && let Some(name) = leaves.get(i + 1).filter(|n| n.kind() == "identifier")
        {
            out.push((text(name).to_string(), name.start_position().row as u32 + 1));
        }
        i += 1;
    }
}

/// The index past the balanced `{..}`/`(..)`/`[..]` group that starts at or after `from`.
fn skip_group(leaves: &[tree_sitter::Node<'_>], source: &str, from: usize) -> usize {
    let mut depth = 0i32;
    let mut i = from;
    while i < leaves.len() {
        match &source[leaves[i].byte_range()] {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => {
                depth -= 1;
                if depth <= 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
