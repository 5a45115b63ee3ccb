//! The symbol table resolution looks names up in, built from the index or from the
//! facts a first index writes, and the matching of written modules to files.

use rustc_hash::FxHashMap as HashMap;

use super::def_index::{DefIndexes, indexes_for};
use super::file_info::FileInfo;

use super::go_modules::GoModules;
use super::java_packages::JavaPackages;
use super::js_modules::JsModules;
use super::kotlin_bases;
use super::rows::{BaseRow, FileInputs, ImportRow, RefRow};
use super::rust_paths::{RustModules, Use};
use super::sym::{Sym, SymbolsByName};
use crate::crates::CrateMap;
use crate::extract::{BaseKind, FileFacts, RefKind};

/// The slice of the workspace resolution needs: symbols by name and file paths.
pub(crate) struct SymbolTable {
    pub(super) by_name: SymbolsByName,
    pub(super) files: HashMap<i64, FileInfo>,
    /// Files by the last component of their module path and of their directory,
    /// so an import looks at a handful of files, not all of them.
    pub(super) by_last_component: HashMap<String, Vec<i64>>,
    /// Rust's module graph: crates, module files and their `use`s.
    pub(super) rust: RustModules,
    /// Python files by path, for relative imports.
    pub(super) python_files: HashMap<String, i64>,
    /// JavaScript/TypeScript files and the configs that map bare specifiers.
    pub(super) js: JsModules,
    /// Go's modules and package folders.
    pub(super) go: GoModules,
    /// Java/Kotlin files by declared package.
    pub(super) java: JavaPackages,
    /// Each type name's bases by name (`class A(B)`, `impl Tr for A`): whose members a
    /// receiver of that type also has.
    pub(super) bases: HashMap<String, Vec<String>>,
    /// The other way: each type name's subtypes by name (a base as written, reduced to
    /// its last identifier: `mod.Base[T]` is `Base`).
    pub(super) subtypes: HashMap<String, Vec<String>>,
    /// The popular names' definitions by owner, directory and module, built as rules
    /// ask ([`super::def_index`]); replaced with the definitions.
    pub(super) indexes: DefIndexes,
}

/// Collects a [`SymbolTable`] from the index or, on a first index, from the facts as
/// they are written (so nothing is read back).
#[derive(Default)]
pub(crate) struct TableBuilder {
    by_name: HashMap<String, Vec<Sym>>,
    files: HashMap<i64, FileInfo>,
    by_last_component: HashMap<String, Vec<i64>>,
    rust: RustModules,
    python_files: HashMap<String, i64>,
    js: JsModules,
    go: GoModules,
    java: JavaPackages,
    bases: HashMap<String, Vec<String>>,
}

impl TableBuilder {
    /// Records that type `subject` has the base `name`.
    pub(super) fn add_base(&mut self, subject: String, name: String) {
        self.bases.entry(subject).or_default().push(name);
    }

    /// Records a base as a file writes it ([`kotlin_bases::base_entries`]): by its name
    /// (as [`Self::add_base`]) and, for Kotlin's nested types, by their paths too.
    pub(super) fn add_base_written(&mut self, base: kotlin_bases::WrittenBase<'_>) {
        for (subject, name) in kotlin_bases::base_entries(base) {
            self.add_base(subject, name);
        }
    }

    /// Sets the workspace's Rust crates (from its `Cargo.toml` files).
    pub(crate) fn set_crates(&mut self, crates: CrateMap) {
        self.rust.crates = crates;
    }

    /// Sets the workspace's TypeScript configs and Go modules.
    pub(crate) fn set_module_configs(&mut self, configs: crate::module_configs::ModuleConfigs) {
        self.js.set_configs(&configs.ts);
        self.go.set_modules(&configs.go);
    }

    /// Adds one `use` of a Rust file (for following re-exports from other files).
    pub(super) fn add_use(&mut self, file_id: i64, u: Use) {
        self.rust.uses.entry(file_id).or_default().push(u);
    }

