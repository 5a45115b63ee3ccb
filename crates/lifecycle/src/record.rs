//! What the lifecycle remembers about a workspace between processes: the liveness and
//! integrity caches, the run in flight, the last run's outcome, and per session the
//! notices already shown and the failures already retried.
//!
//! One small JSON file per workspace in loci's data directory
//! (`$LOCI_HOME/lifecycle/<hash>.json`, next to the registry), never inside the
//! workspace: writing `.loci/` would itself make an unindexed workspace look indexed.
//! Updates are read-modify-write under an `flock`, then an atomic rename.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Sessions remembered per workspace (oldest forgotten first).
const MAX_SESSIONS: usize = 64;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Size and modification time of an index file and its WAL: if neither changed, the
/// database content did not either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DbStamp {
    /// Size of the database file.
    pub size: u64,
    /// Its mtime in nanoseconds.
    pub mtime_ns: i64,
    /// Size of the `-wal` file (0 when absent).
    pub wal_size: u64,
    /// Its mtime (0 when absent).
    pub wal_mtime_ns: i64,
}

impl DbStamp {
    /// The stamp of `index_path` now, `None` if the file cannot be stat'ed.
    pub fn of(index_path: &Path) -> Option<DbStamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(index_path).ok()?;
        let mut wal = index_path.as_os_str().to_owned();
        wal.push("-wal");
        let w = std::fs::metadata(PathBuf::from(wal)).ok();
        Some(DbStamp {
            size: m.len(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            wal_size: w.as_ref().map_or(0, |w| w.len()),
            wal_mtime_ns: w.map_or(0, |w| w.mtime() * 1_000_000_000 + w.mtime_nsec()),
        })
    }
}

/// A cached check: valid while the database is unchanged (and, for liveness, young).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checked {
    /// When it was done.
    pub at_ms: u64,
    /// The database it was done on.
    pub db: DbStamp,
}

/// How a background run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunResult {
    /// Exit 0 with the expected report.
    Ok,
    /// A non-zero exit.
    Failed,
    /// The budget expired and the run was cancelled.
    Timeout,
    /// Stopped by cancel or teardown.
    Cancelled,
    /// The index was busy (another writer won the race); not a failure.
    Busy,
    /// The program could not be started.
    SpawnFailed,
    /// Exit 0 but the output was not the JSON report.
    UnexpectedOutput,
}

impl RunResult {
    /// Whether this outcome counts against the once-per-session retry.
    pub fn is_failure(self) -> bool {
        !matches!(self, RunResult::Ok | RunResult::Busy)
    }
}

/// The outcome of one background run, kept as the workspace's last run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// `index`, `sync` or `rebuild`.
    pub purpose: String,
    /// How it ended.
    pub result: RunResult,
    /// Its budget.
    pub budget_ms: u64,
    /// Start, ms since the epoch.
    pub started_at_ms: u64,
    /// End, ms since the epoch.
    pub ended_at_ms: u64,
    /// Exit status as text (`exit code 1`, `killed by signal 15`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    /// What went wrong (the tail of stderr, the spawn error), bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The session whose gate started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// A run started by a gate and not yet finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Running {
    /// What it does.
    pub purpose: String,
    /// The run's pid (the owner's own pid until the owner has started the run).
    pub pid: u32,
    /// The process that owns it: the handed-off `loci gate --own`, which outlives the
    /// gate, supervises the run and tears it down if it is itself terminated.
    pub owner_pid: u32,
    /// When it started.
    pub started_at_ms: u64,
}

/// What one session has seen and tried.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Last gate of this session.
    pub last_seen_ms: u64,
    /// Notice ids already shown.
    pub notices: Vec<String>,
    /// Failed runs per purpose.
    pub failures: BTreeMap<String, u32>,
}

/// Everything remembered about one workspace.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Record {
    /// The workspace.
    pub workspace: String,
    /// The last clean walk.
    #[serde(default)]
    pub liveness: Option<Checked>,
    /// The last passed `quick_check`.
    #[serde(default)]
    pub integrity: Option<Checked>,
    /// The run in flight, if a gate started one.
    #[serde(default)]
    pub running: Option<Running>,
    /// The last finished run.
    #[serde(default)]
    pub last_run: Option<RunRecord>,
    /// Per session.
    #[serde(default)]
    pub sessions: BTreeMap<String, SessionRecord>,
}

impl Record {
    /// The run in flight, if its owner is still alive.
    pub fn live_running(&self) -> Option<&Running> {
        self.running
            .as_ref()
            .filter(|r| pid_alive(r.owner_pid) && pid_alive(r.pid))
    }

    /// The session's entry, created if new.
    pub fn session(&mut self, id: &str) -> &mut SessionRecord {
        if !self.sessions.contains_key(id)
            && self.sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = self
                .sessions
                .iter()
                .min_by_key(|(_, s)| s.last_seen_ms)
                .map(|(k, _)| k.clone())
        {
            self.sessions.remove(&oldest);
        }
        let s = self.sessions.entry(id.to_string()).or_default();
        s.last_seen_ms = now_ms();
        s
    }
}

/// Whether `pid` names a live process. A zombie is not: a handed-off owner that ended
/// after its parent did may wait a while for whoever inherited it to reap it.
pub fn pid_alive(pid: u32) -> bool {
    let exists = match rustix::process::Pid::from_raw(pid as i32) {
        Some(p) => !matches!(
            rustix::process::test_kill_process(p),
            Err(rustix::io::Errno::SRCH)
        ),
        None => false,
    };
    exists && !is_zombie(pid)
}

/// Whether `/proc` says `pid` has exited and awaits reaping (`false` when it cannot
/// tell).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

/// Where records live: `<registry dir>/lifecycle/`.
fn records_dir() -> Option<PathBuf> {
    let registry = loci_store::registry::default_registry_path().ok()?;
    Some(registry.parent()?.join("lifecycle"))
}

/// The record file of `workspace`.
pub fn record_path(workspace: &Path) -> Option<PathBuf> {
    let hash = blake3::hash(workspace.as_os_str().as_encoded_bytes());
    Some(records_dir()?.join(format!("{}.json", &hash.to_hex()[..24])))
}

/// Where the last background run's output (its bounded capture) is kept, next to the
/// record: `<hash>.log`.
pub fn log_path(workspace: &Path) -> Option<PathBuf> {
    Some(record_path(workspace)?.with_extension("log"))
}

/// Reads the record of `workspace` (empty if none or unreadable).
pub fn load(workspace: &Path) -> Record {
    record_path(workspace)
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| Record {
            workspace: workspace.to_string_lossy().into_owned(),
            ..Record::default()
        })
}

/// Read-modify-writes the record of `workspace` under its lock; returns the new record.
pub fn update(
    workspace: &Path,
    change: impl FnOnce(&mut Record),
) -> Result<Record, std::io::Error> {
    let path = record_path(workspace).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no data directory: set LOCI_HOME or XDG_DATA_HOME",
        )
    })?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path.with_extension("lock"))?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)?;
    let mut record = load(workspace);
    record.workspace = workspace.to_string_lossy().into_owned();
    change(&mut record);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(&record).unwrap_or_default())?;
    }
    std::fs::rename(&tmp, &path)?;
    Ok(record)
}
