//! Where tree-sitter gets its memory.
//!
//! A parse allocates and frees small nodes by the thousand (subtrees, stack entries),
//! then frees the whole tree. With the system allocator those calls were about a tenth
//! of a first index's CPU (perf); mimalloc's per-thread free lists make a full index of
//! a 600k-line tree about 12 % faster (alternated A/B runs). Only tree-sitter uses it:
//! the rest of the process keeps the system allocator and its smaller footprint.

use std::sync::Once;

use super::ExtractError;
use crate::Lang;

/// A parser for `lang`. Every parser in loci comes from here, so that tree-sitter's
/// allocator is in place before tree-sitter allocates anything.
pub fn new_parser(lang: Lang) -> Result<tree_sitter::Parser, ExtractError> {
    use_mimalloc_for_tree_sitter();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&lang.grammar())
        .map_err(|e| ExtractError::Grammar {
            lang: lang.name(),
            message: e.to_string(),
        })?;
    Ok(parser)
}

fn use_mimalloc_for_tree_sitter() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: tree-sitter must free with the allocator it allocated with. This runs
        // once, before the first parser exists: parsers are only made by `new_parser`,
        // and the grammars are static data that tree-sitter never allocates or frees.
        // The four functions are mimalloc's malloc/calloc/realloc/free, which are
        // thread-safe and accept frees from any thread.
        unsafe {
            tree_sitter::set_allocator(
                Some(libmimalloc_sys::mi_malloc),
                Some(libmimalloc_sys::mi_calloc),
                Some(libmimalloc_sys::mi_realloc),
                Some(libmimalloc_sys::mi_free),
            )
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "fn a() { b(); }\nstruct S;\nimpl S { fn m(&self) {} }\n";

    fn parse_rust(source: &str) -> tree_sitter::Tree {
        new_parser(Lang::Rust).unwrap().parse(source, None).unwrap()
    }

    #[test]
    fn trees_live_in_mimalloc_and_can_be_freed_on_another_thread() {
        let source = SOURCE.repeat(200);
        let trees: Vec<tree_sitter::Tree> = std::thread::scope(|scope| {
            let parsing: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| parse_rust(&source)))
                .collect();
            parsing.into_iter().map(|p| p.join().unwrap()).collect()
        });
        for tree in &trees {
            let root = tree.root_node();
            assert_eq!(root.named_child_count(), 600);
            assert!(!root.has_error());
            // A root node's id is the address of its subtree, which tree-sitter allocated.
            let address = root.id() as *const std::ffi::c_void;
            assert!(unsafe { libmimalloc_sys::mi_is_in_heap_region(address) });
        }
        // Freed here, on a thread that allocated none of them.
        drop(trees);
        assert_eq!(parse_rust(SOURCE).root_node().named_child_count(), 3);
    }
}