    /// Records an inline `mod m { .. }` of a Rust file.
    pub(super) fn add_rust_inline(&mut self, file_id: i64, qualified: &str, start: i64, end: i64) {
        self.rust.add_inline(file_id, qualified, start, end);
    }

    /// Records the package a Java/Kotlin file declares.
    pub(super) fn set_java_package(&mut self, file_id: i64, package: &str) {
        self.java.set_package(file_id, package);
    }

    pub(super) fn add_symbol(&mut self, name: String, sym: Sym) {
        self.by_name.entry(name).or_default().push(sym);
    }

    pub(crate) fn add_file(&mut self, id: i64, path: &str) {
        self.rust.add_file(id, path);
        self.js.add_file(id, path);
        self.go.add_file(id, path);
        self.java.add_file(id, path);
        if path.ends_with(".py") {
            self.python_files.insert(path.to_string(), id);
        }
        let info = FileInfo::new(path);
        for key in lookup_keys(&info) {
            let ids = match self.by_last_component.get_mut(key) {
                Some(ids) => ids,
                None => self.by_last_component.entry(key.to_string()).or_default(),
            };
            if ids.last() != Some(&id) {
                ids.push(id);
            }
        }
        self.files.insert(id, info);
    }

    /// Adds one written file: its path, and its symbols to the table; returns its
    /// resolution inputs. `ids` are the stored ids of `facts.symbols`, in order.
    pub(crate) fn add_written(
        &mut self,
        file_id: i64,
        path: &str,
        ids: &[i64],
        facts: FileFacts,
    ) -> FileInputs {
        self.add_file(file_id, path);
        let id_of = |i: Option<u32>| i.and_then(|i| ids.get(i as usize).copied());
        let mut own = Vec::with_capacity(facts.symbols.len());
        if super::java_packages::is_java_like(path)
            && let Some(package) = facts
                .symbols
                .iter()
                .find(|s| s.kind == crate::extract::SymbolKind::Module && s.parent.is_none())
        {
            self.java.set_package(file_id, &package.qualified_name);
        }
        if path.ends_with(".rs") {
            // Inline `mod m { .. }` blocks (a `mod m;` gives no definition).
            for s in &facts.symbols {
                if s.kind == crate::extract::SymbolKind::Module {
                    self.rust.add_inline(
                        file_id,
                        &s.qualified_name,
                        i64::from(s.span.start_line),
                        i64::from(s.span.end_line),
                    );
                }
            }
        }
        let kotlin = kotlin_bases::is_kotlin_path(path);
        for b in &facts.bases {
            let subject_path = b
                .symbol
                .and_then(|i| facts.symbols.get(i as usize))
                .map(|s| s.qualified_name.as_str());
            self.add_base_written(kotlin_bases::WrittenBase {
                kotlin,
                subject: &b.subject,
                subject_path,
                name: &b.name,
                qualifier: b.qualifier.as_deref(),
            });
        }
        let in_trait: Vec<bool> = facts
            .symbols
            .iter()
            .map(|s| {
                s.parent
                    .and_then(|p| facts.symbols.get(p as usize))
                    .is_some_and(|p| p.kind == crate::extract::SymbolKind::Trait)
            })
            .collect();
        for ((s, &id), in_trait) in facts.symbols.into_iter().zip(ids).zip(in_trait) {
            let sym = Sym {
                id,
                file_id,
                owner: Sym::owner_of(&s.qualified_name, &s.name),
                qualified_name: s.qualified_name,
                kind: s.kind,
                parent: id_of(s.parent),
                returns: s.returns,
                params: s.params,
                param_types: s.param_types.map(String::into_boxed_str),
                in_trait,
                receiver: s.receiver.as_deref().map_or(0, Sym::receiver_key),
            };
            own.push(sym.clone());
            self.add_symbol(s.name, sym);
        }
        if path.ends_with(".rs") {
            for i in &facts.imports {
                self.add_use(
                    file_id,
                    Use::new(
                        i.module.clone(),
                        i.name.clone(),
                        i.alias.clone(),
                        i64::from(i.line),
                    ),
                );
            }
        }
        FileInputs {
            file_id,
            own,
            refs: facts
                .refs
                .into_iter()
                .map(|r| RefRow {
                    from: id_of(r.from),
                    name: r.name,
                    qualifier: r.qualifier,
                    is_call: r.kind != RefKind::TypeUse,
                    is_macro: r.kind == RefKind::Macro,
                    line: i64::from(r.line),
                    receiver: r.receiver,
                    args: r.args,
                    arg_types: r.arg_types,
                })
                .collect(),
            imports: facts
                .imports
                .into_iter()
                .map(|i| ImportRow {
                    module: i.module,
                    name: i.name,
                    alias: i.alias,
                    line: i64::from(i.line),
                })
                .collect(),
            bases: facts
                .bases
                .into_iter()
                .map(|b| BaseRow {
                    symbol: id_of(b.symbol),
                    subject: b.subject,
                    name: b.name,
                    qualifier: b.qualifier,
                    implements: b.kind == BaseKind::Implements,
                    line: i64::from(b.line),
                })
                .collect(),
        }
    }

