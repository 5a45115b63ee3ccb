//! `loci sync [PATH]`: bring the index up to date incrementally (creating it if
//! needed). With `LOCI_AUTO_WATCH=1` in its environment it keeps watching afterwards,
//! as `loci watch` does: the lifecycle pins `LOCI_AUTO_WATCH=0` on every background run
//! so a short run can never turn into a watcher.

use std::path::PathBuf;

use clap::Args;

use loci_api::ApiError;

use crate::output;
use crate::workspace_arg::{load_config, target_path};

#[derive(Args)]
pub struct SyncArgs {
    /// The workspace directory (default: --workspace, else the current directory).
    path: Option<PathBuf>,
}

pub fn run(args: SyncArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let path = target_path(args.path, workspace);
    let root = loci_api::workspace_root(&path)?;
    let cfg = load_config(Some(&root));
    let report = loci_api::sync(&root, &cfg, super::index::progress(json).as_ref())?;
    if json {
        output::json(&report);
    } else {
        println!(
            "synced {}: {} files ({} parsed, {} removed) in {} ms",
            report.workspace,
            report.files_indexed,
            report.files_parsed,
            report.files_removed,
            report.elapsed_ms
        );
    }
    if auto_watch() {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        return super::watch::watch_root(root, &cfg, json);
    }
    Ok(())
}

/// `LOCI_AUTO_WATCH` set to a true value.
fn auto_watch() -> bool {
    std::env::var(loci_api::vocab::process::AUTO_WATCH_VAR)
        .map(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
        .unwrap_or(false)
}
