//! Rust: items, impl blocks, calls and macro calls, `use` trees, trait impls and supertraits.
//!
//! Rules:
//! - `name!(..)` is a reference of kind `Macro`, which only a macro definition answers;
//!   its tokens are parsed again as code ([`super::embedded`]): as items in item position
//!   (only when their first token can begin an item, else their braced groups),
//!   else as one expression, except for template and data macros ([`NOT_CODE`]);
//! - a trait's associated type (`type Output;`) is a TypeAlias of the trait;
//! - `#[path = "x.rs"] mod m;` is an import of module `./x.rs` (the attribute's path,
//!   `./` prefixed when it has no `/`: a `use` path never has one) under the name `m`;
//!   so is each `#[cfg_attr(cond, path = "x.rs")]` (one import per path, in written
//!   order: each is a candidate file of the module, see `resolve/rust_paths.rs`);
//!   a plain `mod m;` gives nothing (the module graph finds `m.rs` or `m/mod.rs`).

use tree_sitter::Node;

use super::fields::Fields;
use super::nodes::named_children;
use super::written::split_qualified;

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 4;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let kind = match node.kind() {
        "function_item" | "function_signature_item" => {
            if c.in_type_scope() {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            }
        }
        "struct_item" | "union_item" => SymbolKind::Struct,
        "enum_item" => SymbolKind::Enum,
        "trait_item" => SymbolKind::Trait,
        "type_item" | "associated_type" => SymbolKind::TypeAlias,
        "mod_item" => SymbolKind::Module,
        "const_item" | "static_item" => SymbolKind::Constant,
        "macro_definition" => SymbolKind::Macro,
        "impl_item" => return impl_block(c, node),
        "call_expression" => {
            if let Some(function) = node.field("function") {
                call_target(c, function);
            }
            return Action::Descend;
        }
        "macro_invocation" => {
            macro_invocation(c, node);
            return Action::Skip;
        }
        "use_declaration" => {
            if let Some(arg) = node.field("argument") {
                use_tree(c, node, arg, "");
            }
            return Action::Skip;
        }
        "type_identifier" => {
            if !c.is_name_field(node) {
                let text = c.text(node);
                c.reference(node, text, None, RefKind::TypeUse);
            }
            return Action::Skip;
        }
        "scoped_type_identifier" => {
            let qualifier = c.field_text(node, "path");
            if let Some(name) = node.field("name") {
                let text = c.text(name);
                c.reference(name, text, qualifier, RefKind::TypeUse);
            }
            return Action::Skip;
        }
        "parameter" | "let_declaration" | "field_declaration" => {
            super::receivers::rust(c, node);
            return Action::Descend;
        }
        // Macro arguments and bodies are flat tokens to tree-sitter (an invocation's are
        // parsed again: `macro_invocation`), and string literals and comments hold no
        // calls or types: not walked.
        "token_tree" | "string_literal" | "raw_string_literal" | "line_comment"
        | "block_comment" => return Action::Skip,
        _ => return Action::Descend,
    };
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let body = node.field("body");
    if kind == SymbolKind::Module && body.is_none() {
        // `mod foo;` only points at another file, which defines the module; with
        // `#[path = "x.rs"]` it names that file, recorded as an import of it.
        for path in path_attributes(c, node) {
            let module = if path.contains('/') {
                path
            } else {
                format!("./{path}")
            };
            c.import(node, &module, Some(name), None);
        }
        return Action::Skip;
    }
    let id = c.def(node, name, kind, body);
    if kind == SymbolKind::Trait
        && let Some(bounds) = node.field("bounds")
    {
        for bound in named_children(bounds) {
            let written = c.text(bound);
            c.base(bound, id, written, BaseKind::Inherits);
        }
    }
    Action::Enter(id)
}

/// The files the `#[path = ".."]` and `#[cfg_attr(cond, path = "..")]` attributes of an
/// item name, in written order (the attributes are the item's preceding siblings).
fn path_attributes(c: &Collector<'_>, node: Node<'_>) -> Vec<String> {
    let mut found = Vec::new();
    let mut prev = node.prev_named_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => {
                let text: String = c.text(p).split_whitespace().collect();
                // Walked backwards: each attribute's paths go before the later ones'.
                let mut own = attribute_paths(&text);
                own.append(&mut found);
                found = own;
            }
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        prev = p.prev_named_sibling();
    }
    found
}

