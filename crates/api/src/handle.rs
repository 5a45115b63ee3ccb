//! A per-workspace read handle: a small pool of read-only connections that many
//! threads share, opened once and reopened when the index file is replaced (a
//! rebuild), every read bounded by a deadline and a cancel token (SQLite's progress
//! handler interrupts the statement), every answer stamped with how fresh the index is.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use loci_index::IndexState;
use loci_index::graph::{Graph, QueryError as GraphError};
use loci_lifecycle::Located;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ApiError, ErrorKind};
use crate::meaning::resident::Resident;
use crate::parsed_sides::ParsedSides;

/// Idle connections kept per workspace (more readers open more, then close them).
pub const POOL_IDLE_MAX: usize = 8;
/// The deadline of a graph read when the caller gives none.
pub const DEFAULT_READ_DEADLINE: Duration = Duration::from_secs(10);
/// SQLite virtual-machine steps between two deadline/cancel checks.
const PROGRESS_STEPS: i32 = 2_000;

/// Stops a read from another thread: the statement running is interrupted within a
/// few thousand VM steps.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token not yet cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels every read that holds this token.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How one read is bounded.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Time allowed for the read.
    pub deadline: Duration,
    /// Cancels the read from elsewhere.
    pub cancel: CancelToken,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            deadline: DEFAULT_READ_DEADLINE,
            cancel: CancelToken::new(),
        }
    }
}

/// How fresh an answer is: every graph result carries one, so a front end can tell a
/// partial answer from a complete one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Freshness {
    /// `complete`, or `indexing` while a run writes (or after one was interrupted):
    /// then the answer may be partial.
    pub state: IndexState,
    /// Files whose edges are not resolved yet (0 when `complete`).
    pub stale_files: u64,
    /// Files this answer reads from that changed on disk (or disappeared) since they
    /// were indexed, checked when it was made: what it says of them may be out of date
    /// until the next sync. Absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_files: Vec<String>,
    /// When the last index or sync run completed (seconds since the epoch): the state of
    /// the tree the answer reflects. Absent before the first run completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced_at: Option<u64>,
    /// The git commit the answer reflects: what `HEAD` named when the last index or
    /// sync run completed. Absent outside git (and on a branch with no commit yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<CommitStamp>,
}

/// The commit an index reflects, and whether `HEAD` has moved away from it since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CommitStamp {
    /// The commit, full hex.
    pub id: String,
    /// Its first 7 hex digits, as `git log --oneline` shows it.
    pub short: String,
    /// The branch `HEAD` was on; absent when detached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Whether the working tree differed from the commit when the run completed
    /// (edits, staged or untracked files): the index holds them too.
    pub modified: bool,
    /// `HEAD`'s commit now, when it is another one (a checkout, pull, reset or commit
    /// since): the index is behind until the next sync, which the watcher or the next
    /// gate starts. Absent while `HEAD` still names `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_now: Option<String>,
}

impl CommitStamp {
    /// The commit as recorded, checked against `HEAD` now.
    fn of(recorded: loci_index::checkout::Checkout, root: &Path) -> Option<CommitStamp> {
        let id = recorded.commit?;
        let now = loci_index::checkout::head_commit(root);
        Some(CommitStamp {
            short: id.chars().take(7).collect(),
            branch: recorded.branch,
            modified: recorded.modified,
            head_now: now.filter(|now| *now != id),
            id,
        })
    }

    /// `at abc1234`, `at abc1234 (modified)` or `at abc1234, HEAD now def5678`.
    pub fn describe(&self) -> String {
        let mut text = format!("at {}", self.short);
        if self.modified {
            text.push_str(" (modified)");
        }
        if let Some(now) = &self.head_now {
            text.push_str(&format!(", HEAD now {}", &now[..now.len().min(7)]));
        }
        text
    }
}

impl Freshness {
    /// Whether the answer may miss something, or say something the files no longer do.
    pub fn is_partial(&self) -> bool {
        self.state != IndexState::Complete
            || !self.changed_files.is_empty()
            || self.commit.as_ref().is_some_and(|c| c.head_now.is_some())
    }
}

/// Which file the pooled connections were opened on (a rebuild replaces it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

#[derive(Default)]
struct Pool {
    file: Option<FileId>,
    idle: Vec<Graph>,
}

/// The read handle of one workspace's index. `Sync`: share it behind an `Arc`. A host
/// that reads from many threads calls [`crate::prefer_parallel_reads`] at start-up.
pub struct Workspace {
    located: Located,
    pool: Mutex<Pool>,
    parsed_sides: ParsedSides,
    meaning: Resident,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.located.root)
            .field("index_path", &self.located.index_path)
            .finish()
    }
}

impl Workspace {
    /// A handle on the located index; connections open on first use.
    pub fn new(located: Located) -> Workspace {
        Workspace {
            located,
            pool: Mutex::new(Pool::default()),
            parsed_sides: ParsedSides::default(),
            meaning: Resident::default(),
        }
    }

    /// Definitions parsed from contents the index does not hold, kept for the next
    /// requests on this workspace.
    pub(crate) fn parsed_sides(&self) -> &ParsedSides {
        &self.parsed_sides
    }

    /// The vectors file's snapshot kept for the next meaning searches on this workspace.
    pub(crate) fn meaning(&self) -> &Resident {
        &self.meaning
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.located.root
    }

    /// The index file.
    pub fn index_path(&self) -> &Path {
        &self.located.index_path
    }

    /// Where the index is and what decided it.
    pub fn located(&self) -> &Located {
        &self.located
    }

