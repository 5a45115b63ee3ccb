//! Adversarial input for every language, as data: empty and broken files, and about
//! 2,000 levels of nesting, must give a tree without a panic or a stack overflow (the
//! walker is iterative and no visitor recurses without bound). Where a nesting shape has
//! a known answer (one call per level, one definition per level) it is asserted too.
//! Adding a language is adding rows here.

use loci_index::Lang;
use loci_index::extract::{ExtractError, FileFacts, ParseLimits, extract, extract_within};
use rayon::prelude::*;

const DEPTH: usize = 2000;

/// Files that are empty or cut off mid-construct.
#[rustfmt::skip]
const BROKEN: &[(Lang, &[&str])] = &[
    (Lang::Rust, &["", "fn", "impl {", "use ::{", "mod", "}}}}", "struct A<", "macro_rules! m {"]),
    (Lang::Python, &["", "\n\n", "def", "class A(:\n  def f(self", "from . import", "import", "@deco\n", "x = ("]),
    (Lang::JavaScript, JS_BROKEN),
    (Lang::TypeScript, JS_BROKEN),
    (Lang::Tsx, JS_BROKEN),
    (Lang::Go, &["", "package", "func (", "func (r *) M() {", "type T struct {", "import (", "const ("]),
    (Lang::Java, &["", "class", "class A extends {", "import ;", "import static", "interface I { void m(", "@"]),
    (Lang::C, &["", "#include", "#define", "int f(", "struct {", "typedef", "int (*(*x", "}}}"]),
    (Lang::Cpp, &["", "class {", "void Foo::() {", "namespace { template <", "#include", "}}}}", "a::b::c(;"]),
    (Lang::CSharp, &["", "class {", "namespace ;", "using = ;", "void M( {", "}}}}", "new ();"]),
    (Lang::Ruby, &["", "class", "def (", "module ::", "end end end", "require", "x = [1, 2"]),
    (Lang::Php, &["", "<?php", "<?php class {", "<?php namespace ;", "<?php use ;", "<?php }}}}", "<?php new ();"]),
    (Lang::Kotlin, &["", "class", "fun (", "package", "import", "}}}}", "interface A : { fun f() }", "val x = (1"]),
    (Lang::Swift, &["", "class", "func (", "extension : {", "import", "}}}}", "protocol P { func }", "let x = (1"]),
    (Lang::Bash, &["", "function", "f() {", "source", ". ", "}}}}", "if then fi", "$(", "\"unterminated"]),
];

#[rustfmt::skip]
const JS_BROKEN: &[&str] =
    &["", "\n", "function", "class A extends {", "import {a as } from", "export * from", "const = ;", "<div"];

/// What a deeply nested input must give, beyond a tree.
#[derive(Clone, Copy)]
enum Expect {
    /// Only that it parses.
    Tree,
    /// Exactly `DEPTH + n` references.
    Refs(usize),
    /// Exactly `DEPTH + n` definitions.
    Symbols(usize),
    /// Refused as too complex (not a silent half-parse).
    TooComplex,
}

/// `prefix + open × DEPTH + middle + close × DEPTH + suffix`.
type Shape = (
    Lang,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Expect,
);

