//! PHP: namespaces, classes, interfaces, traits, enums, functions, methods, constants,
//! calls, `new`, type uses, `use` imports, `require`/`include` and bases.
//!
//! Rules:
//! - the separator is `\`, so a class's qualified name is its fully qualified PHP name
//!   (`App\Models\User`, what `use` statements name) and a method's is `App\Models\User\save`;
//! - `namespace A\B { .. }` scopes its block; `namespace A\B;` scopes the rest of the file
//!   (only the first such statement: a file with several statement namespaces gets the
//!   first one's scope throughout);
//! - `extends` is Inherits (for classes and interfaces alike), `implements` and a trait
//!   `use T;` inside a class are Implements;
//! - `use A\B\C;` imports `C` from module `A\B`, `use A\B as X;` binds it to `X`,
//!   `use A\{B, C as D};` is one import per name (leading `\` dropped);
//!   `require`/`include` (`_once`) of a literal path imports module = that path, with
//!   `__DIR__ . '/x.php'` read as `x.php`.

use tree_sitter::Node;

use super::fields::Fields;
use super::nodes::named_children;

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names: the PHP namespace separator.
pub(crate) const SEPARATOR: &str = "\\";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 1;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let kind = match node.kind() {
        "program" => return statement_namespace(c, node),
        "namespace_definition" => {
            if node.field("body").is_none() {
                return Action::Skip; // opened at the root
            }
            SymbolKind::Module
        }
        "class_declaration" => SymbolKind::Class,
        "interface_declaration" => SymbolKind::Interface,
        "trait_declaration" => SymbolKind::Trait,
        "enum_declaration" => SymbolKind::Enum,
        "function_definition" => SymbolKind::Function,
        "method_declaration" => SymbolKind::Method,
        "const_declaration" => {
            for element in named_children(node)
                .into_iter()
                .filter(|n| n.kind() == "const_element")
            {
                if let Some(name) = named_children(element)
                    .into_iter()
                    .find(|n| n.kind() == "name")
                {
                    let name = c.text(name).to_string();
                    c.def(node, &name, SymbolKind::Constant, None);
                }
            }
            return Action::Descend;
        }
        "namespace_use_declaration" => {
            use_declaration(c, node);
            return Action::Skip;
        }
        "use_declaration" => {
            trait_uses(c, node);
            return Action::Skip;
        }
        "require_expression"
        | "require_once_expression"
        | "include_expression"
        | "include_once_expression" => {
            if let Some(path) = node.named_child(0).and_then(|e| literal_path(c, e)) {
                c.import(node, &path, None, None);
            }
            return Action::Skip;
        }
        // Bases are recorded with their type.
        "base_clause" | "class_interface_clause" => return Action::Skip,
        "function_call_expression" => {
            if let Some(function) = node.field("function")
                && let Some((qualifier, name)) = written_name(c, function)
            {
                c.reference(function, &name, qualifier.as_deref(), RefKind::Call);
            }
            return Action::Descend;
        }
        "member_call_expression" | "nullsafe_member_call_expression" | "scoped_call_expression" => {
            let target = node.field("object").or_else(|| node.field("scope"));
            if let Some(name) = node.field("name").filter(|n| n.kind() == "name") {
                let qualifier = target.map(|t| c.text(t));
                let text = c.text(name);
                c.reference(name, text, qualifier, RefKind::Call);
            }
            return Action::Descend;
        }
        "object_creation_expression" => {
            let class = named_children(node)
                .into_iter()
                .find(|n| matches!(n.kind(), "name" | "qualified_name"));
            if let Some(class) = class
                && let Some((qualifier, name)) = written_name(c, class)
            {
                c.reference(class, &name, qualifier.as_deref(), RefKind::Call);
            }
            return Action::Descend;
        }
        "named_type" => {
            let special = |n: &str| matches!(n, "self" | "static" | "parent");
            if let Some(ty) = node.named_child(0)
                && let Some((qualifier, name)) = written_name(c, ty).filter(|(_, n)| !special(n))
            {
                c.reference(ty, &name, qualifier.as_deref(), RefKind::TypeUse);
            }
            return Action::Skip;
        }
        _ => return Action::Descend,
    };
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let name: String = name.split_whitespace().collect();
    let body = node.field("body");
    let id = c.def(node, &name, kind, body);
    for child in named_children(node) {
        let base_kind = match child.kind() {
            "base_clause" => BaseKind::Inherits,
            "class_interface_clause" => BaseKind::Implements,
            _ => continue,
        };
        for base in named_children(child) {
            let written = c.text(base);
            c.base(base, id, written, base_kind);
        }
    }
    Action::Enter(id)
}

/// `namespace A\B;` (no block) applies to the statements after it, so its scope opens at the root.
fn statement_namespace(c: &mut Collector<'_>, root: Node<'_>) -> Action {
    let Some(ns) = named_children(root)
        .into_iter()
        .find(|n| n.kind() == "namespace_definition" && n.field("body").is_none())
    else {
        return Action::Descend;
    };
    let Some(name) = c.field_text(ns, "name") else {
        return Action::Descend;
    };
    let name: String = name.split_whitespace().collect();
    let id = c.def(ns, &name, SymbolKind::Module, None);
    Action::Enter(id)
}

