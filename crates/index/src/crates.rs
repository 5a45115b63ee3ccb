//! Rust crate names, from the workspace's `Cargo.toml` files, so that a path written
//! through a crate's name (`loci_index::index_workspace()`, `use tokio::runtime::Handle`)
//! resolves inside that crate's module tree.
//!
//! Every `Cargo.toml` the walk finds is a crate (workspace members and path
//! dependencies inside the workspace are found that way; a manifest with only
//! `[workspace]` names none). A crate's name is its `[lib] name`, else its package name
//! with `-` → `_`; its root is `[lib] path`, else `src/lib.rs`, else `src/main.rs`.
//!
//! The map is kept in `meta` with the manifests' stat fingerprints: a run whose
//! manifests are unchanged by stat reads none of them. When the map changes (a crate
//! renamed, added or removed), every Rust file is re-resolved.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::meta::{meta_get, meta_set};
use crate::vocab::MetaKey;
use crate::walk::Found;

/// The file name of a crate manifest.
pub(crate) const MANIFEST: &str = "Cargo.toml";

/// One crate: the name code refers to it by and the files its module tree may start at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Crate {
    /// The name in paths (`loci_index`).
    pub name: String,
    /// The manifest's directory, relative to the workspace (`crates/index`, `` at the root).
    pub dir: String,
    /// Candidate root files, relative to the workspace, in order of preference (the
    /// library's first): the first that is indexed is the crate's root module.
    pub roots: Vec<String>,
}

/// Every crate of the workspace, by name then directory.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CrateMap {
    /// Sorted, so two runs over the same tree store the same map.
    pub crates: Vec<Crate>,
}

impl CrateMap {
    /// The crate the file `path` belongs to: the one whose directory is the longest that
    /// holds it.
    pub(crate) fn owner_of(&self, path: &str) -> Option<&Crate> {
        self.crates
            .iter()
            .filter(|c| in_dir(path, &c.dir))
            .max_by_key(|c| c.dir.len())
    }
}

/// Whether `path` lies in the directory `dir` (`""`: the workspace root holds all).
fn in_dir(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// What `meta` keeps: the map and the fingerprints of the manifests it was read from.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    /// Manifest path (relative, shown text) → (size, mtime ns, inode).
    manifests: BTreeMap<String, (u64, i64, u64)>,
    map: CrateMap,
}

#[derive(Deserialize)]
struct Manifest {
    package: Option<Package>,
    lib: Option<Target>,
}

#[derive(Deserialize)]
struct Package {
    name: Option<String>,
}

#[derive(Deserialize)]
struct Target {
    name: Option<String>,
    path: Option<String>,
}

/// The crate a manifest at `dir` (relative, `` at the root) declares, if any. A
/// manifest that does not parse, or has no package, declares none (it is not an error:
/// the index does not build code, it only reads names).
fn parse_manifest(dir: &str, text: &str) -> Option<Crate> {
    let manifest: Manifest = toml::from_str(text).ok()?;
    let package = manifest.package?.name?;
    let lib = manifest.lib;
    let name = lib
        .as_ref()
        .and_then(|l| l.name.clone())
        .unwrap_or_else(|| package.replace('-', "_"));
    let join = |p: &str| {
        let p = p.trim_start_matches("./");
        if dir.is_empty() {
            p.to_string()
        } else {
            format!("{dir}/{p}")
        }
    };
    let mut roots = Vec::new();
    if let Some(path) = lib.as_ref().and_then(|l| l.path.as_deref()) {
        roots.push(join(path));
    }
    roots.push(join("src/lib.rs"));
    roots.push(join("src/main.rs"));
    roots.dedup();
    Some(Crate {
        name,
        dir: dir.to_string(),
        roots,
    })
}

/// Whether a walked path is a crate manifest.
pub(crate) fn is_manifest(path: &std::path::Path) -> bool {
    path.file_name().is_some_and(|n| n == MANIFEST)
}

