//! JavaScript definitions made by assignment rather than by a declaration, the way
//! CommonJS modules and code compiled to ES5 write them:
//!
//! - `exports.f = function () {}` (a function of the file), `Foo.prototype.m = () => {}`
//!   and `res.m = function () {}` (a method of `Foo`, `res`), `this.m = ..` (a method of
//!   the enclosing class), `f = function () {}`;
//! - `Object.defineProperty(o, 'm', { value: function () {} })` (or `get:`): `o.m`;
//! - `C.prototype.alias = C.prototype.name;`: the method `C.alias` (a second name for a
//!   method is a definition callers reach: `c.alias()`);
//! - `S = class Simple {..}`: the class `S`, as `const S = class Simple {..}` is (the
//!   name `new S()` calls), with `Simple` inside it;
//! - `var C = (function (_super) { function C() {..} ..; return C; }(Base))`: the class
//!   `C` that TypeScript's ES5 output and Babel's loose mode write for `class C extends
//!   Base` ([`compiled_class`]), whose inner `function C` is its constructor: the method
//!   `C.C`, named as written, as a Java or C++ constructor is.

use tree_sitter::Node;

use super::fields::Fields;
use super::nodes::named_children;
use super::{Action, Collector, SymbolKind};

/// The node kinds of a function written as an expression.
const FUNCTION_VALUES: &[&str] = &[
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
];

/// An assignment that defines something (see the module doc), else `Descend`.
pub(super) fn assignment(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let (Some(left), Some(value)) = (node.field("left"), node.field("right")) else {
        return Action::Descend;
    };
    let stmt = c
        .parent_of(node)
        .filter(|p| p.kind() == "expression_statement")
        .unwrap_or(node);
    if value.kind() == "class" && left.kind() == "identifier" {
        let doc = c.preceding_comments(stmt);
        let name = c.text(left);
        let id = c.def_with_doc(node, name, SymbolKind::Class, value.field("body"), doc);
        super::js_bases::class_bases(c, value, id);
        return Action::Enter(id);
    }
    if value.kind() == "member_expression" {
        return prototype_alias(c, node, left, value, stmt);
    }
    if !FUNCTION_VALUES.contains(&value.kind()) {
        return Action::Descend;
    }
    let body = value.field("body");
    let (name, owner) = match left.kind() {
        "identifier" => (c.text(left), None),
        "member_expression" => {
            let Some(property) = left.field("property") else {
                return Action::Descend;
            };
            let object = c.field_text(left, "object").unwrap_or("");
            (c.text(property), member_owner(object))
        }
        _ => return Action::Descend,
    };
    let doc = c.preceding_comments(stmt);
    let id = match owner {
        // A member of the object it is assigned to, so that `x.m()` reaches it.
        Some(Owner::Object(object)) => member_def(c, node, object, name, body, doc),
        Some(Owner::This) => c.def_with_doc(node, name, SymbolKind::Method, body, doc),
        None => c.def_with_doc(node, name, SymbolKind::Function, body, doc),
    };
    Action::Enter(id)
}

/// `C.prototype.alias = C.prototype.name;`: the method `C.alias`. Only a prototype
/// member copied to a prototype member: `C.prototype.x = other.y` may hold anything.
fn prototype_alias(
    c: &mut Collector<'_>,
    node: Node<'_>,
    left: Node<'_>,
    value: Node<'_>,
    stmt: Node<'_>,
) -> Action {
    let Some(property) = left
        .field("property")
        .filter(|_| left.kind() == "member_expression")
    else {
        return Action::Descend;
    };
    let object = c.field_text(left, "object").unwrap_or("").trim();
    let from_prototype = c
        .field_text(value, "object")
        .is_some_and(|o| o.trim().ends_with(".prototype"));
    if !object.ends_with(".prototype") || !from_prototype {
        return Action::Descend;
    }
    let doc = c.preceding_comments(stmt);
    let name = c.text(property);
    let Some(Owner::Object(owner)) = member_owner(object) else {
        return Action::Descend;
    };
    let id = member_def(c, node, owner, name, None, doc);
    Action::Enter(id)
}

/// Whose member an assigned function is.
enum Owner<'s> {
    /// `this.m = ..`: the enclosing class's.
    This,
    /// `res.m = ..`, `Foo.prototype.m = ..`: the object's (`res`, `Foo`).
    Object(&'s str),
}

/// The owner of `object.m = function`: `None` for the module itself (`exports.m`,
/// `module.exports.m`, whose functions are the file's).
fn member_owner(object: &str) -> Option<Owner<'_>> {
    let object = object.trim();
    let object = object.strip_suffix(".prototype").unwrap_or(object);
    match object {
        "this" => Some(Owner::This),
        "exports" | "module.exports" | "module" => None,
        _ if object.is_empty() || object.contains(['(', '[', ' ']) => None,
        _ => Some(Owner::Object(object)),
    }
}

