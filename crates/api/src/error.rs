//! The one error type of loci's API and the one table that maps each of its kinds to
//! an exit code, an HTTP status and a stable name. The CLI, the HTTP API and MCP all
//! answer from this table; nothing else in the tree spells an exit code as a number.
//!
//! The exit codes are a contract: extend the table, never renumber it.

use schemars::JsonSchema;
use serde::Serialize;

pub use loci_exit::ExitCode;

macro_rules! error_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $exit:ident, $http:literal; )*) => {
        /// What went wrong, as a stable name. Each kind has exactly one row in
        /// [`ErrorKind::TABLE`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorKind {
            $( $(#[$doc])* $variant, )*
        }

        impl ErrorKind {
            /// The table: kind, stable name, exit code, HTTP status.
            pub const TABLE: &'static [Row] = &[
                $( Row { kind: ErrorKind::$variant, name: $name, exit: ExitCode::$exit, http: $http }, )*
            ];

            /// This kind's row of the table.
            pub fn row(self) -> &'static Row {
                match self {
                    $( ErrorKind::$variant => &Row { kind: ErrorKind::$variant, name: $name, exit: ExitCode::$exit, http: $http }, )*
                }
            }
        }
    };
}

/// One row of the error table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The kind.
    pub kind: ErrorKind,
    /// Its stable snake_case name (`kind` in every error object).
    pub name: &'static str,
    /// The CLI's exit code.
    pub exit: ExitCode,
    /// The HTTP status.
    pub http: u16,
}

