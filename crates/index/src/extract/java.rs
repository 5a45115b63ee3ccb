//! Java: the package, classes, records, interfaces, annotation types, enums, methods and
//! constructors, `static final` fields and interface constants; method calls and `new`,
//! type uses, imports (static and wildcard too), `extends` and `implements` bases.

use tree_sitter::Node;

use super::collector::MAX_QUALIFIER;
use super::fields::Fields;
use super::text::compact;
use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 2;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    super::receivers::java(c, node);
    let kind = match node.kind() {
        "class_declaration" | "record_declaration" => SymbolKind::Class,
        "interface_declaration" | "annotation_type_declaration" => SymbolKind::Interface,
        "enum_declaration" => SymbolKind::Enum,
        "method_declaration"
        | "constructor_declaration"
        | "compact_constructor_declaration"
        | "annotation_type_element_declaration" => SymbolKind::Method,
        "package_declaration" => {
            package(c, node);
            return Action::Skip;
        }
        "field_declaration" | "constant_declaration" => return constants(c, node),
        // Bases are recorded with their type; their names are not type uses too.
        "superclass" | "super_interfaces" | "extends_interfaces" => return Action::Skip,
        "method_invocation" => {
            if let Some(name) = node.field("name") {
                let qualifier = node.field("object").map(|o| c.text(o));
                let text = c.text(name);
                let before = c.ref_count();
                c.reference(name, text, qualifier, RefKind::Call);
                if c.ref_count() > before
                    && let Some(args) = node.field("arguments")
                {
                    c.set_last_args(argument_count(args));
                }
            }
            return Action::Descend;
        }
        "object_creation_expression" => {
            if let Some(ty) = node.field("type") {
                let written = compact(super::written::strip_generics(c.text(ty)), MAX_QUALIFIER);
                let (qualifier, name) = super::written::split_qualified(&written);
                c.reference(ty, name, qualifier, RefKind::Call);
            }
            return Action::Descend;
        }
        "import_declaration" => {
            import(c, node);
            return Action::Skip;
        }
        "type_identifier" => {
            if !is_declared_or_constructed(c, node) {
                let name = c.text(node);
                c.reference(node, name, None, RefKind::TypeUse);
            }
            return Action::Skip;
        }
        "scoped_type_identifier" => {
            if !is_declared_or_constructed(c, node) {
                let written = compact(c.text(node), MAX_QUALIFIER);
                let (qualifier, name) = super::written::split_qualified(&written);
                c.reference(node, name, qualifier, RefKind::TypeUse);
            }
            return Action::Skip;
        }
        _ => return Action::Descend,
    };
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let id = c.def(node, name, kind, node.field("body"));
    if let Some(params) = node.field("parameters") {
        c.set_params(id, arity(params));
    }
    // The type a method returns (`public Chrono getChronology()`), for
    // `getChronology().range(f)`; `void` and type variables name none.
    if node.kind() == "method_declaration"
        && let Some(ty) = c
            .field_text(node, "type")
            .and_then(super::written::type_name)
            .filter(|t| *t != "void")
    {
        c.set_returns(id, ty);
    }
    bases(c, node, id);
    Action::Enter(id)
}

