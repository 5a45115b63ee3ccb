//! Definitions parsed from file contents the index does not hold, kept between the
//! requests on one workspace: the old sides of a `changes` diff. Paging through one
//! diff, or asking about it again, then parses nothing twice (parsing the sides is most
//! of an answer's time). A content is known by its hash and the language it was read
//! as; what loci's extractor finds in it depends on nothing else.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use loci_index::Lang;
use loci_index::extract::Symbol;
use lru::LruCache;

/// Most contents kept per workspace.
const MAX_SIDES: usize = 4096;

/// Most bytes of definitions kept per workspace, roughly counted (a few rust-analyzer
/// diffs' old sides): the least recently used go first.
const MAX_BYTES: usize = 32 << 20;

/// A content: its blake3 hash and the language it was read as.
pub(crate) type SideKey = ([u8; 32], Lang);

/// The parsed sides of one workspace, least recently used dropped first.
pub(crate) struct ParsedSides {
    kept: Mutex<Kept>,
}

struct Kept {
    sides: LruCache<SideKey, (Arc<Vec<Symbol>>, usize)>,
    bytes: usize,
}

impl Default for ParsedSides {
    fn default() -> Self {
        ParsedSides {
            kept: Mutex::new(Kept {
                sides: LruCache::new(NonZeroUsize::new(MAX_SIDES).unwrap_or(NonZeroUsize::MIN)),
                bytes: 0,
            }),
        }
    }
}

impl ParsedSides {
    /// The definitions parsed from this content, if kept.
    pub(crate) fn get(&self, key: &SideKey) -> Option<Arc<Vec<Symbol>>> {
        let mut kept = self.kept.lock().ok()?;
        kept.sides.get(key).map(|(symbols, _)| Arc::clone(symbols))
    }

    /// Keeps the definitions parsed from a content, dropping the least recently used
    /// past the bounds; a content whose definitions alone pass an eighth of them is not
    /// kept.
    pub(crate) fn put(&self, key: SideKey, symbols: Arc<Vec<Symbol>>) {
        let size = approximate_bytes(&symbols);
        if size > MAX_BYTES / 8 {
            return;
        }
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if let Some((_, (_, old))) = kept.sides.push(key, (symbols, size)) {
            kept.bytes -= old;
        }
        kept.bytes += size;
        while kept.bytes > MAX_BYTES {
            let Some((_, (_, old))) = kept.sides.pop_lru() else {
                break;
            };
            kept.bytes -= old;
        }
    }
}

/// About how much memory `symbols` hold: their text and a fixed share each.
fn approximate_bytes(symbols: &[Symbol]) -> usize {
    symbols
        .iter()
        .map(|s| {
            std::mem::size_of::<Symbol>()
                + s.name.len()
                + s.qualified_name.len()
                + s.signature.len()
                + s.doc.as_ref().map_or(0, String::len)
                + s.returns.as_ref().map_or(0, String::len)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` definitions, each with a doc comment of `doc_bytes`.
    fn symbols(count: usize, doc_bytes: usize) -> Arc<Vec<Symbol>> {
        let facts = loci_index::extract::extract(Lang::Python, "def a():\n    pass\n").unwrap();
        let mut one = facts.symbols[0].clone();
        one.doc = Some("x".repeat(doc_bytes));
        Arc::new(vec![one; count])
    }

    #[test]
    fn a_kept_content_is_found_by_hash_and_language_only() {
        let cache = ParsedSides::default();
        cache.put(([1; 32], Lang::Python), symbols(1, 0));
        let found = cache.get(&([1; 32], Lang::Python)).unwrap();
        assert_eq!(found[0].name, "a");
        assert!(cache.get(&([1; 32], Lang::Ruby)).is_none());
        assert!(cache.get(&([2; 32], Lang::Python)).is_none());
    }

    #[test]
    fn the_bytes_kept_stay_within_the_bound_and_the_recently_used_stay() {
        let cache = ParsedSides::default();
        // About 1 MB of definitions a content.
        let parsed = symbols(128, 8 << 10);
        let one = approximate_bytes(&parsed);
        assert!(one > 1 << 20 && one < MAX_BYTES / 8, "{one}");
        let used_all_along = ([0; 32], Lang::Python);
        cache.put(used_all_along, Arc::clone(&parsed));
        for i in 1..=64u8 {
            cache.put(([i; 32], Lang::Python), Arc::clone(&parsed));
            assert!(cache.get(&used_all_along).is_some(), "dropped at {i}");
        }
        let kept = cache.kept.lock().unwrap();
        assert!(kept.bytes <= MAX_BYTES, "{}", kept.bytes);
        assert!(kept.sides.len() < 64, "{}", kept.sides.len());
        // The least recently used went first.
        assert!(!kept.sides.contains(&([1; 32], Lang::Python)));
        assert!(kept.sides.contains(&([64; 32], Lang::Python)));
    }

    #[test]
    fn a_content_too_large_alone_is_not_kept() {
        let cache = ParsedSides::default();
        cache.put(([9; 32], Lang::Python), symbols(1, MAX_BYTES / 8));
        assert!(cache.get(&([9; 32], Lang::Python)).is_none());
    }
}
