//! The shared walker and the collector every language visitor writes into.

use std::num::NonZeroU16 as FieldId;

use tree_sitter::{Node, Tree};

use super::fields::Fields;
use super::nodes::span;
use super::text::{clean_comment, compact};
use super::written::{split_qualified, strip_generics};
use super::{BaseKind, BaseRef, FileFacts, Import, RefKind, Reference, Symbol, SymbolKind};
use crate::budget::Deadline;

/// What the walker does after a visitor looked at a node.
pub(crate) enum Action {
    /// Visit the children.
    Descend,
    /// Do not visit the children.
    Skip,
    /// Visit the children inside the scope of this definition (from [`Collector::def`]).
    Enter(u32),
    /// Visit the children inside a named scope that is not itself a definition
    /// (a Rust `impl Foo` block, a C++ out-of-line `Foo::` prefix).
    EnterNamed(String),
}

/// A language's visitor: looks at one node, records facts, says how to go on.
pub(crate) type Visitor = fn(&mut Collector<'_>, Node<'_>) -> Action;

#[derive(Clone)]
pub(crate) struct Scope {
    name: String,
    symbol: Option<u32>,
}

/// A region of the file to parse again on its own (a Rust macro's tokens), with the
/// scopes it sits in: see [`Collector::defer`].
pub(crate) struct Deferred {
    /// The bytes to parse, in the file's own coordinates.
    pub(crate) range: tree_sitter::Range,
    /// The scopes open where the region is.
    pub(crate) scopes: Vec<Scope>,
    /// Regions inside it to parse instead when it does not parse cleanly (the braced
    /// groups of `cfg_variant! { stable: { .. }, unstable: { .. } }`).
    pub(crate) fallback: Vec<tree_sitter::Range>,
}

/// Accumulates one file's facts and knows the enclosing scopes.
pub(crate) struct Collector<'s> {
    source: &'s str,
    /// When the file's work must stop: the walk looks at it on every node.
    deadline: &'s Deadline,
    separator: &'static str,
    scopes: Vec<Scope>,
    facts: FileFacts,
    /// Scope names that differ from the symbol's name (see [`Collector::def_qualified`]).
    scope_names: std::collections::HashMap<u32, String>,
    /// For each open level of the walk, the siblings visited so far; the last one is the
    /// node being visited. Doc comments above it are read from here: `prev_sibling` is
    /// linear in the siblings before a node, for every definition.
    levels: Vec<Vec<Node<'s>>>,
    /// Emptied levels, reused.
    spare_levels: Vec<Vec<Node<'s>>>,
    /// The field the node being visited fills in its parent.
    field: Option<FieldId>,
    /// The language's `name` field.
    name_field: Option<FieldId>,
    /// Regions to parse again once the walk is over ([`Collector::defer`]).
    deferred: Vec<Deferred>,
    /// Receiver types: what the file says about the types of names (see [`receivers`](super::receivers)).
    types: super::written::Types,
    /// The last type-like definition of each name so far ([`Collector::find_type`]): a
    /// scan of every definition for each method of a type (20,000 methods of one Go
    /// type) took the square of the file's size.
    last_type: rustc_hash::FxHashMap<String, u32>,
    /// The names of the functions and methods defined so far ([`Collector::defines_callable`]).
    callables: rustc_hash::FxHashSet<String>,
}

/// Longest qualifier kept for a reference or base (`a.b(c).d` chains can be long), in bytes.
pub(crate) const MAX_QUALIFIER: usize = 200;
/// Longest signature kept, in bytes; longer heads are cut at a char boundary.
const MAX_SIGNATURE: usize = 240;
/// Longest qualified name made from the enclosing scopes, in bytes (past it the outermost
/// scopes are left out); real code's deepest are a few hundred.
const MAX_QUALIFIED_NAME: usize = 1024;
/// Most open scopes a lookup of the enclosing definition or type looks through, innermost
/// first: one per reference, so input nested thousands of levels deep (`impl A{` repeated,
/// functions in functions) would otherwise cost the square of its depth. Real code
/// nests tens.
const MAX_SCOPES_LOOKED_THROUGH: usize = 256;
/// What stands for the scopes a qualified name leaves out.
const ELIDED_SCOPES: &str = "…";

