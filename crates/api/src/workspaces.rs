//! The workspaces loci knows (the registry) and the ones it creates inside the roots
//! it owns (seed 001: validate through the one ruler, `mkdir -p`, `git init` or
//! `git clone`, then the one idempotent confirmation). Results name workspaces by
//! locator, never by absolute path.

use std::path::{Path, PathBuf};

use loci_lifecycle::Config;
use loci_paths::{RootKind, Roots};
use loci_store::registry::{Registry, WorkspaceEntry};
use serde::Serialize;

use crate::error::{ApiError, ErrorKind};

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

/// What [`prune`] did: the entries whose root is gone, now forgotten, and the list
/// that remains.
#[derive(Debug, Clone, Serialize)]
pub struct Pruned {
    /// The entries that remain, by root.
    pub workspaces: Vec<WorkspaceEntry>,
    /// The entries removed because their root no longer exists (their index files, if
    /// any are left, are untouched).
    pub pruned: Vec<WorkspaceEntry>,
}

/// Forgets every registered workspace whose root no longer exists, so `loci list` stops
/// showing deleted folders. A root that cannot be checked (permission denied, a broken
/// mount) is kept: only a root the system reports missing is gone.
pub fn prune() -> Result<Pruned, ApiError> {
    let registry = Registry::open_default()?;
    let mut workspaces = Vec::new();
    let mut pruned = Vec::new();
    for entry in registry.list()? {
        let gone = matches!(
            std::fs::symlink_metadata(&entry.root),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound
        );
        if gone {
            registry.remove(Path::new(&entry.root))?;
            pruned.push(entry);
        } else {
            workspaces.push(entry);
        }
    }
    Ok(Pruned { workspaces, pruned })
}

/// What [`forget`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Forgotten {
    /// The entry removed from the registry.
    pub forgotten: WorkspaceEntry,
    /// Always true: forgetting never deletes an index (remove `index_path` yourself).
    pub index_kept: bool,
}

/// Removes one workspace from the registry; its folder and its index are untouched. The
/// path may be relative to `cwd` and need not exist any more (a deleted workspace).
pub fn forget(path: &Path, cwd: &Path) -> Result<Forgotten, ApiError> {
    let registry = Registry::open_default()?;
    let candidates = registry_keys(path, cwd);
    for key in &candidates {
        if let Some(entry) = registry.lookup(key)? {
            registry.remove(key)?;
            return Ok(Forgotten {
                forgotten: entry,
                index_kept: true,
            });
        }
    }
    Err(ApiError::new(
        ErrorKind::NotFound,
        format!(
            "no registered workspace at {} ({})",
            path.display(),
            candidates
                .last()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ),
    )
    .hint("`loci list` shows the registered workspaces and their roots"))
}

/// The registry keys `path` may be stored under: its canonical form when it still
/// exists, else its absolute, lexically normalized form (a deleted root).
fn registry_keys(path: &Path, cwd: &Path) -> Vec<PathBuf> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut lexical = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    let mut keys = Vec::new();
    if let Ok(canonical) = std::fs::canonicalize(&joined) {
        keys.push(canonical);
    }
    if !keys.contains(&lexical) {
        keys.push(lexical);
    }
    keys
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

/// The clone policy for callers across the network: `https`, `ssh` and scp-like,
/// plus `git://` with `clone.allowGit` and `http://` with `clone.allowHttp`; public
/// addresses only, plus what `clone.allowAddresses` names (a value it cannot read is
/// `usage`, naming the key).
pub fn remote_clone_policy(cfg: &Config) -> Result<loci_workspace::ClonePolicy, ApiError> {
    use loci_workspace::{Allowance, ClonePolicy, CloneScheme};
    let mut policy = ClonePolicy::remote();
    if cfg.clone_allow_git() {
        policy = policy.allow(CloneScheme::Git);
    }
    if cfg.clone_allow_http() {
        policy = policy.allow(CloneScheme::Http);
    }
    let allowed = Allowance::parse_list(cfg.clone_allow_addresses().unwrap_or("")).map_err(|why| {
        ApiError::new(ErrorKind::Usage, format!("clone.allowAddresses: {why}"))
            .hint("fix clone.allowAddresses (LOCI_CLONE_ALLOW_ADDRESSES) in the server's configuration")
    })?;
    Ok(policy.allow_addresses(allowed))
}

/// [`create`] for a caller across the network: a clone URL must pass
/// [`remote_clone_policy`].
pub fn create_remote(
    roots: &Roots,
    request: &loci_workspace::CreateRequest,
    cfg: &Config,
) -> Result<loci_workspace::Created, ApiError> {
    let registry = loci_store::registry::Registry::open_default()?;
    let supervisor = loci_supervisor::Supervisor::new();
    let options = loci_workspace::CreateOptions {
        clone_policy: remote_clone_policy(cfg)?,
        ..Default::default()
    };
    Ok(loci_workspace::create_with(
        roots,
        request,
        &supervisor,
        &registry,
        &options,
    )?)
}

/// Whether `git` can be run here (checked once per process, through the
/// supervisor): creation and cloning need it.
pub fn git_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let spec = loci_supervisor::SpawnSpec::new("git")
            .arg("--version")
            .budget(std::time::Duration::from_secs(10))
            .capture_cap(4096);
        loci_supervisor::Supervisor::new()
            .run(spec)
            .is_ok_and(|o| o.success())
    })
}
