//! Which two sides a diff compares, as `loci changes` names them.

/// The two sides of a diff: old on the left, new on the right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compare {
    /// `HEAD` against the working tree, staged and unstaged changes and untracked files
    /// together (the default: everything not yet committed).
    Worktree,
    /// `HEAD` against the index: what the next commit holds.
    Staged,
    /// The index against the working tree: what is not staged yet (untracked files too).
    Unstaged,
    /// A revision as git reads it: `REV` (that commit against the working tree),
    /// `A..B` (commit A against commit B), `A...B` (their merge base against B).
    Rev(String),
}

/// Longest revision text accepted (a typo'd paste of a file is refused early).
pub(crate) const MAX_REV_BYTES: usize = 1024;
