//! Keeping an index: which workspace a path belongs to, where its index lives, and
//! the runs that build it (index, sync, rebuild, watch) and report on it (status).
//! Every operation finds the index through [`locate`], so an index the registry places
//! outside a read-only tree is queried, synced, watched and rebuilt in place.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;

use loci_index::{IndexReport, Progress, WriteWork};
use loci_lifecycle::probe::RegistryProbe;
use loci_lifecycle::rebuild::Consent;
use loci_lifecycle::state::Decider;
use loci_lifecycle::watch::{WatchEvent, WatchOptions};
use loci_lifecycle::{Config, Located, Status, classify, record};

use crate::error::{ApiError, ErrorKind};
use crate::handle::Workspace;

/// The canonical root of the workspace directory `path`.
pub fn workspace_root(path: &Path) -> Result<PathBuf, ApiError> {
    Ok(loci_index::workspace_root(path)?)
}

/// Where the index of the workspace at `path` lives (the marker, else the registry,
/// else the default place).
pub fn locate(path: &Path) -> Result<Located, ApiError> {
    let root = workspace_root(path)?;
    Ok(loci_lifecycle::locate(&root, &RegistryProbe)?)
}

/// A read handle on the workspace at `path`.
pub fn open(path: &Path) -> Result<Workspace, ApiError> {
    Ok(Workspace::new(locate(path)?))
}

