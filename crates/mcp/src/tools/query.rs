//! `query`: one read-only SQL statement over the index, with a deadline and a row cap.
//! The description carries the schema an agent may use.

use std::sync::Arc;

use loci_api::sql::{Engine, QueryAnswer, QueryRequest};
use loci_api::sql_service::{MIN_DEADLINE_MS, SqlRequest, SqlService};
use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::shared::PageArgs;
use super::wire::{Number, Params};
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;
use crate::budget::{Listing, clip};

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    sql: String,
    params: Option<Params>,
    timeout_ms: Option<Number>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as a Listing")]
struct Output {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
    elapsed_ms: f64,
}

/// Rows per page when the call names no `limit`.
const ROWS: usize = 200;
/// The longest deadline a call may ask for.
const MAX_TIMEOUT_MS: u64 = 60_000;
/// Characters of one cell in the text rendering.
const CELL_CHARS: usize = 120;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "query",
    title: "Read-only SQL over the index",
    description: "One read-only SQLite statement (SELECT or WITH) over the code graph; `params` binds `?` \
(array) or `:name` (object); deadline `timeout_ms` (default 10000, the server's limits.queryTimeoutMs when served). Tables: \
files(id, path, lang, lines, resolved, unresolved_refs); \
symbols(id, file_id, name, qualified_name, kind, signature, doc, start_line, end_line, parent_id); \
edges(src_file, kind CALLS|REFERENCES|IMPORTS|INHERITS|IMPLEMENTS|CONTAINS, src_symbol, dst_file, dst_symbol, \
confidence exact|import|name, line); imports(file_id, module, name, alias, line); \
bases(file_id, symbol_id, subject, name, kind, line). \
Example: SELECT s.qualified_name, f.path, s.start_line FROM symbols s JOIN files f ON f.id = s.file_id \
WHERE s.kind = 'trait' LIMIT 20.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("rows"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

/// Runs the statement in the service's killable worker (as the server's HTTP route
/// does): within the deadline, and killed at once when the call is cancelled.
fn in_worker(
    ctx: &Ctx<'_>,
    service: &Arc<SqlService>,
    ws: &loci_api::Workspace,
    sql: String,
    params: Option<Value>,
    timeout_ms: u64,
    (offset, limit): (usize, usize),
) -> Result<QueryAnswer, ApiError> {
    let cap = service.limits().max_rows;
    if offset >= cap {
        return Err(ApiError::new(
            ErrorKind::LimitExceeded,
            format!("the cursor {offset} is past the server's row cap {cap} (limits.maxRows)"),
        )
        .hint("narrow the statement (WHERE, or LIMIT/OFFSET in the SQL)"));
    }
    let rows = offset.saturating_add(limit);
    let prepared = service.prepare(&SqlRequest {
        sql,
        params,
        id: None,
        deadline_ms: Some(timeout_ms.max(MIN_DEADLINE_MS)),
        max_rows: Some(rows.min(cap) as u64),
    })?;
    let (svc, qid) = (service.clone(), prepared.query_id());
    ctx.cancel.on_cancel(move || svc.cancel_query(qid));
    let a = service.execute(ws.index_path(), prepared)?;
    Ok(QueryAnswer {
        engine: "worker".into(),
        row_count: a.row_count,
        columns: a.columns,
        rows: a.rows,
        truncated: a.truncated,
        elapsed_ms: a.elapsed_ms,
    })
}

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {
        sql,
        params,
        timeout_ms,
    } = args.parse()?;
    let page: PageArgs = args.parse()?;
    let offset = super::offset(args);
    let limit = super::within("limit", page.limit, loci_api::MAX_LIMIT as u64)?
        .unwrap_or(ROWS)
        .max(1);
    if page.cursor.is_some_and(|c| c.parse::<usize>().is_err()) {
        return Err(ApiError::new(
            ErrorKind::InvalidInput,
            "`cursor` is not a cursor this tool returned",
        )
        .hint("pass `page.next_cursor` of the previous answer unchanged"));
    }
    // Served: the server's own deadline (limits.queryTimeoutMs), default and longest,
    // as on its HTTP route. Over stdio: the key's declared default, up to a minute.
    let (default_ms, max_ms) = match ctx.host.sql.as_ref() {
        Some(s) => {
            let ms = u64::try_from(s.limits().max_deadline.as_millis()).unwrap_or(u64::MAX);
            (ms, ms)
        }
        None => {
            let declared = loci_api::vocab::lifecycle::Config::declared_query_timeout();
            let ms = u64::try_from(declared.as_millis()).unwrap_or(u64::MAX);
            (ms.min(MAX_TIMEOUT_MS), MAX_TIMEOUT_MS)
        }
    };
    let timeout_ms = timeout_ms.map_or(default_ms, |n| n.0);
    if timeout_ms == 0 || timeout_ms > max_ms {
        return Err(ApiError::new(
            ErrorKind::LimitExceeded,
            format!("`timeout_ms` {timeout_ms} is outside 1..={max_ms}"),
        ));
    }
    let ws = ctx.workspace()?;
    // The index's own state (and a named `no_index` when there is none).
    let ((), freshness) = ws.read(&ctx.opts, |_| Ok(()))?;
    let params = params.map(|p| p.0);
    let answer = match &ctx.host.sql {
        Some(service) => in_worker(ctx, service, &ws, sql, params, timeout_ms, (offset, limit))?,
        None => {
            let req = QueryRequest {
                sql,
                params,
                timeout_ms: Some(timeout_ms),
                max_rows: Some(offset.saturating_add(limit)),
                engine: if ctx.host.worker_program.is_some() {
                    Engine::Worker
                } else {
                    Engine::InProcess
                },
            };
            loci_api::sql::query(ws.index_path(), &req, ctx.host.worker_program.as_deref())?
        }
    };
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Input;
    use crate::args::of;
    use crate::tools::wire::{Number, Params};

    #[test]
    fn query_arguments_parse_into_its_input() {
        let input: Input = of(json!({"sql": "SELECT 1", "params": [1, "a"], "timeout_ms": "500"}))
            .parse()
            .unwrap();
        let want = Input {
            sql: "SELECT 1".into(),
            params: Some(Params(json!([1, "a"]))),
            timeout_ms: Some(Number(500)),
        };
        assert_eq!(input, want);
        // Parameters go on as sent: the SQL layer names what is wrong with them.
        let input: Input = of(json!({"sql": "SELECT 1", "params": 3})).parse().unwrap();
        assert_eq!(input.params, Some(Params(json!(3))));
        let e = of(json!({"sql": ["SELECT 1"]}))
            .parse::<Input>()
            .unwrap_err();
        assert_eq!(
            e.error.message,
            "the argument `sql` must be a string, not [\"SELECT 1\"]"
        );
    }
}
