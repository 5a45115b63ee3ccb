//! No import circles inside any crate of the workspace: the files of a crate's `src/`
//! form a graph where a file points at every file whose items it takes (`use` trees and
//! `crate::` / `super::` / `self::` paths in code, re-exports followed to the file that
//! defines the item), and that graph has no loop. A loop means two files each need the
//! other: neither can be read, tested or moved alone, and it is how a crate's layers
//! come apart. Test-only modules (`#[cfg(test)]`) are left out; a declaring `mod x;` is
//! not an import, nor is a re-export (`pub use`): a name taken through one counts as
//! taken from the file that defines it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module of a crate: the file it is written in (an inline module shares its file).
struct Module {
    file: PathBuf,
    /// The module's items (its file's, or the inline module's).
    items: Vec<syn::Item>,
}

/// A crate's modules by path (`[]` is the crate root).
type Modules = BTreeMap<Vec<String>, Module>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().split_whitespace().next() == Some("test"))
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap();
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Reads the module at `path` written in `file` (items `items`), and every module it
/// declares, into `out`. `dir` is where its child modules' files are.
fn load(out: &mut Modules, path: Vec<String>, file: &Path, dir: &Path, items: Vec<syn::Item>) {
    for item in &items {
        let syn::Item::Mod(m) = item else { continue };
        if is_test_only(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let mut child = path.clone();
        child.push(name.clone());
        match &m.content {
            Some((_, inner)) => load(out, child, file, &dir.join(&name), inner.clone()),
            None => {
                let child_file = match path_attr(&m.attrs) {
                    Some(p) => file.parent().unwrap().join(p),
                    None if dir.join(format!("{name}.rs")).is_file() => {
                        dir.join(format!("{name}.rs"))
                    }
                    None => dir.join(&name).join("mod.rs"),
                };
                let child_dir = if child_file.file_name().is_some_and(|n| n == "mod.rs") {
                    child_file.parent().unwrap().to_path_buf()
                } else {
                    child_file.with_extension("")
                };
                let parsed = parse(&child_file);
                load(out, child, &child_file, &child_dir, parsed.items);
            }
        }
    }
    out.insert(
        path,
        Module {
            file: file.to_path_buf(),
            items,
        },
    );
}

fn load_crate(src: &Path) -> Option<Modules> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|f| f.is_file())?;
    let mut modules = Modules::new();
    let parsed = parse(&root);
    load(&mut modules, Vec::new(), &root, src, parsed.items);
    Some(modules)
}

/// Every path a use tree names, as segments (`self` in a group is the prefix; a glob
/// names the module), with the name it binds (`None` for a glob).
fn use_leaves(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.clone(), prefix.last().cloned()));
        }
        syn::UseTree::Name(n) => {
            let mut p = prefix.clone();
            p.push(n.ident.to_string());
            out.push((p, Some(n.ident.to_string())));
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            if r.ident != "self" {
                p.push(r.ident.to_string());
            }
            out.push((p, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_leaves(t, prefix, out);
            }
        }
    }
}