impl<'s> Collector<'s> {
    pub(crate) fn new(
        source: &'s str,
        separator: &'static str,
        tree: &Tree,
        deadline: &'s Deadline,
    ) -> Self {
        Collector {
            source,
            deadline,
            separator,
            scopes: Vec::new(),
            facts: FileFacts::default(),
            scope_names: std::collections::HashMap::new(),
            levels: Vec::new(),
            spare_levels: Vec::new(),
            field: None,
            name_field: tree.language().field_id_for_name("name"),
            deferred: Vec::new(),
            types: super::written::Types::default(),
            last_type: Default::default(),
            callables: Default::default(),
        }
    }

    /// When the file's work must stop: for visitors and second parses that can run long.
    pub(crate) fn deadline(&self) -> &'s Deadline {
        self.deadline
    }

    /// Asks for `range` to be parsed again after the walk and walked in the scopes open
    /// now: tree-sitter sees a macro's tokens as flat tokens, and parsing them as code
    /// (with the file's own positions, so spans need no mapping) finds what they define
    /// and call.
    pub(crate) fn defer(&mut self, range: tree_sitter::Range, fallback: Vec<tree_sitter::Range>) {
        // Only the scopes a qualified name can show: a copy of every open scope for each
        // of a thousand macros nested a thousand levels deep is the square of the depth.
        let kept = self.scopes_within(MAX_QUALIFIED_NAME);
        let mut scopes = Vec::with_capacity(kept + 1);
        if kept < self.scopes.len() {
            scopes.push(Scope {
                name: ELIDED_SCOPES.to_string(),
                symbol: self.current_symbol(),
            });
        }
        scopes.extend_from_slice(&self.scopes[self.scopes.len() - kept..]);
        self.deferred.push(Deferred {
            range,
            scopes,
            fallback,
        });
    }

    /// The regions deferred so far, leaving none.
    pub(crate) fn take_deferred(&mut self) -> Vec<Deferred> {
        std::mem::take(&mut self.deferred)
    }

    /// Gets ready to walk a deferred region's tree: its scopes, and no level open.
    pub(crate) fn enter_deferred(&mut self, scopes: &[Scope]) {
        self.scopes.clear();
        self.scopes.extend_from_slice(scopes);
        for mut level in self.levels.drain(..) {
            level.clear();
            self.spare_levels.push(level);
        }
        self.field = None;
    }

    /// The node being visited, if the walk is at one.
    fn visiting(&self) -> Option<Node<'s>> {
        self.levels.last().and_then(|level| level.last()).copied()
    }

    /// The kind of `node`'s parent (see [`Collector::parent_of`]).
    pub(crate) fn parent_kind(&self, node: Node<'_>) -> Option<&'static str> {
        self.parent_of(node).map(|p| p.kind())
    }

    /// `node`'s parent, read from the walk's path when `node` is on it (the node being
    /// visited or one of its ancestors): tree-sitter finds a parent by descending from
    /// the root again, a cost that grows with the depth, so asking it for every
    /// definition made nesting quadratic. Else asked of the tree. Extractors ask here,
    /// never `Node::parent`.
    pub(crate) fn parent_of<'t>(&self, node: Node<'t>) -> Option<Node<'t>>
    where
        's: 't,
    {
        for i in (1..self.levels.len()).rev() {
            if self.levels[i].last().is_some_and(|n| n.id() == node.id()) {
                return self.levels[i - 1].last().copied();
            }
        }
        node.parent()
    }

    /// Whether `node` is the `name` of its parent (a definition's own name, not a use).
    pub(crate) fn is_name_field(&self, node: Node<'_>) -> bool {
        match self.visiting() {
            Some(current) if current.id() == node.id() => {
                self.field.is_some() && self.field == self.name_field
            }
            _ => self
                .parent_of(node)
                .and_then(|p| p.field("name"))
                .is_some_and(|n| n.id() == node.id()),
        }
    }

    pub(crate) fn finish(self) -> FileFacts {
        self.facts
    }

    /// The source text of a node ("" if the node cuts a char, which tree-sitter never does on valid UTF-8).
    pub(crate) fn text(&self, node: Node<'_>) -> &'s str {
        self.source
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("")
    }

    /// The source text between two byte offsets, if they are char boundaries.
    pub(crate) fn source_between(&self, from: usize, to: usize) -> Option<&'s str> {
        self.source.get(from..to)
    }

    /// The text of a node's field child, if present.
    pub(crate) fn field_text(&self, node: Node<'_>, field: &'static str) -> Option<&'s str> {
        node.field(field).map(|n| self.text(n))
    }

    /// The innermost enclosing definition, if any (among the innermost
    /// [`MAX_SCOPES_LOOKED_THROUGH`] scopes).
    pub(crate) fn current_symbol(&self) -> Option<u32> {
        self.innermost_scopes().find_map(|s| s.symbol)
    }

    /// The enclosing definitions, innermost first (among the innermost
    /// [`MAX_SCOPES_LOOKED_THROUGH`] scopes).
    pub(crate) fn enclosing_symbols(&self) -> impl Iterator<Item = Option<u32>> + '_ {
        self.innermost_scopes().filter_map(|s| s.symbol).map(Some)
    }

    /// The open scopes, innermost first, as far out as a lookup goes.
    fn innermost_scopes(&self) -> impl Iterator<Item = &Scope> + '_ {
        self.scopes.iter().rev().take(MAX_SCOPES_LOOKED_THROUGH)
    }

    /// The name of the innermost enclosing type (a class, a struct, an `impl` block).
    pub(crate) fn enclosing_type(&self) -> Option<&str> {
        self.innermost_scopes().find_map(|s| match s.symbol {
            None => Some(s.name.as_str()),
            Some(i) => {
                let sym = &self.facts.symbols[i as usize];
                sym.kind.is_type().then_some(sym.name.as_str())
            }
        })
    }

    pub(super) fn types(&self) -> &super::written::Types {
        &self.types
    }

    pub(super) fn types_mut(&mut self) -> &mut super::written::Types {
        &mut self.types
    }

    /// The last definition recorded in this file with this name and a type-like kind.
    pub(crate) fn find_type(&self, name: &str) -> Option<u32> {
        self.last_type.get(name).copied()
    }

    /// Whether this file has defined a function or method of this name so far.
    pub(crate) fn defines_callable(&self, name: &str) -> bool {
        self.callables.contains(name)
    }

    /// The kind of the innermost enclosing definition, if any.
    pub(crate) fn current_kind(&self) -> Option<SymbolKind> {
        self.current_symbol()
            .map(|i| self.facts.symbols[i as usize].kind)
    }

    /// Whether the innermost scope is a type-like container (class, struct, impl block, trait...),
    /// which makes a function defined directly in it a method.
    pub(crate) fn in_type_scope(&self) -> bool {
        match self.scopes.last() {
            Some(Scope {
                symbol: Some(i), ..
            }) => self.facts.symbols[*i as usize].kind.is_type(),
            Some(Scope { symbol: None, .. }) => true,
            None => false,
        }
    }

    /// Records a definition. `name` is what it is called; `body` (if given) is where the
    /// signature stops. The doc comment is taken from the comments right above `node`.
    pub(crate) fn def(
        &mut self,
        node: Node<'_>,
        name: &str,
        kind: SymbolKind,
        body: Option<Node<'_>>,
    ) -> u32 {
        let doc = self.preceding_comments(node);
        self.def_with_doc(node, name, kind, body, doc)
    }

    /// Like [`Collector::def`] with a doc string found by the language itself (a docstring).
    pub(crate) fn def_with_doc(
        &mut self,
        node: Node<'_>,
        name: &str,
        kind: SymbolKind,
        body: Option<Node<'_>>,
        doc: Option<String>,
    ) -> u32 {
        let qualified_name = self.qualified_name(name);
        let signature = self.signature(node, body);
        let returns = matches!(kind, SymbolKind::Function | SymbolKind::Method)
            .then(|| super::written::return_type(&signature))
            .flatten()
            .and_then(|t| match t {
                "Self" => self.enclosing_type().map(str::to_string),
                t => Some(t.to_string()),
            });
        let id = self.facts.symbols.len() as u32;
        if kind.is_type() {
            self.last_type.insert(name.to_string(), id);
        }
        if matches!(kind, SymbolKind::Function | SymbolKind::Method) {
            self.callables.insert(name.to_string());
        }
        self.facts.symbols.push(Symbol {
            name: name.to_string(),
            qualified_name,
            kind,
            signature,
            doc,
            span: span(node),
            parent: self.current_symbol(),
            returns,
            params: None,
            receiver: None,
            param_types: None,
        });
        id
    }

    /// Records the type a definition holds (a constant's declared type), which
    /// resolution reads as it reads a function's return type.
    pub(crate) fn set_returns(&mut self, id: u32, ty: &str) {
        if let Some(symbol) = self.facts.symbols.get_mut(id as usize) {
            symbol.returns = Some(ty.to_string());
        }
    }

    /// `name` under the enclosing scopes, joined with the separator. Scopes that would take
    /// it past [`MAX_QUALIFIED_NAME`] bytes are left out, outermost first, and an `…`
    /// stands for them: a definition nested thousands of levels deep (`mod a{` repeated)
    /// would otherwise cost the square of the depth in time and memory.
    fn qualified_name(&self, name: &str) -> String {
        let kept = self.scopes_within(MAX_QUALIFIED_NAME.saturating_sub(name.len()));
        let mut qualified_name = String::new();
        if kept < self.scopes.len() {
            qualified_name.push_str(ELIDED_SCOPES);
            qualified_name.push_str(self.separator);
        }
        for scope in &self.scopes[self.scopes.len() - kept..] {
            qualified_name.push_str(&scope.name);
            qualified_name.push_str(self.separator);
        }
        qualified_name.push_str(name);
        qualified_name
    }

    /// How many of the innermost scopes fit in `budget` bytes of a qualified name.
    fn scopes_within(&self, budget: usize) -> usize {
        let mut used = 0;
        let mut kept = 0;
        for scope in self.scopes.iter().rev() {
            used += scope.name.len() + self.separator.len();
            if used > budget {
                break;
            }
            kept += 1;
        }
        kept
    }

    /// Records a definition whose name is written with a qualifier (C++ `void Foo::bar() {}`,
    /// Ruby `class A::B`): `qualifier` (as written, in the language's own separator) stands
    /// between the enclosing scopes and `name` in the qualified name and in the scope its
    /// children see, while the symbol's name stays `name`. `parent`, when given, replaces the
    /// enclosing definition as the parent (the class `Foo` when this file defines it).
    pub(crate) fn def_qualified(
        &mut self,
        node: Node<'_>,
        qualifier: &str,
        name: &str,
        kind: SymbolKind,
        body: Option<Node<'_>>,
        parent: Option<u32>,
    ) -> u32 {
        let id = self.def(node, name, kind, body);
        let qualifier = qualifier.trim().trim_end_matches(self.separator).trim();
        if qualifier.is_empty() {
            return id;
        }
        let scoped = format!("{qualifier}{}{name}", self.separator);
        let symbol = &mut self.facts.symbols[id as usize];
        let prefix_len = symbol.qualified_name.len() - name.len();
        symbol.qualified_name.truncate(prefix_len);
        symbol.qualified_name.push_str(&scoped);
        if parent.is_some() {
            symbol.parent = parent;
        }
        self.scope_names.insert(id, scoped);
        id
    }

    /// Sets how many arguments a callable takes (overloads are told apart by it).
    pub(crate) fn set_params(&mut self, id: u32, params: super::Arity) {
        if let Some(symbol) = self.facts.symbols.get_mut(id as usize) {
            symbol.params = Some(params);
        }
    }

    /// Sets a callable's parameter types (see [`super::Symbol::param_types`]).
    pub(crate) fn set_param_types(&mut self, id: u32, types: String) {
        if let Some(symbol) = self.facts.symbols.get_mut(id as usize) {
            symbol.param_types = Some(types);
        }
    }

    /// Sets the argument types of the reference recorded last (see
    /// [`super::Reference::arg_types`]).
    pub(crate) fn set_last_arg_types(&mut self, types: String) {
        if let Some(r) = self.facts.refs.last_mut() {
            r.arg_types = Some(types);
        }
    }

    /// Sets the type an extension function extends (see [`super::Symbol::receiver`]).
    pub(crate) fn set_receiver(&mut self, id: u32, ty: &str) {
        if let Some(symbol) = self.facts.symbols.get_mut(id as usize) {
            symbol.receiver = Some(ty.to_string());
        }
    }

    /// How many references are recorded so far (to tell whether a call was just recorded).
    pub(crate) fn ref_count(&self) -> usize {
        self.facts.refs.len()
    }

    /// Sets the argument count of the reference recorded last (a call just recorded).
    pub(crate) fn set_last_args(&mut self, args: u16) {
        if let Some(r) = self.facts.refs.last_mut() {
            r.args = Some(args);
        }
    }

    /// Sets the receiver type of the reference recorded last (a call on a literal:
    /// `/re/.test(x)` is a `RegExp`'s).
    pub(crate) fn set_last_receiver(&mut self, ty: &str) {
        if let Some(r) = self.facts.refs.last_mut() {
            r.receiver = Some(ty.to_string());
        }
    }

    /// Moves a definition's start back to `node`'s when that is earlier: a definition
    /// written in several declarations (TypeScript's overload signatures before the
    /// implementation) starts at the first.
    pub(crate) fn extend_start(&mut self, id: u32, node: Node<'_>) {
        if let Some(symbol) = self.facts.symbols.get_mut(id as usize)
            && (node.start_byte() as u32) < symbol.span.start_byte
        {
            let from = span(node);
            symbol.span.start_line = from.start_line;
            symbol.span.start_col = from.start_col;
            symbol.span.start_byte = from.start_byte;
        }
    }

    /// Replaces a definition's doc comment (one found above the statement that holds it).
    pub(crate) fn set_doc(&mut self, id: u32, doc: String) {
        if let Some(symbol) = self.facts.symbols.get_mut(id as usize) {
            symbol.doc = Some(doc);
        }
    }

    /// Adds the types of a function's callbacks' parameters to what its `returns` says
    /// (see [`Symbol::returns`](super::Symbol::returns)): `;0:Observable,Subscriber`.
    pub(crate) fn set_callbacks(&mut self, id: u32, callbacks: &str) {
        if let Some(symbol) = self.facts.symbols.get_mut(id as usize) {
            let returns = symbol.returns.take().unwrap_or_default();
            symbol.returns = Some(format!("{returns};{callbacks}"));
        }
    }

    /// Records a call or type use at `node` (the node of the name itself, for its position).
    pub(crate) fn reference(
        &mut self,
        node: Node<'_>,
        name: &str,
        qualifier: Option<&str>,
        kind: RefKind,
    ) {
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        let pos = node.start_position();
        let receiver = qualifier.and_then(|q| self.receiver_of(q));
        self.facts.refs.push(Reference {
            name: name.to_string(),
            // Whitespace collapsed and capped here, whatever the visitor passed.
            qualifier: qualifier
                .map(|q| compact(q, MAX_QUALIFIER))
                .filter(|q| !q.is_empty()),
            kind,
            line: pos.row as u32 + 1,
            col: pos.column as u32 + 1,
            from: self.current_symbol(),
            receiver,
            args: None,
            arg_types: None,
        });
    }

    /// Records one imported name (`name: None` for a whole-module import).
    pub(crate) fn import(
        &mut self,
        node: Node<'_>,
        module: &str,
        name: Option<&str>,
        alias: Option<&str>,
    ) {
        self.facts.imports.push(Import {
            module: module.trim().to_string(),
            name: name.map(|n| n.trim().to_string()),
            alias: alias.map(|a| a.trim().to_string()),
            line: node.start_position().row as u32 + 1,
        });
    }

    /// Records that definition `symbol` extends or implements the type written as `written`
    /// (`Base`, `pkg.Base`, `ns::Base<T>`); the last segment is the name, the rest the qualifier.
    pub(crate) fn base(&mut self, node: Node<'_>, symbol: u32, written: &str, kind: BaseKind) {
        let subject = self.facts.symbols[symbol as usize].name.clone();
        self.base_of(node, Some(symbol), &subject, written, kind);
    }

    /// Like [`Collector::base`] for a deriving type that may be defined in another file
    /// (Rust `impl Trait for Type`, Swift `extension Type: Proto`): `subject` is its name as written.
    pub(crate) fn base_of(
        &mut self,
        node: Node<'_>,
        symbol: Option<u32>,
        subject: &str,
        written: &str,
        kind: BaseKind,
    ) {
        let (qualifier, name) = split_qualified(strip_generics(written));
        let (_, subject) = split_qualified(strip_generics(subject));
        if name.is_empty() || subject.is_empty() {
            return;
        }
        self.facts.bases.push(BaseRef {
            symbol,
            subject: subject.to_string(),
            name: name.to_string(),
            qualifier: qualifier.map(str::to_string),
            kind,
            line: node.start_position().row as u32 + 1,
        });
    }

    /// The head of a declaration on one line: from its start to its body (or its first line).
    fn signature(&self, node: Node<'_>, body: Option<Node<'_>>) -> String {
        let end = match body {
            Some(b) if b.start_byte() > node.start_byte() => b.start_byte(),
            _ => {
                let text = self.text(node);
                node.start_byte() + text.find('\n').unwrap_or(text.len())
            }
        };
        let head = self.source.get(node.start_byte()..end).unwrap_or("");
        compact(head, MAX_SIGNATURE)
            .trim_end_matches(['{', ':', '='])
            .trim_end()
            .to_string()
    }

    /// Contiguous comments ending on the line just above `node` (or above its attributes/decorators).
    pub(crate) fn preceding_comments(&self, node: Node<'_>) -> Option<String> {
        match self.levels.last() {
            Some(level) if level.last().is_some_and(|n| n.id() == node.id()) => {
                let before = &level[..level.len() - 1];
                self.comments_above(node, before.iter().rev().copied())
            }
            _ => self.comments_above(
                node,
                std::iter::successors(node.prev_sibling(), |s| s.prev_sibling()),
            ),
        }
    }

    /// The doc comment made of the comments among `siblings` (nearest first) right above `node`.
    fn comments_above<'t>(
        &self,
        node: Node<'_>,
        siblings: impl Iterator<Item = Node<'t>>,
    ) -> Option<String> {
        let mut lines: Vec<&str> = Vec::new();
        let mut expected_end_row = node.start_position().row;
        for s in siblings {
            let kind = s.kind();
            if kind.contains("comment") {
                if s.end_position().row + 1 < expected_end_row {
                    break;
                }
                // Some grammars end a line comment with its newline (Rust's
                // `line_comment`): joined with newlines, every line would double.
                lines.push(self.text(s).trim_end_matches(['\n', '\r']));
                expected_end_row = s.start_position().row;
            } else if kind.contains("attribute") || kind == "decorator" || kind == "annotation" {
                expected_end_row = s.start_position().row;
            } else {
                break;
            }
        }
        if lines.is_empty() {
            return None;
        }
        lines.reverse();
        let doc = clean_comment(&lines.join("\n"));
        (!doc.is_empty()).then_some(doc)
    }
}

