//! The commit an index reflects: what `HEAD` named (and whether the working tree
//! differed from it) when the last run completed, kept in `meta.checkout`. A folder in
//! no git repository has none. Every answer's freshness names it; the drift check
//! calls a `HEAD` that moved since drift, so the next gate or watcher syncs.

use std::path::Path;

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use loci_git::HeadFiles;

use crate::MetaKey;
use crate::meta::{meta_delete, meta_get, meta_set};

/// Where the checkout was when a run began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Checkout {
    /// `HEAD`'s commit, full hex (`None`: a branch with no commit yet).
    pub commit: Option<String>,
    /// The branch `HEAD` was on; `None` when detached.
    pub branch: Option<String>,
    /// Whether the working tree differed from the commit (edits, staged or untracked
    /// files): the index then holds more than the commit.
    pub modified: bool,
}

/// The checkout of the repository `root` lies in, or `None` outside git (or when git
/// cannot be read, which is logged: a run never fails over it).
pub fn observe(root: &Path) -> Option<Checkout> {
    let repo = open(root)?;
    let read = || -> Result<Checkout, loci_git::GitError> {
        let head = repo.head_state()?;
        Ok(Checkout {
            modified: repo.worktree_modified(loci_store::INDEX_DIR)?,
            commit: head.commit,
            branch: head.branch,
        })
    };
    read()
        .inspect_err(|e| tracing::warn!(error = %e, "cannot read the git checkout"))
        .ok()
}

/// `HEAD`'s commit now, without looking at the working tree (cheap: two small reads).
/// `None` outside git, on an unborn branch, or when it cannot be read.
pub fn head_commit(root: &Path) -> Option<String> {
    open(root)?.head_state().ok()?.commit
}

/// The checkout the last completed run recorded (`None`: none recorded, or outside git).
pub fn recorded(conn: &Connection) -> rusqlite::Result<Option<Checkout>> {
    Ok(meta_get(conn, MetaKey::Checkout)?.and_then(|v| serde_json::from_str(&v).ok()))
}

/// Stores `seen` when it differs from what is recorded; whether it wrote.
pub(crate) fn record(conn: &Connection, seen: Option<&Checkout>) -> rusqlite::Result<bool> {
    if recorded(conn)?.as_ref() == seen {
        return Ok(false);
    }
    match seen {
        Some(c) => {
            let json = serde_json::to_string(c).expect("a checkout serializes");
            meta_set(conn, MetaKey::Checkout, &json)?;
        }
        None => meta_delete(conn, MetaKey::Checkout)?,
    }
    Ok(true)
}

/// Whether `HEAD` names another commit than the recorded one (a checkout, pull, reset
/// or commit since the last run). A folder outside git, or an index that recorded
/// nothing yet, has not moved.
pub(crate) fn head_moved(conn: &Connection, root: &Path) -> rusqlite::Result<bool> {
    let Some(before) = recorded(conn)? else {
        return Ok(false);
    };
    Ok(open(root).is_some_and(|repo| {
        repo.head_state()
            .is_ok_and(|now| now.commit != before.commit)
    }))
}

/// Where the files that move `HEAD` are, for a watcher (`None` outside git).
pub fn head_files(root: &Path) -> Option<HeadFiles> {
    Some(open(root)?.head_files())
}

fn open(root: &Path) -> Option<loci_git::Repo> {
    match loci_git::Repo::open(root) {
        Ok(repo) => Some(repo),
        Err(loci_git::GitError::NotARepository { .. }) => None,
        Err(e) => {
            tracing::warn!(error = %e, "cannot open the git repository");
            None
        }
    }
}
