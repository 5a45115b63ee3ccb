//! The module settings other languages keep beside their code: `tsconfig.json` /
//! `jsconfig.json` (`compilerOptions.baseUrl` and `paths`, `extends` followed) for
//! JavaScript and TypeScript, and `go.mod` (the `module` path) for Go. Resolution reads
//! them to turn `import "@app/x"` or `import "example.com/m/pkg/x"` into files.
//!
//! As with [`crate::crates`], the parsed settings are kept in `meta` with the files'
//! stat fingerprints: a run whose config files are unchanged by stat reads none of them.
//! When the TypeScript settings change every JavaScript/TypeScript file is re-resolved;
//! when the Go modules change, every Go file. Drift ([`crate::drift`]) asks the same
//! question read-only ([`configs_changed`]), so a changed `paths` or `module` line is
//! drift and the session-start gate syncs it.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::meta::{meta_get, meta_set};
use crate::vocab::MetaKey;
use crate::walk::Found;

/// The Go module file.
const GO_MOD: &str = "go.mod";

/// Whether a walked path is a config file read here: `go.mod`, `tsconfig.json`,
/// `jsconfig.json`, and `tsconfig.*.json` (what `extends` usually names).
pub(crate) fn is_config(path: &std::path::Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name == GO_MOD
        || name == "jsconfig.json"
        || (name.starts_with("tsconfig") && name.ends_with(".json"))
}

/// One TypeScript/JavaScript config file as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct TsConfig {
    /// The file, relative to the workspace (`web/tsconfig.json`).
    pub path: String,
    /// `extends`, as written (only a relative one is followed).
    pub extends: Option<String>,
    /// `compilerOptions.baseUrl`, as written (relative to this file's directory).
    pub base_url: Option<String>,
    /// `compilerOptions.paths`: each pattern (`@app/*`) with its targets, in file order.
    pub paths: Option<Vec<(String, Vec<String>)>>,
}

/// One Go module: the folder of its `go.mod` and the import path it declares.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct GoModule {
    /// The folder, relative to the workspace (`` at the root).
    pub dir: String,
    /// The `module` path (`example.com/m`).
    pub path: String,
}

/// Every module setting of the workspace, sorted, so two runs over the same tree store
/// the same value.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ModuleConfigs {
    /// The TypeScript/JavaScript config files.
    pub ts: Vec<TsConfig>,
    /// The Go modules.
    pub go: Vec<GoModule>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    /// Config path (relative, shown text) → (size, mtime ns, inode).
    files: BTreeMap<String, (u64, i64, u64)>,
    configs: ModuleConfigs,
}

#[derive(Deserialize)]
struct TsFile {
    extends: Option<serde_json::Value>,
    #[serde(rename = "compilerOptions")]
    compiler_options: Option<TsOptions>,
}

