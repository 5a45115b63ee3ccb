//! The folder picker for remote callers: the directories under a root, or under a
//! workspace or folder in it, named by root kind and segment (never by path), one page
//! at a time. The segment goes through the one ruler (`loci_workspace::ls`: validated,
//! contained, listed through the root's handle); answers hold segments only.

use loci_paths::{RootKind, Roots, WorkspaceName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};
use crate::page::{PageInfo, PageRequest};

/// Entries per page unless the request says otherwise.
pub const DEFAULT_FS_LIMIT: usize = 1000;

/// Which root to list under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FsRoot {
    /// The managed root (`roots.managed`): workspaces named by a single name.
    Managed,
    /// The projects base (`roots.base`): workspaces named by a relative segment.
    Mounted,
}

impl FsRoot {
    fn root_kind(self) -> RootKind {
        match self {
            FsRoot::Managed => RootKind::Managed,
            FsRoot::Mounted => RootKind::Base,
        }
    }
}

/// `POST /api/v1/fs`: which folder to list.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FsRequest {
    /// The root.
    pub kind: FsRoot,
    /// The workspace under it: a name for `managed`, a relative segment for `mounted`
    /// (`team/app`). Absent: the root itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub segment: Option<String>,
    /// A folder inside `segment` (or inside the root), relative (`src/bin`); empty or
    /// absent: `segment` (or the root) itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

/// One directory of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FsEntry {
    /// Its name.
    pub name: String,
    /// Its segment under the root: what a caller sends back (to list it, or as a
    /// `mounted` locator's segment to create a workspace there).
    pub segment: String,
    /// The name starts with `.`.
    pub hidden: bool,
    /// It holds a `.git` entry.
    pub repository: bool,
}

/// A page of the directories directly under the folder asked for.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FsListing {
    /// The root listed under.
    pub kind: FsRoot,
    /// The folder listed, as a segment under the root (absent: the root itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// Real directories (never symlinks), sorted by name.
    pub entries: Vec<FsEntry>,
    /// Directories left out because their name is not a valid segment component.
    pub skipped: usize,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
}

/// Lists the folder `req` names under its root, one page.
pub fn list(roots: &Roots, req: &FsRequest) -> Result<FsListing, ApiError> {
    let window = req.page.window(DEFAULT_FS_LIMIT)?;
    if req.kind == FsRoot::Managed
        && let Some(name) = &req.segment
    {
        // Under the managed root a workspace is one name, never a nested segment.
        WorkspaceName::parse(name).map_err(|e| {
            ApiError::new(
                ErrorKind::InvalidSegment,
                format!("invalid managed workspace name ({}): {e}", e.kind()),
            )
            .detail(serde_json::json!({ "reason": e.kind() }))
        })?;
    }
    // An empty `path` is the folder `segment` (or the root) itself.
    let path = req.path.as_deref().filter(|p| !p.is_empty());
    let segment = match (req.segment.as_deref(), path) {
        (None, None) => None,
        (Some(s), None) | (None, Some(s)) => Some(s.to_string()),
        (Some(s), Some(p)) => Some(format!("{s}/{p}")),
    };
    let listing = loci_workspace::ls(roots, req.kind.root_kind(), segment.as_deref())?;
    let entries: Vec<FsEntry> = listing
        .entries
        .into_iter()
        .map(|e| FsEntry {
            name: e.name,
            segment: e.segment.as_str().to_string(),
            hidden: e.hidden,
            repository: e.repository,
        })
        .collect();
    let (entries, page) = window.slice(entries, listing.truncated == 0);
    Ok(FsListing {
        kind: req.kind,
        segment: listing.segment.map(|s| s.as_str().to_string()),
        entries,
        skipped: listing.skipped,
        page,
    })
}

/// The configured roots' paths, each with what a remote caller sees instead.
pub fn root_paths(roots: &Roots) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (kind, shown) in [(RootKind::Managed, "<managed>"), (RootKind::Base, "<base>")] {
        if let Ok(root) = roots.get(kind) {
            out.push((root.path().to_string_lossy().into_owned(), shown));
            if let Ok(real) = root.real_path() {
                out.push((real.to_string_lossy().into_owned(), shown));
            }
        }
    }
    out.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    out.dedup();
    out
}
