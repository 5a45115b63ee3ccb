//! How every answer that takes a path filter reads it, the same way everywhere: a glob
//! when it holds a glob character (`src/**/*.rs`, `*_test.go`), else a file or a folder
//! (`tokio/src/sync` keeps everything under it; `src/lib.rs` that file). A filter that
//! matches no indexed file is an error that says so, never an empty answer.

use super::handle::{Graph, QueryError};
use super::select::check_length;

/// A parsed path filter.
#[derive(Debug, Clone)]
pub enum PathFilter {
    /// A glob over the relative path (`*` crosses `/`, as in `search`).
    Glob(globset::GlobMatcher),
    /// A file, or every file under a folder.
    Prefix(String),
}

impl PathFilter {
    /// Parses `text`: a glob when it holds `*`, `?`, `[` or `{`, else a file or folder
    /// path relative to the root (a leading `./` and trailing `/` are ignored).
    pub fn parse(text: &str) -> Result<PathFilter, QueryError> {
        check_length("path filter", text)?;
        if text.contains(['*', '?', '[', '{']) {
            let glob = globset::Glob::new(text)
                .map_err(|e| QueryError::Invalid(format!("invalid glob: {e}")))?;
            return Ok(PathFilter::Glob(glob.compile_matcher()));
        }
        let trimmed = text.trim_start_matches("./").trim_end_matches('/');
        if trimmed.is_empty() {
            return Err(QueryError::Invalid("empty path filter".into()));
        }
        Ok(PathFilter::Prefix(trimmed.to_string()))
    }

    /// Whether the relative path `path` passes the filter.
    pub fn matches(&self, path: &str) -> bool {
        match self {
            PathFilter::Glob(g) => g.is_match(path),
            PathFilter::Prefix(p) => {
                path == p
                    || path
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            }
        }
    }

    /// `Ok` when some indexed file passes the filter, else a `NotFound` naming it, so a
    /// mistyped folder never reads as "nothing there".
    pub fn require_some(&self, graph: &Graph, text: &str) -> Result<(), QueryError> {
        let err = QueryError::sqlite(&graph.index_path);
        let mut stmt = graph
            .conn
            .prepare_cached("SELECT path FROM files")
            .map_err(&err)?;
        let mut rows = stmt.query([]).map_err(&err)?;
        while let Some(row) = rows.next().map_err(&err)? {
            let path: String = row.get(0).map_err(&err)?;
            if self.matches(&path) {
                return Ok(());
            }
        }
        Err(QueryError::NotFound {
            what: format!("indexed file matching the path filter `{text}`"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_files_and_globs_filter_the_same_way() {
        let folder = PathFilter::parse("tokio/src/sync/").unwrap();
        assert!(folder.matches("tokio/src/sync/notify.rs"));
        assert!(folder.matches("tokio/src/sync/mpsc/chan.rs"));
        assert!(!folder.matches("tokio/src/sync_extra.rs"));
        assert!(!folder.matches("tokio/src/syn"));
        let file = PathFilter::parse("./src/lib.rs").unwrap();
        assert!(file.matches("src/lib.rs"));
        assert!(!file.matches("src/lib.rs.bak"));
        let glob = PathFilter::parse("src/**/*.rs").unwrap();
        assert!(glob.matches("src/a/b.rs"));
        assert!(!glob.matches("tests/a.rs"));
        assert!(PathFilter::parse("src/[").is_err());
        assert!(PathFilter::parse("/").is_err());
        assert!(matches!(
            PathFilter::parse(&"a".repeat(crate::graph::MAX_PATTERN_BYTES + 1)),
            Err(QueryError::TooLong { .. })
        ));
    }
}
