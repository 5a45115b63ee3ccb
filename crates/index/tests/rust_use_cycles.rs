//! A Rust file whose `use`s lead back to their own names is indexed in bounded time.
//! Found on `async-trait`'s own test file: fifty inline `mod issueN { use
//! async_trait::async_trait; .. }` blocks, where no module `async_trait` is in the tree,
//! made every lookup of that name branch fifty ways at each of its six hops (the index
//! run never finished).

use crate::common;

use std::sync::mpsc;
use std::time::Duration;

use common::{index, write_tree};

/// How long the run may take before the test calls it runaway: seconds of work at most
/// on any machine, against hours before the fix.
const RUNAWAY: Duration = Duration::from_secs(120);

/// `mods` inline modules, each with a different `use` that binds `a` through a path
/// starting with `a` itself, plus a call through it.
fn self_referential_uses(mods: usize) -> String {
    let mut src = String::new();
    for i in 0..mods {
        src.push_str(&format!(
            "mod m{i} {{\n    use a::p{i}::a;\n    use a::a;\n    pub fn f{i}() {{ a::run(); a(); }}\n}}\n"
        ));
    }
    src
}

#[test]
fn uses_that_lead_back_to_their_own_name_are_indexed_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let src = self_referential_uses(40);
    write_tree(
        dir.path(),
        &[("src/lib.rs", &src), ("src/other.rs", "pub fn run() {}\n")],
    );
    let root = dir.path().to_path_buf();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let report = index(&root);
        let _ = tx.send(report);
    });
    let report = rx
        .recv_timeout(RUNAWAY)
        .expect("the index run did not finish: a `use` lookup is running away");
    assert_eq!(report.files_parsed, 2, "{report:?}");
}
