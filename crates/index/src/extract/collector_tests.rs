//! Tests of the collector: name lookups, qualified-name limits, qualifiers, and the
//! growth measure other extractor tests share.

use std::time::{Duration, Instant};

use super::*;
use crate::Lang;

/// Most [`growth_ratio`] a linear piece of work shows on this shared machine: 16 on a
/// quiet one, up to three times that with allocation and other builds; quadratic is 256.
pub(crate) const MAX_GROWTH: f64 = 100.0;

/// How many times longer `work(16 × n)` takes than `work(n)`, the fastest of three
/// runs each: about 16 for linear work, 256 for quadratic.
pub(crate) fn growth_ratio(n: usize, work: impl Fn(usize)) -> f64 {
    let fastest = |size: usize| -> Duration {
        (0..3)
            .map(|_| {
                let started = Instant::now();
                work(size);
                started.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let small = fastest(n);
    let ratio = fastest(16 * n).as_secs_f64() / small.as_secs_f64().max(1e-9);
    eprintln!("{n} in {small:?}; 16× that: ×{ratio:.1}");
    ratio
}

#[test]
fn finding_a_type_or_a_function_by_name_does_not_scan_every_definition() {
    let source = "struct T;";
    let tree = crate::extract::new_parser(Lang::Rust)
        .unwrap()
        .parse(source, None)
        .unwrap();
    let node = tree.root_node();
    let ratio = growth_ratio(4_000, |n| {
        let deadline = crate::budget::Deadline::after(std::time::Duration::MAX);
        let mut c = Collector::new(source, "::", &tree, &deadline);
        c.def(node, "T", SymbolKind::Struct, None);
        for i in 0..n {
            c.def(node, &format!("f{i}"), SymbolKind::Function, None);
            // A Go method's receiver type, a Python `m = f`'s function.
            assert_eq!(c.find_type("T"), Some(0));
            assert!(c.defines_callable("f0") && !c.defines_callable("g"));
        }
    });
    assert!(
        ratio < MAX_GROWTH,
        "16× the definitions took ×{ratio:.1} the time"
    );
}

#[test]
fn qualified_names_past_the_limit_keep_their_innermost_scopes() {
    let depth = 600;
    let source = format!(
        "{}fn f() {{ m! {{ fn g() {{}} }} }}{}",
        "mod a { ".repeat(depth),
        "}".repeat(depth)
    );
    let facts = crate::extract::extract(Lang::Rust, &source).unwrap();
    let f = facts.symbols.iter().position(|s| s.name == "f").unwrap();
    let g = &facts.symbols[facts.symbols.iter().position(|s| s.name == "g").unwrap()];
    for symbol in [&facts.symbols[f], g] {
        let name = &symbol.qualified_name;
        assert!(name.starts_with("…::a::a::"), "{name}");
        assert!(
            name.len() <= MAX_QUALIFIED_NAME + ELIDED_SCOPES.len() + 2,
            "{name}"
        );
    }
    assert!(facts.symbols[f].qualified_name.ends_with("a::a::f"));
    // The macro's definition still has the function around the macro as its parent.
    assert_eq!(g.parent, Some(f as u32));
    assert!(
        g.qualified_name.ends_with("a::a::f::g"),
        "{}",
        g.qualified_name
    );
    // Shallow names are whole.
    let facts = crate::extract::extract(Lang::Rust, "mod a { mod b { fn f() {} } }").unwrap();
    assert_eq!(facts.symbols[2].qualified_name, "a::b::f");
}

#[test]
fn splits_qualified_names_on_any_separator() {
    assert_eq!(split_qualified("a::b::C"), (Some("a::b"), "C"));
    assert_eq!(split_qualified("pkg.Base"), (Some("pkg"), "Base"));
    assert_eq!(split_qualified("\\App\\Model"), (Some("\\App"), "Model"));
    assert_eq!(split_qualified("Plain"), (None, "Plain"));
    assert_eq!(strip_generics("Vec<T>"), "Vec");
}

#[test]
fn reference_qualifiers_are_collapsed_and_capped_for_every_language() {
    let long = "x".repeat(3 * MAX_QUALIFIER);
    let src = format!("foo(\n    1\n).bar()\n{long}.baz()\n");
    let facts = crate::extract::extract(crate::Lang::Python, &src).unwrap();
    let qualifier = |name: &str| {
        facts
            .refs
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.qualifier.clone())
    };
    assert_eq!(qualifier("bar").as_deref(), Some("foo( 1 )"));
    assert_eq!(qualifier("baz").map(|q| q.len()), Some(MAX_QUALIFIER));
}

/// Every node's parent as the walk reads it is tree-sitter's: for the node being
/// visited, each of its ancestors, and a node off the walk's path (its last child).
#[test]
fn parents_read_from_the_walk_are_the_trees_parents() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CHECKED: AtomicUsize = AtomicUsize::new(0);
    fn same(a: Option<Node<'_>>, b: Option<Node<'_>>) -> bool {
        a.map(|n| n.id()) == b.map(|n| n.id())
    }
    fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
        let mut at = Some(node);
        while let Some(n) = at {
            assert!(same(c.parent_of(n), n.parent()), "{}", n.kind());
            CHECKED.fetch_add(1, Ordering::Relaxed);
            at = n.parent();
        }
        if let Some(last) = node.child(node.child_count().saturating_sub(1)) {
            assert!(same(c.parent_of(last), Some(node)), "{}", last.kind());
        }
        assert_eq!(c.parent_kind(node), node.parent().map(|p| p.kind()));
        Action::Descend
    }
    let source =
        "namespace a { template <class T> struct S { void m() { if (x) { f(g(1)); } } }; }";
    let tree = crate::extract::new_parser(Lang::Cpp)
        .unwrap()
        .parse(source, None)
        .unwrap();
    let deadline = crate::budget::Deadline::after(Duration::MAX);
    let mut c = Collector::new(source, "::", &tree, &deadline);
    assert!(matches!(walk(&tree, &mut c, visit), WalkEnd::Done));
    assert!(CHECKED.load(Ordering::Relaxed) > 100);
}
