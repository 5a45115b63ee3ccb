//! C#: namespaces (block and file-scoped), classes, records, structs, interfaces, enums,
//! delegates, methods, constructors, local functions, constants, calls, `new`, type uses,
//! `using` directives and base lists.
//!
//! Rules:
//! - a namespace is a Module; a file-scoped `namespace A.B;` scopes the whole file;
//! - a constructor is a Method named like its class, a destructor (finalizer) one named
//!   `~C` as in C++, an operator a Method named `operator+`; a property, event or indexer
//!   whose accessors have code a Method named as it (`this` for an indexer), one without
//!   code and conversion operators are not recorded; a delegate is a TypeAlias; no definition is named by a statement
//!   keyword (error recovery after `#if` can make a method named `if`);
//!   `const` fields are Constants;
//! - receiver types of parameters, locals, fields and properties, and the type an
//!   extension method extends ([`super::receivers_cs`]);
//! - base lists: the syntax cannot tell a base class from an interface, so an interface's
//!   bases are Inherits (interface extension), a struct's are Implements, and a class's
//!   or record's first base is Inherits unless it is named like an interface (`I` and a
//!   capital: `IDisposable`), every other base Implements;
//! - `using A.B;` and `using static A.B;` import module `A.B` whole; `using X = A.B;`
//!   imports module `A.B` under the alias `X`.

use tree_sitter::Node;

use super::collector::MAX_QUALIFIER;
use super::fields::Fields;
use super::nodes::{has_token, named_children};
use super::text::compact;
use super::written::{split_qualified, strip_generics};

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 5;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    super::receivers_cs::csharp(c, node);
    if node.child_count() > 0 {
        type_uses(c, node);
    }
    let kind = match node.kind() {
        "compilation_unit" => return file_scoped_namespace(c, node),
        "namespace_declaration" => SymbolKind::Module,
        "class_declaration" => SymbolKind::Class,
        "record_declaration" => {
            if has_token(node, "struct") {
                SymbolKind::Struct
            } else {
                SymbolKind::Class
            }
        }
        "struct_declaration" => SymbolKind::Struct,
        "interface_declaration" => SymbolKind::Interface,
        "enum_declaration" => SymbolKind::Enum,
        "delegate_declaration" => SymbolKind::TypeAlias,
        "method_declaration" | "constructor_declaration" => SymbolKind::Method,
        "local_function_statement" => SymbolKind::Function,
        "operator_declaration" => return operator(c, node),
        "destructor_declaration" => return destructor(c, node),
        "property_declaration" | "indexer_declaration" | "event_declaration" => {
            return accessor_unit(c, node);
        }
        "field_declaration" => {
            constants(c, node);
            return Action::Descend;
        }
        "using_directive" => {
            using(c, node);
            return Action::Skip;
        }
        // Bases are recorded with their type; type parameters are not type uses.
        "base_list" | "type_parameter_list" | "type_parameter_constraints_clause" => {
            return Action::Skip;
        }
        "invocation_expression" => {
            if let Some(function) = node.field("function") {
                let before = c.ref_count();
                call(c, function);
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
                let (qualifier, name) = split_qualified(strip_generics(c.text(ty)));
                c.reference(ty, name, qualifier, RefKind::Call);
            }
            return Action::Descend;
        }
        _ => return Action::Descend,
    };
    let Some(name_node) = node.field("name") else {
        return Action::Descend;
    };
    let name: String = c.text(name_node).split_whitespace().collect();
    // Code after `#if` can parse as a method named `if` or `while`: no definition is
    // named by a keyword (a real one would be written `@if`).
    if KEYWORDS.contains(&name.as_str()) {
        return Action::Descend;
    }
    let body = node.field("body");
    let id = c.def(node, &name, kind, body);
    if let Some(params) = node.field("parameters") {
        c.set_params(id, arity(c, params));
        if let Some(extended) = super::receivers_cs::extended_type(c, params) {
            c.set_receiver(id, extended);
        }
    }
    if let Some(bases) = named_children(node)
        .into_iter()
        .find(|n| n.kind() == "base_list")
    {
        record_bases(c, id, kind, bases);
    }
    Action::Enter(id)
}

/// Statement keywords that the grammar's error recovery can leave as a method's name.
const KEYWORDS: &[&str] = &[
    "if",
    "else",
    "while",
    "for",
    "foreach",
    "do",
    "switch",
    "case",
    "return",
    "using",
    "lock",
    "catch",
    "try",
    "finally",
    "throw",
    "fixed",
    "checked",
    "unchecked",
    "unsafe",
    "yield",
    "new",
    "typeof",
    "sizeof",
    "default",
    "nameof",
    "await",
];

