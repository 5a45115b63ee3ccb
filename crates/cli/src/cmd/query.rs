//! `loci query "<SQL>"`: one read-only statement over a workspace's index,
//! with a deadline, a row cap and bound parameters, in process or through
//! the killable worker.

use std::path::PathBuf;
use std::time::Duration;

use loci_api::sql::{Engine, QueryAnswer, QueryRequest};
use loci_api::vocab::query::Value;
use loci_api::{ApiError, ErrorKind};

use crate::output;

/// Where the statement runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineKind {
    /// On this process's thread, stopped by SQLite's interrupt.
    InProcess,
    /// In a `loci worker` child process that can also be killed.
    Worker,
}

/// Arguments of `loci query`.
#[derive(clap::Args)]
pub struct QueryArgs {
    /// Exactly one read-only SQL statement.
    pub sql: String,
    /// Deadline for the statement (500ms, 10s, 2m) [default: 10s].
    #[arg(long, value_parser = loci_api::vocab::query::parse_duration)]
    pub timeout: Option<Duration>,
    /// Rows returned at most; more set `truncated` [default: 1000].
    #[arg(long, value_name = "N")]
    pub max_rows: Option<usize>,
    /// Bound parameters: a JSON array (`?`) or object (`:name`).
    #[arg(long, value_name = "JSON")]
    pub params: Option<String>,
    /// Run in this process or in the worker process.
    #[arg(long, value_enum, default_value = "in-process")]
    pub engine: EngineKind,
}

/// Runs `loci query`.
pub fn run(args: QueryArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let params = match &args.params {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| {
            ApiError::new(
                ErrorKind::InvalidParams,
                format!("--params is not JSON: {e}"),
            )
            .hint("--params takes a JSON array for ? or an object for :name")
        })?),
        None => None,
    };
    let ws = crate::workspace_arg::open(workspace)?;
    let req = QueryRequest {
        sql: args.sql,
        params,
        timeout_ms: args
            .timeout
            .map(|t| t.as_millis().min(u128::from(u64::MAX)) as u64),
        max_rows: args.max_rows,
        engine: match args.engine {
            EngineKind::InProcess => Engine::InProcess,
            EngineKind::Worker => Engine::Worker,
        },
    };
    let program = std::env::current_exe().ok();
    let answer = loci_api::sql::query(ws.index_path(), &req, program.as_deref())?;
    if json {
        output::json(&answer);
    } else {
        print_table(&answer);
    }
    Ok(())
}

fn print_table(a: &QueryAnswer) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", a.columns.join(" | "));
    for row in &a.rows {
        let cells: Vec<String> = row.iter().map(Value::display).collect();
        let _ = writeln!(out, "{}", cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "({} row{}{}, {:.1} ms)",
        a.row_count,
        if a.row_count == 1 { "" } else { "s" },
        if a.truncated { ", truncated" } else { "" },
        a.elapsed_ms
    );
}
