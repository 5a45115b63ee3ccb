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
    /// The PostgreSQL memory database's connection string does not parse. It is named
    /// only through [`crate::pg::redacted`], so a message never shows a password.
    #[error("memory database URL {target} is not valid: {reason}")]
    PgUrl {
        /// The connection string, password hidden.
        target: String,
        /// What is wrong with it.
        reason: String,
    },
    /// TLS to the PostgreSQL memory database failed or was refused: a certificate that
    /// does not verify (the host and the mode named), a CA file that cannot be read, a
    /// server without TLS under a mode that requires it, a server that takes only TLS
    /// refusing `sslmode=disable`.
    #[error("memory database {target}: {reason}")]
    PgTls {
        /// The connection string, password hidden.
        target: String,
        /// What failed, and what to change.
        reason: String,
    },
    /// PostgreSQL failed on the memory database (cannot connect, a statement failed).
    #[error("memory database {target}: {}", pg_detail(source))]
    Postgres {
        /// The connection string, password hidden ([`crate::pg::redacted`]).
        target: String,
        /// What PostgreSQL (or the connection) said.
        #[source]
        source: postgres::Error,
    },
    /// A statement ran past the connection's statement timeout and was cancelled by the
    /// server: a slow or locked database answers with this instead of hanging a request.
    #[error(
        "memory database {target}: a statement ran past the statement timeout of {limit_ms} ms and was cancelled"
    )]
    PgTimeout {
        /// The connection string, password hidden.
        target: String,
        /// The timeout, in milliseconds.
        limit_ms: u64,
    },
    /// Every connection of the process's pool to the memory database stayed in use for
    /// the whole checkout timeout: the process is overloaded (or calls hang), and this
    /// call gave up instead of queueing without end.
    #[error(
        "memory database {target}: all {size} connections of the pool stayed busy for {waited_ms} ms; nothing was done"
    )]
    PgPoolExhausted {
        /// The connection string, password hidden.
        target: String,
        /// The pool's size.
        size: usize,
        /// How long the call waited, in milliseconds.
        waited_ms: u64,
    },
    /// Concurrent writers kept conflicting with this transaction (serialization
    /// failures or deadlocks) through every retry; nothing of it was stored.
    #[error(
        "memory database {target}: the transaction conflicted with concurrent writers {attempts} times in {elapsed_ms} ms and was given up; nothing was stored"
    )]
    PgConflict {
        /// The connection string, password hidden.
        target: String,
        /// Attempts made.
        attempts: u32,
        /// Time spent on them, in milliseconds.
        elapsed_ms: u64,
    },
    /// The database's memory schema is newer than this build knows: another, newer loci
    /// migrated it. Nothing is read or written through an older build.
    #[error(
        "memory database {target} has memory schema version {found}, newer than version {known} this build of loci knows; upgrade loci"
    )]
    PgSchemaTooNew {
        /// The connection string, password hidden.
        target: String,
        /// The version the database has.
        found: i32,
        /// The newest version this build knows.
        known: i32,
    },
}

/// PostgreSQL's own words for an error: the server's message (with its detail and
/// SQLSTATE) when it sent one, else the client's.
fn pg_detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!(
                "{}: {} (SQLSTATE {})",
                db.severity(),
                db.message(),
                db.code().code()
            );
            if let Some(d) = db.detail() {
                s.push_str(&format!("; {d}"));
            }
            s
        }
        None => e.to_string(),
    }
}

impl MemoryError {
    /// Whether the cause is other writers: SQLite's database held past the busy
    /// timeout, or PostgreSQL transactions that kept conflicting through every retry.
    /// Trying again later may succeed.
    pub fn is_busy(&self) -> bool {
        match self {
            MemoryError::Sqlite {
                source: rusqlite::Error::SqliteFailure(e, _),
                ..
            } => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            MemoryError::PgConflict { .. } => true,
            _ => false,
        }
    }
}