#[rustfmt::skip]
const NESTED: &[Shape] = &[
    (Lang::Rust, "fn f() {", "{ g();", "", "}", "}", Expect::Refs(0)),
    (Lang::Rust, "", "mod m { ", "", "}", "", Expect::Symbols(0)),
    // Macro tokens are parsed again, a bounded number of levels deep.
    (Lang::Rust, "fn f() {", "m!(g(", "", "))", "}", Expect::Tree),
    (Lang::Rust, "", "m! { fn a() {} ", "", "}", "", Expect::Tree),
    (Lang::Python, "X = ", "(", "1", ")", "\n", Expect::Tree),
    (Lang::Python, "def f(a: ", "list[", "int", "]", "): pass\n", Expect::Tree),
    (Lang::JavaScript, "const X = ", "(", "1", ")", ";\n", Expect::Tree),
    (Lang::JavaScript, "function f() ", "{", "", "}", "\n", Expect::Tree),
    (Lang::TypeScript, "let x: ", "A<", "T", ">", ";\n", Expect::Tree),
    (Lang::Tsx, "let x: ", "A<", "T", ">", ";\n", Expect::Tree),
    (Lang::Go, "package p\nvar x = ", "(", "1", ")", "\n", Expect::Tree),
    (Lang::Go, "package p\nfunc f() {", "{", "", "}", "}\n", Expect::Tree),
    (Lang::Go, "package p\nvar f = ", "func() { _ = ", "", "}", "\n", Expect::Tree),
    (Lang::Go, "package p\nfunc (", "*", "T", "", ") M() {}\n", Expect::Tree),
    (Lang::Java, "class A { int x = ", "(", "1", ")", "; }\n", Expect::Tree),
    (Lang::Java, "class A { void f() ", "{", "", "}", " }\n", Expect::Tree),
    (Lang::Java, "", "class A { ", "", "}", "", Expect::Tree),
    (Lang::Java, "class A { ", "L<", "T", ">", " x; }\n", Expect::Tree),
    (Lang::C, "int x = ", "(", "1", ")", ";\n", Expect::Tree),
    (Lang::C, "void f(void) {", "{", "", "}", "}\n", Expect::Tree),
    (Lang::C, "typedef int ", "*", "T", "", ";\n", Expect::Tree),
    (Lang::C, "int ", "*", "f(void) { return 0; }", "", "\n", Expect::Tree),
    (Lang::C, "typedef int ", "(", "T", ")", ";\n", Expect::Tree),
    (Lang::Cpp, "void f() ", "{ g();", "", "}", "}", Expect::Refs(0)),
    (Lang::Cpp, "", "namespace n { ", "", "}", "", Expect::Symbols(0)),
    (Lang::CSharp, "class A { void M() ", "{ G();", "", "}", "} }", Expect::Refs(0)),
    (Lang::CSharp, "", "namespace N { ", "", "}", "", Expect::Symbols(0)),
    (Lang::Ruby, "def f\n", "if a\ng()\n", "", "end\n", "end\n", Expect::Refs(0)),
    (Lang::Ruby, "", "module M\n", "", "end\n", "", Expect::Symbols(0)),
    (Lang::Php, "<?php function f() ", "{ g();", "", "}", "}", Expect::Refs(0)),
    (Lang::Php, "<?php ", "f(", "1", ")", ";", Expect::Refs(0)),
    (Lang::Kotlin, "fun f() {\n", "if (a) {\ng()\n", "", "}\n", "}\n", Expect::Refs(0)),
    (Lang::Kotlin, "", "class C {\n", "", "}\n", "", Expect::Symbols(0)),
    (Lang::Swift, "func f() {\n", "if a {\ng()\n", "", "}\n", "}\n", Expect::Refs(0)),
    (Lang::Swift, "", "class C {\n", "", "}\n", "", Expect::Symbols(0)),
    (Lang::Bash, "f() {\n", "{ g\n", "", "}\n", "}\n", Expect::Refs(0)),
    (Lang::Bash, "echo ", "$(echo ", "x", ")", "\n", Expect::Refs(1)),
];

fn check(lang: Lang, what: &str, src: &str, expect: Expect) -> Option<String> {
    let facts: FileFacts = match (extract(lang, src), expect) {
        (Err(ExtractError::TooComplex { .. }), Expect::TooComplex) => return None,
        (Ok(_), Expect::TooComplex) => {
            return Some(format!("{lang:?} {what}: parsed, expected too complex"));
        }
        (Ok(f), _) => f,
        (Err(e), _) => return Some(format!("{lang:?} {what}: no tree: {e}")),
    };
    let (got, want, of) = match expect {
        Expect::Tree => return None,
        Expect::Refs(n) => (facts.refs.len(), DEPTH + n, "references"),
        Expect::Symbols(n) => (facts.symbols.len(), DEPTH + n, "definitions"),
        Expect::TooComplex => unreachable!("handled above"),
    };
    (got != want).then(|| format!("{lang:?} {what}: {got} {of}, expected {want}"))
}