/// The arguments of a call (`f(a, b, name: c)`: 3), comments aside.
fn argument_count(args: Node<'_>) -> u16 {
    let n = named_children(args)
        .into_iter()
        .filter(|a| a.kind() == "argument")
        .count();
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// What a method's `parameter_list` accepts: its parameters without a default value,
/// and any number more when one has a default (`int b = 2`), is a `params` array, or
/// is an extension method's `this` (written as the receiver, `s.M(a)`, or as an
/// argument, `M(s, a)`). A superset: a call never loses the overload it reaches.
fn arity(c: &Collector<'_>, params: Node<'_>) -> super::Arity {
    let mut fixed = 0u16;
    let mut variadic = false;
    let mut cursor = params.walk();
    for p in params.children(&mut cursor) {
        match p.kind() {
            "parameter" => {
                let (ty, name) = (p.field("type"), p.field("name"));
                let parts = named_children(p);
                let extension = parts
                    .iter()
                    .any(|m| m.kind() == "modifier" && c.text(*m) == "this");
                let default = parts.iter().any(|n| {
                    !matches!(n.kind(), "modifier" | "attribute_list")
                        && Some(*n) != ty
                        && Some(*n) != name
                });
                if extension || default {
                    variadic = true;
                } else {
                    fixed = fixed.saturating_add(1);
                }
            }
            // `params T[] rest`: the grammar puts its tokens in the list itself.
            "params" => variadic = true,
            _ => {}
        }
    }
    super::Arity { fixed, variadic }
}

/// `public static V operator +(V a, V b)`: a Method named `operator+`.
fn operator(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(op) = node.field("operator") else {
        return Action::Descend;
    };
    let name = format!("operator{}", c.text(op).trim());
    let body = node.field("body");
    let id = c.def(node, &name, SymbolKind::Method, body);
    Action::Enter(id)
}

/// `~C() {..}`, the finalizer: a Method named `~C`, as a C++ destructor is.
fn destructor(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let name = format!("~{}", name.trim());
    let body = node.field("body");
    let id = c.def(node, &name, SymbolKind::Method, body);
    Action::Enter(id)
}

/// A property, indexer or event whose accessors have code (`int N { get { return F(); } }`,
/// `int N => F();`, `T this[int i] { get {..} }`): a Method named as it (`this` for an
/// indexer), so that the calls in its accessors have it as their caller, as the compiler
/// has them in its `get_N`/`set_N`. One without code (`int N { get; set; }`) is not recorded.
fn accessor_unit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let has_code = |n: Node<'_>| {
        n.kind() == "arrow_expression_clause"
            || named_children(n)
                .into_iter()
                .any(|a| a.kind() == "accessor_declaration" && a.field("body").is_some())
    };
    let body = node
        .field("value")
        .filter(|v| v.kind() == "arrow_expression_clause")
        .or_else(|| node.field("accessors"))
        .filter(|b| has_code(*b));
    let Some(body) = body else {
        return Action::Descend;
    };
    let name = match node.kind() {
        "indexer_declaration" => "this".to_string(),
        _ => match c.field_text(node, "name") {
            Some(name) => name.trim().to_string(),
            None => return Action::Descend,
        },
    };
    let id = c.def(node, &name, SymbolKind::Method, Some(body));
    Action::Enter(id)
}

