//! C++ receiver types (see [`super::receivers`]): what a C++ file writes about the type
//! of a name, so that `x.m()` and `x->m()` record `m` with `x`'s type. Parameters
//! (`const Key &key`, `Key *key`, `ns::Key key`), locals with a written type or built
//! by `new T`, `T(..)` or `std::make_unique<T>(..)` (`auto`), `auto` locals holding a
//! call's result (`auto k = make_key();`, `auto e = h.entry();`: what the callee
//! returns, see [`returned`]), fields of a class body,
//! and `this` in a method defined out of line (`void Trie::lookup() { this->m(); }`).
//! Smart pointers are their pointee (`std::unique_ptr<T>`, see [`super::written`]).
//! A name whose type is a template parameter of an enclosing template is not bound: its
//! members are whatever the instantiation's are.

use tree_sitter::Node;

use super::fields::Fields;
use super::nodes::named_children;
use super::written::{split_qualified, strip_generics};
use super::{Collector, SymbolKind};

/// Most declarator wrappers (`*`, `&`, `= value`, `[N]`) unwrapped to reach a name.
const MAX_DECLARATOR_DEPTH: usize = 16;

/// Records the types `node` (any node the C++ walker visits) binds names to.
pub(crate) fn cpp(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "parameter_declaration" | "optional_parameter_declaration" => {
            if let Some((name, ty)) = typed_name(c, node) {
                c.bind(&name, &ty);
            }
        }
        "declaration" => declaration(c, node, false),
        // A class body's fields before its methods' bodies: C++ classes often declare
        // them last (`private:` at the end).
        "field_declaration_list" => {
            for field in named_children(node) {
                if field.kind() == "field_declaration" {
                    declaration(c, field, true);
                }
            }
        }
        "compound_statement" => bind_this(c, node),
        _ => {}
    }
}

/// Binds the names a declaration declares (locals; fields of the enclosing class when
/// `field`) to its written type, or for `auto` to what the initializer builds.
fn declaration(c: &mut Collector<'_>, node: Node<'_>, field: bool) {
    let Some(written) = c.field_text(node, "type").map(str::to_string) else {
        return;
    };
    for (d, name) in named_declarators(c, node) {
        let ty = if written == "auto" {
            let value = d.field("value");
            match value.and_then(|v| constructed(c, v)) {
                Some(ty) => ty,
                None => {
                    // `auto k = t.key();`, `auto n = find(..)`: the call's result, for
                    // resolution to type by what the callee returns.
                    if !field
                        && let Some(call) = value.filter(|v| v.kind() == "call_expression")
                        && !c.bind_method_call(&name, c.text(call))
                        && let Some(f) = c.field_text(call, "function")
                    {
                        c.bind_call(&name, f);
                    }
                    continue;
                }
            }
        } else if is_template_parameter(c, node, &written) {
            continue;
        } else {
            written.clone()
        };
        if field {
            c.bind_field(&name, &ty);
        } else {
            c.bind(&name, &ty);
        }
    }
}

/// `Key key_;`, `Node *next, *prev;` in a class body: each a [`SymbolKind::Field`]
/// definition holding its declared type (none for a primitive or a template
/// parameter), for resolution to type `holder.key_.m()` and `key_.m()` in a file that
/// does not declare the class (the header does). Methods (`void f();`) are not fields.
pub(crate) fn data_members(c: &mut Collector<'_>, node: Node<'_>) {
    if !c.in_type_scope() || c.current_symbol().is_none() {
        return;
    }
    let Some(ty) = node.field("type") else {
        return;
    };
    let written = c.text(ty).trim().to_string();
    // A named type (`Key`, `ns::Key`, `std::unique_ptr<Key>`), not a primitive, a type
    // defined in place (`struct { .. } s;`) or a template parameter.
    let declared = (matches!(
        ty.kind(),
        "type_identifier" | "qualified_identifier" | "template_type"
    ) && !is_template_parameter(c, node, &written))
    .then(|| super::written::type_name(&written).map(str::to_string))
    .flatten();
    for (_, name) in named_declarators(c, node) {
        let id = c.def(node, &name, SymbolKind::Field, None);
        if let Some(ty) = &declared {
            c.set_returns(id, ty);
        }
    }
}

/// The declarators of a declaration (`Node *next, *prev;` has two), each with the name
/// it declares; those that declare none (a function's) are left out.
fn named_declarators<'t>(c: &Collector<'_>, node: Node<'t>) -> Vec<(Node<'t>, String)> {
    let mut cursor = node.walk();
    node.children_by_field_name("declarator", &mut cursor)
        .filter_map(|d| Some((d, declared_name(c, d)?)))
        .collect()
}

