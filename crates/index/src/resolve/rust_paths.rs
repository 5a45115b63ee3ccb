//! Rust's module graph: a path as written (`crate::graph`, `super::x`, `loci_index`,
//! an imported module's name) to the file of the module it names, and an item's name
//! in a module to its definition, following `use`/`pub use` (and glob) re-exports.
//!
//! A module is a file — a crate's root (`src/lib.rs`, `[lib] path`, `src/main.rs`, from
//! `Cargo.toml` through [`crate::crates`]), `m.rs` / `m/mod.rs` beside or below its
//! parent, or the file a `#[path = ".."]` attribute names — or an inline `mod m { .. }`
//! in one (its items are the file's definitions qualified `m::..`; its `use`s, the
//! file's imports on its lines). `#[path]` is relative to the declaring file's folder;
//! inside inline modules, to that folder (a `mod.rs`, a crate root or a `#[path]` file)
//! or to the folder named after the file (any other file), then one folder per inline
//! module, as the Rust reference says. Children of a `#[path]` file sit beside it, as a
//! `mod.rs`'s do.
//!
//! `#[cfg_attr(cond, path = "x.rs")]` names a file as `#[path]` does. A module with
//! several declared files — one per configuration (`cfg_attr(unix, path = "unix.rs")`
//! and `cfg_attr(windows, path = "windows.rs")` on one `mod sys;`, or `#[cfg(..)]`
//! declarations of the same name each with its `#[path]`) — has each as a candidate:
//! every one is imported and has the declaring module as its parent, a path through the
//! module (`sys::open`) is followed in the first indexed one (in written order), and the
//! item it names is looked up in each, so `sys::open()` reaches every candidate's
//! `open`. When none of the declared files is indexed, the module is the file its name
//! gives (`sys.rs`, `sys/mod.rs`), which a false `cfg_attr` leaves in force.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::sym::{Sym, SymbolsByName};
use crate::crates::CrateMap;
use crate::extract::SymbolKind;

/// How many `use` hops a lookup follows (`pub use a::X` in `lib.rs`, then `pub use
/// self::b::X` in `a/mod.rs`, ...).
const MAX_HOPS: usize = 6;

/// The `use` lookups (module, bound name) in progress on the current path. A `use`
/// whose path leads back to its own name (`use a::a;` where no module `a` exists, in
/// each of fifty scopes) then ends at once instead of branching again at every hop:
/// without it a lookup was exponential in such uses (an index run of one test file of
/// `async-trait` never finished).
type Visiting = Vec<(Module, String)>;

/// One `use` of a Rust file, as far as re-exports need it (or a `#[path]` module
/// declaration: see [`Use::declared_path`]).
#[derive(Debug, Clone)]
pub(crate) struct Use {
    pub module: String,
    pub name: Option<String>,
    pub alias: Option<String>,
    /// Its line, which tells the inline module it is in.
    pub line: i64,
    /// The module of its file it is in: 0 the file's, else 1 + an index of
    /// [`RustModules::inline`] (set by [`RustModules::finish`]).
    scope: u32,
}

impl Use {
    pub(crate) fn new(
        module: String,
        name: Option<String>,
        alias: Option<String>,
        line: i64,
    ) -> Self {
        Use {
            module,
            name,
            alias,
            line,
            scope: 0,
        }
    }

    /// The file a `#[path = ".."] mod m;` names (recorded as an import whose module is
    /// a path, which no `use` path is).
    fn declared_path(&self) -> Option<&str> {
        self.module.contains('/').then_some(self.module.as_str())
    }

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

/// A module: a file's own, or an inline `mod m { .. }` of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Module {
    /// The file it is in.
    pub file: i64,
    /// 0: the file's own module; else 1 + an index of the file's inline modules.
    inline: u32,
}

impl Module {
    /// A file's own module.
    pub(crate) fn file(file: i64) -> Self {
        Module { file, inline: 0 }
    }
}