/// `namespace A.B;` applies to the rest of the file, so its scope opens at the root.
fn file_scoped_namespace(c: &mut Collector<'_>, root: Node<'_>) -> Action {
    let Some(ns) = named_children(root)
        .into_iter()
        .find(|n| n.kind() == "file_scoped_namespace_declaration")
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

fn record_bases(c: &mut Collector<'_>, id: u32, kind: SymbolKind, bases: Node<'_>) {
    let types: Vec<Node<'_>> = named_children(bases)
        .into_iter()
        .map(|n| match n.kind() {
            // `record R(int X) : Base(X)`: the type is the first child.
            "primary_constructor_base_type" => n.named_child(0).unwrap_or(n),
            _ => n,
        })
        .filter(|n| {
            matches!(
                n.kind(),
                "identifier" | "qualified_name" | "generic_name" | "alias_qualified_name"
            )
        })
        .collect();
    for (i, base) in types.into_iter().enumerate() {
        let written = c.text(base);
        let base_kind = match kind {
            SymbolKind::Interface => BaseKind::Inherits,
            SymbolKind::Class if i == 0 && !looks_like_interface(written) => BaseKind::Inherits,
            _ => BaseKind::Implements,
        };
        c.base(base, id, written, base_kind);
    }
}

/// `IDisposable`, `Sys.IComparable<T>`: the .NET naming convention for interfaces.
fn looks_like_interface(written: &str) -> bool {
    let (_, name) = split_qualified(strip_generics(written));
    let mut chars = name.chars();
    chars.next() == Some('I') && chars.next().is_some_and(|ch| ch.is_ascii_uppercase())
}

/// `const int Max = 3;` in a type body.
fn constants(c: &mut Collector<'_>, node: Node<'_>) {
    let children = named_children(node);
    if !children
        .iter()
        .any(|n| n.kind() == "modifier" && c.text(*n).trim() == "const")
    {
        return;
    }
    let Some(declaration) = children
        .into_iter()
        .find(|n| n.kind() == "variable_declaration")
    else {
        return;
    };
    for declarator in named_children(declaration) {
        if declarator.kind() == "variable_declarator"
            && let Some(name) = c.field_text(declarator, "name")
        {
            c.def(node, name, SymbolKind::Constant, None);
        }
    }
}

/// `using A.B;`, `using static A.B;`, `using X = A.B;`.
fn using(c: &mut Collector<'_>, node: Node<'_>) {
    let alias = node.field("name");
    let target = named_children(node)
        .into_iter()
        .find(|n| alias.is_none_or(|a| a.id() != n.id()) && !n.kind().ends_with("comment"));
    let Some(target) = target else { return };
    let module: String = c.text(target).split_whitespace().collect();
    let alias = alias.map(|a| c.text(a));
    c.import(node, &module, None, alias);
}

fn call(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "generic_name" => {
            let name = strip_generics(c.text(function));
            c.reference(function, name, None, RefKind::Call);
        }
        // `a.B()`, `this.B()`, `A.B<T>()`, `a?.B()`: the name field is the callee.
        _ => {
            let Some(name_node) = function.field("name") else {
                return;
            };
            let name = strip_generics(c.text(name_node));
            let len = name_node.start_byte().saturating_sub(function.start_byte());
            let before = c.text(function).get(..len).unwrap_or("");
            let qualifier = compact(before.trim().trim_end_matches(['.', '?']), MAX_QUALIFIER);
            c.reference(name_node, name, Some(&qualifier), RefKind::Call);
        }
    }
}

/// Type names where the grammar puts a type: the `type`/`returns` field of a declaration,
/// parameter, cast or pattern, and each type argument (found from the parent, so the
/// far more common identifiers elsewhere cost nothing).
fn type_uses(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "object_creation_expression" => {} // its type is recorded as a call
        "type_argument_list" => {
            for ty in named_children(node) {
                type_use(c, ty);
            }
        }
        _ => {
            for field in ["type", "returns"] {
                if let Some(ty) = node.field(field) {
                    type_use(c, ty);
                }
            }
        }
    }
}

