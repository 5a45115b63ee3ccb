//! `loci changes`: what a git diff changes in the code graph. Parses the sides into the
//! API's request, calls `loci_api::changes::changes` and prints.

use std::path::PathBuf;

use clap::Args;
use loci_api::ApiError;
use loci_api::changes::{self as api, ChangedSymbol, SymbolChange};

use super::graph::{PageArgs, read_options};
use crate::output;
use crate::workspace_arg::open;

#[derive(Args)]
pub struct ChangesArgs {
    /// `REV` (that commit against the working tree), `A..B` or `A...B` (from their merge
    /// base); none: `HEAD` against the working tree.
    #[arg(conflicts_with_all = ["staged", "worktree"])]
    rev: Option<String>,
    /// `HEAD` against the index: what is staged.
    #[arg(long, conflicts_with = "worktree")]
    staged: bool,
    /// The index against the working tree: what is not staged.
    #[arg(long)]
    worktree: bool,
    /// Hops of each changed definition's impact (1..=32).
    #[arg(long, default_value_t = api::CHANGES_DEPTH)]
    depth: u32,
    #[command(flatten)]
    page: PageArgs,
}

pub fn changes(args: ChangesArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let ws = open(workspace)?;
    let req = api::ChangesRequest {
        rev: args.rev,
        staged: args.staged,
        worktree: args.worktree,
        depth: Some(args.depth),
        page: args.page.request(),
    };
    let answer = api::changes(&ws, &req, &read_options())?;
    if json {
        output::json(&answer);
        return Ok(());
    }
    let side = |s: &api::ChangeSide| match &s.commit {
        Some(c) => format!("{} ({})", s.label, &c[..c.len().min(12)]),
        None => s.label.clone(),
    };
    println!("{} -> {}", side(&answer.base), side(&answer.head));
    println!(
        "{}:",
        output::plural(answer.files_total as usize, "file changed", "files changed")
    );
    for f in &answer.files {
        let renamed = match (&f.old_path, f.similarity) {
            (Some(old), Some(s)) => format!(" (from {old}, {s}% similar)"),
            (Some(old), None) => format!(" (from {old})"),
            _ => String::new(),
        };
        let note = f
            .not_read
            .map(|n| {
                format!(
                    "  [not read: {}]",
                    serde_json::to_value(n)
                        .unwrap_or_default()
                        .as_str()
                        .unwrap_or("")
                )
            })
            .unwrap_or_default();
        println!(
            "  {:<12} {}{renamed}  +{} -{}{note}",
            format!("{:?}", f.status).to_lowercase(),
            f.path,
            f.lines_added,
            f.lines_removed
        );
    }
    if answer.files.len() < answer.files_total as usize {
        println!(
            "  ... {} more files",
            answer.files_total as usize - answer.files.len()
        );
    }
    println!(
        "{}:",
        output::plural(
            answer.page.total as usize,
            "changed definition",
            "changed definitions"
        )
    );
    for s in &answer.symbols {
        print_symbol(s);
    }
    output::more(&answer.page, answer.symbols.len());
    if let Some(why) = &answer.memories_unavailable {
        eprintln!("warning: {why}");
    }
    if !answer.memories.is_empty() {
        println!("memories linked to changed definitions:");
        for m in &answer.memories {
            let state = if m.stale {
                "stale"
            } else {
                "about to be stale"
            };
            println!(
                "  {}  [{}]  linked to {}  ({state})",
                m.memory.name, m.memory.memory_type, m.linked
            );
        }
    }
    output::freshness(&answer.index);
    Ok(())
}

fn print_symbol(s: &ChangedSymbol) {
    let change = match s.change {
        SymbolChange::Added => "added",
        SymbolChange::Changed => "changed",
        SymbolChange::Removed => "removed",
        SymbolChange::Moved => "moved",
    };
    let from = s
        .old
        .as_ref()
        .filter(|o| o.path != s.path || s.change == SymbolChange::Moved)
        .map(|o| format!(" (from {}:{})", o.path, o.line))
        .unwrap_or_default();
    println!(
        "  {change:<8} {}:{} {} {}{from}",
        s.path, s.line, s.kind, s.qualified_name
    );
    if !s.reach.in_index {
        println!("           not in the index: no callers known");
        return;
    }
    let names = |list: &[api::SymbolRef]| {
        list.iter()
            .map(|r| format!("{}:{} {}", r.path, r.line, r.qualified_name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "           {} ; impact {} in {} (depth {}{}) ; {}",
        output::plural(s.reach.callers_total as usize, "caller", "callers"),
        s.reach.impact.symbols,
        output::plural(s.reach.impact.files as usize, "file", "files"),
        s.reach.impact.depth,
        if s.reach.impact.truncated {
            ", cut"
        } else {
            ""
        },
        output::plural(s.reach.tests_total as usize, "test", "tests"),
    );
    if !s.reach.callers.is_empty() {
        println!("           callers: {}", names(&s.reach.callers));
    }
    if !s.reach.tests.is_empty() {
        println!("           tests: {}", names(&s.reach.tests));
    }
}
