//! Code text search: the trigram FTS index narrows the source files, the walk adds every
//! other text file ([`super::text_files`]), then each candidate is read from the
//! workspace and confirmed line by line (so hits are exact and current).

use std::path::Path;

use rayon::prelude::*;
use regex::{Regex, RegexBuilder};
use serde::Serialize;

use super::handle::{Graph, QueryError};
use super::path_filter::PathFilter;
use super::select::check_length;
use crate::walk::RelPath;

/// How to search.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Treat the pattern as a regular expression (Rust `regex` syntax).
    pub regex: bool,
    /// Match case-insensitively.
    pub ignore_case: bool,
    /// Most hits returned.
    pub limit: usize,
    /// Only these files: a glob, or a file or folder path ([`PathFilter`]).
    pub path_glob: Option<String>,
    /// Only the index's source files; else every text file the walk sees too (README,
    /// manifests, docs: [`super::text_files`]).
    pub source_only: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            regex: false,
            ignore_case: false,
            limit: 200,
            path_glob: None,
            source_only: false,
        }
    }
}

/// One matching line.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct SearchHit {
    /// Path relative to the workspace.
    pub path: String,
    /// 1-based line number.
    pub line: u32,
    /// 1-based column (bytes) of the first match on the line.
    pub col: u32,
    /// The line's text (trimmed to 400 bytes).
    pub text: String,
}

/// Longest line text returned.
const MAX_LINE: usize = 400;

/// Candidate files read at once (in parallel) before checking whether enough hits are in.
const SCAN_CHUNK: usize = 32;

/// Finds lines matching `pattern`; returns hits (by path, line) and whether `limit` cut them.
pub fn search(
    graph: &Graph,
    pattern: &str,
    opts: &SearchOptions,
) -> Result<(Vec<SearchHit>, bool), QueryError> {
    if pattern.is_empty() {
        return Err(QueryError::Invalid("empty search pattern".into()));
    }
    check_length("search pattern", pattern)?;
    let source = if opts.regex {
        pattern.to_string()
    } else {
        regex::escape(pattern)
    };
    let matcher: Regex = RegexBuilder::new(&source)
        .case_insensitive(opts.ignore_case)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| QueryError::Invalid(format!("invalid regex: {e}")))?;
    let filter = match &opts.path_glob {
        Some(text) => Some(PathFilter::parse(text)?),
        None => None,
    };
    let keep = |path: &str| filter.as_ref().is_none_or(|f| f.matches(path));
    let mut candidates = candidate_files(graph, &source, opts)?;
    candidates.retain(|c| keep(&c.path));
    if !opts.source_only {
        let (text, cut) = super::text_files::list(&graph.root, &keep);
        if cut {
            tracing::warn!(
                bytes = super::text_files::MAX_TOTAL_BYTES,
                "search read the text files up to its budget"
            );
        }
        candidates.extend(
            text.into_iter()
                .map(|(path, exact)| Candidate { path, exact }),
        );
        candidates
            .sort_by(|a, b| (&a.path, a.exact.as_bytes()).cmp(&(&b.path, b.exact.as_bytes())));
    }
    // Nothing to read: say so when the filter itself names no file.
    if candidates.is_empty()
        && let (Some(f), Some(shown)) = (&filter, &opts.path_glob)
    {
        f.require_some(graph, shown)?;
    }
    // Hits come in (path, line) order: candidates are in path order, each chunk of them
    // is read in parallel and kept in order, and a file's hits are in line order. So the
    // first `limit` hits are known once the chunks read hold more than `limit`: a common
    // word reads a few files, not every file that has it.
    let root = graph.root.as_path();
    let mut hits: Vec<SearchHit> = Vec::new();
    for chunk in candidates.chunks(SCAN_CHUNK) {
        let found: Vec<Vec<SearchHit>> = chunk
            .par_iter()
            .map(|candidate| scan_file(root, candidate, &matcher, opts.limit))
            .collect();
        hits.extend(found.into_iter().flatten());
        if hits.len() > opts.limit {
            break;
        }
    }
    let truncated = hits.len() > opts.limit;
    hits.truncate(opts.limit);
    Ok((hits, truncated))
}

/// A file that may hold a match: the path it is shown as, and the exact name it is
/// read by (the two differ for a name that is not UTF-8).
struct Candidate {
    path: String,
    exact: RelPath,
}

fn candidate_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Candidate> {
    Ok(Candidate {
        path: r.get(0)?,
        exact: RelPath::from_bytes(r.get(1)?),
    })
}

/// Files that may contain a match of `source` (regex syntax): those whose search terms
/// meet what the pattern's syntax tree guarantees every match contains
/// ([`prefilter`](super::prefilter)), else every indexed file.
fn candidate_files(
    graph: &Graph,
    source: &str,
    opts: &SearchOptions,
) -> Result<Vec<Candidate>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let need = super::prefilter::required(source, opts.ignore_case);
    let query = super::prefilter::fts_query(&need);
    let mut stmt;
    let rows: Vec<Candidate> = if query.is_none() {
        stmt = graph
            .conn
            .prepare_cached("SELECT path, path_bytes FROM files ORDER BY path, path_bytes")
            .map_err(&err)?;
        stmt.query_map([], candidate_from_row)
            .map_err(&err)?
            .collect::<Result<_, _>>()
            .map_err(&err)?
    } else {
        // detail=none has no positions, so no phrase queries: the required strings'
        // trigram terms ANDed (and ORed across alternatives); lines are confirmed afterwards.
        stmt = graph
            .conn
            .prepare_cached(
                "SELECT f.path, f.path_bytes FROM code_fts JOIN files f ON f.id = code_fts.rowid
                 WHERE code_fts MATCH ?1 ORDER BY f.path, f.path_bytes",
            )
            .map_err(&err)?;
        stmt.query_map([query], candidate_from_row)
            .map_err(&err)?
            .collect::<Result<_, _>>()
            .map_err(&err)?
    };
    Ok(rows)
}

fn scan_file(root: &Path, candidate: &Candidate, matcher: &Regex, limit: usize) -> Vec<SearchHit> {
    let path = candidate.path.as_str();
    // By its exact name (the shown one may name another file, or none), beneath the
    // root: a file swapped for a symlink out of the workspace is not read.
    let Ok(bytes) = loci_paths::read_file_beneath(root, candidate.exact.as_path()) else {
        return Vec::new();
    };
    if super::text_files::is_binary(&bytes) {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut hits = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(m) = matcher.find(line) {
            let mut shown = line.trim_end().to_string();
            if shown.len() > MAX_LINE {
                let mut cut = MAX_LINE;
                while !shown.is_char_boundary(cut) {
                    cut -= 1;
                }
                shown.truncate(cut);
            }
            hits.push(SearchHit {
                path: path.to_string(),
                line: i as u32 + 1,
                col: m.start() as u32 + 1,
                text: shown,
            });
            if hits.len() > limit {
                break;
            }
        }
    }
    hits
}
