//! `status`: the session's workspace, its index state computed on the call (and what the
//! session-start check found), what the index holds, and how fresh it is now.

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
    // The state now, classified on this call; then what the session-start check found.
    #[serde(flatten)]
    now: State,
    session_start: State,
    counts: Option<Counts>,
}

/// An index state, why, and what to do about it.
#[derive(Serialize, JsonSchema)]
struct State {
    state: String,
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

impl State {
    /// The state of `status`, its hint said as the tool call that helps.
    fn of(status: &loci_api::vocab::lifecycle::Status) -> State {
        State {
            state: status.state.name().to_string(),
            reason: status.reason.clone(),
            hint: status.hint.as_deref().map(crate::hints::for_mcp),
        }
    }
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
    description: "The workspace this session reads, its index state now (clean, drift, syncing, \
indexing, unindexed, busy, corrupt, unavailable) with the reason and a hint, the state at session start, \
and what the index holds (files, symbols, edges, languages). Call it first when unsure the workspace is indexed.",
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
    // Classified on every call (bounded by `index.probeTimeoutMs`): a status read from
    // memory said `clean` for as long as the session lived.
    let now = State::of(&loci_api::maintain::status(ctx.root));
    let session_start = match &ctx.session_start {
        Some(s) => State::of(s),
        None => State {
            state: "pending".to_string(),
            reason: "the session-start check is still running".to_string(),
            hint: None,
        },
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
    let mut text = format!("workspace {workspace}: {} ({})", now.state, now.reason);
    if let Some(h) = &now.hint {
        text.push_str(&format!("\nhint: {h}"));
    }
    if session_start.state != now.state {
        text.push_str(&format!("\nat session start: {}", session_start.state));
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
        now,
        session_start,
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
