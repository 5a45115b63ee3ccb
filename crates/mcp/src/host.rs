//! What outlives every MCP session of this process: how sessions bind (a fixed
//! workspace, the directory without roots, the confinement of a served host), the
//! `query` tool's workers, and the api's [`WorkspaceHost`] (read handles, freshness
//! tracking, gate snapshots and the supervisor of background runs), shared with the
//! HTTP routes when served. A session replacement rebinds a session; it never
//! replaces the host.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

use loci_api::host::WorkspaceHost;
use loci_api::sql_service::SqlService;
use loci_api::tracking::Tracked;
use loci_api::vocab::lifecycle::Status;
use loci_api::vocab::paths::Roots;
use loci_api::vocab::process::Supervisor;
use loci_api::{ApiError, Workspace};

/// How a host is set up.
#[derive(Debug, Clone, Default)]
pub struct HostOptions {
    /// The workspace every session uses (`--workspace`); else the client's roots, else
    /// `cwd`.
    pub workspace: Option<PathBuf>,
    /// The directory a session without roots uses (default: this process's).
    pub cwd: Option<PathBuf>,
    /// The loci executable for the `query` tool's killable worker (default: none, the
    /// query runs in process).
    pub worker_program: Option<PathBuf>,
    /// The deadline of one graph read (default `limits.readDeadlineMs`).
    pub read_deadline: Option<Duration>,
    /// Served by `loci serve` (`/mcp`): a session binds only to a workspace inside these
    /// roots, named by locator or by a client root whose real path lies inside one;
    /// answers name no host path; the session-start check asks no API (this process is
    /// the API). `None`: `loci mcp` on stdio, the user's own machine.
    pub confine: Option<Roots>,
    /// User SQL through this service's killable workers (the server shares its own, so
    /// the HTTP routes see and cancel MCP statements too); `None`: `worker_program`.
    pub sql: Option<Arc<SqlService>>,
    /// The workspace state to share (the server's, so `/mcp` and the HTTP routes read
    /// through one pool per workspace); `None`: a host of its own.
    pub workspaces: Option<Arc<WorkspaceHost>>,
}

/// The process-lifetime state every session shares.
pub struct Host {
    pub(crate) fixed_workspace: Option<PathBuf>,
    pub(crate) cwd: PathBuf,
    pub(crate) worker_program: Option<PathBuf>,
    pub(crate) read_deadline: Duration,
    pub(crate) confine: Option<Roots>,
    pub(crate) sql: Option<Arc<SqlService>>,
    workspaces: Arc<WorkspaceHost>,
    sessions: AtomicU64,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("workspace", &self.fixed_workspace)
            .field("cwd", &self.cwd)
            .finish()
    }
}

/// The teardown hooks of this process, installed once however many hosts or sessions
/// ask (a second installation would run every teardown twice).
static TEARDOWN: Once = Once::new();
/// How many times the teardown hooks were installed (0 or 1).
static TEARDOWN_INSTALLS: AtomicUsize = AtomicUsize::new(0);

impl Host {
    /// A host with these options.
    pub fn new(opts: HostOptions) -> Arc<Host> {
        let cfg = loci_api::config(None);
        let workspaces = opts.workspaces.unwrap_or_else(WorkspaceHost::new);
        Arc::new(Host {
            fixed_workspace: opts.workspace,
            cwd: opts
                .cwd
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| PathBuf::from(".")),
            worker_program: opts.worker_program,
            read_deadline: opts.read_deadline.unwrap_or_else(|| cfg.read_deadline()),
            confine: opts.confine,
            sql: opts.sql,
            workspaces,
            sessions: AtomicU64::new(0),
        })
    }

    /// Installs the process's teardown on SIGTERM, SIGINT and SIGHUP (tear every child
    /// down, then end the process with the `interrupted` code through `end_process`,
    /// the binary's `std::process::exit`), exactly once per process.
    pub fn install_teardown(&self, end_process: fn(i32) -> !) {
        TEARDOWN.call_once(|| {
            TEARDOWN_INSTALLS.fetch_add(1, Ordering::SeqCst);
            loci_api::vocab::process::on_shutdown_signal(Arc::new(move |signal| {
                tracing::info!(signal, "stopping: tearing the session's children down");
                loci_api::vocab::process::teardown_all_children();
                end_process(i32::from(loci_api::ErrorKind::Interrupted.exit().code()));
            }));
        });
    }

    /// How many times the teardown hooks were installed in this process (0 or 1).
    pub fn teardown_installs() -> usize {
        TEARDOWN_INSTALLS.load(Ordering::SeqCst)
    }

    /// A fresh session number (for the lifecycle's once-per-session records).
    pub(crate) fn next_session(&self) -> u64 {
        self.sessions.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The read handle of the workspace at `root`, opened on first use and shared by
    /// every session.
    pub fn workspace(&self, root: &Path) -> Result<Arc<Workspace>, ApiError> {
        self.workspaces.workspace(root)
    }

    /// The read handle of the workspace at `root`, if one is open (nothing is opened).
    pub fn open_workspace(&self, root: &Path) -> Option<Arc<Workspace>> {
        self.workspaces.open_workspace(root)
    }

    /// The freshness tracking of the workspace at `root` (one per workspace and
    /// process: sessions on one workspace share its checks and its background sync).
    pub fn tracked(&self, root: &Path) -> Arc<Tracked> {
        self.workspaces.tracked(root)
    }

    /// Records the last gate status of a workspace (kept across sessions).
    pub fn record_snapshot(&self, root: &Path, status: &Status) {
        self.workspaces.record_snapshot(root, status);
    }

    /// The last gate status recorded for a workspace, by any session.
    pub fn snapshot(&self, root: &Path) -> Option<Status> {
        self.workspaces.snapshot(root)
    }

    /// How a workspace is named in answers: its path, or over HTTP its folder name.
    pub fn shown_root(&self, root: &Path) -> String {
        if self.hides_paths() {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            root.to_string_lossy().into_owned()
        }
    }

    /// Whether answers hide absolute paths (a served host).
    pub fn hides_paths(&self) -> bool {
        self.confine.is_some()
    }

    /// The roots sessions are confined to, when served by `loci serve`.
    pub fn confine(&self) -> Option<&Roots> {
        self.confine.as_ref()
    }

    /// The supervisor of every child started for a session (the workspace host's).
    pub(crate) fn supervisor(&self) -> &Arc<Supervisor> {
        self.workspaces.supervisor()
    }

    /// Children of this host not yet reaped (its tracked background runs).
    pub fn live_children(&self) -> usize {
        self.workspaces.live_children()
    }
}

/// Hands the heap's free pages back to the kernel. A session's one-off work (the
/// session-start gate, a drift check: a walk of the whole tree) frees what it allocated
/// on its own thread's malloc arena, which glibc keeps mapped; a long idle session
/// should not hold it. Cheap next to the walk it follows.
pub(crate) fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas under their locks; it takes no
    // pointer and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
