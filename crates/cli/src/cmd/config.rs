//! `loci config show [PATH]`: every effective setting and the layer it came from.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::output;
use crate::workspace_arg::target_path;
use loci_api::ApiError;

#[derive(Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the effective configuration with the source of each value.
    Show {
        /// The workspace whose `.loci/config.toml` applies (default: --workspace, else
        /// the current directory).
        path: Option<PathBuf>,
    },
}

pub fn run(args: ConfigArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let ConfigCommand::Show { path } = args.command;
    let path = target_path(path, workspace);
    // A path that is no directory gets its own error, not a warning about a config
    // file under it.
    let root = Some(loci_api::workspace_root(&path)?);
    let cfg = loci_api::config(root.as_deref());
    let settings: Vec<_> = cfg.settings().collect();
    if json {
        output::json(&serde_json::json!({
            "workspace": root.as_ref().map(|r| r.to_string_lossy().into_owned()),
            "settings": settings,
            "warnings": cfg.warnings(),
        }));
        return Ok(());
    }
    for w in cfg.warnings() {
        eprintln!("warning: {w}");
    }
    for s in settings {
        let value = match &s.value {
            Some(v) => v.to_string(),
            None if s.key == "index.maintenanceTimeoutMs" => format!(
                "(unset: supervisor default {} ms)",
                loci_api::vocab::lifecycle::default_budget().as_millis()
            ),
            None if s.key == "lifecycle.executable" => "(unset: this loci binary)".into(),
            None => "(unset)".into(),
        };
        println!("{} = {}    # {} [{}]", s.key, value, s.source, s.env);
    }
    Ok(())
}
