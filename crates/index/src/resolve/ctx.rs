//! The context of one file's resolution: its table, own definitions, directory and
//! imports, and what the rules ask of it (its language, a candidate's module). The
//! rules themselves are written as methods on it in the modules above
//! ([`super::rules`] orders them); this module names none of them.

use rustc_hash::FxHashMap as HashMap;

use super::rust_paths::Module;
use super::sym::Sym;
use super::table::SymbolTable;
use crate::Lang;

/// A reference as far as its resolution depends on it: name, qualifier, call or type
/// use, the caller (only for `self.n`), whether it is a macro invocation, the
/// receiver's type, and the argument count (which overload).
pub(super) type RefKey<'a> = (
    &'a str,
    Option<&'a str>,
    bool,
    Option<i64>,
    bool,
    Option<&'a str>,
    Option<u16>,
    Option<&'a str>,
);

/// One import of the file being resolved: (imported name, alias, module segments,
/// files the module names).
pub(super) type ImportedModule<'a> = (Option<&'a str>, Option<&'a str>, Vec<&'a str>, Vec<i64>);

pub(super) struct Ctx<'a> {
    pub(super) table: &'a SymbolTable,
    pub(super) file_id: i64,
    pub(super) own_parent: &'a HashMap<i64, Option<i64>>,
    /// The file's own definitions by id.
    pub(super) own_symbols: &'a HashMap<i64, &'a Sym>,
    pub(super) dir: &'a str,
    /// (imported name, alias, module segments, files the module names)
    pub(super) imports: &'a [ImportedModule<'a>],
    /// Go packages imported through a module of the workspace: (local name, files).
    pub(super) go_packages: &'a [(&'a str, Vec<i64>)],
}

/// Receivers that mean "the enclosing type" in the supported languages.
pub(super) const SELF_QUALIFIERS: &[&str] = &[
    "self", "this", "Self", "cls", "@", "static", "parent", "super", "$this", "base",
];

impl<'a> Ctx<'a> {
    /// Whether the file being resolved is in a language where an unqualified call in a
    /// method may name a method of its own class (Java, Kotlin, C#).
    pub(super) fn implicit_this(&self) -> bool {
        matches!(self.lang(), Some(Lang::Java | Lang::Kotlin | Lang::CSharp))
    }

    /// Whether the workspace defines a type (or trait, interface...) named `name`: a
    /// receiver of any other type is a standard library's or a dependency's.
    pub(super) fn defines_type(&self, name: &str) -> bool {
        self.table
            .by_name
            .get(name)
            .is_some_and(|defs| defs.iter().any(|s| s.kind.is_type()))
    }

    /// The language of the file being resolved.
    pub(super) fn lang(&self) -> Option<Lang> {
        self.lang_of(self.file_id)
    }

    /// The language of file `id`.
    pub(super) fn lang_of(&self, id: i64) -> Option<Lang> {
        self.table.files.get(&id).and_then(|f| f.lang)
    }

    /// Whether the file being resolved is in a language whose methods are called only
    /// through a receiver.
    pub(super) fn methods_need_receiver(&self) -> bool {
        matches!(
            self.lang(),
            Some(Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Go)
        )
    }

    /// Whether `sym` is defined in the folder of the file being resolved (Go's package,
    /// the nearest scope a name alone can pick).
    pub(super) fn in_callers_dir(&self, sym: &Sym) -> bool {
        self.table.in_dir_of(sym, self.dir)
    }

    /// Whether `sym` is a top-level definition of a file whose module name is `module`
    /// (`src/parser.rs` → `parser`).
    pub(super) fn in_module(&self, sym: &Sym, module: &str) -> bool {
        self.table.is_in_module(sym, module)
    }

    /// The Rust module a reference from `from` is written in: the file's, or the inline
    /// `mod` its caller is defined in.
    pub(super) fn rust_scope(&self, from: Option<i64>) -> Module {
        let qualified = from
            .and_then(|id| self.own_symbols.get(&id))
            .map(|s| s.qualified_name.as_str());
        self.table.rust.scope_of(self.file_id, qualified)
    }
}