#[derive(Deserialize)]
struct TsOptions {
    #[serde(rename = "baseUrl")]
    base_url: Option<String>,
    paths: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A `tsconfig.json` (JSON with comments and trailing commas). One that does not parse
/// declares nothing (the index reads names, it does not build the project).
fn parse_tsconfig(path: &str, text: &str) -> Option<TsConfig> {
    let mut text = text.to_string();
    json_strip_comments::strip(&mut text).ok()?;
    let file: TsFile = serde_json::from_str(&text).ok()?;
    let options = file.compiler_options;
    let paths = options
        .as_ref()
        .and_then(|o| o.paths.as_ref())
        .map(|paths| {
            paths
                .iter()
                .map(|(pattern, targets)| {
                    let targets = targets
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|t| t.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    (pattern.clone(), targets)
                })
                .collect()
        });
    Some(TsConfig {
        path: path.to_string(),
        extends: file.extends.and_then(|e| e.as_str().map(str::to_string)),
        base_url: options.and_then(|o| o.base_url),
        paths,
    })
}

/// The `module` line of a `go.mod` (`module example.com/m`, quoted or not, a `//`
/// comment after it ignored).
fn parse_go_mod(dir: &str, text: &str) -> Option<GoModule> {
    let line = text.lines().map(str::trim).find_map(|l| {
        l.strip_prefix("module")
            .filter(|r| r.starts_with([' ', '\t', '"']))
    })?;
    let path = line.split("//").next()?.trim().trim_matches(['"', '`']);
    (!path.is_empty() && !path.contains(char::is_whitespace)).then(|| GoModule {
        dir: dir.to_string(),
        path: path.to_string(),
    })
}

/// Reads the stored settings (empty when none were stored).
pub(crate) fn load(conn: &Connection) -> rusqlite::Result<ModuleConfigs> {
    Ok(load_stored(conn)?.configs)
}

fn load_stored(conn: &Connection) -> rusqlite::Result<Stored> {
    Ok(meta_get(conn, MetaKey::ModuleConfigs)?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default())
}

/// What a run's config files changed.
pub(crate) struct Refreshed {
    /// The settings to resolve with.
    pub configs: ModuleConfigs,
    /// Whether the TypeScript settings differ from the stored ones.
    pub ts_changed: bool,
    /// Whether the Go modules differ from the stored ones.
    pub go_changed: bool,
    /// Whether the stored record was rewritten.
    pub wrote: bool,
}

/// Brings the stored settings up to date with the walked config `files`: reads them
/// only when their fingerprints changed, and stores the result only when something
/// changed.
pub(crate) fn refresh(conn: &Connection, files: &[Found]) -> rusqlite::Result<Refreshed> {
    let before = load_stored(conn)?;
    let fingerprints = fingerprints(files);
    if fingerprints == before.files {
        return Ok(Refreshed {
            configs: before.configs,
            ts_changed: false,
            go_changed: false,
            wrote: false,
        });
    }
    let configs = read_configs(files);
    let ts_changed = configs.ts != before.configs.ts;
    let go_changed = configs.go != before.configs.go;
    let stored = Stored {
        files: fingerprints,
        configs: configs.clone(),
    };
    let text = serde_json::to_string(&stored).unwrap_or_else(|_| "{}".into());
    meta_set(conn, MetaKey::ModuleConfigs, &text)?;
    Ok(Refreshed {
        configs,
        ts_changed,
        go_changed,
        wrote: true,
    })
}

/// Each config file's stat fingerprint, by its shown relative path.
fn fingerprints(files: &[Found]) -> BTreeMap<String, (u64, i64, u64)> {
    files
        .iter()
        .map(|f| {
            let s = f.stat;
            (f.rel.display().into_owned(), (s.size, s.mtime_ns, s.inode))
        })
        .collect()
}

/// Whether the walked config `files` declare other settings than the stored ones
/// (drift's question, read-only): none is read when their fingerprints are as stored.
pub(crate) fn configs_changed(conn: &Connection, files: &[Found]) -> rusqlite::Result<bool> {
    let before = load_stored(conn)?;
    if fingerprints(files) == before.files {
        return Ok(false);
    }
    Ok(read_configs(files) != before.configs)
}

/// The settings the config `files` declare (each one read and parsed), sorted.
fn read_configs(files: &[Found]) -> ModuleConfigs {
    let mut configs = ModuleConfigs::default();
    for f in files {
        let rel = f.rel.display();
        let Ok(text) = std::fs::read_to_string(&f.abs) else {
            continue;
        };
        match rel.strip_suffix(GO_MOD) {
            Some(dir) if dir.is_empty() || dir.ends_with('/') => {
                configs
                    .go
                    .extend(parse_go_mod(dir.trim_end_matches('/'), &text));
            }
            _ => configs.ts.extend(parse_tsconfig(&rel, &text)),
        }
    }
    configs.ts.sort();
    configs.go.sort();
    configs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsconfig_with_comments_and_trailing_commas_gives_its_paths() {
        let c = parse_tsconfig(
            "web/tsconfig.json",
            r#"{
                // the base
                "extends": "./tsconfig.base.json",
                "compilerOptions": {
                    "baseUrl": ".", /* beside */
                    "paths": { "@app/*": ["src/app/*", "gen/*",], },
                },
            }"#,
        )
        .unwrap();
        assert_eq!(c.extends.as_deref(), Some("./tsconfig.base.json"));
        assert_eq!(c.base_url.as_deref(), Some("."));
        assert_eq!(
            c.paths,
            Some(vec![(
                "@app/*".to_string(),
                vec!["src/app/*".to_string(), "gen/*".to_string()]
            )])
        );
    }

    #[test]
    fn a_broken_tsconfig_declares_nothing() {
        assert_eq!(
            parse_tsconfig("tsconfig.json", "{ \"compilerOptions\": "),
            None
        );
    }

    #[test]
    fn a_go_mod_names_its_module_path() {
        let m = parse_go_mod("svc", "// x\nmodule \"example.com/m\" // main\n\ngo 1.22\n").unwrap();
        assert_eq!(m.path, "example.com/m");
        assert_eq!(m.dir, "svc");
        assert_eq!(parse_go_mod("", "go 1.22\n"), None);
    }

    #[test]
    fn config_files_are_recognised_by_name() {
        for yes in [
            "go.mod",
            "a/tsconfig.json",
            "tsconfig.base.json",
            "jsconfig.json",
        ] {
            assert!(is_config(std::path::Path::new(yes)), "{yes}");
        }
        for no in ["package.json", "go.sum", "tsconfig.ts", "x/go.mod.bak"] {
            assert!(!is_config(std::path::Path::new(no)), "{no}");
        }
    }
}
