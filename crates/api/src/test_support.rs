//! What the crate's unit tests share.

use std::path::PathBuf;

/// A workspace holding one Rust file (`a.rs`, one function), indexed: the directory
/// (kept alive by the caller) and its canonical root.
pub(crate) fn indexed_workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "pub fn a() {}\n").unwrap();
    loci_index::index_workspace(
        &loci_index::IndexOptions::new(dir.path()),
        &loci_index::NoProgress,
    )
    .unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}
