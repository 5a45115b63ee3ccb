//! `loci worker`: the hidden query worker. The query engine starts it through
//! the supervisor; it opens one read-only connection and answers JSON-line
//! requests until its input ends (see `docs/query.md`).

use std::path::PathBuf;

use crate::exit::{self, Failure};

/// Arguments of the hidden `loci worker` subcommand.
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// The database file to open read-only.
    #[arg(long, value_name = "PATH")]
    pub db: PathBuf,
    /// Read requests from this FIFO instead of stdin.
    #[arg(long, value_name = "FIFO")]
    pub requests: Option<PathBuf>,
}

/// Serves requests until the input ends.
pub fn run(args: WorkerArgs) -> Result<(), Failure> {
    loci_query::run_worker(&args.db, args.requests.as_deref())
        .map_err(|e| Failure::new(exit::STORAGE, e.kind(), e.to_string()))
}
