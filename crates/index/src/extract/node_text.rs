//! A node's text read through the collector: the text before a descendant, and a
//! dotted type (`a.b.C`) recorded as a type use.

use tree_sitter::Node;

use super::RefKind;
use super::collector::Collector;
use super::nodes::named_children;

/// The text of `outer` up to where `inner` (a descendant) starts.
pub(crate) fn text_before<'s>(c: &Collector<'s>, outer: Node<'_>, inner: Node<'_>) -> &'s str {
    let len = inner.start_byte().saturating_sub(outer.start_byte());
    c.text(outer).get(..len).unwrap_or("")
}

/// Records a type use for a dotted type (`a.b.C`): the last child of `segment_kind` is
/// the name, the text before it the qualifier.
pub(crate) fn dotted_type_use(c: &mut Collector<'_>, node: Node<'_>, segment_kind: &str) {
    let segments: Vec<Node<'_>> = named_children(node)
        .into_iter()
        .filter(|n| n.kind() == segment_kind)
        .collect();
    if let Some(last) = segments.last() {
        let qualifier = text_before(c, node, *last)
            .trim()
            .trim_end_matches('.')
            .to_string();
        let name = c.text(*last);
        c.reference(*last, name, Some(&qualifier), RefKind::TypeUse);
    }
}
