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
//!   re-exports of a type defined elsewhere ([`type_imports`]); it reads `import { enum
//!   as e }` (zod's `enum`) as an enum named `as`, and `import { class as c }` as a
//!   class `as`, which that rule leaves out too. It also tags as aliases
//!   words of a type that declare nothing: `extends` and the type after it in a
//!   conditional type (`type T = A extends string ? 1 : 2` gives `extends` and `string`),
//!   the operand of `keyof` (`type K = keyof Example` gives `Example`); TypeScript
//!   requires a type alias's name on the line of its `type` keyword, right after it, so
//!   an alias tag whose name does not follow `type` on its line names no alias
//!   ([`names_not_after_type`]). And it tags an interface's construct signature (`new
//!   (x: string): T`) as a method named `new`: a signature of what `new` on a value of
//!   that type does, not a member anyone can call or look up by that name
//!   ([`construct_signatures`]).
//! - Kotlin: ctags 5.9 tags each parameter of a lambda (`{ (_, value) -> ..}`, `{
//!   eventName: String -> ..}`) as a method, and some loop variables (`for (provider in
//!   providers)`): parameters and locals, no functions ([`kotlin_lambda_and_loop_variables`]).
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
    let mut out = HashSet::new();
    walk(Lang::JavaScript, source, |node| {
        if let Some(name) = bound_name(node) {
            let text = name
                .utf8_text(source.as_bytes())
                .unwrap_or_default()
                .trim_matches(['"', '\''])
                .to_string();
            out.insert((name.start_position().row as u32 + 1, text));
        }
        true
    });
    out
}