/// An inline `mod m { .. }`: its path in the file (`a::m` when inside `mod a`) and the
/// lines it spans.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Inline {
    path: Vec<String>,
    start: i64,
    end: i64,
}

/// The Rust part of the symbol table: crates, `.rs` files by path, and each file's uses.
#[derive(Default)]
pub(crate) struct RustModules {
    pub crates: CrateMap,
    pub files: HashMap<String, i64>,
    pub uses: HashMap<i64, Vec<Use>>,
    /// Path of each `.rs` file by id.
    pub paths: HashMap<i64, String>,
    /// Each file's inline modules, in path order.
    inline: HashMap<i64, Vec<Inline>>,
    /// The module that declares a file with `#[path]` (its parent).
    declared_by: HashMap<i64, Module>,
    /// Each declared file of a module with several (see the module doc) → all of them,
    /// in written order.
    candidates: HashMap<i64, Vec<i64>>,
    /// Every crate's candidate root files, so a lookup need not scan the crate map.
    roots: HashSet<String>,
    /// The root module of the crate each `.rs` file belongs to (what `crate::` names in
    /// it), found once by [`RustModules::finish`] instead of once per path.
    crate_root: HashMap<i64, Module>,
}

/// The innermost of a file's inline modules that spans `line` (0: none), as a
/// [`Module::inline`] value.
fn scope_at(list: Option<&Vec<Inline>>, line: i64) -> u32 {
    let Some(list) = list else { return 0 };
    list.iter()
        .enumerate()
        .filter(|(_, x)| x.start <= line && line <= x.end)
        .max_by_key(|(_, x)| (x.path.len(), x.start))
        .map_or(0, |(i, _)| i as u32 + 1)
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

    /// Records an inline `mod` of a file: its qualified name and its lines.
    pub(crate) fn add_inline(&mut self, file: i64, qualified: &str, start: i64, end: i64) {
        self.inline.entry(file).or_default().push(Inline {
            path: segs(qualified).into_iter().map(str::to_string).collect(),
            start,
            end,
        });
    }

    /// Orders the inline modules, places each `use` in its module, and links each
    /// `#[path]` file to the module declaring it. Called once everything is added.
    pub(crate) fn finish(&mut self) {
        self.roots = self
            .crates
            .crates
            .iter()
            .flat_map(|c| c.roots.iter().cloned())
            .collect();
        self.crate_root = self
            .paths
            .iter()
            .filter_map(|(&id, path)| Some((id, self.find_crate_root(path)?)))
            .collect();
        for list in self.inline.values_mut() {
            list.sort();
            list.dedup();
        }
        for (file, uses) in self.uses.iter_mut() {
            for u in uses.iter_mut() {
                u.scope = scope_at(self.inline.get(file), u.line);
            }
        }
        let mut declared = Vec::new();
        for (&file, uses) in &self.uses {
            for u in uses {
                if let Some(written) = u.declared_path() {
                    let scope = Module {
                        file,
                        inline: u.scope,
                    };
                    let name = u.name.clone().unwrap_or_default();
                    declared.push((scope, written.to_string(), name, u.line));
                }
            }
        }
        // Deterministic whatever the map's order: the first declaration by module.
        declared
            .sort_by_key(|(m, w, _, _)| (self.paths.get(&m.file).cloned(), m.inline, w.clone()));
        let mut by_module: HashMap<(Module, String), Vec<(i64, i64)>> = HashMap::default();
        for (scope, written, name, line) in declared {
            if let Some(target) = self.declared_file(scope, &written) {
                self.declared_by.entry(target).or_insert(scope);
                by_module
                    .entry((scope, name))
                    .or_default()
                    .push((line, target));
            }
        }
        for (_, mut files) in by_module {
            if files.len() < 2 {
                continue;
            }
            // Written order (a stable sort keeps one attribute's paths in theirs).
            files.sort_by_key(|(line, _)| *line);
            let mut group: Vec<i64> = files.into_iter().map(|(_, f)| f).collect();
            let mut seen = HashSet::default();
            group.retain(|f| seen.insert(*f));
            for &f in &group {
                self.candidates.entry(f).or_insert_with(|| group.clone());
            }
        }
    }

    fn file(&self, path: &str) -> Option<i64> {
        self.files.get(path).copied()
    }

    fn is_crate_root(&self, path: &str) -> bool {
        self.roots.contains(path)
    }

    fn inline_path(&self, m: Module) -> &[String] {
        match m.inline.checked_sub(1) {
            Some(i) => self
                .inline
                .get(&m.file)
                .and_then(|l| l.get(i as usize))
                .map_or(&[], |x| x.path.as_slice()),
            None => &[],
        }
    }

    /// [`Self::find_inline`] for `parent`'s path then `name`, without building it.
    fn find_inline_child(&self, file: i64, parent: &[String], name: &str) -> Option<Module> {
        let n = parent.len();
        let i =
            self.inline.get(&file)?.iter().position(|x| {
                x.path.len() == n + 1 && x.path[n] == name && x.path[..n] == *parent
            })?;
        Some(Module {
            file,
            inline: i as u32 + 1,
        })
    }

    fn find_inline(&self, file: i64, path: &[String]) -> Option<Module> {
        if path.is_empty() {
            return Some(Module::file(file));
        }
        let i = self
            .inline
            .get(&file)?
            .iter()
            .position(|x| x.path == path)?;
        Some(Module {
            file,
            inline: i as u32 + 1,
        })
    }

    /// The module a definition of `file` with this qualified name is in (the file's, or
    /// the innermost inline module its name lies in), for paths written inside it.
    pub(crate) fn scope_of(&self, file: i64, qualified: Option<&str>) -> Module {
        let Some(list) = self.inline.get(&file) else {
            return Module::file(file);
        };
        let Some(q) = qualified else {
            return Module::file(file);
        };
        let segments = segs(q);
        let best = list
            .iter()
            .enumerate()
            .filter(|(_, x)| {
                x.path.len() <= segments.len() && x.path.iter().zip(&segments).all(|(a, b)| a == b)
            })
            .max_by_key(|(_, x)| x.path.len());
        match best {
            Some((i, _)) => Module {
                file,
                inline: i as u32 + 1,
            },
            None => Module::file(file),
        }
    }

    /// The module a line of `file` is in.
    pub(crate) fn scope_at_line(&self, file: i64, line: i64) -> Module {
        Module {
            file,
            inline: scope_at(self.inline.get(&file), line),
        }
    }

    /// Whether `path`'s children sit in its own folder (a `mod.rs`, a crate root, a
    /// file a `#[path]` names) rather than in the folder named after it.
    fn owns_folder(&self, file: i64, path: &str) -> bool {
        path.rsplit('/').next() == Some("mod.rs")
            || self.is_crate_root(path)
            || self.declared_by.contains_key(&file)
    }

    /// The folder of the file holding `m`, or the folder named after it, as its
    /// children's paths start from (see the module doc), then one folder per inline
    /// module.
    fn base_dir(&self, m: Module, own_folder_only: bool) -> Option<String> {
        let path = self.paths.get(&m.file)?;
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let inline = self.inline_path(m);
        let mut base = if own_folder_only || self.owns_folder(m.file, path) {
            dir.to_string()
        } else {
            path.strip_suffix(".rs").unwrap_or(path).to_string()
        };
        for seg in inline {
            if !base.is_empty() {
                base.push('/');
            }
            base.push_str(seg);
        }
        Some(base)
    }

    /// The directory a module's children live in: `src` for `src/lib.rs`, `a/b` for
    /// `a/b.rs` and for `a/b/mod.rs`, `a/b/x` for `mod x { .. }` in either.
    fn children_dir(&self, m: Module) -> Option<String> {
        self.base_dir(m, false)
    }

    /// The file `#[path = written]` names when declared in `scope`.
    fn declared_file(&self, scope: Module, written: &str) -> Option<i64> {
        let written = written.strip_prefix("./").unwrap_or(written);
        // Outside inline modules the path is relative to the file's own folder.
        let base = self.base_dir(scope, scope.inline == 0)?;
        let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
        for part in written.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                p => parts.push(p),
            }
        }
        self.file(&parts.join("/"))
    }

    fn child(&self, module: Module, name: &str) -> Option<Module> {
        if let Some(m) = self.find_inline_child(module.file, self.inline_path(module), name) {
            return Some(m);
        }
        // The first declared file that is indexed (see the module doc).
        if let Some(file) = self
            .uses_in(module)
            .filter(|u| u.name.as_deref() == Some(name))
            .filter_map(|u| u.declared_path())
            .find_map(|written| self.declared_file(module, written))
        {
            return Some(Module::file(file));
        }
        let mut path = self.children_dir(module)?;
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(name);
        let stem = path.len();
        path.push_str(".rs");
        if let Some(file) = self.file(&path) {
            return Some(Module::file(file));
        }
        path.truncate(stem);
        path.push_str("/mod.rs");
        self.file(&path).map(Module::file)
    }

    /// The `use`s (and `#[path]` declarations) written in `module`.
    fn uses_in(&self, module: Module) -> impl Iterator<Item = &Use> {
        self.uses
            .get(&module.file)
            .into_iter()
            .flatten()
            .filter(move |u| u.scope == module.inline)
    }

    fn parent(&self, module: Module) -> Option<Module> {
        if module.inline != 0 {
            let path = self.inline_path(module);
            return self.find_inline(module.file, &path[..path.len().saturating_sub(1)]);
        }
        if let Some(&by) = self.declared_by.get(&module.file) {
            return Some(by);
        }
        let path = self.paths.get(&module.file)?;
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
                    .filter(|r| r.rsplit_once('/').map_or("", |(d, _)| d) == at)
                    .find_map(|r| self.file(r))
            })
            .map(Module::file)
    }

    /// The root module of the crate `file` belongs to (found by [`Self::finish`]).
    fn crate_root_of(&self, file: i64) -> Option<Module> {
        self.crate_root.get(&file).copied()
    }

    /// The root module of the crate `path` belongs to: the crate whose directory is the
    /// longest prefix of it; its main file when `path` is one of its roots, else its first
    /// indexed root.
    fn find_crate_root(&self, path: &str) -> Option<Module> {
        let owner = self.crates.owner_of(path)?;
        if owner.roots.iter().any(|r| r == path) {
            return self.file(path).map(Module::file);
        }
        owner
            .roots
            .iter()
            .find_map(|r| self.file(r))
            .map(Module::file)
    }

    /// The root module of every crate named `name` (several crates of a workspace may
    /// share a name), in the crate map's order.
    pub(crate) fn crate_roots_named(&self, name: &str) -> Vec<Module> {
        self.crates
            .crates
            .iter()
            .filter(|c| c.name == name)
            .filter_map(|c| c.roots.iter().find_map(|r| self.file(r)))
            .map(Module::file)
            .collect()
    }

    /// The directory of the crate `path` belongs to (the longest crate directory that
    /// holds it), if any.
    pub(crate) fn crate_dir_of(&self, path: &str) -> Option<&str> {
        self.crates.owner_of(path).map(|c| c.dir.as_str())
    }

    fn crate_named(&self, name: &str) -> Option<Module> {
        self.crates
            .crates
            .iter()
            .filter(|c| c.name == name)
            .find_map(|c| c.roots.iter().find_map(|r| self.file(r)))
            .map(Module::file)
    }

    /// The module a path names from `from` (every segment a module), if it can be
    /// followed through files and inline modules.
    pub(crate) fn module(&self, from: Module, path: &str) -> Option<Module> {
        self.module_segs(from, &segs(path), MAX_HOPS, &mut Visiting::new())
    }

    fn module_segs(
        &self,
        from: Module,
        path: &[&str],
        hops: usize,
        visiting: &mut Visiting,
    ) -> Option<Module> {
        let (&first, rest) = path.split_first()?;
        let mut at = match first {
            "crate" | "$crate" => self.crate_root_of(from.file)?,
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
        from: Module,
        name: &str,
        hops: usize,
        visiting: &mut Visiting,
    ) -> Option<Module> {
        self.child(from, name)
            .or_else(|| self.used_module(from, name, hops, visiting))
            .or_else(|| self.crate_named(name))
    }

    /// A module `module` brings in with a `use` under the name `name`.
    fn used_module(
        &self,
        module: Module,
        name: &str,
        hops: usize,
        visiting: &mut Visiting,
    ) -> Option<Module> {
        let hops = hops.checked_sub(1)?;
        if visiting.iter().any(|(m, n)| *m == module && n == name) {
            return None;
        }
        visiting.push((module, name.to_string()));
        let mut found = None;
        for u in self
            .uses_in(module)
            .filter(|u| u.declared_path().is_none() && u.binds() == Some(name))
        {
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

    /// The file a `#[path]` declaration (an import row of `file`) names, if indexed.
    pub(crate) fn declared_import(&self, file: i64, module: &str, line: i64) -> Option<i64> {
        module.contains('/').then_some(())?;
        self.declared_file(self.scope_at_line(file, line), module)
    }

    /// The definitions `name` names in `module`, for a path written in file `from`: its
    /// own top-level ones, else those a `use` in it brings in under that name (followed,
    /// `pub` or not), else through its glob uses. In a module with several declared
    /// files, the item in each of them, unless `from` is one (its own paths stay in it).
    pub(crate) fn item<'t>(
        &self,
        by_name: &'t SymbolsByName,
        from: i64,
        module: Module,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Vec<&'t Sym> {
        let Some(files) = self
            .candidates
            .get(&module.file)
            .filter(|files| module.inline == 0 && !files.contains(&from))
        else {
            return self.item_hops(
                by_name,
                module,
                name,
                wanted,
                MAX_HOPS,
                &mut Visiting::new(),
            );
        };
        // A module with several declared files: the item in each that has it.
        let mut found: Vec<&Sym> = Vec::new();
        for &file in files {
            let m = Module::file(file);
            for s in self.item_hops(by_name, m, name, wanted, MAX_HOPS, &mut Visiting::new()) {
                if !found.iter().any(|f| f.id == s.id) {
                    found.push(s);
                }
            }
        }
        found
    }

    fn item_hops<'t>(
        &self,
        by_name: &'t SymbolsByName,
        module: Module,
        name: &str,
        wanted: &dyn Fn(&Sym) -> bool,
        hops: usize,
        visiting: &mut Visiting,
    ) -> Vec<&'t Sym> {
        let inline = self.inline_path(module);
        let qualified = (!inline.is_empty()).then(|| format!("{}::{name}", inline.join("::")));
        let own: Vec<&Sym> = by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter(|s| {
                s.file_id == module.file
                    && wanted(s)
                    && match &qualified {
                        None => s.parent.is_none(),
                        Some(q) => {
                            s.parent.is_some()
                                && s.kind != SymbolKind::Method
                                && s.qualified_name == *q
                        }
                    }
            })
            .collect();
        if !own.is_empty() {
            return own;
        }
        let Some(hops) = hops.checked_sub(1) else {
            return Vec::new();
        };
        let used: Vec<&Use> = self
            .uses_in(module)
            .filter(|u| u.declared_path().is_none())
            .collect();
        if used.is_empty() {
            return Vec::new();
        }
        for u in used.iter().filter(|u| u.binds() == Some(name)) {
            let Some(original) = u.name.as_deref() else {
                continue;
            };
            if let Some(target) = self.module_segs(module, &segs(&u.module), hops, visiting) {
                let found = self.item_hops(by_name, target, original, wanted, hops, visiting);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        for u in used.iter().filter(|u| u.is_glob()) {
            if let Some(target) = self.module_segs(module, &segs(&u.module), hops, visiting)
                && target != module
            {
                let found = self.item_hops(by_name, target, name, wanted, hops, visiting);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        Vec::new()
    }
}
