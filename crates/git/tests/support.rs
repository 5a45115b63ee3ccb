//! A repository made with the `git` CLI in a temporary folder.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary git repository.
pub struct TempRepo {
    _dir: tempfile::TempDir,
    /// Its working tree.
    pub root: PathBuf,
}

impl TempRepo {
    /// `git init` in a new temporary folder (branch `main`).
    pub fn new() -> TempRepo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        TempRepo { _dir: dir, root }
    }

    /// Writes `text` to `rel` (parents made).
    pub fn write(&self, rel: &str, text: impl AsRef<[u8]>) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// `git add -A && git commit -m msg`; the new commit's id.
    pub fn commit(&self, msg: &str) -> String {
        git(&self.root, &["add", "-A"]);
        git(&self.root, &["commit", "-q", "-m", msg]);
        git(&self.root, &["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Runs git here.
    pub fn git(&self, args: &[&str]) -> String {
        git(&self.root, args)
    }
}

/// Runs `git args` in `dir` with a fixed identity, no user or system config; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args([
            "-c",
            "protocol.file.allow=always",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
