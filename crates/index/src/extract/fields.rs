//! A node's child by field name, with the name's id looked up once per grammar.
//!
//! tree-sitter's `child_by_field_name` finds the field's id by comparing the name with
//! every field name of the grammar (`strncmp`, `strlen`) on each call; the visitors ask
//! for fields hundreds of thousands of times per index, about 2 % of a Rust tree's
//! extraction CPU in perf. Field names here are string literals, so the literal's
//! address and the grammar's identify an id for good.

use std::cell::RefCell;
use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap};
use tree_sitter::Node;

thread_local! {
    /// (grammar, field name literal's address and length) → field id, 0 if the grammar
    /// has no such field.
    static IDS: RefCell<FxHashMap<(u64, usize, usize), u16>> = RefCell::default();
}

/// [`Node::child_by_field_name`] for a literal field name, with its id cached.
pub(crate) trait Fields<'tree> {
    /// The child in field `name`, if any.
    fn field(&self, name: &'static str) -> Option<Node<'tree>>;
}

impl<'tree> Fields<'tree> for Node<'tree> {
    fn field(&self, name: &'static str) -> Option<Node<'tree>> {
        let language = self.language();
        // `Language` hashes its grammar pointer: equal for the same grammar only.
        let grammar = FxBuildHasher.hash_one(&*language);
        let key = (grammar, name.as_ptr() as usize, name.len());
        let id = IDS.with(|ids| {
            *ids.borrow_mut()
                .entry(key)
                .or_insert_with(|| language.field_id_for_name(name).map_or(0, |id| id.get()))
        });
        if id == 0 {
            return None;
        }
        self.child_by_field_id(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lang;
    use crate::extract::new_parser;

    #[test]
    fn fields_are_those_tree_sitter_finds_by_name_in_every_grammar() {
        let cases = [
            (
                Lang::Rust,
                "fn f(x: u8) -> u8 { g(x) }",
                ["name", "parameters", "body"],
            ),
            (
                Lang::Python,
                "def f(x):\n    return g(x)\n",
                ["name", "parameters", "body"],
            ),
            (
                Lang::Go,
                "package p\nfunc f(x int) int { return g(x) }\n",
                ["name", "parameters", "body"],
            ),
        ];
        for (lang, source, fields) in cases {
            let tree = new_parser(lang).unwrap().parse(source, None).unwrap();
            let mut stack = vec![tree.root_node()];
            let mut found = 0;
            while let Some(node) = stack.pop() {
                for name in fields
                    .iter()
                    .copied()
                    .chain(["type", "function", "no_such_field"])
                {
                    let by_name = node.child_by_field_name(name).map(|n| n.id());
                    assert_eq!(node.field(name).map(|n| n.id()), by_name, "{lang:?} {name}");
                    found += usize::from(by_name.is_some());
                }
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
            }
            assert!(found >= 3, "{lang:?}: only {found} fields seen");
        }
    }
}
