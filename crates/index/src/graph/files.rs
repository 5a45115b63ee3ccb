//! Lookups of indexed files and definition spans for the layers above (memory's code
//! links, freshness, "did you mean" hints), so that no caller writes SQL against the
//! index's tables.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use crate::Lang;
use crate::extract::{Arity, Span, Symbol, SymbolKind, in_document_order};

use super::{Graph, QueryError, SYMBOL_COLUMNS, SymbolInfo, symbol_from_row};

/// Where a definition sits, its bytes included: what a memory's code link hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolSpan {
    /// The file, relative to the root.
    pub path: String,
    /// The definition's qualified name.
    pub qualified_name: String,
    /// Its kind's name (`function`, `class`...).
    pub kind: String,
    /// Its first line (1-based).
    pub line: u32,
    /// Its first byte in the file.
    pub start_byte: usize,
    /// One past its last byte.
    pub end_byte: usize,
}

/// Which definitions [`Graph::spans`] finds.
#[derive(Debug, Clone, Copy)]
pub enum SpanQuery<'a> {
    /// The definitions of `qualified_name` and `kind` in `path` (at `line` when given).
    Exact {
        /// The file.
        path: &'a str,
        /// The qualified name.
        qualified_name: &'a str,
        /// The kind's name.
        kind: &'a str,
        /// The first line, when known.
        line: Option<u32>,
    },
    /// The definitions in `path` that span `line`, innermost first.
    Enclosing {
        /// The file.
        path: &'a str,
        /// The line.
        line: u32,
    },
    /// The definitions of `qualified_name` and `kind` in any file but `path`.
    Elsewhere {
        /// The file left out.
        path: &'a str,
        /// The qualified name.
        qualified_name: &'a str,
        /// The kind's name.
        kind: &'a str,
    },
    /// Every definition of `kind` in `path`.
    InFile {
        /// The file.
        path: &'a str,
        /// The kind's name.
        kind: &'a str,
    },
}

/// Most spans one query answers.
const MAX_SPANS: i64 = 50;

