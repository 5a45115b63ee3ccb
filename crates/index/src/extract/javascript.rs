//! JavaScript, TypeScript and TSX (the TypeScript grammars extend JavaScript's node kinds):
//! functions, classes, methods, functions bound to variables, top-level `const`s,
//! interfaces, type aliases, enums and namespaces, named function expressions passed as
//! arguments, returned or bound to a computed name (`app.use(function mounted() {})`),
//! definitions made by assignment ([`super::js_assigned`]: `exports.f = ..`,
//! `C.prototype.m = ..`, classes compiled to ES5); calls and `new`, type uses,
//! `import`/`export ... from`/`require()` imports, `extends` and `implements` bases.

use tree_sitter::Node;

use super::collector::MAX_QUALIFIER;
use super::fields::Fields;
use super::js_imports::{export_from, first_string_argument, import_statement, required};
use super::text::compact;
use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 7;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    super::receivers_js::javascript(c, node);
    match node.kind() {
        // `function C() {..}` inside the compiled class `C` (`js_assigned::compiled_class`):
        // its constructor, a method named as written (as Java's and C++'s are).
        "function_declaration" if super::js_assigned::is_compiled_constructor(c, node) => {
            named(c, node, SymbolKind::Method)
        }
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            if is_overload(c, node) {
                return Action::Descend;
            }
            named(c, node, SymbolKind::Function)
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            let action = named(c, node, SymbolKind::Class);
            if let Action::Enter(id) = action {
                super::js_bases::class_bases(c, node, id);
            }
            action
        }
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            if is_overload(c, node) {
                return Action::Descend;
            }
            named(c, node, SymbolKind::Method)
        }
        "interface_declaration" => {
            let action = named(c, node, SymbolKind::Interface);
            if let Action::Enter(id) = action {
                let mut cursor = node.walk();
                let clauses: Vec<Node<'_>> = node
                    .named_children(&mut cursor)
                    .filter(|n| n.kind() == "extends_type_clause")
                    .collect();
                for clause in clauses {
                    super::js_bases::bases_in(c, clause, id, BaseKind::Inherits);
                }
            }
            action
        }
        "type_alias_declaration" => named(c, node, SymbolKind::TypeAlias),
        "enum_declaration" => named(c, node, SymbolKind::Enum),
        "internal_module" | "module" => {
            let Some(name_node) = node.field("name") else {
                return Action::Descend;
            };
            let name = c.text(name_node).trim_matches(['"', '\'', '`']).to_string();
            let body = node.field("body");
            let doc = c.preceding_comments(outer(c, node));
            let id = c.def_with_doc(node, &name, SymbolKind::Module, body, doc);
            Action::Enter(id)
        }
        "function_expression" | "function" | "generator_function" => {
            bind_callback_parameters(c, node);
            named_expression(c, node)
        }
        "arrow_function" => {
            bind_callback_parameters(c, node);
            Action::Descend
        }
        "variable_declarator" => declarator(c, node),
        "public_field_definition" | "field_definition" => field(c, node),
        "pair" => pair(c, node),
        "assignment_expression" => super::js_assigned::assignment(c, node),
        // Bases are recorded with their class; their names are not type uses too.
        "class_heritage" | "extends_type_clause" => Action::Skip,
        "call_expression" => {
            call(c, node);
            match super::js_assigned::define_property(c, node) {
                Some(id) => Action::Enter(id),
                None => Action::Descend,
            }
        }
        "new_expression" => {
            if let Some(ctor) = node.field("constructor") {
                callee(c, ctor);
            }
            Action::Descend
        }
        // `<Button />` renders (calls) the component `Button`; lower-case tags are HTML.
        "jsx_opening_element" | "jsx_self_closing_element" => {
            if let Some(name) = node.field("name") {
                let component = match name.kind() {
                    "identifier" => c.text(name).starts_with(|ch: char| ch.is_ascii_uppercase()),
                    "member_expression" => true,
                    _ => false,
                };
                if component {
                    callee(c, name);
                }
            }
            Action::Descend
        }
        "import_statement" => {
            import_statement(c, node);
            Action::Skip
        }
        "export_statement" => {
            if node.field("source").is_some() {
                export_from(c, node);
                return Action::Skip;
            }
            Action::Descend
        }
        "type_identifier" => {
            if !is_definition_name(c, node) {
                let name = c.text(node);
                c.reference(node, name, None, RefKind::TypeUse);
            }
            Action::Skip
        }
        "nested_type_identifier" => {
            if let Some(name) = node.field("name") {
                let qualifier = c
                    .field_text(node, "module")
                    .map(|q| compact(q, MAX_QUALIFIER));
                let text = c.text(name);
                c.reference(name, text, qualifier.as_deref(), RefKind::TypeUse);
            }
            Action::Skip
        }
        _ => Action::Descend,
    }
}

