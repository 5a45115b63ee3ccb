//! A name's candidates before any rule looks at the file asking: its definitions of
//! the kind a reference can name, one per overload group, without the constructors
//! of a class among them. This list depends on the name and the kind alone, yet
//! [`super::ctx::Ctx::resolve`] built it for every distinct reference of every file:
//! for a popular name (`new`, `fmt`: tens of thousands of definitions on a large tree)
//! that is work proportional to the tree per reference, and resolution's time grew
//! with the square of the tree. A popular name's list is now built once per chunk
//! table and kind, the first time a rule asks ([`super::def_index::DefIndex`]).

use super::def_index::DefIndex;
use super::overloads;
use super::sym::Sym;
use super::table::SymbolTable;
use crate::extract::SymbolKind;

/// The kind of definition a reference can name, for the references whose list is
/// kept: a macro invocation, a call, or a use of a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wanted {
    Macro,
    Callable,
    Type,
}

impl Wanted {
    /// What a reference that is (or is not) a macro invocation or a call can name.
    pub(super) fn of(is_macro: bool, is_call: bool) -> Wanted {
        match (is_macro, is_call) {
            (true, _) => Wanted::Macro,
            (false, true) => Wanted::Callable,
            (false, false) => Wanted::Type,
        }
    }

    /// Whether `s` is of a kind such a reference can name.
    pub(super) fn accepts(self, s: &Sym) -> bool {
        match self {
            Wanted::Macro => s.kind == SymbolKind::Macro,
            Wanted::Callable => s.kind.is_callable(),
            Wanted::Type => s.kind.is_type(),
        }
    }

    /// Its slot in [`DefIndex::candidates`].
    fn slot(self) -> usize {
        self as usize
    }
}

/// The definitions of `defs` (one name's, in the table's order) that `wanted` accepts,
/// one per overload group, without those whose parent is a type among them (`new
/// Circle()` names the class, not also its constructor `Circle.Circle`).
pub(super) fn base<'a>(defs: &'a [Sym], wanted: &dyn Fn(&Sym) -> bool) -> Vec<&'a Sym> {
    let mut candidates: Vec<&Sym> = defs.iter().filter(|s| wanted(s)).collect();
    overloads::one_per_group(&mut candidates);
    // Only types can be such parents, and most names have none among their candidates.
    let mut types: Vec<i64> = candidates
        .iter()
        .filter(|s| s.kind.is_type())
        .map(|s| s.id)
        .collect();
    if !types.is_empty() {
        // Sorted and searched: a name with 20,000 definitions (boost's `type`,
        // `apply`) made a linear `contains` per candidate quadratic.
        types.sort_unstable();
        candidates.retain(|s| s.parent.is_none_or(|p| types.binary_search(&p).is_err()));
    }
    candidates
}

impl SymbolTable {
    /// `name`'s [`base`] list for `wanted`: kept with the name's index when it is a
    /// popular name, built afresh otherwise.
    pub(super) fn candidates(&self, name: &str, wanted: Wanted) -> Vec<&Sym> {
        let Some(defs) = self.by_name.get(name) else {
            return Vec::new();
        };
        match self.indexes.get(name) {
            Some(index) => kept(index, defs, wanted),
            None => base(defs, &|s| wanted.accepts(s)),
        }
    }
}

/// The list of `defs` kept in `index` for `wanted`, built on first use.
fn kept<'a>(index: &DefIndex, defs: &'a [Sym], wanted: Wanted) -> Vec<&'a Sym> {
    let positions = index.candidates[wanted.slot()].get_or_init(|| {
        // The list is a subsequence of `defs`: one walk finds each one's position.
        let list = base(defs, &|s| wanted.accepts(s));
        let mut next = list.iter().peekable();
        let mut positions = Vec::with_capacity(list.len());
        for (at, s) in defs.iter().enumerate() {
            if next.next_if(|k| std::ptr::eq(**k, s)).is_some() {
                positions.push(u32::try_from(at).unwrap_or(u32::MAX));
            }
        }
        positions.into_boxed_slice()
    });
    positions
        .iter()
        .filter_map(|&at| defs.get(at as usize))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Arity;
    use crate::resolve::TableBuilder;
    use crate::resolve::def_index::MIN_INDEXED;

    /// A table where `Circle` has `n` definitions over 8 files, in blocks of six in
    /// one file: a class, its two constructors (overloads of each other), a function,
    /// a macro and a struct.
    fn table(n: usize) -> SymbolTable {
        let mut b = TableBuilder::default();
        for file_id in 1..=8 {
            b.add_file(file_id, &format!("src/f{file_id}.java"));
        }
        let kinds = [
            SymbolKind::Class,
            SymbolKind::Method,
            SymbolKind::Method,
            SymbolKind::Function,
            SymbolKind::Macro,
            SymbolKind::Struct,
        ];
        for i in 0..n {
            let id = i as i64 + 1;
            let file_id = (i / kinds.len() % 8) as i64 + 1;
            let kind = kinds[i % kinds.len()];
            // The two methods after a class are its constructors.
            let (parent, qualified) = match i % kinds.len() {
                at @ (1 | 2) => (Some(id - at as i64), "Circle.Circle".to_string()),
                _ => (None, format!("Circle{i}")),
            };
            let params = (kind == SymbolKind::Method).then_some(Arity {
                fixed: (i % 2) as u16,
                variadic: false,
            });
            b.add_symbol(
                "Circle".to_string(),
                Sym {
                    id,
                    file_id,
                    owner: 0,
                    qualified_name: qualified,
                    kind,
                    parent,
                    returns: None,
                    params,
                    param_types: None,
                    in_trait: false,
                    receiver: 0,
                },
            );
        }
        b.build()
    }

    fn ids(found: &[&Sym]) -> Vec<i64> {
        found.iter().map(|s| s.id).collect()
    }

    #[test]
    fn a_kept_list_is_the_list_a_scan_builds_for_every_kind() {
        for n in [MIN_INDEXED - 1, MIN_INDEXED, 5 * MIN_INDEXED] {
            let t = table(n);
            assert_eq!(t.indexes.contains_key("Circle"), n >= MIN_INDEXED, "{n}");
            let defs = &t.by_name["Circle"];
            for wanted in [Wanted::Macro, Wanted::Callable, Wanted::Type] {
                let scan = ids(&base(defs, &|s| wanted.accepts(s)));
                assert!(!scan.is_empty(), "{n} {wanted:?}");
                // Twice: built on the first ask, read back on the second.
                assert_eq!(ids(&t.candidates("Circle", wanted)), scan, "{n} {wanted:?}");
                assert_eq!(ids(&t.candidates("Circle", wanted)), scan, "{n} {wanted:?}");
            }
            assert!(t.candidates("Square", Wanted::Callable).is_empty());
        }
    }

    #[test]
    fn the_list_drops_constructors_of_listed_classes_and_repeated_overloads() {
        let t = table(6 * MIN_INDEXED);
        let callables = t.candidates("Circle", Wanted::Callable);
        // Constructors hang under a class that is itself callable: never listed.
        assert!(callables.iter().all(|s| s.kind != SymbolKind::Method));
        assert!(callables.iter().any(|s| s.kind == SymbolKind::Class));
        // Without a class to hide them, one method of each overload group (a file's
        // `Circle.Circle`) is listed.
        let methods = base(&t.by_name["Circle"], &|s| s.kind == SymbolKind::Method);
        let mut files: Vec<i64> = methods.iter().map(|s| s.file_id).collect();
        files.dedup();
        assert_eq!((methods.len(), files.len()), (8, 8));
    }
}
