//! The registered workspaces *with their absolute paths*, and the point lookup of one
//! path: what a session-start gate on the same machine asks a running loci server
//! (seed 004's probe chain, [`crate::api_probe`]). These are the only answers that
//! carry absolute paths; the HTTP server gives them to loopback peers only.

use std::path::Path;

use loci_store::registry::{Registry, WorkspaceEntry};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};

/// One registered workspace, with where it and its index live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Repository {
    /// The registry id.
    pub id: i64,
    /// The workspace root (absolute, canonical).
    pub root: String,
    /// The index file (absolute).
    pub index_path: String,
    /// The locator it was created under (`managed:NAME`, `mounted:SEGMENT`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// Whether the index file exists now.
    pub index_exists: bool,
    /// Unix seconds of the last completed index run.
    #[serde(default)]
    pub last_indexed_at: Option<i64>,
    /// Files in the index after the last run.
    #[serde(default)]
    pub files: Option<i64>,
    /// Symbols in the index after the last run.
    #[serde(default)]
    pub symbols: Option<i64>,
}

impl From<WorkspaceEntry> for Repository {
    fn from(e: WorkspaceEntry) -> Repository {
        Repository {
            index_exists: Path::new(&e.index_path).is_file(),
            id: e.id,
            root: e.root,
            index_path: e.index_path,
            locator: e.locator,
            last_indexed_at: e.last_indexed_at,
            files: e.files,
            symbols: e.symbols,
        }
    }
}

/// `GET /api/v1/repositories`: every registered workspace, by root.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Repositories {
    /// The workspaces.
    pub repositories: Vec<Repository>,
}

/// What the registry says about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LookupState {
    /// The path is a registered workspace root (`repository` says where its index is).
    Indexed,
    /// No registered workspace has exactly this root.
    NotIndexed,
    /// The registry is locked by another process (`message` says by what).
    Busy,
}

/// `GET /api/v1/repositories/lookup?path=ABS`: the point lookup of one root.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepositoryLookup {
    /// The path asked about, as given.
    pub path: String,
    /// What the registry says.
    pub state: LookupState,
    /// The workspace, when `state` is `indexed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    /// Why, when `state` is `busy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Every registered workspace with its absolute paths (local callers only).
pub fn list() -> Result<Repositories, ApiError> {
    let registry = Registry::open_default()?;
    Ok(Repositories {
        repositories: registry.list()?.into_iter().map(Repository::from).collect(),
    })
}

/// Whether `path` (absolute, matched exactly: no canonicalisation, no prefix) is a
/// registered workspace root. A locked registry is the answer `busy`, not an error;
/// any other registry failure is an error.
pub fn lookup(path: &str) -> Result<RepositoryLookup, ApiError> {
    if !Path::new(path).is_absolute() {
        return Err(ApiError::new(
            ErrorKind::InvalidInput,
            format!("`{path}` is not an absolute path"),
        )
        .hint("pass the workspace root exactly as loci registered it, e.g. /home/me/repo"));
    }
    let answer = |state, repository, message| RepositoryLookup {
        path: path.to_string(),
        state,
        repository,
        message,
    };
    let busy = |e: loci_store::StoreError| answer(LookupState::Busy, None, Some(e.to_string()));
    let registry = match Registry::open_default() {
        Ok(r) => r,
        Err(e) if e.is_busy() => return Ok(busy(e)),
        Err(e) => return Err(e.into()),
    };
    match registry.lookup(Path::new(path)) {
        Ok(Some(entry)) => Ok(answer(LookupState::Indexed, Some(entry.into()), None)),
        Ok(None) => Ok(answer(LookupState::NotIndexed, None, None)),
        Err(e) if e.is_busy() => Ok(busy(e)),
        Err(e) => Err(e.into()),
    }
}
