//! `POST /api/v1/workspaces`: creates (or confirms) a workspace under a root of this
//! server's own configuration, named by a locator — never by a path. The wire types
//! here only carry the request to `loci_api::workspaces::create`, which validates the
//! name or segment with the one ruler (`invalid_segment` naming the rule) and confirms
//! the workspace in the registry.

use loci_api::vocab::paths::{Locator, RootKind, Roots};
use loci_api::vocab::workspace::{Action, CreateRequest, Created};
use loci_api::{ApiError, ErrorKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the workspace goes: a root kind and the name or segment under it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LocatorBody {
    /// A single name under the managed root (`A-Z a-z 0-9 _ -`, at most 64).
    Managed {
        /// The name.
        #[schemars(regex(pattern = "^[A-Za-z0-9_-]{1,64}$"))]
        name: String,
    },
    /// A relative path under the projects base, e.g. `team/app`.
    Mounted {
        /// The segment.
        #[schemars(length(min = 1))]
        segment: String,
    },
}

/// The outer shape of a clone URL the schema states (a scheme that may reach a remote,
/// or scp-like `user@host:path`); the clone policy refuses more (credentials, local or
/// private addresses) once it is resolved.
const CLONE_URL_SHAPE: &str = r"^(https?://|ssh://|git://|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:)\S+$";

/// The request: where to create the workspace, and for which project.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWorkspaceRequest {
    /// The locator.
    pub locator: LocatorBody,
    /// Clone this URL into the new folder instead of `git init` (capability
    /// `workspace.clone`): `https://`, `ssh://` or scp-like `user@host:path`, plus
    /// `git://` / `http://` when the server enables them; never `file://`, a local path,
    /// `ext::`, credentials or an option. Ignored when the folder already is a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048), regex(pattern = CLONE_URL_SHAPE))]
    pub clone: Option<String>,
    /// The caller's project this workspace is for: 1 to 128 of `A-Z a-z 0-9 . _ : -`,
    /// starting with a letter or digit (else `invalid_input`). One workspace per
    /// project: the same project and locator again is a no-op (`changed: false`);
    /// the project under another locator, or the locator for another project, is
    /// `project_conflict` (409) and nothing is made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = loci_api::vocab::workspace::PROJECT_ID_PATTERN))]
    pub project_id: Option<String>,
}

/// What was done in the folder.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CreateAction {
    /// `git init` ran.
    Initialized,
    /// `git clone` ran.
    Cloned,
    /// The folder already was a git repository; git was not run.
    AlreadyARepository,
}

/// The answer: the workspace's registry id and locator (no path).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CreatedWorkspace {
    /// The registry id (the `{id}` of the workspace routes).
    pub id: i64,
    /// How callers name it from now on.
    pub locator: LocatorBody,
    /// What was done in the folder.
    pub action: CreateAction,
    /// Whether the folder itself was created (false when it existed).
    pub created_dir: bool,
    /// Whether the registry was written (false when the workspace was already confirmed).
    pub changed: bool,
    /// Unix seconds of the first confirmation.
    pub verified_at: Option<i64>,
    /// The project it is confirmed for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
}

/// The roots this server creates under (`roots.managed`, `roots.base`).
pub fn roots() -> Result<Roots, ApiError> {
    loci_api::workspaces::roots(&loci_api::config(None))
}

/// Whether any root is configured (the `workspace.create` capability).
pub fn available() -> bool {
    roots().is_ok_and(|r| r.managed().is_ok() || r.base().is_ok())
}

/// Whether a clone can work here: a root to clone under and a runnable `git` (the
/// `workspace.clone` capability).
pub fn clone_available() -> bool {
    available() && loci_api::workspaces::git_available()
}

/// Creates the workspace; errors name the rule broken, never the root's path.
pub fn create(req: &CreateWorkspaceRequest) -> Result<CreatedWorkspace, ApiError> {
    let roots = roots()?;
    let mut request = match &req.locator {
        LocatorBody::Managed { name } => CreateRequest::managed(name.clone()),
        LocatorBody::Mounted { segment } => CreateRequest::mounted(segment.clone()),
    };
    if let Some(url) = &req.clone {
        request = request.clone_from(url.clone());
    }
    if let Some(id) = &req.project_id {
        request = request.for_project(id.clone());
    }
    let cfg = loci_api::config(None);
    let created = loci_api::workspaces::create_remote(&roots, &request, &cfg).map_err(|e| {
        let shown: Vec<(String, &str)> =
            [(RootKind::Managed, "<managed>"), (RootKind::Base, "<base>")]
                .into_iter()
                .filter_map(|(kind, shown)| {
                    let path = roots.get(kind).ok()?.path().to_string_lossy().into_owned();
                    Some((path, shown))
                })
                .collect();
        loci_api::remote::redact_error(e, &shown)
    })?;
    answer(created)
}

fn answer(created: Created) -> Result<CreatedWorkspace, ApiError> {
    let locator = match &created.locator {
        Locator::Managed { name } => LocatorBody::Managed {
            name: name.as_str().to_string(),
        },
        Locator::Mounted { segment } => LocatorBody::Mounted {
            segment: segment.as_str().to_string(),
        },
        Locator::Unavailable { reason } => {
            return Err(ApiError::new(
                ErrorKind::Internal,
                format!("a created workspace came back unavailable: {reason}"),
            ));
        }
    };
    Ok(CreatedWorkspace {
        id: created.confirmed.id,
        locator,
        action: match created.action {
            Action::Initialized => CreateAction::Initialized,
            Action::Cloned => CreateAction::Cloned,
            Action::AlreadyARepository => CreateAction::AlreadyARepository,
        },
        created_dir: created.created_dir,
        changed: created.confirmed.changed,
        verified_at: created.confirmed.verified_at,
        project_id: created.project_id,
    })
}
