//! `loci workspace create|ls`: workspaces inside the roots loci owns (docs/paths.md).

use clap::{Args, Subcommand};
use loci_api::vocab::paths::{RootKind, Roots};

use loci_api::ApiError;

use crate::output;

#[derive(Args)]
pub struct WorkspaceArgs {
    #[command(subcommand)]
    command: WorkspaceCommand,
}

#[derive(Subcommand)]
enum WorkspaceCommand {
    /// Create a workspace folder under a root, then `git init` it or clone into it.
    Create(CreateArgs),
    /// List the directories under a root (the folder picker).
    Ls(LsArgs),
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["mounted", "managed"])))]
struct CreateArgs {
    /// A relative path under the projects base (LOCI_PROJECTS_BASE), e.g. `team/app`.
    #[arg(long, value_name = "SEGMENT")]
    mounted: Option<String>,
    /// A single name under the managed root (LOCI_MANAGED_ROOT): A-Z a-z 0-9 _ -, at most 64.
    #[arg(long, value_name = "NAME")]
    managed: Option<String>,
    /// Clone this repository into the new folder instead of `git init`.
    #[arg(long, value_name = "URL")]
    clone: Option<String>,
    /// Confirm the workspace for this project id (1-128 of A-Z a-z 0-9 . _ : -): one
    /// workspace per project; asking again is a no-op, elsewhere a `project_conflict`.
    #[arg(long, value_name = "ID")]
    project: Option<String>,
}

#[derive(Args)]
struct LsArgs {
    /// List under the projects base (the default).
    #[arg(long, conflicts_with = "managed")]
    base: bool,
    /// List under the managed root.
    #[arg(long)]
    managed: bool,
    /// A folder under the root (default: the root itself).
    segment: Option<String>,
}

pub fn run(args: WorkspaceArgs, json: bool) -> Result<(), ApiError> {
    let roots = loci_api::workspaces::roots(&crate::workspace_arg::load_config(None))?;
    match args.command {
        WorkspaceCommand::Create(a) => create(&roots, a, json),
        WorkspaceCommand::Ls(a) => ls(&roots, a, json),
    }
}

fn create(roots: &Roots, args: CreateArgs, json: bool) -> Result<(), ApiError> {
    let mut request = match (args.mounted, args.managed) {
        (Some(segment), _) => loci_api::vocab::workspace::CreateRequest::mounted(segment),
        (None, Some(name)) => loci_api::vocab::workspace::CreateRequest::managed(name),
        (None, None) => unreachable!("clap requires one of --mounted/--managed"),
    };
    if let Some(url) = args.clone {
        request = request.clone_from(url);
    }
    if let Some(id) = args.project {
        request = request.for_project(id);
    }
    let created = loci_api::workspaces::create(roots, &request)?;
    if json {
        output::json(&created);
    } else {
        let value = serde_json::to_value(&created).unwrap_or_default();
        println!(
            "{}: {}",
            value["action"].as_str().unwrap_or("created"),
            serde_json::to_string(&value["locator"]).unwrap_or_default()
        );
    }
    Ok(())
}

fn ls(roots: &Roots, args: LsArgs, json: bool) -> Result<(), ApiError> {
    let kind = if args.managed {
        RootKind::Managed
    } else {
        RootKind::Base
    };
    let listing = loci_api::workspaces::ls(roots, kind, args.segment.as_deref())?;
    if json {
        output::json(&listing);
        return Ok(());
    }
    for entry in &listing.entries {
        println!("{}", entry.name);
    }
    Ok(())
}
