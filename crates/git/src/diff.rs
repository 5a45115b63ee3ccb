//! What a diff says, as plain data: the sides it compares and each changed file with the
//! exact line ranges its hunks remove and add.

/// One side of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideInfo {
    /// How it was named: `HEAD`, `index`, `working tree`, or the revision as given.
    pub label: String,
    /// The commit's full hex id, for a committed side (absent for the index, the
    /// working tree, and a `HEAD` with no commit yet).
    pub commit: Option<String>,
    /// Whether the side is the working tree (its files are read from disk, not blobs).
    pub worktree: bool,
}

/// How a file changed between the sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Only on the new side (untracked files of the working tree too).
    Added,
    /// On both sides at the same path, different content.
    Modified,
    /// Only on the old side.
    Deleted,
    /// Moved to another path, perhaps also edited (see [`FileChange::similarity`]).
    Renamed,
    /// The same path changed kind (a file became a symlink or a submodule).
    TypeChanged,
}

/// What a changed file holds, which decides whether its lines can be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Text: its hunks are listed.
    Text,
    /// Binary, or larger than the diff's size limit: no hunks.
    Binary,
    /// A symbolic link (its target is the content; never followed).
    Symlink,
    /// A submodule (a commit of another repository): no lines of its own.
    Submodule,
}

/// Lines `start..=end`, 1-based, on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    /// First line.
    pub start: u32,
    /// Last line (inclusive).
    pub end: u32,
}

impl LineRange {
    /// Whether `start..=end` shares a line with this range.
    pub fn overlaps(&self, start: u32, end: u32) -> bool {
        self.start <= end && start <= self.end
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// How it changed.
    pub status: Status,
    /// Its path on the old side, relative to the workspace root (absent when added).
    pub old_path: Option<String>,
    /// Its path on the new side, relative to the workspace root (absent when deleted).
    pub new_path: Option<String>,
    /// For a rename, how similar the two contents are, 0..=100 (git's score).
    pub similarity: Option<u8>,
    /// What it holds (the new side's kind, else the old side's).
    pub content: Content,
    /// Old-side lines the hunks remove, in order (no context lines).
    pub removed: Vec<LineRange>,
    /// New-side lines the hunks add, in order (no context lines).
    pub added: Vec<LineRange>,
    /// Lines removed in all.
    pub lines_removed: u32,
    /// Lines added in all.
    pub lines_added: u32,
    pub(crate) old_id: Option<git2::Oid>,
    pub(crate) new_id: Option<git2::Oid>,
    pub(crate) old_is_link: bool,
    pub(crate) new_is_link: bool,
}

impl FileChange {
    /// The path shown for the file: the new one, else the old one.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or_default()
    }
}

/// A diff between two sides of a repository, bounded.
#[derive(Debug, Clone)]
pub struct Diff {
    /// The old side.
    pub old: SideInfo,
    /// The new side.
    pub new: SideInfo,
    /// The changed files, by path (at most the limit asked for).
    pub files: Vec<FileChange>,
    /// Changed files in all (more than `files.len()` when the limit cut the list).
    pub files_total: usize,
}