    pub(crate) fn build(self) -> SymbolTable {
        let TableBuilder {
            mut by_name,
            files,
            by_last_component,
            mut rust,
            python_files,
            js,
            go,
            mut java,
            mut bases,
        } = self;
        java.finish();
        rust.finish();
        for names in bases.values_mut() {
            names.sort_unstable();
            names.dedup();
        }
        let mut subtypes: HashMap<String, Vec<String>> = HashMap::default();
        for (subject, names) in &bases {
            for base in names {
                if let Some(id) = last_identifier(base) {
                    subtypes
                        .entry(id.to_string())
                        .or_default()
                        .push(subject.clone());
                }
            }
        }
        order_candidates(&mut by_name, &files);
        SymbolTable {
            indexes: indexes_for(&by_name),
            by_name,
            files,
            by_last_component,
            rust,
            python_files,
            js,
            go,
            java,
            bases,
            subtypes,
        }
    }
}

/// The last identifier of a base as written (`Base` in `mod.Base[T]`, `a::Tr<X>`).
fn last_identifier(base: &str) -> Option<&str> {
    let head = base.split(['[', '<', '(']).next()?.trim();
    let id = head.rsplit(['.', ':']).next()?.trim();
    (!id.is_empty()).then_some(id)
}

impl SymbolTable {
    /// Replaces the definitions with `by_name`, each name's already in [`Self::order`],
    /// keeping the files and module graphs: the next chunk of a run that resolves in
    /// chunks ([`super::load_symbols`]).
    pub(super) fn set_ordered_symbols(&mut self, by_name: SymbolsByName) {
        self.indexes = indexes_for(&by_name);
        self.by_name = by_name;
    }

    /// Takes the definitions out, the table then holding none: the next chunk keeps the
    /// names it needs too.
    pub(super) fn take_symbols(&mut self) -> SymbolsByName {
        self.indexes = DefIndexes::default();
        std::mem::take(&mut self.by_name)
    }

    /// Orders one name's definitions as every table orders them (see
    /// [`order_candidates`]).
    pub(super) fn order(&self, defs: &mut [Sym]) {
        order_defs(defs, &self.files);
    }

    /// Each name's definitions' ids in the table's order, by name: what two tables that
    /// resolve the same way hold alike.
    #[cfg(test)]
    pub(crate) fn symbol_ids(&self) -> std::collections::BTreeMap<&str, Vec<i64>> {
        self.by_name
            .iter()
            .map(|(name, defs)| (name.as_str(), defs.iter().map(|s| s.id).collect()))
            .collect()
    }

    /// How many definitions the table holds (for a chunk's log line).
    pub(crate) fn symbol_count(&self) -> usize {
        self.by_name.values().map(Vec::len).sum()
    }
}

