//! Python: functions (`f = lambda ..` too), methods, classes, module-level UPPER_CASE
//! constants and `type` aliases; calls, annotation type uses, `import`/`from` imports and base classes.

use tree_sitter::Node;

use super::collector::MAX_QUALIFIER;
use super::fields::Fields;
use super::nodes::for_each_descendant;
use super::text::{clean_docstring, compact};
use super::written::strip_generics;
use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
// 2: `x = {}` / `[..]` / `dict(..)` / a string literal give `x` the builtin's type
// (`extract/receivers.rs`), so resolution links none of the workspace's same-named
// methods to `x.get()`.
// 3: `f = lambda ..` outside a class body is the function `f`.
pub(crate) const VERSION: u32 = 3;

/// Indentation levels tree-sitter-python can keep: its scanner saves its stack of
/// indents in tree-sitter's 1 KiB state buffer, two bytes each after a two-byte
/// header, so from level 511 on the stack comes back cut and the parse goes wrong
/// (the deeper definitions turn into `ERROR` nodes). A little margin is kept for the
/// string delimiters the same buffer holds.
pub(crate) const MAX_INDENT_LEVELS: usize = 500;

/// Refuses a file nested deeper than [`MAX_INDENT_LEVELS`] (by the scanner's own
/// measure: a space is 1, a tab 8, `\r` and form feed restart the count; blank and
/// comment lines do not count), so its definitions are not lost silently.
pub(crate) fn check_nesting(source: &str) -> Result<(), super::ExtractError> {
    let mut stack: Vec<usize> = vec![0];
    for line in source.split('\n') {
        let mut width = 0usize;
        let mut first = None;
        for b in line.bytes() {
            match b {
                b' ' => width += 1,
                b'\t' => width += 8,
                b'\r' | b'\x0c' => width = 0,
                other => {
                    first = Some(other);
                    break;
                }
            }
        }
        if matches!(first, None | Some(b'#')) {
            continue;
        }
        while stack.len() > 1 && stack.last().is_some_and(|&top| top > width) {
            stack.pop();
        }
        if stack.last().is_some_and(|&top| width > top) {
            stack.push(width);
            if stack.len() > MAX_INDENT_LEVELS || width > usize::from(u16::MAX) {
                return Err(super::ExtractError::TooComplex {
                    lang: "python",
                    limit: format!(
                        "indentation nested more than {MAX_INDENT_LEVELS} levels deep (or \
                         wider than {} columns): more than tree-sitter-python keeps",
                        u16::MAX
                    ),
                });
            }
        }
    }
    Ok(())
}

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    match node.kind() {
        "function_definition" => {
            let kind = if c.in_type_scope() {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            definition(c, node, kind)
        }
        "class_definition" => definition(c, node, SymbolKind::Class),
        "expression_statement" => {
            if c.current_symbol().is_none() && is_module_level(c, node) {
                constant(c, node);
            }
            Action::Descend
        }
        "type_alias_statement" => {
            if let Some(left) = node.field("left") {
                let name = strip_generics(c.text(left)).to_string();
                if !name.is_empty() {
                    let id = c.def(node, &name, SymbolKind::TypeAlias, None);
                    if let Some(right) = node.field("right") {
                        type_uses(c, right);
                    }
                    let _ = id;
                }
            }
            Action::Skip
        }
        "call" => {
            if let Some(function) = node.field("function") {
                call_target(c, function);
            }
            Action::Descend
        }
        "type" => {
            type_uses(c, node);
            Action::Skip
        }
        "import_statement" => {
            import_names(c, node, None);
            Action::Skip
        }
        "import_from_statement" => {
            let module = node.field("module_name").map(|m| compact(c.text(m), 400));
            let module = module.unwrap_or_default();
            import_names(c, node, Some(&module));
            Action::Skip
        }
        "future_import_statement" => {
            import_names(c, node, Some("__future__"));
            Action::Skip
        }
        "typed_parameter" | "typed_default_parameter" | "assignment" => {
            super::receivers::python(c, node);
            if node.kind() == "assignment"
                && let Some(action) = class_member(c, node).or_else(|| lambdas(c, node))
            {
                return action;
            }
            Action::Descend
        }
        _ => Action::Descend,
    }
}

