//! Rust's module graph: a path as written (`crate::graph`, `super::x`, `loci_index`,
//! an imported module's name) to the file of the module it names, and an item's name
//! in a module to its definition, following `use`/`pub use` (and glob) re-exports.
//!
//! Modules are files: a crate's root (`src/lib.rs`, `[lib] path`, `src/main.rs`, from
//! `Cargo.toml` through [`crate::crates`]), and `m.rs` / `m/mod.rs` beside or below
//! their parent. Inline `mod m { .. }` blocks and `#[path]` attributes are not followed:
//! a path through them falls back to the name-based rules.

use std::collections::HashMap;

use super::{Sym, SymbolTable};
use crate::crates::CrateMap;

/// How many `use` hops a lookup follows (`pub use a::X` in `lib.rs`, then `pub use
/// self::b::X` in `a/mod.rs`, ...).
const MAX_HOPS: usize = 6;

/// The `use` lookups (module, bound name) in progress on the current path. A `use`
/// whose path leads back to its own name (`use a::a;` where no module `a` exists,
/// written in each of a file's fifty inline test modules) then ends at once instead of
/// branching again at every hop: without it a lookup was exponential in such uses
/// (minutes on one test file of `async-trait`).
type Visiting = Vec<(i64, String)>;

/// One `use` of a Rust file, as far as re-exports need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Use {
    pub module: String,
    pub name: Option<String>,
    pub alias: Option<String>,
}

impl Use {
    /// The local name this `use` binds (`None` for a glob).
    fn binds(&self) -> Option<&str> {
        match (&self.alias, &self.name) {
            (Some(alias), _) => Some(alias),
            (None, Some(name)) if name != "*" && name != "self" => Some(name),
            _ => None,
        }
    }

    fn is_glob(&self) -> bool {
        self.name.as_deref().is_none_or(|n| n == "*")
    }
}

/// The Rust part of the symbol table: crates, `.rs` files by path, and each file's uses.
#[derive(Default)]
pub(crate) struct RustModules {
    pub crates: CrateMap,
    pub files: HashMap<String, i64>,
    pub uses: HashMap<i64, Vec<Use>>,
    /// Path of each `.rs` file by id.
    pub paths: HashMap<i64, String>,
}

fn segs(path: &str) -> Vec<&str> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

impl RustModules {
    pub(crate) fn add_file(&mut self, id: i64, path: &str) {
        if path.ends_with(".rs") {
            self.files.insert(path.to_string(), id);
            self.paths.insert(id, path.to_string());
        }
    }

    fn file(&self, path: &str) -> Option<i64> {
        self.files.get(path).copied()
    }

    fn is_crate_root(&self, path: &str) -> bool {
        self.crates
            .crates
            .iter()
            .any(|c| c.roots.iter().any(|r| r == path))
    }

