//! The exit-code contract (DESIGN.md §6) and the one error type commands return.
//! Extend the table, never renumber it.

use serde::Serialize;

/// Success.
pub const OK: u8 = 0;
/// A failure with no more specific code.
pub const FAILURE: u8 = 1;
/// Bad command-line usage.
pub const USAGE: u8 = 2;
/// The server could not bind its address.
#[allow(dead_code)]
pub const BIND_CONFLICT: u8 = 3;
/// The thing named does not exist.
pub const NOT_FOUND: u8 = 4;
/// The input is invalid or was refused.
pub const INVALID_INPUT: u8 = 5;
/// A limit was exceeded.
#[allow(dead_code)]
pub const LIMIT_EXCEEDED: u8 = 6;
/// The database failed.
pub const STORAGE: u8 = 10;
/// Another process holds the index.
pub const BUSY: u8 = 15;
/// A preflight check refused an LLM spawn.
#[allow(dead_code)]
pub const PREFLIGHT: u8 = 16;
/// The operation is destructive and needs `--yes`.
#[allow(dead_code)]
pub const CONSENT_REQUIRED: u8 = 17;
/// Interrupted by a signal.
#[allow(dead_code)]
pub const INTERRUPTED: u8 = 19;
/// A bug in loci.
pub const INTERNAL: u8 = 20;

/// A command's failure: an exit code from the table, a stable kind, a message and a hint.
#[derive(Debug, Serialize)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// Stable snake_case name of the failure (`not_found`, `ambiguous`, `busy`...).
    pub kind: String,
    /// What went wrong, naming the path, symbol or limit.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Extra structured detail (ambiguity candidates, the lock holder...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
}

impl Failure {
    /// A failure with code, kind and message.
    pub fn new(code: u8, kind: &str, message: impl Into<String>) -> Failure {
        Failure {
            code,
            kind: kind.to_string(),
            message: message.into(),
            hint: None,
            detail: None,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Failure {
        self.hint = Some(hint.into());
        self
    }

    /// Adds structured detail.
    pub fn detail(mut self, detail: serde_json::Value) -> Failure {
        self.detail = Some(detail);
        self
    }
}

impl From<loci_store::StoreError> for Failure {
    fn from(e: loci_store::StoreError) -> Failure {
        if e.is_busy() {
            return Failure::new(BUSY, "busy", e.to_string())
                .hint("another loci process is writing; retry shortly");
        }
        match e {
            loci_store::StoreError::UnknownSchema { .. } => {
                Failure::new(STORAGE, "unknown_schema", e.to_string())
                    .hint("upgrade loci, or rebuild the index with `loci index --rebuild`")
            }
            _ => Failure::new(STORAGE, "storage", e.to_string()),
        }
    }
}

impl From<loci_index::IndexError> for Failure {
    fn from(e: loci_index::IndexError) -> Failure {
        use loci_index::IndexError as E;
        use loci_index::lock::LockError;
        match e {
            E::NotFound(_) => Failure::new(NOT_FOUND, "not_found", e.to_string()),
            E::NotADirectory(_) => Failure::new(INVALID_INPUT, "not_a_directory", e.to_string())
                .hint("give the workspace directory, not a file"),
            E::Unreadable { .. } => Failure::new(FAILURE, "unreadable", e.to_string()),
            E::Lock(LockError::Busy { ref holder }) => {
                let detail = serde_json::to_value(holder).unwrap_or_default();
                Failure::new(BUSY, "busy", e.to_string())
                    .hint("wait for it to finish; loci never takes the lock from another process")
                    .detail(detail)
            }
            E::Lock(LockError::Io { .. }) => Failure::new(STORAGE, "lock", e.to_string()),
            E::Store(s) => s.into(),
        }
    }
}

impl From<loci_index::graph::QueryError> for Failure {
    fn from(e: loci_index::graph::QueryError) -> Failure {
        use loci_index::graph::QueryError as E;
        match e {
            E::NotFound { .. } => Failure::new(NOT_FOUND, "not_found", e.to_string())
                .hint("`loci find '*part*'` lists definitions by glob"),
            E::Ambiguous { ref candidates, .. } => {
                let detail = serde_json::json!({ "candidates": candidates });
                Failure::new(INVALID_INPUT, "ambiguous", e.to_string())
                    .hint("name one candidate as path:name or Qualified::name")
                    .detail(detail)
            }
            E::Invalid(_) => Failure::new(INVALID_INPUT, "invalid_input", e.to_string()),
            E::NoIndex(_) => Failure::new(NOT_FOUND, "no_index", e.to_string()),
            E::Store(s) => s.into(),
        }
    }
}
