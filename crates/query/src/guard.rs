//! The read-only connection: every layer that keeps a user statement from
//! writing, attaching or reconfiguring, installed once when the connection is
//! opened and kept for its whole life (DESIGN.md invariant 5).
//!
//! Layers, each sufficient on its own for the common cases and together
//! leaving no way around:
//! 1. the file is opened with `SQLITE_OPEN_READ_ONLY` (no create, never as a
//!    URI; for a user who may not write beside it, `immutable` when that is
//!    exact: `loci_store::open_read_only`);
//! 2. `PRAGMA query_only=1`, re-asserted before every statement;
//! 3. an authorizer that allows only reads, functions, recursive CTEs and an
//!    allowlist of introspection PRAGMAs, and denies everything else
//!    (ATTACH/DETACH, every write, DDL, transactions, other PRAGMAs);
//! 4. `SQLITE_LIMIT_ATTACHED = 0`;
//! 5. a statement-length limit, checked before SQLite sees the text and set
//!    as `SQLITE_LIMIT_SQL_LENGTH`;
//! 6. exactly one statement per request, and `sqlite3_stmt_readonly` must be
//!    true before the statement is stepped at all (so `VACUUM INTO` never runs).
//!
//! It also sets the resource limits that keep one statement's single steps
//! short and its memory bounded ([`MAX_VALUE_BYTES`],
//! [`MAX_LIKE_PATTERN_BYTES`], [`HEAP_LIMIT_BYTES`]; [`MAX_NESTING`] is checked
//! in `exec.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use loci_store::Snapshot;
use loci_store::rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use loci_store::rusqlite::limits::Limit;
use loci_store::rusqlite::{Connection, InterruptHandle};

use crate::error::QueryError;
use crate::id::QueryId;

/// The longest statement text accepted, in bytes.
pub const MAX_SQL_BYTES: usize = 100_000;

/// The largest string or BLOB a statement may make or read
/// (`SQLITE_LIMIT_LENGTH`, SQLite's default is 1 GB): it bounds the time and
/// memory of one function call (`randomblob`, `zeroblob`, `printf`,
/// `replace`, `group_concat`), which the progress handler cannot split.
pub const MAX_VALUE_BYTES: usize = 16 << 20;

/// The longest LIKE or GLOB pattern, in bytes
/// (`SQLITE_LIMIT_LIKE_PATTERN_LENGTH`, default 50,000). SQLite's matcher
/// recurses once per wildcard and costs up to text × pattern.
pub const MAX_LIKE_PATTERN_BYTES: usize = 1_000;

/// SQLite's hard heap limit (`sqlite3_hard_heap_limit64`), set when a query
/// connection opens if the process has none: past it, allocations fail and
/// the statement ends with `limit_exceeded` instead of exhausting memory.
/// The limit is process-wide; loci's own SQLite use (the indexer) stays far
/// below it.
pub const HEAP_LIMIT_BYTES: i64 = 1 << 30;

/// The deepest nesting of parentheses a statement may have. Each level of
/// `FROM (SELECT ...)` costs SQLite's compiler a recursion and superlinear
/// time, and no SQLite limit covers it (expression depth does not).
pub const MAX_NESTING: usize = 256;

/// The deepest expression tree (`SQLITE_LIMIT_EXPR_DEPTH`, SQLite's default,
/// set so a build with a larger maximum cannot raise it): the stack of
/// [`crate::in_process`]'s threads is sized for it.
pub const MAX_EXPR_DEPTH: usize = 1_000;

/// VM instructions between two deadline checks (about 10 µs of work).
const PROGRESS_OPS: i32 = 1_000;

/// PRAGMAs whose argument is a table or index name (`PRAGMA table_info(t)`).
const PRAGMAS_WITH_ARGUMENT: &[&str] = &[
    "table_info",
    "table_xinfo",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "table_list",
];

/// PRAGMAs allowed only as reads (no `= value`).
const PRAGMAS_READ: &[&str] = &[
    "table_list",
    "user_version",
    "schema_version",
    "application_id",
    "page_count",
    "page_size",
    "freelist_count",
    "encoding",
    "data_version",
    "compile_options",
    "query_only",
];

/// Functions denied even though they are not writes.
const DENIED_FUNCTIONS: &[&str] = &["load_extension"];

