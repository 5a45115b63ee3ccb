//! The index lifecycle of a workspace: which of nine states its index is in, the
//! session-start gate an agent host runs, and the maintenance that follows (background
//! index and sync runs through the supervisor, consent-gated rebuild, the watcher),
//! configured in layers. This is seed 004 (`004_56e1ed6582b9d07f.txt`, the code-graph
//! index lifecycle) implemented for loci's own indexes.
//!
//! Invariants kept here (DESIGN.md §4):
//! - **3, one supervisor**: every background run goes through `loci-supervisor`
//!   ([`maintenance`]), with a budget, bounded output, `LOCI_AUTO_WATCH=0` pinned over
//!   the inherited environment, one run per workspace, torn down with its owner. The
//!   owner is not the gate (which a host may kill right after it answers) but a
//!   handed-off `loci gate --own` process that bounds itself ([`gate::own`]).
//! - **6, uncertainty is never drift**: an error while deciding is a corrupt-adjacent
//!   `unknown` that triggers no work ([`classify`]); a corrupt index is rebuilt only
//!   with a [`rebuild::Consent`], which only `--yes` makes.
//! - **7, the gate never blocks and never fails**: [`gate::evaluate`] answers within
//!   `lifecycle.gateBudgetMs` with what it knows and captures every error in the
//!   status; the rest happens after the answer, in [`gate::GateAnswer::finish`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use loci_lifecycle::{gate, probe::RegistryProbe};
//!
//! let sup = loci_supervisor::Supervisor::new();
//! let req = gate::GateRequest { path: "/repo".into(), session: Some("s1".into()) };
//! let mut answer = gate::evaluate(&req, Arc::new(RegistryProbe));
//! answer.start(&sup);
//! println!("{}: {}", answer.status.state, answer.status.reason);
//! answer.finish(&sup); // finishes a check that overran the budget; the run is handed off
//! ```
//!
//! See `docs/lifecycle.md` for the states, the gate's decisions, the configuration keys
//! and the agent-host hooks.
#![deny(missing_docs)]

pub mod classify;
pub mod config;
pub mod gate;
pub mod locate;
pub mod lockfile;
pub mod maintenance;
pub mod probe;
pub mod progress;
pub mod rebuild;
pub mod record;
pub mod state;
pub mod watch;

pub use classify::classify;
pub use config::{Config, MAX_FILE_BYTES_RANGE};
pub use locate::{LocateError, Located, locate};
pub use state::{Notice, State, Status};