/// A declaration with a `name` field: recorded, then its children inside its scope.
/// The last of a run of overloads stands for them all: it starts at the first one (the
/// signatures are its typed interface), with the first one's doc comment when it has
/// none of its own.
fn named(c: &mut Collector<'_>, node: Node<'_>, kind: SymbolKind) -> Action {
    let Some(name_node) = node.field("name") else {
        return Action::Descend;
    };
    let name = c.text(name_node);
    let body = node.field("body");
    let first = first_overload(c, node);
    let doc = c
        .preceding_comments(outer(c, node))
        .or_else(|| first.and_then(|first| c.preceding_comments(outer(c, first))));
    let id = c.def_with_doc(node, name, kind, body, doc);
    if let Some(first) = first_signature(c, node) {
        c.extend_start(id, first);
    }
    if matches!(kind, SymbolKind::Function | SymbolKind::Method)
        && let Some(callbacks) = callback_types(c, node)
    {
        c.set_callbacks(id, &callbacks);
    }
    Action::Enter(id)
}

/// The parameters of a function's declaration that receive values (TypeScript's
/// `this: T` pseudo-parameter does not).
fn value_parameters<'t>(params: Node<'t>, c: &Collector<'_>) -> Vec<Node<'t>> {
    super::nodes::named_children(params)
        .into_iter()
        .filter(|p| p.kind() != "comment")
        .filter(|p| c.field_text(*p, "pattern") != Some("this"))
        .collect()
}

/// The written types of the parameters of each callback `node` declares it takes:
/// `(init: (source: Observable<T>, subscriber: Subscriber<R>) => void)` →
/// `0:Observable,Subscriber` (a parameter of no plain named type left empty).
fn callback_types(c: &Collector<'_>, node: Node<'_>) -> Option<String> {
    let params = node.field("parameters")?;
    let mut out = Vec::new();
    for (i, param) in value_parameters(params, c).into_iter().enumerate() {
        let Some(function) = param
            .field("type")
            .and_then(|t| t.named_child(0))
            .filter(|t| t.kind() == "function_type")
        else {
            continue;
        };
        let Some(inner) = function.field("parameters") else {
            continue;
        };
        let types: Vec<&str> = value_parameters(inner, c)
            .into_iter()
            .map(|p| {
                c.field_text(p, "type")
                    .map(|t| t.trim_start_matches(':').trim())
                    .and_then(super::written::type_name)
                    .unwrap_or("")
            })
            .collect();
        if types.iter().any(|t| !t.is_empty()) {
            out.push(format!("{i}:{}", types.join(",")));
        }
    }
    (!out.is_empty()).then(|| out.join(";"))
}