/// A method `object.name` (a child of `object` when this file defines it as a type; a
/// plain method of the class being defined when `object` is that class, or Babel's
/// `_proto` alias of its prototype, inside a compiled class).
fn member_def(
    c: &mut Collector<'_>,
    node: Node<'_>,
    object: &str,
    name: &str,
    body: Option<Node<'_>>,
    doc: Option<String>,
) -> u32 {
    let last = object.rsplit('.').next().unwrap_or(object);
    let parent = c.find_type(last);
    let own_class = c.current_kind() == Some(SymbolKind::Class)
        && (parent.is_some_and(|p| Some(p) == c.current_symbol())
            || is_prototype_alias(c, node, object));
    if own_class {
        return c.def_with_doc(node, name, SymbolKind::Method, body, doc);
    }
    let id = c.def_qualified(node, object, name, SymbolKind::Method, body, parent);
    if let Some(doc) = doc {
        c.set_doc(id, doc);
    }
    id
}

/// `Object.defineProperty(obj, 'm', { value: function () {} })` (or `get:`): a method `obj.m`.
pub(super) fn define_property(c: &mut Collector<'_>, node: Node<'_>) -> Option<u32> {
    if c.field_text(node, "function") != Some("Object.defineProperty") {
        return None;
    }
    let args = named_children(node.field("arguments")?);
    let [object, key, descriptor] = args.as_slice() else {
        return None;
    };
    if !matches!(key.kind(), "string") || descriptor.kind() != "object" {
        return None;
    }
    let name = c.text(*key).trim_matches(['"', '\'', '`']);
    let owner = member_owner(c.text(*object))?;
    let function = named_children(*descriptor)
        .into_iter()
        .filter(|p| p.kind() == "pair")
        .filter(|p| matches!(c.field_text(*p, "key"), Some("value" | "get")))
        .find_map(|p| {
            p.field("value")
                .filter(|v| FUNCTION_VALUES.contains(&v.kind()))
        })?;
    let body = function.field("body");
    let doc = c.preceding_comments(c.parent_of(node).unwrap_or(node));
    Some(match owner {
        Owner::Object(object) => member_def(c, node, object, name, body, doc),
        Owner::This => c.def_with_doc(node, name, SymbolKind::Method, body, doc),
    })
}

/// When `value`, bound to `name`, is a class compiled to ES5 — a function called at
/// once whose body declares `function name` and ends `return name;` — the called
/// function and the call (whose first argument is the base class, if any).
pub(super) fn compiled_class<'t>(
    c: &Collector<'_>,
    name: &str,
    value: Node<'t>,
) -> Option<(Node<'t>, Node<'t>)> {
    let call = unparenthesized(value)?;
    if call.kind() != "call_expression" {
        return None;
    }
    let function = unparenthesized(call.field("function")?)?;
    if !matches!(function.kind(), "function_expression" | "function") {
        return None;
    }
    let statements = named_children(function.field("body")?);
    let declares = statements
        .iter()
        .any(|s| s.kind() == "function_declaration" && c.field_text(*s, "name") == Some(name));
    let returns = statements.iter().any(|s| {
        s.kind() == "return_statement"
            && s.named_child(0)
                .is_some_and(|r| r.kind() == "identifier" && c.text(r) == name)
    });
    (declares && returns).then_some((function, call))
}

/// Whether `object` is declared, among the statements around the assignment `node`, as
/// the enclosing class's prototype: `var _proto = C.prototype;` (Babel's loose mode).
fn is_prototype_alias(c: &Collector<'_>, node: Node<'_>, object: &str) -> bool {
    let Some(class) = c.enclosing_type() else {
        return false;
    };
    let prototype = format!("{class}.prototype");
    let block = c
        .parent_of(node)
        .filter(|p| p.kind() == "expression_statement")
        .and_then(|s| c.parent_of(s));
    block.is_some_and(|block| {
        named_children(block)
            .into_iter()
            .filter(|s| matches!(s.kind(), "variable_declaration" | "lexical_declaration"))
            .flat_map(named_children)
            .any(|d| {
                c.field_text(d, "name") == Some(object)
                    && c.field_text(d, "value") == Some(prototype.as_str())
            })
    })
}

/// `(x)` → `x`, any depth, comments skipped.
fn unparenthesized(node: Node<'_>) -> Option<Node<'_>> {
    let mut node = node;
    while node.kind() == "parenthesized_expression" {
        node = named_children(node)
            .into_iter()
            .find(|n| n.kind() != "comment")?;
    }
    Some(node)
}

/// Whether `function`, a function declaration, is the constructor of the compiled class
/// it sits in ([`compiled_class`]): the class's own name declared directly in it.
pub(super) fn is_compiled_constructor(c: &Collector<'_>, function: Node<'_>) -> bool {
    c.current_kind() == Some(SymbolKind::Class)
        && c.field_text(function, "name")
            .is_some_and(|n| c.enclosing_type() == Some(n))
}
