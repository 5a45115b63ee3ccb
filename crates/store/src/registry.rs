//! The registry: which workspaces loci knows, where their index lives, and
//! when each was confirmed and last indexed. One small SQLite file shared by
//! every loci process of a user (`$LOCI_HOME/registry.db`, else
//! `$XDG_DATA_HOME/loci/registry.db`, else `~/.local/share/loci/registry.db`).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::StoreError;

/// The registry's first shape (`user_version` 0); [`MIGRATIONS`] take it to
/// [`REGISTRY_VERSION`]. A new registry goes through the same steps as an old one.
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

/// The registry schema version this build writes (`PRAGMA user_version`).
pub const REGISTRY_VERSION: i64 = 1;

/// Step `i` takes a registry from version `i` to `i + 1`, inside one immediate
/// transaction, keeping every row. `ALTER TABLE ADD COLUMN` cannot add a UNIQUE
/// constraint, so uniqueness of a set project id is a separate index (NULLs are
/// distinct in it: any number of workspaces may have none).
const MIGRATIONS: &[&str] = &["ALTER TABLE workspaces ADD COLUMN project_id TEXT;
     CREATE UNIQUE INDEX IF NOT EXISTS workspaces_project_id ON workspaces(project_id);"];

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
    /// The caller's project this workspace was confirmed for, if any (unique: one
    /// workspace per project, one project per workspace).
    pub project_id: Option<String>,
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
        let registry = Registry {
            conn,
            path: path.to_path_buf(),
        };
        registry.migrate()?;
        Ok(registry)
    }

    /// Brings the registry to [`REGISTRY_VERSION`], once: the version is read and
    /// bumped in the transaction that runs the steps, so two processes opening an old
    /// registry at the same time migrate it once. A newer registry is refused before
    /// anything is written to it.
    fn migrate(&self) -> Result<(), StoreError> {
        let version =
            |c: &Connection| c.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0));
        let found = version(&self.conn).map_err(|e| self.err(e))?;
        if found == REGISTRY_VERSION {
            return Ok(());
        }
        if !(0..REGISTRY_VERSION).contains(&found) {
            return Err(StoreError::UnknownSchema {
                path: self.path.clone(),
                found,
                supported: REGISTRY_VERSION,
            });
        }
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )
        .map_err(|e| self.err(e))?;
        let found = version(&tx).map_err(|e| self.err(e))?;
        for step in MIGRATIONS.iter().skip(usize::try_from(found).unwrap_or(0)) {
            tx.execute_batch(step).map_err(|e| self.err(e))?;
        }
        tx.pragma_update(None, "user_version", REGISTRY_VERSION)
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
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

    /// Confirms that a workspace exists at `root` under `locator`, for no particular
    /// project: [`Registry::confirm_for`] with `None`.
    pub fn confirm(&self, root: &Path, locator: &str) -> Result<Confirmation, StoreError> {
        self.confirm_for(root, locator, None)
    }

    /// Confirms that a workspace exists at `root` under `locator`, for `project_id`
    /// when given: the one confirmation path. Idempotent: `verified_at` is set once; a
    /// repeated call with the same root, locator and project changes nothing; a call
    /// with the same locator and a new root updates only the path. A project id binds
    /// one locator: the same project under another locator, or a locator (or root)
    /// already confirmed for another project, is refused with
    /// [`StoreError::ProjectElsewhere`] / [`StoreError::LocatorTaken`] and nothing is
    /// written. Without a project id, a project already recorded is kept.
    pub fn confirm_for(
        &self,
        root: &Path,
        locator: &str,
        project_id: Option<&str>,
    ) -> Result<Confirmation, StoreError> {
        let root_text = root.to_string_lossy().to_string();
        let index_path = crate::index_path_for(root).to_string_lossy().to_string();
        // One immediate transaction: the checks and the write see the same registry,
        // even with another process confirming at the same time.
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )
        .map_err(|e| self.err(e))?;
        self.check_project(locator, project_id)?;
        let existing = self
            .find_by("locator", locator)?
            .or(self.find_by("root", &root_text)?);
        if let (Some(e), Some(asked)) = (&existing, project_id) {
            refuse_other_project(e, locator, asked)?;
        }
        let changed = match existing {
            Some(e)
                if e.root == root_text
                    && e.locator.as_deref() == Some(locator)
                    && e.verified_at.is_some()
                    && (project_id.is_none() || e.project_id.as_deref() == project_id) =>
            {
                false
            }
            Some(e) => {
                tx.execute(
                    "UPDATE workspaces SET root = ?2, index_path = ?3, locator = ?4,
                         verified_at = coalesce(verified_at, ?5),
                         project_id = coalesce(?6, project_id) WHERE id = ?1",
                    params![e.id, root_text, index_path, locator, now(), project_id],
                )
                .map_err(|e| self.err(e))?;
                true
            }
            None => {
                tx.execute(
                    "INSERT INTO workspaces (root, index_path, locator, project_id, created_at, verified_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                    params![root_text, index_path, locator, project_id, now()],
                )
                .map_err(|e| self.err(e))?;
                true
            }
        };
        let entry = self
            .find_by("locator", locator)?
            .ok_or_else(|| self.err(rusqlite::Error::QueryReturnedNoRows))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Confirmation { entry, changed })
    }

    /// Whether `locator` may be confirmed for `project_id` (always, without one): the
    /// check [`Registry::confirm_for`] makes, for a caller that wants the refusal
    /// before it makes anything on disk. Reads only.
    pub fn check_project(&self, locator: &str, project_id: Option<&str>) -> Result<(), StoreError> {
        let Some(asked) = project_id else {
            return Ok(());
        };
        if let Some(e) = self.find_by("project_id", asked)?
            && e.locator.as_deref() != Some(locator)
        {
            return Err(StoreError::ProjectElsewhere {
                project_id: asked.to_owned(),
                locator: locator.to_owned(),
                held_by: e
                    .locator
                    .unwrap_or_else(|| "a workspace without a locator".into()),
            });
        }
        if let Some(e) = self.find_by("locator", locator)? {
            refuse_other_project(&e, locator, asked)?;
        }
        Ok(())
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

/// Refuses confirming `e` (found by `locator` or by root) for `asked` when it is
/// already confirmed for another project.
fn refuse_other_project(e: &WorkspaceEntry, locator: &str, asked: &str) -> Result<(), StoreError> {
    match &e.project_id {
        Some(held) if held != asked => Err(StoreError::LocatorTaken {
            locator: e.locator.clone().unwrap_or_else(|| locator.to_owned()),
            project_id: asked.to_owned(),
            held_by: held.clone(),
        }),
        _ => Ok(()),
    }
}

const SELECT: &str = "SELECT id, root, index_path, locator, created_at, verified_at,
                             last_indexed_at, files, symbols, project_id
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
        project_id: r.get(9)?,
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

    fn registry(dir: &tempfile::TempDir) -> Registry {
        Registry::open(&dir.path().join("registry.db")).unwrap()
    }

    #[test]
    fn an_old_registry_keeps_its_rows_and_gains_the_project_column_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.db");
        {
            // The schema every registry had before project ids, written by hand.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(SCHEMA).unwrap();
            old.execute(
                "INSERT INTO workspaces (root, index_path, locator, created_at, verified_at, files)
                 VALUES ('/srv/a', '/srv/a/.loci/index.db', 'mounted:a', 10, 11, 7),
                        ('/w', '/w/.loci/index.db', NULL, 12, NULL, NULL)",
                [],
            )
            .unwrap();
            let version: i64 = old
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .unwrap();
            assert_eq!(version, 0);
        }
        let reg = Registry::open(&path).unwrap();
        let rows = reg.list().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].root, "/srv/a");
        assert_eq!(rows[0].locator.as_deref(), Some("mounted:a"));
        assert_eq!((rows[0].verified_at, rows[0].files), (Some(11), Some(7)));
        assert_eq!(rows[1].root, "/w");
        assert!(rows.iter().all(|r| r.project_id.is_none()));
        drop(reg);
        // Opening again runs no step twice (a second ADD COLUMN would fail).
        let reg = Registry::open(&path).unwrap();
        let version: i64 = reg
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, REGISTRY_VERSION);
        let confirmed = reg
            .confirm_for(Path::new("/srv/a"), "mounted:a", Some("p-1"))
            .unwrap();
        assert_eq!(confirmed.entry.id, rows[0].id);
        assert_eq!(confirmed.entry.project_id.as_deref(), Some("p-1"));
        assert_eq!(confirmed.entry.verified_at, Some(11));
        // The unique index is there: a second row cannot take the same project.
        let dup = reg.conn.execute(
            "UPDATE workspaces SET project_id = 'p-1' WHERE root = '/w'",
            [],
        );
        assert!(dup.is_err(), "project_id is not unique: {dup:?}");
    }

    #[test]
    fn a_registry_from_a_newer_loci_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.db");
        {
            let newer = Connection::open(&path).unwrap();
            newer.execute_batch(SCHEMA).unwrap();
            newer
                .pragma_update(None, "user_version", REGISTRY_VERSION + 1)
                .unwrap();
        }
        let err = Registry::open(&path)
            .err()
            .expect("a newer registry opened");
        assert!(
            matches!(err, StoreError::UnknownSchema { found, .. } if found == REGISTRY_VERSION + 1),
            "{err}"
        );
        let columns: Vec<String> = Connection::open(&path)
            .unwrap()
            .prepare("SELECT name FROM pragma_table_info('workspaces')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!columns.contains(&"project_id".to_string()), "{columns:?}");
    }

    #[test]
    fn confirm_for_a_project_twice_is_one_entry_verified_once() {
        let dir = tempfile::tempdir().unwrap();
        let reg = registry(&dir);
        let root = Path::new("/srv/base/team/app");
        let first = reg
            .confirm_for(root, "mounted:team/app", Some("proj_1"))
            .unwrap();
        assert!(first.changed);
        assert_eq!(first.entry.project_id.as_deref(), Some("proj_1"));
        let second = reg
            .confirm_for(root, "mounted:team/app", Some("proj_1"))
            .unwrap();
        assert!(!second.changed);
        assert_eq!(second.entry, first.entry);
        // Confirming without a project keeps the one recorded.
        let plain = reg.confirm(root, "mounted:team/app").unwrap();
        assert!(!plain.changed);
        assert_eq!(plain.entry.project_id.as_deref(), Some("proj_1"));
        assert_eq!(reg.list().unwrap().len(), 1);
    }

    #[test]
    fn a_project_asked_for_under_another_locator_is_refused_and_nothing_changes() {
        let dir = tempfile::tempdir().unwrap();
        let reg = registry(&dir);
        reg.confirm_for(Path::new("/srv/m/one"), "managed:one", Some("p"))
            .unwrap();
        let before = reg.list().unwrap();
        let err = reg
            .confirm_for(Path::new("/srv/m/two"), "managed:two", Some("p"))
            .unwrap_err();
        assert_eq!(err.project_conflict(), Some("project_elsewhere"), "{err}");
        let message = err.to_string();
        assert!(
            message.contains("\"p\"")
                && message.contains("managed:one")
                && message.contains("managed:two"),
            "{message}"
        );
        assert!(reg.check_project("managed:two", Some("p")).is_err());
        assert_eq!(reg.list().unwrap(), before);
    }

    #[test]
    fn a_locator_confirmed_for_another_project_is_refused_and_nothing_changes() {
        let dir = tempfile::tempdir().unwrap();
        let reg = registry(&dir);
        reg.confirm_for(Path::new("/srv/m/one"), "managed:one", Some("p"))
            .unwrap();
        let before = reg.list().unwrap();
        let err = reg
            .confirm_for(Path::new("/srv/m/one"), "managed:one", Some("q"))
            .unwrap_err();
        assert_eq!(err.project_conflict(), Some("locator_taken"), "{err}");
        assert!(err.to_string().contains("\"q\""), "{err}");
        // The same folder under another locator is the same workspace: also refused.
        let err = reg
            .confirm_for(Path::new("/srv/m/one"), "mounted:one", Some("q"))
            .unwrap_err();
        assert_eq!(err.project_conflict(), Some("locator_taken"), "{err}");
        assert_eq!(reg.list().unwrap(), before);
    }

    #[test]
    fn a_workspace_confirmed_without_a_project_can_be_given_one() {
        let dir = tempfile::tempdir().unwrap();
        let reg = registry(&dir);
        let first = reg.confirm(Path::new("/srv/m/a"), "managed:a").unwrap();
        assert_eq!(first.entry.project_id, None);
        let bound = reg
            .confirm_for(Path::new("/srv/m/a"), "managed:a", Some("p"))
            .unwrap();
        assert!(bound.changed);
        assert_eq!(bound.entry.id, first.entry.id);
        assert_eq!(bound.entry.verified_at, first.entry.verified_at);
        assert_eq!(bound.entry.project_id.as_deref(), Some("p"));
        // Workspaces without a project do not collide with each other.
        reg.confirm(Path::new("/srv/m/b"), "managed:b").unwrap();
        reg.confirm(Path::new("/srv/m/c"), "managed:c").unwrap();
        assert_eq!(reg.list().unwrap().len(), 3);
    }
}
