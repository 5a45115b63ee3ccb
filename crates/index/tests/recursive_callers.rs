//! A recursive definition is its own caller and callee: reported once, at depth 1, with
//! its call site, and not followed again; `impact` leaves it out (a definition does not
//! depend on itself).

use crate::common;

use loci_index::graph::{self, Graph};

const SRC: &str = "def fact(n):
    if n < 2:
        return 1
    return n * fact(n - 1) + fact(0) * 0


def main():
    return fact(3)
";

fn names(t: &graph::Traversal) -> Vec<(String, u32, u32)> {
    t.reached
        .iter()
        .map(|r| {
            (
                r.symbol
                    .as_ref()
                    .map(|s| s.qualified_name.clone())
                    .unwrap_or_default(),
                r.depth,
                r.site.line,
            )
        })
        .collect()
}

#[test]
fn a_recursive_function_is_its_own_caller_once() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("m.py", SRC)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    let callers = graph::callers(&g, "fact", 3).unwrap();
    assert_eq!(
        names(&callers),
        [("fact".to_string(), 1, 4), ("main".to_string(), 1, 8)],
        "{callers:?}"
    );
    assert_eq!(callers.reached[0].via, ["fact", "fact"]);
    let callees = graph::callees(&g, "fact", 2).unwrap();
    assert_eq!(names(&callees), [("fact".to_string(), 1, 4)]);
    let impact = graph::impact(&g, "fact", 3, false).unwrap();
    assert!(
        impact
            .reached
            .iter()
            .all(|r| r.symbol.as_ref().map(|s| s.name.as_str()) != Some("fact")),
        "{impact:?}"
    );
    // A function that does not call itself is not its own caller.
    let callers = graph::callers(&g, "main", 1).unwrap();
    assert!(callers.reached.is_empty(), "{callers:?}");
}
