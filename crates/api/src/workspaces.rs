//! The workspaces loci knows (the registry) and the ones it creates inside the roots
//! it owns (seed 001: validate through the one ruler, `mkdir -p`, `git init` or
//! `git clone`, then the one idempotent confirmation). Results name workspaces by
//! locator, never by absolute path.

use loci_lifecycle::Config;
use loci_paths::{RootKind, Roots};
use loci_store::registry::WorkspaceEntry;
use serde::Serialize;

use crate::error::ApiError;

/// Every registered workspace.
#[derive(Debug, Clone, Serialize)]
pub struct WorkspaceList {
    /// The entries, by root.
    pub workspaces: Vec<WorkspaceEntry>,
}

/// The registered workspaces (local callers only: entries hold absolute paths).
pub fn list() -> Result<WorkspaceList, ApiError> {
    let registry = loci_store::registry::Registry::open_default()?;
    Ok(WorkspaceList {
        workspaces: registry.list()?,
    })
}

/// The roots from the configuration (`roots.managed`, `roots.base`, each overridden by
/// its environment variable).
pub fn roots(cfg: &Config) -> Result<Roots, ApiError> {
    Ok(Roots::from_env(
        cfg.path(loci_paths::MANAGED_ROOT_KEY).as_deref(),
        cfg.path(loci_paths::PROJECTS_BASE_KEY).as_deref(),
    )?)
}

/// Creates (or confirms) a workspace under a root.
pub fn create(
    roots: &Roots,
    request: &loci_workspace::CreateRequest,
) -> Result<loci_workspace::Created, ApiError> {
    let registry = loci_store::registry::Registry::open_default()?;
    let supervisor = loci_supervisor::Supervisor::new();
    Ok(loci_workspace::create(
        roots,
        request,
        &supervisor,
        &registry,
    )?)
}

/// The folders under a root (the folder picker).
pub fn ls(
    roots: &Roots,
    kind: RootKind,
    segment: Option<&str>,
) -> Result<loci_paths::Listing, ApiError> {
    Ok(loci_workspace::ls(roots, kind, segment)?)
}