/// The workspace a query from `cwd` is about when none is named: the nearest
/// ancestor (itself included) that has an index of its own or in the registry, else
/// `cwd`.
pub fn enclosing_workspace(cwd: &Path) -> PathBuf {
    // Opened only when a directory has no index of its own (not for the common case
    // of a query run at the workspace root).
    let mut registry: Option<Option<loci_store::registry::Registry>> = None;
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if loci_store::index_path_for(d).is_file() {
            return d.to_path_buf();
        }
        if let Some(r) =
            registry.get_or_insert_with(|| loci_store::registry::Registry::open_default().ok())
            && let Ok(canonical) = std::fs::canonicalize(d)
            && matches!(r.lookup(&canonical), Ok(Some(_)))
        {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// The layered configuration that applies to `root` (file layers, then environment).
pub fn config(root: Option<&Path>) -> Config {
    Config::load(root)
}

/// What `index` builds.
#[derive(Debug, Clone)]
pub struct IndexRequest {
    /// The workspace directory.
    pub path: PathBuf,
    /// Put the index here instead (an absolute file path; recorded in the registry so
    /// every later operation finds it).
    pub index_path: Option<PathBuf>,
    /// Skip larger files (default: `index.maxFileBytes`).
    pub max_file_bytes: Option<u64>,
    /// Walk and parse threads (0: all cores).
    pub threads: usize,
}

/// Builds or updates the index of a workspace, and registers it.
pub fn index(
    req: &IndexRequest,
    cfg: &Config,
    progress: &dyn Progress,
) -> Result<IndexReport, ApiError> {
    if let Some(cap) = req.max_file_bytes
        && !loci_lifecycle::MAX_FILE_BYTES_RANGE.contains(&cap)
    {
        let range = loci_lifecycle::MAX_FILE_BYTES_RANGE;
        return Err(ApiError::new(
            ErrorKind::Usage,
            format!(
                "--max-file-bytes {cap} is outside {}..={}",
                range.start(),
                range.end()
            ),
        )
        .hint("a cap of 0 would index nothing; leave it out to use `index.maxFileBytes`"));
    }
    let located = match &req.index_path {
        Some(p) if !p.is_absolute() => {
            return Err(ApiError::new(
                ErrorKind::InvalidInput,
                format!("the index path {} is not absolute", p.display()),
            ));
        }
        Some(p) => Located {
            root: workspace_root(&req.path)?,
            index_path: p.clone(),
            decider: Decider::None,
        },
        None => locate(&req.path)?,
    };
    let mut opts = run_options(&located, WriteWork::Index, cfg);
    if let Some(cap) = req.max_file_bytes {
        opts.max_file_bytes = cap;
    }
    opts.threads = req.threads;
    run(&opts, progress)
}

/// Brings the index of a workspace up to date incrementally (creating it if needed),
/// reporting the files it parses to `progress`.
pub fn sync(path: &Path, cfg: &Config, progress: &dyn Progress) -> Result<IndexReport, ApiError> {
    let located = locate(path)?;
    run(&run_options(&located, WriteWork::Sync, cfg), progress)
}

/// A run of `located`'s index for `purpose`, with the file limits of `cfg`.
fn run_options(located: &Located, purpose: WriteWork, cfg: &Config) -> loci_index::IndexOptions {
    let mut opts = loci_index::IndexOptions::new(&located.root);
    opts.index_path = Some(located.index_path.clone());
    opts.purpose = purpose;
    cfg.limit_files(&mut opts);
    opts
}

fn run(opts: &loci_index::IndexOptions, progress: &dyn Progress) -> Result<IndexReport, ApiError> {
    let report = loci_index::index_workspace(opts, progress)?;
    loci_lifecycle::watch::record_in_registry(&report);
    Ok(report)
}

/// Deletes the index and builds it again: only with consent, else `consent_required`
/// and nothing is touched. The new build reports the files it parses to `progress`.
pub fn rebuild(
    path: &Path,
    yes: bool,
    cfg: &Config,
    progress: &dyn Progress,
) -> Result<IndexReport, ApiError> {
    let located = locate(path)?;
    let Some(consent) = Consent::from_flag(yes) else {
        return Err(ApiError::new(
            ErrorKind::ConsentRequired,
            format!(
                "rebuilding deletes the index at {} and builds it again",
                located.index_path.display()
            ),
        )
        .hint("run `loci rebuild --yes` to consent"));
    };
    let report = loci_lifecycle::rebuild::rebuild(
        &located.root,
        &located.index_path,
        cfg.max_file_bytes(),
        cfg.file_budget(),
        consent,
        progress,
    )?;
    loci_lifecycle::watch::record_in_registry(&report);
    Ok(report)
}

/// Keeps the index fresh until `stop` is set, calling `report` after every sync.
pub fn watch(
    path: &Path,
    cfg: &Config,
    stop: &AtomicBool,
    report: &mut dyn FnMut(&WatchEvent),
) -> Result<(), ApiError> {
    let located = locate(path)?;
    let opts = WatchOptions {
        root: located.root,
        index_path: located.index_path,
        debounce: cfg.watch_debounce(),
        max_file_bytes: cfg.max_file_bytes(),
        file_budget: cfg.file_budget(),
    };
    Ok(loci_lifecycle::watch::watch(&opts, stop, report)?)
}

/// Classifies the workspace at `path` in full (no liveness cache), bounded by
/// `index.probeTimeoutMs`. Never fails: the state is the answer. A passed integrity
/// check is kept, as the gate keeps it, so the next status of the unchanged database
/// does not scan it again.
pub fn status(path: &Path) -> Status {
    let root = match classify::resolve_root(path) {
        Ok(root) => root,
        Err(status) => return *status,
    };
    let cfg = config(Some(&root));
    let record = record::load(&root);
    let last_run = record.last_run.clone();
    let (tx, rx) = mpsc::channel();
    let (r, c) = (root.clone(), cfg.clone());
    let spawned = std::thread::Builder::new()
        .name("loci-status".into())
        .spawn(move || {
            let (status, learned) = classify::classify(&r, &c, &RegistryProbe, &record, true);
            if let Err(e) = learned.keep_integrity(&r) {
                tracing::debug!(error = %e, "the integrity check's result was not kept");
            }
            let _ = tx.send(status);
        });
    let shown = root.to_string_lossy().into_owned();
    let mut status = match spawned {
        Ok(_) => rx.recv_timeout(cfg.probe_timeout()).unwrap_or_else(|_| {
            classify::unknown(
                shown,
                Decider::None,
                format!(
                    "the state check did not finish within index.probeTimeoutMs ({} ms)",
                    cfg.probe_timeout().as_millis()
                ),
            )
        }),
        Err(e) => classify::unknown(
            shown,
            Decider::None,
            format!("cannot start the state check: {e}"),
        ),
    };
    status.last_run = last_run;
    status
}

/// The session-start gate: answers within `lifecycle.gateBudgetMs` with the state it
/// knows and what it started; never fails (errors are captured in the status). A
/// workspace without a marker is looked up through the API probe chain, then the
/// registry ([`crate::api_probe::gate_probe`]). The
/// caller starts the answer's work with [`loci_lifecycle::gate::GateAnswer::start`]
/// and, when it has background work, finishes it after answering.
pub fn gate(req: &loci_lifecycle::gate::GateRequest) -> loci_lifecycle::gate::GateAnswer {
    loci_lifecycle::gate::evaluate(req, crate::api_probe::gate_probe())
}

/// [`gate`] inside a loci server (`/mcp` on `loci serve`): the server is the API the
/// probe chain would ask, and its registry is this process's own, so only the registry
/// decides; no request is sent and no other server is started.
pub fn gate_in_server(req: &loci_lifecycle::gate::GateRequest) -> loci_lifecycle::gate::GateAnswer {
    loci_lifecycle::gate::evaluate(req, crate::api_probe::server_probe())
}

/// Owns a background run (`index` or `sync`) that a gate handed off: runs it to its
/// end under the supervisor and records the outcome. Unknown purposes and unreadable
/// paths are ignored (the gate is fail-open). A run past its owner's deadline ends the
/// process through `end_process` (the binary's `std::process::exit`).
pub fn own_handed_off_run(
    path: &Path,
    purpose: &str,
    session: Option<&str>,
    end_process: fn(i32) -> !,
) {
    let Some(purpose) = loci_lifecycle::maintenance::Purpose::parse(purpose) else {
        return;
    };
    if let Ok(root) = classify::resolve_root(path) {
        loci_lifecycle::gate::own(&root, purpose, session, end_process);
    }
}