/// State the progress handler reads: the current deadline and whether the
/// running statement was cancelled. Shared with the engine, reset before
/// every statement.
#[derive(Debug)]
pub(crate) struct RunState {
    base: Instant,
    /// Deadline as nanoseconds after `base`; `u64::MAX` for none.
    deadline_ns: AtomicU64,
    /// Read by the progress handler on every check, so a plain flag.
    cancelled: AtomicBool,
    /// Which request the last cancel was for. Arming for that same request keeps
    /// the flag set: a cancel that lands after the request took its turn but before
    /// its statement started is not lost.
    cancelled_id: std::sync::Mutex<Option<QueryId>>,
    /// The request whose statement was armed last (0 for none).
    current: AtomicU64,
}

impl RunState {
    fn new() -> Self {
        RunState {
            base: Instant::now(),
            deadline_ns: AtomicU64::new(u64::MAX),
            cancelled: AtomicBool::new(false),
            cancelled_id: std::sync::Mutex::new(None),
            current: AtomicU64::new(0),
        }
    }

    /// Arms the state for request `id`'s statement: its deadline, and cancelled only
    /// if the last cancel was for `id` itself.
    pub(crate) fn arm(&self, id: QueryId, deadline: Instant) {
        let ns = deadline.saturating_duration_since(self.base).as_nanos();
        self.deadline_ns
            .store(ns.min(u64::MAX as u128) as u64, Ordering::SeqCst);
        let target = self.cancelled_id.lock().unwrap_or_else(|p| p.into_inner());
        self.cancelled.store(*target == Some(id), Ordering::SeqCst);
        self.current.store(id.0, Ordering::SeqCst);
    }

    /// The request whose statement was armed last.
    pub(crate) fn current(&self) -> Option<QueryId> {
        Some(self.current.load(Ordering::SeqCst))
            .filter(|&i| i != 0)
            .map(QueryId)
    }

    /// Marks request `id` (the one holding the turn) cancelled.
    pub(crate) fn cancel(&self, id: QueryId) {
        let mut target = self.cancelled_id.lock().unwrap_or_else(|p| p.into_inner());
        *target = Some(id);
        self.cancelled.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    fn should_stop(&self) -> bool {
        if self.cancelled.load(Ordering::Relaxed) {
            return true;
        }
        let ns = self.base.elapsed().as_nanos();
        ns >= self.deadline_ns.load(Ordering::Relaxed) as u128
    }
}

/// A connection that can only read: built only by [`ReadOnlyConnection::open`],
/// which installs every guard, so holding one means the guards are on.
pub struct ReadOnlyConnection {
    pub(crate) conn: Connection,
    pub(crate) state: Arc<RunState>,
    pub(crate) path: PathBuf,
    /// `Some` when the file is read as immutable (this user cannot create its `-shm`):
    /// checked around every statement.
    pub(crate) snapshot: Option<Snapshot>,
}

impl std::fmt::Debug for ReadOnlyConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOnlyConnection")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl ReadOnlyConnection {
    /// Opens an existing database file read-only and installs the guards.
    pub fn open(path: &Path) -> Result<ReadOnlyConnection, QueryError> {
        Self::open_with(path, Arc::new(RunState::new()))
    }

