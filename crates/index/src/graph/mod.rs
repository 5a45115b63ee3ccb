//! Read-only queries over an index: the functions behind `loci find`, `def`, `refs`,
//! `callers`, `callees`, `impact`, `outline`, `search` and `stats`, called unchanged by
//! the CLI and, later, the HTTP and MCP servers.

mod candidates;
mod changed;
mod files;
mod handle;
mod path_filter;
mod prefilter;
mod refs;
mod search;
mod select;
mod select_arity;
mod text_files;
mod traverse;
mod unresolved;

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use crate::IndexState;

pub use changed::MAX_FILES_CHECKED;
pub use files::{SpanQuery, SymbolSpan};
pub use handle::{Candidate, Graph, QueryError, SymbolInfo};
pub(crate) use handle::{SYMBOL_COLUMNS, symbol_from_row};
pub use path_filter::PathFilter;
pub use refs::{RefHit, Refs, refs};
pub use search::{SearchHit, SearchOptions, search};
pub use select::{MAX_PATTERN_BYTES, Selector, find, resolve_selector};
pub use traverse::{
    Direction, Reached, Traversal, callees, callers, impact, looks_like_file, traverse_enough,
    traverse_from,
};
pub use unresolved::{
    FileCount, MAX_FILES_SCANNED, MAX_SHARED_DEFINITIONS, MAX_SITES, ReasonCount, Unresolved,
    UnresolvedReason, UnresolvedSite, UseKinds, distinctive, unresolved_calls_from,
    unresolved_uses,
};

/// Counts that `loci stats` prints.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Stats {
    /// The workspace root.
    pub workspace: String,
    /// The index file.
    pub index_path: String,
    /// Its size on disk (with WAL), bytes.
    pub index_bytes: u64,
    /// Indexed files.
    pub files: u64,
    /// Lines in indexed files.
    pub lines: u64,
    /// Definitions.
    pub symbols: u64,
    /// Resolved edges.
    pub edges: u64,
    /// Raw references (resolved or not).
    pub refs: u64,
    /// References with no edge.
    pub unresolved_refs: u64,
    /// Files per language.
    pub languages: std::collections::BTreeMap<String, u64>,
    /// Definitions per kind.
    pub kinds: std::collections::BTreeMap<String, u64>,
    /// Edges per kind.
    pub edge_kinds: std::collections::BTreeMap<String, u64>,
    /// Edges per confidence.
    pub confidence: std::collections::BTreeMap<String, u64>,
    /// `complete`, `indexing` while a run writes or after one was interrupted, `empty`.
    pub state: IndexState,
    /// The files the last run left out (or whose references it could not resolve),
    /// with their reasons: at most [`STATS_SKIPPED_LISTED`] listed.
    pub skipped: crate::SkippedFiles,
}

/// Most skipped files `stats` lists by name (`skipped.total` counts them all).
pub const STATS_SKIPPED_LISTED: usize = 1_000;

impl Graph {
    /// The definition(s) a selector names, with doc comments.
    pub fn def(&self, selector: &str) -> Result<Vec<SymbolInfo>, QueryError> {
        let mut found = resolve_selector(self, selector, true)?;
        let err = QueryError::sqlite(&self.index_path);
        for s in &mut found {
            s.doc = self
                .conn
                .query_row("SELECT doc FROM symbols WHERE id = ?1", [s.id], |r| {
                    r.get(0)
                })
                .map_err(&err)?;
        }
        Ok(found)
    }

