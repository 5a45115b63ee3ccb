//! Kotlin (the tree-sitter-kotlin-ng grammar): the package, classes, interfaces, objects,
//! enums, functions, methods, type aliases, constants, calls, type uses, imports and supertypes.
//!
//! Rules:
//! - `package a.b` is a Module named `a.b`; as in Java it does not qualify the file's
//!   definitions (`class C` is `C`, the resolver finds it from `import a.b.C` by its
//!   directory and name);
//! - `class` (data, sealed, ...) and `object` are Classes, `enum class` an Enum,
//!   `interface` (and `fun interface`) an Interface; a `companion object` is a Class
//!   (`C.Companion` when unnamed) that adds no scope: its functions are Methods of the
//!   enclosing class (`C.create`, as they are called);
//! - `fun` directly in a class, object or interface is a Method, elsewhere a Function
//!   (an extension `fun String.ext()` is the Function `ext`, whose receiver records
//!   `String`); `const val` is a Constant;
//! - supertypes: a constructor invocation (`: Base()`) is the superclass, an Inherits base;
//!   a plain type (`: Drawable`) is an interface, an Implements base, except in an
//!   interface, where every supertype is Inherits (interfaces extend interfaces);
//!   a delegation (`: Api by impl`) is Implements;
//! - `import a.b.C` imports `C` from `a.b`, `import a.b.C as D` binds it to `D`,
//!   `import a.b.*` imports module `a.b` whole;
//! - receiver types: parameters, constructor properties and typed or constructed
//!   properties ([`super::receivers_kotlin`]).

use tree_sitter::Node;

use super::collector::MAX_QUALIFIER;
use super::node_text::{dotted_type_use, text_before};
use super::nodes::{has_token, named_children};
use super::text::compact;
use super::written::{split_qualified, strip_generics};

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 7;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    super::receivers_kotlin::kotlin(c, node);
    match node.kind() {
        "package_header" => {
            if let Some(path) = child_of_kind(node, &["qualified_identifier", "identifier"]) {
                let name: String = c.text(path).split_whitespace().collect();
                c.def(node, &name, SymbolKind::Module, None);
            }
            Action::Skip
        }
        "class_declaration" => {
            let kind = if has_token(node, "interface") {
                SymbolKind::Interface
            } else if has_modifier(c, node, "enum") {
                SymbolKind::Enum
            } else {
                SymbolKind::Class
            };
            type_declaration(c, node, kind)
        }
        "object_declaration" => type_declaration(c, node, SymbolKind::Class),
        "infix_expression" => infix_declaration(c, node),
        "companion_object" => {
            // A definition of its own (`C.Companion` unless named), but no scope: its
            // members are called as the class's (`C.create()`).
            let name = c.field_text(node, "name").unwrap_or("Companion");
            let body = child_of_kind(node, &["class_body"]);
            c.def(node, name, SymbolKind::Class, body);
            Action::Descend
        }
        "function_declaration" => {
            let Some(name) = c.field_text(node, "name") else {
                return Action::Descend;
            };
            let kind = if c.in_type_scope() {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            let body = child_of_kind(node, &["function_body"]);
            let id = c.def(node, name, kind, body);
            if let Some(params) = child_of_kind(node, &["function_value_parameters"]) {
                c.set_params(id, arity(c, params));
                if let Some(types) = super::kotlin_args::param_types(c, params) {
                    c.set_param_types(id, types);
                }
            }
            if let Some((receiver, path)) = extended_type(c, node) {
                c.set_receiver(id, &receiver);
                // In its body, `this` (and a bare call's implicit receiver) is the
                // extended type.
                c.types_mut().bind_var(Some(id), "this", path);
            }
            Action::Enter(id)
        }
        "type_alias" => {
            if let Some(name) = c.field_text(node, "type") {
                c.def(node, name, SymbolKind::TypeAlias, None);
            }
            Action::Descend
        }
        "property_declaration" => {
            if has_modifier(c, node, "const") {
                let name = child_of_kind(node, &["variable_declaration"])
                    .and_then(|v| child_of_kind(v, &["identifier"]));
                if let Some(name) = name {
                    let name = c.text(name).to_string();
                    c.def(node, &name, SymbolKind::Constant, None);
                }
            }
            Action::Descend
        }
        "import" => {
            import(c, node);
            Action::Skip
        }
        // Supertypes are recorded with their type; type parameters are not type uses.
        "delegation_specifiers" | "type_parameters" | "type_constraints" => Action::Skip,
        "call_expression" => {
            if let Some(callee) = node.named_child(0) {
                let before = c.ref_count();
                call(c, callee);
                if c.ref_count() > before {
                    let passed = super::kotlin_args::call_arguments(c, node);
                    let count = passed.values.len() + passed.trailing_lambdas;
                    c.set_last_args(u16::try_from(count).unwrap_or(u16::MAX));
                    if let Some(types) = super::kotlin_args::argument_types(c, node) {
                        c.set_last_arg_types(types);
                    }
                }
            }
            Action::Descend
        }
        "user_type" => {
            dotted_type_use(c, node, "identifier");
            Action::Descend // type arguments
        }
        _ => Action::Descend,
    }
}

