//! Turns one source file into facts: definitions, references, imports and bases.
//!
//! Each language is one module with a `visit` function that looks at a syntax
//! node and tells the shared [`walk`](collector::walk) what it is. The walker
//! keeps the scope stack, so qualified names, parents, signatures and doc
//! comments come out the same way for every language. Adding a language is
//! adding a module here, a grammar in [`Lang::grammar`](crate::Lang::grammar)
//! and a fixture in `tests/languages/`.

mod bash;
mod c;
mod c_macros;
mod collector;
mod cpp;
pub(crate) mod cpp_args;
mod csharp;
mod csharp_directives;
mod embedded;
mod fields;
mod go;
mod include_guard;
mod java;
mod javascript;
mod js_assigned;
mod js_bases;
mod js_imports;
mod js_recover;
mod kotlin;
pub(crate) mod kotlin_args;
mod kotlin_syntax;
mod node_text;
mod nodes;
mod order;
mod parser;
mod php;
mod python;
mod receivers;
mod receivers_cpp;
mod receivers_cs;
mod receivers_js;
mod receivers_kotlin;
mod ruby;
mod rust;
mod rust_tokens;
mod swift;
mod text;
mod version;
mod written;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Lang;

use crate::budget::{Deadline, FileBudget};
pub(crate) use collector::{Action, Collector, WalkEnd, walk};
pub use order::in_document_order;
pub use parser::new_parser;
pub(crate) use version::is_outdated;
pub use version::version;
pub(crate) use written::split_qualified;

/// Everything one file says about the code graph, before resolution.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct FileFacts {
    /// Definitions, parents before children.
    pub symbols: Vec<Symbol>,
    /// Calls and type uses, in source order.
    pub refs: Vec<Reference>,
    /// Import statements, one entry per imported name.
    pub imports: Vec<Import>,
    /// Base classes, implemented interfaces and traits.
    pub bases: Vec<BaseRef>,
}

#[cfg(test)]
impl FileFacts {
    /// (qualified name, kind) of every definition, in order: what most extractor tests check.
    pub(crate) fn qualified_kinds(&self) -> Vec<(&str, &str)> {
        self.symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.kind.name()))
            .collect()
    }

    /// `name/arity` of every method with a recorded arity (`add/1+`), in order.
    pub(crate) fn method_arities(&self) -> Vec<String> {
        self.symbols
            .iter()
            .filter(|s| s.kind == SymbolKind::Method)
            .filter_map(|s| Some(format!("{}/{}", s.name, s.params?.to_text())))
            .collect()
    }

    /// `name(arguments)` of every call with a recorded count (`add(2)`), in order.
    pub(crate) fn call_arguments(&self) -> Vec<String> {
        self.refs
            .iter()
            .filter(|r| r.kind == RefKind::Call)
            .filter_map(|r| Some(format!("{}({})", r.name, r.args?)))
            .collect()
    }

    /// (deriving type, base, kind) of every base, in order.
    pub(crate) fn bases_by_subject(&self) -> Vec<(&str, &str, BaseKind)> {
        self.bases
            .iter()
            .map(|b| (b.subject.as_str(), b.name.as_str(), b.kind))
            .collect()
    }
}

/// What kind of thing a definition is. Stored as its [`SymbolKind::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// A free function.
    Function,
    /// A function defined inside a class, struct, impl, trait or interface.
    Method,
    /// A class.
    Class,
    /// A struct (or C union).
    Struct,
    /// An enum.
    Enum,
    /// A Rust trait (or Swift protocol, PHP trait).
    Trait,
    /// An interface.
    Interface,
    /// A type alias or typedef.
    TypeAlias,
    /// A module, namespace or package.
    Module,
    /// A constant or static.
    Constant,
    /// A macro definition.
    Macro,
    /// A data member of a class or struct (C++), recorded with its declared type so
    /// that `obj.field.m()` reaches that type's `m` from any file.
    Field,
}