    /// Every definition in a file, in source order (parents before children).
    pub fn outline(&self, path: &str) -> Result<Vec<OutlineItem>, QueryError> {
        let err = QueryError::sqlite(&self.index_path);
        let Some(file_id) = self.indexed_file(path)? else {
            return Err(QueryError::NotFound {
                what: format!("file `{path}` in the index"),
            });
        };
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS}, s.parent_id FROM symbols s JOIN files f ON f.id = s.file_id
                 WHERE s.file_id = ?1 ORDER BY s.start_byte, s.id"
            ))
            .map_err(&err)?;
        let rows = stmt
            .query_map([file_id], |r| {
                Ok((symbol_from_row(r)?, r.get::<_, Option<i64>>(9)?))
            })
            .map_err(&err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&err)?;
        let mut depth_of: std::collections::HashMap<i64, u32> = std::collections::HashMap::new();
        let mut out = Vec::with_capacity(rows.len());
        for (symbol, parent) in rows {
            let depth = parent.and_then(|p| depth_of.get(&p)).map_or(0, |d| d + 1);
            depth_of.insert(symbol.id, depth);
            out.push(OutlineItem { depth, symbol });
        }
        Ok(out)
    }

    /// Index-wide counts.
    pub fn stats(&self) -> Result<Stats, QueryError> {
        let err = QueryError::sqlite(&self.index_path);
        let count = |sql: &str| {
            self.conn
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|n| n.max(0) as u64)
        };
        let grouped = |sql: &str| -> rusqlite::Result<std::collections::BTreeMap<String, u64>> {
            let mut stmt = self.conn.prepare(sql)?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?;
            rows.collect()
        };
        // The breakdowns are summed from each file's counts, written with its facts.
        let mut kinds = std::collections::BTreeMap::new();
        let mut edge_kinds = std::collections::BTreeMap::new();
        let mut confidence = std::collections::BTreeMap::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT what, key, n FROM file_counts")
                .map_err(&err)?;
            let mut rows = stmt.query([]).map_err(&err)?;
            // Summed here: SQLite's GROUP BY would sort every row first.
            while let Some(row) = rows.next().map_err(&err)? {
                let breakdown = match row.get_ref(0).map_err(&err)?.as_str().unwrap_or("") {
                    "symbol_kind" => &mut kinds,
                    "edge_kind" => &mut edge_kinds,
                    "confidence" => &mut confidence,
                    _ => continue,
                };
                let key = row.get_ref(1).map_err(&err)?.as_str().unwrap_or("");
                let n = row.get::<_, i64>(2).map_err(&err)?.max(0) as u64;
                match breakdown.get_mut(key) {
                    Some(total) => *total += n,
                    None => {
                        breakdown.insert(key.to_string(), n);
                    }
                }
            }
        }
        let bytes = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let mut wal = self.index_path.clone().into_os_string();
        wal.push("-wal");
        Ok(Stats {
            workspace: self.root.to_string_lossy().into_owned(),
            index_path: self.index_path.to_string_lossy().into_owned(),
            index_bytes: bytes(self.index_path.clone()) + bytes(PathBuf::from(wal)),
            files: count("SELECT count(*) FROM files").map_err(&err)?,
            lines: count("SELECT coalesce(sum(lines), 0) FROM files").map_err(&err)?,
            // The totals of the breakdowns: counting the tables would read every page of
            // `edges` (its one index is partial).
            symbols: kinds.values().sum(),
            edges: edge_kinds.values().sum(),
            refs: count("SELECT coalesce(sum(n), 0) FROM file_refs").map_err(&err)?,
            unresolved_refs: count("SELECT coalesce(sum(unresolved_refs), 0) FROM files")
                .map_err(&err)?,
            languages: grouped("SELECT lang, count(*) FROM files GROUP BY lang").map_err(&err)?,
            kinds,
            edge_kinds,
            confidence,
            state: IndexState::from_stored(
                crate::meta_get(&self.conn, crate::MetaKey::State)
                    .map_err(&err)?
                    .as_deref(),
            ),
            skipped: crate::recorded_skips(&self.conn, STATS_SKIPPED_LISTED).map_err(&err)?,
        })
    }
}

/// One line of an outline.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutlineItem {
    /// Nesting depth (0 = top level).
    pub depth: u32,
    /// The definition.
    #[serde(flatten)]
    pub symbol: SymbolInfo,
}

#[cfg(test)]
mod tests {
    use crate::{IndexOptions, NoProgress, index_workspace};

    /// `edges_in` leaves `CONTAINS` edges out (`dst_file IS NULL`); SQLite uses such a
    /// partial index only for a query that constrains `dst_file`. Every lookup of edges
    /// by target must, or it scans the whole edge table.
    #[test]
    fn every_lookup_by_target_uses_the_edge_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.rs"),
            "mod b;\nfn a() { b::b(); }\nstruct S;\nimpl S { fn m(&self) { a(); } }\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("b.rs"), "pub fn b() {}\n").unwrap();
        index_workspace(&IndexOptions::new(dir.path()), &NoProgress).unwrap();
        let conn =
            loci_store::open_index_read_only(&loci_store::index_path_for(dir.path())).unwrap();
        for sql in [
            super::traverse::CALLERS_SQL,
            super::traverse::SYMBOL_DEPENDENTS_SQL,
            super::traverse::FILE_DEPENDENTS_SQL,
            super::refs::USES_SQL,
            crate::write::INTO_FILE_SQL,
        ] {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let plan: Vec<String> = stmt
                .query_map([1], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(
                plan.iter()
                    .any(|step| step.contains("INDEX edges_in (dst_file=?")),
                "{sql}: {plan:?}"
            );
            assert!(
                !plan.iter().any(|step| step.starts_with("SCAN ")),
                "{sql}: {plan:?}"
            );
        }
    }
}
