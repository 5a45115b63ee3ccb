//! The single writer: applies parsed files and removals to the index in large
//! transactions, marking the files whose edges the change made stale in the same
//! transaction (so a crash never loses the need to re-resolve them).

use std::collections::HashSet;

use rusqlite::{Transaction, params};

use crate::parse::Parsed;
use crate::walk::Stat;

/// A file row as stored (the fingerprint and its id).
#[derive(Clone)]
pub(crate) struct StoredFile {
    pub id: i64,
    pub stat: Stat,
    pub hash: Vec<u8>,
}

/// Writes one parsed file (new or changed), returning its file id. Names whose definitions
/// were removed or added are pushed into `touched_names`.
pub(crate) fn write_parsed(
    tx: &Transaction<'_>,
    file: &Parsed,
    existing: Option<i64>,
    touched_names: &mut HashSet<String>,
) -> rusqlite::Result<i64> {
    let file_id = match existing {
        Some(id) => {
            collect_names(tx, id, touched_names)?;
            clear_file(tx, id)?;
            tx.prepare_cached(
                "UPDATE files SET lang = ?2, size = ?3, mtime_ns = ?4, inode = ?5, hash = ?6, lossy = ?7,
                        lines = ?8, resolved = 0 WHERE id = ?1",
            )?
            .execute(params![
                id,
                file.lang.name(),
                file.stat.size as i64,
                file.stat.mtime_ns,
                file.stat.inode as i64,
                &file.hash[..],
                file.lossy,
                file.lines
            ])?;
            id
        }
        None => {
            tx.prepare_cached(
                "INSERT INTO files (path, lang, size, mtime_ns, inode, hash, lossy, lines, resolved)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)",
            )?
            .execute(params![
                file.rel,
                file.lang.name(),
                file.stat.size as i64,
                file.stat.mtime_ns,
                file.stat.inode as i64,
                &file.hash[..],
                file.lossy,
                file.lines
            ])?;
            tx.last_insert_rowid()
        }
    };
    let facts = &file.facts;
    let mut ids: Vec<i64> = Vec::with_capacity(facts.symbols.len());
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO symbols (file_id, name, qualified_name, kind, signature, doc, start_line, start_col,
                                  end_line, start_byte, end_byte, parent_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        for s in &facts.symbols {
            let parent = s.parent.and_then(|p| ids.get(p as usize).copied());
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
                parent
            ])?;
            ids.push(tx.last_insert_rowid());
            touched_names.insert(s.name.clone());
        }
    }
    let symbol_id = |i: Option<u32>| i.and_then(|i| ids.get(i as usize).copied());
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO refs (file_id, from_symbol, name, qualifier, kind, line, col)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for r in &facts.refs {
            insert.execute(params![
                file_id,
                symbol_id(r.from),
                r.name,
                r.qualifier,
                r.kind.name(),
                r.line,
                r.col
            ])?;
        }
    }
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
            // A base whose deriving type is elsewhere changes that type's edges.
            touched_names.insert(b.subject.clone());
        }
    }
    tx.prepare_cached("INSERT INTO code_fts (rowid, body) VALUES (?1, ?2)")?
        .execute(params![file_id, file.text])?;
    Ok(file_id)
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
    clear_file(tx, id)?;
    tx.prepare_cached("DELETE FROM files WHERE id = ?1")?
        .execute([id])?;
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
    for sql in [
        "DELETE FROM edges WHERE src_file = ?1",
        "DELETE FROM symbols WHERE file_id = ?1",
        "DELETE FROM refs WHERE file_id = ?1",
        "DELETE FROM imports WHERE file_id = ?1",
        "DELETE FROM bases WHERE file_id = ?1",
        "DELETE FROM code_fts WHERE rowid = ?1",
    ] {
        tx.prepare_cached(sql)?.execute([file_id])?;
    }
    Ok(())
}

/// Marks every file whose edges could change because definitions named in `names`
/// appeared or disappeared, or because edges point into a file whose symbols were replaced.
pub(crate) fn mark_stale(
    tx: &Transaction<'_>,
    names: &HashSet<String>,
    changed_files: &[i64],
) -> rusqlite::Result<()> {
    if names.is_empty() && changed_files.is_empty() {
        return Ok(());
    }
    tx.execute_batch("CREATE TEMP TABLE IF NOT EXISTS stale_names (name TEXT PRIMARY KEY) WITHOUT ROWID; DELETE FROM stale_names;")?;
    {
        let mut insert =
            tx.prepare_cached("INSERT OR IGNORE INTO stale_names (name) VALUES (?1)")?;
        for n in names {
            insert.execute([n])?;
        }
    }
    tx.execute_batch(
        "UPDATE files SET resolved = 0 WHERE resolved = 1 AND id IN (
             SELECT file_id FROM refs WHERE name IN (SELECT name FROM stale_names)
             UNION SELECT file_id FROM imports WHERE name IN (SELECT name FROM stale_names)
             UNION SELECT file_id FROM bases WHERE name IN (SELECT name FROM stale_names)
             UNION SELECT file_id FROM bases WHERE subject IN (SELECT name FROM stale_names));
         DELETE FROM stale_names;",
    )?;
    let mut mark = tx.prepare_cached(
        "UPDATE files SET resolved = 0 WHERE resolved = 1 AND id IN (SELECT src_file FROM edges WHERE dst_file = ?1)",
    )?;
    for id in changed_files {
        mark.execute([id])?;
    }
    Ok(())
}