/// `use A\B;`, `use A\B as C, D;`, `use function A\f;`, `use A\{B, C as D};`.
fn use_declaration(c: &mut Collector<'_>, node: Node<'_>) {
    let children = named_children(node);
    let group_prefix = children
        .iter()
        .find(|n| n.kind() == "namespace_name")
        .map(|n| c.text(*n));
    let clauses: Vec<Node<'_>> = match node.field("body") {
        Some(group) => named_children(group),
        None => children,
    };
    for clause in clauses
        .into_iter()
        .filter(|n| n.kind() == "namespace_use_clause")
    {
        let Some(target) = named_children(clause)
            .into_iter()
            .find(|n| matches!(n.kind(), "name" | "qualified_name"))
        else {
            continue;
        };
        let (prefix, name) = split_namespace(c.text(target));
        let module = match (group_prefix, prefix) {
            (Some(g), Some(p)) => format!("{}\\{p}", trim_namespace(g)),
            (Some(g), None) => trim_namespace(g).to_string(),
            (None, Some(p)) => p.to_string(),
            (None, None) => String::new(),
        };
        let alias = c.field_text(clause, "alias");
        c.import(node, &module, Some(name), alias);
    }
}

/// `use Loggable, Other\T2;` inside a class body: the class implements the traits.
fn trait_uses(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(id) = c.current_symbol() else { return };
    for name in named_children(node) {
        if matches!(name.kind(), "name" | "qualified_name" | "relative_name") {
            let written = c.text(name);
            c.base(name, id, written, BaseKind::Implements);
        }
    }
}

/// A name as written, split into its namespace and last segment: `\App\f` → (`App`, `f`).
fn written_name(c: &Collector<'_>, node: Node<'_>) -> Option<(Option<String>, String)> {
    if !matches!(node.kind(), "name" | "qualified_name" | "relative_name") {
        return None;
    }
    let written: String = c.text(node).split_whitespace().collect();
    let (prefix, name) = split_namespace(&written);
    Some((prefix.map(str::to_string), name.to_string()))
}

/// `\A\B\C` → (`Some("A\B")`, `"C"`).
fn split_namespace(written: &str) -> (Option<&str>, &str) {
    let written = trim_namespace(written);
    match written.rfind('\\') {
        Some(i) => (
            Some(&written[..i]).filter(|p| !p.is_empty()),
            &written[i + 1..],
        ),
        None => (None, written),
    }
}

fn trim_namespace(written: &str) -> &str {
    written.trim().trim_matches('\\')
}

/// The path of `require 'x.php'`, `require "x.php"` or `require __DIR__ . '/x.php'`.
fn literal_path(c: &Collector<'_>, expr: Node<'_>) -> Option<String> {
    let mut expr = expr;
    let mut relative_to_dir = false;
    for _ in 0..16 {
        match expr.kind() {
            "string" | "encapsed_string" => {
                let parts = named_children(expr);
                if parts.iter().any(|p| p.kind() != "string_content") {
                    return None; // interpolated
                }
                let path: String = parts.iter().map(|p| c.text(*p)).collect();
                let path = if relative_to_dir {
                    path.trim_start_matches('/').to_string()
                } else {
                    path
                };
                return Some(path);
            }
            "binary_expression" if !relative_to_dir => {
                let left = expr.field("left")?;
                if !matches!(c.text(left).trim(), "__DIR__" | "dirname(__FILE__)") {
                    return None;
                }
                relative_to_dir = true;
                expr = expr.field("right")?;
            }
            "parenthesized_expression" => expr = expr.named_child(0)?,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    #[test]
    fn statement_namespace_qualifies_the_file_with_backslashes() {
        let src = "<?php\nnamespace App\\Models;\nclass User { function save() {} }\nfunction helper() {}\n";
        let facts = extract(Lang::Php, src).unwrap();
        let names = facts.qualified_kinds();
        assert_eq!(
            names,
            vec![
                ("App\\Models", "module"),
                ("App\\Models\\User", "class"),
                ("App\\Models\\User\\save", "method"),
                ("App\\Models\\helper", "function"),
            ]
        );
    }

    #[test]
    fn use_statements_become_one_import_per_name() {
        let src = "<?php\nuse \\Foo\\Bar as Baz, Qux;\nuse App\\{A, B\\C as D};\nrequire_once __DIR__ . '/lib/x.php';\n";
        let facts = extract(Lang::Php, src).unwrap();
        let imports: Vec<(&str, Option<&str>, Option<&str>)> = facts
            .imports
            .iter()
            .map(|i| (i.module.as_str(), i.name.as_deref(), i.alias.as_deref()))
            .collect();
        assert_eq!(
            imports,
            vec![
                ("Foo", Some("Bar"), Some("Baz")),
                ("", Some("Qux"), None),
                ("App", Some("A"), None),
                ("App\\B", Some("C"), Some("D")),
                ("lib/x.php", None, None),
            ]
        );
    }
}