/// Deepest tree level the walk enters. Each open level keeps its nodes so far (for
/// doc comments and parents), about 150 bytes a level: a file of 200k nested braces
/// that parses within its memory limit still took 135 MB more to walk. Real code stays
/// in the hundreds; 2,000 levels of nesting in any language is well within.
pub(crate) const MAX_WALK_DEPTH: usize = 50_000;

/// How a [`walk`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(crate) enum WalkEnd {
    /// Every node was visited.
    Done,
    /// It stopped at a level deeper than [`MAX_WALK_DEPTH`].
    TooDeep,
    /// It stopped because the file's deadline passed.
    OutOfTime,
}

/// Walks the whole tree depth-first, letting `visit` record facts and steer scopes.
/// Anonymous nodes (punctuation, keywords) are not given to `visit`. Stops at a level
/// deeper than [`MAX_WALK_DEPTH`], or once the collector's deadline has passed.
pub(crate) fn walk<'t>(tree: &'t Tree, collector: &mut Collector<'t>, visit: Visitor) -> WalkEnd {
    let mut cursor = tree.walk();
    // One entry per open level: whether entering it pushed a scope.
    let mut pushed: Vec<bool> = Vec::new();
    let mut descend = true;
    collector.levels.push(Vec::new());
    loop {
        if descend {
            if collector.deadline.passed() {
                return WalkEnd::OutOfTime;
            }
            let node = cursor.node();
            if let Some(level) = collector.levels.last_mut() {
                level.push(node);
            }
            collector.field = cursor.field_id();
            let action = if node.is_named() {
                visit(collector, node)
            } else {
                Action::Descend
            };
            let scope = match action {
                Action::Skip => None,
                Action::Descend => Some(None),
                Action::Enter(id) => {
                    let name = match collector.scope_names.get(&id) {
                        Some(name) => name.clone(),
                        None => collector.facts.symbols[id as usize].name.clone(),
                    };
                    Some(Some(Scope {
                        name,
                        symbol: Some(id),
                    }))
                }
                Action::EnterNamed(name) => Some(Some(Scope { name, symbol: None })),
            };
            if let Some(scope) = scope
                && cursor.goto_first_child()
            {
                if pushed.len() >= MAX_WALK_DEPTH {
                    return WalkEnd::TooDeep;
                }
                let has_scope = scope.is_some();
                if let Some(scope) = scope {
                    collector.scopes.push(scope);
                }
                pushed.push(has_scope);
                let level = collector.spare_levels.pop().unwrap_or_default();
                collector.levels.push(level);
                continue;
            }
        }
        if cursor.goto_next_sibling() {
            descend = true;
            continue;
        }
        if !cursor.goto_parent() {
            return WalkEnd::Done;
        }
        if let Some(mut level) = collector.levels.pop() {
            level.clear();
            collector.spare_levels.push(level);
        }
        if pushed.pop() == Some(true) {
            collector.scopes.pop();
        }
        descend = false;
    }
}

#[cfg(test)]
#[path = "collector_tests.rs"]
pub(crate) mod tests;
