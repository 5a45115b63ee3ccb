//! Incremental runs equal a fresh index when what a Java/Kotlin name is bound to changes
//! by its package: a new file in a package (on-demand imported, or the caller's own), a
//! class whose `package` line moves it to another package (the file edited in place,
//! its definitions keeping their qualified names), and the Kotlin equivalents.

use crate::common;

use common::{differs_from_fresh, index, write_tree};

/// The calls out of `main` and the imports of app/Main.java, as `KIND path[:qualified name]`.
fn edges_from_main(root: &std::path::Path) -> Vec<String> {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT e.kind || ' ' || df.path || coalesce(':' || d.qualified_name, '') FROM edges e
             JOIN files sf ON sf.id = e.src_file JOIN files df ON df.id = e.dst_file
             LEFT JOIN symbols s ON s.id = e.src_symbol LEFT JOIN symbols d ON d.id = e.dst_symbol
             WHERE e.kind IN ('CALLS', 'IMPORTS')
               AND (s.name = 'main' OR (s.id IS NULL AND sf.path = 'app/Main.java'))
             ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Writes `files`, indexes incrementally, and checks the index against a fresh one and
/// the edges out of `main` (and Main.java's imports) against `expected`.
fn step(root: &std::path::Path, what: &str, files: &[(&str, &str)], expected: &[&str]) {
    write_tree(root, files);
    assert!(index(root).wrote, "{what}: nothing written");
    if let Some(diff) = differs_from_fresh(root) {
        panic!("after {what}:\n{diff}");
    }
    assert_eq!(edges_from_main(root), expected, "after {what}");
}

fn util(package: &str) -> String {
    format!(
        "package {package};\n\npublic class Util {{\n    public static int help() {{ return 1; }}\n}}\n"
    )
}

#[test]
fn new_package_files_and_classes_moved_between_packages_equal_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Folders do not follow packages, so only the `package` lines can tell.
    write_tree(
        root,
        &[
            ("lib/a/Util.java", &util("p.a")),
            ("lib/b/Util.java", &util("p.b")),
            (
                "app/Main.java",
                "package p.app;\n\nimport p.b.*;\n\nclass Main {\n    void main() {\n        Util.help();\n        Helper.go();\n    }\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(
        edges_from_main(root),
        ["CALLS lib/b/Util.java:Util.help", "IMPORTS lib/b/Util.java"]
    );
    step(
        root,
        "adding a file to the on-demand imported package",
        &[(
            "misc/Helper.java",
            "package p.b;\n\nclass Helper {\n    static void go() {}\n}\n",
        )],
        &[
            "CALLS lib/b/Util.java:Util.help",
            "CALLS misc/Helper.java:Helper.go",
            "IMPORTS lib/b/Util.java",
            "IMPORTS misc/Helper.java",
        ],
    );
    // Nothing uses it, but `import p.b.*` names its file.
    step(
        root,
        "adding an unused class to the on-demand imported package",
        &[("misc/QqOther.java", "package p.b;\n\nclass QqOther {}\n")],
        &[
            "CALLS lib/b/Util.java:Util.help",
            "CALLS misc/Helper.java:Helper.go",
            "IMPORTS lib/b/Util.java",
            "IMPORTS misc/Helper.java",
            "IMPORTS misc/QqOther.java",
        ],
    );
    step(
        root,
        "adding a Util to the caller's own package (it hides the on-demand one)",
        &[("x/Util.java", &util("p.app"))],
        &[
            "CALLS misc/Helper.java:Helper.go",
            "CALLS x/Util.java:Util.help",
            "IMPORTS lib/b/Util.java",
            "IMPORTS misc/Helper.java",
            "IMPORTS misc/QqOther.java",
        ],
    );
    step(
        root,
        "moving that Util to another package (its package line edited)",
        &[("x/Util.java", &util("p.c"))],
        &[
            "CALLS lib/b/Util.java:Util.help",
            "CALLS misc/Helper.java:Helper.go",
            "IMPORTS lib/b/Util.java",
            "IMPORTS misc/Helper.java",
            "IMPORTS misc/QqOther.java",
        ],
    );
    step(
        root,
        "moving Helper out of the imported package",
        &[(
            "misc/Helper.java",
            "package p.a;\n\nclass Helper {\n    static void go() {}\n}\n",
        )],
        &[
            "CALLS lib/b/Util.java:Util.help",
            "IMPORTS lib/b/Util.java",
            "IMPORTS misc/QqOther.java",
        ],
    );
    step(
        root,
        "importing the moved class by its new package",
        &[(
            "app/Main.java",
            "package p.app;\n\nimport p.b.*;\nimport p.a.Helper;\n\nclass Main {\n    void main() {\n        Util.help();\n        Helper.go();\n    }\n}\n",
        )],
        &[
            "CALLS lib/b/Util.java:Util.help",
            "CALLS misc/Helper.java:Helper.go",
            "IMPORTS lib/b/Util.java",
            "IMPORTS misc/Helper.java:Helper",
            "IMPORTS misc/QqOther.java",
        ],
    );
}

#[test]
fn kotlin_top_level_functions_follow_their_package_incrementally() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let helper = |package: &str| format!("package {package}\n\nfun helper() {{}}\n");
    write_tree(
        root,
        &[
            ("kt/a/Helpers.kt", &helper("k.other")),
            ("kt/b/Helpers.kt", &helper("k.main")),
            (
                "kt/Main.kt",
                "package k.main\n\nfun main() {\n    helper()\n}\n",
            ),
        ],
    );
    index(root);
    let calls = |root: &std::path::Path| {
        let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT df.path FROM edges e JOIN files df ON df.id = e.dst_file
                 JOIN symbols s ON s.id = e.src_symbol WHERE e.kind = 'CALLS' AND s.name = 'main'
                 ORDER BY 1",
            )
            .unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
    };
    assert_eq!(calls(root), ["kt/b/Helpers.kt"]);
    // The two files swap packages, edited in place.
    write_tree(
        root,
        &[
            ("kt/a/Helpers.kt", &helper("k.main")),
            ("kt/b/Helpers.kt", &helper("k.elsewhere")),
        ],
    );
    assert!(index(root).wrote);
    if let Some(diff) = differs_from_fresh(root) {
        panic!("after swapping the packages:\n{diff}");
    }
    assert_eq!(calls(root), ["kt/a/Helpers.kt"]);
}
