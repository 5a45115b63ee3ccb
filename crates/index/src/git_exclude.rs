//! Keeping `.loci/` out of git without touching tracked files: the marker directory is
//! added to the repository's `.git/info/exclude` (DESIGN.md §3), once.

use std::io::Write;
use std::path::Path;

/// The line loci adds.
const PATTERN: &str = "/.loci/";

/// Adds `/.loci/` to `<root>/.git/info/exclude` when `root` is a git work tree whose
/// exclude file lacks it. Failure is not an indexing failure: it is logged.
pub(crate) fn ensure_excluded(root: &Path) {
    let git = root.join(".git");
    if !git.is_dir() {
        return; // not a repository, or a worktree/submodule whose .git is a file: leave it
    }
    let exclude = git.join("info").join("exclude");
    let current = std::fs::read_to_string(&exclude).unwrap_or_default();
    if current
        .lines()
        .any(|l| matches!(l.trim(), "/.loci/" | ".loci/" | ".loci" | "/.loci"))
    {
        return;
    }
    let result = std::fs::create_dir_all(git.join("info")).and_then(|()| {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&exclude)?;
        let sep = if current.is_empty() || current.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        writeln!(f, "{sep}{PATTERN}")
    });
    if let Err(e) = result {
        tracing::warn!(path = %exclude.display(), error = %e, "could not add .loci/ to git's exclude file");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_pattern_once_and_keeps_existing_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
        let exclude = dir.path().join(".git/info/exclude");
        std::fs::write(&exclude, "*.tmp").unwrap();
        ensure_excluded(dir.path());
        ensure_excluded(dir.path());
        assert_eq!(
            std::fs::read_to_string(&exclude).unwrap(),
            "*.tmp\n/.loci/\n"
        );
    }

    #[test]
    fn leaves_non_repositories_alone() {
        let dir = tempfile::tempdir().unwrap();
        ensure_excluded(dir.path());
        assert!(!dir.path().join(".git").exists());
    }
}