fn type_declaration(c: &mut Collector<'_>, node: Node<'_>, kind: SymbolKind) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let body = child_of_kind(node, &["class_body", "enum_class_body"]);
    let id = c.def(node, name, kind, body);
    if let Some(specifiers) = child_of_kind(node, &["delegation_specifiers"]) {
        for specifier in named_children(specifiers) {
            let Some(inner) = specifier.named_child(0) else {
                continue;
            };
            let (ty, base_kind) = match inner.kind() {
                "constructor_invocation" => (inner.named_child(0), BaseKind::Inherits),
                "explicit_delegation" => (inner.named_child(0), BaseKind::Implements),
                _ if kind == SymbolKind::Interface => (Some(inner), BaseKind::Inherits),
                _ => (Some(inner), BaseKind::Implements),
            };
            if let Some(ty) = ty {
                let written = c.text(ty);
                c.base(ty, id, written, base_kind);
            }
        }
    }
    Action::Enter(id)
}

/// `@Keep annotation class K` (annotations, one modifier, neither body nor constructor),
/// which this grammar reads as the infix call `annotation class K` under the
/// annotations: `class` and `interface` are hard keywords, never an infix function's
/// name, so it declares `K`, from its first annotation on.
fn infix_declaration(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let parts = named_children(node);
    let [modifier, keyword, name] = parts.as_slice() else {
        return Action::Descend;
    };
    if [modifier, keyword, name]
        .iter()
        .any(|n| n.kind() != "identifier")
    {
        return Action::Descend;
    }
    let kind = match (c.text(*modifier), c.text(*keyword)) {
        ("enum", "class") => SymbolKind::Enum,
        (_, "class") => SymbolKind::Class,
        (_, "interface") => SymbolKind::Interface,
        _ => return Action::Descend,
    };
    let mut whole = node;
    while let Some(parent) = c
        .parent_of(whole)
        .filter(|p| p.kind() == "annotated_expression")
    {
        whole = parent;
    }
    let name = c.text(*name).to_string();
    c.def(whole, &name, kind, None);
    Action::Skip
}

/// `import a.b.C`, `import a.b.C as D`, `import a.b.*`.
fn import(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(path) = child_of_kind(node, &["qualified_identifier", "identifier"]) else {
        return;
    };
    let written: String = c.text(path).split_whitespace().collect();
    if has_token(node, "*") {
        c.import(node, &written, None, None);
        return;
    }
    let alias = named_children(node)
        .into_iter()
        .find(|n| n.kind() == "identifier" && n.id() != path.id());
    let alias = alias.map(|a| c.text(a));
    let (module, name) = split_qualified(&written);
    c.import(node, module.unwrap_or(""), Some(name), alias);
}

/// The type an extension function extends, as a receiver type name (`KType` for `fun
/// KType.asTypeName()`, `Function` for `fun ProtoBuf.Function.f()`, `KClass` for `fun
/// KClass<*>.f()`): the type written before the name, and its path of type names
/// (`ProtoBuf.Function`). None for a plain function and for a type parameter of the
/// function (`fun <T> T.also()` extends every type).
fn extended_type(c: &Collector<'_>, function: Node<'_>) -> Option<(String, String)> {
    let name = function.child_by_field_name("name")?;
    let children = named_children(function);
    let written = children
        .iter()
        .take_while(|n| n.start_byte() < name.start_byte())
        .find(|n| matches!(n.kind(), "user_type" | "nullable_type"))?;
    let ty = super::written::type_name(c.text(*written))?;
    let type_parameters = child_of_kind(function, &["type_parameters"]);
    let generic = type_parameters.is_some_and(|list| {
        named_children(list)
            .into_iter()
            .filter(|p| p.kind() == "type_parameter")
            .filter_map(|p| child_of_kind(p, &["identifier"]))
            .any(|id| c.text(id) == ty)
    });
    let path = super::written::type_path(c.text(*written)).unwrap_or(ty);
    (!generic).then(|| (ty.to_string(), path.to_string()))
}

/// What a function's `function_value_parameters` accept: its parameters without a
/// default value, and any number more when one has a default (`b: Int = 2`) or is a
/// `vararg`. A superset, as for C#: a call never loses the overload it reaches.
fn arity(c: &Collector<'_>, params: Node<'_>) -> super::Arity {
    let children = named_children(params);
    let mut fixed = 0u16;
    let mut variadic = false;
    let mut vararg = false; // the next parameter is a `vararg`
    for (i, p) in children.iter().enumerate() {
        match p.kind() {
            "parameter" => {
                // A default value is the parameter's next sibling in this grammar.
                let defaulted = children
                    .get(i + 1)
                    .is_some_and(|n| !matches!(n.kind(), "parameter" | "parameter_modifiers"));
                if defaulted || vararg {
                    variadic = true;
                } else {
                    fixed = fixed.saturating_add(1);
                }
                vararg = false;
            }
            "parameter_modifiers" => {
                vararg = c.text(*p).split_whitespace().any(|w| w == "vararg");
            }
            _ => {}
        }
    }
    super::Arity { fixed, variadic }
}