/// `(name, type)` of a parameter with a written type that is not a template parameter.
fn typed_name(c: &Collector<'_>, node: Node<'_>) -> Option<(String, String)> {
    let written = c.field_text(node, "type")?;
    if written == "auto" || is_template_parameter(c, node, written) {
        return None;
    }
    let name = declared_name(c, node.field("declarator")?)?;
    Some((name, written.to_string()))
}

/// The name a declarator declares: through `*x`, `&x`, `x = v`, `x[N]`, `x(args)`.
fn declared_name(c: &Collector<'_>, mut d: Node<'_>) -> Option<String> {
    for _ in 0..MAX_DECLARATOR_DEPTH {
        match d.kind() {
            "identifier" | "field_identifier" => return Some(c.text(d).to_string()),
            "pointer_declarator"
            | "reference_declarator"
            | "init_declarator"
            | "array_declarator"
            | "parenthesized_declarator" => {
                d = d.field("declarator").or_else(|| d.named_child(0))?;
            }
            _ => return None,
        }
    }
    None
}

/// The type an `auto` variable's initializer builds: `new T(..)`, `T(..)`, `T{..}`,
/// `std::make_unique<T>(..)` / `std::make_shared<T>(..)`.
fn constructed(c: &Collector<'_>, value: Node<'_>) -> Option<String> {
    match value.kind() {
        "new_expression" => c.field_text(value, "type").map(str::to_string),
        "compound_literal_expression" => c.field_text(value, "type").map(str::to_string),
        "call_expression" => {
            let function = value.field("function")?;
            let written = c.text(function);
            let (_, last) = split_qualified(strip_generics(written));
            if matches!(last, "make_unique" | "make_shared") {
                let open = written.find('<')?;
                let close = written.rfind('>')?;
                return (open < close).then(|| written[open + 1..close].to_string());
            }
            // `t.Key()` calls a method: its result is what the method returns.
            let (_, name) = split_qualified(written);
            (function.kind() != "field_expression"
                && name.starts_with(|ch: char| ch.is_uppercase()))
            .then(|| written.to_string())
        }
        _ => None,
    }
}

/// Whether `written` names a template parameter of a template around `node`.
pub(crate) fn is_template_parameter(c: &Collector<'_>, node: Node<'_>, written: &str) -> bool {
    let (_, name) = split_qualified(strip_generics(written.trim()));
    let mut at = c.parent_of(node);
    for _ in 0..256 {
        let Some(n) = at else { return false };
        if n.kind() == "template_declaration"
            && let Some(params) = n.field("parameters")
        {
            let declares = named_children(params).into_iter().any(|p| {
                named_children(p)
                    .into_iter()
                    .any(|x| x.kind() == "type_identifier" && c.text(x) == name)
            });
            if declares {
                return true;
            }
        }
        at = c.parent_of(n);
    }
    false
}

/// The type a function definition's head says it returns (`const Key &Trie::key()`,
/// `Node *find()`, `std::unique_ptr<Node> make()`), for resolution to type a receiver
/// that holds its result (`t.key().length()`); none for `void`, `auto` or a template
/// parameter, whose members the name decides.
pub(crate) fn returned(c: &Collector<'_>, function: Node<'_>) -> Option<String> {
    let ty = function.field("type")?;
    if matches!(ty.kind(), "primitive_type" | "sized_type_specifier") {
        return None;
    }
    let written = c.text(ty).trim();
    if matches!(written, "auto" | "decltype(auto)") || is_template_parameter(c, function, written) {
        return None;
    }
    super::written::type_name(written).map(str::to_string)
}

/// `this` in the body of a method defined out of line (`void ns::Trie::lookup() {..}`)
/// is a `Trie`; in a class body the enclosing class already says so.
fn bind_this(c: &mut Collector<'_>, body: Node<'_>) {
    let Some(function) = c
        .parent_of(body)
        .filter(|p| p.kind() == "function_definition")
    else {
        return;
    };
    if c.enclosing_type().is_some() {
        return;
    }
    let mut d = function.field("declarator");
    for _ in 0..MAX_DECLARATOR_DEPTH {
        let Some(n) = d else { return };
        match n.kind() {
            "function_declarator" | "pointer_declarator" | "reference_declarator" => {
                d = n.field("declarator");
            }
            "qualified_identifier" => {
                let written = c.text(n).to_string();
                let (Some(owner), _) = split_qualified(&written) else {
                    return;
                };
                let (_, class) = split_qualified(strip_generics(owner));
                let class = class.to_string();
                c.bind("this", &class);
                return;
            }
            _ => return,
        }
    }
}
