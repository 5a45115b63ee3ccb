//! `loci serve`: parses its flags and runs `loci_server::serve`.

use clap::Args;
use loci_api::ApiError;

#[derive(Args)]
pub struct ServeArgs {
    /// The address to bind (a loopback address unless --allow-remote).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port (default: config `api.port`; 0 picks a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Allow binding a non-loopback address and answering non-loopback Host/Origin.
    #[arg(long)]
    allow_remote: bool,
}

pub fn run(args: ServeArgs, json: bool) -> Result<(), ApiError> {
    loci_server::serve(&loci_server::ServeOptions {
        host: args.host,
        port: args.port,
        allow_remote: args.allow_remote,
        json,
    })
}
