//! swift: not yet extracted (stub: definitions, calls, imports and bases to come).

use tree_sitter::Node;

use super::{Action, Collector};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

pub(crate) fn visit(_c: &mut Collector<'_>, _node: Node<'_>) -> Action {
    Action::Descend
}
