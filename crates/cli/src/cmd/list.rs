//! `loci list`: the registered workspaces.

use loci_api::ApiError;

use crate::output;

pub fn run(json: bool) -> Result<(), ApiError> {
    let list = loci_api::workspaces::list()?;
    if json {
        output::json(&list);
        return Ok(());
    }
    if list.workspaces.is_empty() {
        println!("no workspaces yet: run `loci index <path>`");
    }
    for e in list.workspaces {
        println!(
            "{}  files={} symbols={}{}",
            e.root,
            e.files.map_or("-".into(), |n| n.to_string()),
            e.symbols.map_or("-".into(), |n| n.to_string()),
            e.locator.map(|l| format!("  ({l})")).unwrap_or_default()
        );
    }
    Ok(())
}
