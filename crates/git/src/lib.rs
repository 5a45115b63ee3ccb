//! A git repository read in-process (libgit2 through `git2`, never a `git` process and
//! never its printed output): which files a diff between two sides changes — commits,
//! the index, the working tree — with renames followed and each change's exact line
//! ranges, and the bytes of a file on a committed or staged side. Nothing here checks
//! anything out or writes to the repository.
//!
//! It also says where a checkout is ([`Repo::head_state`]): the index records the
//! commit it reflects, and the watcher follows the files that move `HEAD`.
//!
//! `loci changes` is built on it: the service layer maps the line ranges onto the
//! definitions loci's own extractor finds in each side's bytes.
#![deny(missing_docs)]

mod compare;
mod diff;
mod error;
mod head;
mod repo;

pub use compare::Compare;
pub use diff::{Content, Diff, FileChange, LineRange, SideInfo, Status};
pub use error::GitError;
pub use head::{Head, HeadFiles};
pub use repo::{Limits, Listed, Repo};