/// Visits every named node of `source` parsed as `lang`, outer first, and the nodes
/// inside one when `visit` returns true.
fn walk(lang: Lang, source: &str, mut visit: impl FnMut(Node<'_>) -> bool) {
    let mut parser = loci_index::extract::new_parser(lang).expect("the grammar");
    let Some(tree) = parser.parse(source, None) else {
        return;
    };
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if visit(node) {
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }
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
/// that declare nothing (`export { type X } from "m"`, not `export default <value>`) in
/// TypeScript `source`, on every
/// line of its statement: ctags gives the last name of a list that ends its line
/// (`  type X` / `} from "m"`) the line of the token after it.
pub fn type_imports(source: &str) -> HashSet<(u32, String)> {
    let mut out = HashSet::new();
    walk(Lang::TypeScript, source, |node| {
        // `export default function () {..}` (a value) may hold methods ctags tags.
        let import = node.kind() == "import_statement"
            || (node.kind() == "export_statement"
                && node.child_by_field_name("declaration").is_none()
                && node.child_by_field_name("value").is_none());
        if import {
            let mut texts = HashSet::new();
            tokens(node, source, &mut texts);
            for line in node.start_position().row..=node.end_position().row {
                for (_, text) in &texts {
                    out.insert((line as u32 + 1, text.clone()));
                }
            }
        }
        !import
    });
    out
}

/// (line, word) of every identifier-like word of TypeScript `source` that does not
/// follow the keyword `type` (`export type Name<T> = ..`, `declare type Name`; not a
/// property `x.type`, ctags' `instanceof` in `x.type instanceof T`) on its
/// line, and of every word of a line on the next line unless it follows `type` on
/// either: what a type alias tagged on that line cannot be named (ctags gives a word
/// that ends its line, `= keyof Declarations`, the line of the token after it). Read
/// from the text (a broken parse must not change what an alias is); a `type X` in a
/// comment or a string only keeps more tags compared.
pub fn names_not_after_type(source: &str) -> HashSet<(u32, String)> {
    let lines: Vec<Vec<(&str, usize)>> = source.lines().map(words).collect();
    let named: Vec<HashSet<&str>> = source
        .lines()
        .zip(&lines)
        .map(|(line, words)| {
            words
                .windows(2)
                .filter(|w| {
                    w[0].0 == "type"
                        && line[w[0].1 + 4..w[1].1].trim().is_empty()
                        && !line[..w[0].1].trim_end().ends_with('.')
                })
                .map(|w| w[1].0)
                .collect()
        })
        .collect();
    let mut out = HashSet::new();
    for (i, words) in lines.iter().enumerate() {
        // An alias's own name is never left out, on its line or the next (where ctags
        // puts it when it ends its line: `export type Long\n  = ..`).
        let words = words.iter().filter(|(w, _)| !named[i].contains(w));
        for (word, _) in words {
            for (at, named) in named.iter().enumerate().skip(i).take(2) {
                if !named.contains(word) {
                    out.insert((at as u32 + 1, word.to_string()));
                }
            }
        }
    }
    out
}

/// The identifier-like words of `line` (`[A-Za-z_$][A-Za-z0-9_$]*`, other characters
/// of a name too), each with its byte offset.
fn words(line: &str) -> Vec<(&str, usize)> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in line
        .char_indices()
        .chain(std::iter::once((line.len(), ' ')))
    {
        match (start, is_word(c)) {
            (None, true) => start = Some(at),
            (Some(from), false) => {
                if !line[from..].starts_with(|c: char| c.is_ascii_digit()) {
                    out.push((&line[from..at], from));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// (line, `new`) of every construct signature (`new (x: string): T`, `new <T>(): T`) in
/// TypeScript `source`.
pub fn construct_signatures(source: &str) -> HashSet<(u32, String)> {
    let mut out = HashSet::new();
    walk(Lang::TypeScript, source, |node| {
        if node.kind() == "construct_signature" {
            out.insert((node.start_position().row as u32 + 1, "new".to_string()));
        }
        true
    });
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

/// (line, name) of every identifier in a lambda's parameters (`{ a, (b, _): P -> ..}`)
/// and in a `for` loop's variables (`for ((k, v) in map)`) in Kotlin `source`, on the
/// line it is written on.
pub fn kotlin_lambda_and_loop_variables(source: &str) -> HashSet<(u32, String)> {
    let mut out = HashSet::new();
    walk(Lang::Kotlin, source, |node| {
        let variables = node.kind() == "lambda_parameters"
            || (matches!(
                node.kind(),
                "variable_declaration" | "multi_variable_declaration"
            ) && node.parent().is_some_and(|p| p.kind() == "for_statement"));
        if variables {
            tokens(node, source, &mut out);
        }
        !variables
    });
    out
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

#[test]
fn alias_tags_not_named_after_type_are_no_aliases() {
    let source = "export type Q<T> = T extends string ? true : false;\n\
                  type K = keyof Example;\n\
                  declare type\tD = 1; // type of D\n\
                  const type = 1; type\n";
    let left_out = names_not_after_type(source);
    let has = |line: u32, name: &str| left_out.contains(&(line, name.to_string()));
    assert!(has(1, "extends") && has(1, "string") && has(1, "true") && has(1, "T"));
    assert!(!has(1, "Q"), "the alias itself is compared");
    assert!(has(2, "Example") && has(2, "keyof") && !has(2, "K"));
    assert!(!has(3, "D") && has(3, "declare"));
    assert!(has(4, "const"), "`type = 1` names nothing");
    let property = names_not_after_type("ok(T.type instanceof Type, (T.type as any).x)\n");
    assert!(property.contains(&(1, "instanceof".to_string())));
    assert!(property.contains(&(1, "as".to_string())));
    // A word that ends its line, tagged on the next.
    assert!(has(3, "Example") && has(2, "T") && !has(2, "Q"));
    let next = "type B = keyof\n  Declarations\ntype Declarations = 1\n";
    let left_out = names_not_after_type(next);
    // `keyof` tagged on line 2; `B` is the alias on line 1.
    assert!(left_out.contains(&(2, "keyof".to_string())));
    assert!(!left_out.contains(&(1, "B".to_string())) && !left_out.contains(&(2, "B".to_string())));
    let ends_line = "export type Long\n  = 1\n";
    assert!(!names_not_after_type(ends_line).contains(&(2, "Long".to_string())));
    assert!(
        !left_out.contains(&(3, "Declarations".to_string())),
        "the alias on its line"
    );
}

#[test]
fn construct_signatures_are_no_methods() {
    let source = "interface C {\n  new (x: string): C;\n  new <T>(x: T): C;\n  m(): void;\n}\n\
                  class K { new() {} }\n";
    let left_out = construct_signatures(source);
    let lines: std::collections::BTreeSet<u32> = left_out.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines.into_iter().collect::<Vec<_>>(), [2, 3]);
    assert!(left_out.iter().all(|(_, n)| n == "new"));
}

#[test]
fn a_type_import_is_no_alias_on_any_line_of_its_statement() {
    let source =
        "import {\n  a,\n  type B\n} from \"x\"\nexport {\n  type C\n} from \"y\";\ntype D = 1;\n";
    let left_out = type_imports(source);
    // ctags' lines for `B` and `C`: the lines of the `}` after them.
    assert!(left_out.contains(&(4, "B".to_string())));
    assert!(left_out.contains(&(7, "C".to_string())));
    assert!(!left_out.iter().any(|(line, _)| *line == 8));
}

#[test]
fn what_ctags_tags_in_an_import_is_no_definition() {
    let source = "import { enum as e2, TypeOf } from \"zod\";\nimport { class as c } from \"m\";\n\
                  export default class { m() {} }\n";
    let left_out = type_imports(source);
    assert!(left_out.contains(&(1, "as".to_string())) && left_out.contains(&(2, "as".to_string())));
    assert!(
        !left_out.iter().any(|(line, _)| *line == 3),
        "a default export's value is compared"
    );
}

#[test]
fn kotlin_lambda_parameters_and_loop_variables_are_no_methods() {
    let source = "fun f(xs: Map<String, Int>) {\n  xs.forEach { (_, value) -> g(value) }\n  \
                  run { name: String,\n    other -> }\n  fun local(a: Int) = a\n  \
                  for ((k, v) in xs) {}\n  for (i in 0 until 3) { h(i) }\n}\n";
    let left_out = kotlin_lambda_and_loop_variables(source);
    assert!(left_out.contains(&(6, "k".to_string())) && left_out.contains(&(6, "v".to_string())));
    assert!(left_out.contains(&(7, "i".to_string())));
    assert!(!left_out.iter().any(|(_, n)| n == "h" || n == "until"));
    assert!(left_out.contains(&(2, "_".to_string())));
    assert!(left_out.contains(&(2, "value".to_string())));
    assert!(left_out.contains(&(3, "name".to_string())));
    assert!(left_out.contains(&(4, "other".to_string())));
    assert!(
        !left_out
            .iter()
            .any(|(_, n)| n == "f" || n == "local" || n == "g")
    );
}