/// The paths one attribute (its text without whitespace) names: `#[path="x"]` one,
/// `#[cfg_attr(cond,path="x")]` one per `path="x"` among its attributes (a condition's
/// own string literals, `feature="path"`, are no attributes).
fn attribute_paths(text: &str) -> Vec<String> {
    let string_value = |rest: &str| -> Option<String> {
        let value = rest.strip_prefix('"')?;
        let end = value.find('"')?;
        let value = &value[..end];
        (!value.is_empty() && !value.contains('\\')).then(|| value.to_string())
    };
    if let Some(rest) = text.strip_prefix("#[path=") {
        return rest
            .strip_suffix(']')
            .and_then(string_value)
            .into_iter()
            .collect();
    }
    let Some(inner) = text
        .strip_prefix("#[cfg_attr(")
        .and_then(|r| r.strip_suffix(")]"))
    else {
        return Vec::new();
    };
    // The condition is the first top-level item; the attributes follow it.
    let mut items = Vec::new();
    let (mut depth, mut in_string, mut start) = (0usize, false, 0usize);
    for (i, ch) in inner.char_indices() {
        match ch {
            '"' => in_string = !in_string,
            '(' | '[' if !in_string => depth += 1,
            ')' | ']' if !in_string => depth = depth.saturating_sub(1),
            ',' if !in_string && depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .skip(1)
        .filter_map(|item| string_value(item.strip_prefix("path=")?))
        .collect()
}

/// Macros whose tokens are templates or data, not code of this file: parsing them would
/// find definitions and calls that are not there (`quote! { fn #name() {} }`).
const NOT_CODE: &[&str] = &[
    "quote",
    "quote_spanned",
    "parse_quote",
    "parse_quote_spanned",
    "stringify",
    "concat",
    "concat_idents",
    "include",
    "include_str",
    "include_bytes",
    "env",
    "option_env",
    "compile_error",
    "asm",
    "global_asm",
    "naked_asm",
    "llvm_asm",
    "html",
    "rsx",
    "view",
    "sql",
];

/// `name!(..)`: a call of the macro `name` (only ever a macro definition), and its tokens
/// read as code: in item position (a file's or a block of items' direct child,
/// `cfg_rt! { pub fn spawn() {} }`) the tokens inside the delimiters are deferred to be
/// parsed as items; elsewhere a braced token tree is deferred to be parsed as a block,
/// when it holds a nested group (no call or definition can be written without one), and
/// the calls among the tokens of `(..)` and `[..]` are read from the tokens themselves
/// ([`super::rust_tokens`]).
fn macro_invocation(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(mac) = node.field("macro") else {
        return;
    };
    let (qualifier, name) = split_qualified(c.text(mac));
    c.reference(mac, name, qualifier, RefKind::Macro);
    if NOT_CODE.contains(&name) {
        return;
    }
    let mut cursor = node.walk();
    let last_tree = node
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "token_tree")
        .last();
    let Some(tokens) = last_tree else {
        return;
    };
    let items = c
        .parent_kind(node)
        .is_some_and(|p| matches!(p, "source_file" | "declaration_list"));
    let range = if items {
        let Some(inner) = inside_delimiters(tokens) else {
            return;
        };
        // Tokens that are not items as a whole may hold braced groups of items.
        let mut cursor = tokens.walk();
        let groups: Vec<_> = tokens
            .named_children(&mut cursor)
            .filter(|n| n.kind() == "token_tree" && c.text(*n).starts_with('{'))
            .filter_map(inside_delimiters)
            .collect();
        if starts_like_an_item(c, tokens) {
            c.defer(inner, groups);
        } else if groups.is_empty() {
            // `assert_impl!(Foo: Send)`, `kernel!(1, 2)`: a parse as items would end in
            // errors (tree-sitter's recovery is most of the cost of parsing macro bodies)
            // and find guesses; their calls are read from the tokens.
            super::rust_tokens::scan(c, tokens);
        } else {
            // `cfg_if! { if #[cfg(..)] { .. } else { .. } }`, `name: { .. }` lists: only
            // the braced groups can be items, each parsed on its own.
            for group in groups {
                c.defer(group, Vec::new());
            }
        }
        return;
    } else if c.text(tokens).starts_with('{') {
        // A braced group in an expression or statement (`select! { .. }`): may hold
        // statements and items, so it is parsed again as a block.
        let mut cursor = tokens.walk();
        if !tokens
            .named_children(&mut cursor)
            .any(|n| n.kind() == "token_tree")
        {
            return;
        }
        tokens.range()
    } else {
        super::rust_tokens::scan(c, tokens);
        return;
    };
    c.defer(range, Vec::new());
}

/// Whether the first token inside `tokens`' delimiters (comments aside) can begin an
/// item: an attribute, an item keyword or qualifier, a macro invocation (`name!`,
/// `path::name!`) or a metavariable. Anything else (`Foo: Send`, `name: value`, a
/// literal, a group, `cfg_if!`'s `if`) cannot, and the tokens do not parse as items.
fn starts_like_an_item(c: &Collector<'_>, tokens: Node<'_>) -> bool {
    let mut cursor = tokens.walk();
    let mut inner = tokens
        .children(&mut cursor)
        .skip(1)
        .filter(|n| !matches!(n.kind(), "line_comment" | "block_comment"));
    let Some(first) = inner.next() else {
        return false;
    };
    let next = inner.next().map(|n| c.text(n));
    match c.text(first) {
        "#" | "$" | "pub" | "fn" | "struct" | "enum" | "union" | "trait" | "type" | "const"
        | "static" | "mod" | "impl" | "use" | "extern" | "unsafe" | "async" | "let"
        | "macro_rules" | "default" | "auto" | "safe" => true,
        _ if first.kind() == "metavariable" => true,
        "::" => true,
        "crate" | "self" | "super" => next == Some("::") || next == Some("!"),
        _ if first.kind() == "identifier" => next == Some("::") || next == Some("!"),
        _ => false,
    }
}

/// The range of a token tree's tokens without its delimiters, if it has any.
fn inside_delimiters(tokens: Node<'_>) -> Option<tree_sitter::Range> {
    let count = tokens.child_count();
    if count < 3 {
        return None;
    }
    let open = tokens.child(0)?;
    let close = tokens.child(count - 1)?;
    Some(tree_sitter::Range {
        start_byte: open.end_byte(),
        end_byte: close.start_byte(),
        start_point: open.end_position(),
        end_point: close.start_position(),
    })
}

/// `impl Type { .. }` and `impl Trait for Type { .. }`: methods get `Type::` as scope,
/// and the trait impl is an IMPLEMENTS base of `Type`.
fn impl_block(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    let Some(ty) = node.field("type") else {
        return Action::Descend;
    };
    let type_text = c.text(ty);
    let (_, type_name) = split_qualified(super::written::strip_generics(type_text));
    let type_name = type_name.to_string();
    let local = c.find_type(&type_name);
    if let Some(trait_node) = node.field("trait") {
        let written = c.text(trait_node);
        c.base_of(trait_node, local, &type_name, written, BaseKind::Implements);
    }
    match local {
        Some(id) => Action::Enter(id),
        None => Action::EnterNamed(type_name),
    }
}

fn call_target(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "scoped_identifier" => {
            let qualifier = c.field_text(function, "path");
            if let Some(name) = function.field("name") {
                let text = c.text(name);
                c.reference(name, text, qualifier, RefKind::Call);
            }
        }
        "field_expression" => {
            let qualifier = c.field_text(function, "value");
            if let Some(field) = function.field("field") {
                let text = c.text(field);
                c.reference(field, text, qualifier, RefKind::Call);
            }
        }
        "generic_function" => {
            if let Some(inner) = function.field("function") {
                call_target(c, inner);
            }
        }
        _ => {}
    }
}

