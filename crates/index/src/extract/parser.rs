//! Where tree-sitter gets its memory.
//!
//! A parse allocates and frees small nodes by the thousand (subtrees, stack entries),
//! then frees the whole tree. With the system allocator those calls were about a tenth
//! of a first index's CPU (perf); mimalloc's per-thread free lists make a full index of
//! a 600k-line tree about 12 % faster (alternated A/B runs). Only tree-sitter uses it:
//! the rest of the process keeps the system allocator and its smaller footprint.
//!
//! The same four functions also count, per thread, the bytes tree-sitter holds, so a
//! parse can be stopped when it takes more memory than a budget allows
//! ([`parse_within`]): error recovery on a pathological file (400k `{` then 400k `}`)
//! otherwise holds hundreds of megabytes for a file under 1 MiB.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Once;

use super::ExtractError;
use crate::Lang;
use crate::budget::Deadline;

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

/// Why a parse gave no tree.
pub(crate) enum ParseStop {
    /// tree-sitter held more than this many bytes at some point of the parse.
    OverMemory(usize),
    /// The file's deadline passed during the parse.
    OverTime,
    /// tree-sitter returned no tree for another reason.
    NoTree,
}

/// Parses `source`, stopping as soon as tree-sitter holds more than `max_bytes` bytes
/// allocated on this thread since the parse began (checked every 100 parse steps), or
/// once `deadline` has passed.
pub(crate) fn parse_within(
    parser: &mut tree_sitter::Parser,
    source: &str,
    max_bytes: usize,
    deadline: &Deadline,
) -> Result<tree_sitter::Tree, ParseStop> {
    let bytes = source.as_bytes();
    let start = LIVE.get();
    let max = isize::try_from(max_bytes).unwrap_or(isize::MAX);
    let mut stopped = None;
    let mut stop = |_: &tree_sitter::ParseState| {
        if LIVE.get().saturating_sub(start) > max {
            stopped = Some(ParseStop::OverMemory(max_bytes));
        } else if deadline.passed() {
            stopped = Some(ParseStop::OverTime);
        }
        stopped.is_some()
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut stop);
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(options),
    );
    match tree {
        Some(tree) => Ok(tree),
        None => {
            // tree-sitter keeps a stopped parse to resume it: the parser's next parse
            // (the next macro region of the file) must start anew.
            parser.reset();
            Err(stopped.unwrap_or(ParseStop::NoTree))
        }
    }
}

thread_local! {
    /// Bytes tree-sitter allocated on this thread minus those it freed here. Frees on
    /// another thread (a tree dropped elsewhere) only lower the other thread's count, so
    /// a parse's growth is never overstated. No destructor: usable at any time.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    LIVE.set(LIVE.get().wrapping_add(delta));
}

fn usable(p: *const c_void) -> isize {
    // SAFETY: `p` is a live block from mimalloc (callers check for null).
    unsafe { libmimalloc_sys::mi_usable_size(p) as isize }
}

/// Ends the process with a message when the allocator has no memory for tree-sitter,
/// as tree-sitter's own allocator does: tree-sitter never checks for null, so returning
/// one would be a segmentation fault somewhere inside the parse, with no word of why.
fn out_of_memory(bytes: usize) -> ! {
    eprintln!("loci: tree-sitter could not allocate {bytes} bytes: out of memory");
    std::process::abort()
}

unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    // SAFETY: mimalloc's malloc, called as malloc.
    let p = unsafe { libmimalloc_sys::mi_malloc(size) };
    if p.is_null() && size > 0 {
        out_of_memory(size);
    }
    if !p.is_null() {
        count(usable(p));
    }
    p
}

unsafe extern "C" fn ts_calloc(n: usize, size: usize) -> *mut c_void {
    // SAFETY: mimalloc's calloc, called as calloc.
    let p = unsafe { libmimalloc_sys::mi_calloc(n, size) };
    if p.is_null() && n > 0 && size > 0 {
        out_of_memory(n.saturating_mul(size));
    }
    if !p.is_null() {
        count(usable(p));
    }
    p
}

unsafe extern "C" fn ts_realloc(old: *mut c_void, size: usize) -> *mut c_void {
    let before = if old.is_null() { 0 } else { usable(old) };
    // SAFETY: mimalloc's realloc on a block tree-sitter got from these functions.
    let p = unsafe { libmimalloc_sys::mi_realloc(old, size) };
    if !p.is_null() {
        count(usable(p) - before);
    } else if size == 0 {
        // realloc(p, 0) may free `old` and return null.
        count(-before);
    } else {
        out_of_memory(size);
    }
    p
}

unsafe extern "C" fn ts_free(p: *mut c_void) {
    if !p.is_null() {
        count(-usable(p));
    }
    // SAFETY: mimalloc's free on a block tree-sitter got from these functions.
    unsafe { libmimalloc_sys::mi_free(p) }
}

fn use_mimalloc_for_tree_sitter() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: tree-sitter must free with the allocator it allocated with. This runs
        // once, before the first parser exists: parsers are only made by `new_parser`,
        // and the grammars are static data that tree-sitter never allocates or frees.
        // The four functions wrap mimalloc's malloc/calloc/realloc/free (thread-safe,
        // accepting frees from any thread) and only add a thread-local count.
        unsafe {
            tree_sitter::set_allocator(
                Some(ts_malloc),
                Some(ts_calloc),
                Some(ts_realloc),
                Some(ts_free),
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
    fn a_parse_after_a_stopped_one_starts_anew() {
        let mut parser = new_parser(Lang::Rust).unwrap();
        let big = SOURCE.repeat(2_000);
        let minute = Deadline::after(std::time::Duration::from_secs(60));
        let stopped = parse_within(&mut parser, &big, 4_096, &minute);
        assert!(matches!(stopped, Err(ParseStop::OverMemory(4_096))));
        // Without a reset, tree-sitter resumes the stopped parse's stack on this input.
        let tree = parse_within(&mut parser, SOURCE, usize::MAX, &minute);
        let tree = tree.ok().unwrap();
        let root = tree.root_node();
        assert_eq!(root.named_child_count(), 3);
        assert!(!root.has_error());
        assert_eq!(root.end_byte(), SOURCE.len());
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
