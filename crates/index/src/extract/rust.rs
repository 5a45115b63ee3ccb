//! Rust: items, impl blocks, calls and macro calls, `use` trees, trait impls and supertraits.

use tree_sitter::Node;

use super::collector::{named_children, split_qualified};

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let kind = match node.kind() {
        "function_item" | "function_signature_item" => {
            if c.in_type_scope() {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            }
        }
        "struct_item" | "union_item" => SymbolKind::Struct,
        "enum_item" => SymbolKind::Enum,
        "trait_item" => SymbolKind::Trait,
        "type_item" => SymbolKind::TypeAlias,
        "mod_item" => SymbolKind::Module,
        "const_item" | "static_item" => SymbolKind::Constant,
        "macro_definition" => SymbolKind::Macro,
        "impl_item" => return impl_block(c, node),
        "call_expression" => {
            if let Some(function) = node.child_by_field_name("function") {
                call_target(c, function);
            }
            return Action::Descend;
        }
        "macro_invocation" => {
            if let Some(mac) = node.child_by_field_name("macro") {
                let (qualifier, name) = split_qualified(c.text(mac));
                c.reference(mac, name, qualifier, RefKind::Call);
            }
            return Action::Descend;
        }
        "use_declaration" => {
            if let Some(arg) = node.child_by_field_name("argument") {
                use_tree(c, node, arg, "");
            }
            return Action::Skip;
        }
        "type_identifier" => {
            if !c.is_name_field(node) {
                let text = c.text(node);
                c.reference(node, text, None, RefKind::TypeUse);
            }
            return Action::Skip;
        }
        "scoped_type_identifier" => {
            let qualifier = c.field_text(node, "path");
            if let Some(name) = node.child_by_field_name("name") {
                let text = c.text(name);
                c.reference(name, text, qualifier, RefKind::TypeUse);
            }
            return Action::Skip;
        }
        // Macro arguments and bodies are flat tokens to tree-sitter (no calls or types to
        // find), and string literals and comments hold none either: not walked.
        "parameter" | "let_declaration" | "field_declaration" => {
            super::receivers::rust(c, node);
            return Action::Descend;
        }
        "token_tree" | "string_literal" | "raw_string_literal" | "line_comment"
        | "block_comment" => return Action::Skip,
        _ => return Action::Descend,
    };
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let body = node.child_by_field_name("body");
    if kind == SymbolKind::Module && body.is_none() {
        // `mod foo;` only points at another file, which defines the module.
        return Action::Skip;
    }
    let id = c.def(node, name, kind, body);
    if kind == SymbolKind::Trait
        && let Some(bounds) = node.child_by_field_name("bounds")
    {
        for bound in named_children(bounds) {
            let written = c.text(bound);
            c.base(bound, id, written, BaseKind::Inherits);
        }
    }
    Action::Enter(id)
}

/// `impl Type { .. }` and `impl Trait for Type { .. }`: methods get `Type::` as scope,
/// and the trait impl is an IMPLEMENTS base of `Type`.
fn impl_block(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(ty) = node.child_by_field_name("type") else {
        return Action::Descend;
    };
    let type_text = c.text(ty);
    let (_, type_name) = split_qualified(super::collector::strip_generics(type_text));
    let type_name = type_name.to_string();
    let local = c.find_type(&type_name);
    if let Some(trait_node) = node.child_by_field_name("trait") {
        let written = c.text(trait_node);
        c.base_of(trait_node, local, &type_name, written, BaseKind::Implements);
    }
    match local {
        Some(id) => Action::Enter(id),
        None => Action::EnterNamed(type_name),
    }
}

fn call_target(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "scoped_identifier" => {
            let qualifier = c.field_text(function, "path");
            if let Some(name) = function.child_by_field_name("name") {
                let text = c.text(name);
                c.reference(name, text, qualifier, RefKind::Call);
            }
        }
        "field_expression" => {
            let qualifier = c.field_text(function, "value");
            if let Some(field) = function.child_by_field_name("field") {
                let text = c.text(field);
                c.reference(field, text, qualifier, RefKind::Call);
            }
        }
        "generic_function" => {
            if let Some(inner) = function.child_by_field_name("function") {
                call_target(c, inner);
            }
        }
        _ => {}
    }
}

/// Flattens a `use` tree into one import per name: `use a::{b, c::d as e, f::*}`.
fn use_tree(c: &mut Collector<'_>, stmt: Node<'_>, node: Node<'_>, prefix: &str) {
    let join = |p: &str, s: &str| match (p.is_empty(), s.is_empty()) {
        (true, _) => s.to_string(),
        (false, true) => p.to_string(),
        (false, false) => format!("{p}::{s}"),
    };
    match node.kind() {
        "identifier" | "crate" | "self" | "super" => {
            let text = c.text(node);
            c.import(stmt, prefix, Some(text), None);
        }
        "scoped_identifier" => {
            let path = c.field_text(node, "path").unwrap_or("");
            let name = c.field_text(node, "name").unwrap_or("");
            let module = join(prefix, path);
            c.import(stmt, &module, Some(name), None);
        }
        "use_as_clause" => {
            let Some(path) = node.child_by_field_name("path") else {
                return;
            };
            let alias = c.field_text(node, "alias");
            let (module, name) = split_qualified(c.text(path));
            let module = join(prefix, module.unwrap_or(""));
            c.import(stmt, &module, Some(name), alias);
        }
        "use_wildcard" => {
            let text = c.text(node).trim_end_matches("*").trim_end_matches("::");
            let module = join(prefix, text);
            c.import(stmt, &module, None, None);
        }
        "scoped_use_list" => {
            let path = c.field_text(node, "path").unwrap_or("");
            let next = join(prefix, path);
            if let Some(list) = node.child_by_field_name("list") {
                for child in named_children(list) {
                    use_tree(c, stmt, child, &next);
                }
            }
        }
        "use_list" => {
            for child in named_children(node) {
                use_tree(c, stmt, child, prefix);
            }
        }
        _ => {}
    }
}