    /// `index` completed with the files among `paths` (an answer's, as it shows them)
    /// that changed on disk since they were indexed: a stat each, at most
    /// [`loci_index::graph::MAX_FILES_CHECKED`], so an answer never vouches for a file
    /// an edit has outrun.
    pub fn checked<'p>(
        &self,
        opts: &ReadOptions,
        mut index: Freshness,
        paths: impl IntoIterator<Item = &'p str>,
    ) -> Result<Freshness, ApiError> {
        index.changed_files = self.run(opts, |g| g.changed_since_indexed(paths))?;
        Ok(index)
    }

    /// Runs `read` on a pooled connection within `opts`, and says how fresh the index
    /// was for it.
    pub fn read<T>(
        &self,
        opts: &ReadOptions,
        read: impl FnOnce(&Graph) -> Result<T, GraphError>,
    ) -> Result<(T, Freshness), ApiError> {
        self.run(opts, |graph| {
            let value = read(graph)?;
            Ok((value, freshness(graph, &self.located)?))
        })
    }

    /// Runs `read` on a pooled connection within `opts` (deadline, cancel), giving the
    /// connection back whatever happens.
    pub(crate) fn run<T>(
        &self,
        opts: &ReadOptions,
        read: impl FnOnce(&Graph) -> Result<T, GraphError>,
    ) -> Result<T, ApiError> {
        let started = Instant::now();
        if opts.cancel.is_cancelled() {
            return Err(ApiError::cancelled());
        }
        let file = self.file_id()?;
        let graph = self.take(file)?;
        let deadline = started + opts.deadline;
        let cancel = opts.cancel.clone();
        graph.connection().progress_handler(
            PROGRESS_STEPS,
            Some(move || cancel.is_cancelled() || Instant::now() >= deadline),
        );
        let answer = read(&graph);
        graph.connection().progress_handler(0, None::<fn() -> bool>);
        match answer {
            Ok(done) => {
                self.give_back(file, graph);
                Ok(done)
            }
            Err(e) => {
                let interrupted = is_interrupt(&e);
                self.give_back(file, graph);
                if interrupted || opts.cancel.is_cancelled() {
                    return Err(if opts.cancel.is_cancelled() {
                        ApiError::cancelled()
                    } else {
                        ApiError::new(
                            ErrorKind::Timeout,
                            format!(
                                "the read did not finish within its deadline ({} ms)",
                                opts.deadline.as_millis()
                            ),
                        )
                        .hint("raise the deadline, or narrow the question (depth, limit, path)")
                    });
                }
                Err(e.into())
            }
        }
    }

    /// Connections idle in the pool (for tests and stats).
    pub fn idle_connections(&self) -> usize {
        self.lock().idle.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn file_id(&self) -> Result<FileId, ApiError> {
        let path = &self.located.index_path;
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => Ok(FileId {
                dev: m.dev(),
                ino: m.ino(),
            }),
            // Something else is there: the store names it the way every open does.
            Ok(_) => Err(match Graph::open_at(&self.located.root, path) {
                Err(e) => e.into(),
                Ok(_) => ApiError::new(
                    ErrorKind::Storage,
                    format!("{} is not a file", path.display()),
                ),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ApiError::from(GraphError::NoIndex(path.to_path_buf())))
            }
            Err(e) => Err(ApiError::new(
                ErrorKind::Storage,
                format!("cannot read {}: {e}", path.display()),
            )),
        }
    }

    fn take(&self, file: FileId) -> Result<Graph, ApiError> {
        {
            let mut pool = self.lock();
            if pool.file != Some(file) {
                // The index was replaced: connections on the old file answer from it.
                pool.idle.clear();
                pool.file = Some(file);
            }
            if let Some(g) = pool.idle.pop() {
                return Ok(g);
            }
        }
        Ok(Graph::open_at(
            &self.located.root,
            &self.located.index_path,
        )?)
    }

    fn give_back(&self, file: FileId, graph: Graph) {
        let mut pool = self.lock();
        if pool.file == Some(file) && pool.idle.len() < POOL_IDLE_MAX {
            pool.idle.push(graph);
        }
    }
}

/// The index's own state, and the files still waiting for resolution while it is not
/// complete.
fn freshness(graph: &Graph, located: &Located) -> Result<Freshness, GraphError> {
    let index_path = &located.index_path;
    let conn = graph.connection();
    let sqlite = |e| GraphError::Store(loci_store::StoreError::sqlite(index_path, e));
    let stored = loci_index::meta_get(conn, loci_index::MetaKey::State).map_err(sqlite)?;
    let state = IndexState::from_stored(stored.as_deref());
    let stale_files = if state == IndexState::Complete {
        0
    } else {
        graph.stale_file_count()?
    };
    let synced_at = loci_index::meta_get(conn, loci_index::MetaKey::CompletedAt)
        .map_err(sqlite)?
        .and_then(|t| t.parse().ok());
    let commit = loci_index::checkout::recorded(conn)
        .map_err(sqlite)?
        .and_then(|c| CommitStamp::of(c, &located.root));
    Ok(Freshness {
        state,
        stale_files,
        changed_files: Vec::new(),
        synced_at,
        commit,
    })
}

fn is_interrupt(e: &GraphError) -> bool {
    matches!(
        e,
        GraphError::Store(loci_store::StoreError::Sqlite {
            source: rusqlite::Error::SqliteFailure(f, _),
            ..
        }) if f.code == rusqlite::ErrorCode::OperationInterrupted
    )
}