    /// [`ReadOnlyConnection::open`] sharing `state` (an engine reopening its
    /// connection keeps the deadline and cancel state its callers hold).
    pub(crate) fn open_with(
        path: &Path,
        state: Arc<RunState>,
    ) -> Result<ReadOnlyConnection, QueryError> {
        let open_err = |message: String| QueryError::Open {
            path: path.to_path_buf(),
            message,
        };
        if path.is_dir() {
            return Err(open_err(
                "it is a directory, not an index database file".into(),
            ));
        }
        // Read-only, no create, never a URI: a missing file is an error, and a
        // name cannot carry `?mode=rw`, `?immutable=1` or `?vfs=`. A user who may
        // not write beside the file still reads it (the store's `open_read_only`).
        let loci_store::ReadOnlyDb { conn, snapshot } =
            loci_store::open_read_only(path).map_err(|e| match e {
                loci_store::StoreError::Sqlite { source, .. } => open_err(source.to_string()),
                other => open_err(other.to_string()),
            })?;
        // SQLite reads the file only when a statement needs it: read its schema now, so a
        // file that is not a database fails here, as a storage error, rather than as the
        // first statement's "syntax". A locked file is the statement's to report: the
        // probe does not wait (each statement sets its own busy wait).
        let probe = conn.busy_timeout(Duration::ZERO).and_then(|()| {
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
                r.get::<_, i64>(0)
            })
        });
        if let Err(e) = probe
            && e.sqlite_error_code() == Some(loci_store::rusqlite::ErrorCode::NotADatabase)
        {
            return Err(open_err(e.to_string()));
        }
        let setup = || -> loci_store::rusqlite::Result<()> {
            conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
            conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES as i32)?;
            conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES as i32)?;
            conn.set_limit(Limit::SQLITE_LIMIT_EXPR_DEPTH, MAX_EXPR_DEPTH as i32)?;
            conn.set_limit(
                Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
                MAX_LIKE_PATTERN_BYTES as i32,
            )?;
            conn.pragma_update(None, "query_only", true)?;
            Ok(())
        };
        setup().map_err(|e| open_err(e.to_string()))?;
        ensure_heap_limit();
        conn.authorizer(Some(authorize));
        let s = state.clone();
        conn.progress_handler(PROGRESS_OPS, Some(move || s.should_stop()));
        Ok(ReadOnlyConnection {
            conn,
            state,
            path: path.to_path_buf(),
            snapshot,
        })
    }

    /// Whether this connection reads the file as immutable and the file has changed
    /// since (or a write-ahead log now holds changes): it must be reopened before
    /// the next statement, or it would mix old cached pages with new ones.
    pub(crate) fn is_stale(&self) -> bool {
        self.snapshot.as_ref().is_some_and(|s| !s.is_current())
    }

    /// Whether what the last statement read may be torn: the connection reads the
    /// file as immutable and something wrote the file meanwhile.
    pub(crate) fn file_changed(&self) -> bool {
        self.snapshot.as_ref().is_some_and(|s| !s.file_unchanged())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A handle that interrupts the statement running on this connection,
    /// from any thread.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        self.conn.get_interrupt_handle()
    }
}

/// Sets SQLite's hard heap limit to [`HEAP_LIMIT_BYTES`] unless the process
/// already has one.
fn ensure_heap_limit() {
    use loci_store::rusqlite::ffi;
    // SAFETY: a negative argument only reads the current limit; a positive one
    // sets it. Both are thread-safe calls without pointers.
    unsafe {
        if ffi::sqlite3_hard_heap_limit64(-1) == 0 {
            ffi::sqlite3_hard_heap_limit64(HEAP_LIMIT_BYTES);
        }
    }
}

/// The authorizer: allow reads, deny everything else.
fn authorize(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Function { function_name } => {
            if DENIED_FUNCTIONS
                .iter()
                .any(|f| f.eq_ignore_ascii_case(function_name))
            {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => {
            if pragma_allowed(pragma_name, pragma_value) {
                Authorization::Allow
            } else {
                Authorization::Deny
            }
        }
        _ => Authorization::Deny,
    }
}

fn pragma_allowed(name: &str, value: Option<&str>) -> bool {
    let name = name.to_ascii_lowercase();
    match value {
        None => {
            PRAGMAS_READ.contains(&name.as_str()) || PRAGMAS_WITH_ARGUMENT.contains(&name.as_str())
        }
        Some(v) if name == "query_only" => {
            // Turning it on again is what loci itself does; off is refused.
            matches!(v.to_ascii_lowercase().as_str(), "1" | "on" | "true" | "yes")
        }
        Some(_) => PRAGMAS_WITH_ARGUMENT.contains(&name.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragma_allowlist_reads_only() {
        assert!(pragma_allowed("table_info", Some("files")));
        assert!(pragma_allowed("user_version", None));
        assert!(pragma_allowed("QUERY_ONLY", Some("ON")));
        assert!(!pragma_allowed("query_only", Some("0")));
        assert!(!pragma_allowed("user_version", Some("7")));
        assert!(!pragma_allowed("journal_mode", None));
        assert!(!pragma_allowed("writable_schema", Some("1")));
    }

    #[test]
    fn a_cancel_before_the_statement_is_armed_is_kept_for_that_request_only() {
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let state = RunState::new();
        // The cancel lands after request 7 took its turn, before its statement armed.
        state.cancel(QueryId(7));
        state.arm(QueryId(7), far);
        assert!(state.is_cancelled() && state.should_stop());
        // It does not leak into the next request.
        state.arm(QueryId(8), far);
        assert!(!state.is_cancelled() && !state.should_stop());
    }
}