/// The arguments of a call, comments aside.
fn argument_count(args: Node<'_>) -> u16 {
    let mut cursor = args.walk();
    let n = args
        .named_children(&mut cursor)
        .filter(|a| !a.kind().ends_with("comment"))
        .count();
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// What a method's or constructor's `formal_parameters` accept: each `formal_parameter`,
/// and a trailing `T... rest` any number more (the receiver parameter `Foo this` is
/// not an argument).
fn arity(params: Node<'_>) -> super::Arity {
    let mut cursor = params.walk();
    let mut fixed = 0u16;
    let mut variadic = false;
    for p in params.named_children(&mut cursor) {
        match p.kind() {
            "formal_parameter" => fixed = fixed.saturating_add(1),
            "spread_parameter" => variadic = true,
            _ => {}
        }
    }
    super::Arity { fixed, variadic }
}

/// `package a.b;` is a module named `a.b`.
fn package(c: &mut Collector<'_>, node: Node<'_>) {
    let mut cursor = node.walk();
    let name = node
        .named_children(&mut cursor)
        .find(|n| matches!(n.kind(), "identifier" | "scoped_identifier"));
    if let Some(name) = name {
        let text = compact(c.text(name), 400);
        c.def(node, &text, SymbolKind::Module, None);
    }
}

/// `static final` fields (and every interface field): one constant per declarator.
fn constants(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let constant = node.kind() == "constant_declaration"
        || c.current_kind() == Some(SymbolKind::Interface)
        || modifiers(c, node).is_some_and(|m| {
            let words: Vec<&str> = m.split_whitespace().collect();
            words.contains(&"static") && words.contains(&"final")
        });
    if !constant {
        return Action::Descend;
    }
    let mut cursor = node.walk();
    let declarators: Vec<Node<'_>> = node
        .children_by_field_name("declarator", &mut cursor)
        .collect();
    let single = declarators.len() == 1;
    // Its declared type: `IsoChronology.INSTANCE.isLeapYear(y)` calls that type's method.
    let declared = c
        .field_text(node, "type")
        .and_then(super::written::type_name);
    let mut last = None;
    for d in declarators {
        if let Some(name) = c.field_text(d, "name") {
            let id = c.def(node, name, SymbolKind::Constant, None);
            if let Some(ty) = declared {
                c.set_returns(id, ty);
            }
            last = Some(id);
        }
    }
    match last {
        Some(id) if single => Action::Enter(id),
        _ => Action::Descend,
    }
}

fn modifiers<'s>(c: &Collector<'s>, node: Node<'_>) -> Option<&'s str> {
    let mut cursor = node.walk();
    let m = node
        .named_children(&mut cursor)
        .find(|n| n.kind() == "modifiers");
    m.map(|m| c.text(m))
}

/// `extends B`, `implements I, J` (classes, enums, records) and an interface's `extends I, J`.
fn bases(c: &mut Collector<'_>, node: Node<'_>, id: u32) {
    let mut cursor = node.walk();
    let clauses: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    for clause in clauses {
        let kind = match clause.kind() {
            "superclass" | "extends_interfaces" => BaseKind::Inherits,
            "super_interfaces" => BaseKind::Implements,
            _ => continue,
        };
        let mut types = Vec::new();
        let mut cursor = clause.walk();
        for child in clause.named_children(&mut cursor) {
            if child.kind() == "type_list" {
                let mut inner = child.walk();
                types.extend(child.named_children(&mut inner));
            } else {
                types.push(child);
            }
        }
        for ty in types {
            if matches!(
                ty.kind(),
                "type_identifier" | "scoped_type_identifier" | "generic_type"
            ) {
                let written = compact(c.text(ty), MAX_QUALIFIER);
                c.base(ty, id, &written, kind);
            }
        }
    }
}

/// `import a.b.C;` → (`a.b`, `C`); `import a.b.*;` → (`a.b`, none); `import static a.B.m;` → (`a.B`, `m`).
fn import(c: &mut Collector<'_>, node: Node<'_>) {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let Some(path) = children
        .iter()
        .find(|n| matches!(n.kind(), "identifier" | "scoped_identifier"))
    else {
        return;
    };
    let path = compact(c.text(*path), 400).replace(' ', "");
    if children.iter().any(|n| n.kind() == "asterisk") {
        c.import(node, &path, None, None);
        return;
    }
    match path.rsplit_once('.') {
        Some((module, name)) => c.import(node, module, Some(name), None),
        None => c.import(node, &path, None, None),
    }
}

/// Whether a type name is a declared type parameter or the class of a `new` (recorded as a call).
fn is_declared_or_constructed(c: &Collector<'_>, node: Node<'_>) -> bool {
    let mut current = node;
    for _ in 0..3 {
        let Some(parent) = c.parent_of(current) else {
            return false;
        };
        match parent.kind() {
            "type_parameter" => return true,
            "object_creation_expression" => {
                return parent.field("type").is_some_and(|t| t.id() == current.id());
            }
            "generic_type" | "scoped_type_identifier" => current = parent,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::{SymbolKind, extract};

    #[test]
    fn only_static_final_fields_are_constants() {
        let src = "class A { static final int K = 1; final int f = 2; static int s = 3; }";
        let facts = extract(Lang::Java, src).unwrap();
        let constants: Vec<&str> = facts
            .symbols
            .iter()
            .filter(|s| s.kind == SymbolKind::Constant)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(constants, ["K"]);
    }
}
