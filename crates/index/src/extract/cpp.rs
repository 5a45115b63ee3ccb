//! C++: namespaces, classes/structs/unions/enums (templates included), functions and
//! methods (in-class and out-of-line `void Foo::bar() {}`), pure virtual methods,
//! `using X = ..`/typedef, `#define`, calls, `new`, type uses, `#include`/`using` and bases;
//! receiver types of parameters, locals, fields and `this` ([`super::receivers_cpp`]).
//!
//! Rules:
//! - a definition whose name is qualified (`void Foo::bar() {}`, `class ns::Foo {}`) is
//!   named by its last segment and qualified by the scope chain plus the written qualifier
//!   (`Foo::bar`); a qualified function is always a Method (the grammar cannot tell a class
//!   from a namespace there), whose parent is `Foo` when this file defines it;
//! - method *declarations* in a class body (`void draw();`) are not definitions, except
//!   pure virtual ones (`virtual void draw() = 0;`), which have no other definition;
//! - function-like `#define f(x)` is a Macro, object-like `#define N 3` or `#define
//!   GTEST_API_` a Constant (an include guard, the `#define GUARD_H` that opens the
//!   `#ifndef GUARD_H` around the file, is skipped), `const`/`constexpr` variables outside
//!   functions Constants;
//! - `typedef` names every declarator, through pointers, references, arrays and function
//!   types (`typedef void* Handle;`, `typedef T (*Factory)();`);
//! - every base in `class A : public B, C` is an Inherits base (C++ has no interfaces);
//! - `#include <a/b.h>` and `#include "a/b.h"` import module `a/b.h`; `using namespace ns;`
//!   imports module `ns`; `using ns::name;` imports `name` from `ns`.

use tree_sitter::Node;

use super::fields::Fields;
use super::node_text::text_before;
use super::nodes::named_children;
use super::written::strip_generics;

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = "::";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 6;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    super::receivers_cpp::cpp(c, node);
    match node.kind() {
        "namespace_definition" => namespace(c, node),
        "class_specifier" => type_definition(c, node, SymbolKind::Class),
        "struct_specifier" | "union_specifier" => type_definition(c, node, SymbolKind::Struct),
        "enum_specifier" => type_definition(c, node, SymbolKind::Enum),
        "function_definition" => function(c, node),
        "field_declaration" => {
            pure_virtual(c, node);
            super::receivers_cpp::data_members(c, node);
            Action::Descend
        }
        "declaration" => {
            constants(c, node);
            Action::Descend
        }
        "alias_declaration" => {
            if let Some(name) = c.field_text(node, "name") {
                c.def(outer(c, node), name, SymbolKind::TypeAlias, None);
            }
            Action::Descend
        }
        "type_definition" => {
            typedef(c, node);
            Action::Descend
        }
        "preproc_function_def" => {
            if let Some(name) = c.field_text(node, "name") {
                c.def(node, name, SymbolKind::Macro, None);
            }
            Action::Skip
        }
        "preproc_def" => {
            if let Some(name) = c.field_text(node, "name")
                && !is_include_guard(c, node)
            {
                c.def(node, name, SymbolKind::Constant, None);
            }
            Action::Skip
        }
        "preproc_include" => {
            if let Some(path) = node.field("path") {
                let module = c.text(path).trim().trim_matches(['<', '>', '"']);
                c.import(node, module, None, None);
            }
            Action::Skip
        }
        "using_declaration" => {
            using(c, node);
            Action::Skip
        }
        // Bases are recorded with their class; template parameters are not type uses.
        "base_class_clause" | "template_parameter_list" => Action::Skip,
        "call_expression" => {
            if let Some(function) = node.field("function") {
                let before = c.ref_count();
                call(c, function);
                if c.ref_count() > before
                    && let Some(args) = node.field("arguments")
                {
                    c.set_last_args(argument_count(args));
                    if let Some(types) = super::cpp_args::argument_types(c, args) {
                        c.set_last_arg_types(types);
                    }
                }
            }
            Action::Descend
        }
        "new_expression" => {
            if let Some(ty) = node.field("type") {
                let written = without_template_args(c.text(ty));
                let (qualifier, name) = split_scope(&written);
                c.reference(ty, name, qualifier, RefKind::Call);
            }
            Action::Descend
        }
        "type_identifier" => {
            type_use(c, node);
            Action::Skip
        }
        _ => Action::Descend,
    }
}

