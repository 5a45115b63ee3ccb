//! The memory's one error type: every variant names the memory, the field, the value or
//! the limit involved, so a front end can say exactly what to fix.

use std::path::PathBuf;

/// Why a memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// An input breaks a rule (a type, a name, a JSON document that does not match its
    /// schema, a relationship to an entity that does not exist).
    #[error("{0}")]
    Invalid(String),
    /// An input is longer than its limit.
    #[error("{what} is {got} bytes, over the limit of {limit} bytes")]
    TooLong {
        /// What was too long (`body`, `description`...).
        what: String,
        /// Its size.
        got: usize,
        /// The limit.
        limit: usize,
    },
    /// No memory (or entity, or version) by that name.
    #[error("{0}")]
    NotFound(String),
    /// The memory exists but is not in the state the operation acts on (editing a
    /// forgotten memory, restoring one that is not forgotten): a conflict with what is
    /// stored, not a malformed request.
    #[error("{0}")]
    WrongState(String),
    /// A reference in the request names nothing stored: a code link no symbol or file
    /// matches, a relationship's entity neither in the call nor in the namespace.
    #[error("{0}")]
    Unresolved(String),
    /// Code links were asked for but the workspace has no index to resolve them in.
    #[error("{0}")]
    NoIndex(String),
    /// The name is taken in the namespace.
    #[error("a memory named `{name}` already exists in namespace `{namespace}`{}", if *.forgotten { " (forgotten: restore or purge it)" } else { "" })]
    NameTaken {
        /// The namespace.
        namespace: String,
        /// The name.
        name: String,
        /// Whether the holder is a forgotten (soft-deleted) memory.
        forgotten: bool,
    },
    /// The database could not be opened.
    #[error(transparent)]
    Open(#[from] loci_store::StoreError),
    /// SQLite failed on the memory database.
    #[error("memory database {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The embedder failed.
    #[error("embedding failed: {0}")]
    Embed(String),
}

impl MemoryError {
    /// Whether the cause is another writer holding the database past the busy timeout.
    pub fn is_busy(&self) -> bool {
        matches!(self, MemoryError::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. }
            if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
    }
}
