//! A popular name's definitions indexed by owner key, by directory and by module, so a
//! rule that keeps only the candidates under a qualifier (`Foo::new()`), in the
//! caller's folder, or top-level in the module a qualifier names looks at those few
//! instead of scanning every definition of the name (`new` has tens of thousands on a
//! large tree, and each reference to it scanned them all: resolution's time grew
//! faster than the tree).
//!
//! Only names with at least [`MIN_INDEXED`] definitions are indexed, each of the three
//! lists built the first time a rule asks for it, and dropped with the chunk's table.
//! Every lookup returns exactly what the scan it replaces kept, in the table's order:
//! a key only narrows, the exact test ([`Sym::owned_by`], the directory or module
//! compared as text) still decides.

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;

use super::sym::{Sym, SymbolsByName, segment_key};
use super::table::SymbolTable;

/// Fewer definitions than this are scanned: an index would cost more than it saves.
pub(super) const MIN_INDEXED: usize = 32;

/// [`MIN_INDEXED`], unless `LOCI_DEF_INDEX_MIN` sets another threshold: set very high,
/// every name is scanned, which is how the index's gain (and its leaving every edge
/// alone) is measured with one build.
fn min_indexed() -> usize {
    static MIN: OnceLock<usize> = OnceLock::new();
    *MIN.get_or_init(|| {
        std::env::var("LOCI_DEF_INDEX_MIN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MIN_INDEXED)
    })
}

/// The indexes of a table's popular names, by name; empty until a rule asks.
pub(super) type DefIndexes = HashMap<String, DefIndex>;

/// One name's definitions by key: each list holds (key, position in the name's
/// definitions) pairs, sorted, so a key's positions are one ascending run.
#[derive(Default)]
pub(super) struct DefIndex {
    /// By [`Sym::owner`] (definitions without an owner are left out).
    by_owner: OnceLock<Box<[(u32, u32)]>>,
    /// By [`text_key`] of the directory of the file that defines it.
    by_dir: OnceLock<Box<[(u32, u32)]>>,
    /// Top-level definitions by [`text_key`] of their file's module name.
    by_module: OnceLock<Box<[(u32, u32)]>>,
}

/// The (unverified) entries for the names of `by_name` worth indexing.
pub(super) fn indexes_for(by_name: &SymbolsByName) -> DefIndexes {
    by_name
        .iter()
        .filter(|(_, defs)| defs.len() >= min_indexed())
        .map(|(name, _)| (name.clone(), DefIndex::default()))
        .collect()
}

/// A 32-bit hash of a directory or module name: equal texts, equal keys.
fn text_key(text: &str) -> u32 {
    let hash = std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, text);
    (hash >> 32) as u32
}

/// `(key, position)` of each of `defs` that `key` gives one, sorted.
fn build(defs: &[Sym], key: impl Fn(&Sym) -> Option<u32>) -> Box<[(u32, u32)]> {
    let mut list: Vec<(u32, u32)> = defs
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((key(s)?, u32::try_from(i).ok()?)))
        .collect();
    list.sort_unstable();
    list.into_boxed_slice()
}

/// The definitions of `defs` whose key is `key` in `list`, in the table's order.
fn keyed<'t>(
    defs: &'t [Sym],
    list: &'t [(u32, u32)],
    key: u32,
) -> impl Iterator<Item = &'t Sym> + 't {
    let start = list.partition_point(|&(k, _)| k < key);
    list[start..]
        .iter()
        .take_while(move |&&(k, _)| k == key)
        .map(move |&(_, at)| &defs[at as usize])
}

/// Either a keyed run or all definitions, one iterator type for both.
enum Picked<I, A> {
    Keyed(I),
    All(A),
}

impl<'t, I: Iterator<Item = &'t Sym>, A: Iterator<Item = &'t Sym>> Iterator for Picked<I, A> {
    type Item = &'t Sym;

    fn next(&mut self) -> Option<&'t Sym> {
        match self {
            Picked::Keyed(it) => it.next(),
            Picked::All(it) => it.next(),
        }
    }
}

/// Whether `s` is one of `subset`, a subsequence of the slice both point into: such a
/// subsequence is ordered by address.
pub(super) fn among(subset: &[&Sym], s: &Sym) -> bool {
    subset
        .binary_search_by(|c| (*c as *const Sym).cmp(&(s as *const Sym)))
        .is_ok()
}

impl SymbolTable {
    /// `name`'s index, when it has one.
    fn index(&self, name: &str) -> Option<&DefIndex> {
        self.indexes.get(name)
    }

