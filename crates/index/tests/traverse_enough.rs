//! A traversal for a page stops going deeper once the depths walked hold the page's
//! nodes (issue #32: the web view drew 25 nodes after reading thousands): its first
//! nodes, and the path to each, are the whole traversal's, and it says it stopped.

use crate::common;

use loci_index::graph::{self, Direction, Graph};

/// `leaf` has three callers, each with two callers of its own, each called by `top`.
const SRC: &str = "def leaf():
    return 1


def a():
    return leaf()


def b():
    return leaf()


def c():
    return leaf()


def a1():
    return a()


def a2():
    return a()


def b1():
    return b()


def c1():
    return c()


def top():
    return a1() + a2() + b1() + c1()
";

fn nodes(t: &graph::Traversal) -> Vec<(u32, String, Vec<String>)> {
    t.reached
        .iter()
        .map(|r| {
            let name = r.symbol.as_ref().map(|s| s.qualified_name.clone());
            (r.depth, name.unwrap_or_default(), r.via.clone())
        })
        .collect()
}

#[test]
fn a_traversal_for_a_page_keeps_the_first_nodes_and_says_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("m.py", SRC)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    for direction in [Direction::Callers, Direction::Impact] {
        let whole = graph::traverse_enough(&g, direction, "leaf", 3, true, usize::MAX).unwrap();
        assert!(!whole.truncated);
        let depths: Vec<u32> = whole.reached.iter().map(|r| r.depth).collect();
        assert_eq!(depths, [1, 1, 1, 2, 2, 2, 2, 3], "{direction:?}: {whole:?}");
        // Each `enough`: the walk stops at the first depth that holds it.
        for (enough, found, truncated) in [
            (1, 3, true),
            (3, 3, true),
            (4, 7, true),
            (7, 7, true),
            (8, 8, false),
            (50, 8, false),
        ] {
            let t = graph::traverse_enough(&g, direction, "leaf", 3, true, enough).unwrap();
            assert_eq!(t.reached.len(), found, "{direction:?} enough {enough}");
            assert_eq!(t.truncated, truncated, "{direction:?} enough {enough}");
            // The nodes found, their depths and paths, are the whole traversal's first.
            assert_eq!(
                nodes(&t),
                nodes(&whole)[..found],
                "{direction:?} enough {enough}"
            );
        }
        // A walk that ends before the depth asked is whole, whatever `enough` says.
        let shallow = graph::traverse_enough(&g, direction, "leaf", 1, true, 2).unwrap();
        assert_eq!(shallow.reached.len(), 3);
        assert!(!shallow.truncated);
    }
}
