//! Running one statement on a [`ReadOnlyConnection`]: the request and result
//! types, the per-statement guard checks, the deadline and the cancel flag.

use std::time::{Duration, Instant};

use loci_store::rusqlite::{self, ErrorCode, Statement};

use crate::error::QueryError;
use crate::guard::{
    HEAP_LIMIT_BYTES, MAX_LIKE_PATTERN_BYTES, MAX_NESTING, MAX_SQL_BYTES, MAX_VALUE_BYTES,
    ReadOnlyConnection,
};
use crate::value::{Params, Value};

/// Default deadline of a request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default cap on returned rows.
pub const DEFAULT_MAX_ROWS: usize = 10_000;
/// Default byte budget of one answer (see [`Query::max_bytes`]).
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;
/// Longest busy wait for a lock held by a writer; always cut to less than
/// the remaining deadline, because a busy wait is a sleep that an interrupt
/// does not end.
pub const MAX_BUSY_TIMEOUT: Duration = Duration::from_secs(2);

pub use crate::id::QueryId;

/// One request: a statement, its parameters and its limits.
#[derive(Debug, Clone)]
pub struct Query {
    /// The id [`crate::QueryEngine::cancel`] takes.
    pub id: QueryId,
    /// Exactly one read-only statement.
    pub sql: String,
    /// Bound parameters.
    pub params: Params,
    /// Deadline, counted from when the request is submitted (queue time
    /// included).
    pub timeout: Duration,
    /// Rows returned at most; more set [`QueryResult::truncated`].
    pub max_rows: usize,
    /// Bytes the answer's values may take at most (each TEXT or BLOB its
    /// length, each number 8, NULL 0). A row that would go past it fails the
    /// request with `limit_exceeded`: the row cap alone lets a few huge rows
    /// take any amount of memory.
    pub max_bytes: usize,
}

impl Query {
    /// A request with a fresh id, no parameters, [`DEFAULT_TIMEOUT`],
    /// [`DEFAULT_MAX_ROWS`] and [`DEFAULT_MAX_BYTES`].
    pub fn new(sql: impl Into<String>) -> Query {
        Query {
            id: QueryId::next(),
            sql: sql.into(),
            params: Params::None,
            timeout: DEFAULT_TIMEOUT,
            max_rows: DEFAULT_MAX_ROWS,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }

    /// Sets the parameters.
    pub fn params(mut self, params: Params) -> Query {
        self.params = params;
        self
    }

    /// Sets the deadline.
    pub fn timeout(mut self, timeout: Duration) -> Query {
        self.timeout = timeout;
        self
    }

    /// Sets the row cap.
    pub fn max_rows(mut self, max_rows: usize) -> Query {
        self.max_rows = max_rows;
        self
    }

    /// Sets the answer's byte budget.
    pub fn max_bytes(mut self, max_bytes: usize) -> Query {
        self.max_bytes = max_bytes;
        self
    }
}

/// What a statement returned.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Rows, each with one value per column.
    pub rows: Vec<Vec<Value>>,
    /// True when more rows existed than `max_rows`.
    pub truncated: bool,
    /// Time from submission to the last row.
    pub elapsed: Duration,
}

