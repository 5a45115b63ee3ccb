//! Kotlin and C#: trees from the npm and PyPI registries, which `.ci/run` unpacks under
//! `$LOCI_SOURCE_TREES` (see [`super::trees::source_tree`]). Every file of each is
//! compared (the trees are small). `LOCI_RECALL_KOTLIN_ROOT=<dir>` and
//! `LOCI_RECALL_CSHARP_ROOT=<dir>` compare another tree instead (outside both halves, to
//! try a rule on).

use std::path::PathBuf;

use loci_index::Lang;

use super::harness::{Corpus, Exclusion, LineMatch, ctags, measure};
use super::not_definitions;
use super::trees::{collect, required, sample, source_tree};

const INSTALL: &str = "the registry packages .ci/run unpacks under $LOCI_SOURCE_TREES";

/// The tree `$override_var` names (its files hashed by their paths in it), else the
/// registry package `package` (hashed under `package/`).
fn tree(override_var: &str, package: &'static str) -> (Option<PathBuf>, String) {
    match std::env::var_os(override_var) {
        Some(root) => (Some(PathBuf::from(root)), String::new()),
        None => (source_tree(package), format!("{package}/")),
    }
}

#[test]
fn kotlin_recall_of_ctags_definitions_is_at_least_97_percent() {
    let ctags = ctags();
    let (root, prefix) = tree("LOCI_RECALL_KOTLIN_ROOT", "expo-modules-core");
    let Some(root) = required("Kotlin", root, INSTALL) else {
        return;
    };
    let files = collect(&root, &prefix, &[".kt"], &[]);
    assert!(!files.is_empty(), "no .kt files under {}", root.display());
    let corpus = Corpus {
        label: "Kotlin",
        lang: Lang::Kotlin,
        ctags_lang: "Kotlin",
        ctags_kinds: "cimoTp",
        kind_names: &[
            "class",
            "interface",
            "method",
            "object",
            "typealias",
            "package",
        ],
        line_match: LineMatch::Head,
        files: sample(files, 1),
        exclude: vec![Exclusion {
            what: "lambda parameters and loop variables ctags calls methods",
            kinds: &["method"],
            find: not_definitions::kotlin_lambda_and_loop_variables,
        }],
        overloads_once: false,
    };
    measure(&ctags, &corpus).assert_held_out_at_least("Kotlin", 0.97);
}

#[test]
fn csharp_recall_of_ctags_definitions_is_at_least_97_percent() {
    let ctags = ctags();
    let (root, prefix) = tree("LOCI_RECALL_CSHARP_ROOT", "pythonnet");
    let Some(root) = required("C#", root, INSTALL) else {
        return;
    };
    let files = collect(&root, &prefix, &[".cs"], &[]);
    assert!(!files.is_empty(), "no .cs files under {}", root.display());
    let corpus = Corpus {
        label: "C#",
        lang: Lang::CSharp,
        ctags_lang: "C#",
        ctags_kinds: "cgimns",
        kind_names: &[
            "class",
            "enum",
            "interface",
            "method",
            "namespace",
            "struct",
        ],
        line_match: LineMatch::Head,
        files: sample(files, 1),
        exclude: Vec::new(),
        overloads_once: false,
    };
    measure(&ctags, &corpus).assert_held_out_at_least("C#", 0.97);
}
