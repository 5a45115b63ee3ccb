//! `status`: the session's workspace, its index state at session start, what the index
//! holds, and how fresh it is now.

use loci_api::{ApiError, ErrorKind};
use serde_json::{Value, json};

use super::{Answer, Ctx, Reply, ToolDef, object};
use crate::args::Args;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "status",
    title: "Index status",
    description: "The workspace this session reads, its index state at session start (clean, drift, \
syncing, indexing, unindexed, busy, corrupt, unavailable) with the reason and a hint, and what the index \
holds (files, symbols, edges, languages). Call it first when unsure the workspace is indexed.",
    input: || object(json!({}), &[]),
    output: || {
        object(
            json!({
                "workspace": {"type": "string"},
                "session_start": {
                    "type": "object",
                    "properties": {
                        "state": {"type": "string"}, "reason": {"type": "string"},
                        "hint": {"type": "string"}
                    },
                    "required": ["state", "reason"]
                },
                "counts": {
                    "type": ["object", "null"],
                    "properties": {
                        "files": {"type": "integer"}, "symbols": {"type": "integer"},
                        "edges": {"type": "integer"}, "languages": {"type": "object"}
                    }
                }
            }),
            &["workspace", "session_start", "counts"],
        )
    },
    list: None,
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, _args: &Args) -> Result<Reply, ApiError> {
    let (state, reason, hint) = match &ctx.session_start {
        Some(s) => (s.state.name().to_string(), s.reason.clone(), s.hint.clone()),
        None => (
            "pending".to_string(),
            "the session-start check is still running".to_string(),
            None,
        ),
    };
    let ws = ctx.workspace()?;
    let (counts, freshness) = match loci_api::graph::stats(&ws, &ctx.opts) {
        Ok(a) => (
            json!({
                "files": a.stats.files, "symbols": a.stats.symbols, "edges": a.stats.edges,
                "languages": a.stats.languages,
            }),
            Some(a.index),
        ),
        Err(e) if matches!(e.kind, ErrorKind::NoIndex | ErrorKind::Indexing) => (Value::Null, None),
        Err(e) => return Err(e),
    };
    let workspace = ctx.host.shown_root(ctx.root);
    let mut start = json!({"state": state, "reason": reason});
    if let Some(h) = &hint {
        start["hint"] = json!(h);
    }
    let mut text = format!("workspace {workspace}: {state} ({reason})");
    if let Some(h) = &hint {
        text.push_str(&format!("\nhint: {h}"));
    }
    if let Some(c) = counts.as_object() {
        text.push_str(&format!(
            "\n{} files, {} symbols, {} edges",
            c["files"], c["symbols"], c["edges"]
        ));
    } else {
        text.push_str("\nno index yet: run `loci index` in the workspace");
    }
    Ok(Reply {
        answer: Answer::One {
            structured: json!({"workspace": workspace, "session_start": start, "counts": counts}),
            text,
        },
        freshness,
    })
}
