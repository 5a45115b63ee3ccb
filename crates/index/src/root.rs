//! The workspace a run indexes, and why a run can fail before or while it writes.

use std::path::{Path, PathBuf};

use crate::lock::LockError;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The workspace path does not exist.
    #[error("workspace not found: {0}")]
    NotFound(PathBuf),
    /// The workspace path is not a directory.
    #[error("not a directory: {0}")]
    NotADirectory(PathBuf),
    /// The workspace could not be read.
    #[error("cannot read workspace {path}: {source}")]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Another process is writing this index.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] loci_store::StoreError),
}

/// Turns a SQLite error on the index at `path` into the run's storage error.
pub(crate) fn sqlite(path: &Path) -> impl Fn(rusqlite::Error) -> IndexError + '_ {
    move |e| IndexError::Store(loci_store::StoreError::sqlite(path, e))
}

/// Resolves the workspace root of `path` (canonical, must be a directory).
pub fn workspace_root(path: &Path) -> Result<PathBuf, IndexError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => IndexError::NotFound(path.to_path_buf()),
        _ => IndexError::Unreadable {
            path: path.to_path_buf(),
            source: e,
        },
    })?;
    if !meta.is_dir() {
        return Err(IndexError::NotADirectory(path.to_path_buf()));
    }
    std::fs::canonicalize(path).map_err(|source| IndexError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}
