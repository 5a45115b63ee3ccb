//! Code text search: the trigram FTS index narrows the files, then each candidate is
//! read from the workspace and confirmed line by line (so hits are exact and current).

use std::path::Path;

use rayon::prelude::*;
use regex::{Regex, RegexBuilder};
use serde::Serialize;

use super::select::check_length;
use super::{Graph, QueryError};
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
    /// Only files whose relative path matches this glob.
    pub path_glob: Option<String>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            regex: false,
            ignore_case: false,
            limit: 200,
            path_glob: None,
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
    if let Some(glob) = &opts.path_glob {
        check_length("path glob", glob)?;
    }
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
    let glob = match &opts.path_glob {
        Some(g) => Some(
            globset::Glob::new(g)
                .map_err(|e| QueryError::Invalid(format!("invalid glob: {e}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let mut candidates = candidate_files(graph, pattern, opts)?;
    candidates.retain(|c| glob.as_ref().is_none_or(|g| g.is_match(c.path.as_str())));
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

/// Files that may contain the pattern: from the trigram index when a literal of 3+
/// characters is known, else every indexed file.
fn candidate_files(
    graph: &Graph,
    pattern: &str,
    opts: &SearchOptions,
) -> Result<Vec<Candidate>, QueryError> {
    let err = QueryError::sqlite(&graph.index_path);
    let literals: Vec<String> = if opts.regex {
        required_literals(pattern)
    } else {
        vec![pattern.to_string()]
    };
    let usable: Vec<&String> = literals.iter().filter(|l| l.chars().count() >= 3).collect();
    let mut stmt;
    let rows: Vec<Candidate> = if usable.is_empty() {
        stmt = graph
            .conn
            .prepare_cached("SELECT path, path_bytes FROM files ORDER BY path, path_bytes")
            .map_err(&err)?;
        stmt.query_map([], candidate_from_row)
            .map_err(&err)?
            .collect::<Result<_, _>>()
            .map_err(&err)?
    } else {
        // detail=none has no positions, so no phrase queries: AND together the literal's
        // trigram terms (plain letters, digits or hex); lines are confirmed afterwards.
        let query: Vec<String> = trigrams(&usable)
            .into_iter()
            .map(|t| format!("\"{t}\""))
            .collect();
        stmt = graph
            .conn
            .prepare_cached(
                "SELECT f.path, f.path_bytes FROM code_fts JOIN files f ON f.id = code_fts.rowid
                 WHERE code_fts MATCH ?1 ORDER BY f.path, f.path_bytes",
            )
            .map_err(&err)?;
        stmt.query_map([query.join(" AND ")], candidate_from_row)
            .map_err(&err)?
            .collect::<Result<_, _>>()
            .map_err(&err)?
    };
    Ok(rows)
}

/// Most trigrams put in one FTS query; more narrow little further and cost time.
const MAX_TRIGRAMS: usize = 24;

/// The distinct trigram terms of the literals ([`crate::trigram`]), spread over each
/// literal when there are more than [`MAX_TRIGRAMS`].
fn trigrams(literals: &[&String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for literal in literals {
        let terms = crate::trigram::query_terms(literal);
        let step = terms
            .len()
            .div_ceil(MAX_TRIGRAMS / literals.len().max(1))
            .max(1);
        // Every `step`-th term, and always the last one.
        let picked = terms.iter().step_by(step).chain(terms.last());
        for term in picked {
            if !out.contains(term) {
                out.push(term.clone());
            }
        }
    }
    out
}

/// Literal runs a regex match must contain (a conservative, simple extraction: the
/// pattern's top-level concatenation of plain characters, only when it has no alternation).
fn required_literals(pattern: &str) -> Vec<String> {
    if pattern.contains('|') {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = pattern.chars().peekable();
    let mut depth = 0i32;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                // An escaped punctuation char is literal; classes like \w end the run.
                match chars.next() {
                    Some(n) if n.is_ascii_punctuation() && depth == 0 => current.push(n),
                    _ => flush(&mut current, &mut out),
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                flush(&mut current, &mut out);
            }
            ')' | ']' | '}' => {
                depth -= 1;
                flush(&mut current, &mut out);
            }
            '*' | '?' => {
                // The previous char is optional: drop it from the run.
                current.pop();
                flush(&mut current, &mut out);
            }
            '.' | '^' | '$' | '+' => {
                if c == '+' {
                    // x+ still requires one x.
                }
                flush(&mut current, &mut out);
            }
            _ if depth == 0 => current.push(c),
            _ => {}
        }
    }
    flush(&mut current, &mut out);
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if !current.is_empty() {
        out.push(std::mem::take(current));
    }
}

fn scan_file(root: &Path, candidate: &Candidate, matcher: &Regex, limit: usize) -> Vec<SearchHit> {
    let path = candidate.path.as_str();
    // By its exact name: the shown one may name another file, or none.
    let Ok(bytes) = std::fs::read(root.join(candidate.exact.as_path())) else {
        return Vec::new();
    };
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

#[cfg(test)]
mod tests {
    use super::{required_literals, trigrams};

    #[test]
    fn splits_literals_into_distinct_trigrams() {
        let a = "Parse".to_string();
        assert_eq!(trigrams(&[&a]), vec!["par", "ars", "rse"]);
        let punct = "a(b)".to_string();
        assert_eq!(trigrams(&[&punct]), vec!["612862", "286229"]);
        let long = "x".repeat(10) + "abcdefghijklmnopqrstuvwxyz0123456789";
        assert!(trigrams(&[&long]).len() <= super::MAX_TRIGRAMS + 1);
    }

    #[test]
    fn extracts_required_literals_conservatively() {
        assert_eq!(
            required_literals(r"fn\s+parse_\w+"),
            vec!["fn".to_string(), "parse_".to_string()]
        );
        assert_eq!(required_literals("foo|bar"), Vec::<String>::new());
        assert_eq!(
            required_literals("abcd?e"),
            vec!["abc".to_string(), "e".to_string()]
        );
        assert_eq!(required_literals(r"a\.b\(c"), vec!["a.b(c".to_string()]);
    }
}
