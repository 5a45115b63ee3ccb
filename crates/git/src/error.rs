//! What can go wrong reading a repository, in words a caller can act on.

use std::path::PathBuf;

/// A failure to read the repository or to name a side of the diff.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The folder is in no git repository (or in a bare one, which has no working tree).
    #[error("the workspace is not inside a git working tree")]
    NotARepository {
        /// The folder asked about.
        path: PathBuf,
    },
    /// A revision names no commit (a typo, a branch that does not exist, history a
    /// shallow clone does not have).
    #[error("revision `{rev}` not found: {reason}")]
    UnknownRevision {
        /// The revision as given.
        rev: String,
        /// libgit2's reason.
        reason: String,
    },
    /// A revision that is well formed but cannot be compared (empty, too long, a
    /// symmetric range with no merge base).
    #[error("{0}")]
    BadRevision(String),
    /// Any other libgit2 failure (a corrupt object, an unreadable index).
    #[error("git: {0}")]
    Git(String),
}

impl From<git2::Error> for GitError {
    fn from(e: git2::Error) -> GitError {
        GitError::Git(e.message().to_string())
    }
}
