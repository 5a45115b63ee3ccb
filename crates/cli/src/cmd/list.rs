//! `loci list`: the registered workspaces.

use crate::exit::Failure;
use crate::output;

pub fn run(json: bool) -> Result<(), Failure> {
    let registry = loci_store::registry::Registry::open_default()?;
    let entries = registry.list()?;
    if json {
        output::json(&serde_json::json!({ "workspaces": entries }));
        return Ok(());
    }
    if entries.is_empty() {
        println!("no workspaces yet: run `loci index <path>`");
    }
    for e in entries {
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
