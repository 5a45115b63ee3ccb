//! Rust: a value behind a pointer or a view of it is still its type's receiver:
//! `Arc::new(Semaphore::new(1))`, `sem.clone()`, `self.delay.as_mut()` where
//! `delay: Pin<Box<Sleep>>` (tokio's `Interval` resetting its `Sleep`).

use crate::common;

use loci_index::graph::Graph;

const CARGO: &str = "[package]\nname = \"app\"\nversion = \"0.1.0\"\n";

const LIB: &str = "use std::pin::Pin;
use std::sync::Arc;
pub struct Sleep;
impl Sleep {
    pub fn reset(self: Pin<&mut Self>, d: u64) {}
}
pub struct Semaphore;
impl Semaphore {
    pub fn new(n: usize) -> Semaphore { Semaphore }
    pub fn add_permits(&self, n: usize) {}
}
pub struct Pool;
impl Pool {
    pub fn add_permits(&self, n: usize) {}
    pub fn reset(&mut self) {}
}
pub struct Batch;
impl Batch {
    pub fn add_permits(&self, n: usize) {}
    pub fn reset(&mut self) {}
}
pub struct Queue;
impl Queue {
    pub fn add_permits(&self, n: usize) {}
    pub fn reset(&mut self) {}
}
pub struct Interval { delay: Pin<Box<Sleep>> }
impl Interval {
    pub fn tick(&mut self) { self.delay.as_mut().reset(1); }
}
pub fn grow() {
    let sem = Arc::new(Semaphore::new(1));
    sem.add_permits(2);
    let again = sem.clone();
    again.add_permits(3);
}
";

#[test]
fn pointers_and_views_keep_their_pointees_type() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("Cargo.toml", CARGO), ("src/lib.rs", LIB)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    assert_eq!(common::caller_names(&g, "Sleep::reset"), ["Interval::tick"]);
    assert_eq!(common::caller_names(&g, "Semaphore::add_permits"), ["grow"]);
    assert!(common::caller_names(&g, "Pool::add_permits").is_empty());
    let sites = loci_index::graph::callers(&g, "Semaphore::add_permits", 1).unwrap();
    assert_eq!(sites.reached[0].confidence, loci_index::Confidence::Exact);
}
