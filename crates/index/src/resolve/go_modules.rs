//! Go import paths to package folders through the workspace's `go.mod` files: with
//! `module example.com/m` in `svc/go.mod`, `import "example.com/m/pkg/x"` is the folder
//! `svc/pkg/x`, whose `.go` files (tests excepted) are the package. An import no module
//! of the workspace declares (`fmt`, another module) is left to the name-based rules.

use std::collections::HashMap;

use crate::module_configs::GoModule;

/// Go's packages: the workspace's modules and each folder's non-test `.go` files.
#[derive(Default)]
pub(super) struct GoModules {
    /// Longest module path first, so a nested module wins over its parent.
    modules: Vec<GoModule>,
    /// Folder (relative, `` at the root) → its package's files, in path order.
    dirs: HashMap<String, Vec<(String, i64)>>,
}

impl GoModules {
    pub(super) fn add_file(&mut self, id: i64, path: &str) {
        if path.ends_with(".go") && !path.ends_with("_test.go") {
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            self.dirs
                .entry(dir.to_string())
                .or_default()
                .push((path.to_string(), id));
        }
    }

    pub(super) fn set_modules(&mut self, modules: &[GoModule]) {
        self.modules = modules.to_vec();
        self.modules
            .sort_by(|a, b| b.path.len().cmp(&a.path.len()).then(a.cmp(b)));
    }

    /// The files of the package `import` names when written in the Go file `from`:
    /// `Some` (possibly empty: a folder with no Go file) when a module of the workspace
    /// declares the path, `None` otherwise.
    pub(super) fn resolve(&self, from: &str, import: &str) -> Option<Vec<i64>> {
        if !from.ends_with(".go") {
            return None;
        }
        let (module, rest) = self.modules.iter().find_map(|m| {
            if import == m.path {
                Some((m, ""))
            } else {
                import
                    .strip_prefix(m.path.as_str())
                    .and_then(|r| r.strip_prefix('/'))
                    .map(|r| (m, r))
            }
        })?;
        let dir = match (module.dir.is_empty(), rest.is_empty()) {
            (true, _) => rest.to_string(),
            (false, true) => module.dir.clone(),
            (false, false) => format!("{}/{rest}", module.dir),
        };
        let mut files = self.dirs.get(&dir).cloned().unwrap_or_default();
        files.sort();
        Some(files.into_iter().map(|(_, id)| id).collect())
    }
}

/// The name a Go import binds when it has no alias: the path's last element, without a
/// major-version element (`example.com/m/v2` → `m`) or a `.vN` suffix
/// (`gopkg.in/yaml.v3` → `yaml`).
pub(super) fn package_name(import: &str) -> &str {
    let mut parts = import.rsplit('/');
    let last = parts.next().unwrap_or(import);
    let is_major = |p: &str| {
        p.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let last = if is_major(last) {
        parts.next().unwrap_or(last)
    } else {
        last
    };
    match last.rsplit_once('.') {
        Some((head, tail)) if is_major(tail) => head,
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_under_a_module_path_is_that_folder() {
        let mut g = GoModules::default();
        for (i, p) in [
            "svc/pkg/x/a.go",
            "svc/pkg/x/a_test.go",
            "other/pkg/x/a.go",
            "svc/main.go",
        ]
        .iter()
        .enumerate()
        {
            g.add_file(i as i64, p);
        }
        g.set_modules(&[GoModule {
            dir: "svc".into(),
            path: "example.com/m".into(),
        }]);
        assert_eq!(
            g.resolve("svc/main.go", "example.com/m/pkg/x"),
            Some(vec![0])
        );
        assert_eq!(g.resolve("svc/main.go", "example.com/m"), Some(vec![3]));
        assert_eq!(g.resolve("svc/main.go", "example.com/m/none"), Some(vec![]));
        assert_eq!(g.resolve("svc/main.go", "example.com/mx/pkg/x"), None);
        assert_eq!(g.resolve("svc/main.go", "fmt"), None);
    }

    #[test]
    fn a_package_name_drops_major_versions() {
        assert_eq!(package_name("example.com/m/pkg/x"), "x");
        assert_eq!(package_name("example.com/m/v2"), "m");
        assert_eq!(package_name("gopkg.in/yaml.v3"), "yaml");
        assert_eq!(package_name("fmt"), "fmt");
    }
}
