//! Barriers 1 and 3: the caller-side check that a path is under a root, and
//! the validation of `root + segment` as a whole, lexically and physically.
//! Also the two-way loop check for copies and mirrors.
//!
//! Containment is always component-wise (`/base-outra` is not inside
//! `/base`), never a string prefix.

use std::io;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::{Locator, Root, RootError, RootKind, Segment, SegmentError, WorkspaceName};

/// Longest `root + segment` accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// A workspace path proven inside its root, lexically and on the real path
/// of its nearest existing ancestor. Only this crate constructs one, through
/// [`contain`] (or [`Roots::resolve`](crate::Roots::resolve)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContainedPath {
    #[serde(skip)]
    root: Root,
    root_kind: RootKind,
    segment: Segment,
    #[serde(skip)]
    path: PathBuf,
    #[serde(skip)]
    real: PathBuf,
}

impl ContainedPath {
    /// The root it is contained in.
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Which root.
    pub fn root_kind(&self) -> RootKind {
        self.root_kind
    }

    /// The segment under the root.
    pub fn segment(&self) -> &Segment {
        &self.segment
    }

    /// `root + segment`, lexically (the root as configured).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The real path at check time: the nearest existing ancestor with
    /// symlinks resolved, and the missing suffix re-appended.
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// The locator naming this path (never an absolute path).
    pub fn locator(&self) -> Locator {
        match self.root_kind {
            RootKind::Base => Locator::Mounted {
                segment: self.segment.clone(),
            },
            RootKind::Managed => match WorkspaceName::parse(self.segment.as_str()) {
                Ok(name) => Locator::Managed { name },
                Err(e) => Locator::unavailable(format!(
                    "segment {} is not a managed workspace name: {e}",
                    self.segment
                )),
            },
        }
    }
}

/// Why `root + segment` was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContainError {
    /// The root is missing or unusable.
    #[error(transparent)]
    Root(#[from] RootError),
    /// Lexically, the joined path is not strictly inside the root.
    #[error("{path:?} is not strictly inside the root {root:?}")]
    OutsideRoot {
        /// The root.
        root: PathBuf,
        /// The joined path.
        path: PathBuf,
    },
    /// The joined path is longer than [`MAX_PATH_BYTES`].
    #[error("{path:?} is {len} bytes, over the limit of {max} bytes")]
    PathTooLong {
        /// The joined path.
        path: PathBuf,
        /// Length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The nearest existing ancestor cannot be resolved (a dangling symlink,
    /// a loop, no permission).
    #[error("cannot resolve {path:?}: {source}")]
    Unresolvable {
        /// The ancestor that failed.
        path: PathBuf,
        /// What the filesystem said.
        source: io::Error,
    },
    /// Physically, the real path leaves the root (a symlink points out).
    #[error("{path:?} resolves to {real:?}, outside the root's real path {root:?}")]
    EscapesRoot {
        /// The root's real path.
        root: PathBuf,
        /// The joined path.
        path: PathBuf,
        /// Where it really leads.
        real: PathBuf,
    },
}

impl ContainError {
    /// A stable snake_case name for this refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Root(e) => e.kind(),
            Self::OutsideRoot { .. } => "outside_root",
            Self::PathTooLong { .. } => "path_too_long",
            Self::Unresolvable { .. } => "unresolvable",
            Self::EscapesRoot { .. } => "escapes_root",
        }
    }
}

/// Barrier 3: validates `root + segment` as a whole. Lexically, the raw
/// segment and the joined path's components must stay strictly inside the
/// root (this does not trust that `segment` was validated). Physically, the
/// nearest existing ancestor is resolved with symlinks, the missing suffix
/// re-appended, and the result must be strictly inside the root's real path.
pub fn contain(root: &Root, segment: &Segment) -> Result<ContainedPath, ContainError> {
    let path = root.path().join(segment.as_str());
    let outside = || ContainError::OutsideRoot {
        root: root.path().to_path_buf(),
        path: path.clone(),
    };
    if !raw_components_are_normal(segment.as_str()) || !strictly_inside(root.path(), &path) {
        return Err(outside());
    }
    let len = path.as_os_str().len();
    if len > MAX_PATH_BYTES {
        return Err(ContainError::PathTooLong {
            path,
            len,
            max: MAX_PATH_BYTES,
        });
    }
    let real_root = root.real_path()?;
    let real = real_path_with_suffix(&path, root.path())?;
    if !strictly_inside(&real_root, &real) {
        return Err(ContainError::EscapesRoot {
            root: real_root,
            path,
            real,
        });
    }
    Ok(ContainedPath {
        root: root.clone(),
        root_kind: root.kind(),
        segment: segment.clone(),
        path,
        real,
    })
}