/// `namespace a { }`, `namespace a::b { }`; an anonymous namespace adds no scope.
fn namespace(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let name: String = name.split_whitespace().collect();
    let body = node.field("body");
    let id = c.def(node, &name, SymbolKind::Module, body);
    Action::Enter(id)
}

/// A class, struct, union or enum with a body; a bare `class Foo;` or `struct Foo x` is not one.
fn type_definition(c: &mut Collector<'_>, node: Node<'_>, kind: SymbolKind) -> Action {
    let (Some(name_node), Some(body)) = (node.field("name"), node.field("body")) else {
        return Action::Descend;
    };
    let written = without_template_args(c.text(name_node));
    let (qualifier, name) = split_scope(&written);
    let id = match qualifier {
        Some(q) => c.def_qualified(outer(c, node), q, name, kind, Some(body), None),
        None => c.def(outer(c, node), name, kind, Some(body)),
    };
    if let Some(clause) = named_child_of_kind(node, "base_class_clause") {
        for base in named_children(clause) {
            if matches!(
                base.kind(),
                "type_identifier" | "qualified_identifier" | "template_type"
            ) {
                let written = without_template_args(c.text(base));
                c.base(base, id, &written, BaseKind::Inherits);
            }
        }
    }
    Action::Enter(id)
}

