//! ctags tags that are not definitions in loci's sense, found from the source with
//! tree-sitter (never from loci's output), so that the comparison is of like with like;
//! the report counts what each rule leaves out.
//!
//! - JavaScript: ctags calls every object literal with members a `class`: `const opts =
//!   { path: p }` inside a function, `'*': {label: 'any'}` in a table, `module.exports =
//!   { .. }`. These are values, not definitions: `loci def opts` should not answer with a
//!   local variable, and a key of a data table is no type ([`object_literal_names`]).
//! - TypeScript: ctags 5.9 reads the `type` of `import type X from "m"` and `export {
//!   type X }` as a type alias named `X` (and one named `from`); these are imports and
//!   re-exports of a type defined elsewhere ([`type_imports`]).
//! - C and C++: an include guard (`#ifndef X_H` / `#define X_H` around the file) is a
//!   macro to ctags; it names no code, and loci's C++ rules leave it out
//!   ([`include_guards`]).

use std::collections::HashSet;

use loci_index::Lang;
use tree_sitter::Node;

/// (line, name) of every name bound to an object literal in `source`: a declarator
/// (`const x = {..}`), an assignment (`x = {..}`, `a.b.x = {..}`, `a.x[k] = {..}`) or
/// an object's key (`x: {..}`).
pub fn object_literal_names(source: &str) -> HashSet<(u32, String)> {
    let mut parser = loci_index::extract::new_parser(Lang::JavaScript).expect("the grammar");
    let mut out = HashSet::new();
    let Some(tree) = parser.parse(source, None) else {
        return out;
    };
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if let Some(name) = bound_name(node) {
            let text = name
                .utf8_text(source.as_bytes())
                .unwrap_or_default()
                .trim_matches(['"', '\''])
                .to_string();
            out.insert((name.start_position().row as u32 + 1, text));
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    out
}

/// The node naming what `node` binds, when `node` binds an object literal.
fn bound_name(node: Node<'_>) -> Option<Node<'_>> {
    let (name, value) = match node.kind() {
        "variable_declarator" => (node.child_by_field_name("name")?, "value"),
        "assignment_expression" => {
            let left = node.child_by_field_name("left")?;
            let name = match left.kind() {
                "member_expression" => left.child_by_field_name("property")?,
                // `root._attachments[key] = {..}`: ctags names the object indexed.
                "subscript_expression" => {
                    let object = left.child_by_field_name("object")?;
                    match object.kind() {
                        "member_expression" => object.child_by_field_name("property")?,
                        _ => object,
                    }
                }
                _ => left,
            };
            (name, "right")
        }
        "pair" => (node.child_by_field_name("key")?, "value"),
        _ => return None,
    };
    let value = node.child_by_field_name(value)?;
    (value.kind() == "object").then_some(name)
}

/// (line, text) of every token of the import statements and of the export statements
/// that declare nothing (`export { type X } from "m"`) in TypeScript `source`.
pub fn type_imports(source: &str) -> HashSet<(u32, String)> {
    let mut parser = loci_index::extract::new_parser(Lang::TypeScript).expect("the grammar");
    let mut out = HashSet::new();
    let Some(tree) = parser.parse(source, None) else {
        return out;
    };
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let import = node.kind() == "import_statement"
            || (node.kind() == "export_statement"
                && node.child_by_field_name("declaration").is_none());
        if import {
            tokens(node, source, &mut out);
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    out
}

fn tokens(node: Node<'_>, source: &str, out: &mut HashSet<(u32, String)>) {
    if node.child_count() == 0 {
        let text = node.utf8_text(source.as_bytes()).unwrap_or_default();
        out.insert((node.start_position().row as u32 + 1, text.to_string()));
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        tokens(child, source, out);
    }
}

/// (line, name) of the include guard of a C or C++ `source`: its first two lines of code
/// (comments skipped) are `#ifndef NAME` (or `#if !defined(NAME)`) and `#define NAME`
/// with no value. Read from the text: a parse that fails later in the file must not
/// change what a guard is.
pub fn include_guards(source: &str) -> HashSet<(u32, String)> {
    let mut code = Vec::new();
    let mut in_comment = false;
    for (i, line) in source.lines().enumerate() {
        let mut rest = line.trim();
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(end) => {
                        rest = rest[end + 2..].trim();
                        in_comment = false;
                    }
                    None => break,
                }
            }
            if let Some(after) = rest.strip_prefix("/*") {
                rest = after;
                in_comment = true;
                continue;
            }
            if rest.starts_with("//") {
                rest = "";
            }
            break;
        }
        if !in_comment && !rest.is_empty() {
            code.push((i as u32 + 1, rest));
            if code.len() == 2 {
                break;
            }
        }
    }
    let words = |line: &str| -> Vec<String> {
        line.trim_start_matches('#')
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '!'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut out = HashSet::new();
    if let [(_, open), (line, define)] = code[..] {
        let (open, define) = (
            words(open.split("//").next().unwrap_or(open)),
            words(define.split("//").next().unwrap_or(define)),
        );
        let guarded = match open.as_slice() {
            [w, name] if w == "ifndef" => Some(name.clone()),
            [w, defined, name] if w == "if" && defined == "!defined" => Some(name.clone()),
            _ => None,
        };
        if let (Some(name), [w, defined]) = (guarded, define.as_slice())
            && w == "define"
            && *defined == name
        {
            out.insert((line, name));
        }
    }
    out
}