/// The real path of `path`: its nearest existing ancestor (at or below
/// `stop`, which must exist) resolved with symlinks, with the missing suffix
/// re-appended. `path` must be absolute and free of `..`.
pub(crate) fn real_path_with_suffix(path: &Path, stop: &Path) -> Result<PathBuf, ContainError> {
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let mut candidate = path;
    loop {
        match std::fs::symlink_metadata(candidate) {
            Ok(_) => break,
            Err(e) if is_missing(&e) && candidate != stop => {}
            Err(source) => {
                return Err(ContainError::Unresolvable {
                    path: candidate.to_path_buf(),
                    source,
                });
            }
        }
        match (candidate.file_name(), candidate.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                candidate = parent;
            }
            _ => break,
        }
    }
    let mut real =
        std::fs::canonicalize(candidate).map_err(|source| ContainError::Unresolvable {
            path: candidate.to_path_buf(),
            source,
        })?;
    real.extend(missing.iter().rev());
    Ok(real)
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The raw string, split on `/`, has only non-empty components other than
/// `.` and `..`, no backslash and no NUL.
fn raw_components_are_normal(raw: &str) -> bool {
    !raw.contains(['\\', '\0'])
        && raw
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// `path` is strictly inside `ancestor`, component-wise: the ancestor's
/// components are a proper prefix of the path's, and what remains is only
/// normal components. Neither may contain `..`.
pub fn strictly_inside(ancestor: &Path, path: &Path) -> bool {
    relative_under(ancestor, path).is_some_and(|rest| rest.components().next().is_some())
}

/// `path` is `ancestor` or inside it, component-wise.
pub fn inside_or_equal(ancestor: &Path, path: &Path) -> bool {
    relative_under(ancestor, path).is_some()
}

fn relative_under<'a>(ancestor: &Path, path: &'a Path) -> Option<&'a Path> {
    let clean = |p: &Path| {
        p.is_absolute()
            && p.components()
                .all(|c| !matches!(c, Component::ParentDir | Component::CurDir))
    };
    if !clean(ancestor) || !clean(path) {
        return None;
    }
    let rest = path.strip_prefix(ancestor).ok()?;
    rest.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(rest)
}

/// Why a path could not be located under a root (barrier 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UnderError {
    /// The path is not absolute.
    #[error("{path:?} is not an absolute path")]
    NotAbsolute {
        /// The path.
        path: PathBuf,
    },
    /// The path has a `..` component (refused before any normalisation).
    #[error("{path:?} has a '..' component")]
    ParentComponent {
        /// The path.
        path: PathBuf,
    },
    /// The path is the root itself: a root is never a workspace.
    #[error("{path:?} is the root itself, not a folder under it")]
    IsRoot {
        /// The path.
        path: PathBuf,
    },
    /// The path is not under the root.
    #[error("{path:?} is not under the root {root:?}")]
    NotUnder {
        /// The root.
        root: PathBuf,
        /// The path.
        path: PathBuf,
    },
    /// The remainder is not a valid segment.
    #[error(transparent)]
    Segment(#[from] SegmentError),
}

impl UnderError {
    /// A stable snake_case name for this refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotAbsolute { .. } => "not_absolute",
            Self::ParentComponent { .. } => "parent_dir_component",
            Self::IsRoot { .. } => "is_root",
            Self::NotUnder { .. } => "not_under_root",
            Self::Segment(e) => e.kind(),
        }
    }
}

