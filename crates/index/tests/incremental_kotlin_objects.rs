//! Incremental runs equal a fresh index when what a Kotlin member import
//! (`import p.lib.Config.load`) or a call through an imported object binds changes in
//! another file: the object's file moves to another package, a file defining the object
//! appears in the imported package, and the member moves into a companion object; and
//! when an extension function's file is added, moved to another package or removed,
//! or its receiver type changes; when a nested type's base changes in another file; and
//! when a schema-7 index gains receiver types.

use crate::common;

use common::{calls_from, index, reindex_equals_fresh, write_tree};

/// Writes `files` over the tree, re-indexes it after the step `what`, and checks the
/// index against a fresh one and `main`'s calls against `expected`.
fn rewrite_equals_fresh(
    root: &std::path::Path,
    what: &str,
    files: &[(&str, &str)],
    expected: &[&str],
) {
    write_tree(root, files);
    reindex_equals_fresh(root, what, "main", expected);
}

#[test]
fn object_member_imports_follow_changes_in_other_files_as_a_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            (
                "lib/Config.kt",
                "package p.lib\n\nobject Config {\n    fun load() {}\n}\n",
            ),
            (
                "app/Main.kt",
                "package p.app\n\nimport p.lib.Config.load\nimport p.lib.Tools\n\nfun main() {\n    load()\n    Tools.run()\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(calls_from(root, "main"), ["lib/Config.kt:Config.load"]);
    rewrite_equals_fresh(
        root,
        "an object appearing in the imported package",
        &[(
            "lib/Tools.kt",
            "package p.lib\n\nobject Tools {\n    fun run() {}\n}\n",
        )],
        &["lib/Config.kt:Config.load", "lib/Tools.kt:Tools.run"],
    );
    rewrite_equals_fresh(
        root,
        "the member moving into a companion object",
        &[(
            "lib/Config.kt",
            "package p.lib\n\nclass Config {\n    companion object {\n        fun load() {}\n    }\n}\n",
        )],
        &["lib/Config.kt:Config.load", "lib/Tools.kt:Tools.run"],
    );
    rewrite_equals_fresh(
        root,
        "the object's file moving to another package",
        &[(
            "lib/Config.kt",
            "package p.other\n\nobject Config {\n    fun load() {}\n}\n",
        )],
        &["lib/Tools.kt:Tools.run"],
    );
    rewrite_equals_fresh(
        root,
        "the companion's member imported through it",
        &[
            (
                "lib/Config.kt",
                "package p.lib\n\nclass Config {\n    companion object Named {\n        fun load() {}\n    }\n}\n",
            ),
            (
                "app/Main.kt",
                "package p.app\n\nimport p.lib.Config.Named.load\nimport p.lib.Tools\n\nfun main() {\n    load()\n    Tools.run()\n}\n",
            ),
        ],
        &["lib/Config.kt:Config.load", "lib/Tools.kt:Tools.run"],
    );
}

#[test]
fn extension_files_added_and_removed_equal_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            (
                "ui/Widget.kt",
                "package p.ui\n\nclass Widget {\n    fun shout() {}\n}\n",
            ),
            (
                "app/Main.kt",
                "package p.app\n\nimport p.text.*\n\nfun main(s: String) {\n    s.shout()\n}\n",
            ),
        ],
    );
    index(root);
    // A String is no Widget, and no extension `shout` is visible yet.
    assert!(calls_from(root, "main").is_empty());
    let check = |what: &str, expected: &[&str]| {
        reindex_equals_fresh(root, what, "main", expected);
    };
    write_tree(
        root,
        &[(
            "text/Strings.kt",
            "package p.text\n\nfun String.shout(): String = this\n",
        )],
    );
    check(
        "adding the extension's file to the imported package",
        &["text/Strings.kt:shout"],
    );
    write_tree(
        root,
        &[(
            "text/Strings.kt",
            "package p.loud\n\nfun String.shout(): String = this\n",
        )],
    );
    check("moving it to a package the caller does not import", &[]);
    write_tree(
        root,
        &[(
            "app/More.kt",
            "package p.app\n\nfun String.shout(): String = this\n",
        )],
    );
    check(
        "adding one to the caller's own package",
        &["app/More.kt:shout"],
    );
    std::fs::remove_file(root.join("app/More.kt")).unwrap();
    check("removing that file", &[]);
}

