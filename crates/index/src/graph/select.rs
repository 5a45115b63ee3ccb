//! Naming definitions: selectors (`name`, `Qualified::name`, `path/to/file.rs:name`,
//! any of them with an overload's arity: `Pool.interrupt/1`) and `find` by name or glob.

use rusqlite::types::Value;

use super::handle::{Graph, QueryError, SYMBOL_COLUMNS, SymbolInfo, symbol_from_row};
use crate::Lang;
use crate::extract::SymbolKind;

/// The longest name pattern, selector, search pattern or path glob accepted, in bytes:
/// far above any real name or pattern, and below SQLite's own cap on a GLOB pattern
/// (`SQLITE_LIMIT_LIKE_PATTERN_LENGTH`, 50,000 bytes), which would otherwise fail the
/// query as a storage error.
pub const MAX_PATTERN_BYTES: usize = 10_000;

/// Refuses `text` (a `what`) longer than [`MAX_PATTERN_BYTES`].
pub(crate) fn check_length(what: &'static str, text: &str) -> Result<(), QueryError> {
    if text.len() > MAX_PATTERN_BYTES {
        return Err(QueryError::TooLong {
            what,
            len: text.len(),
            limit: MAX_PATTERN_BYTES,
        });
    }
    Ok(())
}

/// A parsed symbol selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// A bare name: `parse`.
    Name(String),
    /// Scope segments then the name: `Parser::parse`, `pkg.Parser.parse` → `[Parser, parse]`.
    Qualified(Vec<String>),
    /// A name (or qualified name) inside one file: `src/lib.rs:parse`; a line number
    /// (`src/lib.rs:42`) names the definition that starts on that line.
    InFile {
        /// Relative path.
        path: String,
        /// The rest, itself a selector.
        inner: Box<Selector>,
    },
}

impl Selector {
    /// Parses a selector; `Err` for an empty one.
    pub fn parse(text: &str) -> Result<Selector, QueryError> {
        check_length("selector", text)?;
        let text = text.trim();
        if text.is_empty() {
            return Err(QueryError::Invalid("empty symbol name".into()));
        }
        if let Some(cut) = single_colon(text) {
            let (path, rest) = (&text[..cut], &text[cut + 1..]);
            if !path.is_empty() && !rest.is_empty() {
                return Ok(Selector::InFile {
                    path: path.to_string(),
                    inner: Box::new(Selector::parse(rest)?),
                });
            }
        }
        let segments: Vec<String> = text
            .split("::")
            .flat_map(|s| s.split(['.', '\\', '#']))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        match segments.len() {
            0 => Err(QueryError::Invalid(format!("`{text}` names no symbol"))),
            1 => Ok(Selector::Name(
                segments.into_iter().next().unwrap_or_default(),
            )),
            _ => Ok(Selector::Qualified(segments)),
        }
    }

    fn name(&self) -> &str {
        match self {
            Selector::Name(n) => n,
            Selector::Qualified(segs) => segs.last().map(String::as_str).unwrap_or(""),
            Selector::InFile { inner, .. } => inner.name(),
        }
    }

    fn matches_qualified(&self, qualified_name: &str) -> bool {
        match self {
            Selector::Name(_) => true,
            Selector::Qualified(segs) => {
                let have: Vec<&str> = qualified_name
                    .split("::")
                    .flat_map(|s| s.split(['.', '\\', '#']))
                    .filter(|s| !s.is_empty())
                    .collect();
                have.len() >= segs.len()
                    && have[have.len() - segs.len()..]
                        .iter()
                        .zip(segs)
                        .all(|(a, b)| *a == b)
            }
            Selector::InFile { inner, .. } => inner.matches_qualified(qualified_name),
        }
    }
}

/// The qualified name prefixed with the file's module path (`src/walk.rs` + `walk` →
/// `src::walk::walk`), so `walk::walk` names a free function by its module. A file that
/// is its folder's module (`mod.rs`, `__init__.py`, `index.ts`) is named by the folder.
fn module_qualified(s: &SymbolInfo) -> String {
    let without_ext = s
        .path
        .rsplit_once('.')
        .map_or(s.path.as_str(), |(head, _)| head);
    let module = match without_ext.rsplit_once('/') {
        Some((dir, "mod" | "__init__" | "index")) => dir,
        _ => without_ext,
    };
    format!("{}::{}", module.replace('/', "::"), s.qualified_name)
}

