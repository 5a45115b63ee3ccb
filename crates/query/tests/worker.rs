//! Worker mode through the supervisor, against this crate's stand-in for
//! `loci worker` (the same cases run against the real binary in the CLI's
//! tests).

use std::path::PathBuf;

fn program() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loci-query-worker"))
}

use crate::common;

#[path = "worker_cases/mod.rs"]
mod worker_cases;
