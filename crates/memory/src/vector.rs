//! Vectors: the [`Embedder`] seam a local model plugs into, the exact cosine k-NN over
//! the stored BLOBs (a dot product over L2-normalised vectors, written so the compiler
//! vectorises it), and the step that fills the vectors of memories stored without them.

use crate::MemoryError;
use crate::store::{Filter, MemoryStore};

/// Why an embedder failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EmbedError(pub String);

/// Turns texts into vectors. loci's local model implements it; recall and
/// [`embed_pending`] only see this trait.
pub trait Embedder {
    /// A stable name of the model and its version (vectors are stored per model).
    fn model_id(&self) -> &str;
    /// The length of every vector.
    fn dim(&self) -> usize;
    /// One vector per text, in order: the texts are what is searched (documents).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// The vector of a query. Models trained to read queries and documents apart
    /// (e5's `query: ` and `passage: `) override it; by default a query is embedded as
    /// a document.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed(&[text])?.pop().unwrap_or_default())
    }
}

pub use crate::cosine::{dot, normalize};

/// The `k` memories whose best chunk is nearest `query` (normalised), with that
/// cosine similarity, best first: from the store's cache of its vectors when it keeps
/// one (`SqliteStore` does, per process), else by [`scan_nearest`].
pub fn nearest(
    store: &dyn MemoryStore,
    model: &str,
    filter: &Filter,
    query: &[f32],
    k: usize,
) -> Result<Vec<(i64, f32)>, MemoryError> {
    match store.nearest_cached(model, filter, query, k) {
        Some(hits) => Ok(hits),
        None => scan_nearest(store, model, filter, query, k),
    }
}

/// Bench only: makes every [`SqliteStore`](crate::SqliteStore)'s cached k-NN in this
/// process take the path the int8 pass and the incremental update replaced (every
/// chunk scanned in `f32`, a full reload after any change), so one run can time both.
/// The answers are the same either way.
pub fn set_reference_scan(on: bool) {
    crate::sqlite::set_reference_scan(on);
}

/// What a store's cache of its vectors holds per chunk of `dim` values, in bytes (the
/// `f32` vector, its int8 copy, the scale and the owner).
pub fn cache_bytes_per_chunk(dim: usize) -> usize {
    crate::sqlite::cache_bytes_per_chunk(dim)
}

/// [`nearest`] by reading every stored vector of `model` (what a store without a
/// cache of its vectors runs, and what the cache is measured against).
pub fn scan_nearest(
    store: &dyn MemoryStore,
    model: &str,
    filter: &Filter,
    query: &[f32],
    k: usize,
) -> Result<Vec<(i64, f32)>, MemoryError> {
    let mut best: rustc_hash::FxHashMap<i64, f32> = Default::default();
    store.scan_vectors(model, filter, &mut |id, _seq, v| {
        let s = dot(query, v);
        let e = best.entry(id).or_insert(f32::MIN);
        if s > *e {
            *e = s;
        }
    })?;
    let mut all: Vec<(i64, f32)> = best.into_iter().collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.truncate(k);
    Ok(all)
}

/// Embeds up to `max` chunks that have no vector of the embedder's model yet, `batch`
/// at a time, and stores them. Returns how many were embedded. Memories are stored
/// first and never wait for this.
pub fn embed_pending(
    store: &mut dyn MemoryStore,
    embedder: &dyn Embedder,
    batch: usize,
    max: usize,
) -> Result<usize, MemoryError> {
    let mut done = 0;
    let batch = batch.max(1);
    while done < max {
        let pending = store.pending_chunks(embedder.model_id(), batch.min(max - done))?;
        if pending.is_empty() {
            break;
        }
        let texts: Vec<&str> = pending.iter().map(|c| c.text.as_str()).collect();
        let vectors = embedder
            .embed(&texts)
            .map_err(|e| MemoryError::Embed(e.to_string()))?;
        if vectors.len() != pending.len() {
            return Err(MemoryError::Embed(format!(
                "the embedder gave {} vectors for {} texts",
                vectors.len(),
                pending.len()
            )));
        }
        let rows: Vec<(i64, u32, Vec<f32>)> = pending
            .iter()
            .zip(vectors)
            .map(|(c, mut v)| {
                normalize(&mut v);
                (c.memory_id, c.seq, v)
            })
            .collect();
        store.store_vectors(embedder.model_id(), embedder.dim(), &rows)?;
        done += rows.len();
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_agrees_with_the_plain_sum_at_every_length() {
        for n in [0, 1, 7, 8, 9, 384] {
            let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
            let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32 * 0.25).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!(
                (dot(&a, &b) - plain).abs() <= plain.abs() * 1e-5 + 1e-5,
                "n={n}"
            );
        }
    }
}
