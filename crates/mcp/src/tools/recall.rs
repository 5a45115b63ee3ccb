//! `recall`: the memories that answer a question or concern a symbol or file, fused
//! from full text, vectors (when installed), entities and the code graph, each hit
//! saying why it ranked and whether the code it is linked to changed.

use loci_api::ApiError;
use loci_api::memory::{self as mem, RecallRequest};
use schemars::JsonSchema;
use serde_json::json;

use super::memory::{Scope, freshness, target};
use super::wire::{Number, Object};
use super::{Answer, Ctx, Reply, ToolDef, to_value};
use crate::args::Args;

/// The arguments.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: read through Args")]
struct Input {
    query: Option<String>,
    symbol: Option<String>,
    file: Option<String>,
    namespace: Option<String>,
    scope: Option<Scope>,
    // Strings, as `type` in remember and memory (see MemoryArgs).
    types: Option<Vec<String>>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<Number>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as JSON")]
struct Output {
    hits: Vec<Object>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vectors: Option<Object>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cut_by_budget: Option<u64>,
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "recall",
    title: "Recall memories",
    description: "Memories for a `query`, or linked to a `symbol` (or code it reaches) or `file`. Each hit \
says why it ranked and if its code went `stale`.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: None,
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let mut req = RecallRequest {
        query: args.opt_string("query")?.unwrap_or_default(),
        symbol: args.opt_string("symbol")?,
        file: args.opt_string("file")?,
        limit: args.opt_usize_max("limit", mem::MAX_RECALL_LIMIT as u64)?,
        ..RecallRequest::default()
    };
    req.filter.namespace = args.opt_string("namespace")?;
    req.filter.types = super::memory::json_arg(args, "types")?;
    req.filter.since = args.opt_string("since")?;
    req.filter.until = args.opt_string("until")?;
    let answer = mem::recall(&target(ctx, args)?, &req)?;
    let mut text = format!(
        "{} memories (vectors {})",
        answer.hits.len(),
        answer.vectors.state
    );
    for h in &answer.hits {
        text.push_str(&format!(
            "\n{:.3} {}{}",
            h.score,
            h.memory.name,
            if h.stale { " STALE" } else { "" }
        ));
        for r in &h.stale_reasons {
            text.push_str(&format!("\n  stale: {r}"));
        }
    }
    let mut structured = to_value(&answer)?;
    // The budget: the last hits go first, and the answer says so.
    let room = super::memory::body_budget(args)?;
    let mut cut = 0;
    while structured.to_string().len() > room {
        match structured["hits"].as_array_mut() {
            Some(hits) if hits.len() > 1 => {
                hits.pop();
                cut += 1;
            }
            _ => break,
        }
    }
    if cut > 0 {
        structured["cut_by_budget"] = json!(cut);
        text.push_str(&format!(
            "\n[{cut} more hits cut by budget: raise max_chars or lower limit]"
        ));
    }
    Ok(Reply {
        answer: Answer::One { structured, text },
        freshness: freshness(ctx),
    })
}
