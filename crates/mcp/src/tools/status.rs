//! `status`: the session's workspace, its index state at session start, what the index
//! holds, and how fresh it is now.

use std::collections::BTreeMap;

use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::wire::Object;
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;

/// The arguments: none of its own.
#[derive(Deserialize, JsonSchema)]
struct Input {}

/// The answer.
#[derive(Serialize, JsonSchema)]
struct Output {
    workspace: String,
    session_start: SessionStart,
    counts: Option<Counts>,
}

/// The index state at session start.
#[derive(Serialize, JsonSchema)]
struct SessionStart {
    state: String,
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

/// What the index holds.
#[derive(Serialize, JsonSchema)]
struct Counts {
    files: u64,
    symbols: u64,
    edges: u64,
    #[schemars(with = "Object")]
    languages: BTreeMap<String, u64>,
}

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "status",
    title: "Index status",
    description: "The workspace this session reads, its index state at session start (clean, drift, \
syncing, indexing, unindexed, busy, corrupt, unavailable) with the reason and a hint, and what the index \
holds (files, symbols, edges, languages). Call it first when unsure the workspace is indexed.",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: None,
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {} = args.parse()?;
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
            Some(Counts {
                files: a.stats.files,
                symbols: a.stats.symbols,
                edges: a.stats.edges,
                languages: a.stats.languages,
            }),
            Some(a.index),
        ),
        Err(e) if matches!(e.kind, ErrorKind::NoIndex | ErrorKind::Indexing) => (None, None),
        Err(e) => return Err(e),
    };
    let workspace = ctx.host.shown_root(ctx.root);
    let mut text = format!("workspace {workspace}: {state} ({reason})");
    if let Some(h) = &hint {
        text.push_str(&format!("\nhint: {h}"));
    }
    match &counts {
        Some(c) => text.push_str(&format!(
            "\n{} files, {} symbols, {} edges",
            c.files, c.symbols, c.edges
        )),
        None => text.push_str("\nno index yet: run `loci index` in the workspace"),
    }
    let answer = Output {
        workspace,
        session_start: SessionStart {
            state,
            reason,
            hint,
        },
        counts,
    };
    Ok(Reply {
        answer: Answer::One {
            structured: super::to_value(&answer)?,
            text,
        },
        freshness,
    })
}
