//! What every query needs besides the connection, and how a PostgreSQL error becomes
//! the memory's: below the store and each of its operations.

use std::sync::atomic::{AtomicBool, Ordering};

use postgres::error::Severity;

use crate::MemoryError;

/// What every query needs besides the connection: the scope it is confined to, and how
/// to name the database in an error.
pub(super) struct Ctx {
    /// The scope every row read or written belongs to.
    pub(super) scope: String,
    /// The connection string, password hidden.
    pub(super) target: String,
    /// The statement timeout, in milliseconds.
    pub(super) timeout_ms: u64,
    /// Set when an error said the connection is gone (or cannot be trusted): the next
    /// call opens a new one.
    pub(super) broken: AtomicBool,
}

impl Ctx {
    /// A PostgreSQL error as the memory's error: a cancelled statement (the timeout)
    /// says so; any other names the database.
    pub(super) fn err(&self, source: postgres::Error) -> MemoryError {
        if connection_lost(&source) {
            self.broken.store(true, Ordering::Relaxed);
        }
        if source.code() == Some(&postgres::error::SqlState::QUERY_CANCELED) {
            return MemoryError::PgTimeout {
                target: self.target.clone(),
                limit_ms: self.timeout_ms,
            };
        }
        MemoryError::Postgres {
            target: self.target.clone(),
            source,
        }
    }
}

/// Whether `e` leaves the connection unusable: no answer from the server (closed, an
/// I/O error), or a `FATAL` one (the server ends the session: an administrator's
/// termination, a shutdown).
fn connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.as_db_error() {
        Some(db) => matches!(
            db.parsed_severity(),
            Some(Severity::Fatal | Severity::Panic)
        ),
        None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

/// `.db(ctx)`: a PostgreSQL result as the memory's.
pub(super) trait Db<T> {
    fn db(self, c: &Ctx) -> Result<T, MemoryError>;
}

impl<T> Db<T> for Result<T, postgres::Error> {
    fn db(self, c: &Ctx) -> Result<T, MemoryError> {
        self.map_err(|e| c.err(e))
    }
}
