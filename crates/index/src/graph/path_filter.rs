//! How every answer that takes a path filter reads it, the same way everywhere: a glob
//! when it holds a glob character (`src/**/*.rs`, `*_test.go`), else a file or a folder
//! (`tokio/src/sync` keeps everything under it; `src/lib.rs` that file; a text that is
//! no valid glob, `a{b`, is a path too). A filter that matches no indexed file is an
//! error that says so, never an empty answer.

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
    /// Parses `text`: a glob when it holds `*`, `?`, `[` or `{` and parses as one, else a
    /// file or folder path relative to the root (a leading `./` and trailing `/` are
    /// ignored): `a{b` names the file `a{b`, and when no file has that name the filter
    /// matches nothing, which [`PathFilter::require_some`] reports.
    pub fn parse(text: &str) -> Result<PathFilter, QueryError> {
        check_length("path filter", text)?;
        if text.contains(['*', '?', '[', '{'])
            && let Ok(glob) = globset::Glob::new(text)
        {
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
    fn a_text_that_is_no_glob_is_a_path() {
        let f = PathFilter::parse("src/{a,b").unwrap();
        assert!(matches!(f, PathFilter::Prefix(_)));
        assert!(f.matches("src/{a,b"));
        assert!(!f.matches("src/a"));
    }

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
        assert!(matches!(
            PathFilter::parse("src/[").unwrap(),
            PathFilter::Prefix(_)
        ));
        assert!(PathFilter::parse("/").is_err());
        assert!(matches!(
            PathFilter::parse(&"a".repeat(crate::graph::MAX_PATTERN_BYTES + 1)),
            Err(QueryError::TooLong { .. })
        ));
    }
}