/// A function or method with a body, in a class or out of line.
fn function(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(name_node) = node.field("declarator").and_then(function_name) else {
        return Action::Descend;
    };
    let written = without_template_args(&function_name_text(c, name_node));
    let (qualifier, name) = split_scope(&written);
    let body = node.field("body");
    let id = match qualifier {
        Some(q) => {
            let (_, owner) = split_scope(q);
            let parent = c.find_type(owner);
            c.def_qualified(outer(c, node), q, name, SymbolKind::Method, body, parent)
        }
        None => {
            let kind = if c.in_type_scope() {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            c.def(outer(c, node), name, kind, body)
        }
    };
    if let Some(params) = node.field("declarator").and_then(parameters) {
        c.set_params(id, arity(c, params));
        if let Some(types) = super::cpp_args::param_types(c, params) {
            c.set_param_types(id, types);
        }
    }
    if let Some(ty) = super::receivers_cpp::returned(c, node) {
        c.set_returns(id, &ty);
    }
    Action::Enter(id)
}

/// The parameter list of a function's declarator (`f(int a, int b)` → `(int a, int b)`).
fn parameters(declarator: Node<'_>) -> Option<Node<'_>> {
    let mut node = declarator;
    for _ in 0..32 {
        match node.kind() {
            "function_declarator" => return node.field("parameters"),
            "pointer_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => node = node.field("declarator")?,
            _ => return None,
        }
    }
    None
}

/// What a parameter list accepts: each parameter without a default is required; a
/// default value or a trailing `...` lets more follow (overloads are told apart by
/// it, as Java's are); `(void)` takes none.
fn arity(c: &Collector<'_>, params: Node<'_>) -> super::Arity {
    let mut fixed = 0u16;
    let mut variadic = false;
    for p in named_children(params) {
        match p.kind() {
            "parameter_declaration" if c.text(p).trim() != "void" => {
                fixed = fixed.saturating_add(1);
            }
            "optional_parameter_declaration" | "variadic_parameter_declaration" => {
                variadic = true;
            }
            _ => {}
        }
    }
    if c.text(params).contains("...") {
        variadic = true;
    }
    super::Arity { fixed, variadic }
}

/// The arguments of a call, comments aside.
fn argument_count(args: Node<'_>) -> u16 {
    let n = named_children(args)
        .into_iter()
        .filter(|a| a.kind() != "comment")
        .count();
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// `virtual void draw() = 0;` in a class body: the only place such a method is defined.
fn pure_virtual(c: &mut Collector<'_>, node: Node<'_>) {
    let is_pure = node
        .field("default_value")
        .is_some_and(|v| c.text(v).trim() == "0");
    if !is_pure || !c.in_type_scope() {
        return;
    }
    let Some(name_node) = node.field("declarator").and_then(function_name) else {
        return;
    };
    let name = c.text(name_node).to_string();
    let id = c.def(node, &name, SymbolKind::Method, None);
    if let Some(params) = node.field("declarator").and_then(parameters) {
        c.set_params(id, arity(c, params));
        if let Some(types) = super::cpp_args::param_types(c, params) {
            c.set_param_types(id, types);
        }
    }
}

/// `const int N = 3;` / `constexpr auto K = ..;` outside any function.
fn constants(c: &mut Collector<'_>, node: Node<'_>) {
    if matches!(
        c.current_kind(),
        Some(SymbolKind::Function | SymbolKind::Method)
    ) {
        return;
    }
    let is_const = named_children(node)
        .into_iter()
        .any(|n| n.kind() == "type_qualifier" && matches!(c.text(n).trim(), "const" | "constexpr"));
    if !is_const {
        return;
    }
    let mut cursor = node.walk();
    let declarators: Vec<Node<'_>> = node
        .children_by_field_name("declarator", &mut cursor)
        .collect();
    for declarator in declarators {
        if declarator.kind() != "init_declarator" {
            continue;
        }
        if let Some(ident) = declarator
            .field("declarator")
            .filter(|d| d.kind() == "identifier")
        {
            let name = c.text(ident).to_string();
            c.def(node, &name, SymbolKind::Constant, None);
        }
    }
}

/// `typedef struct { .. } Name;`, `typedef int Num;`, `typedef void* Handle;`: one alias
/// per declarator.
fn typedef(c: &mut Collector<'_>, node: Node<'_>) {
    let mut cursor = node.walk();
    let declarators: Vec<Node<'_>> = node
        .children_by_field_name("declarator", &mut cursor)
        .collect();
    for declarator in declarators {
        if let Some(name) = declared_type_name(declarator) {
            let name_text = c.text(name).to_string();
            let id = c.def(node, &name_text, SymbolKind::TypeAlias, None);
            if let Some(aliased) = super::cpp_args::typedef_of_arith(node, declarator) {
                c.set_returns(id, aliased);
            }
        }
    }
}

/// The name a typedef's declarator declares: `T` in `T`, `*T`, `&T`, `(*T)(int)`, `T[4]`.
fn declared_type_name(declarator: Node<'_>) -> Option<Node<'_>> {
    let mut node = declarator;
    for _ in 0..32 {
        match node.kind() {
            "type_identifier" => return Some(node),
            "pointer_declarator"
            | "reference_declarator"
            | "function_declarator"
            | "array_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                node = match node.field("declarator") {
                    Some(inner) => inner,
                    None => named_children(node).into_iter().find(|n| {
                        n.kind().ends_with("declarator") || n.kind() == "type_identifier"
                    })?,
                };
            }
            _ => return None,
        }
    }
    None
}

/// Whether a `#define NAME` without a value is the include guard of its file
/// ([`super::include_guard`]): all that comes before it is comments and the `#ifndef`.
fn is_include_guard(c: &Collector<'_>, define: Node<'_>) -> bool {
    if define.field("value").is_some() {
        return false;
    }
    let (Some(name), Some(before)) = (
        c.field_text(define, "name"),
        c.source_between(0, define.end_byte()),
    ) else {
        return false;
    };
    super::include_guard::guard_name(before) == Some(name.trim())
}

/// `using namespace a::b;` imports the namespace; `using a::b;` imports `b` from `a`.
fn using(c: &mut Collector<'_>, node: Node<'_>) {
    let is_namespace = (0..node.child_count())
        .filter_map(|i| node.child(i))
        .any(|n| n.kind() == "namespace");
    let Some(target) = named_children(node)
        .into_iter()
        .find(|n| matches!(n.kind(), "identifier" | "qualified_identifier"))
    else {
        return;
    };
    let written = without_template_args(c.text(target));
    if is_namespace {
        c.import(node, &written, None, None);
    } else if let (Some(module), name) = split_scope(&written) {
        c.import(node, module, Some(name), None);
    }
}

fn call(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "template_function" => {
            if let Some(name) = function.field("name") {
                let text = c.text(name);
                c.reference(name, text, None, RefKind::Call);
            }
        }
        "qualified_identifier" => {
            // Follow the `name` fields to the last segment: `a::B<int>::c`.
            let mut last = function;
            for _ in 0..64 {
                match last.field("name") {
                    Some(next) if last.kind() == "qualified_identifier" => last = next,
                    _ => break,
                }
            }
            let name_node = match last.kind() {
                "template_function" => last.field("name").unwrap_or(last),
                _ => last,
            };
            let qualifier = text_before(c, function, last);
            let qualifier = without_template_args(qualifier.trim().trim_end_matches("::"));
            let name = c.text(name_node);
            c.reference(name_node, name, Some(&qualifier), RefKind::Call);
        }
        "field_expression" => {
            let qualifier = function.field("argument").map(|a| c.text(a));
            if let Some(field) = function.field("field") {
                let text = c.text(field);
                let text = strip_generics(text.trim_start_matches("template").trim());
                c.reference(field, text, qualifier, RefKind::Call);
            }
        }
        _ => {}
    }
}

/// A type name in a declaration, parameter, cast or template argument.
fn type_use(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(parent) = c.parent_of(node) else {
        return;
    };
    let is_own_field =
        |p: Node<'_>, field: &'static str| p.field(field).is_some_and(|n| n.id() == node.id());
    let defines = match parent.kind() {
        "class_specifier" | "struct_specifier" | "union_specifier" | "enum_specifier"
        | "alias_declaration" => is_own_field(parent, "name"),
        "type_definition" => is_own_field(parent, "declarator"),
        "pointer_declarator"
        | "reference_declarator"
        | "function_declarator"
        | "array_declarator"
        | "parenthesized_declarator" => typedef_name_of(c, node, parent),
        _ => false,
    };
    if defines {
        return;
    }
    // Climb `a::b::T` and `T<U>` to the outermost node naming this type.
    let mut outermost = node;
    for _ in 0..64 {
        match c.parent_of(outermost) {
            Some(p)
                if matches!(p.kind(), "qualified_identifier" | "template_type")
                    && p.field("name").is_some_and(|n| n.id() == outermost.id()) =>
            {
                outermost = p
            }
            _ => break,
        }
    }
    if c.parent_of(outermost)
        .is_some_and(|p| p.kind() == "new_expression")
    {
        return; // recorded as a call
    }
    let qualifier = without_template_args(
        text_before(c, outermost, node)
            .trim()
            .trim_end_matches("::"),
    );
    let name = c.text(node);
    c.reference(node, name, Some(&qualifier), RefKind::TypeUse);
}

/// Whether `node`, inside the declarator `parent`, is the name a `typedef` declares.
fn typedef_name_of(c: &Collector<'_>, node: Node<'_>, parent: Node<'_>) -> bool {
    let mut top = parent;
    for _ in 0..32 {
        match c.parent_of(top) {
            Some(p) if p.kind().ends_with("declarator") => top = p,
            Some(p) if p.kind() == "type_definition" => {
                return declared_type_name(top).is_some_and(|n| n.id() == node.id());
            }
            _ => return false,
        }
    }
    false
}

/// The node naming a function in a declarator chain: `*f(..)`, `&Foo::operator=(..)`,
/// and a conversion operator's `Foo::operator bool() const`, whose name is its declarator.
fn function_name(declarator: Node<'_>) -> Option<Node<'_>> {
    let mut node = declarator;
    for _ in 0..32 {
        match node.kind() {
            "function_declarator" => return node.field("declarator"),
            "operator_cast" => return Some(node),
            "qualified_identifier"
                if node
                    .field("name")
                    .is_some_and(|n| n.kind() == "operator_cast") =>
            {
                return Some(node);
            }
            "pointer_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                node = match node.field("declarator") {
                    Some(inner) => inner,
                    None => named_children(node)
                        .into_iter()
                        .find(|n| n.kind().ends_with("declarator"))?,
                };
            }
            _ => return None,
        }
    }
    None
}

