//! Swift: classes, actors, structs, enums, protocols, extensions, functions, methods,
//! initializers, type aliases, top-level `let` constants, calls, type uses, imports and
//! inheritance clauses.
//!
//! Rules:
//! - a protocol is an Interface (a Swift protocol is declared conformance, like an
//!   interface; protocol functions are Methods); an actor is a Class;
//! - `init`, `deinit` and `subscript` are Methods of those names; a computed property or
//!   one with `willSet`/`didSet` is a Method named as the property (its body is code that
//!   calls); stored properties are not recorded, except top-level `let` bindings, which
//!   are Constants;
//! - `extension X` adds no symbol: its members are qualified `X.member` (and parented to
//!   `X` when this file defines it), and `extension X: P` is an Implements base of `X`;
//! - inheritance clauses: a class's (or actor's) first entry is Inherits (Swift requires
//!   the superclass first; a class conforming only to protocols is mislabelled, which the
//!   resolver can tell from the base's kind), every other entry Implements; every entry of
//!   a struct, enum, protocol or extension is Implements (conformance);
//! - `import M` imports module `M`; `import struct M.T` imports `T` from `M`.

use tree_sitter::Node;

use super::fields::Fields;
use super::node_text::dotted_type_use;
use super::nodes::named_children;
use super::written::{split_qualified, strip_generics};

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 2;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    match node.kind() {
        "class_declaration" => {
            let kind = match c.field_text(node, "declaration_kind").map(str::trim) {
                Some("extension") => return extension(c, node),
                Some("struct") => SymbolKind::Struct,
                Some("enum") => SymbolKind::Enum,
                _ => SymbolKind::Class,
            };
            type_declaration(c, node, kind)
        }
        "protocol_declaration" => type_declaration(c, node, SymbolKind::Interface),
        "function_declaration" | "protocol_function_declaration" => {
            let Some(name) = c.field_text(node, "name") else {
                return Action::Descend;
            };
            let kind = if c.in_type_scope() {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            let body = node.field("body");
            let id = c.def(node, name, kind, body);
            Action::Enter(id)
        }
        "init_declaration" => {
            let body = node.field("body");
            let id = c.def(node, "init", SymbolKind::Method, body);
            Action::Enter(id)
        }
        "deinit_declaration" => {
            let body = node.field("body");
            let id = c.def(node, "deinit", SymbolKind::Method, body);
            Action::Enter(id)
        }
        "subscript_declaration" => {
            let body = named_children(node)
                .into_iter()
                .find(|n| n.kind() == "computed_property");
            let id = c.def(node, "subscript", SymbolKind::Method, body);
            Action::Enter(id)
        }
        "typealias_declaration" => {
            if let Some(name) = c.field_text(node, "name") {
                c.def(node, strip_generics(name), SymbolKind::TypeAlias, None);
            }
            Action::Descend
        }
        "property_declaration" => {
            if let Some(id) = property_with_code(c, node) {
                return Action::Enter(id);
            }
            constant(c, node);
            Action::Descend
        }
        "import_declaration" => {
            import(c, node);
            Action::Skip
        }
        // Bases are recorded with their type; type parameters are not type uses.
        "inheritance_specifier" | "type_parameters" | "type_constraints" => Action::Skip,
        "call_expression" => {
            if let Some(callee) = node.named_child(0) {
                call(c, callee);
            }
            Action::Descend
        }
        "user_type" => {
            let names_extended_type = c.parent_of(node).is_some_and(|p| {
                p.kind() == "class_declaration"
                    && p.field("name").is_some_and(|n| n.id() == node.id())
            });
            if names_extended_type {
                return Action::Skip; // `extension X`: X is the subject, not a use
            }
            dotted_type_use(c, node, "type_identifier");
            Action::Descend // type arguments
        }
        _ => Action::Descend,
    }
}

fn type_declaration(c: &mut Collector<'_>, node: Node<'_>, kind: SymbolKind) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let name = strip_generics(name).to_string();
    let body = node.field("body");
    let id = c.def(node, &name, kind, body);
    for (i, base) in inherited(node).into_iter().enumerate() {
        let base_kind = if kind == SymbolKind::Class && i == 0 {
            BaseKind::Inherits
        } else {
            BaseKind::Implements
        };
        let written = c.text(base);
        c.base(base, id, written, base_kind);
    }
    Action::Enter(id)
}

/// `extension X: P { .. }`: members are scoped to `X`, conformances are bases of `X`.
fn extension(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let (_, subject) = split_qualified(strip_generics(name));
    let subject = subject.to_string();
    let local = c.find_type(&subject);
    for base in inherited(node) {
        let written = c.text(base);
        c.base_of(base, local, &subject, written, BaseKind::Implements);
    }
    match local {
        Some(id) => Action::Enter(id),
        None => Action::EnterNamed(subject),
    }
}