/// Orders each name's candidates by where they are: symbol ids differ between an
/// incremental and a fresh index, so every choice resolution makes is then the same for
/// the same tree.
fn order_candidates(by_name: &mut SymbolsByName, files: &HashMap<i64, FileInfo>) {
    for defs in by_name.values_mut() {
        order_defs(defs, files);
    }
}

/// One name's candidates in [`order_candidates`]' order.
fn order_defs(defs: &mut [Sym], files: &HashMap<i64, FileInfo>) {
    defs.sort_by(|a, b| {
        let path = |s: &Sym| files.get(&s.file_id).map_or("", |f| &*f.path);
        (path(a), &a.qualified_name, a.kind.name()).cmp(&(
            path(b),
            &b.qualified_name,
            b.kind.name(),
        ))
    });
}

/// The keys an import finds a file by (see [`SymbolTable::files_for_module`]): the last
/// component of its module path and of its directory.
fn lookup_keys(info: &FileInfo) -> impl Iterator<Item = &str> {
    [info.module_path().next_back(), info.dir().next_back()]
        .into_iter()
        .flatten()
}

/// The keys an import of `path` can find it by: an import whose
/// [`import_lookup_keys`] share none of them can never name the file, whatever else
/// the workspace holds.
pub(crate) fn file_lookup_keys(path: &str) -> Vec<String> {
    let info = FileInfo::new(path);
    let mut keys: Vec<String> = lookup_keys(&info).map(str::to_string).collect();
    keys.dedup();
    keys
}

/// The keys an import (module as written, imported name) looks files up by: the last
/// segment of its module and its name. [`SymbolTable::files_for_module`] only considers
/// files one of whose [`file_lookup_keys`] is one of these.
pub(crate) fn import_lookup_keys<'m>(
    module: &'m str,
    name: Option<&'m str>,
) -> [Option<&'m str>; 2] {
    [segments(module).next_back(), name]
}

/// Splits a module as written into path-like segments: `crate::a::b` → `[a, b]`,
/// `..pkg.mod` → `[pkg, mod]`, `./util.js` → `[util]`, `sys/types.h` → `[sys, types]`.
pub(super) fn module_segments(module: &str) -> Vec<&str> {
    segments(module).collect()
}

/// [`module_segments`] without collecting them (the last is all invalidation needs).
fn segments(module: &str) -> impl DoubleEndedIterator<Item = &str> {
    let module = module.trim_matches(|c| c == '"' || c == '\'' || c == '<' || c == '>');
    let pathlike = module.contains('/');
    let without_ext = if pathlike
        || module.ends_with(".h")
        || module.ends_with(".hpp")
        || module.ends_with(".sh")
    {
        match module.rfind('.') {
            Some(dot) if dot > module.rfind('/').map_or(0, |s| s + 1) => &module[..dot],
            _ => module,
        }
    } else {
        module
    };
    // Path-like modules split on `/` only; `.`, `\\` and `:` are then part of a segment.
    let separators: &[char] = if pathlike { &['/'] } else { &['.', '\\', ':'] };
    without_ext
        .split(separators)
        .filter(|p| !matches!(*p, "" | "crate" | "self" | "super" | "." | ".." | "@" | "~"))
}

fn suffix_len<'a>(a: impl DoubleEndedIterator<Item = &'a str>, b: &[&str]) -> usize {
    a.rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == *y)
        .count()
}

/// What one import (module as written, imported name) matches files with.
pub(super) struct ImportPattern<'m> {
    /// The module's segments (`crate::a::b` → `[a, b]`).
    segs: Vec<&'m str>,
    /// The segments with the imported name appended, when there is one.
    with_name: Option<Vec<&'m str>>,
    /// The extension the module is written with, if any.
    ext: Option<&'m str>,
    keys: [Option<&'m str>; 2],
}

