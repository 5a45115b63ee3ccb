//! Why a creation or a listing failed, each with a stable `kind()`.

use std::path::PathBuf;

use loci_paths::{
    BeneathError, ContainError, LocatorError, ModeError, NameError, ResolveError, RootError,
    SegmentError,
};
use loci_store::StoreError;

/// Why `create` failed. [`kind`](Self::kind) is one of `no_root`,
/// `invalid_segment`, `invalid_clone_url`, `invalid_project_id`, `project_conflict`, `not_a_directory`, `mkdir`, `git` (and `registry` when
/// the confirmation could not be written).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CreateError {
    /// The root the request needs is not configured or not usable; the
    /// message names the variable to set.
    #[error(transparent)]
    NoRoot(RootError),
    /// The name or segment was refused, or it leads outside its root.
    #[error("invalid workspace location ({reason}): {message}")]
    InvalidSegment {
        /// The precise refusal (`parent_dir_component`, `escapes_root`,
        /// `mode_not_served`...).
        reason: &'static str,
        /// What was wrong, naming the value.
        message: String,
    },
    /// Something other than a directory is in the way.
    #[error("{segment:?} under the {root} root: {message}")]
    NotADirectory {
        /// Which root.
        root: &'static str,
        /// The requested segment.
        segment: String,
        /// What is in the way.
        message: String,
    },
    /// Creating the directory failed (permissions, disk full...).
    #[error("cannot create {segment:?} under the {root} root: {source}")]
    Mkdir {
        /// Which root.
        root: &'static str,
        /// The requested segment.
        segment: String,
        /// The filesystem error.
        source: BeneathError,
    },
    /// The clone URL breaks the clone policy (checked before anything is made).
    #[error("invalid clone URL ({kind}): {0}", kind = .0.kind())]
    InvalidCloneUrl(Box<crate::CloneUrlError>),
    /// `git init` or `git clone` failed, timed out or could not start.
    #[error("git {action} in {segment:?} failed: {message}")]
    Git {
        /// `init` or `clone`.
        action: &'static str,
        /// The requested segment.
        segment: String,
        /// The exit status or spawn error, and the tail of git's stderr.
        message: String,
    },
    /// The project id breaks its rule (checked before anything is made).
    #[error("invalid project id ({kind}): {0}", kind = .0.kind())]
    InvalidProjectId(crate::ProjectIdError),
    /// The project id is confirmed under another locator, or the locator for another
    /// project (checked before anything is made, and again by the confirmation).
    #[error(transparent)]
    ProjectConflict(StoreError),
    /// The registry could not be read before anything was made.
    #[error("the registry could not be checked; nothing was created: {0}")]
    RegistryRead(StoreError),
    /// The workspace exists but the registry could not record it.
    #[error("workspace created at {path:?} but not confirmed in the registry: {source}")]
    Registry {
        /// The workspace path (local; never sent over the network by the server).
        path: PathBuf,
        /// The storage error.
        source: StoreError,
    },
}

