//! A `.h` file is C or C++ by its own text, in the index as in extraction, and an edit
//! that turns a C header into C++ gives, incrementally, the index a fresh run builds.

use crate::common;

use std::path::Path;

fn lang_of(root: &Path, path: &str) -> String {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    conn.query_row("SELECT lang FROM files WHERE path = ?1", [path], |r| {
        r.get(0)
    })
    .unwrap()
}

#[test]
fn a_header_that_reads_as_cpp_is_indexed_as_cpp_and_follows_its_edits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::write_tree(
        root,
        &[
            (
                "shape.h",
                "struct shape { int sides; };\nint area(struct shape s);\n",
            ),
            (
                "main.c",
                "#include \"shape.h\"\nint main(void) { return area(make()); }\n",
            ),
            (
                "make.c",
                "#include \"shape.h\"\nstruct shape make(void) { struct shape s = {3}; return s; }\n",
            ),
        ],
    );
    common::index(root);
    assert_eq!(lang_of(root, "shape.h"), "c");

    std::fs::write(
        root.join("shape.h"),
        "namespace geo {\nclass Shape {\n public:\n  int area() const { return 0; }\n};\n}\n",
    )
    .unwrap();
    common::index(root);
    assert_eq!(lang_of(root, "shape.h"), "cpp");
    let dump = common::dump(root);
    assert!(
        dump.contains("geo::Shape"),
        "the class is a definition:\n{dump}"
    );
    common::assert_same_as_fresh(root);

    std::fs::write(root.join("shape.h"), "int area(void);\n").unwrap();
    common::index(root);
    assert_eq!(lang_of(root, "shape.h"), "c");
    common::assert_same_as_fresh(root);
}
