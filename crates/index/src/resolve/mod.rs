//! Resolution: turns each stale file's references, imports and bases into edges
//! against the symbols of the whole workspace, with a confidence for each.
//!
//! Order of preference for a reference named `n` (the first rule that yields
//! candidates wins):
//! 1. an import alias → `import`;
//! 2. `self.n` / `this.n` / `Self::n`: a definition with the same parent as the caller → `exact`;
//! 3. a Rust path through the module graph ([`rust_paths`]) → `exact`;
//! 4. a receiver of known type: that type's (or its bases') member only → `exact`
//!    (Kotlin: else a visible extension function, [`kotlin_extensions`]);
//!    Go: a qualifier naming an imported package reaches that package's top-level
//!    definitions only, any other qualifier only methods ([`go_calls`]);
//! 5. a written qualifier that matches the candidate's qualified name (`Foo::n`) → `exact`;
//! 6. a definition in the same file (unqualified or `self.`-style calls only) → `exact`;
//! 7. a definition in a file the current file imports (by name, alias or module) → `import`;
//! 8. the only definition of that name in the workspace, or up to [`rules::MAX_NAME_ONLY`]
//!    (preferring the caller's directory) → `name`.
//!
//! Whatever rule picked a definition, its overloads (Java) are then chosen among by the
//! call's argument count ([`overloads`]).
//!
//! A reference with no candidate stays unresolved: it stays stored with its name.
//!
//! `CONTAINS` edges are not resolution's: they depend on one file alone and are written
//! with its symbols (`write.rs`).

mod builtins;
mod call_results;
mod candidates;
mod cpp_overloads;
mod cs_receivers;
mod ctx;
mod def_index;
mod file_info;
mod foreign;
mod go_calls;
mod go_modules;
mod import_targets;
mod java_foreign;
mod java_packages;
mod java_rules;
mod js_modules;
mod kotlin_bases;
mod kotlin_extensions;
mod kotlin_nested;
mod kotlin_overloads;
mod overloads;
mod rows;
mod rules;
mod rust_paths;
mod select_path;
mod static_fields;
mod store;
mod sym;
mod table;
mod table_lookups;
mod typed;

use std::panic::{AssertUnwindSafe, catch_unwind};

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

use crate::budget::{Deadline, FileBudget};
use crate::extract::SymbolKind;
use crate::walk::SkipReason;
use candidates::Wanted;
use ctx::{Ctx, ImportedModule, RefKey, SELF_QUALIFIERS};
pub(crate) use rows::FileInputs;
pub(crate) use select_path::{crate_relative_path_symbols, rust_path_symbols};
pub(crate) use store::{
    Loaded, Needed, importers_of, load_inputs, load_symbols, load_table, stale_files, write_edges,
};
use sym::Sym;
use table::module_segments;
pub(crate) use table::{SymbolTable, TableBuilder};

/// The version of these rules. Bump it with any change that links different edges from
/// the same stored facts: an index whose edges were made by other rules is then
/// re-resolved in full by the next sync (and reported as drift until then), as a file
/// extracted by older extractor rules is re-extracted.
pub const RULES_VERSION: u32 = 15;

pub(crate) use crate::vocab::Confidence;
use crate::vocab::EdgeKind;

/// An edge ready to insert.
pub(crate) struct Edge {
    kind: EdgeKind,
    src_symbol: Option<i64>,
    dst_file: Option<i64>,
    dst_symbol: Option<i64>,
    confidence: Confidence,
    line: i64,
}

/// One file's resolution, ready for [`write_edges`].
pub(crate) struct ResolvedFile {
    file_id: i64,
    edges: Vec<Edge>,
    /// The file's `CONTAINS` edges (one per definition), written with its symbols and
    /// counted here with the rest.
    contains: usize,
    /// References that reached no definition.
    unresolved_refs: u32,
    /// Why its resolution was stopped (over its budget, or a panic), leaving every
    /// reference unresolved: reported with the run's skipped files.
    pub(crate) stopped: Option<(SkipReason, String)>,
}

