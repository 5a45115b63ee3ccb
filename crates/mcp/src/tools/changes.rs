//! `changes`: what a git diff changes in the code graph, over `loci_api::changes`: the
//! changed files in the head, the changed definitions as the paged list, each with its
//! caller, impact and test counts.

use loci_api::ApiError;
use loci_api::changes::{ChangedSymbol, ChangesAnswer, ChangesRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::wire::{Flag, Number};
use super::{Answer, Ctx, Reply, ToolDef};
use crate::args::Args;
use crate::budget::Listing;

/// The arguments.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Input {
    rev: Option<String>,
    staged: Option<Flag>,
    worktree: Option<Flag>,
    depth: Option<Number>,
}

/// The answer.
#[derive(JsonSchema)]
#[allow(dead_code, reason = "schema only: built as a Listing")]
struct Output {
    symbols: Vec<Sym>,
    files: Vec<String>,
    files_total: u64,
}

/// One changed definition, compactly.
#[derive(Serialize, JsonSchema)]
struct Sym {
    change: String,
    qualified_name: String,
    path: String,
    line: u32,
    callers: u64,
    impact: u64,
    tests: Vec<String>,
}

/// Files listed in the head (the answer's count is complete).
const FILES_SHOWN: usize = 100;

/// The tool.
pub static TOOL: ToolDef = ToolDef {
    name: "changes",
    title: "Changes of a git diff",
    description: "Files and definitions a git diff changes (added, changed, removed, moved), each with \
callers, impact, tests; linked memories. HEAD vs working tree, or `rev` (REV, A..B, A...B), `staged`, \
`worktree` (unstaged).",
    input: super::input_of::<Input>,
    output: super::output_of::<Output>,
    list: Some("symbols"),
    read_only: true,
    destructive: false,
    idempotent: true,
    call,
};

fn call(ctx: &Ctx<'_>, args: &Args) -> Result<Reply, ApiError> {
    let Input {
        rev,
        staged,
        worktree,
        depth,
    } = args.parse()?;
    let req = ChangesRequest {
        rev,
        staged: staged.is_some_and(|f| f.0),
        worktree: worktree.is_some_and(|f| f.0),
        depth: super::within("depth", depth, u64::from(loci_api::graph::MAX_DEPTH))?
            .map(|d| d as u32),
        page: super::page(args)?,
    };
    let ws = ctx.workspace()?;
    let a = loci_api::changes::changes(&ws, &req, &ctx.opts)?;
    let lines = a.symbols.iter().map(line).collect();
    let items = a
        .symbols
        .iter()
        .map(|s| super::to_value(&item(s)))
        .collect::<Result<_, _>>()?;
    Ok(Reply {
        answer: Answer::List(Listing {
            key: "symbols",
            items,
            lines,
            offset: super::offset(args),
            total: a.page.total,
            exact: a.page.total_exact,
            title: title(&a),
            head: head(&a)?,
        }),
        freshness: Some(a.index),
    })
}

fn name(value: impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn item(s: &ChangedSymbol) -> Sym {
    Sym {
        change: name(s.change),
        qualified_name: s.qualified_name.clone(),
        path: s.path.clone(),
        line: s.line,
        callers: s.reach.callers_total,
        impact: s.reach.impact.symbols,
        tests: s
            .reach
            .tests
            .iter()
            .map(|t| format!("{}:{} {}", t.path, t.line, t.qualified_name))
            .collect(),
    }
}

fn line(s: &ChangedSymbol) -> String {
    format!(
        "{} {}:{} {} {}: {} callers, impact {}, {} tests",
        name(s.change),
        s.path,
        s.line,
        name(s.kind),
        s.qualified_name,
        s.reach.callers_total,
        s.reach.impact.symbols,
        s.reach.tests_total
    )
}

fn title(a: &ChangesAnswer) -> String {
    let side = |s: &loci_api::changes::ChangeSide| match &s.commit {
        Some(c) => format!("{} ({})", s.label, &c[..c.len().min(12)]),
        None => s.label.clone(),
    };
    let files: Vec<String> = a.files.iter().take(FILES_SHOWN).map(file_row).collect();
    format!(
        "{} -> {}: {} files changed\n{}\nchanged definitions:",
        side(&a.base),
        side(&a.head),
        a.files_total,
        files.join("\n")
    )
}

fn file_row(f: &loci_api::changes::ChangedFile) -> String {
    let from = f
        .old_path
        .as_ref()
        .map(|o| format!(" (from {o})"))
        .unwrap_or_default();
    format!(
        "{} {}{from} +{} -{}",
        name(f.status),
        f.path,
        f.lines_added,
        f.lines_removed
    )
}

fn head(a: &ChangesAnswer) -> Result<Map<String, Value>, ApiError> {
    let mut head = Map::new();
    head.insert("base".into(), super::to_value(&a.base)?);
    head.insert("head".into(), super::to_value(&a.head)?);
    let files: Vec<String> = a.files.iter().take(FILES_SHOWN).map(file_row).collect();
    head.insert("files".into(), json!(files));
    head.insert("files_total".into(), json!(a.files_total));
    if !a.memories.is_empty() {
        let memories: Vec<Value> = a
            .memories
            .iter()
            .map(|m| json!({"name": m.memory.name, "linked": m.linked.to_string(), "stale": m.stale}))
            .collect();
        head.insert("memories".into(), Value::Array(memories));
    }
    Ok(head)
}
