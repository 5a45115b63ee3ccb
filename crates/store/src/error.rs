//! The one error type of the store.

use std::path::PathBuf;

/// Why a storage operation failed; every variant names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused or failed.
    #[error("sqlite error on {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The file's schema was written by a newer loci (or is not a loci index: a
    /// negative version, say). Nothing was written to it.
    #[error(
        "{path} has schema version {found}, not one this loci can use (it writes version {supported}, migrating older ones); the file was left untouched"
    )]
    UnknownSchema {
        /// The database file.
        path: PathBuf,
        /// The version found.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The index path is taken by something that is not a file (a directory, say).
    #[error("{path} is {what}, not an index database file")]
    NotAFile {
        /// The index path.
        path: PathBuf,
        /// What is there instead.
        what: &'static str,
    },
    /// A directory for the database could not be created.
    #[error("cannot create {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A reader that may not write beside the index (the directory belongs to someone
    /// else, or is mounted read-only) cannot read it: its write-ahead log holds changes,
    /// and reading them needs a shared-memory file it cannot create.
    #[error(
        "{path} cannot be read by this user: its write-ahead log {wal} holds changes not yet in the file, and reading them needs {shm}, which this user can neither open nor create without write permission on {dir}"
    )]
    NoSharedMemory {
        /// The database file.
        path: PathBuf,
        /// The write-ahead log.
        wal: PathBuf,
        /// The missing shared-memory file.
        shm: PathBuf,
        /// The directory this user may not write.
        dir: PathBuf,
    },
    /// A project id was asked for under a locator while the registry already has it
    /// under another one. Nothing was written.
    #[error(
        "project {project_id:?} is already confirmed under locator {held_by:?}, not {locator:?}; nothing was changed"
    )]
    ProjectElsewhere {
        /// The project id asked for.
        project_id: String,
        /// The locator asked for.
        locator: String,
        /// The locator the project already has.
        held_by: String,
    },
    /// A locator (or its folder) is already confirmed for another project. Nothing
    /// was written.
    #[error(
        "locator {locator:?} is already confirmed for project {held_by:?}, not {project_id:?}; nothing was changed"
    )]
    LocatorTaken {
        /// The locator.
        locator: String,
        /// The project id asked for.
        project_id: String,
        /// The project the locator already belongs to.
        held_by: String,
    },
    /// No place for the registry: neither LOCI_HOME, XDG_DATA_HOME nor HOME is set.
    #[error("no data directory: set LOCI_HOME or XDG_DATA_HOME")]
    NoDataDir,
}

impl StoreError {
    /// Wraps a rusqlite error with the path it concerns.
    pub fn sqlite(path: impl Into<PathBuf>, source: rusqlite::Error) -> Self {
        StoreError::Sqlite {
            path: path.into(),
            source,
        }
    }

    /// Whether this is a refusal to bind a project id ([`StoreError::ProjectElsewhere`],
    /// [`StoreError::LocatorTaken`]), with its stable reason name.
    pub fn project_conflict(&self) -> Option<&'static str> {
        match self {
            StoreError::ProjectElsewhere { .. } => Some("project_elsewhere"),
            StoreError::LocatorTaken { .. } => Some("locator_taken"),
            _ => None,
        }
    }

    /// Whether the cause is another connection holding a lock (SQLITE_BUSY/LOCKED).
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            StoreError::Sqlite { source: rusqlite::Error::SqliteFailure(e, _), .. }
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }
}