#[test]
fn every_language_has_adversarial_rows() {
    for lang in Lang::ALL {
        assert!(
            BROKEN.iter().any(|(l, _)| *l == lang),
            "{lang:?} has no broken-input row"
        );
        assert!(
            NESTED.iter().any(|s| s.0 == lang),
            "{lang:?} has no nesting row"
        );
    }
}

#[test]
fn empty_and_broken_files_do_not_panic() {
    let failures: Vec<String> = BROKEN
        .par_iter()
        .flat_map_iter(|(lang, sources)| {
            sources
                .iter()
                .filter_map(move |src| check(*lang, src, src, Expect::Tree))
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn deeply_nested_input_does_not_overflow_the_stack() {
    let failures: Vec<String> = NESTED
        .par_iter()
        .filter_map(|&(lang, prefix, open, middle, close, suffix, expect)| {
            let src = format!(
                "{prefix}{}{middle}{}{suffix}",
                open.repeat(DEPTH),
                close.repeat(DEPTH)
            );
            check(lang, &format!("{open:?}×{DEPTH}"), &src, expect)
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `depth` Python functions, each defined inside the one before.
fn nested_defs(depth: usize) -> String {
    let mut defs = String::new();
    for i in 0..depth {
        defs.push_str(&" ".repeat(i));
        defs.push_str(&format!("def f{i}():\n"));
    }
    defs.push_str(&" ".repeat(depth));
    defs.push_str("pass\n");
    defs
}

/// Shapes that are not one repeated string: indentation that grows with depth (Python)
/// and a distinct name per level (JavaScript, C++).
#[test]
fn nesting_that_grows_per_level_does_not_overflow_the_stack() {
    let defs = nested_defs(DEPTH);
    let mut functions: String = (0..DEPTH)
        .map(|i| format!("function f{i}() {{\n"))
        .collect();
    functions.push_str(&"}\n".repeat(DEPTH));
    // A definition per level, each asking for its parent (C++'s `template` wrapper).
    let mut namespaces: String = (0..DEPTH)
        .map(|i| format!("namespace n{i} {{ struct S{i} {{ void m(); }};\n"))
        .collect();
    namespaces.push_str(&"}\n".repeat(DEPTH));
    let failures: Vec<String> = [
        (Lang::Python, "indented defs", defs, Expect::TooComplex),
        (
            Lang::JavaScript,
            "nested functions",
            functions,
            Expect::Tree,
        ),
        (Lang::Cpp, "nested namespaces", namespaces, Expect::Tree),
    ]
    .par_iter()
    .filter_map(|(lang, what, src, expect)| check(*lang, what, src, *expect))
    .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// tree-sitter-python keeps 511 indentation levels; deeper definitions used to vanish
/// without a word. Now such a file is refused, naming the limit, and a file just under
/// it keeps every definition.
#[test]
fn python_nested_past_what_the_grammar_keeps_is_refused_not_half_parsed() {
    match extract(Lang::Python, &nested_defs(600)) {
        Err(e @ ExtractError::TooComplex { .. }) => {
            assert!(e.to_string().contains("500 levels"), "{e}");
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(facts) => panic!("600 levels parsed into {} definitions", facts.symbols.len()),
    }
    let facts = extract(Lang::Python, &nested_defs(450)).unwrap();
    assert_eq!(facts.symbols.len(), 450);
    assert_eq!(facts.symbols[449].name, "f449");
}

/// Error recovery on 400k `{` then 400k `}` held 320-450 MB for one 800 KB file; the
/// parse is now stopped at its memory limit and the file refused, naming the limit.
#[test]
fn a_parse_past_its_memory_limit_is_refused_naming_the_limit() {
    let braces = format!("{}{}", "{".repeat(400_000), "}".repeat(400_000));
    let results: Vec<(Lang, Result<FileFacts, ExtractError>)> =
        [Lang::Rust, Lang::C, Lang::JavaScript]
            .into_par_iter()
            .map(|lang| (lang, extract(lang, &braces)))
            .collect();
    for (lang, result) in results {
        match result {
            Err(e @ ExtractError::TooComplex { .. }) => {
                assert!(e.to_string().contains("MiB of memory"), "{lang:?}: {e}");
            }
            Err(e) => panic!("{lang:?}: unexpected error: {e}"),
            Ok(_) => panic!("{lang:?}: the braces parsed within the memory limit"),
        }
    }
    // A small limit refuses even ordinary code, and the limit is what the error names.
    let ordinary = "fn main() { let x = vec![1, 2, 3]; println!(\"{x:?}\"); }\n".repeat(2000);
    let limits = ParseLimits {
        max_bytes: 1 << 20,
        ..ParseLimits::for_source(&ordinary)
    };
    let refused = extract_within(Lang::Rust, &ordinary, &limits).unwrap_err();
    assert!(refused.to_string().contains("more than 1 MiB"), "{refused}");
    assert_eq!(extract(Lang::Rust, &ordinary).unwrap().symbols.len(), 2000);
}

/// One parse's memory has a ceiling whatever the file's size: small files get the base
/// allowance, mid-sized ones their per-byte allowance, and a 20 MB file no more than the
/// ceiling (it was allowed 1.9 GB, and two such parses could exhaust a test machine).
#[test]
fn a_parse_may_hold_at_most_the_ceiling_whatever_the_size() {
    use loci_index::extract::{
        MAX_PARSE_BYTES, MAX_PARSE_BYTES_CEILING, PARSE_BYTES_PER_SOURCE_BYTE,
    };
    let bytes_for = |len: usize| ParseLimits::for_source(&" ".repeat(len)).max_bytes;
    assert_eq!(bytes_for(10), MAX_PARSE_BYTES);
    assert_eq!(bytes_for(2 << 20), (2 << 20) * PARSE_BYTES_PER_SOURCE_BYTE);
    assert_eq!(bytes_for(20 << 20), MAX_PARSE_BYTES_CEILING);
    const { assert!(MAX_PARSE_BYTES < MAX_PARSE_BYTES_CEILING) };
}

/// An index run lists such a file as skipped (`too_complex`, naming the limit), stores
/// nothing of it, and indexes the rest; a file that was indexed and then turns
/// pathological leaves the index.
#[test]
fn an_index_run_skips_a_too_complex_file_and_indexes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("ok.rs"), "fn fine() {}\n").unwrap();
    std::fs::write(root.join("deep.py"), "def shallow():\n    pass\n").unwrap();
    let opts = loci_index::IndexOptions::new(root);
    let first = loci_index::index_workspace(&opts, &loci_index::NoProgress).unwrap();
    assert_eq!((first.files_indexed, first.symbols), (2, 2));

    std::fs::write(
        root.join("braces.rs"),
        format!("{}{}", "{".repeat(400_000), "}".repeat(400_000)),
    )
    .unwrap();
    std::fs::write(root.join("deep.py"), nested_defs(600)).unwrap();
    let report = loci_index::index_workspace(&opts, &loci_index::NoProgress).unwrap();
    let skipped: Vec<(&str, &str, &str)> = report
        .skipped
        .iter()
        .map(|s| {
            (
                s.path.as_str(),
                s.reason.name(),
                s.detail.as_deref().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped[0].0, "braces.rs");
    assert_eq!(skipped[0].1, "too_complex");
    assert!(skipped[0].2.contains("96 MiB"), "{skipped:?}");
    assert_eq!(skipped[1].0, "deep.py");
    assert_eq!(skipped[1].1, "too_complex");
    assert!(skipped[1].2.contains("500 levels"), "{skipped:?}");
    assert_eq!(report.skipped_by_reason.get("too_complex"), Some(&2));
    assert_eq!(report.symbols, 1, "only ok.rs's definition is left");
    assert_eq!(report.files_removed, 1, "deep.py left the index");
}

/// A tree that fits the parse's memory limit but nests deeper than the extraction walk
/// goes is refused too (each open level holds memory while the walk is in it).
#[test]
fn a_tree_nested_deeper_than_the_walk_goes_is_refused_naming_the_limit() {
    let deep = format!(
        "fn f() {{{}{}}}\n",
        "{ g();".repeat(30_000),
        "}".repeat(30_000)
    );
    match extract(Lang::Rust, &deep) {
        Err(e @ ExtractError::TooComplex { .. }) => {
            assert!(e.to_string().contains("50000 levels deep"), "{e}");
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(facts) => panic!("walked into {} references", facts.refs.len()),
    }
}

/// A parse that runs past its time budget is stopped and the file refused, naming the
/// budget; the budget grows with every started MiB of the file.
#[test]
fn a_parse_past_its_time_limit_is_refused_naming_the_limit() {
    let ordinary = "fn main() { let x = vec![1, 2, 3]; println!(\"{x:?}\"); }\n".repeat(20_000);
    let limits = ParseLimits {
        max_time: std::time::Duration::from_millis(1),
        ..ParseLimits::for_source(&ordinary)
    };
    let refused = extract_within(Lang::Rust, &ordinary, &limits).unwrap_err();
    assert!(
        matches!(refused, ExtractError::OverTime { .. }),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("ran longer than 1ms"),
        "{refused}"
    );
    assert!(ordinary.len() > 1 << 20 && ordinary.len() <= 2 << 20);
    assert_eq!(
        ParseLimits::for_source(&ordinary).max_time,
        loci_index::DEFAULT_FILE_BUDGET * 2
    );
}

/// A file refused as too complex is remembered by its fingerprint: the next runs skip
/// it without parsing it again (and write nothing), drift does not count it as added,
/// and once it changes it is parsed again.
#[test]
fn a_refused_file_is_neither_parsed_again_nor_drift_until_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("ok.rs"), "fn fine() {}\n").unwrap();
    let braces = root.join("braces.rs");
    std::fs::write(
        &braces,
        format!("{}{}", "{".repeat(400_000), "}".repeat(400_000)),
    )
    .unwrap();
    let opts = loci_index::IndexOptions::new(root);
    let first = loci_index::index_workspace(&opts, &loci_index::NoProgress).unwrap();
    assert_eq!(
        first.skipped_by_reason.get("too_complex"),
        Some(&1),
        "{first:?}"
    );

    // Not drift: a status check would otherwise report `added: braces.rs` forever.
    let drift = loci_index::drift::drift(&loci_index::drift::DriftOptions::new(root)).unwrap();
    assert_eq!(
        (drift.added, drift.changed, drift.removed),
        (0, 0, 0),
        "{drift:?}"
    );

    // Not parsed again, still reported, and the run writes nothing.
    let again = loci_index::index_workspace(&opts, &loci_index::NoProgress).unwrap();
    assert!(!again.wrote, "{again:?}");
    assert_eq!(again.files_parsed, 0, "{again:?}");
    let refused: Vec<_> = again
        .skipped
        .iter()
        .filter(|s| s.path == "braces.rs")
        .collect();
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0]
            .detail
            .as_deref()
            .unwrap_or("")
            .contains("96 MiB"),
        "{refused:?}"
    );

    // Changed into something parseable: indexed.
    std::fs::write(&braces, "fn now_fine() {}\n").unwrap();
    let drift = loci_index::drift::drift(&loci_index::drift::DriftOptions::new(root)).unwrap();
    assert_eq!(drift.added, 1, "{drift:?}");
    let third = loci_index::index_workspace(&opts, &loci_index::NoProgress).unwrap();
    assert_eq!((third.files_indexed, third.symbols), (2, 2), "{third:?}");
    assert!(third.skipped.is_empty(), "{third:?}");
}
