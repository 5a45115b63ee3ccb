//! `create`: validate, `mkdir -p` beneath the root, `git init` or clone,
//! confirm in the registry.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use loci_paths::{
    BeneathError, FileKind, Locator, Mode, RootDir, Roots, SERVED_MODES, Segment, WorkspaceName,
    contain,
};
use loci_store::registry::Registry;
use loci_supervisor::Supervisor;
use serde::{Deserialize, Serialize};

use crate::error::invalid;
use crate::git::{Destination, GitRun};
use crate::{ClonePolicy, CreateError, ProjectId};

/// Time budget for `git init` / `git clone`.
pub const GIT_BUDGET: Duration = Duration::from_secs(120);

/// Bytes of git's output kept per stream.
pub const GIT_OUTPUT_CAP: usize = 8 << 20;

/// Where to create a workspace, as the caller spelled it. Validated by
/// [`create`], so a bad value fails as `invalid_segment`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Target {
    /// `--managed NAME`: under the managed root.
    Managed {
        /// The workspace name.
        name: String,
    },
    /// `--mounted SEGMENT`: under the projects base.
    Mounted {
        /// The relative path under the base.
        segment: String,
    },
}

/// A creation request: `--mounted SEGMENT | --managed NAME`, `[--clone URL]`,
/// `[--project ID]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRequest {
    /// Where.
    pub target: Target,
    /// Clone this URL into the new folder instead of `git init`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_url: Option<String>,
    /// The caller's project this workspace is for (checked by [`ProjectId::parse`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
}

impl CreateRequest {
    /// `--mounted SEGMENT`.
    pub fn mounted(segment: impl Into<String>) -> CreateRequest {
        CreateRequest {
            target: Target::Mounted {
                segment: segment.into(),
            },
            clone_url: None,
            project_id: None,
        }
    }

    /// `--managed NAME`.
    pub fn managed(name: impl Into<String>) -> CreateRequest {
        CreateRequest {
            target: Target::Managed { name: name.into() },
            clone_url: None,
            project_id: None,
        }
    }

    /// A request for an already parsed locator (the HTTP server's case). An
    /// `unavailable` locator is refused as `invalid_segment`.
    pub fn for_locator(locator: &Locator) -> Result<CreateRequest, CreateError> {
        match locator {
            Locator::Managed { name } => Ok(CreateRequest::managed(name.as_str())),
            Locator::Mounted { segment } => Ok(CreateRequest::mounted(segment.as_str())),
            Locator::Unavailable { reason } => Err(invalid(
                "unavailable",
                format!("the workspace is unavailable on this server: {reason}"),
            )),
        }
    }

    /// `--clone URL`.
    pub fn clone_from(mut self, url: impl Into<String>) -> CreateRequest {
        self.clone_url = Some(url.into());
        self
    }

    /// `--project ID`: confirm the workspace for this project.
    pub fn for_project(mut self, project_id: impl Into<String>) -> CreateRequest {
        self.project_id = Some(project_id.into());
        self
    }

    /// The validated locator, or `invalid_segment`.
    pub fn locator(&self) -> Result<Locator, CreateError> {
        Ok(match &self.target {
            Target::Managed { name } => Locator::Managed {
                name: WorkspaceName::parse(name)?,
            },
            Target::Mounted { segment } => Locator::Mounted {
                segment: Segment::parse(segment)?,
            },
        })
    }
}

/// What happened in the folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `git init` ran.
    Initialized,
    /// `git clone` ran.
    Cloned,
    /// The folder already had `.git`; git was not run.
    AlreadyARepository,
}

/// The registry's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Confirmed {
    /// The registry id.
    pub id: i64,
    /// Whether the registry was written (false on a repeated confirmation).
    pub changed: bool,
    /// Unix seconds of the first confirmation.
    pub verified_at: Option<i64>,
}

/// A created (or already existing) workspace. Serializes without any
/// absolute path (DESIGN.md invariant 1): `path` is for local callers only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Created {
    /// How callers name it from now on.
    pub locator: Locator,
    /// What was done.
    pub action: Action,
    /// Whether the folder itself was created (false when it existed).
    pub created_dir: bool,
    /// The registry confirmation.
    pub confirmed: Confirmed,
    /// The project the workspace is confirmed for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// The workspace's real path on this machine. Not serialized.
    #[serde(skip)]
    pub path: PathBuf,
}

/// Limits and policy for [`create_with`]. [`Default`] is what [`create`]
/// uses.
#[derive(Clone, Debug)]
pub struct CreateOptions {
    /// The permit-list of modes served ([`SERVED_MODES`]).
    pub served: Vec<Mode>,
    /// The git time budget ([`GIT_BUDGET`]).
    pub budget: Duration,
    /// The git output cap per stream ([`GIT_OUTPUT_CAP`]).
    pub output_cap: usize,
    /// The git program (`git`, looked up in `PATH`).
    pub git: OsString,
    /// Which clone URLs are accepted ([`ClonePolicy::local`]; a server passes
    /// [`ClonePolicy::remote`]).
    pub clone_policy: ClonePolicy,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            served: SERVED_MODES.to_vec(),
            budget: GIT_BUDGET,
            output_cap: GIT_OUTPUT_CAP,
            git: OsString::from("git"),
            clone_policy: ClonePolicy::local(),
        }
    }
}

/// The registry key of a locator: `managed:NAME` or `mounted:SEGMENT`.
pub fn registry_locator(locator: &Locator) -> Option<String> {
    match locator {
        Locator::Managed { name } => Some(format!("managed:{name}")),
        Locator::Mounted { segment } => Some(format!("mounted:{segment}")),
        Locator::Unavailable { .. } => None,
    }
}

