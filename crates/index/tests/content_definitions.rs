//! `Graph::definitions_of_content`: the definitions the index holds for a file's bytes
//! are the ones the extractor finds in them, in the same order, so a reader may take
//! either (a diff's side the index already read is not parsed again). Checked after a
//! first index and after syncs that keep some rows and add others, which leaves row
//! ids out of document order.

use loci_index::Lang;
use loci_index::extract::{extract, in_document_order};

use crate::common::{index, write_tree};

const RUST: &str = "macro_rules! make { ($n:ident) => { fn $n() {} }; }\n\
    make!(generated);\n\
    cfg_if::cfg_if! { if #[cfg(unix)] { fn on_unix() {} } else { fn elsewhere() {} } }\n\
    pub mod m {\n    /// Doc.\n    pub fn a(x: u8) -> Engine { todo!() }\n    impl S { fn b(&self) {} }\n}\n\
    struct S { field: u32 }\n";
const PYTHON: &str = "class A:\n    def f(self):\n        def inner():\n            pass\n        return inner\n\ndef g():\n    '''Doc.'''\n    return A().f()\n";
const JAVA: &str = "class J {\n  void m(int a) {}\n  void m(String... rest) {}\n  class K { int k() { return 1; } }\n}\n";
const TS: &str = "export class C {\n  run(): Promise<void> { return go(); }\n}\nexport const arrow = (x: number) => x;\nfunction go(): Promise<void> { return Promise.resolve(); }\n";

fn assert_same(root: &std::path::Path, files: &[(&str, &str)], lang: &[Lang]) {
    let graph = loci_index::graph::Graph::open(root).unwrap();
    for ((path, text), lang) in files.iter().zip(lang) {
        let hash = blake3::hash(text.as_bytes());
        let (stored_lang, stored) = graph
            .definitions_of_content(path, hash.as_bytes())
            .unwrap()
            .unwrap_or_else(|| panic!("{path} is indexed with these bytes"));
        assert_eq!(stored_lang, *lang, "{path}");
        let extracted = in_document_order(extract(*lang, text).unwrap().symbols);
        assert!(!extracted.is_empty(), "{path}");
        assert_eq!(stored, extracted, "{path}");
        let other = blake3::hash(b"other bytes");
        assert_eq!(
            graph
                .definitions_of_content(path, other.as_bytes())
                .unwrap(),
            None
        );
    }
    assert_eq!(
        graph
            .definitions_of_content("missing.rs", blake3::hash(b"").as_bytes())
            .unwrap(),
        None
    );
}

#[test]
fn stored_definitions_are_the_extracted_ones_after_an_index_and_after_syncs() {
    let dir = tempfile::tempdir().unwrap();
    let own = include_str!("../src/graph/files.rs");
    let mut files = [
        ("src/lib.rs", RUST.to_string()),
        ("pkg/mod.py", PYTHON.to_string()),
        ("J.java", JAVA.to_string()),
        ("web/c.ts", TS.to_string()),
        ("src/files.rs", own.to_string()),
    ];
    let langs = [
        Lang::Rust,
        Lang::Python,
        Lang::Java,
        Lang::TypeScript,
        Lang::Rust,
    ];
    let now: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    write_tree(dir.path(), &now);
    index(dir.path());
    assert_same(dir.path(), &now, &langs);

    // New definitions before and between the kept ones: their rows come last.
    files[0].1 = format!(
        "fn first() {{}}\n{}\nfn between() {{}}\n",
        RUST.replace("pub fn a(", "pub fn a2() {}\n    pub fn a(")
    );
    files[1].1 = format!("def zero():\n    pass\n\n{PYTHON}");
    files[3].1 = TS.replace("export class C {", "export class C {\n  early(): void {}");
    let now: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    write_tree(dir.path(), &now);
    index(dir.path());
    assert_same(dir.path(), &now, &langs);
}
