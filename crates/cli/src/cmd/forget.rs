//! `loci forget PATH`: remove one workspace from the registry. Its folder and its index
//! are never touched.

use std::path::PathBuf;

use clap::Args;
use loci_api::{ApiError, ErrorKind};

use crate::output;

#[derive(Args)]
pub struct ForgetArgs {
    /// The workspace root as `loci list` shows it (it may no longer exist).
    path: PathBuf,
}

pub fn run(args: ForgetArgs, json: bool) -> Result<(), ApiError> {
    let cwd = std::env::current_dir().map_err(|e| {
        ApiError::new(
            ErrorKind::Unreadable,
            format!("cannot read the current directory: {e}"),
        )
    })?;
    let done = loci_api::workspaces::forget(&args.path, &cwd)?;
    if json {
        output::json(&done);
        return Ok(());
    }
    println!(
        "forgot {} (its index, if any, is kept at {})",
        done.forgotten.root, done.forgotten.index_path
    );
    Ok(())
}