/// Creates the workspace `request` names, with [`CreateOptions::default`].
pub fn create(
    roots: &Roots,
    request: &CreateRequest,
    supervisor: &Supervisor,
    registry: &Registry,
) -> Result<Created, CreateError> {
    create_with(
        roots,
        request,
        supervisor,
        registry,
        &CreateOptions::default(),
    )
}

/// Creates the workspace `request` names: validates the name or segment and the
/// clone URL (against [`CreateOptions::clone_policy`]),
/// checks the permit-list, resolves against its own root (never the other),
/// contains `root + segment`, creates every missing directory beneath the
/// root handle, then, holding the folder's exclusive lock (so concurrent creates of
/// one folder, in any process, run one after the other and agree), runs `git init` or
/// `git clone -- URL .` unless `.git` is already there, and confirms the workspace in
/// the registry.
pub fn create_with(
    roots: &Roots,
    request: &CreateRequest,
    supervisor: &Supervisor,
    registry: &Registry,
    options: &CreateOptions,
) -> Result<Created, CreateError> {
    let locator = request.locator()?;
    let clone_url = request
        .clone_url
        .as_deref()
        .map(|url| {
            let url = options.clone_policy.check(url)?;
            // Where it connects is checked before anything is made, too.
            let addresses = options.clone_policy.check_destination(&url)?;
            Ok(Destination { url, addresses })
        })
        .transpose()
        .map_err(|e| CreateError::InvalidCloneUrl(Box::new(e)))?;
    let project_id = request
        .project_id
        .as_deref()
        .map(ProjectId::parse)
        .transpose()
        .map_err(CreateError::InvalidProjectId)?;
    let project = project_id.as_ref().map(ProjectId::as_str);
    let key = registry_locator(&locator).expect("a parsed locator is reachable");
    // A project bound elsewhere is refused before anything is made on disk; the
    // confirmation checks again in its own transaction.
    registry
        .check_project(&key, project)
        .map_err(|source| match source.project_conflict() {
            Some(_) => CreateError::ProjectConflict(source),
            None => CreateError::RegistryRead(source),
        })?;
    let target = roots.resolve(&locator, &options.served)?;
    let segment = target.segment().to_string();
    let root_name = target.root_kind().as_str();
    let root_dir = RootDir::open(target.root()).map_err(|e| beneath(e, root_name, &segment))?;
    let opened = root_dir
        .create_dir_all(&target)
        .map_err(|e| beneath(e, root_name, &segment))?;
    // One creation of a folder at a time, across threads and processes: the others
    // wait here and then find the repository made and the registry confirmed.
    crate::exclusive::hold(&opened).map_err(|source| CreateError::Mkdir {
        root: root_name,
        segment: segment.clone(),
        source: BeneathError::Io {
            op: "lock",
            root: target.root().path().to_path_buf(),
            segment: segment.clone(),
            source,
        },
    })?;
    let git_entry = |opened: &loci_paths::OpenedDir| {
        opened
            .probe_entry(".git")
            .map_err(|e| beneath(e, root_name, &segment))
    };
    let action = match git_entry(&opened)? {
        Some(FileKind::Directory | FileKind::File) => Action::AlreadyARepository,
        Some(other) => {
            return Err(CreateError::Git {
                action: "check",
                segment,
                message: format!("`.git` exists but is a {other:?}, not a repository"),
            });
        }
        None => {
            let git = GitRun {
                supervisor,
                program: &options.git,
                budget: options.budget,
                output_cap: options.output_cap,
                policy: &options.clone_policy,
            };
            git.run(&opened, clone_url.as_ref())?;
            if !matches!(
                git_entry(&opened)?,
                Some(FileKind::Directory | FileKind::File)
            ) {
                return Err(CreateError::Git {
                    action: if request.clone_url.is_some() {
                        "clone"
                    } else {
                        "init"
                    },
                    segment,
                    message: "git succeeded but left no `.git`".to_owned(),
                });
            }
            if request.clone_url.is_some() {
                Action::Cloned
            } else {
                Action::Initialized
            }
        }
    };
    // Barrier 3 again, now that every component exists: the real path
    // recorded is the one that is contained.
    let after = contain(target.root(), target.segment())?;
    let path = after.real_path().to_path_buf();
    let confirmation = registry
        .confirm_for(&path, &key, project)
        .map_err(|source| registry_error(source, &path))?;
    Ok(Created {
        locator,
        action,
        created_dir: opened.created(),
        confirmed: Confirmed {
            id: confirmation.entry.id,
            changed: confirmation.changed,
            verified_at: confirmation.entry.verified_at,
        },
        project_id: confirmation.entry.project_id,
        path,
    })
}

fn registry_error(source: loci_store::StoreError, path: &std::path::Path) -> CreateError {
    if source.project_conflict().is_some() {
        CreateError::ProjectConflict(source)
    } else {
        CreateError::Registry {
            path: path.to_path_buf(),
            source,
        }
    }
}

fn beneath(e: BeneathError, root: &'static str, segment: &str) -> CreateError {
    match e {
        BeneathError::Root(e) => CreateError::NoRoot(e),
        BeneathError::Contain(e) => e.into(),
        BeneathError::NotADirectory {
            segment: prefix, ..
        } => CreateError::NotADirectory {
            root,
            segment: segment.to_owned(),
            message: format!("{prefix:?} exists and is not a directory"),
        },
        e @ (BeneathError::Io { .. } | BeneathError::NotFound { .. }) => CreateError::Mkdir {
            root,
            segment: segment.to_owned(),
            source: e,
        },
        e => invalid(e.kind(), e),
    }
}