/// Reads the stored crate map (empty when none was stored).
pub(crate) fn load(conn: &Connection) -> rusqlite::Result<CrateMap> {
    Ok(load_stored(conn)?.map)
}

fn load_stored(conn: &Connection) -> rusqlite::Result<Stored> {
    Ok(meta_get(conn, MetaKey::RustCrates)?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default())
}

/// Whether the walked `manifests` give another crate map than the stored one (drift's
/// question, read-only): none is read when their fingerprints are as stored.
pub(crate) fn map_changed(conn: &Connection, manifests: &[Found]) -> rusqlite::Result<bool> {
    let before = load_stored(conn)?;
    if fingerprints(manifests) == before.manifests {
        return Ok(false);
    }
    Ok(read_map(manifests) != before.map)
}

/// Each manifest's stat fingerprint, by its shown relative path.
fn fingerprints(manifests: &[Found]) -> BTreeMap<String, (u64, i64, u64)> {
    manifests
        .iter()
        .map(|f| {
            let s = f.stat;
            (f.rel.display().into_owned(), (s.size, s.mtime_ns, s.inode))
        })
        .collect()
}

/// The crate map the manifests declare (each one read and parsed).
fn read_map(manifests: &[Found]) -> CrateMap {
    let mut crates: Vec<Crate> = manifests
        .iter()
        .filter_map(|f| {
            let rel = f.rel.display();
            let dir = rel.strip_suffix(MANIFEST)?.trim_end_matches('/');
            let text = std::fs::read_to_string(&f.abs).ok()?;
            parse_manifest(dir, &text)
        })
        .collect();
    crates.sort();
    CrateMap { crates }
}

/// What a run's manifests changed.
pub(crate) struct Refreshed {
    /// The map to resolve with.
    pub map: CrateMap,
    /// Whether it differs from the stored one (every Rust file must be re-resolved).
    pub changed: bool,
    /// Whether the stored record was rewritten (a manifest changed by stat).
    pub wrote: bool,
}

/// Brings the stored crate map up to date with the walked `manifests`: reads them only
/// when their fingerprints changed, and stores the result (in the caller's connection,
/// before the run's other writes) only when something changed. Writes nothing when the
/// manifests are as stored.
pub(crate) fn refresh(conn: &Connection, manifests: &[Found]) -> rusqlite::Result<Refreshed> {
    let before = load_stored(conn)?;
    let fingerprints = fingerprints(manifests);
    if fingerprints == before.manifests {
        return Ok(Refreshed {
            map: before.map,
            changed: false,
            wrote: false,
        });
    }
    let map = read_map(manifests);
    let changed = map != before.map;
    let stored = Stored {
        manifests: fingerprints,
        map: map.clone(),
    };
    let text = serde_json::to_string(&stored).unwrap_or_else(|_| "{}".into());
    meta_set(conn, MetaKey::RustCrates, &text)?;
    Ok(Refreshed {
        map,
        changed,
        wrote: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_name_becomes_a_crate_name_with_underscores() {
        let c = parse_manifest("crates/index", "[package]\nname = \"loci-index\"\n").unwrap();
        assert_eq!(c.name, "loci_index");
        assert_eq!(
            c.roots,
            ["crates/index/src/lib.rs", "crates/index/src/main.rs"]
        );
    }

    #[test]
    fn a_lib_section_names_and_places_the_crate() {
        let c = parse_manifest(
            "",
            "[package]\nname = \"x\"\n[lib]\nname = \"y_core\"\npath = \"lib/y.rs\"\n",
        )
        .unwrap();
        assert_eq!(c.name, "y_core");
        assert_eq!(c.roots[0], "lib/y.rs");
    }

    #[test]
    fn a_virtual_or_broken_manifest_declares_no_crate() {
        assert_eq!(parse_manifest("", "[workspace]\nmembers = [\"a\"]\n"), None);
        assert_eq!(parse_manifest("", "[package\nname ="), None);
    }
}
