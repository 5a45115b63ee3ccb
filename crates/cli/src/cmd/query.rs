//! `loci query "<SQL>"`: one read-only statement over a workspace's index,
//! with a deadline, a row cap and bound parameters, in process or through
//! the killable worker.

use std::path::PathBuf;
use std::time::Duration;

use loci_query::{Params, Query, QueryEngine, QueryError, Value, WorkerConfig};
use serde::Serialize;

use crate::exit::{self, Failure};
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
    /// Deadline for the statement (500ms, 10s, 2m).
    #[arg(long, default_value = "10s", value_parser = loci_query::parse_duration)]
    pub timeout: Duration,
    /// Rows returned at most; more set `truncated`.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub max_rows: usize,
    /// Bound parameters: a JSON array (`?`) or object (`:name`).
    #[arg(long, value_name = "JSON")]
    pub params: Option<String>,
    /// Run in this process or in the worker process.
    #[arg(long, value_enum, default_value = "in-process")]
    pub engine: EngineKind,
}

#[derive(Serialize)]
struct Answer<'a> {
    engine: &'static str,
    columns: &'a [String],
    rows: &'a [Vec<Value>],
    row_count: usize,
    truncated: bool,
    elapsed_ms: f64,
}

/// Runs `loci query`.
pub fn run(args: QueryArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let params = match &args.params {
        Some(text) => Params::from_json(text)
            .map_err(|m| Failure::new(exit::INVALID_INPUT, "invalid_params", m))?,
        None => Params::None,
    };
    let root = crate::workspace_arg::query_root(workspace)?;
    let db = loci_store::index_path_for(&root);
    // Anything else at the path (a directory) is the engine's storage error.
    if !db.exists() {
        return Err(Failure::new(
            exit::NOT_FOUND,
            "no_index",
            format!("no index at {}", db.display()),
        )
        .hint("run `loci index` in the workspace first"));
    }
    let engine = match args.engine {
        EngineKind::InProcess => QueryEngine::in_process(&db),
        EngineKind::Worker => {
            let program = std::env::current_exe().map_err(|e| {
                Failure::new(
                    exit::FAILURE,
                    "worker",
                    format!("cannot locate the loci binary for the worker: {e}"),
                )
            })?;
            QueryEngine::worker(WorkerConfig::new(program, &db))
        }
    }
    .map_err(failure)?;
    let q = Query::new(args.sql)
        .params(params)
        .timeout(args.timeout)
        .max_rows(args.max_rows);
    let result = engine.execute(&q);
    engine.close();
    let r = result.map_err(failure)?;
    let answer = Answer {
        engine: engine.mode(),
        columns: &r.columns,
        rows: &r.rows,
        row_count: r.rows.len(),
        truncated: r.truncated,
        elapsed_ms: r.elapsed.as_secs_f64() * 1000.0,
    };
    if json {
        output::json(&answer);
    } else {
        print_table(&answer);
    }
    Ok(())
}

fn print_table(a: &Answer<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", a.columns.join(" | "));
    for row in a.rows {
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

fn failure(e: QueryError) -> Failure {
    let kind = e.kind();
    let message = e.to_string();
    if e.is_invalid_input() {
        let f = Failure::new(exit::INVALID_INPUT, kind, message);
        return match kind {
            "not_read_only" | "multiple_statements" => {
                f.hint("loci query runs exactly one read-only statement (SELECT, WITH ... SELECT)")
            }
            "invalid_params" => f.hint("--params takes a JSON array for ? or an object for :name"),
            _ => f,
        };
    }
    match e {
        QueryError::Timeout(_) => Failure::new(exit::FAILURE, kind, message)
            .hint("raise --timeout, or narrow the statement (LIMIT, WHERE)"),
        QueryError::Open { .. } => Failure::new(exit::STORAGE, kind, message),
        _ => Failure::new(exit::FAILURE, kind, message),
    }
}