/// Position of a lone `:` (not part of `::`), which separates a path from a name.
fn single_colon(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len()).rev().find(|&i| {
        bytes[i] == b':' && (i == 0 || bytes[i - 1] != b':') && bytes.get(i + 1) != Some(&b':')
    })
}

/// Every definition a selector names. With `allow_many` false, more than one is an
/// [`QueryError::Ambiguous`] error listing them. A trailing arity (`/2`, `/1+`) keeps
/// the overloads a call with that many arguments reaches; when the name is defined but
/// none fits, [`QueryError::NoSuchOverload`] lists the ones there are.
pub fn resolve_selector(
    graph: &Graph,
    text: &str,
    allow_many: bool,
) -> Result<Vec<SymbolInfo>, QueryError> {
    check_length("selector", text)?;
    let (named, arity) = super::select_arity::split(text);
    let found = resolve_named(graph, named)?;
    match arity {
        // Every definition of the name, then the overloads of that arity among them.
        Some(wanted) if !found.is_empty() => {
            let kept = super::select_arity::keep(graph, text, wanted, found)?;
            choose(graph, text, kept, allow_many)
        }
        _ => choose(graph, text, found, allow_many),
    }
}

/// Every definition a selector without an arity names (none: an empty list).
fn resolve_named(graph: &Graph, text: &str) -> Result<Vec<SymbolInfo>, QueryError> {
    let selector = Selector::parse(text)?;
    let err = QueryError::sqlite(&graph.index_path);
    // A Rust path through a crate's name: the module graph names the definition itself.
    if let Selector::Qualified(segs) = &selector {
        let found = by_crate_path(graph, segs)?;
        if !found.is_empty() {
            return Ok(found);
        }
    }
    // `path:LINE`: the definition that starts on that line of that file.
    if let Selector::InFile { path, inner } = &selector
        && let Selector::Name(n) = inner.as_ref()
        && let Ok(line) = n.parse::<u32>()
    {
        let sql = format!(
            "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
             WHERE f.path = ?1 AND s.start_line = ?2 ORDER BY s.start_col"
        );
        let mut stmt = graph.conn.prepare_cached(&sql).map_err(&err)?;
        return stmt
            .query_map(
                rusqlite::params![graph.relative_path(path), line],
                symbol_from_row,
            )
            .map_err(&err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&err);
    }
    let (sql, path) = match &selector {
        Selector::InFile { path, .. } => (
            format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
                 WHERE s.name = ?1 AND f.path = ?2 ORDER BY f.path, s.start_line"
            ),
            Some(graph.relative_path(path)),
        ),
        _ => (
            format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
                 WHERE s.name = ?1 AND ?2 IS NULL ORDER BY f.path, s.start_line"
            ),
            None,
        ),
    };
    let mut stmt = graph.conn.prepare_cached(&sql).map_err(&err)?;
    let found: Vec<SymbolInfo> = stmt
        .query_map(rusqlite::params![selector.name(), path], symbol_from_row)
        .map_err(&err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(&err)?
        .into_iter()
        .filter(|s| {
            selector.matches_qualified(&s.qualified_name)
                || selector.matches_qualified(&module_qualified(s))
        })
        .collect();
    // A Rust path written from inside a crate (`task::spawn_blocking`): followed from
    // each crate's root, when nothing else matched.
    if found.is_empty()
        && let Selector::Qualified(segs) = &selector
    {
        return by_ids(
            graph,
            &crate::resolve::crate_relative_path_symbols(&graph.conn, segs).map_err(&err)?,
        );
    }
    Ok(found)
}

/// The definitions a selector named: one, or several when `allow_many`; none is
/// [`QueryError::NotFound`] and several otherwise [`QueryError::Ambiguous`].
fn choose(
    graph: &Graph,
    text: &str,
    found: Vec<SymbolInfo>,
    allow_many: bool,
) -> Result<Vec<SymbolInfo>, QueryError> {
    match found.len() {
        0 => Err(QueryError::NotFound {
            what: format!("symbol `{text}`"),
        }),
        1 => Ok(found),
        _ if allow_many => Ok(found),
        _ => Err(QueryError::Ambiguous {
            selector: text.to_string(),
            candidates: super::candidates::ranked(graph, found)?,
        }),
    }
}