/// A `def` or `class`: its docstring (or the comments above it, above its decorators),
/// its bases, then its body inside its scope.
fn definition(c: &mut Collector<'_>, node: Node<'_>, kind: SymbolKind) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let body = node.field("body");
    let colon = head_end(node);
    let doc = body.and_then(|b| docstring(c, b)).or_else(|| {
        let outer = c
            .parent_of(node)
            .filter(|p| p.kind() == "decorated_definition")
            .unwrap_or(node);
        c.preceding_comments(outer)
    });
    let id = c.def_with_doc(node, name, kind, colon.or(body), doc);
    if kind == SymbolKind::Class
        && let Some(supers) = node.field("superclasses")
    {
        let mut cursor = supers.walk();
        for arg in supers.named_children(&mut cursor) {
            // `metaclass=M`, `**kw` and `*bases` are not base classes.
            if matches!(arg.kind(), "identifier" | "attribute" | "subscript") {
                let written = compact(c.text(arg), MAX_QUALIFIER);
                c.base(arg, id, &written, BaseKind::Inherits);
            }
        }
    }
    Action::Enter(id)
}

/// The `:` that ends a `def`/`class` head (comments may sit between it and the body).
fn head_end(node: Node<'_>) -> Option<Node<'_>> {
    let body = node.field("body")?;
    let mut colon = None;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.start_byte() >= body.start_byte() {
            break;
        }
        if child.kind() == ":" {
            colon = Some(child);
        }
    }
    colon
}

/// The string literal that opens a block, cleaned and dedented like `inspect.cleandoc`.
fn docstring(c: &Collector<'_>, body: Node<'_>) -> Option<String> {
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let string = first.named_child(0)?;
    if string.kind() != "string" && string.kind() != "concatenated_string" {
        return None;
    }
    let doc = dedent(&clean_docstring(c.text(string)));
    (!doc.is_empty()).then_some(doc)
}

/// Removes the common indentation of every line after the first.
fn dedent(doc: &str) -> String {
    let indent = doc
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(doc.len());
    for (i, line) in doc.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(line.get(indent..).unwrap_or(line.trim_start()));
        } else {
            out.push_str(line);
        }
    }
    out
}

fn is_module_level(c: &Collector<'_>, node: Node<'_>) -> bool {
    c.parent_of(node).is_some_and(|p| p.kind() == "module")
}

/// `NAME = ...` or `NAME: T = ...` at module level, with an UPPER_CASE name.
fn constant(c: &mut Collector<'_>, stmt: Node<'_>) {
    let Some(assignment) = stmt.named_child(0).filter(|n| n.kind() == "assignment") else {
        return;
    };
    let Some(left) = assignment
        .field("left")
        .filter(|l| l.kind() == "identifier")
    else {
        return;
    };
    let name = c.text(left);
    let upper = name.chars().any(|ch| ch.is_ascii_uppercase())
        && name
            .chars()
            .all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_');
    if upper {
        c.def(stmt, name, SymbolKind::Constant, None);
    }
}

/// `m = lambda ..: ..` or `m = f` (`f` a function of this file) in a class body: a
/// method `Class.m`, so that `obj.m()` reaches it.
fn class_member(c: &mut Collector<'_>, assignment: Node<'_>) -> Option<Action> {
    if c.current_kind() != Some(SymbolKind::Class) {
        return None;
    }
    let left = assignment
        .field("left")
        .filter(|l| l.kind() == "identifier")?;
    let right = assignment.field("right")?;
    let stmt = c
        .parent_of(assignment)
        .filter(|p| p.kind() == "expression_statement")
        .unwrap_or(assignment);
    let name = c.text(left);
    let body = match right.kind() {
        "lambda" => right.field("body"),
        "identifier" if c.defines_callable(c.text(right)) => None,
        _ => return None,
    };
    let id = c.def(stmt, name, SymbolKind::Method, body);
    Some(Action::Enter(id))
}

