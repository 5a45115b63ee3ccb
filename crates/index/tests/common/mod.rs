//! Helpers shared by the index integration tests: small repos written into temp dirs,
//! and indexing + dumping them.

#![allow(dead_code)]

use std::path::Path;

/// Writes `files` (relative path, content) under `root`, creating directories.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (rel, content) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// Indexes `root` with default options and returns the report.
pub fn index(root: &Path) -> loci_index::IndexReport {
    loci_index::index_workspace(
        &loci_index::IndexOptions::new(root),
        &loci_index::NoProgress,
    )
    .unwrap()
}

/// `files` written into a new temp dir, indexed, and the index opened (the dir lives as
/// long as the returned handle).
pub fn indexed_graph(files: &[(&str, &str)]) -> (tempfile::TempDir, loci_index::graph::Graph) {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), files);
    index(dir.path());
    let graph = loci_index::graph::Graph::open(dir.path()).unwrap();
    (dir, graph)
}

/// The canonical dump of `root`'s index.
pub fn dump(root: &Path) -> String {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    loci_index::dump(&conn).unwrap()
}

/// Copies every regular file of `from` (except `.loci`) into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walk(from) {
        let rel = entry.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &dest).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() && e.file_name() != ".loci" {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

/// Shows the first differing lines of two dumps (for assertion messages).
pub fn diff(a: &str, b: &str) -> String {
    let a: std::collections::BTreeSet<&str> = a.lines().collect();
    let b: std::collections::BTreeSet<&str> = b.lines().collect();
    let only_a: Vec<&&str> = a.difference(&b).take(20).collect();
    let only_b: Vec<&&str> = b.difference(&a).take(20).collect();
    format!("only in incremental: {only_a:#?}\nonly in fresh: {only_b:#?}")
}

/// Rewrites a current index into what schema version 3 left on disk: files keyed by
/// their (lossy) text path, with no exact bytes. `files` is rebuilt with foreign keys
/// off, so dropping it cascades nowhere.
pub fn downgrade_to_v3(conn: &loci_store::rusqlite::Connection) {
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF;
         CREATE TABLE files_v3 (
             id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, lang TEXT NOT NULL,
             size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
             hash BLOB NOT NULL, lossy INTEGER NOT NULL DEFAULT 0, lines INTEGER NOT NULL,
             resolved INTEGER NOT NULL DEFAULT 0, unresolved_refs INTEGER NOT NULL DEFAULT 0);
         INSERT INTO files_v3 SELECT id, path, lang, size, mtime_ns, inode, hash, lossy, lines,
             resolved, unresolved_refs FROM files;
         DROP TABLE files;
         ALTER TABLE files_v3 RENAME TO files;
         CREATE INDEX files_unresolved ON files(id) WHERE resolved = 0;
         ALTER TABLE symbols DROP COLUMN returns;
         ALTER TABLE symbols DROP COLUMN params;
         ALTER TABLE symbols DROP COLUMN receiver;
         PRAGMA user_version = 3;
         PRAGMA foreign_keys = ON;",
    )
    .unwrap();
}

/// Asserts that the index of `root` (built incrementally) dumps equal to a fresh index
/// of a copy of the same tree.
pub fn assert_same_as_fresh(root: &Path) {
    let fresh = tempfile::tempdir().unwrap();
    copy_tree(root, fresh.path());
    index(fresh.path());
    let (inc, full) = (dump(root), dump(fresh.path()));
    assert!(
        inc == full,
        "incremental index differs from a fresh one:\n{}",
        diff(&inc, &full)
    );
}

/// The diff between the index of `root` (built incrementally) and a fresh index of a
/// copy of the same tree, if they differ (for a test that names the step it failed at).
pub fn differs_from_fresh(root: &Path) -> Option<String> {
    let fresh = tempfile::tempdir().unwrap();
    copy_tree(root, fresh.path());
    index(fresh.path());
    let (inc, full) = (dump(root), dump(fresh.path()));
    (inc != full).then(|| diff(&inc, &full))
}

/// Re-indexes `root` after the step `what` and checks that the run wrote, that the index
/// equals a fresh index of the same tree, and that `caller` then calls exactly `expected`.
pub fn reindex_equals_fresh(root: &Path, what: &str, caller: &str, expected: &[&str]) {
    assert!(index(root).wrote, "{what}: nothing written");
    if let Some(diff) = differs_from_fresh(root) {
        panic!("after {what}:\n{diff}");
    }
    assert_eq!(calls_from(root, caller), expected, "after {what}");
}

/// The `path:qualified name` of every definition the definitions named `caller` call,
/// in order.
pub fn calls_from(root: &Path, caller: &str) -> Vec<String> {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT df.path || ':' || d.qualified_name FROM edges e
             JOIN symbols s ON s.id = e.src_symbol JOIN symbols d ON d.id = e.dst_symbol
             JOIN files df ON df.id = e.dst_file
             WHERE e.kind = 'CALLS' AND s.name = ?1 ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([caller], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The newest `$CARGO_HOME/registry/src/*/<prefix>*` directory: a crate the workspace
/// builds with (tokio), so it is there wherever the workspace was built.
pub fn newest_registry_crate(prefix: &str) -> std::path::PathBuf {
    use std::path::PathBuf;
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let mut found = Vec::new();
    let indexes = std::fs::read_dir(home.join("registry/src"))
        .into_iter()
        .flatten();
    for index in indexes.flatten() {
        for krate in std::fs::read_dir(index.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if krate.file_name().to_string_lossy().starts_with(prefix) {
                found.push(krate.path());
            }
        }
    }
    // By version, numerically (1.54.1 after 1.9.0).
    found.sort_by_key(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let version = name.rsplit('-').next().unwrap_or_default().to_string();
        version
            .split('.')
            .map(|n| n.parse::<u64>().unwrap_or(0))
            .collect::<Vec<_>>()
    });
    found.pop().unwrap_or_else(|| {
        panic!(
            "no {prefix}* crate under {}/registry/src: build the workspace once (cargo fetch)",
            home.display()
        )
    })
}

/// The qualified names of `target`'s direct callers, sorted.
pub fn caller_names(g: &loci_index::graph::Graph, target: &str) -> Vec<String> {
    reached_names(&loci_index::graph::callers(g, target, 1).unwrap())
}

/// The qualified names of what a traversal reached (a file's path for its top-level
/// code), sorted.
pub fn reached_names(t: &loci_index::graph::Traversal) -> Vec<String> {
    let mut names: Vec<String> = t
        .reached
        .iter()
        .map(|r| {
            r.symbol
                .as_ref()
                .map_or(r.path.clone(), |s| s.qualified_name.clone())
        })
        .collect();
    names.sort();
    names
}