/// An untyped function passed as an argument (`operate((source, subscriber) => ..)`,
/// `new Observable((subscriber) => ..)`, either branch of a conditional argument):
/// each untyped parameter is bound to the marker `callee(@<argument>.<parameter>)`
/// (`new C(@0.0)` for a construction),
/// which resolution replaces by the type the callee's declaration gives that
/// parameter of that callback ([`callback_types`]).
fn bind_callback_parameters(c: &mut Collector<'_>, node: Node<'_>) {
    // The argument the function is, or a branch of (`cond ? (s) => .. : init`).
    let mut argument = node;
    while let Some(p) = c
        .parent_of(argument)
        .filter(|p| matches!(p.kind(), "ternary_expression" | "parenthesized_expression"))
    {
        argument = p;
    }
    let Some(args) = c.parent_of(argument).filter(|p| p.kind() == "arguments") else {
        return;
    };
    // `f(cb)`, `x.f(cb)`, and `new C(cb)`: C's constructor declares the types.
    let Some((call, field, new)) = c.parent_of(args).and_then(|p| match p.kind() {
        "call_expression" => Some((p, "function", "")),
        "new_expression" => Some((p, "constructor", "new ")),
        _ => None,
    }) else {
        return;
    };
    let Some(callee) = call
        .field(field)
        .filter(|f| matches!(f.kind(), "identifier" | "member_expression"))
    else {
        return;
    };
    let callee = format!("{new}{}", compact(c.text(callee), MAX_QUALIFIER));
    let Some(index) = super::nodes::named_children(args)
        .into_iter()
        .filter(|a| a.kind() != "comment")
        .position(|a| a.id() == argument.id())
    else {
        return;
    };
    let params: Vec<Node<'_>> = match node.field("parameter") {
        Some(single) => vec![single],
        None => match node.field("parameters") {
            Some(params) => value_parameters(params, c),
            None => return,
        },
    };
    for (j, param) in params.into_iter().enumerate() {
        let name = match param.kind() {
            "identifier" => param,
            "required_parameter" | "optional_parameter" if param.field("type").is_none() => {
                match param.field("pattern").filter(|p| p.kind() == "identifier") {
                    Some(name) => name,
                    None => continue,
                }
            }
            _ => continue,
        };
        let name = c.text(name);
        c.bind_marker(name, format!("{callee}(@{index}.{j})"));
    }
}

/// Declarations that overloads of one function or method are written as.
const OVERLOADABLE: &[&str] = &[
    "function_signature",
    "function_declaration",
    "method_signature",
    "method_definition",
    "abstract_method_signature",
];

/// The declaration `node` stands for once `export` is looked through, and the node whose
/// siblings its neighbours are (the `export` statement, else itself).
fn declaration_of<'t>(c: &Collector<'t>, node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
    if node.kind() == "export_statement" {
        let decl = node.field("declaration")?;
        return Some((decl, node));
    }
    Some((node, outer(c, node)))
}

/// The nearest named sibling of `node` (comments skipped), after it or before it.
fn neighbour(node: Node<'_>, after: bool) -> Option<Node<'_>> {
    let mut next = if after {
        node.next_named_sibling()
    } else {
        node.prev_named_sibling()
    };
    while let Some(n) = next.filter(|n| n.kind() == "comment") {
        next = if after {
            n.next_named_sibling()
        } else {
            n.prev_named_sibling()
        };
    }
    next
}

/// The overload declaration next to `node` on one side, when it declares the same name.
fn same_name_neighbour<'t>(c: &Collector<'t>, node: Node<'t>, after: bool) -> Option<Node<'t>> {
    let name = c.field_text(node, "name")?;
    let (_, place) = declaration_of(c, node)?;
    let (decl, _) = declaration_of(c, neighbour(place, after)?)?;
    (OVERLOADABLE.contains(&decl.kind()) && c.field_text(decl, "name") == Some(name))
        .then_some(decl)
}

/// Whether `node` is an overload signature that the declaration after it, of the same
/// name, stands for (`function f(a: string): void; function f(a: any) {..}`, or several
/// signatures of an interface's method): calls then reach one definition, not one per
/// signature. The declaration is kept; its type uses stay the file's.
fn is_overload(c: &Collector<'_>, node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "function_signature" | "method_signature" | "abstract_method_signature"
    ) && same_name_neighbour(c, node, true).is_some()
}

/// The first of the overload signatures right before `node` (`function f(a: string):
/// void;` before `function f(a: any) {..}`), if any; a getter before its setter is no
/// signature of it.
fn first_signature<'t>(c: &Collector<'t>, node: Node<'t>) -> Option<Node<'t>> {
    let mut first = None;
    let mut at = node;
    while let Some(prev) = same_name_neighbour(c, at, false).filter(|p| {
        matches!(
            p.kind(),
            "function_signature" | "method_signature" | "abstract_method_signature"
        )
    }) {
        first = Some(prev);
        at = prev;
    }
    first
}

