//! Go: functions, methods (`func (r *T) M()` is `T.M`), structs, interfaces and their
//! method sets, other named types, constants; calls, type uses, imports, and embedding
//! (an embedded struct field or interface is an INHERITS base).

use tree_sitter::Node;

use super::collector::MAX_QUALIFIER;
use super::fields::Fields;
use super::text::compact;
use super::written::strip_generics;
use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 1;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    match node.kind() {
        "function_declaration" => {
            let Some(name) = c.field_text(node, "name") else {
                return Action::Descend;
            };
            let id = c.def(node, name, SymbolKind::Function, node.field("body"));
            Action::Enter(id)
        }
        "method_declaration" => method(c, node),
        "type_spec" | "type_alias" => type_spec(c, node),
        "method_elem" => {
            let Some(name) = c.field_text(node, "name") else {
                return Action::Descend;
            };
            let id = c.def(node, name, SymbolKind::Method, None);
            Action::Enter(id)
        }
        "const_spec" => {
            let decl = single_spec_parent(c, node);
            let mut cursor = node.walk();
            let names: Vec<Node<'_>> = node
                .children_by_field_name("name", &mut cursor)
                .filter(|n| n.kind() == "identifier")
                .collect();
            let mut last = None;
            for name in names {
                let text = c.text(name);
                let doc = c.preceding_comments(decl);
                last = Some(c.def_with_doc(decl, text, SymbolKind::Constant, None, doc));
            }
            // With several names, the values are nobody's in particular.
            match last {
                Some(id)
                    if node
                        .children_by_field_name("name", &mut node.walk())
                        .count()
                        == 1 =>
                {
                    Action::Enter(id)
                }
                _ => Action::Descend,
            }
        }
        "call_expression" => {
            if let Some(function) = node.field("function") {
                call_target(c, function);
            }
            Action::Descend
        }
        "type_identifier" => {
            let declared = c
                .parent_of(node)
                .filter(|p| matches!(p.kind(), "type_spec" | "type_alias"))
                .and_then(|p| p.field("name"))
                .is_some_and(|n| n.id() == node.id());
            if !declared {
                let name = c.text(node);
                c.reference(node, name, None, RefKind::TypeUse);
            }
            Action::Skip
        }
        "qualified_type" => {
            if let Some(name) = node.field("name") {
                let qualifier = c.field_text(node, "package");
                let text = c.text(name);
                c.reference(name, text, qualifier, RefKind::TypeUse);
            }
            Action::Skip
        }
        "import_spec" => {
            if let Some(path) = node.field("path") {
                let module = c.text(path).trim_matches(['"', '`']).to_string();
                let alias = c.field_text(node, "name");
                c.import(node, &module, None, alias);
            }
            Action::Skip
        }
        // Fields are not definitions; embedded ones were recorded as bases with their struct.
        "field_declaration" => {
            if node.field("name").is_none() {
                return Action::Skip;
            }
            super::receivers::go(c, node);
            Action::Descend
        }
        "parameter_declaration" | "var_spec" | "short_var_declaration" | "assignment_statement" => {
            super::receivers::go(c, node);
            Action::Descend
        }
        "type_elem" => {
            if c.parent_of(node)
                .is_some_and(|p| p.kind() == "interface_type")
            {
                return Action::Skip;
            }
            Action::Descend
        }
        _ => Action::Descend,
    }
}

/// `func (r *T) M()`: a method `T.M`, a child of `T` when this file defines it.
fn method(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let body = node.field("body");
    let receiver = node
        .field("receiver")
        .and_then(receiver_type)
        .map(|t| receiver_name(c.text(t)));
    let id = match receiver {
        Some(ty) if !ty.is_empty() => {
            let parent = c.find_type(&ty);
            c.def_qualified(node, &ty, name, SymbolKind::Method, body, parent)
        }
        _ => c.def(node, name, SymbolKind::Method, body),
    };
    Action::Enter(id)
}

/// The type node of a receiver list `(r *T)`.
fn receiver_type(list: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = list.walk();
    let decl = list
        .named_children(&mut cursor)
        .find(|n| n.kind() == "parameter_declaration")?;
    decl.field("type")
}

/// `*T`, `T[K, V]`, `*pkg.T` → `T`.
fn receiver_name(written: &str) -> String {
    let bare = strip_generics(
        written
            .trim()
            .trim_start_matches(['*', '(', ' '])
            .trim_end_matches(')'),
    );
    bare.rsplit('.').next().unwrap_or(bare).trim().to_string()
}

