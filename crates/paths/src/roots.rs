//! The two roots, from local configuration only.
//!
//! The managed root (`LOCI_MANAGED_ROOT` / `roots.managed`) holds
//! workspaces loci names itself; the projects base (`LOCI_PROJECTS_BASE` /
//! `roots.base`) holds workspaces users name by a relative segment. There is
//! no inheritance between them: a missing root is its own error, naming the
//! variable to set, and never falls back to the other root (that would open
//! another project's folder).

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Environment variable naming the managed root.
pub const MANAGED_ROOT_VAR: &str = "LOCI_MANAGED_ROOT";
/// Environment variable naming the projects base.
pub const PROJECTS_BASE_VAR: &str = "LOCI_PROJECTS_BASE";
/// Configuration key naming the managed root.
pub const MANAGED_ROOT_KEY: &str = "roots.managed";
/// Configuration key naming the projects base.
pub const PROJECTS_BASE_KEY: &str = "roots.base";

/// Which of the two roots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootKind {
    /// The managed root: workspaces named by a [`WorkspaceName`](crate::WorkspaceName).
    Managed,
    /// The projects base: workspaces named by a [`Segment`](crate::Segment)
    /// (the `mounted` locator kind).
    Base,
}

impl RootKind {
    /// The environment variable that sets this root.
    pub fn variable(self) -> &'static str {
        match self {
            Self::Managed => MANAGED_ROOT_VAR,
            Self::Base => PROJECTS_BASE_VAR,
        }
    }

    /// The configuration key that sets this root.
    pub fn config_key(self) -> &'static str {
        match self {
            Self::Managed => MANAGED_ROOT_KEY,
            Self::Base => PROJECTS_BASE_KEY,
        }
    }

    /// `"managed"` or `"base"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Managed => "managed",
            Self::Base => "base",
        }
    }

    fn not_configured(self) -> RootError {
        match self {
            Self::Managed => RootError::ManagedRootNotConfigured,
            Self::Base => RootError::ProjectsBaseNotConfigured,
        }
    }
}

/// Where a root's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootOrigin {
    /// The environment variable ([`RootKind::variable`]).
    Env,
    /// The configuration file key ([`RootKind::config_key`]).
    Config,
}

/// A configured root: an absolute path without `..` components.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    kind: RootKind,
    path: PathBuf,
    origin: RootOrigin,
}

/// A root that is missing or unusable. Each names the variable to set.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RootError {
    /// No managed root: neither the variable nor the config key is set.
    #[error(
        "the managed root is not configured: set {MANAGED_ROOT_VAR} (or {MANAGED_ROOT_KEY} in the configuration file)"
    )]
    ManagedRootNotConfigured,
    /// No projects base: neither the variable nor the config key is set.
    #[error(
        "the projects base is not configured: set {PROJECTS_BASE_VAR} (or {PROJECTS_BASE_KEY} in the configuration file)"
    )]
    ProjectsBaseNotConfigured,
    /// The configured value is not an absolute path.
    #[error("{setting} must be an absolute path, got {path:?}")]
    NotAbsolute {
        /// The variable or key that holds it.
        setting: &'static str,
        /// The value.
        path: PathBuf,
    },
    /// The configured value has a `..` component.
    #[error("{setting} must not contain '..', got {path:?}")]
    ParentComponent {
        /// The variable or key that holds it.
        setting: &'static str,
        /// The value.
        path: PathBuf,
    },
    /// The root is configured but cannot be used (missing, not a
    /// directory, unreadable).
    #[error("{setting} is {path:?}, which cannot be used: {source}")]
    Unavailable {
        /// The variable or key that holds it.
        setting: &'static str,
        /// The value.
        path: PathBuf,
        /// What the filesystem said.
        source: std::io::Error,
    },
}

impl RootError {
    /// A stable snake_case name for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ManagedRootNotConfigured => "managed_root_not_configured",
            Self::ProjectsBaseNotConfigured => "projects_base_not_configured",
            Self::NotAbsolute { .. } => "root_not_absolute",
            Self::ParentComponent { .. } => "root_has_parent_component",
            Self::Unavailable { .. } => "root_unavailable",
        }
    }

    /// The environment variable an operator should look at.
    pub fn variable(&self) -> Option<&'static str> {
        match self {
            Self::ManagedRootNotConfigured => Some(MANAGED_ROOT_VAR),
            Self::ProjectsBaseNotConfigured => Some(PROJECTS_BASE_VAR),
            Self::NotAbsolute { setting, .. }
            | Self::ParentComponent { setting, .. }
            | Self::Unavailable { setting, .. } => Some(setting),
        }
    }
}

/// Looks one root up from the values the caller read: `env` (the value of
/// [`RootKind::variable`], if set) wins over `config` (the value of
/// [`RootKind::config_key`], if set). An empty value counts as unset. No
/// other root is consulted.
pub fn lookup_root(
    kind: RootKind,
    env: Option<&OsStr>,
    config: Option<&Path>,
) -> Result<Root, RootError> {
    let env = env.filter(|v| !v.is_empty());
    let config = config.filter(|v| !v.as_os_str().is_empty());
    let (path, origin, setting) = match (env, config) {
        (Some(v), _) => (PathBuf::from(v), RootOrigin::Env, kind.variable()),
        (None, Some(p)) => (p.to_path_buf(), RootOrigin::Config, kind.config_key()),
        (None, None) => return Err(kind.not_configured()),
    };
    Root::new(kind, path, origin, setting)
}

