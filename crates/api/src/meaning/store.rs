//! The workspace's unit vectors: a SQLite file of its own next to the index
//! (`meaning.db`), so the index's schema never changes for it and deleting it turns the
//! feature off. One row per file (`files`: the content hash the index had when its units
//! were embedded, and the model that embedded them), one per unit (`units`: where it is
//! and its text) with an FTS5 table over the units' words, and one per unit's vector in
//! a table of their own (`vectors`), so a scan of the vectors reads nothing else.
//!
//! `meta` holds the layout version, a random `instance` (per file made) and a
//! `generation` that every write transaction bumps: a reader that keeps the vectors in
//! memory ([`super::resident`]) reloads them when the pair it reads in its own read
//! transaction differs from the one it loaded.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::matrix::Matrix;
use crate::error::{ApiError, ErrorKind};

/// The vectors file's name, in the index's folder.
pub const FILE_NAME: &str = "meaning.db";
/// The layout this code writes and reads: 2 keeps the vectors in their own table (1
/// kept them in `units`, beside each unit's text; [`UnitStore::open`] upgrades such a
/// file for a writer and refuses it to a reader).
const VERSION: &str = "2";
/// The layout before vectors had their own table.
const VERSION_1: &str = "1";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (
    path  TEXT PRIMARY KEY,
    hash  BLOB NOT NULL,
    model TEXT NOT NULL,
    units INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS units (
    id             INTEGER PRIMARY KEY,
    path           TEXT NOT NULL,
    name           TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    kind           TEXT NOT NULL,
    line           INTEGER NOT NULL,
    end_line       INTEGER NOT NULL,
    text           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS units_path ON units(path);
CREATE VIRTUAL TABLE IF NOT EXISTS units_fts USING fts5(name, body, tokenize = 'unicode61');
";

/// The vectors' table (layout 2), one row per unit, keyed by the unit's id.
const VECTORS: &str = "
CREATE TABLE IF NOT EXISTS vectors (
    id     INTEGER PRIMARY KEY,
    model  TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_model ON vectors(model);
";

/// Layout 1 → 2 in one transaction: the vectors move to their own table, nothing is
/// embedded again.
const UPGRADE_1: &str = "
INSERT INTO vectors (id, model, vector) SELECT id, model, vector FROM units;
ALTER TABLE units DROP COLUMN vector;
ALTER TABLE units DROP COLUMN model;
UPDATE meta SET value = '2' WHERE key = 'version';
";

/// Which write of which file a reader saw: the file's random instance and its write
/// generation, read in one read transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// Random, chosen when the file was made (a deleted and remade file differs).
    pub instance: String,
    /// Bumped by every write transaction.
    pub generation: i64,
}

/// One unit as stored, ready to write.
#[derive(Debug, Clone)]
pub struct NewUnit {
    /// Its name.
    pub name: String,
    /// Its qualified name.
    pub qualified_name: String,
    /// Its kind.
    pub kind: String,
    /// First line (1-based).
    pub line: u32,
    /// Last line.
    pub end_line: u32,
    /// The embedded text.
    pub text: String,
    /// Full text's name field.
    pub fts_name: String,
    /// Full text's body field.
    pub fts_body: String,
    /// Its unit-length vector.
    pub vector: Vec<f32>,
}

/// One stored unit, as a search reads it.
#[derive(Debug, Clone)]
pub struct StoredUnit {
    /// Row id.
    pub id: i64,
    /// Workspace-relative path.
    pub path: String,
    /// Its name.
    pub name: String,
    /// Its qualified name.
    pub qualified_name: String,
    /// Its kind.
    pub kind: String,
    /// First line.
    pub line: u32,
    /// Last line.
    pub end_line: u32,
}

/// The open vectors file.
pub struct UnitStore {
    conn: Connection,
    path: PathBuf,
}

/// Where the vectors file of the index at `index_path` is.
pub fn path_for(index_path: &Path) -> PathBuf {
    index_path.with_file_name(FILE_NAME)
}

fn storage(path: &Path) -> impl Fn(rusqlite::Error) -> ApiError + '_ {
    move |e| {
        ApiError::new(
            ErrorKind::Storage,
            format!("the unit vectors at {}: {e}", path.display()),
        )
        .hint("delete that file and run `loci embed` again to rebuild it")
    }
}

impl UnitStore {
    /// Opens (creating when `create`) the vectors file at `path`; `None` when it does
    /// not exist and `create` is false. A layout-1 file is upgraded in place when
    /// `create` (a writer), refused with `unknown_schema` otherwise; a later layout is
    /// always refused: never read as if it were this one.
    pub fn open(path: &Path, create: bool) -> Result<Option<UnitStore>, ApiError> {
        if !create && !path.is_file() {
            return Ok(None);
        }
        let err = storage(path);
        let mut conn = Connection::open(path).map_err(&err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(&err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(&err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(&err)?;
        // A writer takes the write lock at once (it may create or upgrade); a reader
        // never does, so searches never wait for each other.
        let behavior = if create {
            rusqlite::TransactionBehavior::Immediate
        } else {
            rusqlite::TransactionBehavior::Deferred
        };
        let tx = conn.transaction_with_behavior(behavior).map_err(&err)?;
        let has_meta: bool = tx
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(&err)?
            > 0;
        let version: Option<String> = if has_meta {
            tx.query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(&err)?
        } else {
            None
        };
        let refuse = |other: &str, hint: &str| {
            ApiError::new(
                ErrorKind::UnknownSchema,
                format!(
                    "the unit vectors at {} are layout {other}; this loci reads {VERSION}",
                    path.display()
                ),
            )
            .hint(hint.to_string())
        };
        let mut upgraded = false;
        match version.as_deref() {
            Some(VERSION) => {}
            Some(VERSION_1) if create => {
                tx.execute_batch(VECTORS).map_err(&err)?;
                tx.execute_batch(UPGRADE_1).map_err(&err)?;
                init_stamp(&tx).map_err(&err)?;
                upgraded = true;
            }
            Some(VERSION_1) => {
                return Err(refuse(
                    VERSION_1,
                    "`loci embed` upgrades it in place (nothing is embedded again)",
                ));
            }
            Some(other) => {
                return Err(refuse(other, "delete that file and run `loci embed` again"));
            }
            // A file without a layout holds no vectors; a reader leaves it as it is.
            None if !create => return Ok(None),
            None => {
                tx.execute_batch(SCHEMA).map_err(&err)?;
                tx.execute_batch(VECTORS).map_err(&err)?;
                tx.execute(
                    "INSERT INTO meta (key, value) VALUES ('version', ?1)",
                    [VERSION],
                )
                .map_err(&err)?;
                init_stamp(&tx).map_err(&err)?;
            }
        }
        tx.commit().map_err(&err)?;
        if upgraded {
            // Dropping the old vector column leaves its pages allocated, each nearly
            // empty (the file doubles: 155 MB on a tree of 29,000 units): rebuild the
            // file once, while this writer holds it. Only space is at stake, so a
            // failure (another writer busy past the timeout) leaves the file as it is.
            let _ = conn.execute_batch("VACUUM");
        }
        Ok(Some(UnitStore {
            conn,
            path: path.to_path_buf(),
        }))
    }

    /// Starts a read transaction: every read after it, until the store is dropped, sees
    /// the file as it is now (a search's vectors, full text and units agree).
    pub fn begin_read(&self) -> Result<(), ApiError> {
        self.conn
            .execute_batch("BEGIN DEFERRED")
            .map_err(storage(&self.path))
    }

    /// The instance and generation of the file as this connection sees it.
    pub fn stamp(&self) -> Result<Stamp, ApiError> {
        let err = storage(&self.path);
        let get = |key: &str| -> Result<String, ApiError> {
            self.conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| {
                    r.get::<_, String>(0)
                })
                .optional()
                .map_err(&err)
                .map(Option::unwrap_or_default)
        };
        Ok(Stamp {
            instance: get("instance")?,
            generation: get("generation")?.parse().unwrap_or(-1),
        })
    }

    /// Every vector `model` embedded, as one matrix (a scan of the vectors' table).
    pub fn matrix(&self, model: &str) -> Result<Matrix, ApiError> {
        let err = storage(&self.path);
        let mut st = self
            .conn
            .prepare_cached("SELECT id, vector FROM vectors WHERE model = ?1 ORDER BY id")
            .map_err(&err)?;
        let mut rows = st.query([model]).map_err(&err)?;
        let mut m = Matrix::default();
        while let Some(row) = rows.next().map_err(&err)? {
            let id: i64 = row.get(0).map_err(&err)?;
            let blob = row
                .get_ref(1)
                .map_err(&err)?
                .as_blob()
                .map_err(|e| err(e.into()))?;
            m.push_le_bytes(id, blob).map_err(|why| {
                ApiError::new(
                    ErrorKind::Storage,
                    format!(
                        "the unit vectors at {}: unit {id}: {why}",
                        self.path.display()
                    ),
                )
                .hint("delete that file and run `loci embed` again to rebuild it")
            })?;
        }
        Ok(m)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every embedded file: path → (content hash, model).
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>, String)>, ApiError> {
        let err = storage(&self.path);
        let mut st = self
            .conn
            .prepare("SELECT path, hash, model FROM files")
            .map_err(&err)?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(&err)?;
        rows.collect::<Result<_, _>>().map_err(&err)
    }

    /// Replaces the units of the files in `batch` (path, hash, units) in one transaction,
    /// recording each file's hash and `model`.
    pub fn replace_files(
        &mut self,
        model: &str,
        batch: &[(String, Vec<u8>, Vec<NewUnit>)],
    ) -> Result<(), ApiError> {
        let path = self.path.clone();
        let err = storage(&path);
        let tx = self.conn.transaction().map_err(&err)?;
        for (file, hash, units) in batch {
            delete_file(&tx, file).map_err(&err)?;
            {
                let mut ins = tx
                    .prepare_cached(
                        "INSERT INTO units (path, name, qualified_name, kind, line, end_line, text)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )
                    .map_err(&err)?;
                let mut vec = tx
                    .prepare_cached("INSERT INTO vectors (id, model, vector) VALUES (?1, ?2, ?3)")
                    .map_err(&err)?;
                let mut fts = tx
                    .prepare_cached("INSERT INTO units_fts (rowid, name, body) VALUES (?1, ?2, ?3)")
                    .map_err(&err)?;
                for u in units {
                    ins.execute(params![
                        file,
                        u.name,
                        u.qualified_name,
                        u.kind,
                        u.line,
                        u.end_line,
                        u.text,
                    ])
                    .map_err(&err)?;
                    let id = tx.last_insert_rowid();
                    vec.execute(params![id, model, vector_bytes(&u.vector)])
                        .map_err(&err)?;
                    fts.execute(params![id, u.fts_name, u.fts_body])
                        .map_err(&err)?;
                }
            }
            tx.execute(
                "INSERT INTO files (path, hash, model, units) VALUES (?1, ?2, ?3, ?4)",
                params![file, hash, model, units.len() as i64],
            )
            .map_err(&err)?;
        }
        bump_generation(&tx).map_err(&err)?;
        tx.commit().map_err(&err)
    }

    /// Forgets the units of files the index no longer holds.
    pub fn remove_files(&mut self, files: &[String]) -> Result<(), ApiError> {
        let path = self.path.clone();
        let err = storage(&path);
        let tx = self.conn.transaction().map_err(&err)?;
        for f in files {
            delete_file(&tx, f).map_err(&err)?;
        }
        if !files.is_empty() {
            bump_generation(&tx).map_err(&err)?;
        }
        tx.commit().map_err(&err)
    }

    /// How many units are stored, and how many of them `model` embedded.
    pub fn counts(&self, model: Option<&str>) -> Result<(u64, u64), ApiError> {
        let err = storage(&self.path);
        let all: i64 = self
            .conn
            .query_row("SELECT count(*) FROM units", [], |r| r.get(0))
            .map_err(&err)?;
        let of_model: i64 = match model {
            Some(m) => self
                .conn
                .query_row("SELECT count(*) FROM vectors WHERE model = ?1", [m], |r| {
                    r.get(0)
                })
                .map_err(&err)?,
            None => all,
        };
        Ok((all as u64, of_model as u64))
    }

    /// The `k` units of `model` most similar to the unit-length `query`, best first,
    /// with their cosine similarity (an exact scan of every vector; a long-lived process
    /// keeps the matrix instead: [`super::resident`]).
    pub fn nearest(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(i64, f32)>, ApiError> {
        Ok(self.matrix(model)?.nearest(query, k))
    }

    /// The `k` best full-text matches of `words` (any of them), best first, with their
    /// BM25 (lower is better); the name field weighs [`NAME_WEIGHT`] times the body.
    pub fn full_text(&self, words: &[String], k: usize) -> Result<Vec<(i64, f64)>, ApiError> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let err = storage(&self.path);
        let expr = words
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR ");
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT rowid, bm25(units_fts, {NAME_WEIGHT}, 1.0) AS s FROM units_fts
                 WHERE units_fts MATCH ?1 ORDER BY s, rowid LIMIT ?2"
            ))
            .map_err(&err)?;
        let rows = st
            .query_map(params![expr, k as i64], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(&err)?;
        rows.collect::<Result<_, _>>().map_err(&err)
    }

    /// The stored units with these ids.
    pub fn units(&self, ids: &[i64]) -> Result<Vec<StoredUnit>, ApiError> {
        let err = storage(&self.path);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT id, path, name, qualified_name, kind, line, end_line FROM units WHERE id = ?1",
            )
            .map_err(&err)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let u = st
                .query_row([id], |r| {
                    Ok(StoredUnit {
                        id: r.get(0)?,
                        path: r.get(1)?,
                        name: r.get(2)?,
                        qualified_name: r.get(3)?,
                        kind: r.get(4)?,
                        line: r.get(5)?,
                        end_line: r.get(6)?,
                    })
                })
                .optional()
                .map_err(&err)?;
            out.extend(u);
        }
        Ok(out)
    }
}

/// Full text's weight of a unit's name (and its container's) against its body's 1.
pub const NAME_WEIGHT: f64 = 3.0;

fn delete_file(tx: &rusqlite::Transaction<'_>, file: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM units_fts WHERE rowid IN (SELECT id FROM units WHERE path = ?1)",
        [file],
    )?;
    tx.execute(
        "DELETE FROM vectors WHERE id IN (SELECT id FROM units WHERE path = ?1)",
        [file],
    )?;
    tx.execute("DELETE FROM units WHERE path = ?1", [file])?;
    tx.execute("DELETE FROM files WHERE path = ?1", [file])?;
    Ok(())
}