impl CreateError {
    /// A stable snake_case name: `no_root`, `invalid_segment`,
    /// `not_a_directory`, `mkdir`, `git` or `registry`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NoRoot(_) => "no_root",
            Self::InvalidSegment { .. } => "invalid_segment",
            Self::InvalidCloneUrl(_) => "invalid_clone_url",
            Self::InvalidProjectId(_) => "invalid_project_id",
            Self::ProjectConflict(_) => "project_conflict",
            Self::NotADirectory { .. } => "not_a_directory",
            Self::Mkdir { .. } => "mkdir",
            Self::Git { .. } => "git",
            Self::Registry { .. } | Self::RegistryRead(_) => "registry",
        }
    }

    /// The precise reason under the kind, when there is one
    /// (`parent_dir_component`, `projects_base_not_configured`...).
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            Self::NoRoot(e) => Some(e.kind()),
            Self::InvalidSegment { reason, .. } => Some(reason),
            Self::InvalidCloneUrl(e) => Some(e.kind()),
            Self::InvalidProjectId(e) => Some(e.kind()),
            Self::ProjectConflict(e) => e.project_conflict(),
            Self::Mkdir { source, .. } => Some(source.kind()),
            _ => None,
        }
    }

    /// A refusal of the request itself (exit code 5): `no_root`,
    /// `invalid_segment`, `not_a_directory`.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Self::NoRoot(_)
                | Self::InvalidSegment { .. }
                | Self::InvalidCloneUrl(_)
                | Self::InvalidProjectId(_)
                | Self::ProjectConflict(_)
                | Self::NotADirectory { .. }
        )
    }

    /// What an operator can do about it, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::NoRoot(e) => e.variable().map(|v| format!("set {v} to an existing directory")),
            Self::InvalidSegment { .. } => Some(
                "use a relative path of normal components (a name of A-Z a-z 0-9 _ - for --managed)"
                    .to_owned(),
            ),
            Self::NotADirectory { .. } => {
                Some("move the file out of the way or pick another folder".to_owned())
            }
            Self::InvalidCloneUrl(e) if e.kind() == "forbidden_address" => Some(
                "clone from a public address; an operator may allow more with clone.allowAddresses (LOCI_CLONE_ALLOW_ADDRESSES), e.g. `loopback` or `10.1.0.0/16`"
                    .to_owned(),
            ),
            Self::InvalidCloneUrl(_) => Some(
                "give an https://, ssh:// or user@host:path URL without credentials".to_owned(),
            ),
            Self::InvalidProjectId(_) => Some(
                "give 1 to 128 of A-Z a-z 0-9 . _ : -, starting with a letter or a digit"
                    .to_owned(),
            ),
            Self::ProjectConflict(_) => Some(
                "a project has one workspace: ask for it under the locator it already has, or use another project id"
                    .to_owned(),
            ),
            _ => None,
        }
    }
}

pub(crate) fn invalid(reason: &'static str, message: impl ToString) -> CreateError {
    CreateError::InvalidSegment {
        reason,
        message: message.to_string(),
    }
}

impl From<SegmentError> for CreateError {
    fn from(e: SegmentError) -> Self {
        invalid(e.kind(), e)
    }
}

impl From<NameError> for CreateError {
    fn from(e: NameError) -> Self {
        invalid(e.kind(), e)
    }
}

impl From<LocatorError> for CreateError {
    fn from(e: LocatorError) -> Self {
        invalid(e.kind(), e)
    }
}

impl From<ModeError> for CreateError {
    fn from(e: ModeError) -> Self {
        invalid(e.kind(), e)
    }
}

impl From<ContainError> for CreateError {
    fn from(e: ContainError) -> Self {
        match e {
            ContainError::Root(root) => CreateError::NoRoot(root),
            e => invalid(e.kind(), e),
        }
    }
}

impl From<ResolveError> for CreateError {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::Mode(e) => e.into(),
            ResolveError::Root(e) => CreateError::NoRoot(e),
            ResolveError::Contain(e) => e.into(),
            e => invalid(e.kind(), e),
        }
    }
}

/// Why `ls` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The root is not configured or not usable; names the variable.
    #[error(transparent)]
    NoRoot(RootError),
    /// The segment was refused or leads outside the root.
    #[error("invalid folder ({reason}): {message}")]
    InvalidSegment {
        /// The precise refusal.
        reason: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The folder does not exist.
    #[error(transparent)]
    NotFound(BeneathError),
    /// The folder is not a directory.
    #[error(transparent)]
    NotADirectory(BeneathError),
    /// Reading the folder failed.
    #[error(transparent)]
    Io(BeneathError),
}

impl ListError {
    /// A stable snake_case name: `no_root`, `invalid_segment`, `not_found`,
    /// `not_a_directory` or `io`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NoRoot(_) => "no_root",
            Self::InvalidSegment { .. } => "invalid_segment",
            Self::NotFound(_) => "not_found",
            Self::NotADirectory(_) => "not_a_directory",
            Self::Io(_) => "io",
        }
    }
}

impl From<BeneathError> for ListError {
    fn from(e: BeneathError) -> Self {
        match e {
            BeneathError::Root(root) => ListError::NoRoot(root),
            BeneathError::Contain(ContainError::Root(root)) => ListError::NoRoot(root),
            BeneathError::NotFound { .. } => ListError::NotFound(e),
            BeneathError::NotADirectory { .. } => ListError::NotADirectory(e),
            BeneathError::Io { .. } => ListError::Io(e),
            e => ListError::InvalidSegment {
                reason: e.kind(),
                message: e.to_string(),
            },
        }
    }
}
