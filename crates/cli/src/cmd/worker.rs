//! `loci worker`: the hidden query worker. The query engine starts it through
//! the supervisor; it opens one read-only connection and answers JSON-line
//! requests read from stdin on stdout, until stdin ends (see `docs/query.md`).

use std::path::PathBuf;

use loci_api::ApiError;

/// Arguments of the hidden `loci worker` subcommand.
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// The database file to open read-only.
    #[arg(long, value_name = "PATH")]
    pub db: PathBuf,
}

/// Serves requests from stdin until it ends.
pub fn run(args: WorkerArgs) -> Result<(), ApiError> {
    Ok(loci_api::vocab::query::run_worker(&args.db)?)
}
