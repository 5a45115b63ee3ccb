//! The registry: which workspaces loci knows, where their index lives, and
//! when each was confirmed and last indexed. One small SQLite file shared by
//! every loci process of a user (`$LOCI_HOME/registry.db`, else
//! `$XDG_DATA_HOME/loci/registry.db`, else `~/.local/share/loci/registry.db`).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::StoreError;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS workspaces (
    id              INTEGER PRIMARY KEY,
    root            TEXT NOT NULL UNIQUE,
    index_path      TEXT NOT NULL,
    locator         TEXT UNIQUE,
    created_at      INTEGER NOT NULL,
    verified_at     INTEGER,
    last_indexed_at INTEGER,
    files           INTEGER,
    symbols         INTEGER
);
"#;

/// One known workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkspaceEntry {
    /// Registry id.
    pub id: i64,
    /// Absolute path of the workspace root on this machine.
    pub root: String,
    /// Where its index lives.
    pub index_path: String,
    /// The locator it was created under (`managed:NAME`, `mounted:SEGMENT`), if any.
    pub locator: Option<String>,
    /// Unix seconds when first registered.
    pub created_at: i64,
    /// Unix seconds when creation was confirmed (set once).
    pub verified_at: Option<i64>,
    /// Unix seconds of the last completed index run.
    pub last_indexed_at: Option<i64>,
    /// Files in the index after the last run.
    pub files: Option<i64>,
    /// Symbols in the index after the last run.
    pub symbols: Option<i64>,
}

/// What [`Registry::confirm`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confirmation {
    /// The entry after the call.
    pub entry: WorkspaceEntry,
    /// Whether anything was written (false on a repeated confirmation).
    pub changed: bool,
}

/// A handle on the registry database.
pub struct Registry {
    conn: Connection,
    path: PathBuf,
}

/// Where the registry lives, from the environment: `LOCI_HOME`, then `XDG_DATA_HOME/loci`,
/// then `HOME/.local/share/loci`.
pub fn default_registry_path() -> Result<PathBuf, StoreError> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = if let Some(home) = var("LOCI_HOME") {
        home
    } else if let Some(data) = var("XDG_DATA_HOME") {
        data.join("loci")
    } else if let Some(home) = var("HOME") {
        home.join(".local/share/loci")
    } else {
        return Err(StoreError::NoDataDir);
    };
    Ok(dir.join("registry.db"))
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs() as i64
}

impl Registry {
    /// Opens the registry at its default place (see [`default_registry_path`]).
    pub fn open_default() -> Result<Registry, StoreError> {
        Registry::open(&default_registry_path()?)
    }

