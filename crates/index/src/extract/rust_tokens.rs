//! Calls inside the tokens of a Rust expression macro (`assert_eq!(f(), 1)`,
//! `vec![g()]`, `format!("{}", x.h())`), read from the token tree itself: a name (or
//! `self`/`Self`) followed by a parenthesized group is a call, its qualifier the path or
//! receiver chain written before it (`a::b::f()`, `x.y().m()`), and `name!` followed by a
//! group a macro invocation. Scanning the tokens costs no second parse: these macros are
//! by far the most frequent (a Rust tree has tens of thousands), and a parse each made a
//! full index a third slower. Nested groups are scanned too, without recursion.

use tree_sitter::Node;

use super::{Collector, RefKind};

/// Records the calls and macro invocations among the tokens of `tree` and its groups.
pub(crate) fn scan(c: &mut Collector<'_>, tree: Node<'_>) {
    let mut stack = vec![tree];
    let mut children: Vec<Node<'_>> = Vec::new();
    while let Some(group) = stack.pop() {
        children.clear();
        let mut cursor = group.walk();
        children.extend(group.children(&mut cursor));
        for (i, child) in children.iter().enumerate() {
            if child.kind() == "token_tree" {
                // An attribute's tokens (`#[cfg(any(..))]`) name no calls.
                if !is_attribute(c, &children, i) {
                    stack.push(*child);
                }
                continue;
            }
            if !is_name(c, *child) {
                continue;
            }
            let next = children.get(i + 1);
            if next.is_some_and(|n| n.kind() == "token_tree" && c.text(*n).starts_with('(')) {
                let qualifier = chain_before(c, &children, i);
                let name = c.text(*child);
                c.reference(*child, name, qualifier, RefKind::Call);
            } else if next.is_some_and(|n| c.text(*n) == "!")
                && children
                    .get(i + 2)
                    .is_some_and(|n| n.kind() == "token_tree")
            {
                let qualifier = chain_before(c, &children, i);
                let name = c.text(*child);
                c.reference(*child, name, qualifier, RefKind::Macro);
            }
        }
    }
}

fn is_name(c: &Collector<'_>, node: Node<'_>) -> bool {
    matches!(node.kind(), "identifier" | "primitive_type")
        || matches!(c.text(node), "self" | "Self" | "super" | "crate")
}

/// Whether the group at `at` is an attribute's `[..]`: after `#` or `#!`.
fn is_attribute(c: &Collector<'_>, children: &[Node<'_>], at: usize) -> bool {
    if !c.text(children[at]).starts_with('[') || at == 0 {
        return false;
    }
    match c.text(children[at - 1]) {
        "#" => true,
        "!" => at >= 2 && c.text(children[at - 2]) == "#",
        _ => false,
    }
}

fn is_separator(c: &Collector<'_>, node: Node<'_>) -> bool {
    matches!(c.text(node), "." | "::")
}

/// The receiver or path written before the name at `at` (`x.y()` for `x.y().m()`, `a::b`
/// for `a::b::f()`), if any.
fn chain_before<'s>(c: &Collector<'s>, children: &[Node<'_>], at: usize) -> Option<&'s str> {
    let mut start = at;
    loop {
        if start < 2 || !is_separator(c, children[start - 1]) {
            break;
        }
        let prev = children[start - 2];
        if is_name(c, prev) {
            start -= 2;
        } else if prev.kind() == "token_tree" && start >= 3 && is_name(c, children[start - 3]) {
            start -= 3;
        } else {
            break;
        }
    }
    if start == at {
        return None;
    }
    // The text from the chain's first token to the separator before the name.
    let text = c.source_between(children[start].start_byte(), children[at - 1].start_byte())?;
    Some(text.trim_end())
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    #[test]
    fn calls_in_expression_macros_are_read_from_the_tokens() {
        let source = "fn t() {\n    assert_eq!(x.y().m(), a::b::f(self.g(), vec![h()]));\n}\n";
        let facts = extract(Lang::Rust, source).unwrap();
        let refs: Vec<(&str, Option<&str>, &str, u32)> = facts
            .refs
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.qualifier.as_deref(),
                    r.kind.name(),
                    r.col,
                )
            })
            .collect();
        assert_eq!(
            refs,
            [
                ("assert_eq", None, "macro", 5),
                ("y", Some("x"), "call", 18),
                ("m", Some("x.y()"), "call", 22),
                ("f", Some("a::b"), "call", 33),
                ("g", Some("self"), "call", 40),
                ("vec", None, "macro", 45),
                ("h", None, "call", 50),
            ]
        );
        assert!(facts.refs.iter().all(|r| r.from == Some(0) && r.line == 2));
    }
}
