//! Adversarial input for every language, as data: empty and broken files, and about
//! 2,000 levels of nesting, must give a tree without a panic or a stack overflow (the
//! walker is iterative and no visitor recurses without bound). Where a nesting shape has
//! a known answer (one call per level, one definition per level) it is asserted too.
//! Adding a language is adding rows here.

use loci_index::Lang;
use loci_index::extract::{FileFacts, extract};
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
    /// At most `DEPTH` definitions (the grammar may give up on some levels).
    AtMostDepthSymbols,
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
    let facts: FileFacts = match extract(lang, src) {
        Ok(f) => f,
        Err(e) => return Some(format!("{lang:?} {what}: no tree: {e}")),
    };
    let (got, want, of) = match expect {
        Expect::Tree => return None,
        Expect::Refs(n) => (facts.refs.len(), DEPTH + n, "references"),
        Expect::Symbols(n) => (facts.symbols.len(), DEPTH + n, "definitions"),
        Expect::AtMostDepthSymbols => {
            return (facts.symbols.len() > DEPTH).then(|| {
                format!(
                    "{lang:?} {what}: {} definitions > {DEPTH}",
                    facts.symbols.len()
                )
            });
        }
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

/// Shapes that are not one repeated string: indentation that grows with depth (Python)
/// and a distinct name per level (JavaScript).
#[test]
fn nesting_that_grows_per_level_does_not_overflow_the_stack() {
    let mut defs = String::new();
    for i in 0..DEPTH {
        defs.push_str(&" ".repeat(i));
        defs.push_str(&format!("def f{i}():\n"));
    }
    defs.push_str(&" ".repeat(DEPTH));
    defs.push_str("pass\n");
    let mut functions: String = (0..DEPTH)
        .map(|i| format!("function f{i}() {{\n"))
        .collect();
    functions.push_str(&"}\n".repeat(DEPTH));
    let failures: Vec<String> = [
        (
            Lang::Python,
            "indented defs",
            defs,
            Expect::AtMostDepthSymbols,
        ),
        (
            Lang::JavaScript,
            "nested functions",
            functions,
            Expect::Tree,
        ),
    ]
    .par_iter()
    .filter_map(|(lang, what, src, expect)| check(*lang, what, src, *expect))
    .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}