fn call(c: &mut Collector<'_>, callee: Node<'_>) {
    match callee.kind() {
        "identifier" => {
            let name = c.text(callee);
            c.reference(callee, name, None, RefKind::Call);
            // In an extension's body, a bare call may be made on the extended type.
            if let Some(this) = c.bound_this() {
                c.set_last_receiver(&this);
            }
        }
        "navigation_expression" => {
            let Some(name) = named_children(callee)
                .into_iter()
                .last()
                .filter(|n| n.kind() == "identifier")
            else {
                return;
            };
            let before = text_before(c, callee, name)
                .trim()
                .trim_end_matches(['.', '?', ':']);
            let qualifier = compact(before, MAX_QUALIFIER);
            let text = strip_generics(c.text(name));
            c.reference(name, text, Some(&qualifier), RefKind::Call);
        }
        _ => {}
    }
}

fn has_modifier(c: &Collector<'_>, node: Node<'_>, modifier: &str) -> bool {
    let Some(modifiers) = child_of_kind(node, &["modifiers"]) else {
        return false;
    };
    named_children(modifiers)
        .into_iter()
        .any(|m| c.text(m).trim() == modifier)
}

fn child_of_kind<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    named_children(node)
        .into_iter()
        .find(|n| kinds.contains(&n.kind()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lang;
    use crate::extract::extract;

    #[test]
    fn functions_record_what_they_accept_and_calls_what_they_pass() {
        let src = "class B {\n\
            fun add(a: Int) {}\n\
            fun add(a: Int, b: Int = 2) {}\n\
            fun all(@Suppress(\"x\") first: Int, vararg rest: Int) {}\n\
            fun run() { add(1); add(1, b = 3); all(1, 2, 3) { it }; o.each { }; f(*xs) }\n\
            }\n";
        let facts = extract(Lang::Kotlin, src).unwrap();
        assert_eq!(
            facts.method_arities(),
            ["add/1", "add/1+", "all/1+", "run/0"]
        );
        assert_eq!(
            facts.call_arguments(),
            ["add(1)", "add(2)", "all(4)", "each(1)", "f(1)"]
        );
    }

    #[test]
    fn extensions_record_the_type_they_extend() {
        let src = "fun KType.a(): TypeName = x\n\
            fun KClass<*>.b() {}\n\
            fun ProtoBuf.Function.c(t: TypeTable) {}\n\
            fun String?.d() {}\n\
            fun <T> T.e(): T = this\n\
            fun <T> List<T>.f() {}\n\
            fun g(k: KType) {}\n\
            class C { fun Int.h() {} }\n";
        let facts = extract(Lang::Kotlin, src).unwrap();
        let receivers: Vec<(&str, Option<&str>)> = facts
            .symbols
            .iter()
            .filter(|s| matches!(s.kind, SymbolKind::Function | SymbolKind::Method))
            .map(|s| (s.name.as_str(), s.receiver.as_deref()))
            .collect();
        assert_eq!(
            receivers,
            [
                ("a", Some("KType")),
                ("b", Some("KClass")),
                ("c", Some("Function")),
                ("d", Some("String")),
                ("e", None),
                ("f", Some("List")),
                ("g", None),
                ("h", Some("Int")),
            ]
        );
    }

    #[test]
    fn package_is_a_module_and_companions_add_no_scope() {
        let src = "package a.b\n\nclass C {\n    fun run() {}\n    companion object {\n        fun create(): C = C()\n    }\n}\n\nfun top() {}\n";
        let facts = extract(Lang::Kotlin, src).unwrap();
        let names = facts.qualified_kinds();
        assert_eq!(
            names,
            vec![
                ("a.b", "module"),
                ("C", "class"),
                ("C.run", "method"),
                ("C.Companion", "class"),
                ("C.create", "method"),
                ("top", "function")
            ]
        );
    }

    #[test]
    fn an_annotated_header_without_a_body_is_a_declaration() {
        // The grammar reads the first two as infix calls under their annotations.
        let src = "@Target(AnnotationTarget.CLASS)\n@Retention(AnnotationRetention.BINARY)\n\
            annotation class Keep\n\n@Keep enum class E\n\nfun f() = a to b\n\nclass After\n";
        let facts = extract(Lang::Kotlin, src).unwrap();
        let lines: Vec<(&str, &str, u32)> = facts
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind.name(), s.span.start_line))
            .collect();
        assert_eq!(
            lines,
            [
                ("Keep", "class", 1),
                ("E", "enum", 5),
                ("f", "function", 7),
                ("After", "class", 9)
            ]
        );
    }

    #[test]
    fn supertypes_follow_the_constructor_call_rule() {
        let src = "class A : Base(), Api, Other by impl\n\ninterface I : J\n";
        let facts = extract(Lang::Kotlin, src).unwrap();
        let bases = facts.bases_by_subject();
        assert_eq!(
            bases,
            vec![
                ("A", "Base", BaseKind::Inherits),
                ("A", "Api", BaseKind::Implements),
                ("A", "Other", BaseKind::Implements),
                ("I", "J", BaseKind::Inherits),
            ]
        );
    }
}