/// A function's written name: the name node's text, but a conversion operator's stops
/// before its parameters (`Foo::operator bool() const` → `Foo::operator bool`).
fn function_name_text<'s>(c: &Collector<'s>, name_node: Node<'_>) -> std::borrow::Cow<'s, str> {
    let cast = if name_node.kind() == "operator_cast" {
        Some(name_node)
    } else {
        name_node
            .field("name")
            .filter(|n| n.kind() == "operator_cast")
    };
    match cast.and_then(|cast| cast.field("declarator")) {
        Some(params) => c
            .source_between(name_node.start_byte(), params.start_byte())
            .unwrap_or_default()
            .into(),
        None => c.text(name_node).into(),
    }
}

/// The node a definition's span, signature and doc start from: its `template <..>` wrapper, if any.
fn outer<'t>(c: &Collector<'t>, node: Node<'t>) -> Node<'t> {
    let mut outer = node;
    while let Some(parent) = c
        .parent_of(outer)
        .filter(|p| p.kind() == "template_declaration")
    {
        outer = parent;
    }
    outer
}

/// `a::b::c` → (`Some("a::b")`, `"c"`); only `::` separates (an `operator->` stays whole).
fn split_scope(written: &str) -> (Option<&str>, &str) {
    match written.rfind("::") {
        Some(i) => {
            let q = written[..i].trim();
            (Some(q).filter(|q| !q.is_empty()), written[i + 2..].trim())
        }
        None => (None, written.trim()),
    }
}