/// The first of the overloads before `node`, if any.
fn first_overload<'t>(c: &Collector<'t>, node: Node<'t>) -> Option<Node<'t>> {
    let mut first = None;
    let mut at = node;
    while let Some(prev) = same_name_neighbour(c, at, false) {
        first = Some(prev);
        at = prev;
    }
    first
}

/// A named function expression where nothing else names it: passed as an argument
/// (`router.use(path, function mounted_app() {})`), returned (`return function
/// expressInit() {}`) or bound to a computed name (`this[kOnDrain] = function onDrain()
/// {}`, `{ [key]: function named() {} }`). One bound to a variable, a property or a
/// field is defined under that name by its binding instead.
fn named_expression(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let bound = c.parent_of(node).is_some_and(|p| match p.kind() {
        "variable_declarator" | "public_field_definition" | "field_definition" => true,
        "assignment_expression" => p
            .field("left")
            .is_some_and(|l| matches!(l.kind(), "identifier" | "member_expression")),
        "pair" => p
            .field("key")
            .is_some_and(|k| k.kind() != "computed_property_name"),
        _ => false,
    });
    if bound {
        return Action::Descend;
    }
    named(c, node, SymbolKind::Function)
}

/// `export` and `declare` wrap a declaration; its doc comment sits above the wrapper.
fn outer<'t>(c: &Collector<'t>, node: Node<'t>) -> Node<'t> {
    let mut node = node;
    for _ in 0..3 {
        match c.parent_of(node) {
            Some(p) if matches!(p.kind(), "export_statement" | "ambient_declaration") => node = p,
            _ => break,
        }
    }
    node
}

/// `const f = () => {}`, `var g = function () {}`, `const C = class {}`, a top-level `const`.
fn declarator(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(name_node) = node.field("name").filter(|n| n.kind() == "identifier") else {
        return Action::Descend;
    };
    let Some(decl) = c
        .parent_of(node)
        .filter(|p| matches!(p.kind(), "lexical_declaration" | "variable_declaration"))
    else {
        return Action::Descend;
    };
    let value = node.field("value");
    let compiled = value.and_then(|v| super::js_assigned::compiled_class(c, c.text(name_node), v));
    let kind = match value.map(|v| v.kind()) {
        Some("arrow_function" | "function_expression" | "function" | "generator_function") => {
            SymbolKind::Function
        }
        Some("class") => SymbolKind::Class,
        _ if compiled.is_some() => SymbolKind::Class,
        _ => {
            let top_level_const = decl.field("kind").is_some_and(|k| c.text(k) == "const")
                && is_top_level(c, decl)
                && !value.is_some_and(|v| is_require(c, v));
            if !top_level_const {
                return Action::Descend;
            }
            SymbolKind::Constant
        }
    };
    let mut declarators = decl.walk();
    let single = decl
        .named_children(&mut declarators)
        .filter(|n| n.kind() == "variable_declarator")
        .count()
        == 1;
    let span_node = if single { decl } else { node };
    let body = match compiled {
        Some((function, _)) => function.field("body"),
        None => value.and_then(|v| v.field("body")),
    };
    let doc = c.preceding_comments(outer(c, decl));
    let name = c.text(name_node);
    let id = c.def_with_doc(span_node, name, kind, body, doc);
    match compiled {
        // `(function (_super) {..}(Base))`: the argument is the base class.
        Some((_, call)) => {
            let base = call
                .field("arguments")
                .and_then(|args| super::nodes::named_children(args).into_iter().next());
            if let Some(base) = base {
                super::js_bases::base_expression(c, base, id, BaseKind::Inherits);
            }
        }
        None if kind == SymbolKind::Class => {
            if let Some(class) = value {
                super::js_bases::class_bases(c, class, id);
            }
        }
        None => {}
    }
    Action::Enter(id)
}

