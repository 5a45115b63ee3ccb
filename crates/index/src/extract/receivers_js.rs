//! Receiver types in JavaScript and TypeScript (see [`super::receivers`]): annotated
//! parameters and variables (`x: Foo`, `this: Subscriber<T>`, `Sink | null`), `new`,
//! class fields and constructor parameter properties, and copies of typed names.

use tree_sitter::Node;

use super::Collector;
use super::fields::Fields;

/// JavaScript/TypeScript: `const x = new Foo()`, `x: Foo` parameters and variables,
/// class fields with a type or a `new`, `this.x = new Foo()`.
pub(crate) fn javascript(c: &mut Collector<'_>, node: Node<'_>) {
    let annotated = |c: &Collector<'_>, n: Node<'_>| {
        c.field_text(n, "type")
            .map(|t| without_nullish(t.trim_start_matches(':').trim()).to_string())
    };
    match node.kind() {
        "variable_declarator" => {
            let Some(name) = node.field("name").filter(|n| n.kind() == "identifier") else {
                return;
            };
            let value = node.field("value");
            let ty = annotated(c, node)
                .or_else(|| js_constructed(c, value?))
                .or_else(|| js_copied(c, value?))
                .or_else(|| literal_type(value?).map(str::to_string));
            let name = c.text(name);
            match (ty, value) {
                (Some(ty), _) => c.bind(name, &ty),
                (None, Some(v)) if v.kind() == "call_expression" => {
                    // A module, not an object of some type.
                    if !c.bind_method_call(name, c.text(v))
                        && let Some(f) = c.field_text(v, "function").filter(|f| *f != "require")
                    {
                        c.bind_call(name, f);
                    }
                }
                _ => {}
            }
        }
        "required_parameter" | "optional_parameter" => {
            // `this: Subscriber<T>` (TypeScript's pseudo-parameter) types `this.m()`.
            if let (Some(pattern), Some(ty)) = (node.field("pattern"), annotated(c, node))
                && matches!(pattern.kind(), "identifier" | "this")
            {
                let name = c.text(pattern);
                c.bind(name, &ty);
                // `constructor(private x: T)`: a parameter property is a field too.
                if is_parameter_property(node) {
                    c.bind_field(name, &ty);
                }
            }
        }
        "public_field_definition" | "field_definition" => {
            let name = node
                .field("name")
                .or_else(|| node.field("property"))
                .map(|n| c.text(n));
            let ty = annotated(c, node).or_else(|| js_constructed(c, node.field("value")?));
            if let (Some(name), Some(ty)) = (name, ty) {
                c.bind_field(name, &ty);
            }
        }
        "assignment_expression" => {
            let (Some(left), Some(ty)) = (
                node.field("left"),
                node.field("right").and_then(|v| js_constructed(c, v)),
            ) else {
                return;
            };
            match left.kind() {
                "identifier" => {
                    let name = c.text(left);
                    c.bind(name, &ty);
                }
                "member_expression" if c.field_text(left, "object") == Some("this") => {
                    if let Some(field) = c.field_text(left, "property") {
                        c.bind_field(field, &ty);
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// A TypeScript type without the `null`/`undefined` of a union (`Subscription | null`
/// is a `Subscription` receiver); any other union is left as written (no one type).
fn without_nullish(written: &str) -> &str {
    if !written.contains('|') {
        return written;
    }
    // The union's members: `|` outside any brackets (`Subscriber<A | B> | null`).
    let mut members = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, ch) in written.char_indices() {
        match ch {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            '|' if depth == 0 => {
                members.push(written[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    members.push(written[start..].trim());
    let mut rest = members
        .into_iter()
        .filter(|t| !t.is_empty() && !matches!(*t, "null" | "undefined" | "void"));
    match (rest.next(), rest.next()) {
        (Some(one), None) => one,
        _ => written,
    }
}

/// Whether a constructor's parameter declares a field (`private x: T`, `readonly x: T`).
fn is_parameter_property(param: Node<'_>) -> bool {
    let mut cursor = param.walk();
    param.children(&mut cursor).any(|n| {
        matches!(
            n.kind(),
            "accessibility_modifier" | "readonly" | "override_modifier"
        )
    })
}

/// The type of what a variable copies: `const self = this` (the enclosing class),
/// `const observer = this._output` / `= x.field` / `= y` (a typed field or name).
fn js_copied(c: &Collector<'_>, value: Node<'_>) -> Option<String> {
    match value.kind() {
        "this" => c.enclosing_type().map(str::to_string),
        "identifier" | "member_expression" => c.receiver_of(&plain_chain(c.text(value))),
        _ => None,
    }
}

/// A member chain without optional chaining and non-null assertions (`a?.b!` → `a.b`).
pub(crate) fn plain_chain(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['?', '!']) {
        return std::borrow::Cow::Borrowed(text);
    }
    let plain = text.replace("?.", ".").replace("!.", ".");
    std::borrow::Cow::Owned(plain.trim_end_matches('!').to_string())
}

/// The builtin type a literal makes (`/re/` a `RegExp`, `'s'` a `String`, `[..]` an
/// `Array`): its methods are the language's, none of the workspace's.
pub(crate) fn literal_type(value: Node<'_>) -> Option<&'static str> {
    match value.kind() {
        "regex" => Some("RegExp"),
        "string" | "template_string" => Some("String"),
        "array" => Some("Array"),
        "number" => Some("Number"),
        "parenthesized_expression" => literal_type(value.named_child(0)?),
        _ => None,
    }
}

/// `new Foo(..)`, `new ns.Foo(..)`.
fn js_constructed(c: &Collector<'_>, value: Node<'_>) -> Option<String> {
    match value.kind() {
        "new_expression" => c.field_text(value, "constructor").map(str::to_string),
        "await_expression" | "parenthesized_expression" => js_constructed(c, value.named_child(0)?),
        _ => None,
    }
}