/// The definitions a Rust path whose first segment is a crate of the workspace names
/// (`loci_index::index_workspace`, `tokio::spawn`), through the module graph; empty when
/// it names no crate or cannot be followed.
fn by_crate_path(graph: &Graph, segs: &[String]) -> Result<Vec<SymbolInfo>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    by_ids(
        graph,
        &crate::resolve::rust_path_symbols(&graph.conn, segs).map_err(&err)?,
    )
}

/// The definitions with these ids, in this order.
fn by_ids(graph: &Graph, ids: &[i64]) -> Result<Vec<SymbolInfo>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?1"
    );
    let mut stmt = graph.conn.prepare_cached(&sql).map_err(&err)?;
    let mut found = Vec::with_capacity(ids.len());
    for id in ids {
        found.push(stmt.query_row([id], symbol_from_row).map_err(&err)?);
    }
    Ok(found)
}

/// The definitions whose name matches `pattern` (exact, or a glob with `*`, `?`, `[...]`),
/// optionally of one kind and language (parsed at the front ends), at most `limit`. Returns the matches and whether
/// more were left out.
pub fn find(
    graph: &Graph,
    pattern: &str,
    kind: Option<SymbolKind>,
    lang: Option<Lang>,
    limit: usize,
) -> Result<(Vec<SymbolInfo>, bool), QueryError> {
    if pattern.trim().is_empty() {
        return Err(QueryError::Invalid("empty pattern".into()));
    }
    check_length("name pattern", pattern)?;
    let (kind, lang) = (kind.map(SymbolKind::name), lang.map(Lang::name));
    let is_glob = pattern.contains(['*', '?', '[']);
    let (name_clause, name_value) = if is_glob {
        ("s.name GLOB ?1", Value::Text(pattern.to_string()))
    } else {
        ("s.name = ?1", Value::Text(pattern.to_string()))
    };
    let sql = format!(
        "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
         WHERE {name_clause} AND (?2 IS NULL OR s.kind = ?2) AND (?3 IS NULL OR f.lang = ?3)
         ORDER BY s.name, f.path, s.start_line LIMIT ?4"
    );
    let err = QueryError::sqlite(&graph.index_path);
    let mut stmt = graph.conn.prepare_cached(&sql).map_err(&err)?;
    let mut rows: Vec<SymbolInfo> = stmt
        .query_map(
            rusqlite::params![name_value, kind, lang, limit as i64 + 1],
            symbol_from_row,
        )
        .map_err(&err)?
        .collect::<Result<_, _>>()
        .map_err(&err)?;
    let truncated = rows.len() > limit;
    rows.truncate(limit);
    Ok((rows, truncated))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_selector_form() {
        assert_eq!(
            Selector::parse("parse").unwrap(),
            Selector::Name("parse".into())
        );
        assert_eq!(
            Selector::parse("Parser::parse").unwrap(),
            Selector::Qualified(vec!["Parser".into(), "parse".into()])
        );
        assert_eq!(
            Selector::parse("pkg.Parser.parse").unwrap(),
            Selector::Qualified(vec!["pkg".into(), "Parser".into(), "parse".into()])
        );
        assert_eq!(
            Selector::parse("src/lib.rs:Parser::parse").unwrap(),
            Selector::InFile {
                path: "src/lib.rs".into(),
                inner: Box::new(Selector::Qualified(vec!["Parser".into(), "parse".into()]))
            }
        );
        assert!(Selector::parse("   ").is_err());
        assert!(Selector::parse("::").is_err());
    }

    #[test]
    fn qualified_selector_matches_any_separator_suffix() {
        let sel = Selector::parse("Parser::parse").unwrap();
        assert!(sel.matches_qualified("crate::Parser::parse"));
        assert!(sel.matches_qualified("pkg.Parser.parse"));
        assert!(!sel.matches_qualified("Lexer::parse"));
    }
}