/// What a module takes from elsewhere: the paths of its non-test `use` trees and the
/// `crate::`/`super::`/`self::` paths of its code.
#[derive(Default)]
struct Taken {
    paths: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Taken {
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // A child module is a module of its own.
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A re-export (`pub use`, `pub(crate) use`) forwards a name: whoever imports it
        // through this module is led on to the defining file (`defining_file`).
        if !matches!(u.vis, syn::Visibility::Inherited) {
            return;
        }
        let mut leaves = Vec::new();
        use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
        self.paths.extend(leaves.into_iter().map(|(p, _)| p));
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(crate)`, `pub(in crate::a)` say who may see an item; they take nothing.
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if matches!(
            segments.first().map(String::as_str),
            Some("crate" | "super" | "self")
        ) {
            self.paths.push(segments);
        }
        syn::visit::visit_path(self, p);
    }
}

fn taken(items: &[syn::Item]) -> Vec<Vec<String>> {
    let mut t = Taken::default();
    for item in items {
        if !item_is_test_only(item) {
            t.visit_item(item);
        }
    }
    t.paths
}

fn item_is_test_only(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        _ => return false,
    };
    is_test_only(attrs)
}

/// The names a module re-exports (`pub use`, `pub(crate) use`), with the path each
/// stands for.
fn reexports(module: &Module) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    for item in &module.items {
        let syn::Item::Use(u) = item else { continue };
        if matches!(u.vis, syn::Visibility::Inherited) || is_test_only(&u.attrs) {
            continue;
        }
        let mut leaves = Vec::new();
        use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
        for (path, name) in leaves {
            if let Some(name) = name {
                out.insert(name, path);
            }
        }
    }
    out
}

/// The module `path` (as written in module `from`) leads to, and the item it names
/// there if any; `None` when it leaves the crate.
fn resolve(
    modules: &Modules,
    from: &[String],
    path: &[String],
) -> Option<(Vec<String>, Option<String>)> {
    let (mut at, rest): (Vec<String>, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (from.to_vec(), &path[1..]),
        "super" => {
            let mut at = from.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
            (at, rest)
        }
        // A child module named without `self::` (2018 paths).
        first => {
            let mut child = from.to_vec();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
            (child, &path[1..])
        }
    };
    for seg in rest {
        let mut next = at.clone();
        next.push(seg.clone());
        if modules.contains_key(&next) {
            at = next;
        } else {
            // An item of `at` (what follows names its members).
            return Some((at, Some(seg.clone())));
        }
    }
    Some((at, None))
}

/// The file that defines what `path` (written in `from`) names, following re-exports.
fn defining_file(modules: &Modules, from: &[String], path: &[String]) -> Option<PathBuf> {
    let (mut at, mut item) = resolve(modules, from, path)?;
    for _ in 0..16 {
        let Some(name) = item.clone() else { break };
        let Some(target) = reexports(&modules[&at]).get(&name).cloned() else {
            break;
        };
        match resolve(modules, &at, &target) {
            Some((next, next_item))
                if (next.clone(), next_item.clone()) != (at.clone(), item.clone()) =>
            {
                at = next;
                item = next_item;
            }
            _ => break,
        }
    }
    Some(modules[&at].file.clone())
}

/// The file → files graph of a crate.
fn import_graph(modules: &Modules) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (path, module) in modules {
        graph.entry(module.file.clone()).or_default();
        for taken in taken(&module.items) {
            if let Some(file) = defining_file(modules, path, &taken)
                && file != module.file
            {
                graph.entry(module.file.clone()).or_default().insert(file);
            }
        }
    }
    graph
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: HashMap<&'g PathBuf, usize>,
        low: HashMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g PathBuf) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some(w) = s.graph.get_key_value(w).map(|(k, _)| k) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

fn crates() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn no_crate_has_an_import_circle() {
    let root = workspace().canonicalize().unwrap();
    let mut found = BTreeSet::new();
    let mut files = 0;
    for src in crates() {
        let Some(modules) = load_crate(&src) else {
            continue;
        };
        let graph = import_graph(&modules);
        files += graph.len();
        for circle in circles(&graph) {
            let names: Vec<String> = circle
                .iter()
                .map(|f| {
                    let f = f.canonicalize().unwrap();
                    f.strip_prefix(&root).unwrap_or(&f).display().to_string()
                })
                .collect();
            found.insert(names.join(" <-> "));
        }
    }
    assert!(files > 200, "only {files} files read: the walk is broken");
    assert!(found.is_empty(), "import circles:\n{found:#?}");
}

/// The checker sees a circle when there is one: two files of a scratch crate that take
/// from each other, through a re-export of the crate root.
#[test]
fn the_checker_finds_a_circle_through_a_reexport() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub use b::B;\n",
    )
    .unwrap();
    std::fs::write(src.join("a.rs"), "use crate::B;\npub struct A(B);\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "pub struct B;\nfn f() { let _ = super::a::A; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("c.rs"),
        "#[cfg(test)]\nmod tests { use crate::a::A; }\npub fn c() {}\n",
    )
    .unwrap();
    let modules = load_crate(&src).unwrap();
    let found = circles(&import_graph(&modules));
    assert_eq!(found, [vec![src.join("a.rs"), src.join("b.rs")]]);
}

/// A visibility (`pub(crate)`, `pub(super)`, `pub(in crate::a)`) says who may see an
/// item and takes nothing: a module whose items are `pub(crate)` does not import the
/// crate root that uses them.
#[test]
fn the_checker_sees_no_import_in_a_visibility() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;
use crate::a::A;
fn f(_: A) {}
",
    )
    .unwrap();
    std::fs::write(
        src.join("a.rs"),
        "mod b;
pub(crate) struct A(pub(crate) u8);
pub(in crate::a) fn g() { b::h() }
",
    )
    .unwrap();
    std::fs::write(
        src.join("a/b.rs"),
        "pub(super) fn h() {}
",
    )
    .unwrap();
    let modules = load_crate(&src).unwrap();
    assert!(circles(&import_graph(&modules)).is_empty());
}

/// Every `std::process::exit` path named in `file` (called, or passed on as a value).
fn process_exits(file: &syn::File) -> usize {
    struct Exits(usize);
    impl<'a> Visit<'a> for Exits {
        fn visit_path(&mut self, p: &'a syn::Path) {
            let names: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            if names.ends_with(&["process".to_string(), "exit".to_string()]) {
                self.0 += 1;
            }
            syn::visit::visit_path(self, p);
        }
    }
    let mut v = Exits(0);
    v.visit_file(file);
    v.0
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Only the binary ends the process: a library that called `process::exit` would skip
/// its caller's teardown and could not be used inside a server or a test. Libraries
/// take the binary's `std::process::exit` as a parameter where a watchdog must end it.
#[test]
fn no_library_crate_ends_the_process_itself() {
    let mut offenders = Vec::new();
    let mut read = 0;
    for src in crates() {
        if src.parent().is_some_and(|c| c.ends_with("cli")) {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            read += 1;
            if process_exits(&parsed) > 0 {
                offenders.push(f.display().to_string());
            }
        }
    }
    assert!(read > 200, "only {read} files read: the walk is broken");
    assert!(
        offenders.is_empty(),
        "process::exit below the binary: {offenders:#?}"
    );
}
