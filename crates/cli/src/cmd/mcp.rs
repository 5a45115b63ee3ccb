//! `loci mcp`: serves loci's tools to one MCP client over stdio (`loci_mcp`).

use clap::Args;
use loci_api::ApiError;

#[derive(Args)]
pub struct McpArgs {
    /// Run `query` statements in a killable worker process instead of in process.
    #[arg(long)]
    query_worker: bool,
}

pub fn run(args: McpArgs, workspace: Option<std::path::PathBuf>) -> Result<(), ApiError> {
    let worker_program = if args.query_worker {
        Some(std::env::current_exe().map_err(|e| {
            ApiError::new(
                loci_api::ErrorKind::Worker,
                format!("cannot find this loci executable for the query worker: {e}"),
            )
        })?)
    } else {
        None
    };
    let host = loci_mcp::Host::new(loci_mcp::HostOptions {
        workspace,
        worker_program,
        ..Default::default()
    });
    loci_mcp::serve_stdio(host, std::process::exit)
}