/// A class field holding a function: `handle = () => {}`.
fn field(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let name_node = node.field("name").or_else(|| node.field("property"));
    let value = node.field("value");
    let (Some(name_node), Some(value)) = (name_node, value) else {
        return Action::Descend;
    };
    if !matches!(
        value.kind(),
        "arrow_function" | "function_expression" | "function"
    ) {
        return Action::Descend;
    }
    let name = c.text(name_node);
    let id = c.def(node, name, SymbolKind::Method, value.field("body"));
    Action::Enter(id)
}

/// An object literal entry holding a function: `{ run: function () {} }` → a method.
fn pair(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let (Some(key), Some(value)) = (node.field("key"), node.field("value")) else {
        return Action::Descend;
    };
    if !matches!(
        value.kind(),
        "arrow_function" | "function_expression" | "function" | "generator_function"
    ) {
        return Action::Descend;
    }
    if !matches!(
        key.kind(),
        "property_identifier" | "string" | "private_property_identifier"
    ) {
        return Action::Descend;
    }
    // `Object.defineProperty(o, 'm', { value: function () {} })` defined `o.m` already.
    let descriptor_call = c
        .parent_of(node)
        .and_then(|object| c.parent_of(object))
        .and_then(|args| c.parent_of(args))
        .filter(|call| c.field_text(*call, "function") == Some("Object.defineProperty"));
    if descriptor_call.is_some() {
        return Action::Descend;
    }
    let name = c.text(key).trim_matches(['"', '\'']).to_string();
    let id = c.def(node, &name, SymbolKind::Method, value.field("body"));
    Action::Enter(id)
}

fn is_top_level(c: &Collector<'_>, decl: Node<'_>) -> bool {
    let mut parent = c.parent_of(decl);
    if parent.is_some_and(|p| p.kind() == "export_statement") {
        parent = parent.and_then(|p| c.parent_of(p));
    }
    parent.is_some_and(|p| p.kind() == "program")
}

fn is_require(c: &Collector<'_>, value: Node<'_>) -> bool {
    value.kind() == "call_expression" && c.field_text(value, "function") == Some("require")
}

/// `f()`, `obj.m()`, `require('m')` (an import), `import('m')` (an import).
fn call(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(function) = node.field("function") else {
        return;
    };
    let text = c.text(function);
    if text == "require" || function.kind() == "import" {
        if let Some(module) = first_string_argument(c, node) {
            required(c, node, &module);
        }
        return;
    }
    callee(c, function);
}

/// Records a call to what `function` names: an identifier or the last property of a member chain.
fn callee(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "member_expression" => {
            let Some(property) = function.field("property") else {
                return;
            };
            // `a?.m()`, `a?.b.m()`, `a!.m()`: the same receiver as `a.m()`, `a.b.m()`.
            let object = function.field("object");
            let qualifier = object.map(|o| super::receivers_js::plain_chain(c.text(o)));
            let name = c.text(property);
            c.reference(property, name, qualifier.as_deref(), RefKind::Call);
            if let Some(ty) = object.and_then(super::receivers_js::literal_type) {
                c.set_last_receiver(ty);
            }
        }
        _ => {}
    }
}

/// Whether `node` is the name a declaration declares (not a use of it).
fn is_definition_name(c: &Collector<'_>, node: Node<'_>) -> bool {
    c.parent_of(node)
        .filter(|p| {
            matches!(
                p.kind(),
                "class_declaration"
                    | "abstract_class_declaration"
                    | "class"
                    | "interface_declaration"
                    | "type_alias_declaration"
                    | "type_parameter"
            )
        })
        .and_then(|p| p.field("name"))
        .is_some_and(|n| n.id() == node.id())
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::{SymbolKind, extract};

    #[test]
    fn doc_comments_above_export_belong_to_the_declaration() {
        let src = "/** Adds. */\nexport function add(a, b) { return a + b; }\n";
        let facts = extract(Lang::TypeScript, src).unwrap();
        let add = &facts.symbols[0];
        assert_eq!(
            (add.kind, add.doc.as_deref()),
            (SymbolKind::Function, Some("Adds."))
        );
        assert_eq!(add.signature, "function add(a, b)");
    }
}
