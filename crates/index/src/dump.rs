//! A canonical text dump of an index, free of row ids and timestamps, so two indexes of
//! the same tree compare equal line for line (the incremental-equals-fresh and crash tests
//! rely on it; it is also handy when debugging resolution).

use rusqlite::{Connection, OptionalExtension};

use crate::stored_refs;

/// Dumps files, symbols, references, imports, bases, edges and each file's search terms
/// (as a count and a digest) as sorted lines.
pub fn dump(conn: &Connection) -> rusqlite::Result<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut collect = |sql: &str| -> rusqlite::Result<()> {
        let mut stmt = conn.prepare(sql)?;
        let columns = stmt.column_count();
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let mut parts = Vec::with_capacity(columns);
            for i in 0..columns {
                let v: rusqlite::types::Value = row.get(i)?;
                parts.push(match v {
                    rusqlite::types::Value::Null => "-".to_string(),
                    rusqlite::types::Value::Integer(n) => n.to_string(),
                    rusqlite::types::Value::Real(f) => f.to_string(),
                    rusqlite::types::Value::Text(t) => t,
                    rusqlite::types::Value::Blob(b) => {
                        b.iter().map(|x| format!("{x:02x}")).collect()
                    }
                });
            }
            lines.push(parts.join(" | "));
        }
        Ok(())
    };
    let f = exact_path("f");
    collect(&format!(
        "SELECT 'file', {f}, lang, size, hex(hash), lossy, lines, resolved, unresolved_refs, extractor
         FROM files f"
    ))?;
    collect(&format!(
        "SELECT 'symbol', {f}, s.qualified_name, s.kind, s.start_line, s.end_line, s.signature, s.doc,
                (SELECT p.qualified_name FROM symbols p WHERE p.id = s.parent_id), s.returns, s.params, s.receiver
         FROM symbols s JOIN files f ON f.id = s.file_id"
    ))?;
    collect(&format!(
        "SELECT 'ref_name', {f}, n.name FROM ref_names n JOIN files f ON f.id = n.file_id"
    ))?;
    collect(&format!(
        "SELECT 'import', {f}, i.module, i.name, i.alias, i.line FROM imports i JOIN files f ON f.id = i.file_id"
    ))?;
    collect(&format!(
        "SELECT 'base', {f}, b.subject, b.name, b.qualifier, b.kind, b.line,
                (SELECT s.qualified_name FROM symbols s WHERE s.id = b.symbol_id)
         FROM bases b JOIN files f ON f.id = b.file_id"
    ))?;
    collect(&format!(
        "SELECT 'edge', e.kind, {sf}, (SELECT s.qualified_name FROM symbols s WHERE s.id = e.src_symbol),
                (SELECT {df} FROM files df WHERE df.id = e.dst_file),
                (SELECT s.qualified_name FROM symbols s WHERE s.id = e.dst_symbol), e.confidence, e.line,
                -- The target's line: overloads share a qualified name.
                (SELECT s.start_line FROM symbols s WHERE s.id = e.dst_symbol)
         FROM edges e JOIN files sf ON sf.id = e.src_file",
        sf = exact_path("sf"),
        df = exact_path("df"),
    ))?;
    collect(&format!(
        "SELECT 'count', {f}, c.what, c.key, c.n FROM file_counts c JOIN files f ON f.id = c.file_id"
    ))?;
    lines.extend(reference_lines(conn)?);
    lines.extend(search_digests(conn)?);
    lines.sort();
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// SQL for the path of the `files` row `alias` as the dump names it: its text when that
/// is its exact name, else the text and the exact bytes in hex (two names that differ only
/// in bytes that are not UTF-8 show as the same text).
fn exact_path(alias: &str) -> String {
    format!(
        "CASE WHEN CAST({alias}.path AS BLOB) = {alias}.path_bytes THEN {alias}.path
              ELSE {alias}.path || ' <' || hex({alias}.path_bytes) || '>' END"
    )
}

/// One line per reference, decoded from each file's blob, shaped like the other rows.
fn reference_lines(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    // With the line: overloads share a qualified name.
    let mut qualified_name =
        conn.prepare("SELECT qualified_name || ' @' || start_line FROM symbols WHERE id = ?1")?;
    let mut stmt = conn.prepare(&format!(
        "SELECT {}, r.data FROM file_refs r JOIN files f ON f.id = r.file_id",
        exact_path("f")
    ))?;
    let mut rows = stmt.query([])?;
    let mut lines = Vec::new();
    while let Some(row) = rows.next()? {
        let path: String = row.get(0)?;
        for r in stored_refs::decode(row.get_ref(1)?.as_blob()?, 1)? {
            let from: Option<String> = match r.from {
                Some(id) => qualified_name.query_row([id], |r| r.get(0)).optional()?,
                None => None,
            };
            lines.push(format!(
                "ref | {path} | {} | {} | {} | {} | {} | {} | {} | {}",
                r.name,
                r.qualifier.unwrap_or("-"),
                r.kind.name(),
                r.line,
                r.col,
                from.as_deref().unwrap_or("-"),
                r.receiver.unwrap_or("-"),
                r.args.map_or("-".to_string(), |n| n.to_string())
            ));
        }
    }
    Ok(lines)
}

/// One line per file in the search index: its path, how many terms it has and a digest
/// of them (read back through an `fts5vocab` table, in the connection's temp schema).
fn search_digests(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.dump_search_terms
             USING fts5vocab(main, code_fts, 'instance')",
    )?;
    let mut stmt = conn.prepare(&format!(
        "SELECT coalesce({}, '<no file ' || v.doc || '>'), v.term
         FROM temp.dump_search_terms v LEFT JOIN files f ON f.id = v.doc
         ORDER BY v.doc, v.term",
        exact_path("f")
    ))?;
    let mut rows = stmt.query([])?;
    let mut lines = Vec::new();
    let mut current: Option<(String, u64, blake3::Hasher)> = None;
    let finish = |(path, n, hasher): (String, u64, blake3::Hasher)| {
        format!("search | {path} | {n} | {}", hasher.finalize().to_hex())
    };
    while let Some(row) = rows.next()? {
        let path: String = row.get(0)?;
        let term: String = row.get(1)?;
        if current.as_ref().is_some_and(|(p, _, _)| *p != path) {
            lines.extend(current.take().map(finish));
        }
        let (_, n, hasher) = current.get_or_insert_with(|| (path, 0, blake3::Hasher::new()));
        *n += 1;
        hasher.update(term.as_bytes());
        hasher.update(b" ");
    }
    lines.extend(current.map(finish));
    Ok(lines)
}
