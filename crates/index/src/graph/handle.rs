//! The open index every graph query reads, the definition it reports, and why a
//! query fails: the ground the query modules stand on.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use schemars::JsonSchema;
use serde::Serialize;

use crate::{Lang, SymbolKind};

/// A definition as every query reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SymbolInfo {
    /// Index id (stable until the file changes).
    #[serde(skip)]
    pub id: i64,
    /// The name as written.
    pub name: String,
    /// Scopes and name joined with the language's separator.
    pub qualified_name: String,
    /// `function`, `method`, `class`...
    pub kind: SymbolKind,
    /// Path relative to the workspace root.
    pub path: String,
    /// First line (1-based).
    pub line: u32,
    /// Last line (1-based).
    pub end_line: u32,
    /// The declaration head.
    pub signature: String,
    /// The language.
    pub lang: Lang,
    /// The doc comment, when asked for (`def`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
}

/// A definition an ambiguous selector could mean, with what tells it from the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Candidate {
    /// The definition.
    #[serde(flatten)]
    pub symbol: SymbolInfo,
    /// The module it lives in, written as its language writes a path to it
    /// (`tokio::sync::semaphore`, `pkg.sem`, `src/util`): same-named definitions of
    /// different modules read apart.
    pub module: String,
    /// References and calls the index links to it: candidates come most used first.
    pub uses: u64,
}

/// Why a query failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Nothing matches.
    #[error("{what} not found")]
    NotFound {
        /// What was looked for.
        what: String,
    },
    /// Several definitions match a selector; the caller must pick one.
    #[error("`{selector}` is ambiguous: {} candidates (qualify it, or use path:name)", .candidates.len())]
    Ambiguous {
        /// The selector as given.
        selector: String,
        /// Every matching definition, most used first.
        candidates: Vec<Candidate>,
    },
    /// A selector with an arity (`Pool.interrupt/3`) named definitions, none of them
    /// taking that many arguments: what there is, so the caller can pick one.
    #[error("`{selector}`: no overload takes {arity} arguments; there are: {}", .overloads.join(", "))]
    NoSuchOverload {
        /// The selector as given.
        selector: String,
        /// The arity asked for (`3`, `1+`).
        arity: String,
        /// Every definition of that name, as `path:Qualified.name/arity` (`?` when its
        /// language records none).
        overloads: Vec<String>,
    },
    /// The input is not valid (a bad glob, regex or kind).
    #[error("{0}")]
    Invalid(String),
    /// An input (a pattern, a selector, a glob) is longer than
    /// [`MAX_PATTERN_BYTES`](super::MAX_PATTERN_BYTES); checked before SQLite sees it.
    #[error("the {what} is {len} bytes; the limit is {limit} bytes")]
    TooLong {
        /// What was too long (`name pattern`, `selector`...).
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// No index for this workspace.
    #[error("no index at {0}: run `loci index` first")]
    NoIndex(PathBuf),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] loci_store::StoreError),
}

impl QueryError {
    pub(crate) fn sqlite(path: &Path) -> impl Fn(rusqlite::Error) -> QueryError + '_ {
        move |e| QueryError::Store(loci_store::StoreError::sqlite(path, e))
    }
}

/// An open, read-only view of one workspace's index.
pub struct Graph {
    pub(crate) conn: Connection,
    pub(crate) root: PathBuf,
    pub(crate) index_path: PathBuf,
}

/// Columns selected for a [`SymbolInfo`], in [`symbol_from_row`] order.
pub(crate) const SYMBOL_COLUMNS: &str =
    "s.id, s.name, s.qualified_name, s.kind, f.path, s.start_line, s.end_line, s.signature, f.lang";

pub(crate) fn symbol_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SymbolInfo> {
    Ok(SymbolInfo {
        id: r.get(0)?,
        name: r.get(1)?,
        qualified_name: r.get(2)?,
        kind: r.get(3)?,
        path: r.get(4)?,
        line: r.get(5)?,
        end_line: r.get(6)?,
        signature: r.get(7)?,
        lang: r.get(8)?,
        doc: None,
    })
}

impl Graph {
    /// Opens the index of the workspace at `root` read-only.
    pub fn open(root: &Path) -> Result<Graph, QueryError> {
        let index_path = loci_store::index_path_for(root);
        Graph::open_at(root, &index_path)
    }

    /// Opens an index that lives at `index_path` (outside the workspace, say).
    pub fn open_at(root: &Path, index_path: &Path) -> Result<Graph, QueryError> {
        // Anything else at the path (a directory) is the store's clear error.
        if !index_path.exists() {
            return Err(QueryError::NoIndex(index_path.to_path_buf()));
        }
        let conn = loci_store::open_index_read_only(index_path)?;
        Ok(Graph {
            conn,
            root: root.to_path_buf(),
            index_path: index_path.to_path_buf(),
        })
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The underlying read-only connection (for the query crate and tests).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The indexed file a user-given path names: the file with exactly that name, else
    /// the one shown as it (a name that is not UTF-8 is shown lossily). `None` when no
    /// file matches; an error when the shown name is several files' (their names differ
    /// only in bytes that are not UTF-8), listing their exact names.
    pub(crate) fn indexed_file(&self, path: &str) -> Result<Option<i64>, QueryError> {
        let rel = self.relative_path(path);
        let err = QueryError::sqlite(&self.index_path);
        let exact = self
            .conn
            .prepare_cached("SELECT id FROM files WHERE path_bytes = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([rel.as_bytes()], |r| r.get::<_, i64>(0))
                    .optional()
            })
            .map_err(&err)?;
        if exact.is_some() {
            return Ok(exact);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, path_bytes FROM files WHERE path = ?1 ORDER BY path_bytes")
            .map_err(&err)?;
        let shown: Vec<(i64, Vec<u8>)> = stmt
            .query_map([&rel], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(&err)?
            .collect::<Result<_, _>>()
            .map_err(&err)?;
        match shown.as_slice() {
            [] => Ok(None),
            [(id, _)] => Ok(Some(*id)),
            several => {
                let names: Vec<String> = several
                    .iter()
                    .map(|(_, bytes)| {
                        format!(
                            "{:?}",
                            crate::walk::RelPath::from_bytes(bytes.clone()).as_path()
                        )
                    })
                    .collect();
                Err(QueryError::Invalid(format!(
                    "`{path}` is how {} indexed files are shown, so it names none of them: {} (names that differ only in bytes that are not UTF-8)",
                    several.len(),
                    names.join(", ")
                )))
            }
        }
    }

    /// A user-given file path as shown: relative to the root, `/`-separated.
    pub(crate) fn relative_path(&self, path: &str) -> String {
        let p = Path::new(path);
        let rel = if p.is_absolute() {
            p.strip_prefix(&self.root)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| p.to_path_buf())
        } else {
            p.to_path_buf()
        };
        crate::walk::relative(Path::new(""), &rel)
            .trim_start_matches("./")
            .to_string()
    }
}
