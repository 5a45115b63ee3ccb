//! Where a checkout is: the commit `HEAD` names, the branch if any, and whether the
//! working tree differs from that commit. An index records it so every answer can say
//! which commit it reflects; a watcher watches the files that move it.

use std::path::{Path, PathBuf};

use git2::{ErrorCode, StatusOptions};

use crate::error::GitError;
use crate::repo::Repo;

/// The commit a checkout is at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// `HEAD`'s commit, full hex; `None` on a branch with no commit yet.
    pub commit: Option<String>,
    /// The branch `HEAD` is on (`main`); `None` when detached.
    pub branch: Option<String>,
}

impl Repo {
    /// What `HEAD` names now: a read of `HEAD` and the ref it points to.
    pub fn head_state(&self) -> Result<Head, GitError> {
        let repo = self.git2();
        let detached = repo.head_detached().unwrap_or(false);
        let branch = if detached {
            None
        } else {
            // An unborn branch still has a name: `HEAD` is a symbolic ref to it.
            repo.find_reference("HEAD")
                .ok()
                .and_then(|r| r.symbolic_target().map(str::to_string))
                .map(|t| t.strip_prefix("refs/heads/").unwrap_or(&t).to_string())
        };
        let commit = match repo.head() {
            // The id `HEAD` resolves to, without reading the commit object (every
            // answer's freshness asks); a reference to something else is peeled.
            Ok(r) => match r.target() {
                Some(id) => Some(id.to_string()),
                None => Some(r.peel_to_commit()?.id().to_string()),
            },
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
            Err(e) => return Err(e.into()),
        };
        Ok(Head { commit, branch })
    }

    /// Whether the working tree under the workspace root differs from `HEAD`: a tracked
    /// file modified, staged, deleted or renamed, or an untracked file that is not
    /// ignored, other than the folder `own_dir` (relative to the workspace root: loci's
    /// `.loci`, whose index is no change to the code). Read-only: git's index is
    /// consulted, never refreshed on disk.
    pub fn worktree_modified(&self, own_dir: &str) -> Result<bool, GitError> {
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(false)
            .include_ignored(false)
            .exclude_submodules(true)
            .update_index(false);
        if !self.prefix().is_empty() {
            opts.pathspec(self.prefix()).disable_pathspec_match(true);
        }
        let own = format!("{}{}/", self.prefix(), own_dir.trim_end_matches('/'));
        let statuses = self.git2().statuses(Some(&mut opts))?;
        Ok(statuses.iter().any(|entry| {
            let path = String::from_utf8_lossy(entry.path_bytes());
            let own_file = path.starts_with(&own) || path == own.trim_end_matches('/');
            !(own_file && entry.status() == git2::Status::WT_NEW)
        }))
    }

    /// The repository's git directory (`.git`, or a linked worktree's own).
    pub fn git_dir(&self) -> &Path {
        self.git2().path()
    }

    /// The files whose change moves `HEAD`: `HEAD` itself, `packed-refs` and the loose
    /// refs under `refs/` (of the common directory, for a linked worktree too).
    pub fn head_files(&self) -> HeadFiles {
        let common = self.git2().commondir().to_path_buf();
        HeadFiles {
            git_dir: self.git_dir().to_path_buf(),
            common_dir: common,
        }
    }
}

/// Where the files that move `HEAD` live, for a watcher to tell their events apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadFiles {
    /// The git directory holding `HEAD`.
    pub git_dir: PathBuf,
    /// The common directory holding `refs/` and `packed-refs` (the git directory
    /// unless this is a linked worktree).
    pub common_dir: PathBuf,
}

impl HeadFiles {
    /// Whether a change to `path` can move `HEAD`. Lock files (`HEAD.lock`) are not:
    /// git renames them onto the ref, and that rename names the ref itself.
    pub fn moves_head(&self, path: &Path) -> bool {
        if path.extension().is_some_and(|e| e == "lock") {
            return false;
        }
        let under = |dir: &Path, rel: &str| path == dir.join(rel);
        under(&self.git_dir, "HEAD")
            || under(&self.common_dir, "packed-refs")
            || path.starts_with(self.common_dir.join("refs"))
            || path.starts_with(self.git_dir.join("refs"))
    }
}
