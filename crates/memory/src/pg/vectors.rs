//! Vectors in PostgreSQL: each chunk's as a `real[]` (and, with pgvector, as a
//! `vector` beside it, `pgvector.rs`), and the k-NN over them: answered by the
//! database's HNSW index when pgvector is there ([`PgStore::nearest_in_database`]),
//! else the exact cosine computed in loci over [`crate::MemoryStore::scan_vectors`]
//! ([`crate::vector::scan_nearest`]). Also the chunks still waiting for a vector.

use postgres::fallible_iterator::FallibleIterator;

use super::ctx::Db;
use super::handle::PgStore;
use super::migrate::LOCK_KEY;
use super::pgvector::{MAX_INDEXED_DIM, Pgvector, ensure_index};
use super::rows::{Args, filter_sql};
use crate::MemoryError;
use crate::store::{Filter, PendingChunk, VectorSearch};

impl PgStore {
    /// How this store's vector recall searches: in the database with pgvector, else
    /// exactly in loci.
    pub(super) fn vector_search(&self) -> VectorSearch {
        if self.knn_in_database {
            VectorSearch::Pgvector
        } else {
            VectorSearch::Exact
        }
    }

    /// The k-NN answered by the database's HNSW index (pgvector): each memory by its
    /// best chunk, best first, as cosine similarities. `None` (recall scans exactly)
    /// without pgvector (or with [`super::PgOptions::exact_vectors`]), for a dimension
    /// the index does not take, or when the query fails (the scan then answers, and
    /// reports the error if it has one too).
    pub(super) fn nearest_in_database(
        &self,
        model: &str,
        filter: &Filter,
        query: &[f32],
        k: usize,
    ) -> Option<Vec<(i64, f32)>> {
        let pv = self.pgvector.as_ref().filter(|_| self.knn_in_database)?;
        let dim = i32::try_from(query.len()).ok()?;
        if k == 0 {
            return Some(Vec::new());
        }
        if !(1..=MAX_INDEXED_DIM).contains(&dim) {
            return None;
        }
        match self.knn(pv, model, filter, query, dim, k) {
            Ok(hits) => Some(hits),
            Err(e) => {
                tracing::warn!(target: "memory", database = %self.ctx.target, error = %e, "pgvector k-NN failed: exact scan");
                None
            }
        }
    }

    fn knn(
        &self,
        pv: &Pgvector,
        model: &str,
        f: &Filter,
        query: &[f32],
        dim: i32,
        k: usize,
    ) -> Result<Vec<(i64, f32)>, MemoryError> {
        let c = &self.ctx;
        let mut a = Args::default();
        let model = a.add(model.to_string());
        let q = a.add(query.to_vec());
        let cond = filter_sql(&c.scope, f, &mut a);
        // A memory ranks by its best chunk: ask for more chunks than memories, then
        // keep each memory's nearest.
        let chunks = (k * 4).max(40) as i64;
        let limit = a.add(chunks);
        let ty = pv.ty(dim);
        let op = pv.cosine();
        let mut client = self.client()?;
        let mut tx = client.transaction().db(c)?;
        // The search list must cover the rows asked for; from 0.8 the scan goes on
        // past rows the filter (another scope, namespace, a forgotten memory) drops.
        let mut settings = format!("SET LOCAL hnsw.ef_search = {};", chunks.clamp(40, 1000));
        if pv.iterative_scan {
            settings.push_str(" SET LOCAL hnsw.iterative_scan = strict_order;");
        }
        tx.batch_execute(&settings).db(c)?;
        let rows = tx
            .query(
                &format!(
                    "SELECT memory_id, min(d) FROM (
                         SELECT x.memory_id, (x.embedding::{ty}) {op} ({q}::real[]::{ty}) AS d
                         FROM embeddings x JOIN memories m ON m.id = x.memory_id
                         WHERE x.dim = {dim} AND x.model = {model} AND {cond}
                         ORDER BY d LIMIT {limit}
                     ) hits GROUP BY memory_id ORDER BY min(d), memory_id"
                ),
                &a.refs(),
            )
            .db(c)?;
        tx.commit().db(c)?;
        let mut hits = rows
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<_, i64>(0)?,
                    1.0 - r.try_get::<_, f64>(1)? as f32,
                ))
            })
            .collect::<Result<Vec<_>, postgres::Error>>()
            .db(c)?;
        hits.truncate(k);
        Ok(hits)
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
        self.index_dim(dim)?;
        // With pgvector the same values go into the `vector` column the index reads.
        let (column, value) = match &self.pgvector {
            Some(pv) => (", embedding", format!(", $6::real[]::{}.vector", pv.schema)),
            None => ("", String::new()),
        };
        let update = if column.is_empty() {
            ""
        } else {
            ", embedding = excluded.embedding"
        };
        let sql = format!(
            "INSERT INTO embeddings (scope, model, memory_id, seq, dim, vector{column})
             SELECT $1, $2, $3, $4, $5, $6{value} WHERE EXISTS
                 (SELECT 1 FROM chunks WHERE memory_id = $3 AND seq = $4 AND scope = $1)
             ON CONFLICT (model, memory_id, seq) DO UPDATE SET dim = excluded.dim, vector = excluded.vector{update}"
        );
        self.write(|tx, c| {
            // A chunk gone since it was read (an edit, a purge) takes no vector.
            for (id, seq, v) in rows {
                tx.execute(&sql, &[&c.scope, &model, id, &(*seq as i32), &dim, v])
                    .db(c)?;
            }
            Ok(())
        })
    }

    /// With pgvector, makes sure `dim`-dimension vectors have their HNSW index (once
    /// per pool and dimension; created under the migrations' lock).
    fn index_dim(&self, dim: i32) -> Result<(), MemoryError> {
        let Some(pv) = &self.pgvector else {
            return Ok(());
        };
        self.pool.index_once(dim, || {
            let c = &self.ctx;
            let mut client = self.client()?;
            let mut tx = client.transaction().db(c)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
                .db(c)?;
            ensure_index(&mut tx, c, pv, dim)?;
            tx.commit().db(c)
        })
    }
}
