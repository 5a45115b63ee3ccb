//! Which workspace a caller across the network may use: only one inside the server's
//! own roots, named by a locator (`{"kind": "mounted", "segment": ...}` or
//! `{"kind": "managed", "name": ...}`), or by a local path (an MCP client's root) whose
//! real path the one ruler (`loci_paths`) maps into a root. Every refusal has a kind
//! from the error table and a message that names no host path.

use std::path::{Path, PathBuf};

use loci_paths::{
    ContainError, ContainedPath, Locator, LocatorError, LocatorWire, RealError, ResolveError,
    Roots, SERVED_MODES,
};

use crate::error::{ApiError, ErrorKind};

/// A workspace inside the roots: its real path (what the session reads and writes
/// under), the locator that names it, and the folder name answers show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confined {
    /// The workspace's real path (symlinks resolved), strictly inside a root.
    pub root: PathBuf,
    /// How callers name it.
    pub locator: Locator,
    /// The last component of its path.
    pub name: String,
}

impl Confined {
    fn of(contained: ContainedPath) -> Result<Confined, ApiError> {
        let root = contained.real_path().to_path_buf();
        if !root.is_dir() {
            return Err(ApiError::new(
                ErrorKind::NotFound,
                format!(
                    "no folder {} under the {} root",
                    contained.segment(),
                    contained.root_kind().as_str()
                ),
            )
            .hint("the folder picker (POST /api/v1/fs) lists the folders; POST /api/v1/workspaces creates one"));
        }
        Ok(Confined {
            name: root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            locator: contained.locator(),
            root,
        })
    }
}

/// The workspace a locator names: its wire form checked by the ruler (unknown kinds and
/// extra fields such as a `path` refused), the permit-list, then barrier 3.
pub fn by_locator(roots: &Roots, wire: &serde_json::Value) -> Result<Confined, ApiError> {
    let wire: LocatorWire = serde_json::from_value(wire.clone()).map_err(|e| {
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("the workspace locator is not an object of strings: {e}"),
        )
        .hint(LOCATOR_HINT)
    })?;
    let locator = Locator::try_from(wire).map_err(locator_error)?;
    let contained = roots
        .resolve(&locator, SERVED_MODES)
        .map_err(resolve_error)?;
    Confined::of(contained)
}

/// The workspace a local path is (an MCP client's `file://` root): only when its real
/// path lies strictly inside a configured root.
pub fn by_path(roots: &Roots, path: &Path) -> Result<Confined, ApiError> {
    let contained = roots.contain_real(path).map_err(|e| match e {
        RealError::Missing(root) => ApiError::new(
            ErrorKind::NotFound,
            format!(
                "the client's root names no folder under the {} root",
                root.as_str()
            ),
        ),
        RealError::Contain(e) => contain_error(e),
        other => refused(&other.to_string()),
    })?;
    Confined::of(contained)
}

/// A client root that is not a local `file://` path (another scheme, a remote host, a
/// malformed escape).
pub fn not_a_local_root() -> ApiError {
    refused("the client's root is not a local file:// path")
}

/// The named refusal of a workspace outside the roots.
pub fn refused(why: &str) -> ApiError {
    ApiError::new(ErrorKind::OutsideRoots, format!("{why}; nothing was bound")).hint(LOCATOR_HINT)
}

/// A remote session that named no workspace.
pub fn no_workspace() -> ApiError {
    ApiError::new(
        ErrorKind::NoWorkspace,
        "this session names no workspace: a server binds a session only to a workspace inside its roots",
    )
    .hint(LOCATOR_HINT)
}

const LOCATOR_HINT: &str = "name the workspace by locator: the `workspace` argument or the `Loci-Workspace` header, e.g. {\"kind\": \"mounted\", \"segment\": \"team/app\"} (GET /api/v1/workspaces lists them), or a client root inside the server's roots";

fn locator_error(e: LocatorError) -> ApiError {
    let kind = match e {
        LocatorError::Name(_) | LocatorError::Segment(_) => ErrorKind::InvalidSegment,
        _ => ErrorKind::InvalidInput,
    };
    ApiError::new(kind, format!("the workspace locator is refused: {e}"))
        .hint(LOCATOR_HINT)
        .detail(serde_json::json!({"reason": e.kind()}))
}

fn resolve_error(e: ResolveError) -> ApiError {
    match e {
        ResolveError::Mode(m) => ApiError::new(ErrorKind::InvalidInput, m.to_string())
            .hint(LOCATOR_HINT)
            .detail(serde_json::json!({"reason": m.kind()})),
        ResolveError::Root(r) => r.into(),
        ResolveError::Contain(c) => contain_error(c),
        other => ApiError::new(ErrorKind::InvalidInput, other.to_string()),
    }
}

fn contain_error(e: ContainError) -> ApiError {
    let reason = e.kind();
    let err = match e {
        ContainError::Root(r) => r.into(),
        ContainError::PathTooLong { .. } => ApiError::new(
            ErrorKind::InvalidSegment,
            "the workspace's path is too long",
        ),
        ContainError::Unresolvable { .. } => ApiError::new(
            ErrorKind::NotFound,
            "the workspace's folder cannot be resolved (a dangling symlink, a loop, no permission)",
        ),
        _ => refused("the workspace leads outside the server's roots"),
    };
    err.detail(serde_json::json!({"reason": reason}))
}

/// `text` as a caller across the network may see it: the workspace's index and root
/// (a path under the root reads as relative), loci's own data folder, then every path
/// under a configured root (`$LOCI_PROJECTS_BASE/...`), then any other quoted absolute
/// path (`"<path>"`).
pub fn scrub(text: &str, roots: &Roots, workspace: Option<(&Path, &Path)>) -> String {
    let mut paths: Vec<(String, &str)> = Vec::new();
    let mut push = |p: &Path, shown: &'static str| {
        let text = p.to_string_lossy().into_owned();
        if text.len() > 1 {
            paths.push((text, shown));
        }
    };
    if let Some((root, index)) = workspace {
        push(index, "<index>");
        push(root, "<workspace>");
        if let Ok(real) = std::fs::canonicalize(root) {
            push(&real, "<workspace>");
        }
    }
    if let Some(home) = loci_store::registry::default_registry_path()
        .ok()
        .and_then(|r| r.parent().map(Path::to_path_buf))
    {
        push(&home, "<loci-home>");
    }
    paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    let known = crate::remote::scrub(text, &paths);
    crate::remote::scrub_quoted_paths(&roots.redact(&known))
}

/// [`scrub`] applied to an error's message, hint and detail.
pub fn scrub_error(e: ApiError, roots: &Roots, workspace: Option<(&Path, &Path)>) -> ApiError {
    crate::remote::map_error_text(e, |t| scrub(t, roots, workspace))
}