impl SymbolKind {
    /// The stable name stored in the index and accepted by `--kind`.
    pub fn name(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Trait => "trait",
            SymbolKind::Interface => "interface",
            SymbolKind::TypeAlias => "type_alias",
            SymbolKind::Module => "module",
            SymbolKind::Constant => "constant",
            SymbolKind::Macro => "macro",
            SymbolKind::Field => "field",
        }
    }

    /// Every kind, for validating `--kind`.
    pub const ALL: [SymbolKind; 12] = [
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::Trait,
        SymbolKind::Interface,
        SymbolKind::TypeAlias,
        SymbolKind::Module,
        SymbolKind::Constant,
        SymbolKind::Macro,
        SymbolKind::Field,
    ];

    /// Parses a stored or user-given kind name.
    pub fn from_name(name: &str) -> Option<SymbolKind> {
        SymbolKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether a symbol of this kind can be the target of a call edge.
    pub fn is_callable(self) -> bool {
        matches!(
            self,
            SymbolKind::Function
                | SymbolKind::Method
                | SymbolKind::Macro
                | SymbolKind::Class
                | SymbolKind::Struct
        )
    }

    /// Whether a symbol of this kind can be a base in an inheritance edge.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Trait
                | SymbolKind::Interface
                | SymbolKind::TypeAlias
        )
    }
}

/// Line and byte extent of a node; lines and columns are 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Span {
    /// First line (1-based).
    pub start_line: u32,
    /// First column (1-based, in bytes).
    pub start_col: u32,
    /// Last line (1-based, inclusive).
    pub end_line: u32,
    /// Byte offset of the first byte.
    pub start_byte: u32,
    /// Byte offset one past the last byte.
    pub end_byte: u32,
}

/// A definition found in a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Symbol {
    /// The name as written (`parse`).
    pub name: String,
    /// Enclosing scopes and the name, joined with the language's separator
    /// (`Parser::parse`, `pkg.Class.method`).
    pub qualified_name: String,
    /// What it is.
    pub kind: SymbolKind,
    /// The declaration's head on one line, whitespace collapsed, without the body.
    pub signature: String,
    /// The doc comment or docstring, comment markers stripped.
    pub doc: Option<String>,
    /// Where the whole definition is.
    pub span: Span,
    /// Index in [`FileFacts::symbols`] of the enclosing definition.
    pub parent: Option<u32>,
    /// For a function or method, the name of the type it returns when its signature
    /// says it plainly (`-> Engine`, `*Engine`, `(*Engine, error)`, `): Engine`):
    /// `x := New()` gives `x` that type. A TypeScript function that takes callbacks
    /// with typed parameters adds them after a `;`, each as `<argument>:<types>`
    /// (`OperatorFunction;0:Observable,Subscriber` for `operate(init: (source:
    /// Observable<T>, subscriber: Subscriber<R>) => void): OperatorFunction<T, R>`), so
    /// the untyped arrow function a call passes gets its parameters typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returns: Option<String>,
    /// For a callable of a language with overloads by arity (Java, C++, Kotlin, C#), how
    /// many arguments it takes: a call then reaches only the overloads its count fits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<Arity>,
    /// For a Kotlin extension function (`fun KType.asTypeName()`), the name of the type it
    /// extends (`KType`; none for a type parameter, `fun <T> T.also()`): a call on a
    /// receiver of known type reaches that type's extensions, not every one of the name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    /// For a Kotlin callable, the types of its parameters as written, comma-separated
    /// ([`kotlin_args`]: `String,CodeBlock?,*Any,->`), so that overloads of one arity are
    /// told apart by the types a call passes. Stored after the arity in `symbols.params`
    /// (`2(String,CodeBlock?)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param_types: Option<String>,
}

/// How many arguments a callable takes: `fixed` parameters, and any number more when
/// its last one is variadic (Java's `String... rest` takes `fixed` = the ones before it).
/// Stored as text in `symbols.params`: `2`, or `1+` for one fixed and a variadic one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Arity {
    /// Parameters that must be passed.
    pub fixed: u16,
    /// Whether any number of arguments may follow them.
    pub variadic: bool,
}

impl Arity {
    /// Whether a call with `args` arguments fits.
    pub fn accepts(self, args: u16) -> bool {
        args == self.fixed || (self.variadic && args > self.fixed)
    }

    /// The stored text: `2`, `1+`.
    pub fn to_text(self) -> String {
        if self.variadic {
            format!("{}+", self.fixed)
        } else {
            self.fixed.to_string()
        }
    }

