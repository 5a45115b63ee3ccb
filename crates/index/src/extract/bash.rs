//! Bash: functions, commands and `source`.
//!
//! Rules:
//! - `function f { .. }`, `function f() { .. }` and `f() { .. }` are Functions (a function
//!   defined inside another is qualified `outer.inner`, though Bash functions are global);
//! - every command name is a Call (`ls`, `grep` and builtins included): the resolver links
//!   only those that name a defined function; a command name that is not a plain word
//!   (`"$cmd"`, `$(..)`) is not recorded;
//! - `source path` and `. path` import module = the path as written, quotes removed
//!   (`"$DIR/lib.sh"` → `$DIR/lib.sh`); they are not calls.

use tree_sitter::Node;

use super::fields::Fields;
use super::{Action, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = ".";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 1;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    match node.kind() {
        "function_definition" => {
            let Some(name) = c.field_text(node, "name") else {
                return Action::Descend;
            };
            let body = node.field("body");
            let id = c.def(node, name, SymbolKind::Function, body);
            Action::Enter(id)
        }
        "command" => {
            command(c, node);
            Action::Descend
        }
        "command_name" => Action::Skip, // recorded with its command
        _ => Action::Descend,
    }
}

fn command(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(name_node) = node.field("name") else {
        return;
    };
    let Some(word) = name_node.named_child(0).filter(|w| w.kind() == "word") else {
        return;
    };
    let name = c.text(word);
    if matches!(name, "source" | ".") {
        let mut cursor = node.walk();
        let path = node.children_by_field_name("argument", &mut cursor).next();
        if let Some(path) = path {
            let module = c.text(path).trim().trim_matches(['"', '\'']);
            if !module.is_empty() {
                c.import(node, module, None, None);
            }
        }
        return;
    }
    c.reference(word, name, None, RefKind::Call);
}

#[cfg(test)]
mod tests {
    use crate::Lang;
    use crate::extract::extract;

    #[test]
    fn every_command_is_a_call_and_source_is_an_import() {
        let src = "#!/bin/bash\nsource ./lib.sh\n. \"$DIR/common.sh\"\n# Greets.\nfunction greet {\n  echo hi\n  helper \"$@\"\n}\nhelper() { x=$(compute 1); }\ngreet world\n";
        let facts = extract(Lang::Bash, src).unwrap();
        let defs: Vec<(&str, Option<&str>)> = facts
            .symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.doc.as_deref()))
            .collect();
        assert_eq!(defs, vec![("greet", Some("Greets.")), ("helper", None)]);
        let calls: Vec<(&str, Option<u32>)> = facts
            .refs
            .iter()
            .map(|r| (r.name.as_str(), r.from))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("echo", Some(0)),
                ("helper", Some(0)),
                ("compute", Some(1)),
                ("greet", None)
            ]
        );
        let imports: Vec<&str> = facts.imports.iter().map(|i| i.module.as_str()).collect();
        assert_eq!(imports, vec!["./lib.sh", "$DIR/common.sh"]);
    }
}
