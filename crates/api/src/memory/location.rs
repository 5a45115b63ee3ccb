//! Where a workspace's memories live: the one place that decides between the
//! workspace's SQLite file and a team's PostgreSQL database, and opens the store. Every
//! memory operation (CLI, HTTP, MCP) goes through [`StoreLocation::of_workspace`] or
//! [`StoreLocation::of_target`], so setting `memory.url` moves all of them at once.
//!
//! With `memory.url` (or `LOCI_MEMORY_URL`) set, a workspace's memories are kept in
//! that database under its repository identity ([`super::repository_id`]), so two
//! clones of one repository share them; the user-level store stays a local file (notes
//! of one person). A `memory.url` that does not validate is an error, never a silent
//! fall back to the local file, and no message ever shows its password.

use std::path::{Path, PathBuf};

use loci_lifecycle::config::{Config, SecretUrl};
use loci_memory::{MemoryStore, PgOptions, PgStore, SqliteStore};

use super::repository_cache::cached_repository_id;
use super::{IndexCodeGraph, StoreTarget};
use crate::error::{ApiError, ErrorKind};

/// The configuration key naming the team's PostgreSQL server.
const URL_KEY: &str = "memory.url";
/// The configuration key naming the repository identity on it.
const REPOSITORY_KEY: &str = "memory.repositoryId";
/// The configuration key naming the CA its TLS certificate is checked against.
const CA_KEY: &str = "memory.caFile";

/// A store of memories, as the service layer holds it: SQLite or PostgreSQL behind one
/// trait. `Send`, so a long-lived host can fill vectors on another thread.
pub type BoxedStore = Box<dyn MemoryStore + Send>;

/// Where the memories of one target are kept.
#[derive(Debug, Clone)]
pub enum StoreLocation {
    /// A SQLite file: the workspace's `memory.db` beside its index, or the user store.
    Sqlite(PathBuf),
    /// A PostgreSQL database shared by a team, scoped to one repository.
    Postgres {
        /// The connection URL (shown only masked).
        url: SecretUrl,
        /// The repository identity the memories are shared under.
        repository_id: String,
        /// The CA file the server's certificate is checked against (`memory.caFile`).
        ca_file: Option<PathBuf>,
    },
}

impl StoreLocation {
    /// The store of a front end's target: the user store (always a local file), or the
    /// workspace's (see [`StoreLocation::of_workspace`]), with the code graph its links
    /// are checked against.
    pub fn of_target(target: &StoreTarget) -> Result<(StoreLocation, IndexCodeGraph), ApiError> {
        if target.user {
            let path = super::user_store_path()?;
            return Ok((StoreLocation::Sqlite(path), IndexCodeGraph::none()));
        }
        let located = crate::locate(&target.workspace)?;
        let location = StoreLocation::of_workspace(&located.root, located.index_dir())?;
        let code = IndexCodeGraph::open(&located.root, &located.index_path);
        Ok((location, code))
    }

    /// The store of the workspace at `root` whose index lives in `index_dir`: the
    /// configured PostgreSQL database when `memory.url` is set, else `memory.db` in
    /// `index_dir`.
    pub fn of_workspace(root: &Path, index_dir: &Path) -> Result<StoreLocation, ApiError> {
        let config = Config::load(Some(root));
        if let Some(bad) = config.warnings().iter().find(|w| w.key == URL_KEY) {
            // The warning quotes no URL: the checker never repeats its input.
            let message = format!("memory.url in {}: {}", bad.layer, bad.message);
            return Err(ApiError::new(ErrorKind::InvalidInput, message).hint(
                "set memory.url (or LOCI_MEMORY_URL) to postgres://user:password@host/db, or unset it to keep memories in .loci/memory.db",
            ));
        }
        match config.memory_url() {
            None => Ok(StoreLocation::Sqlite(
                index_dir.join(loci_memory::MEMORY_FILE),
            )),
            Some(url) => Ok(StoreLocation::Postgres {
                url: url.clone(),
                repository_id: cached_repository_id(root, config.text(REPOSITORY_KEY))?,
                ca_file: config.path(CA_KEY),
            }),
        }
    }

    /// Whether the store already exists: a SQLite file that is there, or any
    /// PostgreSQL database (read-only answers such as `impact` create no file).
    pub fn exists(&self) -> bool {
        match self {
            StoreLocation::Sqlite(path) => path.is_file(),
            StoreLocation::Postgres { .. } => true,
        }
    }

    /// Opens the store (creating or migrating its schema).
    pub fn open(&self) -> Result<BoxedStore, ApiError> {
        Ok(match self {
            StoreLocation::Sqlite(path) => Box::new(SqliteStore::open(path)?),
            StoreLocation::Postgres {
                url,
                repository_id,
                ca_file,
            } => Box::new(PgStore::connect_with(
                url.expose(),
                repository_id,
                pg_options(ca_file.clone()),
            )?),
        })
    }
}

/// The store options of a team database whose certificate is checked against
/// `ca_file` (`memory.caFile`), the rest as [`PgOptions::default`].
pub(crate) fn pg_options(ca_file: Option<PathBuf>) -> PgOptions {
    PgOptions {
        ca_file,
        ..PgOptions::default()
    }
}
