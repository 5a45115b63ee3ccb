//! The release link's start-up order (`crates/cli/startup-order.txt`, placed first in
//! `.text` by crates/cli/build.rs): a well-formed symbol list that covers every stage of
//! an idle `loci mcp` session. A list regenerated from a trace that stopped early (the
//! gate still pending, a probe path not taken) would leave those stages' code spread
//! over the binary again, and an idle session's resident memory with it.

use std::collections::HashSet;

fn order() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/startup-order.txt");
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_startup_order_is_one_symbol_per_line_without_repeats() {
    let names = order();
    assert!(names.len() > 1000, "only {} names", names.len());
    let mut seen = HashSet::new();
    for n in &names {
        assert!(
            !n.is_empty() && !n.contains(char::is_whitespace),
            "not a symbol name: {n:?}"
        );
        assert!(seen.insert(n), "listed twice: {n}");
    }
}

#[test]
fn the_startup_order_covers_every_stage_of_an_idle_session() {
    let names = order();
    // A path as the legacy mangling spells it: in a symbol's own path each segment
    // after its length (`4loci4main`), inside an impl's type `loci::main` as
    // `loci..main`.
    let spellings = |path: &[&str]| -> [String; 2] {
        [
            path.iter().map(|s| format!("{}{s}", s.len())).collect(),
            path.join(".."),
        ]
    };
    for stage in [
        // start-up: argument parsing and the configuration
        &["loci", "main"][..],
        &["clap_builder", "parser"],
        &["loci_lifecycle", "config"],
        // the stdio server, initialize, and tools/list (its schemas)
        &["loci_mcp", "serve_stdio"],
        &["loci_mcp", "server", "LociMcp"],
        &["rmcp", "service"],
        &["loci_mcp", "tools", "input_schema"],
        // the session-start gate: its probe chain over HTTP, the registry, the drift check
        &["loci_lifecycle", "gate", "evaluate"],
        &["loci_api", "api_probe"],
        &["ureq"],
        &["loci_lifecycle", "probe", "RegistryProbe"],
        &["loci_index", "sync"],
        &["ignore", "walk"],
        // one status call: the index read
        &["loci_mcp", "tools", "status"],
        &["rusqlite"],
    ] {
        let [own, in_type] = spellings(stage);
        assert!(
            names
                .iter()
                .any(|n| n.contains(&own) || n.contains(&in_type)),
            "startup-order.txt has no function of {} (regenerate it: scripts/startup-order.py)",
            stage.join("::")
        );
    }
}
