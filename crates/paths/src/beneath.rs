//! Creating and listing inside a root through directory handles.
//!
//! Barrier 3 ([`contain`](crate::contain)) proves a path inside its root at
//! check time; a symlink swapped in afterwards could still lead outside if
//! the path were then used as a string. Here every operation starts from a
//! handle on the root and walks the segment from it:
//!
//! - **Linux**: each step is `openat2(root_fd, prefix, O_DIRECTORY,
//!   RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, so the kernel refuses any
//!   resolution that leaves the root (`EXDEV`, reported as
//!   [`BeneathError::Escape`]); `mkdir -p` is one `mkdirat` per component on
//!   the handle obtained that way. Symlinks that stay beneath the root are
//!   followed; absolute symlinks are refused even when they point inside.
//! - **Other Unix, or a Linux kernel without `openat2` (`ENOSYS`)**: a walk
//!   of `openat(dir, component, O_DIRECTORY | O_NOFOLLOW)`, one component at
//!   a time, which refuses every symlink ([`BeneathError::Symlink`]):
//!   stricter, equally race-free.
//! - **Elsewhere** (not Unix): paths are used as strings after barrier 3 is
//!   re-run immediately before each operation. This is best effort, not a
//!   security boundary; see `docs/paths.md`.

use std::path::PathBuf;

use serde::Serialize;

use crate::{ContainError, ContainedPath, Root, RootError, RootKind, Segment, contain};

/// Most entries [`RootDir::list_dirs`] returns; the rest are counted as
/// truncated.
pub const MAX_LIST_ENTRIES: usize = 10_000;

/// Why an operation beneath a root failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BeneathError {
    /// The root cannot be opened.
    #[error(transparent)]
    Root(#[from] RootError),
    /// The path is not contained (barrier 3, re-run).
    #[error(transparent)]
    Contain(#[from] ContainError),
    /// The contained path belongs to another root than this handle's.
    #[error("{segment:?} was contained in the {got} root, not in this {expected} root")]
    WrongRoot {
        /// This handle's root.
        expected: &'static str,
        /// The path's root.
        got: &'static str,
        /// The segment.
        segment: String,
    },
    /// Resolving the segment would leave the root (a symlink points out,
    /// possibly swapped in after the check).
    #[error("{segment:?} leads outside the root {root:?}; refused")]
    Escape {
        /// The root as configured.
        root: PathBuf,
        /// The prefix of the segment that escaped.
        segment: String,
    },
    /// A symlink on the way, where the fallback walk refuses all symlinks,
    /// or a symlink loop.
    #[error("{segment:?} under the root {root:?} goes through a symlink; refused")]
    Symlink {
        /// The root as configured.
        root: PathBuf,
        /// The prefix of the segment that is a symlink.
        segment: String,
    },
    /// Something other than a directory is in the way.
    #[error("{segment:?} under the root {root:?} exists and is not a directory")]
    NotADirectory {
        /// The root as configured.
        root: PathBuf,
        /// The prefix of the segment that is not a directory.
        segment: String,
    },
    /// The directory does not exist.
    #[error("{segment:?} under the root {root:?} does not exist")]
    NotFound {
        /// The root as configured.
        root: PathBuf,
        /// The prefix of the segment that is missing.
        segment: String,
    },
    /// Any other filesystem error.
    #[error("{op} {segment:?} under the root {root:?}: {source}")]
    Io {
        /// The operation: `open`, `mkdir`, `read_dir`, `stat`.
        op: &'static str,
        /// The root as configured.
        root: PathBuf,
        /// The segment (or prefix) involved.
        segment: String,
        /// What the filesystem said.
        source: std::io::Error,
    },
}

impl BeneathError {
    /// A stable snake_case name for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Root(e) => e.kind(),
            Self::Contain(e) => e.kind(),
            Self::WrongRoot { .. } => "wrong_root",
            Self::Escape { .. } => "escapes_root",
            Self::Symlink { .. } => "symlink_refused",
            Self::NotADirectory { .. } => "not_a_directory",
            Self::NotFound { .. } => "not_found",
            Self::Io { .. } => "io",
        }
    }
}

/// What is at a contained path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Probe {
    /// Nothing.
    Missing,
    /// A directory (reached beneath the root).
    Directory,
    /// Something else: a file, a device...
    NotADirectory,
}

/// One directory in a [`Listing`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DirEntry {
    /// Its name.
    pub name: String,
    /// Its segment under the root (what a caller sends back).
    pub segment: Segment,
    /// The name starts with `.`.
    pub hidden: bool,
    /// It has a `.git` entry.
    pub repository: bool,
}

/// The directories directly under a root or a folder in it: the folder
/// picker. Holds no absolute path, so it may cross a network boundary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// Which root.
    pub root: RootKind,
    /// The folder listed, `None` for the root itself.
    pub segment: Option<Segment>,
    /// Real directories (not symlinks) whose names are valid segment
    /// components, sorted by name.
    pub entries: Vec<DirEntry>,
    /// Directories left out because their name is not a valid segment
    /// component (not UTF-8, not NFC, control characters...).
    pub skipped: usize,
    /// Entries left out past [`MAX_LIST_ENTRIES`].
    pub truncated: usize,
}

/// What an entry is, seen without following symlinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A regular file.
    File,
    /// A symlink (not followed).
    Symlink,
    /// Anything else.
    Other,
}

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{OpenedDir, RootDir};

#[cfg(not(unix))]
mod fallback;
#[cfg(not(unix))]
pub use fallback::{OpenedDir, RootDir};

fn check_root(root: &Root, target: &ContainedPath) -> Result<(), BeneathError> {
    if target.root() != root {
        return Err(BeneathError::WrongRoot {
            expected: root.kind().as_str(),
            got: target.root_kind().as_str(),
            segment: target.segment().to_string(),
        });
    }
    Ok(())
}

/// Whether `name` is one entry name of a directory (`.git` included, which no
/// segment may hold): not empty, `.` or `..`, no `/` and no NUL.
fn is_one_component(name: &str) -> bool {
    !matches!(name, "" | "." | "..") && !name.contains(['/', '\0'])
}

fn sub_segment(under: Option<&ContainedPath>, name: &str) -> Option<Segment> {
    match under {
        Some(parent) => parent.segment().join(name).ok(),
        None => Segment::parse(name).ok().filter(|s| s.depth() == 1),
    }
}

/// Opens the root of `kind` and lists the directories under `segment` (the
/// root itself when `None`), after barrier 3: the one call a folder picker
/// needs.
pub fn list_dirs(root: &Root, segment: Option<&Segment>) -> Result<Listing, BeneathError> {
    let dir = RootDir::open(root)?;
    match segment {
        None => dir.list_dirs(None),
        Some(segment) => {
            let target = contain(root, segment)?;
            dir.list_dirs(Some(&target))
        }
    }
}

/// Opens the root of `target` and creates every missing directory of its
/// segment beneath it (`mkdir -p`), returning a handle on the last one.
pub fn create_dir_all(target: &ContainedPath) -> Result<OpenedDir, BeneathError> {
    RootDir::open(target.root())?.create_dir_all(target)
}