    /// The directory a module's children live in: `src` for `src/lib.rs`, `a/b` for
    /// `a/b.rs` and for `a/b/mod.rs`.
    fn children_dir<'p>(&self, path: &'p str) -> &'p str {
        let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
        if file == "mod.rs" || self.is_crate_root(path) {
            dir
        } else {
            path.strip_suffix(".rs").unwrap_or(path)
        }
    }

    fn child(&self, module: i64, name: &str) -> Option<i64> {
        let path = self.paths.get(&module)?;
        let dir = self.children_dir(path);
        let join = |p: String| {
            if dir.is_empty() {
                p
            } else {
                format!("{dir}/{p}")
            }
        };
        self.file(&join(format!("{name}.rs")))
            .or_else(|| self.file(&join(format!("{name}/mod.rs"))))
    }

    fn parent(&self, module: i64) -> Option<i64> {
        let path = self.paths.get(&module)?;
        if self.is_crate_root(path) {
            return None;
        }
        // The directory this module sits in is its parent's children directory.
        let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
        let at = if file == "mod.rs" {
            dir.rsplit_once('/').map_or("", |(d, _)| d)
        } else {
            dir
        };
        let (up, name) = at.rsplit_once('/').unwrap_or(("", at));
        let join = |p: &str| {
            if up.is_empty() {
                p.to_string()
            } else {
                format!("{up}/{p}")
            }
        };
        self.file(&join(&format!("{name}.rs")))
            .or_else(|| self.file(&format!("{at}/mod.rs")))
            .or_else(|| {
                self.crates
                    .crates
                    .iter()
                    .flat_map(|c| c.roots.iter())
                    .filter(|r| self.children_dir(r) == at)
                    .find_map(|r| self.file(r))
            })
    }

    /// The root module of the crate `path` belongs to: the crate whose directory is the
    /// longest prefix of it; its main file when `path` is one of its roots, else its first
    /// indexed root.
    fn crate_root_of(&self, path: &str) -> Option<i64> {
        let owner = self
            .crates
            .crates
            .iter()
            .filter(|c| c.dir.is_empty() || path.starts_with(&format!("{}/", c.dir)))
            .max_by_key(|c| c.dir.len())?;
        if owner.roots.iter().any(|r| r == path) {
            return self.file(path);
        }
        owner.roots.iter().find_map(|r| self.file(r))
    }

    /// The root module of every crate named `name` (several crates of a workspace may
    /// share a name), in the crate map's order.
    pub(crate) fn crate_roots_named(&self, name: &str) -> Vec<i64> {
        self.crates
            .crates
            .iter()
            .filter(|c| c.name == name)
            .filter_map(|c| c.roots.iter().find_map(|r| self.file(r)))
            .collect()
    }

    /// The directory of the crate `path` belongs to (the longest crate directory that
    /// holds it), if any.
    pub(crate) fn crate_dir_of(&self, path: &str) -> Option<&str> {
        self.crates
            .crates
            .iter()
            .filter(|c| c.dir.is_empty() || path.starts_with(&format!("{}/", c.dir)))
            .max_by_key(|c| c.dir.len())
            .map(|c| c.dir.as_str())
    }

    fn crate_named(&self, name: &str) -> Option<i64> {
        self.crates
            .crates
            .iter()
            .filter(|c| c.name == name)
            .find_map(|c| c.roots.iter().find_map(|r| self.file(r)))
    }

    /// The module file a path names from `from` (every segment a module), if it can be
    /// followed through files.
    pub(crate) fn module(&self, from: i64, path: &str) -> Option<i64> {
        self.module_segs(from, &segs(path), MAX_HOPS, &mut Visiting::new())
    }

    fn module_segs(
        &self,
        from: i64,
        path: &[&str],
        hops: usize,
        visiting: &mut Visiting,
    ) -> Option<i64> {
        let (&first, rest) = path.split_first()?;
        let mut at = match first {
            "crate" | "$crate" => self.crate_root_of(self.paths.get(&from)?)?,
            "self" => from,
            "super" => self.parent(from)?,
            _ => self.first_segment(from, first, hops, visiting)?,
        };
        for &seg in rest {
            at = match seg {
                "super" => self.parent(at)?,
                "self" => at,
                _ => self
                    .child(at, seg)
                    .or_else(|| self.used_module(at, seg, hops, visiting))?,
            };
        }
        Some(at)
    }

    /// A path's first segment: a child module, a module the file imports under that
    /// name, or a crate.
    fn first_segment(
        &self,
        from: i64,
        name: &str,
        hops: usize,
        visiting: &mut Visiting,
    ) -> Option<i64> {
        self.child(from, name)
            .or_else(|| self.used_module(from, name, hops, visiting))
            .or_else(|| self.crate_named(name))
    }

    /// A module `module` brings in with a `use` under the name `name`.
    fn used_module(
        &self,
        module: i64,
        name: &str,
        hops: usize,
        visiting: &mut Visiting,
    ) -> Option<i64> {
        let hops = hops.checked_sub(1)?;
        let used = self.uses.get(&module)?;
        if visiting.iter().any(|(m, n)| *m == module && n == name) {
            return None;
        }
        visiting.push((module, name.to_string()));
        let mut found = None;
        for u in used.iter().filter(|u| u.binds() == Some(name)) {
            let mut path = segs(&u.module);
            path.extend(u.name.as_deref());
            found = self.module_segs(module, &path, hops, visiting);
            if found.is_some() {
                break;
            }
        }
        visiting.pop();
        found
    }

    /// The definitions `name` names in `module`: its own top-level ones, else those a
    /// `use` in it brings in under that name (followed, `pub` or not), else through its
    /// glob uses.
    pub(crate) fn item<'t>(
        &self,
        table: &'t SymbolTable,
        module: i64,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<&'t Sym> {
        self.item_hops(table, module, name, wanted, MAX_HOPS, &mut Visiting::new())
    }

    fn item_hops<'t>(
        &self,
        table: &'t SymbolTable,
        module: i64,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
        hops: usize,
        visiting: &mut Visiting,
    ) -> Vec<&'t Sym> {
        let own: Vec<&Sym> = table
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter(|s| s.file_id == module && s.parent.is_none() && wanted(s))
            .collect();
        if !own.is_empty() {
            return own;
        }
        let Some(hops) = hops.checked_sub(1) else {
            return Vec::new();
        };
        let Some(used) = self.uses.get(&module) else {
            return Vec::new();
        };
        for u in used.iter().filter(|u| u.binds() == Some(name)) {
            let Some(original) = u.name.as_deref() else {
                continue;
            };
            if let Some(target) = self.module_segs(module, &segs(&u.module), hops, visiting) {
                let found = self.item_hops(table, target, original, wanted, hops, visiting);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        for u in used.iter().filter(|u| u.is_glob()) {
            if let Some(target) = self.module_segs(module, &segs(&u.module), hops, visiting)
                && target != module
            {
                let found = self.item_hops(table, target, name, wanted, hops, visiting);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        Vec::new()
    }
}
