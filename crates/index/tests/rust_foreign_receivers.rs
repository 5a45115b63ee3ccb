//! Rust: a method called on a value whose type the workspace does not define (a field
//! `v: Vec<u8>`, `DefaultHasher::new()`, what `f.debug_tuple("W")` returns) is that
//! type's own, never a same-named inherent method of a workspace struct; the workspace's
//! impls for the type and its traits' methods (a generic bound) are still reached.

use crate::common;

use loci_index::graph::Graph;

const CARGO: &str = "[package]\nname = \"app\"\nversion = \"0.1.0\"\n";

const LIB: &str = "use std::fmt;
pub struct Collect { v: Vec<u8> }
impl Collect {
    pub fn finish(&self) -> usize { self.v.len() }
    pub fn len(&self) -> usize { 0 }
}
pub struct W;
impl fmt::Debug for W {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(\"W\").finish()
    }
}
pub fn hash(x: Vec<u8>) -> u64 {
    use std::hash::Hasher;
    let hasher = std::collections::hash_map::DefaultHasher::new();
    hasher.finish() + x.len() as u64
}
pub fn own(c: &Collect) -> usize {
    c.finish() + c.len()
}
pub trait Ext { fn ext(&self) -> usize; }
impl Ext for Vec<u8> { fn ext(&self) -> usize { 1 } }
pub fn bound<T: Ext>(t: T) -> usize { t.ext() }
";

#[test]
fn methods_on_foreign_values_reach_no_inherent_method_of_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("Cargo.toml", CARGO), ("src/lib.rs", LIB)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    // Only the call on a `Collect` reaches `Collect`'s methods: not `self.v.len()`,
    // `x.len()`, `hasher.finish()` nor `f.debug_tuple("W").finish()`.
    assert_eq!(common::caller_names(&g, "Collect::finish"), ["own"]);
    assert_eq!(common::caller_names(&g, "Collect::len"), ["own"]);
    // A generic bound reaches the trait's method.
    assert_eq!(common::caller_names(&g, "Ext::ext"), ["bound"]);
}
