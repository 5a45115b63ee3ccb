//! The workspace's unit vectors: a SQLite file of its own next to the index
//! (`meaning.db`), so the index's schema never changes for it and deleting it turns the
//! feature off. One row per file (`files`: the content hash the index had when its units
//! were embedded, and the model that embedded them) and one per unit (`units`: where it
//! is, its texts and its vector), with an FTS5 table over the units' words.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{ApiError, ErrorKind};

/// The vectors file's name, in the index's folder.
pub const FILE_NAME: &str = "meaning.db";
/// The layout this code writes and reads.
const VERSION: &str = "1";

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
    text           TEXT NOT NULL,
    model          TEXT NOT NULL,
    vector         BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS units_path ON units(path);
CREATE VIRTUAL TABLE IF NOT EXISTS units_fts USING fts5(name, body, tokenize = 'unicode61');
";

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
    /// not exist and `create` is false.
    pub fn open(path: &Path, create: bool) -> Result<Option<UnitStore>, ApiError> {
        if !create && !path.is_file() {
            return Ok(None);
        }
        let err = storage(path);
        let conn = Connection::open(path).map_err(&err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(&err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(&err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(&err)?;
        conn.execute_batch(SCHEMA).map_err(&err)?;
        let version: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(&err)?;
        match version.as_deref() {
            None => {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('version', ?1)",
                    [VERSION],
                )
                .map_err(&err)?;
            }
            Some(VERSION) => {}
            Some(other) => {
                return Err(ApiError::new(
                    ErrorKind::UnknownSchema,
                    format!(
                        "the unit vectors at {} are layout {other}; this loci reads {VERSION}",
                        path.display()
                    ),
                )
                .hint("delete that file and run `loci embed` again"));
            }
        }
        Ok(Some(UnitStore {
            conn,
            path: path.to_path_buf(),
        }))
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
                        "INSERT INTO units (path, name, qualified_name, kind, line, end_line, text, model, vector)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    )
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
                        model,
                        vector_bytes(&u.vector)
                    ])
                    .map_err(&err)?;
                    let id = tx.last_insert_rowid();
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
                .query_row("SELECT count(*) FROM units WHERE model = ?1", [m], |r| {
                    r.get(0)
                })
                .map_err(&err)?,
            None => all,
        };
        Ok((all as u64, of_model as u64))
    }

    /// The `k` units of `model` most similar to the unit-length `query`, best first,
    /// with their cosine similarity (a scan of every vector: exact, and fast enough for
    /// the units of one workspace).
    pub fn nearest(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(i64, f32)>, ApiError> {
        let err = storage(&self.path);
        let mut st = self
            .conn
            .prepare_cached("SELECT id, vector FROM units WHERE model = ?1")
            .map_err(&err)?;
        let mut rows = st.query([model]).map_err(&err)?;
        let mut scored: Vec<(i64, f32)> = Vec::new();
        let mut v: Vec<f32> = Vec::with_capacity(query.len());
        while let Some(row) = rows.next().map_err(&err)? {
            let id: i64 = row.get(0).map_err(&err)?;
            let blob = row
                .get_ref(1)
                .map_err(&err)?
                .as_blob()
                .map_err(|e| err(e.into()))?;
            v.clear();
            v.extend(
                blob.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            scored.push((id, loci_memory::cosine::dot(&v, query)));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        Ok(scored)
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
    tx.execute("DELETE FROM units WHERE path = ?1", [file])?;
    tx.execute("DELETE FROM files WHERE path = ?1", [file])?;
    Ok(())
}

fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