/// Barrier 1, the caller-side check: the segment of `path` under `root`,
/// component-wise. `path` must be absolute and have no `..`; `.` and
/// doubled or trailing separators in it are lexically harmless and are
/// dropped; the remainder must then pass [`Segment::parse`]. The root
/// itself is refused ([`UnderError::IsRoot`]), never an empty segment.
pub fn segment_under(root: &Path, path: &Path) -> Result<Segment, UnderError> {
    if !path.is_absolute() {
        return Err(UnderError::NotAbsolute {
            path: path.to_path_buf(),
        });
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(UnderError::ParentComponent {
            path: path.to_path_buf(),
        });
    }
    let root_clean: PathBuf = root.components().collect();
    let path_clean: PathBuf = path.components().collect();
    let rest = match relative_under(&root_clean, &path_clean) {
        Some(rest) => rest,
        None => {
            return Err(UnderError::NotUnder {
                root: root.to_path_buf(),
                path: path.to_path_buf(),
            });
        }
    };
    if rest.as_os_str().is_empty() {
        return Err(UnderError::IsRoot {
            path: path.to_path_buf(),
        });
    }
    Ok(Segment::from_path(rest)?)
}

/// The locator for a local absolute path under `root`: `mounted` (or
/// `managed`, for the managed root and a valid one-level name) when it is
/// strictly under it, `unavailable` with the reason otherwise, the root
/// itself included.
pub fn locate(root: &Root, path: &Path) -> Locator {
    match segment_under(root.path(), path) {
        Ok(segment) => match root.kind() {
            RootKind::Base => Locator::Mounted { segment },
            RootKind::Managed => match WorkspaceName::parse(segment.as_str()) {
                Ok(name) => Locator::Managed { name },
                Err(e) => Locator::unavailable(format!(
                    "the folder is under the managed root but {segment:?} is not a workspace name: {e}"
                )),
            },
        },
        Err(UnderError::IsRoot { .. }) => Locator::unavailable(format!(
            "the folder is the {} root itself, which is never a workspace",
            root.kind().as_str()
        )),
        Err(e) => Locator::unavailable(e.to_string()),
    }
}

/// Why a copy or mirror between a workspace and a destination was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoopError {
    /// One of the paths is not absolute or has `..`.
    #[error("{path:?} must be absolute and without '..'")]
    NotClean {
        /// The path.
        path: PathBuf,
    },
    /// The destination is the workspace or inside it.
    #[error("destination {destination:?} is inside the workspace {workspace:?}")]
    DestinationInsideWorkspace {
        /// The workspace.
        workspace: PathBuf,
        /// The destination.
        destination: PathBuf,
    },
    /// The workspace is inside the destination.
    #[error("workspace {workspace:?} is inside the destination {destination:?}")]
    WorkspaceInsideDestination {
        /// The workspace.
        workspace: PathBuf,
        /// The destination.
        destination: PathBuf,
    },
    /// A path could not be resolved.
    #[error(transparent)]
    Resolve(#[from] ContainError),
}

impl LoopError {
    /// A stable snake_case name for this refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotClean { .. } => "not_clean",
            Self::DestinationInsideWorkspace { .. } => "destination_inside_workspace",
            Self::WorkspaceInsideDestination { .. } => "workspace_inside_destination",
            Self::Resolve(e) => e.kind(),
        }
    }
}

/// The two-way loop check for copy and mirror: refuses a destination that
/// is the workspace or inside it, and a workspace inside the destination.
/// Checked lexically and again on real paths (nearest existing ancestor,
/// missing suffix re-appended), component-wise.
pub fn check_no_loop(workspace: &Path, destination: &Path) -> Result<(), LoopError> {
    for p in [workspace, destination] {
        if !p.is_absolute() || p.components().any(|c| c == Component::ParentDir) {
            return Err(LoopError::NotClean {
                path: p.to_path_buf(),
            });
        }
    }
    let lexical = (
        workspace.components().collect::<PathBuf>(),
        destination.components().collect::<PathBuf>(),
    );
    let real = (
        real_path_with_suffix(workspace, Path::new("/"))?,
        real_path_with_suffix(destination, Path::new("/"))?,
    );
    for (ws, dest) in [lexical, real] {
        if inside_or_equal(&ws, &dest) {
            return Err(LoopError::DestinationInsideWorkspace {
                workspace: workspace.to_path_buf(),
                destination: destination.to_path_buf(),
            });
        }
        if inside_or_equal(&dest, &ws) {
            return Err(LoopError::WorkspaceInsideDestination {
                workspace: workspace.to_path_buf(),
                destination: destination.to_path_buf(),
            });
        }
    }
    Ok(())
}
