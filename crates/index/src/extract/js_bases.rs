//! The bases a JavaScript/TypeScript class names (`extends B`, `implements I`), shared by
//! class declarations ([`super::javascript`]) and classes built by assignment
//! ([`super::js_assigned`]).

use tree_sitter::Node;

use super::collector::MAX_QUALIFIER;
use super::text::compact;
use super::{BaseKind, Collector};

/// `extends B` (JavaScript: any expression; TypeScript: `extends_clause`) and `implements I, J`.
pub(crate) fn class_bases(c: &mut Collector<'_>, class: Node<'_>, id: u32) {
    let mut cursor = class.walk();
    let heritage: Vec<Node<'_>> = class
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "class_heritage")
        .collect();
    for h in heritage {
        let mut cursor = h.walk();
        let parts: Vec<Node<'_>> = h.named_children(&mut cursor).collect();
        for part in parts {
            match part.kind() {
                "extends_clause" => {
                    let mut cursor = part.walk();
                    let values: Vec<Node<'_>> =
                        part.children_by_field_name("value", &mut cursor).collect();
                    for value in values {
                        base_expression(c, value, id, BaseKind::Inherits);
                    }
                }
                "implements_clause" => bases_in(c, part, id, BaseKind::Implements),
                "comment" => {}
                _ => base_expression(c, part, id, BaseKind::Inherits),
            }
        }
    }
}

/// A base written as an expression: `Base`, `ns.Base`; mixin calls are not recorded.
pub(crate) fn base_expression(c: &mut Collector<'_>, value: Node<'_>, id: u32, kind: BaseKind) {
    if matches!(
        value.kind(),
        "identifier" | "member_expression" | "nested_identifier"
    ) {
        let written = compact(c.text(value), MAX_QUALIFIER);
        c.base(value, id, &written, kind);
    }
}

/// Every type named in a clause: `extends A, ns.B<T>` / `implements I`.
pub(crate) fn bases_in(c: &mut Collector<'_>, clause: Node<'_>, id: u32, kind: BaseKind) {
    let mut cursor = clause.walk();
    let types: Vec<Node<'_>> = clause.named_children(&mut cursor).collect();
    for ty in types {
        if matches!(
            ty.kind(),
            "type_identifier" | "nested_type_identifier" | "generic_type" | "identifier"
        ) {
            let written = compact(c.text(ty), MAX_QUALIFIER);
            c.base(ty, id, &written, kind);
        }
    }
}
