//! The one error type of the crate. Every variant carries the message a user
//! sees, and [`QueryError::kind`] is the stable name that crosses the worker
//! pipe, the CLI's `--json` error and (later) HTTP and MCP.

use std::path::PathBuf;

/// Why a query failed.
///
/// Kinds split in two families: the statement was refused or invalid
/// ([`QueryError::is_invalid_input`], exit code 5 in the CLI), or running it
/// failed (`timeout`, `cancelled`, `worker_killed`, ...: exit code 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The statement would write, attach, change a setting, or is otherwise
    /// outside what the read-only guard allows.
    #[error("{0}")]
    NotReadOnly(String),
    /// SQLite could not prepare the statement (syntax error, unknown table or
    /// column).
    #[error("{0}")]
    Syntax(String),
    /// More than one statement in one request.
    #[error("{0}")]
    MultipleStatements(String),
    /// No statement at all: empty, blank, or only comments and `;`.
    #[error("{0}")]
    NoStatement(String),
    /// The statement text is longer than the limit.
    #[error("{0}")]
    TooLong(String),
    /// The bound parameters do not match the statement.
    #[error("{0}")]
    InvalidParams(String),
    /// The deadline passed before the statement finished.
    #[error("{0}")]
    Timeout(String),
    /// The caller cancelled the request.
    #[error("{0}")]
    Cancelled(String),
    /// The statement went past a resource limit (a value's size, a LIKE
    /// pattern's length, nesting or expression depth, SQLite's heap, the
    /// answer's byte budget); the message names the limit and its value.
    #[error("{0}")]
    LimitExceeded(String),
    /// The worker process was killed (by cancel, deadline, watchdog or
    /// close) or died while this request was in flight or queued.
    #[error("{0}")]
    WorkerKilled(String),
    /// The worker could not be started or broke the protocol.
    #[error("{0}")]
    Worker(String),
    /// The database could not be opened.
    #[error("cannot open {path} read-only: {message}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the OS said.
        message: String,
    },
    /// Another connection held the index locked for longer than the busy wait
    /// (a writer outside WAL mode, or WAL recovery): retry shortly.
    #[error("{0}")]
    Busy(String),
    /// SQLite failed while running a statement that was accepted.
    #[error("{0}")]
    Sqlite(String),
    /// The engine was closed.
    #[error("{0}")]
    Closed(String),
}

impl QueryError {
    /// The stable snake_case name of the failure.
    pub fn kind(&self) -> &'static str {
        match self {
            QueryError::NotReadOnly(_) => "not_read_only",
            QueryError::Syntax(_) => "syntax",
            QueryError::MultipleStatements(_) => "multiple_statements",
            QueryError::NoStatement(_) => "no_statement",
            QueryError::TooLong(_) => "too_long",
            QueryError::InvalidParams(_) => "invalid_params",
            QueryError::Timeout(_) => "timeout",
            QueryError::Cancelled(_) => "cancelled",
            QueryError::LimitExceeded(_) => "limit_exceeded",
            QueryError::WorkerKilled(_) => "worker_killed",
            QueryError::Worker(_) => "worker",
            QueryError::Open { .. } => "open",
            QueryError::Busy(_) => "busy",
            QueryError::Sqlite(_) => "sqlite",
            QueryError::Closed(_) => "closed",
        }
    }

    /// True when the statement itself was refused or invalid (the caller must
    /// change it); false when running it failed.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            QueryError::NotReadOnly(_)
                | QueryError::Syntax(_)
                | QueryError::MultipleStatements(_)
                | QueryError::NoStatement(_)
                | QueryError::TooLong(_)
                | QueryError::InvalidParams(_)
        )
    }

    /// Rebuilds an error from its wire form (`{kind, message}`); an unknown
    /// kind becomes [`QueryError::Worker`] naming it.
    pub fn from_wire(kind: &str, message: String) -> QueryError {
        match kind {
            "not_read_only" => QueryError::NotReadOnly(message),
            "syntax" => QueryError::Syntax(message),
            "multiple_statements" => QueryError::MultipleStatements(message),
            "no_statement" => QueryError::NoStatement(message),
            "too_long" => QueryError::TooLong(message),
            "invalid_params" => QueryError::InvalidParams(message),
            "timeout" => QueryError::Timeout(message),
            "cancelled" => QueryError::Cancelled(message),
            "limit_exceeded" => QueryError::LimitExceeded(message),
            "worker_killed" => QueryError::WorkerKilled(message),
            "open" => {
                QueryError::Worker(format!("the worker could not open the database: {message}"))
            }
            "busy" => QueryError::Busy(message),
            "sqlite" => QueryError::Sqlite(message),
            "closed" => QueryError::Closed(message),
            other => QueryError::Worker(format!("{other}: {message}")),
        }
    }

    /// The message without the kind (what `{error: {message}}` carries).
    pub fn message(&self) -> String {
        self.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_kind_survives_the_wire() {
        let all = [
            QueryError::NotReadOnly("a".into()),
            QueryError::Syntax("b".into()),
            QueryError::MultipleStatements("c".into()),
            QueryError::NoStatement("c2".into()),
            QueryError::TooLong("d".into()),
            QueryError::InvalidParams("e".into()),
            QueryError::Timeout("f".into()),
            QueryError::Cancelled("g".into()),
            QueryError::LimitExceeded("k".into()),
            QueryError::WorkerKilled("h".into()),
            QueryError::Busy("k".into()),
            QueryError::Sqlite("i".into()),
            QueryError::Closed("j".into()),
        ];
        for e in all {
            assert_eq!(QueryError::from_wire(e.kind(), e.message()), e);
        }
    }
}
