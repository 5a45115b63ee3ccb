//! The text files a search reads beside the index's source files: README, CHANGELOG,
//! manifests, configs, docs — every file the walk sees (ignore files honoured) that no
//! language claims by its name, listed fresh on each search so an edit is found at
//! once. Bounded: a file over [`MAX_FILE_BYTES`] is left out, and one search reads at
//! most [`MAX_TOTAL_BYTES`] of them.

use std::path::Path;

use crate::walk::RelPath;

/// Largest text file a search reads (a bigger one is data, not prose or config).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Most bytes of text files one search reads, in path order.
pub const MAX_TOTAL_BYTES: u64 = 64 << 20;

/// Text files beneath `root` whose shown path passes `keep`, by path: `(shown path,
/// exact path)`; and whether [`MAX_TOTAL_BYTES`] left some out.
pub(super) fn list(root: &Path, keep: &dyn Fn(&str) -> bool) -> (Vec<(String, RelPath)>, bool) {
    let walked = crate::walk::walk(root, 2, &|p: &Path| crate::Lang::detect(p, b"").is_none());
    let mut total = 0u64;
    let mut cut = false;
    let mut out = Vec::new();
    for f in walked.files {
        let shown = f.rel.display().into_owned();
        if f.stat.size > MAX_FILE_BYTES || !keep(&shown) {
            continue;
        }
        if total + f.stat.size > MAX_TOTAL_BYTES {
            cut = true;
            break;
        }
        total += f.stat.size;
        out.push((shown, f.rel));
    }
    (out, cut)
}

/// Whether `bytes` look binary: a NUL in their first 8 KiB (as git decides).
pub(super) fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_files_are_the_walks_files_no_language_claims() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("README.md"), "# hi\n").unwrap();
        std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
        std::fs::write(root.join("lib.rs"), "fn f() {}\n").unwrap();
        std::fs::write(
            root.join("big.txt"),
            vec![b'x'; (MAX_FILE_BYTES + 1) as usize],
        )
        .unwrap();
        std::fs::write(root.join(".gitignore"), "ignored.md\n").unwrap();
        std::fs::write(root.join("ignored.md"), "no\n").unwrap();
        let (files, cut) = list(root, &|_| true);
        let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        // Hidden files stay out, as they do of the index.
        assert_eq!(names, ["Cargo.toml", "README.md"]);
        assert!(!cut);
        assert!(is_binary(b"PNG\0\x01"));
        assert!(!is_binary("é text".as_bytes()));
    }
}
