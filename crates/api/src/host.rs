//! What a long-lived front end (the MCP host of `loci mcp`, the HTTP server and its
//! `/mcp`) keeps for the life of its process: one read handle per workspace (so every
//! session and request on a workspace shares its connection pool), each workspace's
//! freshness tracking ([`Tracked`]), the last gate status recorded for it, and the
//! supervisor of the background runs those start. Front ends hold one and convert;
//! none keeps a cache of its own (as rust-analyzer's `AnalysisHost` is the state its
//! LSP crate only converts to and from).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use loci_lifecycle::Status;
use loci_supervisor::Supervisor;

use crate::error::ApiError;
use crate::handle::Workspace;
use crate::poison::lock;
use crate::tracking::Tracked;

/// The process-lifetime state every session and request shares.
pub struct WorkspaceHost {
    sup: Arc<Supervisor>,
    workspaces: Mutex<HashMap<PathBuf, Arc<Workspace>>>,
    registered: Mutex<HashMap<i64, Arc<Workspace>>>,
    tracked: Mutex<HashMap<PathBuf, Arc<Tracked>>>,
    snapshots: Mutex<HashMap<PathBuf, Status>>,
}

impl std::fmt::Debug for WorkspaceHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceHost")
            .field("open", &lock(&self.workspaces).len())
            .finish()
    }
}

impl WorkspaceHost {
    /// A host holding nothing yet.
    pub fn new() -> Arc<WorkspaceHost> {
        Arc::new(WorkspaceHost {
            sup: Arc::new(Supervisor::new()),
            workspaces: Mutex::default(),
            registered: Mutex::default(),
            tracked: Mutex::default(),
            snapshots: Mutex::default(),
        })
    }

    /// The supervisor of every child this host's workspaces start (background syncs).
    pub fn supervisor(&self) -> &Arc<Supervisor> {
        &self.sup
    }

    /// The read handle of the workspace at `root`, opened on first use.
    pub fn workspace(&self, root: &Path) -> Result<Arc<Workspace>, ApiError> {
        self.workspace_or(root, |e| e)
    }

    /// [`WorkspaceHost::workspace`], with `on_error` applied to a failure to open it.
    fn workspace_or(
        &self,
        root: &Path,
        on_error: impl FnOnce(ApiError) -> ApiError,
    ) -> Result<Arc<Workspace>, ApiError> {
        if let Some(ws) = lock(&self.workspaces).get(root) {
            return Ok(ws.clone());
        }
        let ws = Arc::new(crate::open(root).map_err(on_error)?);
        Ok(lock(&self.workspaces)
            .entry(root.to_path_buf())
            .or_insert(ws)
            .clone())
    }

    /// The read handle of the workspace at `root`, if one is open (nothing is opened).
    pub fn open_workspace(&self, root: &Path) -> Option<Arc<Workspace>> {
        lock(&self.workspaces).get(root).cloned()
    }

    /// The read handle of registry workspace `id`: the one [`WorkspaceHost::workspace`]
    /// keeps for its root (so a workspace read by id and by root has one pool), found
    /// through the registry once. Its errors name no host path (`<workspace>`,
    /// `<index>`): a caller across a socket is told what failed, not where.
    pub fn registered(&self, id: i64) -> Result<Arc<Workspace>, ApiError> {
        self.registered_at(id, || {
            crate::remote::entry(id).map(|entry| (entry.root, entry.index_path))
        })
    }

    /// [`WorkspaceHost::registered`], with `paths` giving the workspace's root and
    /// index path (read from the registry) when `id` is not known yet.
    fn registered_at(
        &self,
        id: i64,
        paths: impl FnOnce() -> Result<(String, String), ApiError>,
    ) -> Result<Arc<Workspace>, ApiError> {
        if let Some(ws) = lock(&self.registered).get(&id) {
            return Ok(ws.clone());
        }
        let (root, index_path) = paths()?;
        let ws = self.workspace_or(Path::new(&root), |e| redact_paths(e, &root, &index_path))?;
        Ok(lock(&self.registered).entry(id).or_insert(ws).clone())
    }