    /// Opens (creating) the registry at `path`.
    pub fn open(path: &Path) -> Result<Registry, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|e| StoreError::sqlite(path, e))?;
        let setup = |c: &Connection| -> rusqlite::Result<()> {
            c.busy_timeout(Duration::from_secs(5))?;
            c.pragma_update(None, "journal_mode", "WAL")?;
            c.execute_batch(SCHEMA)
        };
        setup(&conn).map_err(|e| StoreError::sqlite(path, e))?;
        Ok(Registry {
            conn,
            path: path.to_path_buf(),
        })
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::sqlite(&self.path, e)
    }

    /// Records a completed index run of `root` (registering it if new).
    pub fn record_index(
        &self,
        root: &Path,
        index_path: &Path,
        files: i64,
        symbols: i64,
    ) -> Result<(), StoreError> {
        let root = root.to_string_lossy();
        let index_path = index_path.to_string_lossy();
        self.conn
            .execute(
                "INSERT INTO workspaces (root, index_path, created_at, last_indexed_at, files, symbols)
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5)
                 ON CONFLICT(root) DO UPDATE SET index_path = ?2, last_indexed_at = ?3, files = ?4, symbols = ?5",
                params![root, index_path, now(), files, symbols],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Confirms that a workspace exists at `root` under `locator`: the one confirmation path.
    /// Idempotent: `verified_at` is set once; a repeated call with the same root changes
    /// nothing; a call with the same locator and a new root updates only the path.
    pub fn confirm(&self, root: &Path, locator: &str) -> Result<Confirmation, StoreError> {
        let root_text = root.to_string_lossy().to_string();
        let index_path = crate::index_path_for(root).to_string_lossy().to_string();
        let existing = self
            .find_by("locator", locator)?
            .or(self.find_by("root", &root_text)?);
        let changed = match existing {
            Some(e)
                if e.root == root_text
                    && e.locator.as_deref() == Some(locator)
                    && e.verified_at.is_some() =>
            {
                false
            }
            Some(e) => {
                self.conn
                    .execute(
                        "UPDATE workspaces SET root = ?2, index_path = ?3, locator = ?4,
                             verified_at = coalesce(verified_at, ?5) WHERE id = ?1",
                        params![e.id, root_text, index_path, locator, now()],
                    )
                    .map_err(|e| self.err(e))?;
                true
            }
            None => {
                self.conn
                    .execute(
                        "INSERT INTO workspaces (root, index_path, locator, created_at, verified_at)
                         VALUES (?1, ?2, ?3, ?4, ?4)",
                        params![root_text, index_path, locator, now()],
                    )
                    .map_err(|e| self.err(e))?;
                true
            }
        };
        let entry = self
            .find_by("locator", locator)?
            .ok_or_else(|| self.err(rusqlite::Error::QueryReturnedNoRows))?;
        Ok(Confirmation { entry, changed })
    }

    /// The entry whose root is exactly `root`, if any.
    pub fn lookup(&self, root: &Path) -> Result<Option<WorkspaceEntry>, StoreError> {
        self.find_by("root", &root.to_string_lossy())
    }

    /// Every known workspace, by root.
    pub fn list(&self) -> Result<Vec<WorkspaceEntry>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&format!("{SELECT} ORDER BY root"))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], row_to_entry).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Forgets a workspace (its files are untouched). Returns whether it was known.
    pub fn remove(&self, root: &Path) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "DELETE FROM workspaces WHERE root = ?1",
                [root.to_string_lossy()],
            )
            .map_err(|e| self.err(e))?;
        Ok(n > 0)
    }

    fn find_by(
        &self,
        column: &'static str,
        value: &str,
    ) -> Result<Option<WorkspaceEntry>, StoreError> {
        self.conn
            .query_row(
                &format!("{SELECT} WHERE {column} = ?1"),
                [value],
                row_to_entry,
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}

const SELECT: &str =
    "SELECT id, root, index_path, locator, created_at, verified_at, last_indexed_at, files, symbols
                      FROM workspaces";

fn row_to_entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<WorkspaceEntry> {
    Ok(WorkspaceEntry {
        id: r.get(0)?,
        root: r.get(1)?,
        index_path: r.get(2)?,
        locator: r.get(3)?,
        created_at: r.get(4)?,
        verified_at: r.get(5)?,
        last_indexed_at: r.get(6)?,
        files: r.get(7)?,
        symbols: r.get(8)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirm_twice_changes_nothing_the_second_time() {
        let dir = tempfile::tempdir().unwrap();
        let reg = Registry::open(&dir.path().join("registry.db")).unwrap();
        let first = reg.confirm(Path::new("/srv/base/a"), "mounted:a").unwrap();
        assert!(first.changed);
        let verified = first.entry.verified_at;
        assert!(verified.is_some());
        let second = reg.confirm(Path::new("/srv/base/a"), "mounted:a").unwrap();
        assert!(!second.changed);
        assert_eq!(second.entry, first.entry);
    }

    #[test]
    fn confirm_updates_only_the_path_when_it_moves() {
        let dir = tempfile::tempdir().unwrap();
        let reg = Registry::open(&dir.path().join("registry.db")).unwrap();
        let first = reg.confirm(Path::new("/srv/old"), "managed:w1").unwrap();
        let moved = reg.confirm(Path::new("/srv/new"), "managed:w1").unwrap();
        assert!(moved.changed);
        assert_eq!(moved.entry.id, first.entry.id);
        assert_eq!(moved.entry.root, "/srv/new");
        assert_eq!(moved.entry.verified_at, first.entry.verified_at);
        assert_eq!(reg.list().unwrap().len(), 1);
    }

    #[test]
    fn record_index_registers_then_updates() {
        let dir = tempfile::tempdir().unwrap();
        let reg = Registry::open(&dir.path().join("r.db")).unwrap();
        reg.record_index(Path::new("/w"), Path::new("/w/.loci/index.db"), 3, 10)
            .unwrap();
        reg.record_index(Path::new("/w"), Path::new("/w/.loci/index.db"), 4, 12)
            .unwrap();
        let all = reg.list().unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].files, Some(4));
        assert!(reg.lookup(Path::new("/w")).unwrap().is_some());
        assert!(reg.remove(Path::new("/w")).unwrap());
        assert!(reg.lookup(Path::new("/w")).unwrap().is_none());
    }
}
