//! The nine lifecycle states and the report that carries one with its reason and facts.

use std::fmt;

use loci_index::drift::DriftReport;
use loci_index::lock::{LockRecord, WriteWork};
use serde::{Deserialize, Serialize};

use crate::record::RunRecord;

/// Where a workspace's index stands (seed 004's lifecycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// loci cannot work here: the workspace is unreadable, the index location is not
    /// writable, or the loci executable for background runs is missing.
    Unavailable,
    /// No usable index: none and no registry entry, or a first index that was
    /// interrupted before it completed (`facts.interrupted`).
    Unindexed,
    /// Another process (a watcher, a foreign writer, a SQLite lock) holds the index.
    Busy,
    /// A loci index run for this workspace is in flight.
    Indexing,
    /// A loci rebuild is in flight.
    Rebuilding,
    /// The index is behind the working tree.
    Drift,
    /// A loci sync is in flight.
    Syncing,
    /// The index matches the working tree.
    Clean,
    /// The index is unusable, or its state could not be decided (reason `unknown: ...`).
    Corrupt,
}

impl State {
    /// All nine, in the seed's order.
    pub const ALL: [State; 9] = [
        State::Unavailable,
        State::Unindexed,
        State::Busy,
        State::Indexing,
        State::Rebuilding,
        State::Drift,
        State::Syncing,
        State::Clean,
        State::Corrupt,
    ];

    /// The stable name used in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            State::Unavailable => "unavailable",
            State::Unindexed => "unindexed",
            State::Busy => "busy",
            State::Indexing => "indexing",
            State::Rebuilding => "rebuilding",
            State::Drift => "drift",
            State::Syncing => "syncing",
            State::Clean => "clean",
            State::Corrupt => "corrupt",
        }
    }

    /// The state a loci maintenance run of `purpose` puts the workspace in.
    pub fn of_run(purpose: WriteWork) -> Option<State> {
        match purpose {
            WriteWork::Index => Some(State::Indexing),
            WriteWork::Sync => Some(State::Syncing),
            WriteWork::Rebuild => Some(State::Rebuilding),
            WriteWork::Watch | WriteWork::Other => None,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the index was found (seed 004: the marker path never consults the registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decider {
    /// The `.loci/` marker in the workspace.
    Marker,
    /// The registry of known workspaces (the marker was absent).
    Registry,
    /// Neither: nothing says this workspace was indexed.
    None,
}

/// The facts behind a state.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Facts {
    /// What decided indexedness.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decider: Option<Decider>,
    /// The probe that decided indexedness when the marker was absent (`registry (api)`,
    /// `registry (api list)`, `registry (cli)`); the reason names it too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The index file in question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_path: Option<String>,
    /// Who holds the index or its watcher lock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<LockRecord>,
    /// How the working tree differs from the index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<DriftReport>,
    /// The index's own `meta.state`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_state: Option<String>,
    /// The answer is a cached liveness check (no walk was done).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// The state could not be decided (the reason says why); no work follows from it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
    /// A first index was interrupted before it completed (state `unindexed`): nothing is
    /// running, and the next index run (`loci sync`, `loci index`, or the gate with
    /// `lifecycle.autoCreate`) starts it over as a first index.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The check did not finish within the gate's budget and goes on in the background.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// `PRAGMA quick_check` was served from the integrity cache (file unchanged since).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub integrity_cached: bool,
    /// The executable background runs use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// The files the last run left out, with their reasons (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<loci_index::SkippedFiles>,
    /// Milliseconds the classification took.
    pub elapsed_ms: u64,
}

/// A one-time message for the user (at most once per session and workspace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// Stable id; the once-per-session key.
    pub id: String,
    /// The text.
    pub message: String,
}

/// A background run the gate started.
#[derive(Debug, Clone, Serialize)]
pub struct Started {
    /// `index`, `sync` or `rebuild`.
    pub purpose: String,
    /// The pid of the run's owner (`loci gate --own`), which the gate handed the run
    /// off to: it outlives the gate, supervises the run, and ending it (SIGTERM)
    /// tears the run down.
    pub pid: u32,
    /// The run's time budget in milliseconds.
    pub budget_ms: u64,
    /// Where the budget came from: `index.maintenanceTimeoutMs`, or `default` (the
    /// supervisor's pre-existing budget, when the key is absent from every layer).
    pub budget_source: String,
    /// The program run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// A workspace's state with everything behind it: what `loci status --json` and
/// `loci gate --json` print.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// One of the nine names.
    pub state: State,
    /// Why, in one sentence.
    pub reason: String,
    /// The workspace (canonical when it could be resolved).
    pub workspace: String,
    /// One-time notices (the gate's; empty for `loci status`).
    pub notices: Vec<Notice>,
    /// What to do next, when something can be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The facts behind the state.
    pub facts: Facts,
    /// The background run the gate started, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<Started>,
    /// The last background run's outcome (timeouts and failures are recorded here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<RunRecord>,
    /// Errors met inside the gate, captured instead of thrown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

impl Status {
    /// A status with no facts yet.
    pub fn new(state: State, reason: impl Into<String>, workspace: impl Into<String>) -> Self {
        Status {
            state,
            reason: reason.into(),
            workspace: workspace.into(),
            notices: Vec::new(),
            hint: None,
            facts: Facts::default(),
            started: None,
            last_run: None,
            errors: Vec::new(),
        }
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}