impl ResolvedFile {
    /// The file's id in the index.
    pub(crate) fn file_id(&self) -> i64 {
        self.file_id
    }

    /// A file whose resolution was stopped: no edges but its definitions' `CONTAINS`.
    fn stopped(f: &FileInputs, reason: SkipReason, detail: String) -> ResolvedFile {
        ResolvedFile {
            file_id: f.file_id,
            edges: Vec::new(),
            contains: f.own.len(),
            unresolved_refs: u32::try_from(f.refs.len()).unwrap_or(u32::MAX),
            stopped: Some((reason, detail)),
        }
    }
}

/// Resolves every input file in parallel, each within `budget`'s base time; a file
/// over it, or whose resolution panics, keeps its definitions and no edges.
pub(crate) fn resolve_all(
    table: &SymbolTable,
    inputs: &[FileInputs],
    budget: FileBudget,
) -> Vec<ResolvedFile> {
    inputs
        .par_iter()
        .map(|f| resolve_within(table, f, budget))
        .collect()
}

fn resolve_within(table: &SymbolTable, f: &FileInputs, budget: FileBudget) -> ResolvedFile {
    stopped_safely(f, budget, |deadline| resolve_file(table, f, deadline))
}

/// Runs `work` (one file's resolution) under a deadline of `budget`'s base, turning
/// its giving up at the deadline or its panic into a stopped file.
fn stopped_safely(
    f: &FileInputs,
    budget: FileBudget,
    work: impl FnOnce(&Deadline) -> Option<ResolvedFile>,
) -> ResolvedFile {
    let deadline = Deadline::after(budget.base());
    match catch_unwind(AssertUnwindSafe(|| work(&deadline))) {
        Ok(Some(resolved)) => resolved,
        Ok(None) => ResolvedFile::stopped(
            f,
            SkipReason::Timeout,
            format!(
                "its resolution ran longer than {:?} (the budget for one file, \
                 index.fileBudgetMs): its references are left unresolved",
                budget.base()
            ),
        ),
        Err(panic) => ResolvedFile::stopped(
            f,
            SkipReason::Panic,
            format!(
                "its resolution panicked ({}): its references are left unresolved",
                crate::parse_pool::panic_message(panic.as_ref())
            ),
        ),
    }
}