error_kinds! {
    /// Something failed that has no more specific kind.
    Failure = "failure", Failure, 500;
    /// The command line or request is malformed.
    Usage = "usage", Usage, 400;
    /// The server's address is in use.
    BindConflict = "bind_conflict", BindConflict, 500;
    /// The thing named (a symbol, a file, a folder, a workspace) does not exist.
    NotFound = "not_found", NotFound, 404;
    /// The workspace has no index yet.
    NoIndex = "no_index", NotFound, 404;
    /// The input is not valid.
    InvalidInput = "invalid_input", InvalidInput, 400;
    /// A selector names several definitions; `detail` lists the first candidates.
    Ambiguous = "ambiguous", InvalidInput, 400;
    /// A path that must be a directory is not.
    NotADirectory = "not_a_directory", InvalidInput, 400;
    /// A workspace segment or name breaks a rule of the paths ruler.
    InvalidSegment = "invalid_segment", InvalidInput, 400;
    /// A clone URL breaks the clone policy (a local path, `ext::`, credentials...);
    /// `detail.reason` names the rule.
    InvalidCloneUrl = "invalid_clone_url", InvalidInput, 400;
    /// No root is configured for the workspace kind asked for.
    NoRoot = "no_root", InvalidInput, 412;
    /// Bound parameters of a query are malformed.
    InvalidParams = "invalid_params", InvalidInput, 400;
    /// A user query would write.
    NotReadOnly = "not_read_only", InvalidInput, 400;
    /// A user query holds more than one statement.
    MultipleStatements = "multiple_statements", InvalidInput, 400;
    /// A user query does not parse (or names what does not exist).
    Syntax = "syntax", InvalidInput, 400;
    /// A memory's name is taken in its namespace (by a live or a forgotten memory).
    NameTaken = "name_taken", InvalidInput, 409;
    /// The memory is not in the state the operation acts on (editing or forgetting a
    /// forgotten memory, restoring one that is not forgotten).
    MemoryState = "memory_state", InvalidInput, 409;
    /// An input is longer than its limit.
    TooLong = "too_long", LimitExceeded, 413;
    /// A limit (rows, bytes, depth, count) was exceeded.
    LimitExceeded = "limit_exceeded", LimitExceeded, 422;
    /// A deadline passed.
    Timeout = "timeout", Failure, 504;
    /// The caller cancelled.
    Cancelled = "cancelled", Failure, 499;
    /// A user query failed while running.
    QueryFailed = "query_failed", Failure, 422;
    /// The query worker process died or misbehaved.
    Worker = "worker", Failure, 500;
    /// The query worker was killed (another request's cancel, a deadline) while this
    /// request waited behind the running one: submit it again.
    WorkerKilled = "worker_killed", Failure, 503;
    /// No query with that id is running or queued in the workspace.
    UnknownQuery = "unknown_query", NotFound, 404;
    /// A project id is already confirmed under another locator, or the locator for
    /// another project; `detail.reason` is `project_elsewhere` or `locator_taken`.
    /// Nothing was made or changed.
    ProjectConflict = "project_conflict", InvalidInput, 409;
    /// A query with that client-chosen id is already running or queued.
    QueryIdInUse = "query_id_in_use", InvalidInput, 409;
    /// A workspace or file cannot be read.
    Unreadable = "unreadable", Failure, 500;
    /// A folder could not be created.
    Mkdir = "mkdir", Failure, 500;
    /// `git init` or `git clone` failed.
    Git = "git", Failure, 422;
    /// The workspace is in no git working tree, so it has no changes to compare
    /// (`loci changes`).
    NotARepository = "not_a_repository", InvalidInput, 409;
    /// A child process could not be started.
    SpawnFailed = "spawn_failed", Failure, 500;
    /// The file watcher failed.
    Watch = "watch", Failure, 500;
    /// The route exists but does not take this HTTP method (`Allow` lists those it takes).
    MethodNotAllowed = "method_not_allowed", Usage, 405;
    /// The request's head (request line and headers) is larger than the server reads
    /// (`api.maxHeaderBytes`); the connection is closed.
    HeadersTooLarge = "headers_too_large", LimitExceeded, 431;
    /// The request carries no valid API key.
    Unauthorized = "unauthorized", Usage, 401;
    /// The request's `Host` or `Origin` is not a loopback name and the server was not
    /// started with `--allow-remote` (DNS rebinding, cross-site requests).
    ForbiddenHost = "forbidden_host", Usage, 403;
    /// An API key, or a parameter named for one (`key`, `api_key`, `access_token`...),
    /// was put in a URL: URLs end up in logs, history and `Referer` headers, so the request
    /// is refused before it runs. Send the key in a header.
    KeyInUrl = "key_in_url", InvalidInput, 400;
    /// A web-view form was posted from another origin, or without the session's CSRF
    /// token (cross-site request forgery); nothing was done.
    CrossOrigin = "cross_origin", Usage, 403;
    /// A loopback-only route (the repositories list and lookup, which carry absolute
    /// paths) was asked by a peer that is not on this machine's loopback.
    ForbiddenPeer = "forbidden_peer", Usage, 403;
    /// The request's API key is scoped to memory namespaces and the request named
    /// another one (`detail.namespaces` lists the key's); nothing was read or written.
    ForbiddenNamespace = "forbidden_namespace", Usage, 403;
    /// The server lacks a capability the caller requires.
    CapabilityMissing = "capability_missing", Failure, 412;
    /// The database failed.
    Storage = "storage", Storage, 503;
    /// The index was written by a newer loci, or is not a loci index.
    UnknownSchema = "unknown_schema", Storage, 503;
    /// The index's lock file could not be used.
    Lock = "lock", Storage, 503;
    /// Another process holds the index; `detail` names the holder.
    Busy = "busy", Busy, 409;
    /// The first index is being built and holds nothing to answer from yet.
    Indexing = "indexing", Busy, 503;
    /// A preflight guard refused an LLM spawn; `detail.guard` names it.
    Preflight = "preflight", Preflight, 412;
    /// An LLM extraction failed after its tool ran (non-zero exit, an error it reported,
    /// an answer that is not the extraction schema); the memory is kept, marked
    /// `extraction: failed` with the reason. `detail.reason` names the failure.
    ExtractionFailed = "extraction_failed", Failure, 502;
    /// A destructive operation was asked for without consent.
    ConsentRequired = "consent_required", ConsentRequired, 409;
    /// A signal stopped the operation.
    Interrupted = "interrupted", Interrupted, 503;
    /// No local embedding model is installed (`loci models install`).
    ModelMissing = "model_missing", NotFound, 412;
    /// The embedding model's files are not the pinned ones, are damaged, or the source
    /// given to install is not the model.
    ModelInvalid = "model_invalid", InvalidInput, 422;
    /// A search by meaning found no code unit vectors for the workspace (or none of the
    /// installed model's): `loci embed` makes them.
    NoVectors = "no_vectors", NotFound, 412;
    /// A remote caller named a workspace outside the server's roots (a client root, a
    /// symlink leading out, another scheme or host); nothing was bound or created.
    OutsideRoots = "outside_roots", InvalidInput, 403;
    /// A remote session named no workspace (no locator, no client root).
    NoWorkspace = "no_workspace", Usage, 400;
    /// The server holds as many live sessions as it allows: MCP sessions
    /// (`mcp.maxSessions`), or the web view's live streams (16).
    TooManySessions = "too_many_sessions", Busy, 503;
    /// A bug in loci.
    Internal = "internal", Internal, 500;
}