impl Graph {
    /// The definitions `query` names, with their byte ranges (at most 50), ordered by
    /// path and line (innermost first for [`SpanQuery::Enclosing`]).
    pub fn spans(&self, query: SpanQuery<'_>) -> Result<Vec<SymbolSpan>, QueryError> {
        let (filter, order, args): (&str, &str, Vec<&dyn rusqlite::ToSql>) = match &query {
            SpanQuery::Exact {
                path,
                qualified_name,
                kind,
                line,
            } => (
                "f.path = ?1 AND s.qualified_name = ?2 AND s.kind = ?3
                 AND (?4 IS NULL OR s.start_line = ?4)",
                "f.path, s.start_line",
                vec![path, qualified_name, kind, line],
            ),
            SpanQuery::Enclosing { path, line } => (
                "f.path = ?1 AND s.start_line <= ?2 AND s.end_line >= ?2",
                "s.end_line - s.start_line, s.start_line",
                vec![path, line],
            ),
            SpanQuery::Elsewhere {
                path,
                qualified_name,
                kind,
            } => (
                "s.qualified_name = ?1 AND s.kind = ?2 AND f.path != ?3",
                "f.path, s.start_line",
                vec![qualified_name, kind, path],
            ),
            SpanQuery::InFile { path, kind } => (
                "f.path = ?1 AND s.kind = ?2",
                "f.path, s.start_line",
                vec![path, kind],
            ),
        };
        let sql = format!(
            "SELECT f.path, s.qualified_name, s.kind, s.start_line, s.start_byte, s.end_byte
             FROM symbols s JOIN files f ON f.id = s.file_id WHERE {filter}
             ORDER BY {order} LIMIT {MAX_SPANS}"
        );
        let err = QueryError::sqlite(&self.index_path);
        let mut stmt = self.conn.prepare_cached(&sql).map_err(&err)?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), |r| {
                Ok(SymbolSpan {
                    path: r.get(0)?,
                    qualified_name: r.get(1)?,
                    kind: r.get(2)?,
                    line: r.get(3)?,
                    start_byte: r.get::<_, i64>(4)? as usize,
                    end_byte: r.get::<_, i64>(5)? as usize,
                })
            })
            .map_err(&err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(&err)
    }

    /// The definitions of `qualified_name` and `kind` in `path`, by line (at most 50):
    /// a definition named by what a diff's extraction found, to traverse from.
    pub fn definitions_in(
        &self,
        path: &str,
        qualified_name: &str,
        kind: &str,
    ) -> Result<Vec<SymbolInfo>, QueryError> {
        let err = QueryError::sqlite(&self.index_path);
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
                 WHERE f.path = ?1 AND s.qualified_name = ?2 AND s.kind = ?3
                 ORDER BY s.start_line LIMIT {MAX_SPANS}"
            ))
            .map_err(&err)?;
        let rows = stmt
            .query_map(params![path, qualified_name, kind], symbol_from_row)
            .map_err(&err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(&err)
    }

    /// The byte spans of the definitions in the file at `path`, by start, those with no
    /// parent apart, when its stored content hash (blake3) is `hash`; `None` when the
    /// file is not indexed or holds other bytes. What a large file's source excerpt is
    /// classed within (`crate::highlight::highlight_excerpt`).
    pub fn definition_spans(
        &self,
        path: &str,
        hash: &[u8],
    ) -> Result<Option<crate::highlight::DefinitionSpans>, QueryError> {
        let err = QueryError::sqlite(&self.index_path);
        let Some(id) = self
            .conn
            .prepare_cached("SELECT id FROM files WHERE path = ?1 AND hash = ?2")
            .and_then(|mut stmt| {
                stmt.query_row(params![path, hash], |r| r.get::<_, i64>(0))
                    .optional()
            })
            .map_err(&err)?
        else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT start_byte, end_byte, parent_id IS NULL FROM symbols
                 WHERE file_id = ?1 ORDER BY start_byte",
            )
            .map_err(&err)?;
        let rows = stmt
            .query_map([id], |r| {
                let span = r.get::<_, i64>(0)?.max(0) as usize..r.get::<_, i64>(1)?.max(0) as usize;
                Ok((span, r.get::<_, bool>(2)?))
            })
            .map_err(&err)?;
        let mut spans = crate::highlight::DefinitionSpans::default();
        for row in rows {
            let (span, outer) = row.map_err(&err)?;
            match outer {
                true => spans.outer.push(span),
                false => spans.inner.push(span),
            }
        }
        Ok(Some(spans))
    }

    /// The content hash (blake3) the index holds for the file at `path`, if indexed.
    pub fn file_hash(&self, path: &str) -> Result<Option<Vec<u8>>, QueryError> {
        self.conn
            .query_row("SELECT hash FROM files WHERE path = ?1", [path], |r| {
                r.get(0)
            })
            .optional()
            .map_err(QueryError::sqlite(&self.index_path))
    }

    /// The language and definitions the index holds for `path` when its stored content
    /// hash (blake3) is `hash`, in [`in_document_order`]; `None` when the file is not
    /// indexed, holds other bytes, or a row names a kind this build does not know. A
    /// diff's side that the index already read then needs no second parse.
    pub fn definitions_of_content(
        &self,
        path: &str,
        hash: &[u8],
    ) -> Result<Option<(Lang, Vec<Symbol>)>, QueryError> {
        let err = QueryError::sqlite(&self.index_path);
        let file: Option<(i64, String)> = self
            .conn
            .prepare_cached("SELECT id, lang FROM files WHERE path = ?1 AND hash = ?2")
            .and_then(|mut s| {
                s.query_row(params![path, hash], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(&err)?;
        let Some((file_id, lang)) = file else {
            return Ok(None);
        };
        let Some(lang) = Lang::from_name(&lang) else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, name, qualified_name, kind, signature, doc, start_line, start_col,
                        end_line, start_byte, end_byte, parent_id, returns, params, receiver
                 FROM symbols WHERE file_id = ?1 ORDER BY id",
            )
            .map_err(&err)?;
        let rows = stmt
            .query_map([file_id], |r| {
                let kind: String = r.get(3)?;
                let params: Option<String> = r.get(13)?;
                let symbol = Symbol {
                    name: r.get(1)?,
                    qualified_name: r.get(2)?,
                    kind: SymbolKind::Function,
                    signature: r.get(4)?,
                    doc: r.get(5)?,
                    span: Span {
                        start_line: r.get(6)?,
                        start_col: r.get(7)?,
                        end_line: r.get(8)?,
                        start_byte: r.get(9)?,
                        end_byte: r.get(10)?,
                    },
                    parent: None,
                    returns: r.get(12)?,
                    params: params.as_deref().and_then(Arity::parse),
                    receiver: r.get(14)?,
                    param_types: params
                        .as_deref()
                        .and_then(Arity::types_in)
                        .map(str::to_string),
                };
                let symbol = SymbolKind::from_name(&kind).map(|kind| Symbol { kind, ..symbol });
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(11)?, symbol))
            })
            .map_err(&err)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(&err)?;
        let position: HashMap<i64, u32> = rows
            .iter()
            .enumerate()
            .map(|(at, (id, ..))| (*id, at as u32))
            .collect();
        let mut symbols = Vec::with_capacity(rows.len());
        for (_, parent, symbol) in rows {
            let Some(mut symbol) = symbol else {
                return Ok(None);
            };
            symbol.parent = parent.and_then(|p| position.get(&p).copied());
            symbols.push(symbol);
        }
        Ok(Some((lang, in_document_order(symbols))))
    }

    /// The indexed files whose content hash is `hash`, by path (at most `limit`): where
    /// a file went when it moved.
    pub fn paths_with_hash(&self, hash: &[u8], limit: usize) -> Result<Vec<String>, QueryError> {
        let err = QueryError::sqlite(&self.index_path);
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM files WHERE hash = ?1 ORDER BY path LIMIT ?2")
            .map_err(&err)?;
        let rows = stmt
            .query_map(params![hash, limit as i64], |r| r.get(0))
            .map_err(&err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(&err)
    }

    /// The indexed files named `name` (the whole path, or its last component), by path
    /// (at most `limit`): the hint for a path that is not indexed.
    pub fn paths_named(&self, name: &str, limit: usize) -> Result<Vec<String>, QueryError> {
        let escaped: String = name
            .chars()
            .flat_map(|c| match c {
                '%' | '_' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        let err = QueryError::sqlite(&self.index_path);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT path FROM files WHERE path = ?1 OR path LIKE ?2 ESCAPE '\\'
                 ORDER BY path LIMIT ?3",
            )
            .map_err(&err)?;
        let rows = stmt
            .query_map(params![name, format!("%/{escaped}"), limit as i64], |r| {
                r.get(0)
            })
            .map_err(&err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(&err)
    }

    /// How many indexed files wait for resolution (their edges are stale).
    pub fn stale_file_count(&self) -> Result<u64, QueryError> {
        self.conn
            .query_row("SELECT count(*) FROM files WHERE resolved = 0", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as u64)
            .map_err(QueryError::sqlite(&self.index_path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indexed(files: &[(&str, &str)]) -> (tempfile::TempDir, Graph) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        crate::index_workspace(
            &crate::IndexOptions::new(dir.path()),
            &crate::progress::NoProgress,
        )
        .unwrap();
        let graph = Graph::open(dir.path()).unwrap();
        (dir, graph)
    }

    fn names(spans: &[SymbolSpan]) -> Vec<(&str, &str, u32)> {
        spans
            .iter()
            .map(|s| (s.path.as_str(), s.qualified_name.as_str(), s.line))
            .collect()
    }

    #[test]
    fn each_span_query_finds_its_definitions_and_their_bytes() {
        let a =
            "struct S;\nimpl S {\n    fn run(&self) {\n        let x = 1;\n    }\n}\nfn run() {}\n";
        let py = "class C:\n    def m(self):\n        return 1\n";
        let (_dir, g) = indexed(&[("src/a.rs", a), ("src/b.rs", "fn run() {}\n"), ("c.py", py)]);
        let exact = g
            .spans(SpanQuery::Exact {
                path: "src/a.rs",
                qualified_name: "S::run",
                kind: "method",
                line: None,
            })
            .unwrap();
        assert_eq!(names(&exact), [("src/a.rs", "S::run", 3)]);
        let bytes = &a[exact[0].start_byte..exact[0].end_byte];
        assert!(
            bytes.starts_with("fn run(&self)") && bytes.ends_with('}'),
            "{bytes:?}"
        );
        let at_other_line = SpanQuery::Exact {
            path: "src/a.rs",
            qualified_name: "S::run",
            kind: "method",
            line: Some(7),
        };
        assert!(g.spans(at_other_line).unwrap().is_empty());

        let enclosing = g
            .spans(SpanQuery::Enclosing {
                path: "src/a.rs",
                line: 4,
            })
            .unwrap();
        assert_eq!(names(&enclosing), [("src/a.rs", "S::run", 3)]);
        let nested = g
            .spans(SpanQuery::Enclosing {
                path: "c.py",
                line: 3,
            })
            .unwrap();
        assert_eq!(
            names(&nested),
            [("c.py", "C.m", 2), ("c.py", "C", 1)],
            "innermost first"
        );
        let elsewhere = g
            .spans(SpanQuery::Elsewhere {
                path: "src/a.rs",
                qualified_name: "run",
                kind: "function",
            })
            .unwrap();
        assert_eq!(names(&elsewhere), [("src/b.rs", "run", 1)]);
        let in_file = g
            .spans(SpanQuery::InFile {
                path: "src/a.rs",
                kind: "function",
            })
            .unwrap();
        assert_eq!(names(&in_file), [("src/a.rs", "run", 7)]);
    }

    #[test]
    fn files_are_found_by_hash_and_by_name_with_like_wildcards_taken_literally() {
        let (_dir, g) = indexed(&[
            ("a/x_y.py", "x = 1\n"),
            ("b/x_y.py", "x = 1\n"),
            ("c/xzy.py", "y = 2\n"),
            ("d/100%.py", "z = 3\n"),
        ]);
        let hash = g.file_hash("a/x_y.py").unwrap().unwrap();
        assert_eq!(hash, blake3::hash(b"x = 1\n").as_bytes());
        assert_eq!(g.file_hash("nope.py").unwrap(), None);
        assert_eq!(
            g.paths_with_hash(&hash, 10).unwrap(),
            ["a/x_y.py", "b/x_y.py"]
        );
        assert_eq!(g.paths_with_hash(&hash, 1).unwrap(), ["a/x_y.py"]);
        // `_` and `%` are not wildcards: `xzy.py` is not `x_y.py`.
        assert_eq!(
            g.paths_named("x_y.py", 10).unwrap(),
            ["a/x_y.py", "b/x_y.py"]
        );
        assert_eq!(g.paths_named("100%.py", 10).unwrap(), ["d/100%.py"]);
        assert_eq!(g.paths_named("c/xzy.py", 10).unwrap(), ["c/xzy.py"]);
        assert_eq!(g.stale_file_count().unwrap(), 0);
    }
}
