//! Which workspace a command is about: `--workspace`, else the nearest ancestor of the
//! current directory with an index (its own or in the registry), else the current
//! directory.

use std::path::{Path, PathBuf};

use loci_api::{ApiError, ErrorKind};

/// The workspace a query is about.
pub fn query_root(explicit: Option<PathBuf>) -> Result<PathBuf, ApiError> {
    if let Some(path) = explicit {
        return loci_api::workspace_root(&path);
    }
    let cwd = std::env::current_dir().map_err(|e| {
        ApiError::new(
            ErrorKind::Unreadable,
            format!("cannot read the current directory: {e}"),
        )
    })?;
    Ok(loci_api::enclosing_workspace(&cwd))
}

/// A read handle on the workspace a query is about.
pub fn open(explicit: Option<PathBuf>) -> Result<loci_api::Workspace, ApiError> {
    loci_api::open(&query_root(explicit)?)
}

/// The directory a workspace command acts on: its own PATH argument, else the global
/// `--workspace`, else the current directory.
pub fn target_path(path: Option<PathBuf>, workspace: Option<PathBuf>) -> PathBuf {
    path.or(workspace).unwrap_or_else(|| PathBuf::from("."))
}

/// The layered configuration for `root`, each invalid value reported once on stderr
/// (the value from the layer below applies).
pub fn load_config(root: Option<&Path>) -> loci_api::vocab::lifecycle::Config {
    let cfg = loci_api::config(root);
    for w in cfg.warnings() {
        eprintln!("warning: {w}");
    }
    cfg
}