/// `Box<int>::get` → `Box::get`: drops every balanced `<..>` group and collapses whitespace.
/// `operator<` and `operator<<` keep their angle brackets. Every step consumes input, so
/// the loop ends on any text (an identifier that merely contains `operator`, such as
/// `my_operator_x::f`, once spun here forever).
fn without_template_args(written: &str) -> String {
    let written: String = written.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(written.len());
    let mut depth = 0usize;
    let mut rest = written.as_str();
    while let Some(ch) = rest.chars().next() {
        if depth == 0 && ends_with_operator_keyword(&out) {
            // The operator's symbol (`<<`, `()`, `->`, ` new[]`'s space) is kept whole.
            let symbol_len = rest
                .find(|ch: char| is_identifier_char(ch) || ch == ':')
                .unwrap_or(rest.len());
            if symbol_len > 0 {
                out.push_str(&rest[..symbol_len]);
                rest = &rest[symbol_len..];
                continue;
            }
        }
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
        rest = &rest[ch.len_utf8()..];
    }
    out.trim().to_string()
}

/// Whether `text` ends with the keyword `operator`, not with an identifier ending so.
fn ends_with_operator_keyword(text: &str) -> bool {
    text.strip_suffix("operator")
        .is_some_and(|before| !before.ends_with(is_identifier_char))
}

fn is_identifier_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

