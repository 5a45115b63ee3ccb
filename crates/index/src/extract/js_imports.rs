//! JavaScript/TypeScript imports: `import`, `export ... from`, `require()`.

use tree_sitter::Node;

use super::Collector;
use super::fields::Fields;

/// `const m = require('m')` binds the module to `m`; `const { a, b: c } = require('m')`
/// imports `a` and `b` (as `c`); any other use imports the module unnamed.
pub(super) fn required(c: &mut Collector<'_>, call: Node<'_>, module: &str) {
    let target = c
        .parent_of(call)
        .filter(|p| p.kind() == "variable_declarator")
        .and_then(|d| d.field("name"))
        .filter(|n| d_value_is(c, n, call));
    match target {
        Some(name) if name.kind() == "identifier" => {
            let local = c.text(name);
            c.import(call, module, None, Some(local));
        }
        Some(pattern) if pattern.kind() == "object_pattern" => {
            let mut cursor = pattern.walk();
            let props: Vec<Node<'_>> = pattern.named_children(&mut cursor).collect();
            for prop in props {
                match prop.kind() {
                    "shorthand_property_identifier_pattern" => {
                        let name = c.text(prop);
                        c.import(call, module, Some(name), None);
                    }
                    "pair_pattern" => {
                        let key = prop.field("key").map(|k| c.text(k));
                        let value = prop.field("value").filter(|v| v.kind() == "identifier");
                        if let (Some(key), Some(value)) = (key, value) {
                            let local = c.text(value);
                            c.import(call, module, Some(key), Some(local));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => c.import(call, module, None, None),
    }
}

/// Whether the declarator holding `name` has `call` as its value.
pub(super) fn d_value_is(c: &Collector<'_>, name: &Node<'_>, call: Node<'_>) -> bool {
    c.parent_of(*name)
        .and_then(|d| d.field("value"))
        .is_some_and(|v| v.id() == call.id())
}

pub(super) fn first_string_argument(c: &Collector<'_>, call: Node<'_>) -> Option<String> {
    let args = call.field("arguments")?;
    let first = args.named_child(0)?;
    (first.kind() == "string").then(|| unquote(c.text(first)))
}

pub(super) fn unquote(text: &str) -> String {
    text.trim().trim_matches(['"', '\'', '`']).to_string()
}

/// `import d, {a as b} from 'm'`, `import * as ns from 'm'`, `import 'm'`, `import x = require('m')`.
/// A default import is the name `default` bound to its local name.
pub(super) fn import_statement(c: &mut Collector<'_>, node: Node<'_>) {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let module = match node.field("source") {
        Some(source) => unquote(c.text(source)),
        None => match children
            .iter()
            .find(|n| n.kind() == "import_require_clause")
        {
            Some(clause) => clause
                .field("source")
                .map(|s| unquote(c.text(s)))
                .unwrap_or_default(),
            None => return,
        },
    };
    let mut any = false;
    for child in children {
        match child.kind() {
            "import_clause" => {
                let mut cursor = child.walk();
                let parts: Vec<Node<'_>> = child.named_children(&mut cursor).collect();
                for part in parts {
                    any = true;
                    match part.kind() {
                        "identifier" => {
                            let local = c.text(part);
                            c.import(node, &module, Some("default"), Some(local));
                        }
                        "namespace_import" => {
                            let local = part.named_child(0).map(|n| c.text(n));
                            c.import(node, &module, None, local);
                        }
                        "named_imports" => specifiers(c, node, part, &module),
                        _ => {}
                    }
                }
            }
            "import_require_clause" => {
                let local = child
                    .named_child(0)
                    .filter(|n| n.kind() == "identifier")
                    .map(|n| c.text(n));
                c.import(node, &module, None, local);
                any = true;
            }
            _ => {}
        }
    }
    if !any {
        c.import(node, &module, None, None);
    }
}

/// `export { a as b } from 'm'`, `export * from 'm'`, `export * as ns from 'm'`.
pub(super) fn export_from(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(source) = node.field("source") else {
        return;
    };
    let module = unquote(c.text(source));
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let mut any = false;
    for child in children {
        match child.kind() {
            "export_clause" => {
                specifiers(c, node, child, &module);
                any = true;
            }
            "namespace_export" => {
                let local = child.named_child(0).map(|n| unquote(c.text(n)));
                c.import(node, &module, None, local.as_deref());
                any = true;
            }
            _ => {}
        }
    }
    if !any {
        c.import(node, &module, None, None);
    }
}

/// The `{a, b as c}` list of an import or an export.
pub(super) fn specifiers(c: &mut Collector<'_>, stmt: Node<'_>, list: Node<'_>, module: &str) {
    let mut cursor = list.walk();
    let specs: Vec<Node<'_>> = list.named_children(&mut cursor).collect();
    for spec in specs {
        if !matches!(spec.kind(), "import_specifier" | "export_specifier") {
            continue;
        }
        let Some(name) = spec.field("name").map(|n| unquote(c.text(n))) else {
            continue;
        };
        let alias = spec.field("alias").map(|n| unquote(c.text(n)));
        c.import(stmt, module, Some(&name), alias.as_deref());
    }
}
