//! Data-driven extraction fixtures: every directory under `tests/fixtures/` is a small
//! repository with an `expected_facts.txt` beside its sources. The runner extracts every
//! file whose language [`Lang::detect`] recognises, renders the facts one per line and
//! compares them with the expected file.
//!
//! Line format (all lines sorted, so one file's lines come together):
//!
//! ```text
//! <file> def <kind> <qualified_name> @<line> parent=<parent qualified name or -> [params=<arity>]
//! <file> ref <call|type_use> <name> q=<qualifier or -> @<line> from=<enclosing qualified name or -> [recv=<receiver type>] [args=<count>]
//! <file> import <module> name=<name or -> alias=<alias or -> @<line>
//! <file> base <inherits|implements> <subject> -> <name> q=<qualifier or -> @<line>
//! ```
//!
//! A directory without `expected_facts.txt` is skipped (a fixture being written).
//! `LOCI_BLESS=1 cargo test -p loci-index --test integration extract_fixtures` writes the current
//! output into every fixture's `expected_facts.txt`; review the diff before committing it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use loci_index::Lang;
use loci_index::extract::{FileFacts, extract};

const EXPECTED: &str = "expected_facts.txt";

#[test]
fn every_fixture_extracts_its_expected_facts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let bless = std::env::var_os("LOCI_BLESS").is_some_and(|v| v == "1");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();

    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in &dirs {
        let expected_path = dir.join(EXPECTED);
        let actual = render_dir(dir);
        if bless {
            fs::write(&expected_path, &actual)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", expected_path.display()));
            continue;
        }
        let Ok(expected) = fs::read_to_string(&expected_path) else {
            eprintln!("skipping {}: no {EXPECTED} yet", dir.display());
            continue;
        };
        checked += 1;
        if let Some(diff) = diff(&expected, &actual) {
            failures.push(format!(
                "fixture {}: extracted facts differ from {EXPECTED}\n\
                 (- expected but missing, + extracted but not expected)\n{diff}\n\
                 full extraction:\n{actual}",
                dir.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{checked} fixture dirs checked");
}

/// Renders every recognised source file under `dir` in the fixture format, sorted.
fn render_dir(dir: &Path) -> String {
    let mut files = Vec::new();
    collect_files(dir, &mut files);
    let mut lines = BTreeSet::new();
    for path in files {
        let rel = path.strip_prefix(dir).expect("under the fixture dir");
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if rel.starts_with("expected_") {
            continue;
        }
        let bytes =
            fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let head = &bytes[..bytes.len().min(256)];
        let Some(lang) = Lang::detect(&path, head) else {
            continue;
        };
        let source = String::from_utf8_lossy(&bytes);
        let lang = lang.for_content(&path, &source);
        let facts = extract(lang, &source).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        render_file(&rel, &facts, &mut lines);
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn render_file(file: &str, facts: &FileFacts, out: &mut BTreeSet<String>) {
    let qname = |i: Option<u32>| match i {
        Some(i) => facts.symbols[i as usize].qualified_name.as_str(),
        None => "-",
    };
    for s in &facts.symbols {
        // The arity only where the language records it (Java), so other lines stay.
        let params = s
            .params
            .map(|p| format!(" params={}", p.to_text()))
            .unwrap_or_default();
        out.insert(format!(
            "{file} def {} {} @{} parent={}{params}",
            s.kind.name(),
            s.qualified_name,
            s.span.start_line,
            qname(s.parent)
        ));
    }
    for r in &facts.refs {
        // The receiver's type only where the file says it, so other lines stay as they were.
        let receiver = r
            .receiver
            .as_deref()
            .map(|t| format!(" recv={t}"))
            .unwrap_or_default();
        let args = r.args.map(|n| format!(" args={n}")).unwrap_or_default();
        out.insert(format!(
            "{file} ref {} {} q={} @{} from={}{receiver}{args}",
            r.kind.name(),
            r.name,
            r.qualifier.as_deref().unwrap_or("-"),
            r.line,
            qname(r.from)
        ));
    }
    for i in &facts.imports {
        out.insert(format!(
            "{file} import {} name={} alias={} @{}",
            i.module,
            i.name.as_deref().unwrap_or("-"),
            i.alias.as_deref().unwrap_or("-"),
            i.line
        ));
    }
    for b in &facts.bases {
        let kind = match b.kind {
            loci_index::extract::BaseKind::Inherits => "inherits",
            loci_index::extract::BaseKind::Implements => "implements",
        };
        out.insert(format!(
            "{file} base {kind} {} -> {} q={} @{}",
            b.subject,
            b.name,
            b.qualifier.as_deref().unwrap_or("-"),
            b.line
        ));
    }
}

/// A line diff of two sorted fact lists, or `None` when they are equal.
fn diff(expected: &str, actual: &str) -> Option<String> {
    let expected: BTreeSet<&str> = expected.lines().filter(|l| !l.trim().is_empty()).collect();
    let actual: BTreeSet<&str> = actual.lines().filter(|l| !l.trim().is_empty()).collect();
    if expected == actual {
        return None;
    }
    let mut out = String::new();
    for line in expected.difference(&actual) {
        out.push_str(&format!("- {line}\n"));
    }
    for line in actual.difference(&expected) {
        out.push_str(&format!("+ {line}\n"));
    }
    Some(out)
}
