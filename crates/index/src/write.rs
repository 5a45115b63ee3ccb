//! The single writer: applies parsed files and removals to the index in large
//! transactions, marking the files whose edges the change made stale in the same
//! transaction (so a crash never loses the need to re-resolve them).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use rusqlite::{Transaction, params};

use crate::extract::SymbolKind;
use crate::parse::Parsed;
use crate::resolve::Confidence;
use crate::trigram::TermsBuilder;
use crate::walk::Stat;

/// The edge kind from a definition to each definition directly inside it (from the file,
/// for top-level ones). It depends on the file alone, so it is written with the symbols;
/// its `dst_file` is NULL (the target is in `src_file`), which keeps it out of the index
/// of edges by target, where nothing looks it up.
pub(crate) const CONTAINS: &str = crate::vocab::EdgeKind::Contains.name();

/// A file row as stored (the fingerprint and its id).
#[derive(Clone)]
pub(crate) struct StoredFile {
    pub id: i64,
    pub stat: Stat,
    pub hash: Vec<u8>,
    /// Its facts came from other extractor rules than this build's (an older
    /// `files.extractor`): it is re-extracted even when unchanged.
    pub outdated: bool,
}

/// Old symbols of a file by (qualified name, kind), each with its id and name, in id order.
/// A changed file's definitions before the change: (qualified name, kind) → (id, name,
/// what other files' edges depend on besides the name: [`ResolvedBy`]).
type OldSymbols = HashMap<(String, String), VecDeque<(i64, String, ResolvedBy)>>;

/// A definition's facts other files' resolution reads: the type it returns (`x :=
/// New()`), the arguments it takes (which overload a call reaches) and the type it
/// extends (which extension a call on a typed receiver reaches), as stored.
type ResolvedBy = (Option<String>, Option<String>, Option<String>);

