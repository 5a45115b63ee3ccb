//! Reading resolution's inputs from the index, and writing its edges back.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::rows::{BaseRow, FileInputs, ImportRow, RefRow};
use super::rust_paths::Use;
use super::table::{ImportPattern, file_lookup_keys, import_lookup_keys};
use super::{Confidence, ResolvedFile, Sym, SymbolTable, TableBuilder};
use crate::extract::{RefKind, SymbolKind};
use crate::stored_refs;
use crate::vocab::EdgeKind;

/// The `symbols` rows [`row_to_sym`] reads, in its column order, with `$filter` (a
/// `WHERE` and `ORDER BY`) after them: one column list for the three loads.
macro_rules! sym_rows {
    ($filter:literal) => {
        concat!(
            "SELECT s.id, s.file_id, s.name, s.qualified_name, s.kind, s.parent_id, s.returns, ",
            "s.params, p.kind = 'trait', s.receiver FROM symbols s ",
            "LEFT JOIN symbols p ON p.id = s.parent_id",
            $filter
        )
    };
}

/// Ids of the files whose edges must be recomputed.
pub(crate) fn stale_files(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    let mut stmt = conn.prepare("SELECT id FROM files WHERE resolved = 0 ORDER BY id")?;
    stmt.query_map([], |r| r.get(0))?.collect()
}

/// Files with an import that can name one of the `added` paths (by its module name or
/// its directory's, as [`SymbolTable::files_for_module`] matches them): the imports whose
/// targets adding the files can change. One pass over the imports, whatever the number
/// of files added; only imports sharing a lookup key with an added file are looked at
/// further.
pub(crate) fn importers_of(conn: &Connection, added: &[String]) -> rusqlite::Result<Vec<i64>> {
    let mut by_key: HashMap<String, Vec<&str>> = HashMap::new();
    for path in added {
        for key in file_lookup_keys(path) {
            by_key.entry(key).or_default().push(path);
        }
    }
    if by_key.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached("SELECT file_id, module, name FROM imports")?;
    let mut rows = stmt.query([])?;
    let mut importers = Vec::new();
    while let Some(row) = rows.next()? {
        let file_id: i64 = row.get(0)?;
        if importers.last() == Some(&file_id) {
            continue;
        }
        let module = row.get_ref(1)?.as_str()?;
        let name = row.get_ref(2)?.as_str_or_null()?;
        let mut paths = import_lookup_keys(module, name)
            .into_iter()
            .flatten()
            .filter_map(|key| by_key.get(key))
            .flatten()
            .peekable();
        if paths.peek().is_none() {
            continue;
        }
        let pattern = ImportPattern::new(module, name);
        if paths.any(|path| pattern.may_name(path)) {
            importers.push(file_id);
        }
    }
    importers.sort_unstable();
    importers.dedup();
    Ok(importers)
}

