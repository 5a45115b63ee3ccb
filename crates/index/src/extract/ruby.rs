//! Ruby: modules, classes, `def` and `def self.x`, constants, calls, `require` and mixins.
//!
//! Rules:
//! - `module M` is a Module, `class C` a Class; `class A::B` is named `B` and qualified
//!   `A::B`; `class C < Base` records an Inherits base;
//! - `def` directly inside a class or module (or its `class << self`) is a Method, any
//!   other `def` a Function; `def self.x` is always a Method;
//! - `include M`, `extend M` and `prepend M` inside a class or module are Implements bases
//!   (mixins are the nearest Ruby has to implementing an interface);
//! - `FOO = ..` outside methods is a Constant;
//! - calls: `m(..)`, `obj.m` (qualifier `obj`), `A::B.m` (qualifier `A::B`); a bare
//!   identifier standing alone as a statement or a `#{..}` interpolation is recorded as a
//!   call (Ruby cannot tell `foo` the method call from `foo` the variable without scope
//!   analysis; the resolver only links names that are defined); `Foo.new(..)` is a call
//!   to `Foo`;
//! - `require "x"` / `require_relative "x"` / `load "x"` import module `x` (the string as written).

use tree_sitter::Node;

use super::fields::Fields;
use super::nodes::named_children;
use super::written::split_qualified;

use super::{Action, BaseKind, Collector, RefKind, SymbolKind};

/// Joins scopes in qualified names.
pub(crate) const SEPARATOR: &str = "::";

/// The version of these rules (see `version.rs`): bump it when they change what a file gives.
pub(crate) const VERSION: u32 = 1;

