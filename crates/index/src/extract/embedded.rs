//! Regions of a file parsed a second time: the tokens of Rust macro invocations.
//!
//! tree-sitter leaves a macro's arguments as a flat token tree, so the items of
//! `cfg_rt! { pub fn spawn() {} }` and the calls in `assert_eq!(f(), 1)` would be
//! invisible. The visitor [defers](super::Collector::defer) each such region; once the
//! walk is over, each one is parsed again with tree-sitter's included ranges, which keep
//! the file's own byte offsets and positions (no span needs mapping back), and walked in
//! the scopes that were open at the invocation. Macros inside those regions are expanded
//! the same way, up to [`MAX_DEPTH`] levels.

use tree_sitter::{Parser, Range};

use super::parser::parse_within;
use super::{Collector, FileFacts, ParseLimits, collector};
use crate::budget::Deadline;

/// Deepest nesting of macro invocations expanded (`a! { b! { c!(..) } }` is three):
/// every level parses its tokens once more, so input made of nested macros is bounded.
/// Real code nests two or three (tokio's `cfg_rt! { cfg_not_wasi! { .. } }`).
pub(crate) const MAX_DEPTH: usize = 6;

/// Walks every deferred region of `c` (and those they defer in turn) and returns the
/// file's facts. A region whose parse fails or goes past `limits` is left out: it is
/// extra detail, never a reason to lose the file.
pub(crate) fn expand<'s>(
    parser: &mut Parser,
    source: &'s str,
    c: Collector<'s>,
    visit: collector::Visitor,
    limits: &ParseLimits,
) -> FileFacts {
    let facts = expand_level(parser, source, c, visit, limits, 0);
    // Whatever else, the whole document is the next parse's input.
    let _ = parser.set_included_ranges(&[]);
    facts
}

fn expand_level<'s>(
    parser: &mut Parser,
    source: &'s str,
    mut c: Collector<'s>,
    visit: collector::Visitor,
    limits: &ParseLimits,
    depth: usize,
) -> FileFacts {
    let deferred = c.take_deferred();
    if deferred.is_empty() || depth >= MAX_DEPTH {
        let mut facts = c.finish();
        if depth > 0 {
            // Deferred regions were walked after the rest: back to source order.
            facts.refs.sort_by_key(|r| (r.line, r.col));
        }
        return facts;
    }
    let mut trees = Vec::with_capacity(deferred.len());
    let deadline = c.deadline();
    for d in deferred {
        let Some(tree) = parse_range(parser, source, d.range, limits, deadline) else {
            continue;
        };
        if tree.root_node().has_error() && !d.fallback.is_empty() {
            for &range in &d.fallback {
                if let Some(tree) = parse_range(parser, source, range, limits, deadline) {
                    trees.push((tree, d.scopes.clone()));
                }
            }
        } else {
            trees.push((tree, d.scopes));
        }
    }
    // The collector now also holds nodes of these trees, which live only in this call.
    let mut c: Collector<'_> = c;
    for (tree, scopes) in &trees {
        c.enter_deferred(scopes);
        // A region nested too deep for the walk is left out, like one that fails to
        // parse; one walked past the deadline is cut short, and the file refused by
        // `extract_within`'s last look at the deadline.
        let _ = collector::walk(tree, &mut c, visit);
    }
    expand_level(parser, source, c, visit, limits, depth + 1)
}

fn parse_range(
    parser: &mut Parser,
    source: &str,
    range: Range,
    limits: &ParseLimits,
    deadline: &Deadline,
) -> Option<tree_sitter::Tree> {
    parser.set_included_ranges(&[range]).ok()?;
    parse_within(parser, source, limits.max_bytes, deadline).ok()
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    #[test]
    fn macros_nested_past_the_limit_are_not_expanded() {
        let mut source = String::new();
        for level in 0..MAX_DEPTH_PLUS_TWO {
            source.push_str(&format!("m! {{ fn f{level}() {{}} "));
        }
        source.push_str(&"}".repeat(MAX_DEPTH_PLUS_TWO));
        let facts = extract(Lang::Rust, &source).unwrap();
        let names: Vec<&str> = facts.symbols.iter().map(|s| s.name.as_str()).collect();
        let expected: Vec<String> = (0..super::MAX_DEPTH).map(|l| format!("f{l}")).collect();
        assert_eq!(names, expected);
    }

    const MAX_DEPTH_PLUS_TWO: usize = super::MAX_DEPTH + 2;

    #[test]
    fn macro_items_keep_the_file_positions_and_scopes() {
        let source = "struct S;\nimpl S {\n    m! {\n        fn a(&self) { b(1) }\n    }\n}\n";
        let facts = extract(Lang::Rust, source).unwrap();
        let a = facts.symbols.iter().find(|s| s.name == "a").unwrap();
        assert_eq!(a.qualified_name, "S::a");
        assert_eq!(a.kind.name(), "method");
        assert_eq!((a.span.start_line, a.span.start_col), (4, 9));
        assert_eq!(
            &source[a.span.start_byte as usize..a.span.end_byte as usize],
            "fn a(&self) { b(1) }"
        );
        let b = facts.refs.iter().find(|r| r.name == "b").unwrap();
        assert_eq!((b.line, b.col), (4, 23));
        assert_eq!(
            b.from.map(|i| facts.symbols[i as usize].name.as_str()),
            Some("a")
        );
    }
}
