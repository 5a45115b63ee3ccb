//! `loci rebuild [PATH] --yes`: delete the index and build it again. Destructive, so it
//! needs `--yes`; without it nothing is touched and the exit code is 17.

use std::path::PathBuf;

use clap::Args;
use loci_api::ApiError;

use crate::output;
use crate::workspace_arg::{load_config, target_path};

#[derive(Args)]
pub struct RebuildArgs {
    /// The workspace directory (default: --workspace, else the current directory).
    path: Option<PathBuf>,
    /// Consent to deleting the existing index.
    #[arg(long)]
    yes: bool,
}

pub fn run(args: RebuildArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let path = target_path(args.path, workspace);
    let root = loci_api::workspace_root(&path)?;
    let cfg = load_config(Some(&root));
    let report = loci_api::rebuild(&root, args.yes, &cfg, super::index::progress(json).as_ref())?;
    if json {
        output::json(&report);
    } else {
        println!(
            "rebuilt {}: {} files, {} symbols, {} edges in {} ms",
            report.workspace, report.files_indexed, report.symbols, report.edges, report.elapsed_ms
        );
    }
    Ok(())
}