/// Receives each row as SQLite produces it: the in-process engine copies
/// it into [`Value`]s, the worker encodes it straight into JSON.
pub(crate) trait RowSink {
    fn row(&mut self, row: &rusqlite::Row<'_>, ncol: usize) -> Result<(), QueryError>;
}

/// Keeps every row as [`Value`]s.
#[derive(Default)]
pub(crate) struct Collect(pub Vec<Vec<Value>>);

impl RowSink for Collect {
    fn row(&mut self, row: &rusqlite::Row<'_>, ncol: usize) -> Result<(), QueryError> {
        let mut out = Vec::with_capacity(ncol);
        for i in 0..ncol {
            let v = row
                .get_ref(i)
                .map_err(|e| QueryError::Sqlite(e.to_string()))?;
            out.push(Value::from_ref(v));
        }
        self.0.push(out);
        Ok(())
    }
}

/// What a statement produced besides its rows.
pub(crate) struct Ran {
    pub columns: Vec<String>,
    pub truncated: bool,
}

/// Runs `q` on `conn`, handing rows to `sink`. `deadline` is absolute.
pub(crate) fn run(
    conn: &ReadOnlyConnection,
    q: &Query,
    deadline: Instant,
    sink: &mut dyn RowSink,
) -> Result<Ran, QueryError> {
    if q.sql.len() > MAX_SQL_BYTES {
        return Err(QueryError::TooLong(format!(
            "the statement is {} bytes; the limit is {MAX_SQL_BYTES}",
            q.sql.len()
        )));
    }
    if only_blanks_and_comments(&q.sql) {
        return Err(QueryError::NoStatement(
            "the request holds no SQL statement (it is empty, blank, or only comments)".into(),
        ));
    }
    let depth = nesting_depth(&q.sql);
    if depth > MAX_NESTING {
        return Err(QueryError::LimitExceeded(format!(
            "the statement nests parentheses {depth} deep; the limit is {MAX_NESTING}"
        )));
    }
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return Err(timeout_error(q.timeout));
    }
    let c = &conn.conn;
    let stop_error = || {
        if conn.state.is_cancelled() {
            QueryError::Cancelled(format!("request {} was cancelled", q.id))
        } else {
            timeout_error(q.timeout)
        }
    };
    conn.state.arm(q.id, deadline);
    // Re-asserted on every statement: nothing the last one did may carry over.
    c.execute_batch("PRAGMA query_only=1")
        .map_err(|e| match code(&e) {
            Some(ErrorCode::OperationInterrupted) => stop_error(),
            _ => QueryError::Sqlite(format!("cannot re-assert query_only: {e}")),
        })?;
    c.busy_timeout(busy_timeout_for(remaining))
        .map_err(|e| QueryError::Sqlite(e.to_string()))?;
    let mut stmt = c.prepare(&q.sql).map_err(|e| {
        // rusqlite prepares the tail too, so `SELECT 1; DELETE ...` fails in
        // the authorizer; name the real problem.
        match prepare_error(e, &conn.path, &stop_error) {
            QueryError::NotReadOnly(_) if has_trailing_statement(conn, &q.sql) => {
                QueryError::MultipleStatements(MULTIPLE.into())
            }
            other => other,
        }
    })?;
    if !stmt.readonly() {
        return Err(QueryError::NotReadOnly(
            "refused: the statement would write (only read-only statements are allowed)".into(),
        ));
    }
    bind(&mut stmt, &q.params)?;
    let columns: Vec<String> = stmt.column_names().into_iter().map(String::from).collect();
    let ncol = columns.len();
    let mut count = 0usize;
    let mut bytes = 0usize;
    let mut truncated = false;
    let mut rows = stmt.raw_query();
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(e) if code(&e) != Some(ErrorCode::OperationInterrupted) && conn.file_changed() => {
                return Err(changed_while_read(conn));
            }
            Err(e) => return Err(step_error(e, &conn.path, &stop_error)),
        };
        if count == q.max_rows {
            truncated = true;
            break;
        }
        bytes = bytes.saturating_add(row_bytes(row, ncol));
        if bytes > q.max_bytes {
            return Err(QueryError::LimitExceeded(format!(
                "the answer exceeds its budget of {} bytes (max_bytes) at row {}; \
                 select fewer or smaller columns, or fewer rows",
                q.max_bytes,
                count + 1
            )));
        }
        sink.row(row, ncol)?;
        count += 1;
    }
    drop(rows);
    if conn.file_changed() {
        return Err(changed_while_read(conn));
    }
    Ok(Ran { columns, truncated })
}

/// Read without shared memory, a statement may have seen a checkpoint half done: its
/// rows are void, and the engine reopens before the next statement.
fn changed_while_read(conn: &ReadOnlyConnection) -> QueryError {
    QueryError::Busy(format!(
        "{} changed while this statement read it without shared memory (this user cannot create its -shm file); retry",
        conn.path.display()
    ))
}

