//! `query`: one read-only SQL statement over the index, with a deadline and a row cap.
//! The description carries the schema an agent may use.

use loci_api::sql::{Engine, QueryRequest};
use loci_api::{ApiError, ErrorKind};
use serde_json::{Value, json};

use super::{Answer, Ctx, Reply, ToolDef, object};
use crate::args::Args;
use crate::budget::{Listing, clip};

/// Rows per page when the call names no `limit`.
const ROWS: usize = 200;
/// The deadline when the call names none.
const TIMEOUT_MS: u64 = 5_000;
/// The longest deadline a call may ask for.
const MAX_TIMEOUT_MS: u64 = 60_000;
/// Characters of one cell in the text rendering.
const CELL_CHARS: usize = 120;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "query",
    title: "Read-only SQL over the index",
    description: "One read-only SQLite statement (SELECT or WITH) over the code graph; `params` binds `?` \
(array) or `:name` (object); deadline `timeout_ms` (default 5000). Tables: \
files(id, path, lang, lines, resolved, unresolved_refs); \
symbols(id, file_id, name, qualified_name, kind, signature, doc, start_line, end_line, parent_id); \
edges(src_file, kind CALLS|REFERENCES|IMPORTS|INHERITS|IMPLEMENTS|CONTAINS, src_symbol, dst_file, dst_symbol, \
confidence exact|import|name, line); imports(file_id, module, name, alias, line); \
bases(file_id, symbol_id, subject, name, kind, line). \
Example: SELECT s.qualified_name, f.path, s.start_line FROM symbols s JOIN files f ON f.id = s.file_id \
WHERE s.kind = 'trait' LIMIT 20.",
    input: || {
        object(
            json!({
                "sql": {"type": "string"},
                "params": {"type": ["array", "object"]},
                "timeout_ms": {"type": ["integer", "string"]}
            }),
            &["sql"],
        )
    },
    output: || {
        object(
            json!({
                "columns": {"type": "array", "items": {"type": "string"}},
                "rows": {"type": "array", "items": {"type": "array"}},
                "elapsed_ms": {"type": "number"}
            }),
            &["columns", "rows"],
        )
    },
    list: Some("rows"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let sql = args.string("sql")?;
    let offset = super::offset(args);
    let limit = args
        .opt_usize_max("limit", loci_api::MAX_LIMIT as u64)?
        .unwrap_or(ROWS)
        .max(1);
    if args
        .opt_string("cursor")?
        .is_some_and(|c| c.parse::<usize>().is_err())
    {
        return Err(ApiError::new(
            ErrorKind::InvalidInput,
            "`cursor` is not a cursor this tool returned",
        )
        .hint("pass `page.next_cursor` of the previous answer unchanged"));
    }
    let timeout_ms = args.opt_u64("timeout_ms")?.unwrap_or(TIMEOUT_MS);
    if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
        return Err(ApiError::new(
            ErrorKind::LimitExceeded,
            format!("`timeout_ms` {timeout_ms} is outside 1..={MAX_TIMEOUT_MS}"),
        ));
    }
    let ws = ctx.workspace()?;
    // The index's own state (and a named `no_index` when there is none).
    let ((), freshness) = ws.read(&ctx.opts, |_| Ok(()))?;
    let req = QueryRequest {
        sql,
        params: args.opt_value("params").cloned(),
        timeout_ms: Some(timeout_ms),
        max_rows: Some(offset.saturating_add(limit)),
        engine: if ctx.host.worker_program.is_some() {
            Engine::Worker
        } else {
            Engine::InProcess
        },
    };
    let answer = loci_api::sql::query(ws.index_path(), &req, ctx.host.worker_program.as_deref())?;
    let rows: Vec<Value> = answer
        .rows
        .iter()
        .skip(offset)
        .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
        .collect();
    let lines = rows
        .iter()
        .map(|r| {
            r.as_array()
                .map(|cells| {
                    cells
                        .iter()
                        .map(|c| match c {
                            Value::String(s) => clip(s, CELL_CHARS),
                            other => clip(&other.to_string(), CELL_CHARS),
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                })
                .unwrap_or_default()
        })
        .collect();
    let shown_total = (offset + rows.len()) as u64 + u64::from(answer.truncated);
    let mut head = serde_json::Map::new();
    head.insert("columns".into(), json!(answer.columns));
    head.insert("elapsed_ms".into(), json!(answer.elapsed_ms));
    let title = format!(
        "{} ({})",
        answer.columns.join(" | "),
        if answer.truncated {
            "more rows follow"
        } else {
            "all rows"
        }
    );
    Ok(Reply {
        answer: Answer::List(Listing {
            key: "rows",
            items: rows,
            lines,
            offset,
            total: shown_total,
            exact: !answer.truncated,
            head,
            title,
        }),
        freshness: Some(freshness),
    })
}
