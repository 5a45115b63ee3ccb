//! The crates' layers, as ARCHITECTURE.md draws them, read from each crate's
//! `Cargo.toml`: a crate depends only on crates of lower layers, and the front ends
//! (the HTTP server, the MCP server) reach the product through `loci-api` alone, so
//! they can only convert. A new crate must be given its layer here.

use std::collections::BTreeMap;
use std::path::Path;

/// Every crate and its layer: 0 the leaves, 1 the engines over them, 2 the lifecycle,
/// 3 the one service API, 4 the front ends, 5 the binary.
const LAYERS: &[(&str, u8)] = &[
    ("loci-exit", 0),
    ("loci-paths", 0),
    ("loci-store", 0),
    ("loci-supervisor", 0),
    ("loci-git", 0),
    ("loci-index", 1),
    ("loci-query", 1),
    ("loci-memory", 1),
    ("loci-workspace", 1),
    ("loci-embed", 1),
    ("loci-lifecycle", 2),
    ("loci-api", 3),
    ("loci-server", 4),
    ("loci-mcp", 4),
    ("loci", 5),
];

/// The front ends: they may name no loci crate but these.
const FRONT_END_DEPS: &[&str] = &["loci-api", "loci-exit"];

/// Each crate's name and the loci crates its `[dependencies]` list.
fn crate_deps() -> BTreeMap<String, Vec<String>> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let doc: toml::Table = toml::from_str(&text).unwrap();
        let name = doc["package"]["name"].as_str().unwrap().to_string();
        let deps = doc
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .filter(|k| k.starts_with("loci"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        out.insert(name, deps);
    }
    out
}

#[test]
fn every_crate_depends_only_on_lower_layers_and_front_ends_on_api_alone() {
    let layers: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let deps = crate_deps();
    assert!(
        deps.len() >= 15,
        "only {} crates read: {deps:?}",
        deps.len()
    );
    let mut wrong = Vec::new();
    for (name, list) in &deps {
        let Some(&layer) = layers.get(name.as_str()) else {
            wrong.push(format!("{name} has no layer in LAYERS"));
            continue;
        };
        for dep in list {
            match layers.get(dep.as_str()) {
                Some(&l) if l < layer => {}
                Some(&l) => wrong.push(format!("{name} (layer {layer}) -> {dep} (layer {l})")),
                None => wrong.push(format!("{name} -> {dep}, which has no layer")),
            }
            if layer == 4 && !FRONT_END_DEPS.contains(&dep.as_str()) {
                wrong.push(format!("front end {name} reaches past loci-api into {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

/// The check reads real manifests: the binary's own list is what ARCHITECTURE.md says.
#[test]
fn the_binary_depends_on_the_api_and_the_front_ends() {
    let deps = crate_deps();
    let mut binary = deps["loci"].clone();
    binary.sort();
    assert_eq!(binary, ["loci-api", "loci-mcp", "loci-server"]);
}

/// ARCHITECTURE.md's table of each crate's loci dependencies says what the manifests
/// say, so the map cannot drift from the code.
#[test]
fn architecture_md_lists_each_crates_dependencies() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md"),
    )
    .unwrap();
    let short = |name: &str| {
        if name == "loci" {
            "cli".to_string()
        } else {
            name.trim_start_matches("loci-").to_string()
        }
    };
    let mut documented: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() != 4 || cells[1] == "crate" || cells[1].starts_with("---") {
            continue;
        }
        let deps: Vec<String> = match cells[2] {
            "none" => Vec::new(),
            list => list.split(", ").map(str::to_string).collect(),
        };
        if !deps
            .iter()
            .all(|d| LAYERS.iter().any(|(n, _)| short(n) == *d))
        {
            continue; // another table of the document
        }
        for name in cells[1].split(", ") {
            let mut sorted = deps.clone();
            sorted.sort();
            documented.insert(name.to_string(), sorted);
        }
    }
    let actual: BTreeMap<String, Vec<String>> = crate_deps()
        .into_iter()
        .map(|(name, deps)| {
            let mut deps: Vec<String> = deps.iter().map(|d| short(d)).collect();
            deps.sort();
            (short(&name), deps)
        })
        .collect();
    assert_eq!(
        documented, actual,
        "ARCHITECTURE.md's dependency table is out of date"
    );
}