impl<'m> ImportPattern<'m> {
    pub(super) fn new(module: &'m str, name: Option<&'m str>) -> Self {
        let segs = module_segments(module);
        let with_name = name.map(|n| {
            let mut with = segs.clone();
            with.push(n);
            with
        });
        ImportPattern {
            segs,
            with_name,
            ext: written_extension(module),
            keys: import_lookup_keys(module, name),
        }
    }

    /// Whether `file` is the imported name itself (a Java class, a Python submodule).
    fn names_item(&self, file: &FileInfo) -> bool {
        self.with_name
            .as_ref()
            .is_some_and(|with| path_matches(file.module_path(), with))
    }

    /// Whether `file` is the module's file or in its package directory.
    fn names_module(&self, file: &FileInfo) -> bool {
        (path_matches(file.module_path(), &self.segs) || path_matches(file.dir(), &self.segs))
            && self.ext.is_none_or(|e| e == file.ext())
    }

    /// Whether the import can name `path`, whatever else the workspace holds: when it
    /// cannot, adding the file changes nothing the import resolves to.
    pub(super) fn may_name(&self, path: &str) -> bool {
        let file = FileInfo::new(path);
        // A Rust path is followed through the module graph (crate names included), which
        // suffix matching cannot tell: a module named by one of the keys may be it.
        // (When the graph cannot follow the path, the suffix rules below apply.) So is
        // a JavaScript/TypeScript specifier, through tsconfig's `paths` (`@lib/x`).
        if (file.ext() == "rs" || super::js_modules::is_js(path))
            && file
                .module_path()
                .next_back()
                .is_some_and(|m| self.keys.contains(&Some(m)))
        {
            return true;
        }
        lookup_keys(&file).any(|k| self.keys.contains(&Some(k)))
            && (self.names_item(&file) || self.names_module(&file))
    }
}

impl SymbolTable {
    /// Files in the workspace that an import names. The imported name itself may be a
    /// file (a Java/Kotlin class, a Python submodule, a Rust module): when it is, only
    /// that file; else the module's file or package directory. A module written with an
    /// extension (`#include "a/b.hpp"`, `source ./x.sh`) only names files with it.
    pub(super) fn files_for_module(&self, module: &str, name: Option<&str>) -> Vec<i64> {
        let pattern = ImportPattern::new(module, name);
        let mut candidates: Vec<i64> = pattern
            .keys
            .into_iter()
            .flatten()
            .filter_map(|key| self.by_last_component.get(key))
            .flatten()
            .copied()
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let info = |id: &i64| self.files.get(id);
        let named: Vec<i64> = candidates
            .iter()
            .copied()
            .filter(|id| info(id).is_some_and(|f| pattern.names_item(f)))
            .collect();
        if !named.is_empty() {
            return named;
        }
        candidates
            .into_iter()
            .filter(|id| info(id).is_some_and(|f| pattern.names_module(f)))
            .collect()
    }
}

/// Whether the path components `have` end with the module segments `want` (at least the
/// last two, or all of the shorter one).
fn path_matches<'a>(have: impl DoubleEndedIterator<Item = &'a str> + Clone, want: &[&str]) -> bool {
    let have_len = have.clone().count();
    !want.is_empty() && have_len > 0 && suffix_len(have, want) >= want.len().min(have_len).min(2)
}

/// The extension a path-like module is written with (`"a/b.hpp"` → `hpp`), if any.
fn written_extension(module: &str) -> Option<&str> {
    let module = module.trim_matches(|c| c == '"' || c == '\'' || c == '<' || c == '>');
    let file = module.rsplit('/').next().unwrap_or(module);
    let pathlike = module.contains('/')
        || [
            ".h", ".hpp", ".hh", ".sh", ".php", ".rb", ".js", ".ts", ".py",
        ]
        .iter()
        .any(|e| file.ends_with(e));
    match file.rsplit_once('.') {
        Some((stem, ext)) if pathlike && !stem.is_empty() && !ext.is_empty() => Some(ext),
        _ => None,
    }
}