/// Loads the refs, imports, bases and own symbols of the first of `file_ids`: as many
/// as hold `max_refs` references together (at least one file), so that one chunk's
/// inputs and edges take about the same memory however large its files are.
pub(crate) fn load_inputs(
    conn: &Connection,
    file_ids: &[i64],
    max_refs: usize,
) -> rusqlite::Result<Vec<FileInputs>> {
    let mut inputs = Vec::new();
    let mut refs_loaded = 0;
    {
        let mut own_stmt = conn.prepare_cached(sym_rows!(" WHERE s.file_id = ?1 ORDER BY s.id"))?;
        let mut refs_stmt = conn.prepare_cached("SELECT data FROM file_refs WHERE file_id = ?1")?;
        let mut imports_stmt = conn.prepare_cached(
            "SELECT module, name, alias, line FROM imports WHERE file_id = ?1 ORDER BY id",
        )?;
        let mut bases_stmt = conn.prepare_cached(
            "SELECT symbol_id, subject, name, qualifier, kind, line FROM bases WHERE file_id = ?1 ORDER BY id",
        )?;
        for &file_id in file_ids {
            if refs_loaded >= max_refs {
                break;
            }
            let own = own_stmt
                .query_map([file_id], row_to_sym)?
                .filter_map(|s| s.ok().map(|(_, s)| s))
                .collect();
            let blob: Option<Vec<u8>> = refs_stmt.query_row([file_id], |r| r.get(0)).optional()?;
            let refs = match &blob {
                Some(blob) => stored_refs::decode(blob, 0)?
                    .into_iter()
                    .map(|r| RefRow {
                        from: r.from,
                        name: r.name.to_string(),
                        qualifier: r.qualifier.map(str::to_string),
                        is_call: r.kind != RefKind::TypeUse,
                        is_macro: r.kind == RefKind::Macro,
                        line: i64::from(r.line),
                        receiver: r.receiver.map(str::to_string),
                        args: r.args,
                        arg_types: r.arg_types.map(str::to_string),
                    })
                    .collect(),
                None => Vec::new(),
            };
            let imports = imports_stmt
                .query_map([file_id], |r| {
                    Ok(ImportRow {
                        module: r.get(0)?,
                        name: r.get(1)?,
                        alias: r.get(2)?,
                        line: r.get(3)?,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?;
            let bases = bases_stmt
                .query_map([file_id], |r| {
                    Ok(BaseRow {
                        symbol: r.get(0)?,
                        subject: r.get(1)?,
                        name: r.get(2)?,
                        qualifier: r.get(3)?,
                        implements: r.get_ref(4)?.as_str()? == "implements",
                        line: r.get(5)?,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?;
            refs_loaded += refs.len();
            inputs.push(FileInputs {
                file_id,
                own,
                refs,
                imports,
                bases,
            });
        }
    }
    Ok(inputs)
}

/// What resolving some files looks up first (for a partial symbol table);
/// [`load_symbols`] adds what those names lead to.
#[derive(Debug, Default)]
pub(crate) struct Needed<'a> {
    /// The names, sorted and without repeats.
    names: Vec<&'a str>,
    /// Among them, the names whose definitions' declared types resolution looks up too
    /// (sorted): the fields of static-field receivers (`IsoChronology#INSTANCE`, each
    /// field of a chain `Type#a#b`), whose type decides the call's candidates.
    typed_fields: Vec<&'a str>,
}

impl<'a> Needed<'a> {
    /// Just `names`, none of them a typed field.
    pub(crate) fn names(names: &[&'a str]) -> Needed<'a> {
        let mut names = names.to_vec();
        names.sort_unstable();
        names.dedup();
        Needed {
            names,
            typed_fields: Vec::new(),
        }
    }

    /// The names of `inputs`: the names referenced and every identifier of their
    /// qualifiers, receivers and argument types (`Handle::current()`, `new C(@0.1)`,
    /// `b2Cross(v, s)` passing a `float32`: overloads, `super::cpp_overloads`), of the
    /// imports and bases, and of the files' own definitions (the classes their methods
    /// are in).
    pub(crate) fn of(inputs: &'a [FileInputs]) -> Needed<'a> {
        let mut names: Vec<&str> = Vec::new();
        let mut typed_fields: Vec<&str> = Vec::new();
        for f in inputs {
            for r in &f.refs {
                names.push(&r.name);
                for text in [&r.qualifier, &r.receiver, &r.arg_types]
                    .into_iter()
                    .flatten()
                {
                    names.extend(identifiers(text));
                }
                if let Some(receiver) = r.receiver.as_deref()
                    && super::static_fields::is_static_field(receiver)
                {
                    typed_fields.extend(receiver.split('#').skip(1));
                }
            }
            for i in &f.imports {
                names.extend(identifiers(&i.module));
                names.extend(i.name.as_deref().into_iter().chain(i.alias.as_deref()));
            }
            for b in &f.bases {
                names.extend(identifiers(&b.name));
                names.extend(identifiers(&b.subject));
            }
            for s in &f.own {
                names.extend(identifiers(&s.qualified_name));
            }
        }
        // Looked up by that name: a class's constructor (`new C(cb)` types `cb`'s parameters).
        names.push("constructor");
        // And a class's conversion operators, when a call's argument types choose
        // between C++ overloads (`scale(level, 1)`: `Level::operator float`).
        if inputs
            .iter()
            .any(|f| f.refs.iter().any(|r| r.arg_types.is_some()))
        {
            names.extend(super::cpp_overloads::CONVERSIONS);
        }
        typed_fields.sort_unstable();
        typed_fields.dedup();
        let mut needed = Needed::names(&names);
        needed.typed_fields = typed_fields;
        needed
    }

    /// Whether the declared types of `name`'s definitions are looked up: a typed field.
    fn is_typed_field(&self, name: &str) -> bool {
        self.typed_fields.binary_search(&name).is_ok()
    }
}

/// The types definition `sym` leads resolution to look up: those its callbacks'
/// parameters are declared with (`operate(cb)`, typing `cb`'s parameters), and its own
/// type when it is a typed field ([`Needed::is_typed_field`]). What a function returns
/// is never looked up: a call's result is matched against its candidates' owners by the
/// type's name alone ([`super::call_results`]).
fn types_declared_by(sym: &Sym, typed_field: bool) -> impl Iterator<Item = &str> {
    let text = sym.returns.as_deref().unwrap_or_default();
    let (declared, callbacks) = text.split_once(';').unwrap_or((text, ""));
    identifiers(if typed_field { declared } else { "" }).chain(identifiers(callbacks))
}

/// The identifiers in a written qualifier, receiver, type or path.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|t| t.chars().next().is_some_and(|c| !c.is_ascii_digit()))
}

/// Loads the symbols named `names` (every symbol with `None`) and all file paths. A run
/// that re-resolves most files loads the whole table once for all its chunks; one that
/// resolves in chunks loads the rest once and each chunk's names with [`load_symbols`].
pub(crate) fn load_table(
    conn: &Connection,
    names: Option<&[&str]>,
) -> rusqlite::Result<SymbolTable> {
    let mut table = TableBuilder::default();
    table.set_crates(crate::crates::load(conn)?);
    table.set_module_configs(crate::module_configs::load(conn)?);
    // Every Rust file's `use`s, for following re-exports.
    for (file_id, u) in load_rust_uses(conn)? {
        table.add_use(file_id, u);
    }
    for (file_id, qualified, start, end) in load_rust_inline_modules(conn)? {
        table.add_rust_inline(file_id, &qualified, start, end);
    }
    // From the files (`CROSS JOIN` keeps that order): left to itself SQLite scans every
    // symbol, a cost each sync paid even in a tree without one Java file.
    let mut stmt = conn.prepare_cached(
        "SELECT s.file_id, s.qualified_name FROM files f CROSS JOIN symbols s ON s.file_id = f.id
         WHERE f.lang IN (?1, ?2) AND s.kind = ?3 AND s.parent_id IS NULL",
    )?;
    let packages = stmt.query_map(
        params![
            crate::Lang::Java.name(),
            crate::Lang::Kotlin.name(),
            SymbolKind::Module.name()
        ],
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
    )?;
    for row in packages {
        let (file_id, package) = row?;
        table.set_java_package(file_id, &package);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT b.subject, b.name, b.qualifier, s.qualified_name, f.path FROM bases b
         JOIN files f ON f.id = b.file_id LEFT JOIN symbols s ON s.id = b.symbol_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, String>(4)?,
        ))
    })?;
    for row in rows {
        let (subject, name, qualifier, subject_path, path) = row?;
        table.add_base_written(super::kotlin_bases::WrittenBase {
            kotlin: super::kotlin_bases::is_kotlin_path(&path),
            subject: &subject,
            subject_path: subject_path.as_deref(),
            name: &name,
            qualifier: qualifier.as_deref(),
        });
    }
    if names.is_none() {
        let mut stmt = conn.prepare(sym_rows!(""))?;
        for row in stmt.query_map([], row_to_sym)? {
            let (name, sym) = row?;
            table.add_symbol(name, sym);
        }
    }
    let mut stmt = conn.prepare("SELECT id, path FROM files")?;
    for row in stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
        let (id, path) = row?;
        table.add_file(id, &path);
    }
    let mut table = table.build();
    if let Some(names) = names {
        load_symbols(conn, &mut table, &Needed::names(names), usize::MAX)?;
    }
    Ok(table)
}

/// Replaces `table`'s definitions with those of `needed`'s names and of every name they
/// lead resolution to: the names they stand for through aliased `use`s (`pub use a::X as
/// Y` makes `X` needed for `Y`), their types' bases, and the types they declare for
/// callbacks and typed fields ([`types_declared_by`], followed
/// [`super::call_results::MAX_RESULT_HOPS`] deep). One chunk's worth: resolution's memory
/// follows the chunk, not the tree, and the chunk links what one table of every name
/// would.
///
/// The names the table already holds (the previous chunk's) that this chunk needs too
/// are kept, not read again: consecutive chunks share their popular names (`new`,
/// `fmt`, `get`), whose definitions grow with the tree and were most of every load. So
/// are, within the budget, the names it does not need ([`Leftovers`]).
///
/// Stops at more than `max_symbols` definitions, not [`Loaded::fits`], the table then
/// holding part of what the names lead to: the caller resolves fewer files at once,
/// whose names are among these, instead of holding them all.
pub(crate) fn load_symbols(
    conn: &Connection,
    table: &mut SymbolTable,
    needed: &Needed<'_>,
    max_symbols: usize,
) -> rusqlite::Result<Loaded> {
    let mut stmt = conn.prepare_cached(sym_rows!(" WHERE s.name = ?1"))?;
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut frontier = needed_with_aliases_and_bases(table, &needed.names);
    let mut previous = Leftovers::new(table.take_symbols(), &frontier);
    let mut by_name: super::sym::SymbolsByName = Default::default();
    let mut loaded = Loaded {
        fits: true,
        read: 0,
        kept: 0,
    };
    // Each round loads the names the previous one led to; declared types are followed
    // as deep as resolution follows calls, aliases and bases to the end (both finite).
    'rounds: for round in 0.. {
        if round > 0 {
            frontier = needed_with_aliases_and_bases(table, &frontier);
        }
        frontier.retain(|n| !seen.contains(n));
        if frontier.is_empty() {
            break;
        }
        let mut next = Vec::new();
        for name in frontier.drain(..) {
            let defs = match previous.take(&name) {
                Some(defs) => {
                    loaded.kept += defs.len();
                    defs
                }
                None => {
                    let mut defs = Vec::new();
                    for row in stmt.query_map([&name], row_to_sym)? {
                        defs.push(row?.1);
                    }
                    table.order(&mut defs);
                    loaded.read += defs.len();
                    previous.make_room(loaded.read + loaded.kept, max_symbols);
                    defs
                }
            };
            if round <= super::call_results::MAX_RESULT_HOPS {
                let typed_field = needed.is_typed_field(&name);
                for sym in &defs {
                    next.extend(types_declared_by(sym, typed_field).map(str::to_owned));
                }
            }
            if !defs.is_empty() {
                by_name.insert(name.clone(), defs);
            }
            if loaded.read + loaded.kept > max_symbols {
                loaded.fits = false;
                break 'rounds;
            }
            seen.insert(name);
        }
        frontier = next;
    }
    previous.make_room(loaded.read + loaded.kept, max_symbols);
    by_name.extend(previous.defs);
    table.set_ordered_symbols(by_name);
    Ok(loaded)
}

/// The previous load's definitions while the next one is built. Those of a name the
/// new load needs are taken as it reaches them; the others stay while the table has
/// room, so that the files a crowded chunk leaves to the next chunk (and a retry with
/// fewer files) find their names still there. A name resolution does not look up is
/// never read from the table, so what else it holds changes no edge.
struct Leftovers {
    defs: super::sym::SymbolsByName,
    /// The names the new load does not need first, in the reverse order of their
    /// dropping when room is needed.
    droppable: Vec<String>,
    /// How many definitions `defs` holds.
    held: usize,
}

impl Leftovers {
    fn new(defs: super::sym::SymbolsByName, needed_first: &[String]) -> Leftovers {
        let mut droppable: Vec<String> = defs
            .keys()
            .filter(|name| needed_first.binary_search(name).is_err())
            .cloned()
            .collect();
        droppable.sort_unstable_by(|a, b| b.cmp(a));
        let held = defs.values().map(Vec::len).sum();
        Leftovers {
            defs,
            droppable,
            held,
        }
    }

    /// Takes out the definitions of `name`, if held.
    fn take(&mut self, name: &str) -> Option<Vec<Sym>> {
        let defs = self.defs.remove(name)?;
        self.held -= defs.len();
        Some(defs)
    }

    /// Drops names the load does not need until `loaded` and what is still held are at
    /// most `max` (never two tables at once).
    fn make_room(&mut self, loaded: usize, max: usize) {
        while loaded.saturating_add(self.held) > max
            && let Some(name) = self.droppable.pop()
        {
            if let Some(defs) = self.defs.remove(&name) {
                self.held -= defs.len();
            }
        }
    }
}

/// What [`load_symbols`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Loaded {
    /// Whether every definition the names lead to is in the table, within the budget.
    pub(crate) fits: bool,
    /// Definitions read from the index.
    pub(crate) read: usize,
    /// Definitions kept from the table's previous load.
    pub(crate) kept: usize,
}

/// `names`, the names they stand for through aliased `use`s and their types' bases,
/// sorted and without repeats.
fn needed_with_aliases_and_bases(table: &SymbolTable, names: &[impl AsRef<str>]) -> Vec<String> {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    let mut needed: Vec<String> = with_reexported_names(&names, table.rust.uses.values().flatten())
        .into_iter()
        .map(str::to_owned)
        .collect();
    needed.extend(base_closure(table, &needed));
    needed.sort_unstable();
    needed.dedup();
    needed
}

/// The bases of `names`' types, and theirs, by name.
fn base_closure(table: &SymbolTable, names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut todo: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut seen: std::collections::HashSet<&str> = todo.iter().copied().collect();
    while let Some(name) = todo.pop() {
        for base in table.bases.get(name).into_iter().flatten() {
            for id in identifiers(base) {
                if seen.insert(id) {
                    out.push(id.to_owned());
                    todo.push(id);
                }
            }
        }
    }
    out
}

fn load_rust_uses(conn: &Connection) -> rusqlite::Result<Vec<(i64, Use)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT i.file_id, i.module, i.name, i.alias, i.line FROM imports i JOIN files f ON f.id = i.file_id
         WHERE f.lang = ?1 ORDER BY i.id",
    )?;
    stmt.query_map([crate::Lang::Rust.name()], |r| {
        Ok((
            r.get(0)?,
            Use::new(r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?),
        ))
    })?
    .collect()
}

/// Every Rust file's inline `mod m { .. }` blocks: (file, qualified name, first and last
/// line). Only the symbols of the files whose counts (`file_counts`, written with their
/// symbols) have a module are read: scanning every symbol for the few modules was most
/// of a one-file sync's resolution.
fn load_rust_inline_modules(conn: &Connection) -> rusqlite::Result<Vec<(i64, String, i64, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.file_id, s.qualified_name, s.start_line, s.end_line
         FROM files f CROSS JOIN file_counts c CROSS JOIN symbols s
         WHERE f.lang = ?1 AND c.file_id = f.id AND c.what = 'symbol_kind' AND c.key = ?2
           AND s.file_id = f.id AND s.kind = ?2",
    )?;
    stmt.query_map(
        params![crate::Lang::Rust.name(), SymbolKind::Module.name()],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?
    .collect()
}

/// `names` and the names they stand for through aliased `use`s, to a fixpoint: what a
/// lookup that follows re-exports can ask the table for.
fn with_reexported_names<'n>(
    names: &[&'n str],
    uses: impl Iterator<Item = &'n Use> + Clone,
) -> Vec<&'n str> {
    let mut all: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    loop {
        let before = all.len();
        for u in uses.clone() {
            if let (Some(alias), Some(name)) = (u.alias.as_deref(), u.name.as_deref())
                && all.contains(alias)
            {
                all.insert(name);
            }
        }
        if all.len() == before {
            return all.into_iter().collect();
        }
    }
}