/// A new file's (or an upgraded one's) stamp: a fresh instance, generation 0.
fn init_stamp(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let instance = format!("{nanos:x}-{:x}", std::process::id());
    tx.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('instance', ?1), ('generation', '0')",
        [instance],
    )?;
    Ok(())
}

/// Every write transaction bumps the generation a resident reader compares.
fn bump_generation(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation'",
        [],
    )?;
    Ok(())
}

fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, v: [f32; 2]) -> NewUnit {
        NewUnit {
            name: name.into(),
            qualified_name: name.into(),
            kind: "function".into(),
            line: 1,
            end_line: 2,
            text: format!("function {name}"),
            fts_name: name.into(),
            fts_body: String::new(),
            vector: v.to_vec(),
        }
    }

    #[test]
    fn every_write_moves_the_stamp_and_a_new_file_has_a_new_instance() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        assert!(UnitStore::open(&path, false).unwrap().is_none());
        let mut st = UnitStore::open(&path, true).unwrap().unwrap();
        let first = st.stamp().unwrap();
        assert_eq!(first.generation, 0);
        let batch = vec![("a.py".to_string(), vec![1u8], vec![unit("a", [1.0, 0.0])])];
        st.replace_files("m", &batch).unwrap();
        let second = st.stamp().unwrap();
        assert_eq!(second.generation, 1);
        assert_eq!(second.instance, first.instance);
        st.remove_files(&[]).unwrap();
        assert_eq!(
            st.stamp().unwrap().generation,
            1,
            "an empty removal writes nothing"
        );
        st.remove_files(&["a.py".to_string()]).unwrap();
        assert_eq!(st.stamp().unwrap().generation, 2);
        assert!(st.matrix("m").unwrap().is_empty());
        drop(st);
        std::fs::remove_file(&path).unwrap();
        let st = UnitStore::open(&path, true).unwrap().unwrap();
        assert_ne!(st.stamp().unwrap().instance, first.instance);
    }

    /// A layout-1 file, as the first `loci embed` wrote it.
    fn layout_1(path: &Path) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
             CREATE TABLE files (path TEXT PRIMARY KEY, hash BLOB NOT NULL, model TEXT NOT NULL, units INTEGER NOT NULL) WITHOUT ROWID;
             CREATE TABLE units (id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL,
                 qualified_name TEXT NOT NULL, kind TEXT NOT NULL, line INTEGER NOT NULL,
                 end_line INTEGER NOT NULL, text TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL);
             CREATE INDEX units_path ON units(path);
             CREATE VIRTUAL TABLE units_fts USING fts5(name, body, tokenize = 'unicode61');
             INSERT INTO meta VALUES ('version', '1');
             INSERT INTO files VALUES ('a.py', x'01', 'm', 1);",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO units VALUES (7, 'a.py', 'a', 'a', 'function', 1, 2, 'function a', 'm', ?1)",
            [vector_bytes(&[0.6, 0.8])],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO units_fts (rowid, name, body) VALUES (7, 'a', '')",
            [],
        )
        .unwrap();
    }

    #[test]
    fn a_layout_1_file_is_refused_to_a_reader_and_upgraded_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        layout_1(&path);
        // Enough vectors that dropping their column frees pages.
        let conn = Connection::open(&path).unwrap();
        for id in 100..400 {
            conn.execute(
                "INSERT INTO units VALUES (?1, 'b.py', 'b', 'b', 'function', 1, 2, 'function b', 'other', ?2)",
                rusqlite::params![id, vector_bytes(&[0.5; 384])],
            )
            .unwrap();
        }
        let pages_before: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        drop(conn);
        let e = UnitStore::open(&path, false).err().unwrap();
        assert_eq!(e.kind, ErrorKind::UnknownSchema);
        assert!(e.hint.as_deref().unwrap().contains("loci embed"), "{e:?}");
        let st = UnitStore::open(&path, true).unwrap().unwrap();
        // The vectors moved to their own table, and the pages the old column filled
        // were given back: the file did not double.
        let pages_after: i64 = st
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        assert!(
            pages_after < pages_before + pages_before / 4,
            "{pages_before} pages before the upgrade, {pages_after} after"
        );
        assert_eq!(st.matrix("m").unwrap().nearest(&[0.6, 0.8], 5), [(7, 1.0)]);
        assert_eq!(st.counts(Some("m")).unwrap(), (301, 1));
        assert_eq!(st.full_text(&["a".into()], 5).unwrap()[0].0, 7);
        assert_eq!(st.units(&[7]).unwrap()[0].name, "a");
        drop(st);
        // Upgraded once: a reader now opens it.
        assert!(UnitStore::open(&path, false).unwrap().is_some());
    }

    #[test]
    fn a_later_layout_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        drop(UnitStore::open(&path, true).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.execute("UPDATE meta SET value = '9' WHERE key = 'version'", [])
            .unwrap();
        for create in [false, true] {
            let e = UnitStore::open(&path, create).err().unwrap();
            assert_eq!(e.kind, ErrorKind::UnknownSchema, "{e:?}");
        }
    }
}