fn type_use(c: &mut Collector<'_>, ty: Node<'_>) {
    if !matches!(ty.kind(), "identifier" | "qualified_name" | "generic_name") {
        return; // predefined, array, nullable..: their inner type is a field of their own
    }
    let written = strip_generics(c.text(ty));
    let (qualifier, name) = split_qualified(written);
    let qualifier = qualifier.map(|q| q.split_whitespace().collect::<String>());
    c.reference(ty, name, qualifier.as_deref(), RefKind::TypeUse);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lang;
    use crate::extract::extract;

    #[test]
    fn methods_record_what_they_accept_and_calls_what_they_pass() {
        let src = "static class A {\n\
            void Dispose() { Dispose(true); }\n\
            void Dispose(bool disposing) {}\n\
            static int Ext(this string s, int a) { return s.Ext(1) + Ext(s, 2); }\n\
            static void Opt(int a, int b = 2, params int[] rest) { Opt(1); Opt(1, b: 3, 4, 5); }\n\
            void Out(ref int x, out int y) { y = 0; Out(ref x, out y); }\n\
            }\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        assert_eq!(
            facts.method_arities(),
            ["Dispose/0", "Dispose/1", "Ext/1+", "Opt/1+", "Out/2"]
        );
        assert_eq!(
            facts.call_arguments(),
            [
                "Dispose(1)",
                "Ext(1)",
                "Ext(2)",
                "Opt(1)",
                "Opt(4)",
                "Out(2)"
            ]
        );
    }

    #[test]
    fn accessors_with_code_make_their_property_a_method() {
        let src = "class P {\n\
            int Auto { get; set; }\n\
            int Count { get { return Size(); } }\n\
            int Twice => Size() * 2;\n\
            int this[int i] { get { return At(i); } }\n\
            event Action Changed { add { Hook(value); } remove {} }\n\
            }\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        assert_eq!(
            facts.qualified_kinds(),
            [
                ("P", "class"),
                ("P.Count", "method"),
                ("P.Twice", "method"),
                ("P.this", "method"),
                ("P.Changed", "method")
            ]
        );
        let callers: Vec<(&str, Option<&str>)> = facts
            .refs
            .iter()
            .filter(|r| r.kind == RefKind::Call)
            .map(|r| {
                let from = r.from.map(|i| facts.symbols[i as usize].name.as_str());
                (r.name.as_str(), from)
            })
            .collect();
        assert_eq!(
            callers,
            [
                ("Size", Some("Count")),
                ("Size", Some("Twice")),
                ("At", Some("this")),
                ("Hook", Some("Changed"))
            ]
        );
    }

    #[test]
    fn a_finalizer_is_a_method_named_with_its_tilde() {
        let src = "class G {\n  public G() {}\n  ~G() { Release(); }\n}\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        assert_eq!(
            facts.qualified_kinds(),
            [("G", "class"), ("G.G", "method"), ("G.~G", "method")]
        );
    }

    #[test]
    fn directives_inside_a_parameter_list_or_a_statement_lose_no_definition() {
        // Each of these made the grammar read the whole file as one error.
        let src = "namespace N\n{\n  public class F\n  {\n    void Add(int a\n#if TRACE\n\
                   , string t\n#endif\n    )\n    {\n#if CHECK\n      lock (gate)\n#endif\n\
                   {\n        Run();\n      }\n    }\n#if X\n    void Old() {\n#else\n\
                   void New() {\n#endif\n    }\n    void Last() {}\n  }\n}\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        let lines: Vec<(&str, u32)> = facts
            .symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.span.start_line))
            .collect();
        assert_eq!(
            lines,
            [
                ("N", 1),
                ("N.F", 3),
                ("N.F.Add", 5),
                ("N.F.Old", 19),
                ("N.F.Last", 24)
            ]
        );
    }

    #[test]
    fn code_after_an_if_directive_defines_no_method_named_if() {
        // The second `{` of `M` after `#endif` makes the grammar read `if (a) {..}` as a method.
        let src = "class A {\n#if X\n void M() {\n#endif\n  if (a) { F(); }\n }\n}\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        assert_eq!(
            facts.qualified_kinds(),
            vec![("A", "class"), ("A.M", "method")]
        );
    }

    #[test]
    fn file_scoped_namespace_qualifies_the_whole_file() {
        let src = "using System;\nnamespace App.Core;\nclass Worker { public Worker() {} void Run() {} }\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        let names = facts.qualified_kinds();
        assert_eq!(
            names,
            vec![
                ("App.Core", "module"),
                ("App.Core.Worker", "class"),
                ("App.Core.Worker.Worker", "method"),
                ("App.Core.Worker.Run", "method"),
            ]
        );
    }

    #[test]
    fn base_lists_follow_the_interface_naming_rule() {
        let src = "class A : IDisposable, B {}\nclass C : Base, IFoo {}\nstruct S : IEq {}\ninterface I : IBase {}\n";
        let facts = extract(Lang::CSharp, src).unwrap();
        let bases: Vec<(String, String, BaseKind)> = facts
            .bases
            .iter()
            .map(|b| (b.subject.clone(), b.name.clone(), b.kind))
            .collect();
        assert_eq!(
            bases,
            vec![
                ("A".into(), "IDisposable".into(), BaseKind::Implements),
                ("A".into(), "B".into(), BaseKind::Implements),
                ("C".into(), "Base".into(), BaseKind::Inherits),
                ("C".into(), "IFoo".into(), BaseKind::Implements),
                ("S".into(), "IEq".into(), BaseKind::Implements),
                ("I".into(), "IBase".into(), BaseKind::Inherits),
            ]
        );
    }
}