fn row_to_sym(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Sym)> {
    let kind: String = r.get(4)?;
    let name: String = r.get(2)?;
    let qualified_name: String = r.get(3)?;
    // `2(String,Int)`: the arity, and the parameter types after it, read once.
    let params = r.get_ref(7)?.as_str_or_null()?;
    let sym = Sym {
        id: r.get(0)?,
        file_id: r.get(1)?,
        owner: Sym::owner_of(&qualified_name, &name),
        qualified_name,
        kind: SymbolKind::from_name(&kind).unwrap_or(SymbolKind::Function),
        parent: r.get(5)?,
        returns: r.get(6)?,
        params: params.and_then(crate::extract::Arity::parse),
        param_types: params
            .and_then(crate::extract::Arity::types_in)
            .map(Box::from),
        in_trait: r.get::<_, Option<bool>>(8)?.unwrap_or(false),
        receiver: r.get_ref(9)?.as_str_or_null()?.map_or(0, Sym::receiver_key),
    };
    Ok((name, sym))
}

/// Replaces the resolved edges (all but `CONTAINS`) of each file and marks it resolved
/// (with its count of unresolved references), in one transaction.
/// With `fresh`, the edge table held nothing for these files (a first index), so the
/// per-file delete is skipped.
pub(crate) fn write_edges(
    conn: &mut Connection,
    resolved: &[ResolvedFile],
    fresh: bool,
) -> rusqlite::Result<usize> {
    let tx = conn.transaction()?;
    let mut total = 0;
    {
        let mut delete =
            tx.prepare_cached("DELETE FROM edges WHERE src_file = ?1 AND kind != 'CONTAINS'")?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO edges (kind, src_file, seq, src_symbol, dst_file, dst_symbol, confidence, line)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let mut done =
            tx.prepare_cached("UPDATE files SET resolved = 1, unresolved_refs = ?2 WHERE id = ?1")?;
        for ResolvedFile {
            file_id,
            edges,
            contains,
            unresolved_refs,
            stopped: _,
        } in resolved
        {
            if !fresh {
                delete.execute([file_id])?;
            }
            for (seq, e) in edges.iter().enumerate() {
                insert.execute(params![
                    e.kind.name(),
                    file_id,
                    seq as i64,
                    e.src_symbol,
                    e.dst_file,
                    e.dst_symbol,
                    e.confidence.name(),
                    e.line
                ])?;
            }
            total += edges.len();
            done.execute(params![file_id, unresolved_refs])?;
            let contained =
                || std::iter::repeat_n((EdgeKind::Contains, Confidence::Exact), *contains);
            let all = || {
                edges
                    .iter()
                    .map(|e| (e.kind, e.confidence))
                    .chain(contained())
            };
            crate::counts::replace_counts(
                &tx,
                *file_id,
                "edge_kind",
                all().map(|(kind, _)| kind.name()),
            )?;
            crate::counts::replace_counts(
                &tx,
                *file_id,
                "confidence",
                all().map(|(_, confidence)| confidence.name()),
            )?;
        }
    }
    tx.commit()?;
    Ok(total)
}