    /// The freshness tracking of the workspace at `root` (one per workspace and
    /// process: sessions on one workspace share its checks and its background sync).
    pub fn tracked(&self, root: &Path) -> Arc<Tracked> {
        lock(&self.tracked)
            .entry(root.to_path_buf())
            .or_insert_with(|| Arc::new(Tracked::new(root, self.sup.clone())))
            .clone()
    }

    /// Records the last gate status of a workspace (kept across sessions).
    pub fn record_snapshot(&self, root: &Path, status: &Status) {
        lock(&self.snapshots).insert(root.to_path_buf(), status.clone());
    }

    /// The last gate status recorded for a workspace, by any session.
    pub fn snapshot(&self, root: &Path) -> Option<Status> {
        lock(&self.snapshots).get(root).cloned()
    }

    /// Children of this host not yet reaped (its tracked background runs).
    pub fn live_children(&self) -> usize {
        self.sup.live_children()
    }
}

/// `e` with a workspace's absolute paths replaced by placeholders: no absolute path
/// crosses the network.
pub fn redact_paths(e: ApiError, root: &str, index_path: &str) -> ApiError {
    crate::remote::redact_error(
        e,
        &[
            (index_path.to_string(), "<index>"),
            (root.to_string(), "<workspace>"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every caller of one host reads a workspace through one handle (one connection
    /// pool), opened on first use, and shares one freshness tracking of it.
    #[test]
    fn one_handle_and_one_tracking_per_workspace() {
        let (_dir, root) = crate::test_support::indexed_workspace();
        let host = WorkspaceHost::new();
        assert!(host.open_workspace(&root).is_none());
        let first = host.workspace(&root).unwrap();
        let again = host.workspace(&root).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(Arc::ptr_eq(&host.open_workspace(&root).unwrap(), &first));
        assert!(Arc::ptr_eq(&host.tracked(&root), &host.tracked(&root)));

        // A folder that is not there is an error, and nothing is kept for it.
        let gone = root.join("gone");
        assert!(host.workspace(&gone).is_err());
        assert!(host.open_workspace(&gone).is_none());
    }

    /// A workspace read by registry id is the handle read by its root (one pool), and
    /// the registry is asked once; a failure to open it names no host path.
    #[test]
    fn a_registered_workspace_shares_the_handle_of_its_root() {
        let (_dir, root) = crate::test_support::indexed_workspace();
        let index = root.join(".loci/index.db").to_string_lossy().into_owned();
        let shown = root.to_string_lossy().into_owned();
        let host = WorkspaceHost::new();
        let by_root = host.workspace(&root).unwrap();
        let by_id = host
            .registered_at(7, || Ok((shown.clone(), index.clone())))
            .unwrap();
        assert!(Arc::ptr_eq(&by_root, &by_id));
        let again = host
            .registered_at(7, || panic!("the registry is read once per id"))
            .unwrap();
        assert!(Arc::ptr_eq(&again, &by_id));

        let gone = root.join("gone").to_string_lossy().into_owned();
        let e = host
            .registered_at(8, || Ok((gone.clone(), format!("{gone}/.loci/index.db"))))
            .unwrap_err()
            .to_string();
        assert!(!e.contains(&gone) && e.contains("<workspace>"), "{e}");
    }

    /// What a remote caller is told about a failure names no host path.
    #[test]
    fn redacted_errors_name_no_host_path() {
        let e = ApiError::new(
            crate::ErrorKind::NotFound,
            "no index at /srv/w/.loci/index.db for /srv/w",
        );
        let shown = redact_paths(e, "/srv/w", "/srv/w/.loci/index.db").to_string();
        assert!(!shown.contains("/srv/w"), "{shown}");
        assert!(
            shown.contains("<index>") && shown.contains("<workspace>"),
            "{shown}"
        );
    }
}
