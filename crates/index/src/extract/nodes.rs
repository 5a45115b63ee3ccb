//! Helpers over tree-sitter nodes alone (no collector): a node's span, its named
//! children, a non-recursive visit of its descendants.

use tree_sitter::Node;

use super::Span;

/// Whether one of `node`'s own children is the token `token` (a keyword or a
/// punctuation mark the grammar keeps unnamed: `interface`, `struct`, `*`, `=`).
pub(crate) fn has_token(node: Node<'_>, token: &str) -> bool {
    (0..node.child_count())
        .filter_map(|i| node.child(i))
        .any(|n| n.kind() == token)
}

pub(crate) fn span(node: Node<'_>) -> Span {
    let start = node.start_position();
    let end = node.end_position();
    Span {
        start_line: start.row as u32 + 1,
        start_col: start.column as u32 + 1,
        end_line: end.row as u32 + 1,
        start_byte: node.start_byte() as u32,
        end_byte: node.end_byte() as u32,
    }
}

/// Visits `node`'s descendants (not `node` itself) in source order without recursion;
/// `f` returns whether to visit the children of the node it was given.
pub(crate) fn for_each_descendant<'t>(node: Node<'t>, mut f: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = node.walk();
    if !cursor.goto_first_child() {
        return;
    }
    let mut depth = 1usize;
    loop {
        if f(cursor.node()) && cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if depth <= 1 || !cursor.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}

/// The named children of `node`, comments left out (base lists, use lists, parameters).
pub(crate) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|n| !n.kind().contains("comment"))
        .collect()
}
