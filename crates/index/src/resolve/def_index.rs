//! A popular name's definitions indexed by owner key, by directory and by module, so a
//! rule that keeps only the candidates under a qualifier (`Foo::new()`), in the
//! caller's folder, or top-level in the module a qualifier names looks at those few
//! instead of scanning every definition of the name (`new` has tens of thousands on a
//! large tree, and each reference to it scanned them all: resolution's time grew
//! faster than the tree).
//!
//! The same entry keeps the name's candidate list per kind of reference
//! ([`super::candidates`]).
//!
//! Only names with at least [`MIN_INDEXED`] definitions are indexed, each list built
//! the first time a rule asks for it, and dropped with the chunk's table.
//! Every lookup returns exactly what the scan it replaces kept, in the table's order:
//! a key only narrows, the exact test ([`Sym::owned_by`], the directory or module
//! compared as text) still decides.

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;

use super::sym::{Sym, SymbolsByName};

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
    pub(super) by_owner: OnceLock<Box<[(u32, u32)]>>,
    /// By [`text_key`] of the directory of the file that defines it.
    pub(super) by_dir: OnceLock<Box<[(u32, u32)]>>,
    /// Top-level definitions by [`text_key`] of their file's module name.
    pub(super) by_module: OnceLock<Box<[(u32, u32)]>>,
    /// Positions of [`super::candidates::base`]'s list, one per
    /// [`super::candidates::Wanted`].
    pub(super) candidates: [OnceLock<Box<[u32]>>; 3],
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
pub(super) fn text_key(text: &str) -> u32 {
    let hash = std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, text);
    (hash >> 32) as u32
}

/// `(key, position)` of each of `defs` that `key` gives one, sorted.
pub(super) fn build(defs: &[Sym], key: impl Fn(&Sym) -> Option<u32>) -> Box<[(u32, u32)]> {
    let mut list: Vec<(u32, u32)> = defs
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((key(s)?, u32::try_from(i).ok()?)))
        .collect();
    list.sort_unstable();
    list.into_boxed_slice()
}

/// The definitions of `defs` whose key is `key` in `list`, in the table's order.
pub(super) fn keyed<'t>(
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
pub(super) enum Picked<I, A> {
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
