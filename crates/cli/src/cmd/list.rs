//! `loci list [--prune]`: the registered workspaces; `--prune` first forgets those whose
//! root no longer exists and says which.

use clap::Args;
use loci_api::ApiError;
use loci_api::vocab::store::WorkspaceEntry;

use crate::output;

#[derive(Args)]
pub struct ListArgs {
    /// Forget every workspace whose root folder no longer exists (indexes are kept).
    #[arg(long)]
    prune: bool,
}

pub fn run(args: ListArgs, json: bool) -> Result<(), ApiError> {
    let workspaces = if args.prune {
        let pruned = loci_api::workspaces::prune()?;
        if json {
            output::json(&pruned);
            return Ok(());
        }
        for e in &pruned.pruned {
            println!("pruned {} (its root no longer exists)", e.root);
        }
        pruned.workspaces
    } else {
        let list = loci_api::workspaces::list()?;
        if json {
            output::json(&list);
            return Ok(());
        }
        list.workspaces
    };
    if workspaces.is_empty() {
        println!("no workspaces yet: run `loci index <path>`");
    }
    for e in workspaces {
        print_entry(&e);
    }
    Ok(())
}

fn print_entry(e: &WorkspaceEntry) {
    println!(
        "{}  files={} symbols={}{}{}",
        e.root,
        e.files.map_or("-".into(), |n| n.to_string()),
        e.symbols.map_or("-".into(), |n| n.to_string()),
        e.locator
            .as_ref()
            .map(|l| format!("  ({l})"))
            .unwrap_or_default(),
        e.project_id
            .as_ref()
            .map(|p| format!("  project={p}"))
            .unwrap_or_default()
    );
}