    /// Reads the stored text back (`None` for anything else); the parameter types that
    /// may follow in parentheses ([`Arity::types_in`]) are left out.
    pub fn parse(text: &str) -> Option<Arity> {
        let text = text.split_once('(').map_or(text, |(arity, _)| arity);
        let (digits, variadic) = match text.strip_suffix('+') {
            Some(d) => (d, true),
            None => (text, false),
        };
        Some(Arity {
            fixed: digits.parse().ok()?,
            variadic,
        })
    }
}

impl Arity {
    /// The stored text with the parameter types after it: `2(String,Int)`, or the arity
    /// alone when there are none.
    pub fn to_text_with(self, types: Option<&str>) -> String {
        match types {
            Some(t) => format!("{}({t})", self.to_text()),
            None => self.to_text(),
        }
    }

    /// The parameter types of a stored text (`String,Int` of `2(String,Int)`).
    pub fn types_in(text: &str) -> Option<&str> {
        text.split_once('(')?.1.strip_suffix(')')
    }
}

/// Whether a reference calls something or names a type. Stored by variant position in
/// each file's references blob ([`crate::stored_refs`]): add variants at the end only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// A call or instantiation: `f()`, `obj.m()`, `new T()`, `T::new()`.
    Call,
    /// A use of a type name in a signature, annotation or expression.
    TypeUse,
    /// A macro invocation (Rust `name!(..)`): a call that only a macro definition can answer.
    Macro,
}

impl RefKind {
    /// The stable name stored in the index.
    pub fn name(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::TypeUse => "type_use",
            RefKind::Macro => "macro",
        }
    }
}

/// A use of a name, to be resolved to a definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reference {
    /// The last segment of the name (`bar` in `foo::bar()` or `obj.bar()`).
    pub name: String,
    /// What stood before it, as written (`foo`, `self`, `obj`, `a.b`), if anything.
    pub qualifier: Option<String>,
    /// Call or type use.
    pub kind: RefKind,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (bytes).
    pub col: u32,
    /// Index in [`FileFacts::symbols`] of the innermost enclosing definition.
    pub from: Option<u32>,
    /// The type of the qualifier, when the file says it (`x` in `x.m()` after `let x =
    /// Engine::new()`, a parameter `x: &Engine`, a Go receiver `(e *Engine)`): the name
    /// of the type (`Engine`), so that only its members (and its bases') are linked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    /// For a call in a language whose overloads differ by arity (Java, C++, Kotlin, C#), how many
    /// arguments it passes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<u16>,
    /// For a Kotlin call, the types of its arguments where the file says them
    /// ([`kotlin_args`]: `String,,KClass`, empty where unknown), to tell overloads of
    /// one arity apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arg_types: Option<String>,
}

/// One imported name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Import {
    /// The module path as written (`crate::store`, `os.path`, `./util`, `fmt`, `<stdio.h>` → `stdio.h`).
    pub module: String,
    /// The imported item, or `None` when the whole module is imported.
    pub name: Option<String>,
    /// The local name it is bound to, when renamed.
    pub alias: Option<String>,
    /// 1-based line.
    pub line: u32,
}

/// Whether a base is extended or implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseKind {
    /// `class A(B)`, `class A extends B`, `struct A : B`.
    Inherits,
    /// `implements I`, `impl Trait for T`, protocol conformance.
    Implements,
}

/// A base type named by a definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaseRef {
    /// Index in [`FileFacts::symbols`] of the deriving definition, when it is in this file.
    pub symbol: Option<u32>,
    /// Name of the deriving type (for resolving it when it is defined elsewhere).
    pub subject: String,
    /// Last segment of the base's name.
    pub name: String,
    /// What stood before it (`abc` in `abc.ABC`), if anything.
    pub qualifier: Option<String>,
    /// Extends or implements.
    pub kind: BaseKind,
    /// 1-based line.
    pub line: u32,
}

