//! Vectors in PostgreSQL: each chunk's as a `real[]`, the exact cosine computed in loci
//! over [`crate::MemoryStore::scan_vectors`] ([`crate::vector::scan_nearest`]), and the
//! chunks still waiting for one.
//!
//! The seam for pgvector (not packaged for the Debian loci targets today):
//! [`PgStore::nearest_in_database`] is where a database that has it would answer the
//! k-NN itself — a later migration adding a `vector(dim)` column beside `vector` and an
//! HNSW index on it, and this method running `ORDER BY embedding <=> $query LIMIT k`
//! within the filter — so recall, which asks [`crate::MemoryStore::nearest_cached`]
//! first, would use it unchanged.

use postgres::fallible_iterator::FallibleIterator;

use super::ctx::Db;
use super::handle::PgStore;
use super::rows::{Args, filter_sql};
use crate::MemoryError;
use crate::store::{Filter, PendingChunk, VectorSearch};

impl PgStore {
    /// How this store's vector recall searches: exact while
    /// [`PgStore::nearest_in_database`] answers nothing (no pgvector migration yet).
    pub(super) fn vector_search(&self) -> VectorSearch {
        VectorSearch::Exact
    }

    /// The k-NN answered by the database, when it can (pgvector); `None` today, so
    /// recall scans the vectors exactly.
    pub(super) fn nearest_in_database(
        &self,
        _model: &str,
        _filter: &Filter,
        _query: &[f32],
        _k: usize,
    ) -> Option<Vec<(i64, f32)>> {
        None
    }

    pub(super) fn scan_vectors_impl(
        &self,
        model: &str,
        f: &Filter,
        visit: &mut dyn FnMut(i64, u32, &[f32]),
    ) -> Result<(), MemoryError> {
        let c = &self.ctx;
        let mut a = Args::default();
        let model = a.add(model.to_string());
        let cond = filter_sql(&c.scope, f, &mut a);
        let mut client = self.client()?;
        let mut rows = client
            .query_raw(
                &format!(
                    "SELECT x.memory_id, x.seq, x.vector FROM embeddings x JOIN memories m ON m.id = x.memory_id
                     WHERE x.model = {model} AND {cond}"
                ),
                a.refs(),
            )
            .db(c)?;
        while let Some(r) = rows.next().db(c)? {
            let id: i64 = r.try_get(0).db(c)?;
            let seq: i32 = r.try_get(1).db(c)?;
            let v: Vec<f32> = r.try_get(2).db(c)?;
            visit(id, seq as u32, &v);
        }
        Ok(())
    }

    pub(super) fn pending_chunks_impl(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<PendingChunk>, MemoryError> {
        let c = &self.ctx;
        self.client()?
            .query(
                "SELECT ch.memory_id, ch.seq,
                        substring(convert_to(m.body, 'UTF8') FROM ch.start_byte + 1 FOR ch.end_byte - ch.start_byte)
                 FROM chunks ch JOIN memories m ON m.id = ch.memory_id
                 WHERE m.scope = $1 AND m.deleted_at IS NULL AND NOT EXISTS
                   (SELECT 1 FROM embeddings x WHERE x.model = $2 AND x.memory_id = ch.memory_id AND x.seq = ch.seq)
                 ORDER BY ch.memory_id, ch.seq LIMIT $3",
                &[&c.scope, &model, &(limit.min(i64::MAX as usize) as i64)],
            )
            .db(c)?
            .iter()
            .map(|r| {
                let bytes: &[u8] = r.try_get(2)?;
                Ok(PendingChunk {
                    memory_id: r.try_get(0)?,
                    seq: r.try_get::<_, i32>(1)? as u32,
                    text: String::from_utf8_lossy(bytes).into_owned(),
                })
            })
            .collect::<Result<_, postgres::Error>>()
            .db(c)
    }

    pub(super) fn store_vectors_impl(
        &mut self,
        model: &str,
        dim: usize,
        rows: &[(i64, u32, Vec<f32>)],
    ) -> Result<(), MemoryError> {
        if let Some((_, _, v)) = rows.iter().find(|(_, _, v)| v.len() != dim) {
            return Err(MemoryError::Embed(format!(
                "the embedder gave a vector of {} values for a {dim}-dimension model",
                v.len()
            )));
        }
        let dim = i32::try_from(dim)
            .map_err(|_| MemoryError::Embed(format!("{dim} dimensions are too many")))?;
        self.write(|tx, c| {
            // A chunk gone since it was read (an edit, a purge) takes no vector.
            for (id, seq, v) in rows {
                tx.execute(
                    "INSERT INTO embeddings (scope, model, memory_id, seq, dim, vector)
                     SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS
                         (SELECT 1 FROM chunks WHERE memory_id = $3 AND seq = $4 AND scope = $1)
                     ON CONFLICT (model, memory_id, seq) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                    &[&c.scope, &model, id, &(*seq as i32), &dim, v],
                )
                .db(c)?;
            }
            Ok(())
        })
    }
}