/// What a row's values count against [`Query::max_bytes`].
fn row_bytes(row: &rusqlite::Row<'_>, ncol: usize) -> usize {
    use rusqlite::types::ValueRef;
    (0..ncol)
        .map(|i| match row.get_ref(i) {
            Ok(ValueRef::Text(t) | ValueRef::Blob(t)) => t.len(),
            Ok(ValueRef::Integer(_) | ValueRef::Real(_)) => 8,
            Ok(ValueRef::Null) | Err(_) => 0,
        })
        .sum()
}

/// The deepest nesting of parentheses in `sql`, outside string literals,
/// quoted identifiers and comments.
fn nesting_depth(sql: &str) -> usize {
    let b = sql.as_bytes();
    let (mut i, mut depth, mut max) = (0, 0usize, 0usize);
    let skip_to = |from: usize, end: &[u8]| {
        b[from..]
            .windows(end.len())
            .position(|w| w == end)
            .map_or(b.len(), |p| from + p + end.len())
    };
    while i < b.len() {
        match b[i] {
            b'(' => {
                depth += 1;
                max = max.max(depth);
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            // A doubled quote inside a literal reads as two literals here,
            // which leaves the depth the same.
            q @ (b'\'' | b'"' | b'`') => i = skip_to(i + 1, &[q]),
            b'[' => i = skip_to(i + 1, b"]"),
            b'-' if b.get(i + 1) == Some(&b'-') => i = skip_to(i + 2, b"\n"),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_to(i + 2, b"*/"),
            _ => i += 1,
        }
    }
    max
}

/// A message for SQLite's own limit errors (at prepare or step), naming the
/// limit; `None` for other errors.
fn limit_message(e: &rusqlite::Error) -> Option<String> {
    let text = e.to_string();
    let named = |what: &str| Some(format!("{what}: {text}"));
    match code(e) {
        Some(ErrorCode::TooBig) => {
            return Some(format!(
                "a string or BLOB would exceed {} MiB (SQLITE_LIMIT_LENGTH): {text}",
                MAX_VALUE_BYTES >> 20
            ));
        }
        Some(ErrorCode::OutOfMemory) => {
            return Some(format!(
                "the statement needs more than SQLite's heap limit of {} MiB \
                 (sqlite3_hard_heap_limit64): {text}",
                HEAP_LIMIT_BYTES >> 20
            ));
        }
        _ => {}
    }
    if text.contains("LIKE or GLOB pattern too complex") {
        return Some(format!(
            "a LIKE or GLOB pattern is longer than {MAX_LIKE_PATTERN_BYTES} bytes \
             (SQLITE_LIMIT_LIKE_PATTERN_LENGTH) or too complex: {text}"
        ));
    }
    if text.contains("Expression tree is too large") {
        return named("expression depth (SQLITE_LIMIT_EXPR_DEPTH)");
    }
    if text.contains("too many terms in compound SELECT") {
        return named("terms of a compound SELECT (SQLITE_LIMIT_COMPOUND_SELECT)");
    }
    if text.contains("too many columns") {
        return named("columns (SQLITE_LIMIT_COLUMN)");
    }
    if text.contains("too many arguments on function") {
        return named("function arguments (SQLITE_LIMIT_FUNCTION_ARG)");
    }
    if text.contains("too many SQL variables") {
        return named("parameters (SQLITE_LIMIT_VARIABLE_NUMBER)");
    }
    if text.contains("parser stack overflow") {
        return named("the parser's nesting depth");
    }
    if text.contains("at most 64 tables in a join") {
        return named("tables in a join (64)");
    }
    None
}

/// The busy timeout for a statement with `remaining` time: at most
/// [`MAX_BUSY_TIMEOUT`] and always well under the remaining deadline.
pub fn busy_timeout_for(remaining: Duration) -> Duration {
    (remaining / 2).min(MAX_BUSY_TIMEOUT)
}

pub(crate) fn timeout_error(limit: Duration) -> QueryError {
    QueryError::Timeout(format!(
        "the statement did not finish within its deadline of {} ms",
        limit.as_millis()
    ))
}

fn bind(stmt: &mut Statement<'_>, params: &Params) -> Result<(), QueryError> {
    let expected = stmt.parameter_count();
    let bad = |m: String| QueryError::InvalidParams(m);
    match params {
        Params::None if expected == 0 => Ok(()),
        Params::None => Err(bad(format!(
            "the statement has {expected} parameter(s) and none were given"
        ))),
        Params::Positional(values) => {
            if values.len() != expected {
                return Err(bad(format!(
                    "the statement has {expected} parameter(s); {} were given",
                    values.len()
                )));
            }
            for (i, v) in values.iter().enumerate() {
                stmt.raw_bind_parameter(i + 1, v)
                    .map_err(|e| bad(e.to_string()))?;
            }
            Ok(())
        }
        Params::Named(pairs) => {
            for (name, v) in pairs {
                let idx = if name.starts_with([':', '@', '$']) {
                    stmt.parameter_index(name)
                } else {
                    [":", "@", "$"]
                        .iter()
                        .find_map(|p| stmt.parameter_index(&format!("{p}{name}")).transpose())
                        .transpose()
                }
                .map_err(|e| bad(e.to_string()))?
                .ok_or_else(|| bad(format!("the statement has no parameter named {name:?}")))?;
                stmt.raw_bind_parameter(idx, v)
                    .map_err(|e| bad(e.to_string()))?;
            }
            if pairs.len() != expected {
                return Err(bad(format!(
                    "the statement has {expected} parameter(s); {} were given",
                    pairs.len()
                )));
            }
            Ok(())
        }
    }
}

const MULTIPLE: &str =
    "refused: exactly one statement per request (nothing was run, trailing statements included)";

/// Whether `sql` holds more than one statement: the first one compiles and
/// something other than blanks, comments and `;` follows it.
fn has_trailing_statement(conn: &ReadOnlyConnection, sql: &str) -> bool {
    use loci_store::rusqlite::ffi;
    let Ok(len) = std::os::raw::c_int::try_from(sql.len()) else {
        return false;
    };
    let mut stmt = std::ptr::null_mut();
    let mut tail = std::ptr::null();
    // SAFETY: the handle belongs to this connection and is used on this
    // thread only; `sql` outlives the call; the statement is finalized
    // before returning and `tail` points into `sql`.
    let rest = unsafe {
        let rc = ffi::sqlite3_prepare_v2(
            conn.conn.handle(),
            sql.as_ptr().cast(),
            len,
            &mut stmt,
            &mut tail,
        );
        ffi::sqlite3_finalize(stmt);
        if rc != ffi::SQLITE_OK || tail.is_null() {
            return false;
        }
        let offset = tail.cast::<u8>().offset_from(sql.as_ptr()) as usize;
        &sql[offset.min(sql.len())..]
    };
    !only_blanks_and_comments(rest)
}

fn only_blanks_and_comments(mut s: &str) -> bool {
    loop {
        s = s.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(rest) = s.strip_prefix("--") {
            s = rest.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |(_, after)| after);
        } else {
            return s.is_empty();
        }
    }
}