/// Why a file could not be turned into facts.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The grammar could not be loaded (a build problem, not an input problem).
    #[error("the {lang} grammar could not be loaded: {message}")]
    Grammar {
        /// The language.
        lang: &'static str,
        /// What tree-sitter said.
        message: String,
    },
    /// tree-sitter gave up (timeout or cancellation).
    #[error("the {lang} parser returned no tree")]
    NoTree {
        /// The language.
        lang: &'static str,
    },
    /// The file is beyond what loci parses (a limit on the parse's memory, or a nesting
    /// the grammar cannot keep): its facts would be wrong or cost too much, so it is
    /// skipped rather than stored half-parsed.
    #[error("{limit}")]
    TooComplex {
        /// The language.
        lang: &'static str,
        /// Which limit, and its value.
        limit: String,
    },
    /// The file's parse and extraction ran past its time budget: stopped, and the file
    /// skipped rather than stored half-extracted.
    #[error(
        "the {lang} parse and extraction ran longer than {limit:?} (the budget for this file, index.fileBudgetMs)"
    )]
    OverTime {
        /// The language.
        lang: &'static str,
        /// The budget that was spent.
        limit: Duration,
    },
}

/// Most bytes tree-sitter may hold for one file's parse, for files up to 1 MiB (the
/// default `index.maxFileBytes`); larger files get [`PARSE_BYTES_PER_SOURCE_BYTE`] per
/// byte. Measured with the counting allocator: the largest real files of a crates.io
/// tree, Python's standard library and minified JavaScript take at most 35 MiB (a 900 KB
/// generated Rust file; at most 110 bytes per source byte), while 400k `{` then 400k `}`
/// took 100-160 MiB in the parse and 250-440 MB of RSS in all before this limit.
pub const MAX_PARSE_BYTES: usize = 96 << 20;

/// Bytes tree-sitter may hold per byte of source, for files over 1 MiB.
pub const PARSE_BYTES_PER_SOURCE_BYTE: usize = 96;

/// Most bytes one parse may hold whatever the file's size: a 20 MB file at
/// [`PARSE_BYTES_PER_SOURCE_BYTE`] would otherwise be allowed 1.9 GB, and two such parses
/// on two threads can exhaust a small machine (where an allocation tree-sitter cannot
/// get ends the process). Files up to about 5 MB keep their per-byte allowance; past
/// that a file whose parse needs more is refused as too complex.
pub const MAX_PARSE_BYTES_CEILING: usize = 512 << 20;

/// The limits one file's parse and extraction run within; past one, the file is
/// [`ExtractError::TooComplex`] (memory, nesting) or [`ExtractError::OverTime`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseLimits {
    /// Most bytes tree-sitter may hold for the parse (on top of what it held before).
    pub max_bytes: usize,
    /// Longest the whole of the file's work may run: the parse, the walk of its tree and
    /// the second parses of its macro regions.
    pub max_time: Duration,
}

impl ParseLimits {
    /// The limits for `source` under the default budget ([`FileBudget::default`]).
    pub fn for_source(source: &str) -> ParseLimits {
        ParseLimits::within(source, FileBudget::default())
    }

    /// The limits for `source` under `budget`: [`MAX_PARSE_BYTES`] (scaled up with the
    /// file past 1 MiB, to at most [`MAX_PARSE_BYTES_CEILING`]) and the budget's time for
    /// the file's size.
    pub fn within(source: &str, budget: FileBudget) -> ParseLimits {
        ParseLimits {
            max_bytes: MAX_PARSE_BYTES
                .max(source.len().saturating_mul(PARSE_BYTES_PER_SOURCE_BYTE))
                .min(MAX_PARSE_BYTES_CEILING),
            max_time: budget.for_size(source.len() as u64),
        }
    }
}

/// Parses `source` as `lang` and extracts its facts, within [`ParseLimits::for_source`].
/// Never panics on any input: syntax errors leave `ERROR` nodes that the visitors
/// simply skip.
pub fn extract(lang: Lang, source: &str) -> Result<FileFacts, ExtractError> {
    extract_within(lang, source, &ParseLimits::for_source(source))
}