/// Writes one parsed file (new or changed), returning its file id and the ids of its
/// symbols (in the order of `file.facts.symbols`). Given a [`TermsBuilder`], its search
/// terms are written too (else a side build indexes its text).
///
/// A changed file keeps the ids of the definitions it still has (matched by qualified
/// name and kind, in order), so edges from other files into them stay valid; only the
/// names of definitions that appeared or disappeared go into `touched_names`, and only
/// files using those names need re-resolving. A first index, which resolves every file,
/// passes `None`.
pub(crate) fn write_parsed(
    tx: &Transaction<'_>,
    file: &Parsed,
    existing: Option<i64>,
    mut touched_names: Option<&mut HashSet<String>>,
    search_terms: Option<&mut TermsBuilder>,
) -> rusqlite::Result<(i64, Vec<i64>)> {
    if let Some(names) = touched_names.as_deref_mut() {
        bases_changed(tx, file, existing, names)?;
    }
    if let Some(names) = touched_names.as_deref_mut()
        && file.lang == crate::Lang::Rust
    {
        let new = file
            .facts
            .imports
            .iter()
            .map(|i| (i.module.clone(), i.name.clone(), i.alias.clone()))
            .collect();
        let old = match existing {
            Some(id) => rust_uses(tx, id)?,
            None => BTreeSet::new(),
        };
        reexports_changed(tx, &old, &new, names)?;
    }
    let (file_id, mut old) = match existing {
        Some(id) => {
            let old = old_symbols(tx, id)?;
            clear_file_facts(tx, id)?;
            tx.prepare_cached(
                "UPDATE files SET lang = ?2, size = ?3, mtime_ns = ?4, inode = ?5, hash = ?6, lossy = ?7,
                        lines = ?8, resolved = 0, extractor = ?9 WHERE id = ?1",
            )?
            .execute(params![
                id,
                file.lang.name(),
                file.stat.size as i64,
                file.stat.mtime_ns,
                file.stat.inode as i64,
                &file.hash[..],
                file.lossy,
                file.lines,
                crate::extract::version(file.lang)
            ])?;
            (id, old)
        }
        None => {
            tx.prepare_cached(
                "INSERT INTO files (path_bytes, path, lang, size, mtime_ns, inode, hash, lossy, lines, resolved,
                                    extractor)
                 VALUES (?1, ?9, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?10)",
            )?
            .execute(params![
                file.rel.as_bytes(),
                file.lang.name(),
                file.stat.size as i64,
                file.stat.mtime_ns,
                file.stat.inode as i64,
                &file.hash[..],
                file.lossy,
                file.lines,
                file.rel.display(),
                crate::extract::version(file.lang)
            ])?;
            (tx.last_insert_rowid(), OldSymbols::new())
        }
    };
    let facts = &file.facts;
    if let Some(names) = touched_names.as_deref_mut()
        && package_changed(file, &old)
    {
        // Java/Kotlin definitions keep their qualified names when their file's `package`
        // changes, so they keep their ids, but every reference to them may now reach
        // another package's: all their names are touched.
        names.extend(facts.symbols.iter().map(|s| s.name.clone()));
        names.extend(old.values().flatten().map(|(_, name, _)| name.clone()));
    }
    let mut ids: Vec<i64> = Vec::with_capacity(facts.symbols.len());
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO symbols (file_id, name, qualified_name, kind, signature, doc, start_line, start_col,
                                  end_line, start_byte, end_byte, parent_id, returns, params, receiver)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )?;
        let mut update = tx.prepare_cached(
            "UPDATE symbols SET name = ?2, signature = ?3, doc = ?4, start_line = ?5, start_col = ?6,
                    end_line = ?7, start_byte = ?8, end_byte = ?9, parent_id = ?10, returns = ?11,
                    params = ?12, receiver = ?13
              WHERE id = ?1",
        )?;
        for s in &facts.symbols {
            let parent = s.parent.and_then(|p| ids.get(p as usize).copied());
            let params = s.params.map(|a| a.to_text_with(s.param_types.as_deref()));
            let kept = match old.is_empty() {
                true => None,
                false => old
                    .get_mut(&(s.qualified_name.clone(), s.kind.name().to_string()))
                    .and_then(VecDeque::pop_front),
            };
            match kept {
                Some((id, _, old_resolved_by)) => {
                    update.execute(params![
                        id,
                        s.name,
                        s.signature,
                        s.doc,
                        s.span.start_line,
                        s.span.start_col,
                        s.span.end_line,
                        s.span.start_byte,
                        s.span.end_byte,
                        parent,
                        s.returns,
                        params,
                        s.receiver
                    ])?;
                    ids.push(id);
                    // `x := New()` elsewhere takes its type from what `New` returns, a
                    // call picks an overload by the arguments it takes and an extension
                    // by the type it extends.
                    if (old_resolved_by.0 != s.returns
                        || old_resolved_by.1 != params
                        || old_resolved_by.2 != s.receiver)
                        && let Some(names) = touched_names.as_deref_mut()
                    {
                        names.insert(s.name.clone());
                    }
                }
                None => {
                    insert.execute(params![
                        file_id,
                        s.name,
                        s.qualified_name,
                        s.kind.name(),
                        s.signature,
                        s.doc,
                        s.span.start_line,
                        s.span.start_col,
                        s.span.end_line,
                        s.span.start_byte,
                        s.span.end_byte,
                        parent,
                        s.returns,
                        params,
                        s.receiver
                    ])?;
                    ids.push(tx.last_insert_rowid());
                    if let Some(names) = touched_names.as_deref_mut() {
                        names.insert(s.name.clone());
                    }
                }
            }
        }
        // Definitions that disappeared.
        let mut delete = tx.prepare_cached("DELETE FROM symbols WHERE id = ?1")?;
        for (id, name, _) in old.into_values().flatten() {
            delete.execute([id])?;
            if let Some(names) = touched_names.as_deref_mut() {
                names.insert(name);
            }
        }
    }
    let symbol_id = |i: Option<u32>| i.and_then(|i| ids.get(i as usize).copied());
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO edges (src_file, kind, seq, src_symbol, dst_file, dst_symbol, confidence, line)
             VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, 0)",
        )?;
        for (seq, (s, id)) in facts.symbols.iter().zip(&ids).enumerate() {
            insert.execute(params![
                file_id,
                CONTAINS,
                seq as i64,
                symbol_id(s.parent),
                id,
                Confidence::Exact.name()
            ])?;
        }
    }
    crate::counts::replace_counts(
        tx,
        file_id,
        "symbol_kind",
        facts.symbols.iter().map(|s| s.kind.name()),
    )?;
    crate::stored_refs::write(tx, file_id, &facts.refs, symbol_id)?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO imports (file_id, module, name, alias, line) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for i in &facts.imports {
            insert.execute(params![file_id, i.module, i.name, i.alias, i.line])?;
        }
    }
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO bases (file_id, symbol_id, subject, name, qualifier, kind, line)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for b in &facts.bases {
            let kind = match b.kind {
                crate::extract::BaseKind::Inherits => "inherits",
                crate::extract::BaseKind::Implements => "implements",
            };
            insert.execute(params![
                file_id,
                symbol_id(b.symbol),
                b.subject,
                b.name,
                b.qualifier,
                kind,
                b.line
            ])?;
        }
    }
    if let Some(builder) = search_terms {
        let terms = builder.document_terms(&file.text);
        loci_store::search_index::insert_terms(tx, file_id, &terms)?;
    }
    Ok((file_id, ids))
}