fn code(e: &rusqlite::Error) -> Option<ErrorCode> {
    e.sqlite_error_code()
}

/// SQLite's read-only codes that are about the file, not the statement: it cannot be
/// read without writing beside it (`SQLITE_READONLY_DIRECTORY`, `_CANTINIT`, ...), or
/// a side file cannot be opened. A storage failure, never `not_read_only`.
fn file_unreadable(e: &rusqlite::Error, path: &std::path::Path) -> Option<QueryError> {
    let rusqlite::Error::SqliteFailure(f, _) = e else {
        return None;
    };
    let about_the_file = (f.code == ErrorCode::ReadOnly
        && f.extended_code != rusqlite::ffi::SQLITE_READONLY)
        || f.code == ErrorCode::CannotOpen;
    about_the_file.then(|| QueryError::Open {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn busy(e: &rusqlite::Error) -> QueryError {
    QueryError::Busy(format!(
        "the index is locked by another connection past the busy wait: {e}"
    ))
}

fn prepare_error(
    e: rusqlite::Error,
    path: &std::path::Path,
    stop: &dyn Fn() -> QueryError,
) -> QueryError {
    if let Some(unreadable) = file_unreadable(&e, path) {
        return unreadable;
    }
    if code(&e) != Some(ErrorCode::TooBig)
        && let Some(m) = limit_message(&e)
    {
        return QueryError::LimitExceeded(m);
    }
    match (&e, code(&e)) {
        (rusqlite::Error::MultipleStatement, _) => QueryError::MultipleStatements(MULTIPLE.into()),
        (_, Some(ErrorCode::AuthorizationForStatementDenied)) => {
            QueryError::NotReadOnly(format!("refused by the read-only guard: {e}"))
        }
        // A denied function is reported as a plain SQLITE_ERROR.
        _ if e.to_string().starts_with("not authorized") => {
            QueryError::NotReadOnly(format!("refused by the read-only guard: {e}"))
        }
        (_, Some(ErrorCode::ReadOnly)) => QueryError::NotReadOnly(format!("refused: {e}")),
        (_, Some(ErrorCode::OperationInterrupted)) => stop(),
        (_, Some(ErrorCode::TooBig)) => QueryError::TooLong(format!("refused: {e}")),
        (rusqlite::Error::NulError(_), _) => {
            QueryError::Syntax(format!("the statement contains a NUL byte: {e}"))
        }
        (_, Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)) => busy(&e),
        _ => QueryError::Syntax(format!("invalid statement: {e}")),
    }
}

fn step_error(
    e: rusqlite::Error,
    path: &std::path::Path,
    stop: &dyn Fn() -> QueryError,
) -> QueryError {
    if let Some(unreadable) = file_unreadable(&e, path) {
        return unreadable;
    }
    if let Some(m) = limit_message(&e) {
        return QueryError::LimitExceeded(m);
    }
    match code(&e) {
        Some(ErrorCode::OperationInterrupted) => stop(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => busy(&e),
        Some(ErrorCode::ReadOnly) => QueryError::NotReadOnly(format!("refused: {e}")),
        Some(ErrorCode::AuthorizationForStatementDenied) => {
            QueryError::NotReadOnly(format!("refused by the read-only guard: {e}"))
        }
        _ => QueryError::Sqlite(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_text_is_a_statement_unless_blank_or_comment() {
        assert!(only_blanks_and_comments(" ;; -- x\n /* y */ ; "));
        assert!(only_blanks_and_comments("-- only"));
        assert!(!only_blanks_and_comments(" DELETE FROM t"));
        assert!(!only_blanks_and_comments("/* c */ SELECT 2"));
    }

    #[test]
    fn nesting_counts_parentheses_outside_literals_and_comments() {
        assert_eq!(nesting_depth("SELECT ((1)), (2)"), 2);
        assert_eq!(
            nesting_depth("SELECT '((((', \"((\", [((], `((` -- ((((\n"),
            0
        );
        assert_eq!(nesting_depth("SELECT /* ((( */ (1) /* unterminated (("), 1);
        assert_eq!(nesting_depth("SELECT 'it''s (' || (1)"), 1);
        assert_eq!(nesting_depth(&format!("SELECT {}1", "(".repeat(300))), 300);
    }

    #[test]
    fn busy_timeout_is_always_shorter_than_the_deadline() {
        for ms in [1u64, 10, 100, 1_000, 3_999, 10_000, 600_000] {
            let remaining = Duration::from_millis(ms);
            let busy = busy_timeout_for(remaining);
            assert!(
                busy < remaining && busy <= MAX_BUSY_TIMEOUT,
                "{ms}: {busy:?}"
            );
        }
    }
}