/// The types named in a declaration's inheritance clause, in order.
fn inherited(node: Node<'_>) -> Vec<Node<'_>> {
    named_children(node)
        .into_iter()
        .filter(|n| n.kind() == "inheritance_specifier")
        .filter_map(|n| n.field("inherits_from"))
        .collect()
}

/// A top-level `let name = ..`.
/// A computed property (`var total: Int { .. }`) or one with observers (`willSet`,
/// `didSet`) runs code of its own: it is recorded as a Method (a Function at top level)
/// named as the property, so that the calls in its body have it as their caller and
/// `def total` finds it. A stored property is not recorded.
fn property_with_code(c: &mut Collector<'_>, node: Node<'_>) -> Option<u32> {
    let code = node.field("computed_value").or_else(|| {
        named_children(node)
            .into_iter()
            .find(|n| n.kind() == "willset_didset_block")
    })?;
    let name = node
        .field("name")
        .and_then(|p| p.field("bound_identifier"))?;
    let name = c.text(name).to_string();
    let kind = if c.in_type_scope() {
        SymbolKind::Method
    } else {
        SymbolKind::Function
    };
    Some(c.def(node, &name, kind, Some(code)))
}

fn constant(c: &mut Collector<'_>, node: Node<'_>) {
    if c.current_symbol().is_some() || c.in_type_scope() {
        return;
    }
    let is_let = named_children(node)
        .into_iter()
        .filter(|n| n.kind() == "value_binding_pattern")
        .any(|n| {
            c.field_text(n, "mutability")
                .is_some_and(|m| m.trim() == "let")
        });
    if !is_let {
        return;
    }
    let name = node.field("name").and_then(|p| p.field("bound_identifier"));
    if let Some(name) = name {
        let name = c.text(name).to_string();
        c.def(node, &name, SymbolKind::Constant, None);
    }
}

/// `import M`, `import struct M.T`.
fn import(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(path) = named_children(node)
        .into_iter()
        .find(|n| n.kind() == "identifier")
    else {
        return;
    };
    let written: String = c.text(path).split_whitespace().collect();
    let is_item = (0..node.child_count())
        .filter_map(|i| node.child(i))
        .any(|n| {
            matches!(
                n.kind(),
                "typealias" | "struct" | "class" | "enum" | "protocol" | "let" | "var" | "func"
            )
        });
    match split_qualified(&written) {
        (Some(module), name) if is_item => c.import(node, module, Some(name), None),
        _ => c.import(node, &written, None, None),
    }
}

fn call(c: &mut Collector<'_>, callee: Node<'_>) {
    match callee.kind() {
        "simple_identifier" => {
            let name = c.text(callee);
            c.reference(callee, name, None, RefKind::Call);
        }
        "navigation_expression" => {
            let name = callee
                .field("suffix")
                .and_then(|s| s.field("suffix"))
                .filter(|n| n.kind() == "simple_identifier");
            let Some(name) = name else { return };
            let qualifier = callee.field("target").map(|t| c.text(t));
            let text = c.text(name);
            c.reference(name, text, qualifier, RefKind::Call);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lang;
    use crate::extract::extract;

    #[test]
    fn extensions_scope_members_and_add_conformances() {
        let src = "struct Point {}\nextension Point: Equatable {\n    func norm() -> Int { 0 }\n}\nextension Remote: P {\n    func go() {}\n}\n";
        let facts = extract(Lang::Swift, src).unwrap();
        let names: Vec<(&str, &str, Option<u32>)> = facts
            .symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.kind.name(), s.parent))
            .collect();
        assert_eq!(
            names,
            vec![
                ("Point", "struct", None),
                ("Point.norm", "method", Some(0)),
                ("Remote.go", "method", None)
            ]
        );
        let bases: Vec<(Option<u32>, &str, &str, BaseKind)> = facts
            .bases
            .iter()
            .map(|b| (b.symbol, b.subject.as_str(), b.name.as_str(), b.kind))
            .collect();
        assert_eq!(
            bases,
            vec![
                (Some(0), "Point", "Equatable", BaseKind::Implements),
                (None, "Remote", "P", BaseKind::Implements)
            ]
        );
    }

    #[test]
    fn code_bearing_members_are_callers_of_what_they_call() {
        let src = "struct S {\n    var total: Int {\n        return helper()\n    }\n    var count = 0 {\n        didSet { helper() }\n    }\n    var stored = 1\n    init(x: Int) { helper() }\n    deinit { helper() }\n    subscript(i: Int) -> Int { helper() }\n    func helper() -> Int { 1 }\n}\nvar top: Int { 2 }\n";
        let facts = extract(Lang::Swift, src).unwrap();
        let names: Vec<(&str, &str, u32)> = facts
            .symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.kind.name(), s.span.start_line))
            .collect();
        assert_eq!(
            names,
            vec![
                ("S", "struct", 1),
                ("S.total", "method", 2),
                ("S.count", "method", 5),
                ("S.init", "method", 9),
                ("S.deinit", "method", 10),
                ("S.subscript", "method", 11),
                ("S.helper", "method", 12),
                ("top", "function", 14),
            ]
        );
        // Each `helper()` call is made from the member whose body holds it.
        let callers: Vec<Option<u32>> = facts
            .refs
            .iter()
            .filter(|r| r.name == "helper")
            .map(|r| r.from)
            .collect();
        assert_eq!(callers, [Some(1), Some(2), Some(3), Some(4), Some(5)]);
    }

    #[test]
    fn only_a_class_first_base_is_inherited() {
        let src = "class A: B, P {}\nstruct S: P, Q {}\nprotocol R: P {}\n";
        let facts = extract(Lang::Swift, src).unwrap();
        let bases = facts.bases_by_subject();
        assert_eq!(
            bases,
            vec![
                ("A", "B", BaseKind::Inherits),
                ("A", "P", BaseKind::Implements),
                ("S", "P", BaseKind::Implements),
                ("S", "Q", BaseKind::Implements),
                ("R", "P", BaseKind::Implements),
            ]
        );
        assert_eq!(facts.symbols[2].kind, SymbolKind::Interface);
    }
}