/// Updates only the stat part of a fingerprint (content unchanged).
pub(crate) fn write_touched(tx: &Transaction<'_>, id: i64, stat: Stat) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3, inode = ?4 WHERE id = ?1")?
        .execute(params![
            id,
            stat.size as i64,
            stat.mtime_ns,
            stat.inode as i64
        ])?;
    Ok(())
}

/// Removes a file and everything it owns.
pub(crate) fn remove_file(
    tx: &Transaction<'_>,
    id: i64,
    touched_names: &mut HashSet<String>,
) -> rusqlite::Result<()> {
    collect_names(tx, id, touched_names)?;
    let uses = rust_uses(tx, id)?;
    reexports_changed(tx, &uses, &BTreeSet::new(), touched_names)?;
    clear_file(tx, id)?;
    tx.prepare_cached("DELETE FROM files WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

fn old_symbols(tx: &Transaction<'_>, file_id: i64) -> rusqlite::Result<OldSymbols> {
    let mut stmt = tx.prepare_cached(
        "SELECT id, name, qualified_name, kind, returns, params, receiver FROM symbols WHERE file_id = ?1 ORDER BY id",
    )?;
    let mut out = OldSymbols::new();
    let rows = stmt.query_map([file_id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            (r.get(4)?, r.get(5)?, r.get(6)?),
        ))
    })?;
    for row in rows {
        let (id, name, qualified, kind, resolved_by): (i64, String, String, String, ResolvedBy) =
            row?;
        out.entry((qualified, kind))
            .or_default()
            .push_back((id, name, resolved_by));
    }
    Ok(out)
}

/// Deletes a file's references, imports, bases, outgoing edges and text index row (not its symbols).
fn clear_file_facts(tx: &Transaction<'_>, file_id: i64) -> rusqlite::Result<()> {
    for sql in [
        "DELETE FROM edges WHERE src_file = ?1",
        "DELETE FROM file_refs WHERE file_id = ?1",
        "DELETE FROM ref_names WHERE file_id = ?1",
        "DELETE FROM imports WHERE file_id = ?1",
        "DELETE FROM bases WHERE file_id = ?1",
        "DELETE FROM code_fts WHERE rowid = ?1",
        "DELETE FROM file_counts WHERE file_id = ?1 AND what != 'symbol_kind'",
    ] {
        tx.prepare_cached(sql)?.execute([file_id])?;
    }
    Ok(())
}

/// A type's bases decide which members a receiver of that type reaches: the subjects
/// whose bases the file changes go into `touched_names` (files whose references have
/// such a receiver use that name).
fn bases_changed(
    tx: &Transaction<'_>,
    file: &Parsed,
    existing: Option<i64>,
    touched_names: &mut HashSet<String>,
) -> rusqlite::Result<()> {
    // The qualifier counts: Kotlin's `Annotated.Builder` and `Documented.Builder` are
    // different bases of one name.
    let new: BTreeSet<(String, String, Option<String>)> = file
        .facts
        .bases
        .iter()
        .map(|b| (b.subject.clone(), b.name.clone(), b.qualifier.clone()))
        .collect();
    let old: BTreeSet<(String, String, Option<String>)> = match existing {
        Some(id) => tx
            .prepare_cached("SELECT subject, name, qualifier FROM bases WHERE file_id = ?1")?
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?,
        None => BTreeSet::new(),
    };
    for (subject, _, _) in old.symmetric_difference(&new) {
        touched_names.insert(subject.clone());
    }
    Ok(())
}

/// Whether a Java/Kotlin file's `package` is not the one its stored definitions had.
fn package_changed(file: &Parsed, old: &OldSymbols) -> bool {
    if !matches!(file.lang, crate::Lang::Java | crate::Lang::Kotlin) || old.is_empty() {
        return false;
    }
    let module = SymbolKind::Module.name();
    let new: BTreeSet<&str> = file
        .facts
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Module)
        .map(|s| s.qualified_name.as_str())
        .collect();
    let before: BTreeSet<&str> = old
        .keys()
        .filter(|(_, kind)| kind == module)
        .map(|(qualified, _)| qualified.as_str())
        .collect();
    new != before
}

/// A Rust file's `use`s as (module, name, alias); none for a file in another language.
type Uses = BTreeSet<(String, Option<String>, Option<String>)>;

