//! JavaScript/TypeScript module specifiers to files, as Node and TypeScript find them:
//! a relative one (`./dir`, `../x.js`) from the importing file's folder, with the
//! extensions tried in order and a folder's `index` file; a bare one through the nearest
//! `tsconfig.json`'s `paths` and `baseUrl` (its `extends` chain followed). A bare
//! specifier no config maps (`react`) is left to the name-based rules.

use std::collections::HashMap;

use crate::module_configs::TsConfig;

/// The extensions a specifier without one may stand for, in TypeScript's order.
const EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];

/// `compilerOptions.paths`: each pattern with its targets.
type Paths = Vec<(String, Vec<String>)>;

/// Most `extends` links followed from one config.
const MAX_EXTENDS: usize = 8;

/// Whether `path` is a JavaScript or TypeScript file.
pub(super) fn is_js(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext))
}

/// The effective `baseUrl` and `paths` of one config, with its `extends` applied:
/// the folders they are relative to, resolved.
#[derive(Debug, Default, Clone)]
struct Effective {
    /// The `baseUrl` folder, relative to the workspace.
    base_url: Option<String>,
    /// The folder `paths` targets are relative to (the `baseUrl`, else the folder of
    /// the config that declared them).
    paths_base: String,
    /// The patterns and their targets.
    paths: Paths,
}

/// The JavaScript/TypeScript files of the workspace and the configs that map bare
/// specifiers.
#[derive(Default)]
pub(super) struct JsModules {
    files: HashMap<String, i64>,
    /// Effective config by the folder of a `tsconfig.json` / `jsconfig.json`.
    configs: HashMap<String, Effective>,
}

impl JsModules {
    pub(super) fn add_file(&mut self, id: i64, path: &str) {
        if is_js(path) {
            self.files.insert(path.to_string(), id);
        }
    }

    /// Sets the workspace's configs: each `tsconfig.json`/`jsconfig.json` with its
    /// `extends` chain applied.
    pub(super) fn set_configs(&mut self, configs: &[TsConfig]) {
        let by_path: HashMap<&str, &TsConfig> =
            configs.iter().map(|c| (c.path.as_str(), c)).collect();
        self.configs = configs
            .iter()
            .filter(|c| {
                let name = c.path.rsplit('/').next().unwrap_or(&c.path);
                name == "tsconfig.json" || name == "jsconfig.json"
            })
            .map(|c| (parent(&c.path).to_string(), effective(c, &by_path)))
            .collect();
    }

    /// The files a specifier written in `from` names: `Some` (possibly empty) when the
    /// specifier is relative or a config maps it (a `paths` pattern that matches decides,
    /// as in TypeScript), `None` to leave it to the name-based rules.
    pub(super) fn resolve(&self, from: &str, specifier: &str) -> Option<Vec<i64>> {
        if !is_js(from) {
            return None;
        }
        if is_relative(specifier) {
            let target = normalize(&join(parent(from), specifier));
            return Some(target.and_then(|t| self.file(&t)).into_iter().collect());
        }
        let config = self.nearest_config(from)?;
        if let Some((star, targets)) = best_pattern(&config.paths, specifier) {
            for target in targets {
                let target = target.replacen('*', star, 1);
                if let Some(id) =
                    normalize(&join(&config.paths_base, &target)).and_then(|t| self.file(&t))
                {
                    return Some(vec![id]);
                }
            }
            // A pattern matched but names no file: TypeScript stops there too.
            return Some(Vec::new());
        }
        let base = config.base_url.as_deref()?;
        let id = normalize(&join(base, specifier)).and_then(|t| self.file(&t))?;
        Some(vec![id])
    }

    /// The config of the nearest folder at or above `from`'s that has one.
    fn nearest_config(&self, from: &str) -> Option<&Effective> {
        let mut dir = parent(from);
        loop {
            if let Some(c) = self.configs.get(dir) {
                return Some(c);
            }
            if dir.is_empty() {
                return None;
            }
            dir = parent(dir);
        }
    }

    /// The file a resolved path names: itself, a `.js` written for its `.ts` source,
    /// the path with each extension, else the folder's `index` file.
    fn file(&self, path: &str) -> Option<i64> {
        if let Some(&id) = self.files.get(path) {
            return Some(id);
        }
        if let Some((stem, ext)) = path.rsplit_once('.') {
            let sources: &[&str] = match ext {
                "js" | "jsx" => &["ts", "tsx"],
                "mjs" => &["mts"],
                "cjs" => &["cts"],
                _ => &[],
            };
            if let Some(id) = sources
                .iter()
                .find_map(|e| self.files.get(&format!("{stem}.{e}")))
            {
                return Some(*id);
            }
        }
        // A declaration file (`types.d.ts`) answers too, after the sources.
        let with = |stem: &str| {
            EXTENSIONS
                .iter()
                .chain(&["d.ts"])
                .find_map(|e| self.files.get(&format!("{stem}.{e}")).copied())
        };
        with(path).or_else(|| with(&join(path, "index")))
    }
}

