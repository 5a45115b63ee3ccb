//! `loci rebuild [PATH] --yes`: delete the index and build it again. Destructive, so it
//! needs `--yes`; without it nothing is touched and the exit code is 17.

use std::path::PathBuf;

use clap::Args;
use loci_lifecycle::rebuild::{Consent, RebuildError, rebuild};

use crate::exit::{self, Failure};
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

pub fn run(args: RebuildArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let path = target_path(args.path, workspace);
    let root = loci_index::workspace_root(&path)?;
    let index_path = index_path_of(&root);
    let Some(consent) = Consent::from_flag(args.yes) else {
        return Err(Failure::new(
            exit::CONSENT_REQUIRED,
            "consent_required",
            format!(
                "rebuilding deletes the index at {} and builds it again",
                index_path.display()
            ),
        )
        .hint("run `loci rebuild --yes` to consent"));
    };
    let cfg = load_config(Some(&root));
    let report =
        rebuild(&root, &index_path, cfg.max_file_bytes(), consent).map_err(|e| match e {
            RebuildError::Lock(l) => Failure::from(loci_index::IndexError::Lock(l)),
            RebuildError::Index(i) => Failure::from(i),
            e @ RebuildError::Remove { .. } => {
                Failure::new(exit::STORAGE, "storage", e.to_string())
            }
        })?;
    loci_lifecycle::watch::record_in_registry(&report);
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

/// The workspace's index: the marker's, else the registry's, else the default place.
fn index_path_of(root: &std::path::Path) -> PathBuf {
    let default = loci_store::index_path_for(root);
    if root.join(loci_store::INDEX_DIR).is_dir() {
        return default;
    }
    loci_store::registry::Registry::open_default()
        .ok()
        .and_then(|r| r.lookup(root).ok().flatten())
        .map(|e| PathBuf::from(e.index_path))
        .unwrap_or(default)
}
