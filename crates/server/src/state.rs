//! What every request shares: the key, the limits, and the api's workspace host (one
//! read handle per workspace, created on first use, so reads of a workspace share its
//! connection pool with each other and with `/mcp`).

use std::sync::Arc;
use std::time::Duration;

use loci_api::host::WorkspaceHost;
use loci_api::{ApiError, CancelToken, ErrorKind, ReadOptions, Workspace};

use crate::key_ring::KeyRing;
use crate::reply::HttpError;

/// The state handlers receive.
pub type Shared = Arc<AppState>;

/// The server's state.
#[derive(Debug)]
pub struct AppState {
    /// The accepted API keys, each with the memory namespaces it may use, as the keys
    /// file says now.
    pub keys: KeyRing,
    /// Whether non-loopback `Host`/`Origin` values are accepted.
    pub allow_remote: bool,
    /// `api.maxBodyBytes`.
    pub max_body_bytes: usize,
    /// `api.requestTimeoutMs`.
    pub request_timeout: Duration,
    /// `limits.readDeadlineMs`, never longer than the request timeout.
    pub read_deadline: Duration,
    /// The background index/sync/rebuild runs this server started.
    pub runs: Arc<loci_api::runs::Runs>,
    /// User SQL: one killable worker per workspace index.
    pub sql: Arc<loci_api::sql_service::SqlService>,
    /// Graph reads running at once: more wait in line for a permit.
    reads: tokio::sync::Semaphore,
    /// The read handles of the workspaces, shared with the mounted front ends.
    pub workspaces: Arc<WorkspaceHost>,
    /// The web view's one-time sign-in tokens and its sessions.
    pub signin: crate::web::session::SignIn,
    /// The workspaces page's live rows and the streams that follow them.
    pub live: crate::web::live_rows::LiveWorkspaces,
    /// Set once the server is stopping: long answers (live streams) end on it.
    stop: tokio::sync::watch::Sender<bool>,
}

impl AppState {
    /// The state of a server with these settings.
    pub fn new(
        keys: KeyRing,
        allow_remote: bool,
        max_body_bytes: usize,
        request_timeout: Duration,
        read_deadline: Duration,
        signin: crate::web::session::SignIn,
    ) -> AppState {
        AppState {
            keys,
            allow_remote,
            max_body_bytes,
            request_timeout,
            read_deadline: read_deadline.min(request_timeout),
            runs: Arc::new(loci_api::runs::Runs::new()),
            sql: Arc::new(sql_service()),
            reads: tokio::sync::Semaphore::new(concurrent_reads()),
            workspaces: WorkspaceHost::new(),
            signin,
            live: crate::web::live_rows::LiveWorkspaces::default(),
            stop: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Tells everything that waits on [`AppState::stopping`] that the server stops.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Becomes `true` when the server stops.
    pub fn stopping(&self) -> tokio::sync::watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// The read handle of registry workspace `id`, opened on first use; its errors
    /// name no host path.
    pub fn workspace(&self, id: i64) -> Result<Arc<Workspace>, ApiError> {
        self.workspaces.registered(id)
    }

    /// Runs a read of workspace `id` on the blocking pool, bounded by the read
    /// deadline and cancelled if the request is dropped (timeout, client gone). At most
    /// [`concurrent_reads`] run at once; the others wait in line, in order.
    pub async fn read<T, F>(self: &Arc<Self>, id: i64, read: F) -> Result<T, HttpError>
    where
        T: Send + 'static,
        F: FnOnce(&Workspace, &ReadOptions) -> Result<T, ApiError> + Send + 'static,
    {
        let cancel = CancelToken::new();
        let _cancel_on_drop = CancelOnDrop(cancel.clone());
        // The semaphore is never closed, so acquiring only waits.
        let _permit = self
            .reads
            .acquire()
            .await
            .map_err(|e| HttpError(ApiError::new(ErrorKind::Internal, e.to_string())))?;
        let opts = ReadOptions {
            deadline: self.read_deadline,
            cancel,
        };
        let state = self.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let ws = state.workspace(id)?;
            read(&ws, &opts).map_err(|e| redact_for(e, &ws))
        })
        .await;
        match joined {
            Ok(answer) => answer.map_err(HttpError),
            Err(e) => Err(HttpError(ApiError::new(
                ErrorKind::Internal,
                format!("the read of workspace {id} failed: {e}"),
            ))),
        }
    }
}

/// The SQL service of this process: its workers run this process's own binary's
/// `loci worker` (even after an upgrade replaced or deleted its file), within the
/// configuration's `limits.queryTimeoutMs` and `limits.maxRows`.
fn sql_service() -> loci_api::sql_service::SqlService {
    use loci_api::sql_service::{SqlLimits, SqlService};
    let program = loci_api::vocab::process::own_executable().unwrap_or_else(|_| "loci".into());
    SqlService::new(program, SqlLimits::from_config(&loci_api::config(None)))
}

/// The error with the workspace's paths replaced by placeholders.
fn redact_for(e: ApiError, ws: &Workspace) -> ApiError {
    loci_api::host::redact_paths(
        e,
        &ws.root().to_string_lossy(),
        &ws.index_path().to_string_lossy(),
    )
}

/// How many graph reads run at once: four per core, never more than the pool keeps.
/// Reads are CPU-bound over pages in the OS cache, so with one thread per request in
/// flight (32 under `wrk -c32`) the threads only shared the cores, each read taking as
/// long as all of them, and the pool opened connections past the ones it keeps: that
/// made the slowest answers slow. A few per core keep the cores busy while a thread is
/// descheduled, and leave room beside a long read.
pub fn concurrent_reads() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    (cores * 4).clamp(2, loci_api::handle::POOL_IDLE_MAX)
}

/// Cancels a read whose request went away.
struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