/// [`extract`] within given limits.
pub fn extract_within(
    lang: Lang,
    source: &str,
    limits: &ParseLimits,
) -> Result<FileFacts, ExtractError> {
    let deadline = Deadline::after(limits.max_time);
    let over_time = || ExtractError::OverTime {
        lang: lang.name(),
        limit: limits.max_time,
    };
    // C and C++ definitions behind macros: blanked in place, positions unchanged; Kotlin
    // the grammar misreads (headers, bracket destructuring), rewritten in place.
    let masked = match lang {
        Lang::C | Lang::Cpp => c_macros::mask(source),
        Lang::Kotlin => kotlin_syntax::rewrite(source),
        _ => std::borrow::Cow::Borrowed(source),
    };
    let source: &str = &masked;
    let mut parser = new_parser(lang)?;
    let too_complex = |limit: String| ExtractError::TooComplex {
        lang: lang.name(),
        limit,
    };
    let parse_error = |stop| match stop {
        parser::ParseStop::OverMemory(max) => too_complex(format!(
            "the {} parse needed more than {} MiB of memory (the limit for one file)",
            lang.name(),
            max >> 20
        )),
        parser::ParseStop::OverTime => over_time(),
        parser::ParseStop::NoTree => ExtractError::NoTree { lang: lang.name() },
    };
    let parsing = std::time::Instant::now();
    let mut tree = parser::parse_within(&mut parser, source, limits.max_bytes, &deadline)
        .map_err(parse_error)?;
    let parse_time = parsing.elapsed();
    // Only a parse that went wrong is checked: a deep but well-parsed file is kept.
    if lang == Lang::Python && tree.root_node().has_error() {
        python::check_nesting(source)?;
    }
    // A JavaScript or TypeScript statement that does not parse, blanked where it would
    // swallow the declarations after it.
    let mut recovered = std::borrow::Cow::Borrowed(source);
    if matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) {
        let budget = (limits.max_time / 2).saturating_sub(parse_time * 2);
        let passes = js_recover::Passes {
            parsing,
            budget,
            max_bytes: limits.max_bytes,
            deadline: &deadline,
            signatures: lang == Lang::TypeScript,
        };
        (tree, recovered) = js_recover::recover(&mut parser, source, tree, passes);
    }
    // C# conditional directives where the grammar cannot take them: the file with each
    // group's first branch, when that parses with less in error.
    if lang == Lang::CSharp {
        (tree, recovered) = csharp_directives::recover(source, tree, |text| {
            parser::parse_within(&mut parser, text, limits.max_bytes, &deadline).ok()
        });
    }
    let source: &str = &recovered;
    let facts = extract_tree(lang, source, &tree, &mut parser, limits, &deadline)?;
    if deadline.passed() {
        return Err(over_time());
    }
    Ok(facts)
}

fn extract_tree<'t>(
    lang: Lang,
    source: &'t str,
    tree: &'t tree_sitter::Tree,
    parser: &mut tree_sitter::Parser,
    limits: &ParseLimits,
    deadline: &Deadline,
) -> Result<FileFacts, ExtractError> {
    let (separator, visit): (&'static str, collector::Visitor) = match lang {
        Lang::Rust => ("::", rust::visit),
        Lang::Python => (python::SEPARATOR, python::visit),
        // TypeScript and TSX grammars share node kinds with JavaScript's.
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            (javascript::SEPARATOR, javascript::visit)
        }
        Lang::Go => (go::SEPARATOR, go::visit),
        Lang::Java => (java::SEPARATOR, java::visit),
        Lang::C => (c::SEPARATOR, c::visit),
        Lang::Cpp => (cpp::SEPARATOR, cpp::visit),
        Lang::CSharp => (csharp::SEPARATOR, csharp::visit),
        Lang::Ruby => (ruby::SEPARATOR, ruby::visit),
        Lang::Php => (php::SEPARATOR, php::visit),
        Lang::Kotlin => (kotlin::SEPARATOR, kotlin::visit),
        Lang::Swift => (swift::SEPARATOR, swift::visit),
        Lang::Bash => (bash::SEPARATOR, bash::visit),
    };
    let mut collector = Collector::new(source, separator, tree, deadline);
    collector.types_mut().fields_elsewhere = lang == Lang::Cpp;
    collector.types_mut().calls_on_types = lang == Lang::Kotlin;
    match walk(tree, &mut collector, visit) {
        WalkEnd::Done => {}
        WalkEnd::TooDeep => {
            return Err(ExtractError::TooComplex {
                lang: lang.name(),
                limit: format!(
                    "the {} syntax tree is nested more than {} levels deep",
                    lang.name(),
                    collector::MAX_WALK_DEPTH
                ),
            });
        }
        WalkEnd::OutOfTime => {
            return Err(ExtractError::OverTime {
                lang: lang.name(),
                limit: limits.max_time,
            });
        }
    }
    Ok(embedded::expand(parser, source, collector, visit, limits))
}
