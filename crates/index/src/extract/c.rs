//! C: function definitions (prototypes are declarations, not definitions), structs,
//! unions and enums with a body, typedefs (`typedef struct {..} Name;` is the struct
//! `Name`), object-like macros as constants and function-like macros as macros; calls,
//! type uses and `#include`s.

use tree_sitter::Node;

use super::fields::Fields;
use super::{Action, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = "::";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 1;

/// Most declarator wrappers followed to find a name (`(*(*f)[3])(int)` has a handful).
const MAX_DECLARATOR_DEPTH: usize = 64;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    match node.kind() {
        "function_definition" => {
            let Some(name) = node.field("declarator").and_then(function_name) else {
                return Action::Descend;
            };
            let name = c.text(name);
            let id = c.def(node, name, SymbolKind::Function, node.field("body"));
            Action::Enter(id)
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" => specifier(c, node),
        "type_definition" => typedef(c, node),
        "preproc_def" | "preproc_function_def" => {
            let kind = if node.kind() == "preproc_def" {
                SymbolKind::Constant
            } else {
                SymbolKind::Macro
            };
            if let Some(name) = c.field_text(node, "name") {
                c.def(node, name, kind, None);
            }
            Action::Skip
        }
        "preproc_include" => {
            if let Some(path) = node.field("path")
                && matches!(path.kind(), "string_literal" | "system_lib_string")
            {
                let module = c
                    .text(path)
                    .trim()
                    .trim_matches(['"', '<', '>'])
                    .to_string();
                c.import(node, &module, None, None);
            }
            Action::Skip
        }
        "call_expression" => {
            if let Some(function) = node.field("function") {
                call_target(c, function);
            }
            Action::Descend
        }
        "type_identifier" => {
            if !is_declared_name(c, node) {
                let name = c.text(node);
                c.reference(node, name, None, RefKind::TypeUse);
            }
            Action::Skip
        }
        _ => Action::Descend,
    }
}

/// `struct s { .. }`, `union u { .. }`, `enum e { .. }`: a definition when it has a body
/// and a name; `struct s *p` names the type.
fn specifier(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let body = node.field("body");
    let Some(name_node) = node.field("name") else {
        return Action::Descend;
    };
    let name = c.text(name_node);
    if body.is_none() {
        c.reference(name_node, name, None, RefKind::TypeUse);
        return Action::Skip;
    }
    let kind = if node.kind() == "enum_specifier" {
        SymbolKind::Enum
    } else {
        SymbolKind::Struct
    };
    // Doc comments sit above the declaration or typedef that holds the specifier.
    let holder = c
        .parent_of(node)
        .filter(|p| matches!(p.kind(), "declaration" | "type_definition"))
        .unwrap_or(node);
    let doc = c.preceding_comments(holder);
    let id = c.def_with_doc(node, name, kind, body, doc);
    Action::Enter(id)
}

/// `typedef T Name;`: a type alias per name; `typedef struct { .. } Name;` (an anonymous
/// struct, union or enum) is the struct `Name` itself.
fn typedef(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let ty = node.field("type");
    let mut cursor = node.walk();
    let names: Vec<Node<'_>> = node
        .children_by_field_name("declarator", &mut cursor)
        .filter_map(declarator_name)
        .collect();
    let anonymous = ty.filter(|t| {
        matches!(
            t.kind(),
            "struct_specifier" | "union_specifier" | "enum_specifier"
        ) && t.field("name").is_none()
            && t.field("body").is_some()
    });
    if let (Some(spec), Some(first)) = (anonymous, names.first()) {
        // The first plain name gets the body: `typedef struct { .. } Name, *NamePtr;`.
        let kind = if spec.kind() == "enum_specifier" {
            SymbolKind::Enum
        } else {
            SymbolKind::Struct
        };
        let name = c.text(*first);
        let id = c.def(node, name, kind, spec.field("body"));
        for other in &names[1..] {
            let name = c.text(*other);
            c.def(node, name, SymbolKind::TypeAlias, spec.field("body"));
        }
        return Action::Enter(id);
    }
    let mut last = None;
    for name in &names {
        let text = c.text(*name);
        last = Some(c.def(node, text, SymbolKind::TypeAlias, None));
    }
    match last {
        Some(id) if names.len() == 1 && ty.is_none_or(|t| t.field("body").is_none()) => {
            Action::Enter(id)
        }
        _ => Action::Descend,
    }
}

/// The identifier a function definition's declarator declares: `f` in `int *f(void)`.
fn function_name(declarator: Node<'_>) -> Option<Node<'_>> {
    let mut node = declarator;
    let mut function_seen = false;
    for _ in 0..MAX_DECLARATOR_DEPTH {
        match node.kind() {
            "identifier" | "field_identifier" => return function_seen.then_some(node),
            "function_declarator" => {
                function_seen = true;
                node = node.field("declarator")?;
            }
            _ => node = inner_declarator(node)?,
        }
    }
    None
}

/// The name a (type) declarator declares: `T` in `*T`, `(*T)(int)`, `T[4]`.
fn declarator_name(declarator: Node<'_>) -> Option<Node<'_>> {
    let mut node = declarator;
    for _ in 0..MAX_DECLARATOR_DEPTH {
        match node.kind() {
            "type_identifier" | "identifier" | "primitive_type" => return Some(node),
            _ => node = inner_declarator(node)?,
        }
    }
    None
}

fn inner_declarator(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "function_declarator" | "pointer_declarator" | "array_declarator" => {
            node.field("declarator")
        }
        "parenthesized_declarator" | "attributed_declarator" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .find(|n| n.kind().ends_with("declarator") || n.kind().ends_with("identifier"))
        }
        _ => None,
    }
}

/// Whether a type name is the one a `typedef` or a struct/union/enum definition declares.
fn is_declared_name(c: &Collector<'_>, node: Node<'_>) -> bool {
    let mut current = node;
    for _ in 0..MAX_DECLARATOR_DEPTH {
        let Some(parent) = c.parent_of(current) else {
            return false;
        };
        match parent.kind() {
            "type_definition" => {
                let mut cursor = parent.walk();
                return parent
                    .children_by_field_name("declarator", &mut cursor)
                    .any(|d| d.id() == current.id());
            }
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                return parent.field("body").is_some();
            }
            "function_declarator" | "array_declarator" => {
                // The parameters and the size are not the declared name.
                if parent
                    .field("declarator")
                    .is_none_or(|d| d.id() != current.id())
                {
                    return false;
                }
                current = parent;
            }
            "pointer_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
                current = parent
            }
            _ => return false,
        }
    }
    false
}

fn call_target(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "field_expression" => {
            let Some(field) = function.field("field") else {
                return;
            };
            let qualifier = function.field("argument").map(|o| c.text(o));
            let name = c.text(field);
            c.reference(field, name, qualifier, RefKind::Call);
        }
        "parenthesized_expression" => {
            // `(*fp)(x)`, `(f)(x)`: only a plain name inside is a call target.
            if let Some(inner) = function.named_child(0).filter(|n| n.kind() == "identifier") {
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
    fn prototypes_are_not_definitions_and_macros_are_split_by_shape() {
        let src =
            "int proto(int);\n#define K 1\n#define F(x) (x)\nint def(void) { return proto(K); }\n";
        let facts = extract(Lang::C, src).unwrap();
        let kinds: Vec<(&str, SymbolKind)> = facts
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("K", SymbolKind::Constant),
                ("F", SymbolKind::Macro),
                ("def", SymbolKind::Function)
            ]
        );
    }
}
