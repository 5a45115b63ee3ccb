//! Python's `self.m()` stays inside the class's hierarchy: the class's own `m`, a
//! base's, a subclass's or a mixin's beside it — never the same-named method of an
//! unrelated class (`self._next = it.__next__` is an attribute, not `Other._next`).

use crate::common;

use loci_index::graph::Graph;

const SRC: &str = "class Other:
    def _next(self):
        return 1

    def step(self):
        return 2


class Wrapper:
    def __init__(self, it):
        self._next = it.__next__

    def __next__(self):
        return self._next()


class Base:
    def run(self):
        return self.step() + self.helper()


class Mixin:
    def helper(self):
        return 3


class Child(Base, Mixin):
    def step(self):
        return 4
";

#[test]
fn self_calls_reach_the_class_hierarchy_only() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("m.py", SRC)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    // An attribute holding a callable: no call of another class's method.
    assert!(common::caller_names(&g, "Other._next").is_empty());
    // A base calling what its subclass defines, and a mixin beside it.
    assert_eq!(common::caller_names(&g, "Child.step"), ["Base.run"]);
    assert!(common::caller_names(&g, "Other.step").is_empty());
    assert_eq!(common::caller_names(&g, "Mixin.helper"), ["Base.run"]);
}