fn rust_uses(tx: &Transaction<'_>, file_id: i64) -> rusqlite::Result<Uses> {
    let mut stmt = tx.prepare_cached(
        "SELECT i.module, i.name, i.alias FROM imports i JOIN files f ON f.id = i.file_id
         WHERE i.file_id = ?1 AND f.lang = ?2",
    )?;
    stmt.query_map(params![file_id, crate::Lang::Rust.name()], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?
    .collect()
}

/// A Rust file's `use`s are what it re-exports to the paths of other files (`pub use
/// sync::run` in `lib.rs` is what `my_crate::run()` resolves through): the names a
/// changed `use` binds go into `touched_names`, and a changed glob `use`, which can
/// bring in any name, or a changed `#[path]` module declaration, marks every Rust file.
fn reexports_changed(
    tx: &Transaction<'_>,
    old: &Uses,
    new: &Uses,
    touched_names: &mut HashSet<String>,
) -> rusqlite::Result<()> {
    let mut glob = false;
    for (module, name, alias) in old.symmetric_difference(new) {
        // A `#[path]` module declaration (its module is a file path) moves a module to
        // another file: any Rust path through it may now reach other definitions.
        if module.contains('/') {
            glob = true;
            continue;
        }
        match (alias, name.as_deref()) {
            (Some(alias), _) => {
                touched_names.insert(alias.clone());
            }
            (None, None | Some("*")) => glob = true,
            (None, Some(name)) => {
                touched_names.insert(name.to_string());
            }
        }
    }
    if glob {
        tx.prepare_cached("UPDATE files SET resolved = 0 WHERE resolved = 1 AND lang = ?1")?
            .execute([crate::Lang::Rust.name()])?;
    }
    Ok(())
}

fn collect_names(
    tx: &Transaction<'_>,
    file_id: i64,
    names: &mut HashSet<String>,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "SELECT name FROM symbols WHERE file_id = ?1 UNION SELECT subject FROM bases WHERE file_id = ?1",
    )?;
    let rows = stmt.query_map([file_id], |r| r.get::<_, String>(0))?;
    for name in rows {
        names.insert(name?);
    }
    Ok(())
}

fn clear_file(tx: &Transaction<'_>, file_id: i64) -> rusqlite::Result<()> {
    clear_file_facts(tx, file_id)?;
    for sql in [
        "DELETE FROM symbols WHERE file_id = ?1",
        "DELETE FROM file_counts WHERE file_id = ?1",
    ] {
        tx.prepare_cached(sql)?.execute([file_id])?;
    }
    Ok(())
}

/// Marks the files with edges into a file for re-resolution (found through `edges_in`).
pub(crate) const INTO_FILE_SQL: &str = "UPDATE files SET resolved = 0
     WHERE resolved = 1 AND id IN (SELECT src_file FROM edges WHERE dst_file = ?1)";

/// Marks for re-resolution, in the caller's transaction, every file whose edges could
/// change: files using a name in `names` (definitions that appeared or disappeared),
/// files with edges into a `removed` file (a removal changes no other file's import
/// targets), and files whose imports may name one of the `added` paths (by its module
/// or its directory: a package import reaches every file in it).
pub(crate) fn mark_stale(
    tx: &Transaction<'_>,
    names: &HashSet<String>,
    removed: &[i64],
    added: &[String],
) -> rusqlite::Result<()> {
    if !names.is_empty() {
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS stale_names (name TEXT PRIMARY KEY) WITHOUT ROWID;
             DELETE FROM stale_names;",
        )?;
        {
            let mut insert =
                tx.prepare_cached("INSERT OR IGNORE INTO stale_names (name) VALUES (?1)")?;
            for n in names {
                insert.execute([n])?;
            }
        }
        tx.execute_batch(
            "UPDATE files SET resolved = 0 WHERE resolved = 1 AND id IN (
                 SELECT file_id FROM ref_names WHERE name IN (SELECT name FROM stale_names)
                 UNION SELECT file_id FROM imports WHERE name IN (SELECT name FROM stale_names)
                 UNION SELECT file_id FROM imports WHERE alias IN (SELECT name FROM stale_names)
                 UNION SELECT file_id FROM bases WHERE name IN (SELECT name FROM stale_names)
                 UNION SELECT file_id FROM bases WHERE subject IN (SELECT name FROM stale_names));
             DELETE FROM stale_names;",
        )?;
    }
    // A Java/Kotlin package (a touched name with a dot: its Module definition appeared or
    // disappeared) changes what `import a.b.*` names.
    let mut on_demand = tx.prepare_cached(
        "UPDATE files SET resolved = 0 WHERE resolved = 1 AND id IN (
             SELECT file_id FROM imports WHERE name IS NULL AND module = ?1)",
    )?;
    for package in names.iter().filter(|n| n.contains('.')) {
        on_demand.execute([package])?;
    }
    let mut into_removed = tx.prepare_cached(INTO_FILE_SQL)?;
    for id in removed {
        into_removed.execute([id])?;
    }
    if !added.is_empty() {
        let mut mark =
            tx.prepare_cached("UPDATE files SET resolved = 0 WHERE id = ?1 AND resolved = 1")?;
        for id in crate::resolve::importers_of(tx, added)? {
            mark.execute([id])?;
        }
    }
    Ok(())
}
