//! The table's lookups of a name's definitions under a qualifier, in a directory or
//! top-level in a module: through the name's [`super::def_index`] when it has one (a
//! popular name), else by scanning its definitions; either way the exact test decides,
//! and the definitions come in the table's order.

use super::def_index::{DefIndex, Picked, build, keyed, text_key};
use super::sym::{Sym, segment_key};
use super::table::SymbolTable;

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
    use crate::resolve::def_index::{MIN_INDEXED, among};

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
                            param_types: None,
                            in_trait: false,
                            receiver: 0,
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