/// One file's edges, or `None` once `deadline` has passed.
fn resolve_file(table: &SymbolTable, f: &FileInputs, deadline: &Deadline) -> Option<ResolvedFile> {
    let mut unresolved_refs = 0;
    let mut edges = Vec::with_capacity(f.refs.len() + f.imports.len());
    let own_parent: HashMap<i64, Option<i64>> = f.own.iter().map(|s| (s.id, s.parent)).collect();
    let own_symbols: HashMap<i64, &Sym> = f.own.iter().map(|s| (s.id, s)).collect();
    let dir = table.files.get(&f.file_id).map_or("", |i| i.dir_str());
    // IMPORTS: to each file the module names, and to the named symbol when found there.
    let mut imported_files: Vec<ImportedModule<'_>> = Vec::new();
    let mut go_packages: Vec<(&str, Vec<i64>)> = Vec::new();
    let is_rust = table.rust.paths.contains_key(&f.file_id);
    for imp in &f.imports {
        if deadline.passed_now() {
            return None;
        }
        // Rust: the module graph names the module or the definition itself.
        if let Some((files, dst)) = is_rust.then(|| table.rust_import(f.file_id, imp)).flatten() {
            for (&file, &dst_symbol) in files.iter().zip(&dst) {
                if file != f.file_id {
                    edges.push(Edge {
                        kind: EdgeKind::Imports,
                        src_symbol: None,
                        dst_file: Some(file),
                        dst_symbol,
                        confidence: Confidence::Import,
                        line: imp.line,
                    });
                }
            }
            imported_files.push((
                imp.name.as_deref(),
                imp.alias.as_deref(),
                module_segments(&imp.module),
                files,
            ));
            continue;
        }
        let path = table.files.get(&f.file_id).map_or("", |i| &*i.path);
        let go_package = table.go.resolve(path, &imp.module);
        if let Some(files) = &go_package {
            let local = imp
                .alias
                .as_deref()
                .unwrap_or(go_modules::package_name(&imp.module));
            go_packages.push((local, files.clone()));
        }
        let java_files = table
            .java
            .import_files(&table.by_name, f.file_id, &imp.module);
        let mut files = match table.python_relative(f.file_id, &imp.module, imp.name.as_deref()) {
            Some(file) => vec![file],
            None if java_files.is_some() => java_files.unwrap_or_default(),
            None => go_package
                .or_else(|| table.js.resolve(path, &imp.module))
                .unwrap_or_else(|| table.files_for_module(&imp.module, imp.name.as_deref())),
        };
        // `import a.b.C` where the module is a package of several files: the files that
        // define `C`, when any does.
        let defining = |file: i64| {
            imp.name.as_deref().and_then(|n| {
                let defs = table.by_name.get(n)?;
                let in_file = || defs.iter().filter(move |s| s.file_id == file);
                in_file()
                    .find(|s| s.parent.is_none())
                    .or_else(|| in_file().find(|s| s.kind.is_type()))
            })
        };
        if files.len() > 1 && files.iter().any(|&id| defining(id).is_some()) {
            files.retain(|&id| defining(id).is_some());
        }
        for &file in files.iter().filter(|&&id| id != f.file_id) {
            edges.push(Edge {
                kind: EdgeKind::Imports,
                src_symbol: None,
                dst_file: Some(file),
                dst_symbol: defining(file).map(|s| s.id),
                confidence: Confidence::Import,
                line: imp.line,
            });
        }
        imported_files.push((
            imp.name.as_deref(),
            imp.alias.as_deref(),
            module_segments(&imp.module),
            files,
        ));
    }
    let ctx = Ctx {
        table,
        file_id: f.file_id,
        own_parent: &own_parent,
        own_symbols: &own_symbols,
        dir,
        imports: &imported_files,
        go_packages: &go_packages,
    };
    // Most references repeat within a file (the same call from many places): each
    // distinct one is resolved once. The caller matters only to `self.n`.
    let mut memo: HashMap<RefKey<'_>, Vec<(&Sym, Confidence)>> = HashMap::default();
    // Kotlin counts a call's arguments exactly (defaults and `vararg` make a callable's
    // count a lower bound): a definition none of whose overloads takes that many is not
    // what the call reaches.
    let exact_arity = ctx.is_kotlin();
    // A `.h` file's extension says C even where its text is C++ (only C++ writes
    // argument types).
    let is_cpp = matches!(ctx.lang(), Some(crate::Lang::Cpp | crate::Lang::C));
    for r in &f.refs {
        if deadline.passed_now() {
            return None;
        }
        let is_call = r.is_call;
        let is_macro = r.is_macro;
        let kind = Wanted::of(is_macro, is_call);
        let wanted = |s: &Sym| kind.accepts(s);
        let qualifier = r.qualifier.as_deref();
        // An empty receiver type (`&Self` in `impl Tr for [T]`) names no type.
        let receiver = r.receiver.as_deref().filter(|t| !t.is_empty());
        // Kotlin: `Builder` written inside `FunSpec` is `FunSpec.Builder` (the memo key
        // then tells callers in different types apart).
        let receiver = receiver.map(|t| ctx.kotlin_receiver_in_scope(t, r.from));
        // `this.m()` where the function declares `this: T` is a call on a `T`.
        // Java's (and C#'s) bare `m()` is `this.m()`: its answer depends on the caller's
        // class.
        let java_bare = qualifier.is_none()
            && matches!(ctx.lang(), Some(crate::Lang::Java | crate::Lang::CSharp));
        let by_caller = java_bare
            || qualifier.is_some_and(|q| {
                (SELF_QUALIFIERS.contains(&crate::extract::split_qualified(q).1)
                    && !typed::is_typed_this(q, receiver))
                    || typed::is_super(q)
            });
        let key = (
            r.name.as_str(),
            qualifier,
            is_call,
            r.from.filter(|_| by_caller),
            is_macro,
            receiver,
            r.args,
            r.arg_types.as_deref(),
        );
        let supers = qualifier
            .filter(|q| typed::is_super(q))
            .and_then(|_| ctx.resolve_super(&r.name, r.from, &wanted))
            .or_else(|| {
                // `this.m()` where the class inherits `m`: the nearest base's.
                (by_caller && qualifier == Some("this"))
                    .then(|| ctx.resolve_inherited(&r.name, r.from, &wanted))
                    .flatten()
            })
            .or_else(|| {
                // Java's or C#'s bare `m()` where the class inherits `m`: the nearest base's.
                java_bare
                    .then(|| ctx.resolve_java_inherited(&r.name, r.from, &wanted))
                    .flatten()
            })
            .or_else(|| {
                // Python's `self.m()`: the class's hierarchy only.
                (by_caller && qualifier == Some("self"))
                    .then(|| ctx.resolve_on_python_self(&r.name, r.from, &wanted))
                    .flatten()
            });
        let targets = memo.entry(key).or_insert_with(|| {
            let mut by_receiver = false;
            let found = match receiver {
                _ if supers.is_some() => supers.unwrap_or_default(),
                Some(marker) if !by_caller && typed::is_callback_marker(marker) => {
                    ctx.resolve_on_callback(marker, &r.name, qualifier, r.from, &wanted)
                }
                // Rust: what a function the workspace does not define returned (a typed
                // receiver, `self.delay.as_mut()`, keeps its type).
                _ if !by_caller
                    && receiver.is_none_or(|r| r.ends_with("()"))
                    && qualifier.is_some_and(|q| ctx.is_foreign_call_result(q)) =>
                {
                    ctx.resolve_on_foreign(None, &r.name, &wanted)
                }
                Some(call) if !by_caller && call.ends_with("()") => {
                    ctx.resolve_on_result(call, &r.name, qualifier, r.from, &wanted)
                }
                Some(field) if !by_caller && static_fields::is_static_field(field) => {
                    ctx.resolve_on_static_field(field, &r.name, qualifier, r.from, &wanted)
                }
                // Kotlin: a bare call in an extension's body, on the extended type.
                Some(ty) if qualifier.is_none() && ctx.is_kotlin() => {
                    let (found, by_type) =
                        ctx.resolve_on_implicit_receiver(ty, &r.name, r.from, kind);
                    by_receiver = by_type;
                    found
                }
                Some(ty) if !by_caller => {
                    by_receiver = true;
                    ctx.resolve_on(ty, &r.name, qualifier, r.from, &wanted)
                }
                // C#: `File.Exists(p)`, a framework type's static member.
                None if let Some(found) =
                    ctx.resolve_on_cs_unknown_qualifier(qualifier, &r.name, r.from, &wanted) =>
                {
                    found
                }
                _ => ctx.resolve_kind(&r.name, qualifier, r.from, kind),
            };
            let arg_types = r.arg_types.as_deref();
            // C#: of a method's extension overloads, those extending the receiver's type
            // (`this`: the caller's class).
            let cs_receiver = match receiver {
                Some(ty) if ctx.is_csharp() && !by_caller => Some(ty),
                _ if qualifier == Some("this") => ctx.cs_this_type(r.from),
                _ => None,
            };
            let by_types = |s: &Sym| {
                let fits = match arg_types {
                    Some(a) if exact_arity => ctx.kotlin_args_may_fit(a, s),
                    Some(a) if is_cpp => ctx.cpp_overload_fits(a, &r.name, s),
                    _ => true,
                };
                fits && cs_receiver.is_none_or(|ty| ctx.cs_extends(ty, s))
            };
            overloads::choose(
                table,
                &r.name,
                r.args,
                by_receiver,
                exact_arity,
                &by_types,
                found,
            )
        });
        unresolved_refs += u32::from(targets.is_empty());
        for &(dst, confidence) in targets.iter() {
            edges.push(Edge {
                kind: if is_call {
                    EdgeKind::Calls
                } else {
                    EdgeKind::References
                },
                src_symbol: r.from,
                dst_file: Some(dst.file_id),
                dst_symbol: Some(dst.id),
                confidence,
                line: r.line,
            });
        }
    }
    for b in &f.bases {
        if deadline.passed_now() {
            return None;
        }
        let subject = match b.symbol {
            Some(id) => Some(id),
            None => ctx
                .resolve_kind(&b.subject, None, None, Wanted::Type)
                .first()
                .map(|(s, _)| s.id),
        };
        let Some(subject) = subject else { continue };
        let kind = if b.implements {
            EdgeKind::Implements
        } else {
            EdgeKind::Inherits
        };
        // Ruby mixins and PHP traits are modules or traits: any type-like or module target.
        let base_kind = |s: &Sym| s.kind.is_type() || s.kind == SymbolKind::Module;
        for (dst, confidence) in ctx.resolve(&b.name, b.qualifier.as_deref(), None, &base_kind) {
            if dst.id == subject {
                continue;
            }
            edges.push(Edge {
                kind,
                src_symbol: Some(subject),
                dst_file: Some(dst.file_id),
                dst_symbol: Some(dst.id),
                confidence,
                line: b.line,
            });
        }
    }
    // In the order of the edge table's key (src_file, kind, position), so a first index
    // appends to it.
    edges.sort_by_key(|e| e.kind.name());
    Some(ResolvedFile {
        file_id: f.file_id,
        edges,
        contains: f.own.len(),
        unresolved_refs,
        stopped: None,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn inputs() -> FileInputs {
        FileInputs {
            file_id: 7,
            own: Vec::new(),
            refs: Vec::new(),
            imports: Vec::new(),
            bases: Vec::new(),
        }
    }

    fn budget(ms: u64) -> FileBudget {
        FileBudget::new(Duration::from_millis(ms))
    }

    #[test]
    fn a_resolution_that_panics_is_stopped_not_fatal() {
        let f = inputs();
        let stopped = stopped_safely(&f, budget(10_000), |_| panic!("a resolver bug"));
        assert_eq!(stopped.file_id(), 7);
        assert!(stopped.edges.is_empty());
        let (reason, detail) = stopped.stopped.unwrap();
        assert_eq!(reason, SkipReason::Panic);
        assert!(detail.contains("a resolver bug"), "{detail}");
    }

    #[test]
    fn a_resolution_past_its_deadline_is_stopped_naming_the_budget() {
        let f = inputs();
        let started = std::time::Instant::now();
        let stopped = stopped_safely(&f, budget(30), |deadline| {
            while !deadline.passed() {
                std::hint::spin_loop();
            }
            None
        });
        assert!(started.elapsed() >= Duration::from_millis(30));
        let (reason, detail) = stopped.stopped.unwrap();
        assert_eq!(reason, SkipReason::Timeout);
        assert!(
            detail.contains("30ms") && detail.contains("index.fileBudgetMs"),
            "{detail}"
        );
    }

    #[test]
    fn a_resolution_within_its_budget_is_kept() {
        let f = inputs();
        let done = stopped_safely(&f, budget(10_000), |_| {
            Some(ResolvedFile {
                file_id: 7,
                edges: Vec::new(),
                contains: 0,
                unresolved_refs: 0,
                stopped: None,
            })
        });
        assert!(done.stopped.is_none());
    }
}
