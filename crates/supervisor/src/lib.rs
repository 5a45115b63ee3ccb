//! The one place loci starts other programs. `loci-supervisor` runs every
//! child (loci itself for background index/sync/worker/server, `git`, and the
//! LLM tools `claude -p` / `codex exec`) with a time budget, stdout and stderr
//! drained concurrently into bounded head-and-tail captures, its own session
//! and process group that is signalled as a whole (SIGTERM, then SIGKILL after
//! a grace), single-flight deduplication by key, and a teardown registry that
//! kills every live child exactly once on supervisor drop, normal exit or
//! SIGINT/SIGTERM/SIGHUP (re-raising the signal). It carries seed 004's
//! "every maintenance run is sandboxed, budgeted, cancellable, deduplicated,
//! output-bounded and torn down" (with the `LOCI_AUTO_WATCH=0` pin) and seed
//! 000's preflight gate before every LLM spawn. It keeps DESIGN.md invariant
//! 3, **one supervisor**: no `Command::spawn` anywhere else in loci. Children
//! die with loci even when it is SIGKILLed ([`SpawnSpec::die_with_parent`]).
//!
//! ```
//! use std::time::Duration;
//! use loci_supervisor::{EnvPolicy, SpawnSpec, Supervisor};
//!
//! let sup = Supervisor::new();
//! let outcome = sup.run(
//!     SpawnSpec::new("sh")
//!         .args(["-c", "cat; echo \"watch=$LOCI_AUTO_WATCH\" >&2"])
//!         .stdin_bytes("hello")
//!         .env(EnvPolicy::loci_child())
//!         .budget(Duration::from_secs(10))
//!         .capture_cap(64 * 1024),
//! )?;
//! assert!(outcome.success());
//! assert_eq!(outcome.stdout.head, b"hello");
//! assert_eq!(outcome.stderr.head, b"watch=0\n");
//! # Ok::<(), loci_supervisor::SpawnError>(())
//! ```
//!
//! A child that speaks a protocol on stdin/stdout gets
//! [`SpawnSpec::stdin_stream`] and writes through [`Handle::take_stdin`]
//! while its answers arrive in an [`SpawnSpec::on_stdout`] sink.
//!
//! See [`Supervisor`] and [`SpawnSpec`] for spawning, [`preflight_check`] for
//! the gate, [`LlmRunner`] for the LLM tools, and `docs/supervisor.md` for
//! the behaviour in prose.

#![deny(missing_docs)]

mod capture;
mod env;
mod error;
mod hand_off;
mod llm;
mod monitor;
mod outcome;
mod own_exe;
mod poison;
mod preflight;
mod registry;
mod run;
mod spawner;
mod spec;
mod stdin;
mod supervisor;
mod sys;

pub use capture::Capture;
pub use env::{AUTO_WATCH_VAR, EnvPolicy};
pub use error::SpawnError;
pub use llm::{DEFAULT_MAX_OUTPUT, LlmError, LlmRequest, LlmResponse, LlmRunner, LlmTool};
pub use outcome::{Exit, Outcome};
pub use own_exe::own_executable;
pub use preflight::{
    ARG_MAX_MARGIN, EMPTY_MCP_CONFIG, McpConfigFile, PER_ARG_LIMIT, PreflightArgs, PreflightError,
    SKIP_VAR, WALK_UP_LEVELS, preflight_check, write_empty_mcp_config_tempfile,
};
pub use registry::{ShutdownHandler, on_shutdown_signal, teardown_all_children};
pub use spec::{DEFAULT_BUDGET, DEFAULT_CAPTURE_CAP, DEFAULT_KILL_GRACE, Sink, SpawnSpec};
pub use stdin::StdinWriter;
pub use supervisor::{Handle, Supervisor};
