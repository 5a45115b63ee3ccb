//! An answer's files checked against the index: edited, removed and untouched files,
//! each path once, unknown paths left out.

use crate::common;

use loci_index::graph::Graph;

#[test]
fn edited_and_removed_files_are_named_and_untouched_ones_are_not() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(
        dir.path(),
        &[
            ("a.py", "def a():\n    pass\n"),
            ("b.py", "def b():\n    pass\n"),
            ("c.py", "def c():\n    pass\n"),
        ],
    );
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    let all = ["a.py", "b.py", "c.py", "a.py", "not/indexed.py"];
    assert!(g.changed_since_indexed(all).unwrap().is_empty());
    std::fs::write(dir.path().join("a.py"), "def a2():\n    pass\n").unwrap();
    std::fs::remove_file(dir.path().join("c.py")).unwrap();
    assert_eq!(g.changed_since_indexed(all).unwrap(), ["a.py", "c.py"]);
    // After a sync the index has caught up.
    drop(g);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();
    assert!(
        g.changed_since_indexed(["a.py", "b.py"])
            .unwrap()
            .is_empty()
    );
}