/// `type T struct {..}`, `type I interface {..}`, `type N int`, `type A = B`.
fn type_spec(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let ty = node.field("type");
    let kind = match ty.map(|t| t.kind()) {
        Some("struct_type") if node.kind() == "type_spec" => SymbolKind::Struct,
        Some("interface_type") if node.kind() == "type_spec" => SymbolKind::Interface,
        _ => SymbolKind::TypeAlias,
    };
    let def_node = single_spec_parent(c, node);
    let body = ty
        .filter(|_| matches!(kind, SymbolKind::Struct | SymbolKind::Interface))
        .and_then(|t| {
            if t.kind() == "struct_type" {
                t.named_child(0)
            } else {
                Some(t)
            }
        });
    // `type T struct` stops at the brace; `interface_type` starts at its keyword.
    let body = match (kind, body) {
        (SymbolKind::Interface, Some(t)) => first_brace(t).or(Some(t)),
        (_, b) => b,
    };
    let doc = c.preceding_comments(def_node);
    let id = c.def_with_doc(def_node, name, kind, body, doc);
    if let Some(ty) = ty {
        embedded(c, ty, id);
    }
    Action::Enter(id)
}

/// The `{` of an `interface { .. }`, so the signature keeps the keyword.
fn first_brace(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).find(|n| n.kind() == "{")
}

/// Embedded struct fields and embedded interfaces: INHERITS bases of `id`.
fn embedded(c: &mut Collector<'_>, ty: Node<'_>, id: u32) {
    let mut found = Vec::new();
    match ty.kind() {
        "struct_type" => {
            let Some(list) = ty.named_child(0) else {
                return;
            };
            let mut cursor = list.walk();
            for field in list.named_children(&mut cursor) {
                if field.kind() == "field_declaration"
                    && field.field("name").is_none()
                    && let Some(t) = field.field("type")
                {
                    found.push(t);
                }
            }
        }
        "interface_type" => {
            let mut cursor = ty.walk();
            for elem in ty.named_children(&mut cursor) {
                if elem.kind() == "type_elem" {
                    let mut inner = elem.walk();
                    // `A | B` unions are constraints, not embedding.
                    let types: Vec<Node<'_>> = elem.named_children(&mut inner).collect();
                    if types.len() == 1 {
                        found.push(types[0]);
                    }
                }
            }
        }
        _ => {}
    }
    for t in found {
        let written = c.text(t).trim_start_matches('*').to_string();
        if matches!(
            t.kind(),
            "type_identifier" | "qualified_type" | "generic_type" | "pointer_type"
        ) {
            let written = compact(&written, MAX_QUALIFIER);
            c.base(t, id, &written, BaseKind::Inherits);
        }
    }
}

/// The whole `type`/`const` declaration when it holds only this spec (its doc comment
/// and keyword belong to the spec), else the spec itself.
fn single_spec_parent<'t>(c: &Collector<'t>, spec: Node<'t>) -> Node<'t> {
    match c.parent_of(spec) {
        Some(p)
            if matches!(p.kind(), "type_declaration" | "const_declaration")
                && p.named_child_count() == 1 =>
        {
            p
        }
        _ => spec,
    }
}

fn call_target(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "selector_expression" => {
            let Some(field) = function.field("field") else {
                return;
            };
            let qualifier = function.field("operand").map(|o| c.text(o));
            let name = c.text(field);
            c.reference(field, name, qualifier, RefKind::Call);
        }
        "parenthesized_expression" | "generic_function" | "index_expression" => {
            // `(f)()`, `f[T]()`: the callee is inside.
            let inner = function
                .field("function")
                .or_else(|| function.field("operand"));
            if let Some(inner) = inner.or_else(|| function.named_child(0))
                && matches!(inner.kind(), "identifier" | "selector_expression")
            {
                call_target(c, inner);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::{SymbolKind, extract};

    #[test]
    fn a_method_on_a_generic_receiver_is_qualified_by_its_type() {
        let facts = extract(
            Lang::Go,
            "package p\ntype L[T any] struct{}\nfunc (l *L[T]) Len() int { return 0 }\n",
        )
        .unwrap();
        let len = facts.symbols.iter().find(|s| s.name == "Len").unwrap();
        assert_eq!(
            (len.kind, len.qualified_name.as_str(), len.parent),
            (SymbolKind::Method, "L.Len", Some(0))
        );
    }
}