fn named_child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    named_children(node).into_iter().find(|n| n.kind() == kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lang;
    use crate::extract::extract;

    fn defs(src: &str) -> Vec<(String, &'static str)> {
        let facts = extract(Lang::Cpp, src).unwrap();
        facts
            .symbols
            .iter()
            .map(|s| (s.qualified_name.clone(), s.kind.name()))
            .collect()
    }

    #[test]
    fn out_of_line_method_is_qualified_by_its_class() {
        let src = "namespace geo {\nclass Shape { void draw(); };\n}\nvoid geo::Shape::draw() { helper(); }\n";
        let facts = extract(Lang::Cpp, src).unwrap();
        let draw = facts.symbols.iter().find(|s| s.name == "draw").unwrap();
        assert_eq!(draw.qualified_name, "geo::Shape::draw");
        assert_eq!(draw.kind, SymbolKind::Method);
        assert_eq!(
            facts.symbols[draw.parent.unwrap() as usize].qualified_name,
            "geo::Shape"
        );
        let call = &facts.refs.iter().find(|r| r.name == "helper").unwrap();
        assert_eq!(
            facts.symbols[call.from.unwrap() as usize].qualified_name,
            "geo::Shape::draw"
        );
    }

    #[test]
    fn templates_keep_their_head_in_the_signature() {
        let src = "// A box.\ntemplate <typename T>\nclass Box { T get() { return v; } T v; };\n";
        let facts = extract(Lang::Cpp, src).unwrap();
        let class = &facts.symbols[0];
        assert_eq!(class.qualified_name, "Box");
        assert_eq!(class.signature, "template <typename T> class Box");
        assert_eq!(class.doc.as_deref(), Some("A box."));
        assert_eq!(class.span.start_line, 2);
        assert_eq!(defs(src)[1], ("Box::get".to_string(), "method"));
    }

    #[test]
    fn template_args_and_operators_are_kept_apart() {
        assert_eq!(
            without_template_args("Box<std::vector<int>>::get"),
            "Box::get"
        );
        assert_eq!(without_template_args("Foo::operator<<"), "Foo::operator<<");
        assert_eq!(without_template_args("operator<"), "operator<");
        assert_eq!(split_scope("Foo::operator->"), (Some("Foo"), "operator->"));
    }

    /// Runs `work` on its own thread and fails the test if it has not returned within a
    /// generous deadline: a loop that makes no progress fails here instead of hanging.
    fn within_deadline<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(work());
        });
        rx.recv_timeout(std::time::Duration::from_secs(30))
            .expect("did not finish within 30 s: a loop without progress")
    }

    #[test]
    fn names_that_contain_operator_end_and_keep_their_text() {
        let cases = [
            ("my_operator_x::f", "my_operator_x::f"),
            ("operator_x::f", "operator_x::f"),
            ("x_operator::f", "x_operator::f"),
            ("x_operator", "x_operator"),
            ("operatorx", "operatorx"),
            ("operator2<int>::f", "operator2::f"),
            (
                "internal_stream_operator_without_lexical_name_lookup::StreamPrinter",
                "internal_stream_operator_without_lexical_name_lookup::StreamPrinter",
            ),
            ("Foo::operator<<", "Foo::operator<<"),
            ("Foo::operator<<=", "Foo::operator<<="),
            ("Foo::operator()", "Foo::operator()"),
            ("Foo::operator new[]", "Foo::operator new[]"),
            ("Foo::operator delete", "Foo::operator delete"),
            ("Foo::operator bool", "Foo::operator bool"),
            (
                "Foo<T>::operator std::vector<T>",
                "Foo::operator std::vector",
            ),
            ("Box<my_operator<int>>::operator->", "Box::operator->"),
            ("operator\"\"_km", "operator\"\"_km"),
            ("operator", "operator"),
            ("operator::x", "operator::x"),
        ];
        for (written, expected) in cases {
            let got = within_deadline(move || without_template_args(written));
            assert_eq!(got, expected, "{written}");
        }
    }

    #[test]
    fn definitions_named_around_operator_index_to_completion() {
        let src = "struct my_operator_x { void f(); };\nvoid my_operator_x::f() {}\n\
                   namespace operator_ns { struct S { int operator()(int); }; }\n\
                   int operator_ns::S::operator()(int x) { return x; }\n\
                   struct x_operator { x_operator& operator<<(int); operator bool() const; };\n\
                   x_operator& x_operator::operator<<(int) { return *this; }\n\
                   x_operator::operator bool() const { return true; }\n\
                   template <typename T> struct W { void* operator new[](unsigned long); };\n\
                   template <typename T> void* W<T>::operator new[](unsigned long n) { return 0; }\n\
                   class internal_stream_operator_without_lexical_name_lookup { class StreamPrinter {}; };\n\
                   class internal_stream_operator_without_lexical_name_lookup::StreamPrinter : public my_operator_x {};\n";
        let defs = within_deadline(move || defs(src));
        for expected in [
            ("my_operator_x::f", "method"),
            ("operator_ns::S::operator()", "method"),
            ("x_operator::operator<<", "method"),
            ("x_operator::operator bool", "method"),
            ("W::operator new[]", "method"),
        ] {
            assert!(
                defs.iter()
                    .any(|(q, k)| q == expected.0 && *k == expected.1),
                "{expected:?} not in {defs:?}"
            );
        }
    }

    #[test]
    fn macros_aliases_and_constants() {
        let src = "#ifndef GUARD_H\n#define GUARD_H\n#define SQ(x) ((x)*(x))\n#define PI 3.14\n#define EXPORTED\nusing Id = int;\ntypedef int Num;\nconstexpr int N = 3;\nvoid f() { const int local = 1; }\n#endif\n";
        assert_eq!(
            defs(src),
            vec![
                ("SQ".to_string(), "macro"),
                ("PI".to_string(), "constant"),
                ("EXPORTED".to_string(), "constant"),
                ("Id".to_string(), "type_alias"),
                ("Num".to_string(), "type_alias"),
                ("N".to_string(), "constant"),
                ("f".to_string(), "function"),
            ]
        );
    }
}
