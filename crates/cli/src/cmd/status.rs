//! `loci status [PATH]`: the workspace's lifecycle state and why. Read-only; always
//! exits 0 (the state is the answer, `unavailable` included).

use std::path::PathBuf;

use clap::Args;
use loci_api::ApiError;
use loci_api::vocab::lifecycle::{State, Status};

use crate::output;
use crate::workspace_arg::target_path;

#[derive(Args)]
pub struct StatusArgs {
    /// The workspace directory (default: --workspace, else the current directory).
    path: Option<PathBuf>,
}

pub fn run(args: StatusArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let path = target_path(args.path, workspace);
    let status = loci_api::status(&path);
    print(&status, json);
    Ok(())
}

/// Prints a status: the object with `--json`, else a few lines.
pub fn print(status: &Status, json: bool) {
    if json {
        output::json(status);
        return;
    }
    println!("loci: {} — {}", status.state, status.reason);
    println!("workspace: {}", status.workspace);
    for n in &status.notices {
        println!("notice: {}", n.message);
    }
    if let Some(s) = &status.started {
        println!(
            "started: loci {} (pid {}, budget {} ms)",
            s.purpose, s.pid, s.budget_ms
        );
    }
    if let Some(h) = &status.hint {
        println!("hint: {h}");
    }
    if let Some(r) = &status.last_run {
        println!(
            "last run: {} {:?}{}",
            r.purpose,
            r.result,
            r.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        );
    }
    if let Some(skipped) = &status.facts.skipped {
        let reasons: Vec<String> = skipped
            .by_reason
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        println!("skipped: {} files ({})", skipped.total, reasons.join(", "));
        output::skipped_files(&skipped.files, skipped.files.len(), skipped.total);
    }
    for e in &status.errors {
        println!("error (captured): {e}");
    }
    if status.state == State::Clean && status.facts.cached {
        println!("(cached liveness check)");
    }
}