impl Root {
    fn new(
        kind: RootKind,
        path: PathBuf,
        origin: RootOrigin,
        setting: &'static str,
    ) -> Result<Root, RootError> {
        if !path.is_absolute() {
            return Err(RootError::NotAbsolute { setting, path });
        }
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(RootError::ParentComponent { setting, path });
        }
        // `components()` drops `.`, doubled and trailing separators.
        let path: PathBuf = path.components().collect();
        Ok(Root { kind, path, origin })
    }

    /// Which root this is.
    pub fn kind(&self) -> RootKind {
        self.kind
    }

    /// The absolute path as configured (lexically cleaned of `.`, `//` and
    /// trailing `/`; symlinks are not resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the value came from.
    pub fn origin(&self) -> RootOrigin {
        self.origin
    }

    /// The variable or key that set this root, for error messages.
    pub fn setting(&self) -> &'static str {
        match self.origin {
            RootOrigin::Env => self.kind.variable(),
            RootOrigin::Config => self.kind.config_key(),
        }
    }

    /// The root's real path (symlinks resolved). Fails when the root does
    /// not exist or is not a directory.
    pub fn real_path(&self) -> Result<PathBuf, RootError> {
        let unavailable = |source| RootError::Unavailable {
            setting: self.setting(),
            path: self.path.clone(),
            source,
        };
        let real = std::fs::canonicalize(&self.path).map_err(unavailable)?;
        if !real.is_dir() {
            return Err(unavailable(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "not a directory",
            )));
        }
        Ok(real)
    }
}

/// Both roots of one installation. Either may be absent: that is a
/// legitimate state, reported when that root is asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roots {
    managed: Option<Root>,
    base: Option<Root>,
}

/// The values read for one root, handed to [`Roots::from_values`].
#[derive(Clone, Debug, Default)]
pub struct RootValues {
    /// The environment variable's value, if set.
    pub env: Option<OsString>,
    /// The configuration key's value, if set.
    pub config: Option<PathBuf>,
}

impl Roots {
    /// Both roots from explicit values (no process environment read). A
    /// root with neither value is absent; a root with an invalid value is an
    /// error now, so a misconfigured server refuses to start.
    pub fn from_values(managed: RootValues, base: RootValues) -> Result<Roots, RootError> {
        let one = |kind, values: RootValues| match lookup_root(
            kind,
            values.env.as_deref(),
            values.config.as_deref(),
        ) {
            Ok(root) => Ok(Some(root)),
            Err(RootError::ManagedRootNotConfigured | RootError::ProjectsBaseNotConfigured) => {
                Ok(None)
            }
            Err(e) => Err(e),
        };
        Ok(Roots {
            managed: one(RootKind::Managed, managed)?,
            base: one(RootKind::Base, base)?,
        })
    }

    /// Both roots from the process environment ([`MANAGED_ROOT_VAR`],
    /// [`PROJECTS_BASE_VAR`]) over the configuration file's values.
    pub fn from_env(
        managed_config: Option<&Path>,
        base_config: Option<&Path>,
    ) -> Result<Roots, RootError> {
        Roots::from_values(
            RootValues {
                env: std::env::var_os(MANAGED_ROOT_VAR),
                config: managed_config.map(Path::to_path_buf),
            },
            RootValues {
                env: std::env::var_os(PROJECTS_BASE_VAR),
                config: base_config.map(Path::to_path_buf),
            },
        )
    }

    /// The root of `kind`, or the error naming its variable.
    pub fn get(&self, kind: RootKind) -> Result<&Root, RootError> {
        let root = match kind {
            RootKind::Managed => self.managed.as_ref(),
            RootKind::Base => self.base.as_ref(),
        };
        root.ok_or_else(|| kind.not_configured())
    }

    /// The managed root, or [`RootError::ManagedRootNotConfigured`].
    pub fn managed(&self) -> Result<&Root, RootError> {
        self.get(RootKind::Managed)
    }

    /// The projects base, or [`RootError::ProjectsBaseNotConfigured`].
    pub fn base(&self) -> Result<&Root, RootError> {
        self.get(RootKind::Base)
    }

    /// `text` with each configured root's path (as configured and real)
    /// replaced by `$VARIABLE`, for messages that cross a network boundary
    /// (DESIGN.md invariant 1): `/srv/base/team/app` becomes
    /// `$LOCI_PROJECTS_BASE/team/app`.
    pub fn redact(&self, text: &str) -> String {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for root in [&self.managed, &self.base].into_iter().flatten() {
            let name = format!("${}", root.kind().variable());
            let real = std::fs::canonicalize(root.path()).ok();
            for path in std::iter::once(root.path()).chain(real.as_deref()) {
                if let Some(p) = path.to_str().filter(|p| *p != "/") {
                    pairs.push((p.to_owned(), name.clone()));
                }
            }
        }
        // Longest first, so a root nested in another is replaced whole.
        pairs.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        let mut out = text.to_owned();
        for (path, name) in pairs {
            out = out.replace(&path, &name);
        }
        out
    }
}