/// An extension's receiver type is a fact other files' calls are resolved by: when it
/// changes, a call on a typed receiver in another file follows, as a fresh index does.
#[test]
fn calls_follow_an_extensions_receiver_type_changing_in_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            ("ui/Types.kt", "package p.ui\n\nclass Box\n\nclass Panel\n"),
            (
                "ui/BoxExt.kt",
                "package p.ui\n\nfun Box.describe(): String = \"box\"\n",
            ),
            (
                "ui/PanelExt.kt",
                "package p.ui\n\nfun Panel.describe(): String = \"panel\"\n",
            ),
            (
                "ui/Main.kt",
                "package p.ui\n\nfun main(b: Box) {\n    b.describe()\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(calls_from(root, "main"), ["ui/BoxExt.kt:describe"]);
    rewrite_equals_fresh(
        root,
        "the other extension now extending Box as well",
        &[(
            "ui/PanelExt.kt",
            "package p.ui\n\nfun Box.describe(): String = \"panel\"\n",
        )],
        &["ui/BoxExt.kt:describe", "ui/PanelExt.kt:describe"],
    );
    rewrite_equals_fresh(
        root,
        "the first extension now extending Panel",
        &[(
            "ui/BoxExt.kt",
            "package p.ui\n\nfun Panel.describe(): String = \"box\"\n",
        )],
        &["ui/PanelExt.kt:describe"],
    );
}

/// Nested types known by their paths: `main`'s call on a `Spec.Builder` reaches the
/// member of the base that `Spec.Builder` names in another file, and follows that base
/// changing there (from `Annotated.Builder` to `Documented.Builder`, both `Builder`s).
#[test]
fn calls_on_a_nested_type_follow_its_base_changing_in_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = |base: &str| {
        format!(
            "package p\n\nclass Spec {{\n    class Builder : {base}.Builder {{\n        fun own() {{}}\n    }}\n}}\n"
        )
    };
    write_tree(
        root,
        &[
            (
                "Bases.kt",
                "package p\n\nopen class Annotated {\n    open class Builder {\n        fun add() {}\n    }\n}\n\nopen class Documented {\n    open class Builder {\n        fun add() {}\n    }\n}\n",
            ),
            ("Spec.kt", &spec("Annotated")),
            (
                "Main.kt",
                "package p\n\nfun main(b: Spec.Builder) {\n    b.add()\n    b.own()\n}\n",
            ),
        ],
    );
    index(root);
    assert_eq!(
        calls_from(root, "main"),
        ["Bases.kt:Annotated.Builder.add", "Spec.kt:Spec.Builder.own"]
    );
    rewrite_equals_fresh(
        root,
        "Spec.Builder now deriving from Documented.Builder",
        &[("Spec.kt", &spec("Documented"))],
        &[
            "Bases.kt:Documented.Builder.add",
            "Spec.kt:Spec.Builder.own",
        ],
    );
}

/// An index of schema 7 (before extensions recorded their receiver type) is upgraded by
/// the next run: the column is added, every Kotlin file re-extracted, and the index
/// equals a fresh one.
#[test]
fn a_schema_7_index_gains_extension_receivers_on_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            ("ui/Types.kt", "package p.ui\n\nclass Box\n\nclass Panel\n"),
            (
                "ui/Ext.kt",
                "package p.ui\n\nfun Box.describe(): String = \"box\"\n\nfun Panel.describe(): String = \"panel\"\n",
            ),
            (
                "ui/Main.kt",
                "package p.ui\n\nfun main(b: Box) {\n    b.describe()\n}\n",
            ),
        ],
    );
    index(root);
    let fresh = common::dump(root);
    let conn = loci_store::rusqlite::Connection::open(loci_store::index_path_for(root)).unwrap();
    conn.execute_batch(&format!(
        "ALTER TABLE symbols DROP COLUMN receiver;
         UPDATE files SET extractor = {} WHERE lang = 'kotlin';
         PRAGMA user_version = 7;",
        loci_index::extract::version(loci_index::Lang::Kotlin) - 1
    ))
    .unwrap();
    drop(conn);
    let report = index(root);
    assert_eq!(report.files_parsed, 3, "every Kotlin file re-extracted");
    assert_eq!(common::dump(root), fresh);
    assert_eq!(calls_from(root, "main"), ["ui/Ext.kt:describe"]);
}
