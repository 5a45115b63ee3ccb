//! The worker-mode cases of `loci-query` (cancel, kill, restart, queue,
//! watchdog, close, exact values, UTF-8 framing, refusals, environment),
//! run against the real `loci worker` started through the supervisor.

use std::path::PathBuf;

fn program() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loci"))
}

// The query crate's helpers and cases, shared with its own worker tests.
#[path = "../../query/tests/common/mod.rs"]
mod common;
#[path = "../../query/tests/worker_cases/mod.rs"]
mod worker_cases;