    /// `name`'s definitions.
    fn defs(&self, name: &str) -> &[Sym] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// `name`'s definitions under `qualifier` ([`Sym::owned_by`]), in the table's order.
    pub(super) fn owned_by<'t>(
        &'t self,
        name: &str,
        qualifier: &str,
    ) -> impl Iterator<Item = &'t Sym> {
        let defs = self.defs(name);
        let picked = match (self.index(name), segment_key(qualifier)) {
            (Some(index), Some(key)) => {
                let list = index
                    .by_owner
                    .get_or_init(|| build(defs, |s| (s.owner != 0).then_some(s.owner)));
                Picked::Keyed(keyed(defs, list, key))
            }
            _ => Picked::All(defs.iter()),
        };
        picked.filter(move |s| s.owned_by(qualifier, name))
    }

    /// `name`'s definitions in the directory `dir` (as [`super::file_info::FileInfo::dir_str`]
    /// writes it), in the table's order.
    pub(super) fn in_dir<'t>(&'t self, name: &str, dir: &str) -> impl Iterator<Item = &'t Sym> {
        let defs = self.defs(name);
        let picked = match self.index(name) {
            Some(index) => {
                let list = index.by_dir.get_or_init(|| {
                    build(defs, |s| {
                        self.files.get(&s.file_id).map(|f| text_key(f.dir_str()))
                    })
                });
                Picked::Keyed(keyed(defs, list, text_key(dir)))
            }
            None => Picked::All(defs.iter()),
        };
        picked.filter(move |s| self.in_dir_of(s, dir))
    }

    /// `name`'s top-level definitions of files whose module name is `module`
    /// ([`super::ctx::Ctx::in_module`]), in the table's order.
    pub(super) fn in_module<'t>(
        &'t self,
        name: &str,
        module: &str,
    ) -> impl Iterator<Item = &'t Sym> {
        let defs = self.defs(name);
        let picked = match self.index(name) {
            Some(index) => {
                let list = index.by_module.get_or_init(|| {
                    build(defs, |s| {
                        let file = self.files.get(&s.file_id)?;
                        s.parent
                            .is_none()
                            .then(|| file.module_path().next_back())
                            .flatten()
                            .map(text_key)
                    })
                });
                Picked::Keyed(keyed(defs, list, text_key(module)))
            }
            None => Picked::All(defs.iter()),
        };
        picked.filter(move |s| self.is_in_module(s, module))
    }

    /// Whether `sym` is defined in a file of directory `dir`.
    pub(super) fn in_dir_of(&self, sym: &Sym, dir: &str) -> bool {
        self.files
            .get(&sym.file_id)
            .is_some_and(|i| i.dir_str() == dir)
    }

    /// Whether `sym` is a top-level definition of a file whose module name is `module`
    /// (`src/parser.rs` → `parser`).
    pub(super) fn is_in_module(&self, sym: &Sym, module: &str) -> bool {
        sym.parent.is_none()
            && self
                .files
                .get(&sym.file_id)
                .is_some_and(|f| f.module_path().next_back() == Some(module))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::SymbolKind;
    use crate::resolve::TableBuilder;

    /// A table where `new` has many definitions: methods of a few types, free
    /// functions, over a few directories and modules.
    fn table() -> SymbolTable {
        let mut b = TableBuilder::default();
        let dirs = ["a", "a/b", "c", ""];
        let modules = ["parser", "mod", "util", "lib"];
        let owners = ["Foo", "Bar", "x::Foo", "Baz"];
        let mut id = 0;
        for (f, file_id) in (1..=24_i64).enumerate() {
            let dir = dirs[f % dirs.len()];
            let module = modules[f / dirs.len() % modules.len()];
            let path = match dir {
                "" => format!("{module}.rs"),
                dir => format!("{dir}/{module}.rs"),
            };
            b.add_file(file_id, &path);
            for owner in owners.iter().take(f % 3 + 1) {
                for qualified in [format!("{owner}::new"), "new".to_string()] {
                    id += 1;
                    let top = qualified == "new";
                    b.add_symbol(
                        "new".to_string(),
                        Sym {
                            id,
                            file_id,
                            owner: Sym::owner_of(&qualified, "new"),
                            qualified_name: qualified,
                            kind: SymbolKind::Function,
                            parent: (!top).then_some(id - 1),
                            returns: None,
                            params: None,
                            in_trait: false,
                        },
                    );
                }
            }
        }
        b.build()
    }

    fn ids<'t>(found: impl Iterator<Item = &'t Sym>) -> Vec<i64> {
        found.map(|s| s.id).collect()
    }

    #[test]
    fn an_indexed_lookup_keeps_what_a_scan_keeps_in_order() {
        let t = table();
        let all = &t.by_name["new"];
        assert!(all.len() >= MIN_INDEXED && t.indexes.contains_key("new"));
        let scan = |keep: &dyn Fn(&Sym) -> bool| ids(all.iter().filter(|s| keep(s)));
        for q in ["Foo", "Bar", "x::Foo", "Baz", "Qux", "x", "", "new"] {
            let want = scan(&|s| s.owned_by(q, "new"));
            assert_eq!(ids(t.owned_by("new", q)), want, "owner {q}");
        }
        for dir in ["a", "a/b", "c", "", "d"] {
            let want = scan(&|s| t.in_dir_of(s, dir));
            assert!(dir == "d" || !want.is_empty(), "{dir}");
            assert_eq!(ids(t.in_dir("new", dir)), want, "dir {dir}");
        }
        for module in ["parser", "util", "mod", "lib", "a", "b", "x"] {
            let want = scan(&|s| t.is_in_module(s, module));
            assert_eq!(ids(t.in_module("new", module)), want, "module {module}");
        }
        // A name the table lacks, or holds too few of to index, is scanned.
        assert_eq!(ids(t.owned_by("old", "Foo")), Vec::<i64>::new());
    }

    #[test]
    fn a_subsequence_is_searched_by_address() {
        let t = table();
        let all = &t.by_name["new"];
        let odd: Vec<&Sym> = all.iter().skip(1).step_by(2).collect();
        for (i, s) in all.iter().enumerate() {
            assert_eq!(among(&odd, s), i % 2 == 1);
        }
    }
}
