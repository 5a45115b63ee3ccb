//! `query`: one read-only SQL statement over a workspace's index, with a deadline, a
//! row cap and bound parameters, in this process or in the killable worker.

use std::path::Path;
use std::time::Duration;

use loci_query::{Params, Query, QueryEngine, Value, WorkerConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};

/// Where a statement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// On a thread of this process, stopped by SQLite's interrupt.
    #[default]
    InProcess,
    /// In a `loci worker` child process that can also be killed.
    Worker,
}

/// One statement to run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryRequest {
    /// Exactly one read-only statement (SELECT, WITH ... SELECT).
    pub sql: String,
    /// Bound parameters: a JSON array for `?`, an object for `:name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
    /// Deadline in milliseconds (default `limits.queryTimeoutMs`'s, 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Rows returned at most (default `limits.maxRows`'s, 1000); more set `truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<usize>,
    /// Where it runs (default in-process).
    #[serde(default)]
    pub engine: Engine,
}

/// What a statement returned.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QueryAnswer {
    /// `in-process` or `worker`.
    pub engine: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows; 64-bit integers beyond 2^53 and BLOBs are tagged objects (docs/query.md).
    #[schemars(with = "Vec<Vec<serde_json::Value>>")]
    pub rows: Vec<Vec<Value>>,
    /// Rows returned.
    pub row_count: usize,
    /// Whether more rows existed.
    pub truncated: bool,
    /// Time taken.
    pub elapsed_ms: f64,
}

/// Runs one statement on the index at `index_path`. The worker engine needs the loci
/// executable that serves `loci worker`.
pub fn query(
    index_path: &Path,
    req: &QueryRequest,
    worker_program: Option<&Path>,
) -> Result<QueryAnswer, ApiError> {
    let params = match &req.params {
        Some(v) => Params::from_json(&v.to_string())
            .map_err(|m| ApiError::new(ErrorKind::InvalidParams, m))?,
        None => Params::None,
    };
    // Anything else at the path (a directory) is the engine's storage error.
    if !index_path.exists() {
        return Err(ApiError::new(
            ErrorKind::NoIndex,
            format!("no index at {}", index_path.display()),
        )
        .hint("run `loci index` in the workspace first"));
    }
    let engine = match req.engine {
        Engine::InProcess => QueryEngine::in_process(index_path)?,
        Engine::Worker => {
            let program = worker_program.ok_or_else(|| {
                ApiError::new(ErrorKind::Worker, "no loci executable for the query worker")
            })?;
            QueryEngine::worker(WorkerConfig::new(program, index_path))?
        }
    };
    let q = Query::new(req.sql.clone())
        .params(params)
        .timeout(req.timeout_ms.map_or_else(
            loci_lifecycle::Config::declared_query_timeout,
            Duration::from_millis,
        ))
        .max_rows(
            req.max_rows
                .unwrap_or_else(loci_lifecycle::Config::declared_max_rows),
        );
    let result = engine.execute(&q);
    engine.close();
    let r = result?;
    Ok(QueryAnswer {
        engine: engine.mode().to_string(),
        row_count: r.rows.len(),
        columns: r.columns,
        rows: r.rows,
        truncated: r.truncated,
        elapsed_ms: r.elapsed.as_secs_f64() * 1000.0,
    })
}
