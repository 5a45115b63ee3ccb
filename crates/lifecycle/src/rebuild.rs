//! `loci rebuild`: the one destructive operation, and only with explicit consent.
//! A corrupt index is never deleted or rebuilt by the gate (DESIGN.md invariant 6).

use std::path::{Path, PathBuf};

use loci_index::lock::{LockError, WriteLock, WriteWork};

/// Proof that the user asked for the destructive step (`--yes`). Only
/// [`Consent::from_flag`] makes one, so [`rebuild`] cannot be called without it.
#[derive(Debug, Clone, Copy)]
pub struct Consent(());

impl Consent {
    /// Consent when the flag was given, none otherwise.
    pub fn from_flag(yes: bool) -> Option<Consent> {
        yes.then_some(Consent(()))
    }
}

/// Why a rebuild did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    /// Another process holds the index.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The old index could not be removed.
    #[error("cannot remove {path}: {source}")]
    Remove {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The new index could not be built.
    #[error(transparent)]
    Index(#[from] loci_index::IndexError),
}

/// Deletes the index at `index_path` (with its WAL and shared-memory files) under the
/// write lock, then builds a new one of `root`, reporting the files it parses to
/// `progress` (a terminal's progress bar, or [`loci_index::NoProgress`]).
pub fn rebuild(
    root: &Path,
    index_path: &Path,
    max_file_bytes: u64,
    file_budget: loci_index::FileBudget,
    _consent: Consent,
    progress: &dyn loci_index::Progress,
) -> Result<loci_index::IndexReport, RebuildError> {
    let index_dir = index_path.parent().unwrap_or(Path::new("."));
    {
        let _lock = WriteLock::try_acquire(index_dir, WriteWork::Rebuild)?;
        for suffix in ["", "-wal", "-shm"] {
            let mut p = index_path.as_os_str().to_owned();
            p.push(suffix);
            let p = PathBuf::from(p);
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(RebuildError::Remove { path: p, source }),
            }
        }
    }
    let _ = crate::record::update(root, |r| {
        r.integrity = None;
        r.liveness = None;
    });
    let mut opts = loci_index::IndexOptions::new(root);
    opts.index_path = Some(index_path.to_path_buf());
    opts.max_file_bytes = max_file_bytes;
    opts.file_budget = file_budget;
    opts.purpose = WriteWork::Rebuild;
    Ok(loci_index::index_workspace(&opts, progress)?)
}
