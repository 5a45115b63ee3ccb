//! The store itself: its connection and file, and the reads every operation shares.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::rows::{LINK_COLUMNS, from_column, link_from_row, not_found, parse_type};
use super::{open_connections, schema, vector_cache};
use crate::MemoryError;
use crate::model::{CodeLink, Memory};
use vector_cache::VectorCacheStats;

/// Statements each connection keeps prepared: every one a recall runs (a few dozen, the
/// lists of ids giving one statement per length), so a kept connection
/// ([`open_connections`]) answers the next recall without parsing SQL again.
const STATEMENT_CACHE: usize = 128;

/// Memories kept in a SQLite file.
pub struct SqliteStore {
    pub(super) conn: KeptConnection,
    pub(super) path: PathBuf,
}

/// The store's connection: always there while the store lives, taken out only when
/// the store is dropped, to be given back to the process's open connections
/// ([`open_connections`]).
pub(super) struct KeptConnection(Option<Connection>);

impl std::ops::Deref for KeptConnection {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.0.as_ref().expect("taken only on drop")
    }
}

impl std::ops::DerefMut for KeptConnection {
    fn deref_mut(&mut self) -> &mut Connection {
        self.0.as_mut().expect("taken only on drop")
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.0.take() {
            open_connections::SHARED.give_back(&self.path, conn);
        }
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish()
    }
}

impl SqliteStore {
    /// Opens (creating and migrating) the memory database at `path`.
    /// A connection this process already has open on that file is reused
    /// ([`open_connections`]).
    pub fn open(path: &Path) -> Result<SqliteStore, MemoryError> {
        let schema = schema::MIGRATIONS.len() as i64;
        let conn = match open_connections::SHARED.take(path, schema) {
            Some(conn) => conn,
            None => {
                let conn = loci_store::open_side_db(path, schema::MIGRATIONS)?;
                conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
                conn
            }
        };
        Ok(SqliteStore {
            conn: KeptConnection(Some(conn)),
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What this process's cache of the store's vectors of `model` has done (`None`
    /// before the first vector recall): full loads against incremental updates.
    pub fn vector_cache_stats(&self, model: &str) -> Option<VectorCacheStats> {
        vector_cache::stats(&self.path, model)
    }

    /// Chunks (of live memories; of one memory, or of a namespace, or all) that have no
    /// vector of `model` yet: what `vectors: pending` counts.
    pub fn missing_vectors(
        &self,
        model: &str,
        memory_id: Option<i64>,
        ns: Option<&str>,
    ) -> Result<u64, MemoryError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM chunks c JOIN memories m ON m.id = c.memory_id
                 WHERE m.deleted_at IS NULL AND (?2 IS NULL OR m.id = ?2)
                   AND (?3 IS NULL OR m.namespace = ?3) AND NOT EXISTS
                   (SELECT 1 FROM embeddings x WHERE x.model = ?1 AND x.memory_id = c.memory_id AND x.seq = c.seq)",
                rusqlite::params![model, memory_id, ns],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(self.err())
    }

    pub(super) fn err(&self) -> impl Fn(rusqlite::Error) -> MemoryError + '_ {
        move |source| MemoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// The id and deleted flag of `name` in `ns`.
    pub(super) fn find_id(&self, ns: &str, name: &str) -> Result<(i64, bool), MemoryError> {
        self.conn
            .query_row(
                "SELECT id, deleted_at IS NOT NULL FROM memories WHERE namespace = ?1 AND name = ?2",
                params![ns, name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.err())?
            .ok_or_else(|| not_found(ns, name))
    }

    pub(super) fn memory_by_id(&self, id: i64) -> Result<Memory, MemoryError> {
        let e = self.err();
        let mut m = self
            .conn
            .query_row(
                "SELECT id, namespace, name, type, description, body, body_hash, source, session_id,
                        metadata, version, created_at, updated_at, deleted_at, extraction
                 FROM memories WHERE id = ?1",
                [id],
                |r| {
                    Ok(Memory {
                        id: r.get(0)?,
                        namespace: r.get(1)?,
                        name: r.get(2)?,
                        memory_type: parse_type(&r.get::<_, String>(3)?),
                        description: r.get(4)?,
                        body: r.get(5)?,
                        body_hash: r.get(6)?,
                        source: r.get(7)?,
                        session_id: r.get(8)?,
                        metadata: serde_json::from_str(&r.get::<_, String>(9)?)
                            .unwrap_or(serde_json::Value::Null),
                        version: r.get(10)?,
                        created_at: r.get(11)?,
                        updated_at: r.get(12)?,
                        deleted_at: r.get(13)?,
                        entities: Vec::new(),
                        links: Vec::new(),
                        extraction: from_column(r.get(14)?),
                    })
                },
            )
            .map_err(&e)?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT e.name FROM memory_entities me JOIN entities e ON e.id = me.entity_id
                 WHERE me.memory_id = ?1 ORDER BY e.name",
            )
            .map_err(&e)?;
        m.entities = stmt
            .query_map([id], |r| r.get(0))
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        m.links = self.links_of_one(id)?;
        Ok(m)
    }

    pub(super) fn links_of_one(&self, id: i64) -> Result<Vec<CodeLink>, MemoryError> {
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {LINK_COLUMNS} FROM code_links WHERE memory_id = ?1 ORDER BY path, qualified_name"
            ))
            .map_err(&e)?;
        let rows = stmt
            .query_map([id], link_from_row)
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(rows)
    }
}