/// `f = lambda x: ..` outside a class body: a function `f`, as `def f(x)` would be (a
/// JavaScript `const f = (x) => ..` is one too); `f, g = lambda: 1, lambda: 2` defines
/// both.
fn lambdas(c: &mut Collector<'_>, assignment: Node<'_>) -> Option<Action> {
    let left = assignment.field("left")?;
    let right = assignment.field("right")?;
    if left.kind() == "identifier" && right.kind() == "lambda" {
        let stmt = c
            .parent_of(assignment)
            .filter(|p| p.kind() == "expression_statement")
            .unwrap_or(assignment);
        let id = c.def(
            stmt,
            c.text(left),
            SymbolKind::Function,
            right.field("body"),
        );
        return Some(Action::Enter(id));
    }
    if left.kind() != "pattern_list" || right.kind() != "expression_list" {
        return None;
    }
    let names = super::nodes::named_children(left);
    let values = super::nodes::named_children(right);
    if names.len() != values.len() {
        return None;
    }
    for (name, value) in names.into_iter().zip(values) {
        if name.kind() == "identifier" && value.kind() == "lambda" {
            c.def(
                value,
                c.text(name),
                SymbolKind::Function,
                value.field("body"),
            );
        }
    }
    None
}

fn call_target(c: &mut Collector<'_>, function: Node<'_>) {
    match function.kind() {
        "identifier" => {
            let name = c.text(function);
            c.reference(function, name, None, RefKind::Call);
        }
        "attribute" => {
            let Some(attr) = function.field("attribute") else {
                return;
            };
            let qualifier = function.field("object").map(|o| c.text(o));
            let name = c.text(attr);
            c.reference(attr, name, qualifier, RefKind::Call);
        }
        _ => {}
    }
}

/// Every type name inside an annotation: `Foo`, `mod.Foo`, `Optional[Foo]`, `A | B`.
fn type_uses(c: &mut Collector<'_>, node: Node<'_>) {
    if node.kind() == "identifier" {
        let name = c.text(node);
        c.reference(node, name, None, RefKind::TypeUse);
        return;
    }
    let mut found: Vec<(Node<'_>, Option<Node<'_>>)> = Vec::new();
    for_each_descendant(node, |n| match n.kind() {
        "identifier" => {
            found.push((n, None));
            false
        }
        "attribute" => {
            if let Some(attr) = n.field("attribute") {
                found.push((attr, n.field("object")));
            }
            false
        }
        // Forward references in strings, keyword arguments of `Annotated[...]`.
        "string" | "keyword_argument" | "call" => false,
        _ => true,
    });
    for (name_node, object) in found {
        let name = c.text(name_node);
        let qualifier = object.map(|o| c.text(o));
        c.reference(name_node, name, qualifier, RefKind::TypeUse);
    }
}

/// `import a.b as c, d` (module `None`) or `from m import x as y, z` / `from m import *`.
fn import_names(c: &mut Collector<'_>, stmt: Node<'_>, from: Option<&str>) {
    let mut cursor = stmt.walk();
    let names: Vec<Node<'_>> = stmt.children_by_field_name("name", &mut cursor).collect();
    for name in names {
        let (written, alias) = match name.kind() {
            "aliased_import" => {
                let Some(inner) = name.field("name") else {
                    continue;
                };
                (c.text(inner), c.field_text(name, "alias"))
            }
            _ => (c.text(name), None),
        };
        match from {
            Some(module) => c.import(stmt, module, Some(written), alias),
            None => c.import(stmt, written, None, alias),
        }
    }
    if let Some(module) = from {
        let mut cursor = stmt.walk();
        let wildcard = stmt
            .named_children(&mut cursor)
            .any(|n| n.kind() == "wildcard_import");
        if wildcard {
            c.import(stmt, module, None, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::{SymbolKind, extract};

    #[test]
    fn decorated_definitions_start_at_their_def_line_and_keep_their_docstring() {
        let src = "# above\n@property\ndef f():\n    \"\"\"Doc.\n\n    More.\n    \"\"\"\n";
        let facts = extract(Lang::Python, src).unwrap();
        let f = &facts.symbols[0];
        assert_eq!(
            (f.kind, f.span.start_line, f.doc.as_deref()),
            (SymbolKind::Function, 3, Some("Doc.\n\nMore."))
        );
        assert_eq!(f.signature, "def f()");
    }
}