/// Flattens a `use` tree into one import per name: `use a::{b, c::d as e, f::*}`.
fn use_tree(c: &mut Collector<'_>, stmt: Node<'_>, node: Node<'_>, prefix: &str) {
    let join = |p: &str, s: &str| match (p.is_empty(), s.is_empty()) {
        (true, _) => s.to_string(),
        (false, true) => p.to_string(),
        (false, false) => format!("{p}::{s}"),
    };
    match node.kind() {
        "identifier" | "crate" | "self" | "super" => {
            let text = c.text(node);
            c.import(stmt, prefix, Some(text), None);
        }
        "scoped_identifier" => {
            let path = c.field_text(node, "path").unwrap_or("");
            let name = c.field_text(node, "name").unwrap_or("");
            let module = join(prefix, path);
            c.import(stmt, &module, Some(name), None);
        }
        "use_as_clause" => {
            let Some(path) = node.field("path") else {
                return;
            };
            let alias = c.field_text(node, "alias");
            let (module, name) = split_qualified(c.text(path));
            let module = join(prefix, module.unwrap_or(""));
            c.import(stmt, &module, Some(name), alias);
        }
        "use_wildcard" => {
            let text = c.text(node).trim_end_matches("*").trim_end_matches("::");
            let module = join(prefix, text);
            c.import(stmt, &module, None, None);
        }
        "scoped_use_list" => {
            let path = c.field_text(node, "path").unwrap_or("");
            let next = join(prefix, path);
            if let Some(list) = node.field("list") {
                for child in named_children(list) {
                    use_tree(c, stmt, child, &next);
                }
            }
        }
        "use_list" => {
            for child in named_children(node) {
                use_tree(c, stmt, child, prefix);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::attribute_paths;
    use crate::Lang;
    use crate::extract::{FileFacts, extract};

    fn symbols(facts: &FileFacts) -> Vec<&str> {
        facts
            .symbols
            .iter()
            .map(|s| s.qualified_name.as_str())
            .collect()
    }

    /// A `///` block keeps its lines and its blank lines once each: tree-sitter's
    /// `line_comment` ends with its newline, and joined with newlines every line doubled
    /// (`symbol`'s doc text over MCP was double-spaced). Version 4 of these rules.
    #[test]
    fn doc_comment_lines_are_not_doubled() {
        let facts = extract(
            Lang::Rust,
            "/// Adds permits.\n/// Two lines.\n///\n/// After a blank.\nfn add() {}\n",
        )
        .unwrap();
        let doc = facts.symbols[0].doc.as_deref();
        assert_eq!(doc, Some("Adds permits.\nTwo lines.\n\nAfter a blank."));
    }

    fn refs(facts: &FileFacts) -> Vec<(&str, Option<&str>, &str)> {
        facts
            .refs
            .iter()
            .map(|r| (r.name.as_str(), r.qualifier.as_deref(), r.kind.name()))
            .collect()
    }

    #[test]
    fn cfg_if_branches_are_parsed_as_items_each() {
        let source = "cfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        fn a() { b() }\n    } else if #[cfg(windows)] {\n        pub struct W;\n    } else {\n        mod m { fn c() {} }\n    }\n}\n";
        let facts = extract(Lang::Rust, source).unwrap();
        assert_eq!(symbols(&facts), ["a", "W", "m", "m::c"]);
        let b = facts.refs.iter().find(|r| r.name == "b").unwrap();
        assert_eq!(
            b.from.map(|i| facts.symbols[i as usize].name.as_str()),
            Some("a")
        );
        assert_eq!((b.line, b.col), (3, 18));
    }

    #[test]
    fn braced_groups_of_a_name_value_list_are_parsed_as_items() {
        let source =
            "cfg_variant! {\n    stable: { fn s() {} },\n    unstable: { fn u() {} },\n}\n";
        let facts = extract(Lang::Rust, source).unwrap();
        assert_eq!(symbols(&facts), ["s", "u"]);
    }

    #[test]
    fn tokens_that_cannot_start_an_item_give_only_their_calls() {
        let source = "assert_impl!(Foo<Bar>: Send, Sync);\nkernel!(1, compute(2), x.y(), inner!(z), u8::max_value());\nlist! { a: b, #[cfg(any(unix))] fn_like: f }\n";
        let facts = extract(Lang::Rust, source).unwrap();
        assert!(facts.symbols.is_empty(), "{:?}", symbols(&facts));
        assert_eq!(
            refs(&facts),
            [
                ("assert_impl", None, "macro"),
                ("kernel", None, "macro"),
                ("compute", None, "call"),
                ("y", Some("x"), "call"),
                ("inner", None, "macro"),
                ("max_value", Some("u8"), "call"),
                ("list", None, "macro"),
            ]
        );
    }

    #[test]
    fn tokens_that_start_like_items_are_still_parsed_as_items() {
        let source = "m! {\n    /// Doc.\n    pub fn f() {}\n}\nouter! { inner::nested! { fn g() {} } }\nn! { #[inline] fn h() {} }\np! { ::q::r! { struct T; } }\n";
        let facts = extract(Lang::Rust, source).unwrap();
        assert_eq!(symbols(&facts), ["f", "h", "g", "T"]);
    }

    #[test]
    fn path_and_cfg_attr_paths_are_read_but_conditions_are_not() {
        assert_eq!(attribute_paths("#[path=\"x.rs\"]"), ["x.rs"]);
        assert_eq!(
            attribute_paths("#[cfg_attr(unix,path=\"unix.rs\")]"),
            ["unix.rs"]
        );
        assert_eq!(
            attribute_paths(
                "#[cfg_attr(all(unix,feature=\"path\"),allow(dead_code),path=\"a/b.rs\")]"
            ),
            ["a/b.rs"]
        );
        assert!(attribute_paths("#[cfg_attr(feature=\"path\",allow(x))]").is_empty());
        assert!(attribute_paths("#[cfg_attr(unix,path=\"\")]").is_empty());
        assert!(attribute_paths("#[cfg_attr(unix,path=\"x.rs\"").is_empty());
        assert!(attribute_paths("#[doc=\"path=\\\"x\\\"\"]").is_empty());
    }
}