pub(crate) fn visit(c: &mut Collector<'_>, node: Node<'_>) -> Action {
    match node.kind() {
        "module" => container(c, node, SymbolKind::Module),
        "class" => container(c, node, SymbolKind::Class),
        "method" => {
            let kind = if in_container(c) {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            method(c, node, kind)
        }
        "singleton_method" => method(c, node, SymbolKind::Method),
        "assignment" => {
            constant(c, node);
            Action::Descend
        }
        "call" => {
            call(c, node);
            Action::Descend
        }
        // A bare identifier standing as a statement is (most likely) a call without arguments.
        "program" | "body_statement" | "then" | "else" | "do" | "begin" | "ensure"
        | "interpolation" => {
            for statement in named_children(node) {
                if statement.kind() == "identifier" {
                    let name = c.text(statement);
                    c.reference(statement, name, None, RefKind::Call);
                }
            }
            Action::Descend
        }
        "identifier" => Action::Skip,
        _ => Action::Descend,
    }
}

fn container(c: &mut Collector<'_>, node: Node<'_>, kind: SymbolKind) -> Action {
    let Some(name_node) = node.field("name") else {
        return Action::Descend;
    };
    let written: String = c.text(name_node).split_whitespace().collect();
    let (qualifier, name) = split_scope(&written);
    let body = node.field("body");
    let id = match qualifier {
        Some(q) => c.def_qualified(node, q, name, kind, body, None),
        None => c.def(node, name, kind, body),
    };
    if let Some(base) = node.field("superclass").and_then(|s| s.named_child(0)) {
        let written = c.text(base);
        c.base(base, id, written, BaseKind::Inherits);
    }
    Action::Enter(id)
}

fn method(c: &mut Collector<'_>, node: Node<'_>, kind: SymbolKind) -> Action {
    let Some(name) = c.field_text(node, "name") else {
        return Action::Descend;
    };
    let body = node.field("body");
    let id = c.def(node, name, kind, body);
    Action::Enter(id)
}

/// Whether a `def` here defines a method: directly in a class or module body.
fn in_container(c: &Collector<'_>) -> bool {
    matches!(
        c.current_kind(),
        Some(SymbolKind::Class | SymbolKind::Module)
    )
}

/// `MAX = 3` outside any method.
fn constant(c: &mut Collector<'_>, node: Node<'_>) {
    if matches!(
        c.current_kind(),
        Some(SymbolKind::Method | SymbolKind::Function)
    ) {
        return;
    }
    if let Some(left) = node.field("left").filter(|l| l.kind() == "constant") {
        let name = c.text(left).to_string();
        c.def(node, &name, SymbolKind::Constant, None);
    }
}

fn call(c: &mut Collector<'_>, node: Node<'_>) {
    let Some(method) = node.field("method") else {
        return;
    };
    let name = c.text(method);
    let receiver = node.field("receiver");
    match (receiver, name) {
        (None, "require" | "require_relative" | "load") => {
            if let Some(module) = first_string_argument(c, node) {
                c.import(node, &module, None, None);
            }
        }
        (None, "include" | "extend" | "prepend") if in_container(c) => {
            let Some(id) = c.current_symbol() else { return };
            let Some(args) = node.field("arguments") else {
                return;
            };
            for arg in named_children(args) {
                if matches!(arg.kind(), "constant" | "scope_resolution") {
                    let written = c.text(arg);
                    c.base(arg, id, written, BaseKind::Implements);
                }
            }
        }
        // `Foo.new(..)` instantiates `Foo`.
        (Some(receiver), "new") if matches!(receiver.kind(), "constant" | "scope_resolution") => {
            let written: String = c.text(receiver).split_whitespace().collect();
            let (qualifier, class) = split_qualified(&written);
            c.reference(receiver, class, qualifier, RefKind::Call);
        }
        (receiver, _) => {
            let qualifier = receiver.map(|r| c.text(r));
            c.reference(method, name, qualifier, RefKind::Call);
        }
    }
}

/// The content of the first argument when it is a plain string: `require "a/b"` → `a/b`.
fn first_string_argument(c: &Collector<'_>, call: Node<'_>) -> Option<String> {
    let args = call.field("arguments")?;
    let first = args.named_child(0)?;
    if first.kind() != "string" {
        return None;
    }
    let parts = named_children(first);
    if parts.iter().any(|p| p.kind() != "string_content") {
        return None; // interpolated
    }
    Some(parts.iter().map(|p| c.text(*p)).collect())
}

/// `A::B::C` → (`Some("A::B")`, `"C"`); `::Top` → (`None`, `"Top"`).
fn split_scope(written: &str) -> (Option<&str>, &str) {
    match written.rfind("::") {
        Some(i) => {
            let q = written[..i].trim();
            (Some(q).filter(|q| !q.is_empty()), written[i + 2..].trim())
        }
        None => (None, written.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lang;
    use crate::extract::extract;

    fn defs(src: &str) -> Vec<(String, &'static str, Option<String>)> {
        let facts = extract(Lang::Ruby, src).unwrap();
        let parent = |p: Option<u32>| p.map(|p| facts.symbols[p as usize].qualified_name.clone());
        facts
            .symbols
            .iter()
            .map(|s| (s.qualified_name.clone(), s.kind.name(), parent(s.parent)))
            .collect()
    }

    #[test]
    fn defs_are_methods_in_classes_and_modules_only() {
        let src = "def top; end\nmodule M\n  def helper; end\n  class A::B < Base\n    def self.make; end\n    class << self\n      def other; end\n    end\n    def run\n      def inner; end\n    end\n  end\nend\n";
        let m = Some("M".to_string());
        let b = Some("M::A::B".to_string());
        assert_eq!(
            defs(src),
            vec![
                ("top".into(), "function", None),
                ("M".into(), "module", None),
                ("M::helper".into(), "method", m.clone()),
                ("M::A::B".into(), "class", m),
                ("M::A::B::make".into(), "method", b.clone()),
                ("M::A::B::other".into(), "method", b.clone()),
                ("M::A::B::run".into(), "method", b),
                (
                    "M::A::B::run::inner".into(),
                    "function",
                    Some("M::A::B::run".into())
                ),
            ]
        );
    }

    #[test]
    fn mixins_are_implements_and_new_calls_the_class() {
        let src = "class A\n  include Comparable\n  extend Mod::Helpers\n  def x; Foo::Bar.new(1); end\nend\n";
        let facts = extract(Lang::Ruby, src).unwrap();
        let bases: Vec<(&str, Option<&str>, BaseKind)> = facts
            .bases
            .iter()
            .map(|b| (b.name.as_str(), b.qualifier.as_deref(), b.kind))
            .collect();
        assert_eq!(
            bases,
            vec![
                ("Comparable", None, BaseKind::Implements),
                ("Helpers", Some("Mod"), BaseKind::Implements)
            ]
        );
        let call = facts.refs.iter().find(|r| r.name == "Bar").unwrap();
        assert_eq!(
            (call.qualifier.as_deref(), call.kind),
            (Some("Foo"), RefKind::Call)
        );
    }
}
