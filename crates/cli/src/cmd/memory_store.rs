//! Which memory store a command reads and writes: the workspace's or the user's, and
//! the namespace in it. Shared by every memory command.

use std::path::PathBuf;

use clap::Args;
use loci_api::ApiError;
use loci_api::memory::StoreTarget;

use crate::workspace_arg::query_root;

/// Which store and namespace, shared by every memory command.
#[derive(Args, Clone)]
pub struct StoreArgs {
    /// The namespace (default: `default`).
    #[arg(long, short = 'n')]
    pub(crate) namespace: Option<String>,
    /// The user-level store (notes that span workspaces) instead of the workspace's.
    #[arg(long)]
    pub(crate) user: bool,
}

/// The store `store` names, for the workspace `workspace` (or the current one).
pub(super) fn target(
    workspace: Option<PathBuf>,
    store: &StoreArgs,
) -> Result<StoreTarget, ApiError> {
    Ok(StoreTarget {
        workspace: if store.user {
            PathBuf::from(".")
        } else {
            query_root(workspace)?
        },
        user: store.user,
        // The CLI runs as the store's owner: every namespace.
        access: loci_api::memory::MemoryAccess::All,
    })
}