impl ErrorKind {
    /// The stable name.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The exit code.
    pub fn exit(self) -> ExitCode {
        self.row().exit
    }

    /// The HTTP status.
    pub fn http_status(self) -> u16 {
        self.row().http
    }

    /// The kind with this stable name.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::TABLE
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.kind)
    }
}

/// An operation's failure: a kind from the table, a message naming the path, symbol
/// or limit, what to do about it, and structured detail.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The message.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// Extra structured detail (ambiguity candidates, the lock holder...).
    pub detail: Option<serde_json::Value>,
}

/// The wire form of an error, inside `{"error": ...}`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// The exit code the CLI uses for this kind.
    pub code: u8,
    /// The stable kind name.
    pub kind: ErrorKind,
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Extra structured detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
}

/// `{"error": {...}}`: every error answer of the CLI (`--json`) and the HTTP API.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorEnvelope {
    /// The error.
    pub error: ErrorBody,
}

impl ApiError {
    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
            hint: None,
            detail: None,
        }
    }

    /// A read its caller cancelled (the client went away): one message for every read.
    pub fn cancelled() -> ApiError {
        ApiError::new(ErrorKind::Cancelled, "the read was cancelled")
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> ApiError {
        self.hint = Some(hint.into());
        self
    }

    /// Adds structured detail.
    pub fn detail(mut self, detail: serde_json::Value) -> ApiError {
        self.detail = Some(detail);
        self
    }

    /// The exit code from the table.
    pub fn exit_code(&self) -> ExitCode {
        self.kind.exit()
    }

    /// The HTTP status from the table.
    pub fn http_status(&self) -> u16 {
        self.kind.http_status()
    }

    /// The wire form.
    pub fn envelope(&self) -> ErrorEnvelope {
        ErrorEnvelope {
            error: ErrorBody {
                code: self.exit_code().code(),
                kind: self.kind,
                message: self.message.clone(),
                hint: self.hint.clone(),
                detail: self.detail.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_exactly_one_row_and_a_unique_name() {
        let mut names = std::collections::HashSet::new();
        for row in ErrorKind::TABLE {
            assert!(names.insert(row.name), "duplicate name {}", row.name);
            assert_eq!(row.kind.row(), row, "row() disagrees with TABLE");
            assert_eq!(ErrorKind::from_name(row.name), Some(row.kind));
            // The serde name is the table's name.
            assert_eq!(
                serde_json::to_value(row.kind).unwrap(),
                serde_json::json!(row.name)
            );
        }
    }

    #[test]
    fn every_row_maps_to_a_contract_code_and_a_real_status() {
        for row in ErrorKind::TABLE {
            assert_ne!(
                row.exit,
                ExitCode::Ok,
                "{}: an error never exits 0",
                row.name
            );
            assert!(
                (400..600).contains(&row.http),
                "{}: {} is not an error status",
                row.name,
                row.http
            );
            let e = ApiError::new(row.kind, "m").envelope();
            assert_eq!(e.error.code, row.exit.code());
            let v = serde_json::to_value(&e).unwrap();
            assert_eq!(v["error"]["kind"], row.name);
            assert_eq!(v["error"]["code"], row.exit.code());
        }
    }

    #[test]
    fn the_design_statuses_hold() {
        for (kind, status) in [
            (ErrorKind::InvalidInput, 400),
            (ErrorKind::Unauthorized, 401),
            (ErrorKind::NotFound, 404),
            (ErrorKind::Busy, 409),
            (ErrorKind::ConsentRequired, 409),
            (ErrorKind::CapabilityMissing, 412),
            (ErrorKind::TooLong, 413),
            (ErrorKind::LimitExceeded, 422),
            (ErrorKind::Internal, 500),
            (ErrorKind::Storage, 503),
        ] {
            assert_eq!(kind.http_status(), status, "{kind:?}");
        }
    }
}
