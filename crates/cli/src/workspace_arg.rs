//! Which workspace a query is about: `--workspace`, else the nearest ancestor of the
//! current directory that has an index, else the current directory.

use std::path::{Path, PathBuf};

use crate::exit::{self, Failure};

/// The workspace root for a query.
pub fn query_root(explicit: Option<PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(path) = explicit {
        return loci_index::workspace_root(&path).map_err(Failure::from);
    }
    let cwd = std::env::current_dir().map_err(|e| {
        Failure::new(
            exit::FAILURE,
            "no_cwd",
            format!("cannot read the current directory: {e}"),
        )
    })?;
    let mut dir: Option<&Path> = Some(&cwd);
    while let Some(d) = dir {
        if loci_store::index_path_for(d).is_file() {
            return Ok(d.to_path_buf());
        }
        dir = d.parent();
    }
    Ok(cwd)
}

/// The directory a workspace command acts on: its own PATH argument, else the global
/// `--workspace`, else the current directory.
pub fn target_path(path: Option<PathBuf>, workspace: Option<PathBuf>) -> PathBuf {
    path.or(workspace).unwrap_or_else(|| PathBuf::from("."))
}

/// The layered configuration for `root`, each invalid value reported once on stderr
/// (the value from the layer below applies).
pub fn load_config(root: Option<&Path>) -> loci_lifecycle::Config {
    let cfg = loci_lifecycle::Config::load(root);
    for w in cfg.warnings() {
        eprintln!("warning: {w}");
    }
    cfg
}