/// A config's `baseUrl` and `paths`, each from the nearest config of its `extends`
/// chain that sets it.
fn effective(config: &TsConfig, by_path: &HashMap<&str, &TsConfig>) -> Effective {
    let mut out = Effective::default();
    let mut base_url: Option<String> = None;
    let mut paths: Option<(String, Paths)> = None;
    let mut at = Some(config);
    for _ in 0..MAX_EXTENDS {
        let Some(c) = at else { break };
        let dir = parent(&c.path);
        if base_url.is_none() {
            base_url = c.base_url.as_deref().and_then(|b| normalize(&join(dir, b)));
        }
        if paths.is_none()
            && let Some(p) = &c.paths
        {
            paths = Some((dir.to_string(), p.clone()));
        }
        at = c
            .extends
            .as_deref()
            .filter(|e| is_relative(e))
            .and_then(|e| {
                let target = normalize(&join(dir, e))?;
                by_path
                    .get(target.as_str())
                    .or_else(|| by_path.get(format!("{target}.json").as_str()))
                    .copied()
            });
    }
    out.paths_base = match (&base_url, &paths) {
        (Some(b), _) => b.clone(),
        (None, Some((dir, _))) => dir.clone(),
        (None, None) => String::new(),
    };
    out.base_url = base_url;
    out.paths = paths.map(|(_, p)| p).unwrap_or_default();
    out
}

/// The pattern of `paths` that matches `specifier` with the longest prefix before its
/// `*` (an exact pattern beats any wildcard), with what the `*` stands for.
fn best_pattern<'p, 's>(
    paths: &'p [(String, Vec<String>)],
    specifier: &'s str,
) -> Option<(&'s str, &'p [String])> {
    let mut best: Option<(usize, &'s str, &'p [String])> = None;
    for (pattern, targets) in paths {
        let (rank, star) = match pattern.split_once('*') {
            None if pattern == specifier => (usize::MAX, ""),
            None => continue,
            Some((prefix, suffix)) => {
                let Some(star) = specifier
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_suffix(suffix))
                else {
                    continue;
                };
                (prefix.len(), star)
            }
        };
        if best.is_none_or(|(r, _, _)| rank > r) {
            best = Some((rank, star, targets));
        }
    }
    best.map(|(_, star, targets)| (star, targets))
}

fn is_relative(specifier: &str) -> bool {
    specifier == "."
        || specifier == ".."
        || specifier.starts_with("./")
        || specifier.starts_with("../")
}

/// The folder of a relative path (`` at the root).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// `a/./b/../c` → `a/c`; `None` when the path climbs above the workspace.
fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(files: &[&str], configs: &[TsConfig]) -> JsModules {
        let mut m = JsModules::default();
        for (i, f) in files.iter().enumerate() {
            m.add_file(i as i64, f);
        }
        m.set_configs(configs);
        m
    }

    #[test]
    fn relative_specifiers_try_extensions_then_the_index_file() {
        let m = modules(
            &[
                "src/a.ts",
                "src/dir/index.tsx",
                "src/b.ts",
                "src/b/index.ts",
                "src/t.d.ts",
            ],
            &[],
        );
        assert_eq!(
            m.resolve("src/a.ts", "./t"),
            Some(vec![4]),
            "a declaration file"
        );
        assert_eq!(m.resolve("src/a.ts", "./dir"), Some(vec![1]));
        assert_eq!(
            m.resolve("src/a.ts", "./b"),
            Some(vec![2]),
            "a file before a folder"
        );
        assert_eq!(m.resolve("src/dir/index.tsx", "../b.js"), Some(vec![2]));
        assert_eq!(m.resolve("src/a.ts", "./missing"), Some(vec![]));
        assert_eq!(m.resolve("src/a.ts", "../../x"), Some(vec![]));
        assert_eq!(m.resolve("src/a.ts", "react"), None);
        assert_eq!(m.resolve("src/a.rs", "./dir"), None);
    }

    #[test]
    fn paths_pick_the_longest_prefix_and_extends_is_followed() {
        let base = TsConfig {
            path: "tsconfig.base.json".into(),
            extends: None,
            base_url: Some("./src".into()),
            paths: Some(vec![
                ("@app/*".into(), vec!["app/*".into()]),
                ("@app/core/*".into(), vec!["core/*".into()]),
            ]),
        };
        let web = TsConfig {
            path: "web/tsconfig.json".into(),
            extends: Some("../tsconfig.base".into()),
            base_url: None,
            paths: None,
        };
        let m = modules(
            &["src/app/x.ts", "src/core/x.ts", "src/util.ts", "web/w.ts"],
            &[base, web],
        );
        assert_eq!(m.resolve("web/w.ts", "@app/x"), Some(vec![0]));
        assert_eq!(m.resolve("web/w.ts", "@app/core/x"), Some(vec![1]));
        assert_eq!(m.resolve("web/w.ts", "util"), Some(vec![2]), "baseUrl");
        assert_eq!(m.resolve("web/w.ts", "lodash"), None);
        assert_eq!(
            m.resolve("src/util.ts", "@app/x"),
            None,
            "no config above src/"
        );
    }
}
