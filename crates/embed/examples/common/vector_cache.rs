//! A file-backed cache of the real model's vectors, keyed by the SHA-256 of each text,
//! so a rerun of the quality harness on the same set embeds nothing again (embedding
//! ~7,000 sections and their chunks takes minutes on a loaded machine). Shared by the
//! `recall_eval` and `memory_recall` examples through `#[path]`.
//!
//! The file is a sequence of records: 32 bytes of hash, then `dim` little-endian `f32`.
//! A torn last record (a killed run) is ignored.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// The model and the cache in front of it.
pub struct CachedEmbedder {
    inner: loci_embed::Embedder,
    path: PathBuf,
    known: Mutex<HashMap<[u8; 32], Vec<f32>>>,
}

fn key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl CachedEmbedder {
    /// Loads the installed model from `models` and the cache file in `dir` (created).
    pub fn open(models: &Path, dir: &Path) -> Result<Self, Box<dyn std::error::Error>> {
        let inner = loci_embed::Embedder::load_installed(models)?;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let name: String = inner
            .model_id()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let path = dir.join(format!("vectors-{name}.bin"));
        let dim = inner.dim();
        let mut known = HashMap::new();
        if let Ok(bytes) = std::fs::read(&path) {
            for rec in bytes.chunks_exact(32 + dim * 4) {
                let mut k = [0u8; 32];
                k.copy_from_slice(&rec[..32]);
                let v = rec[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                known.insert(k, v);
            }
        }
        eprintln!("vector cache {}: {} vectors", path.display(), known.len());
        Ok(CachedEmbedder {
            inner,
            path,
            known: Mutex::new(known),
        })
    }

    /// One unit vector per text, as documents: from the cache, else from the model (then
    /// cached).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>> {
        self.embed_as(texts, false)
    }

    /// [`CachedEmbedder::embed`] for search queries (the model's query prefix, if it
    /// has one); cached under a key of their own.
    pub fn embed_queries(
        &self,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>> {
        self.embed_as(texts, true)
    }

    fn embed_as(
        &self,
        texts: &[&str],
        query: bool,
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>> {
        let keys: Vec<[u8; 32]> = texts
            .iter()
            .map(|t| {
                if query {
                    key(&format!("\0query\0{t}"))
                } else {
                    key(t)
                }
            })
            .collect();
        let mut known = self.known.lock().map_err(|_| "vector cache poisoned")?;
        let mut missing: Vec<usize> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            if !known.contains_key(k) && !missing.iter().any(|&j| keys[j] == *k) {
                missing.push(i);
            }
        }
        if !missing.is_empty() {
            let todo: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let vectors = if query {
                self.inner.embed_queries(&todo)?
            } else {
                self.inner.embed(&todo)?
            };
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(|e| format!("{}: {e}", self.path.display()))?;
            let mut buf = Vec::new();
            for (&i, v) in missing.iter().zip(vectors) {
                buf.extend_from_slice(&keys[i]);
                for x in &v {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
                known.insert(keys[i], v);
            }
            file.write_all(&buf)?;
        }
        Ok(keys.iter().map(|k| known[k].clone()).collect())
    }
}

impl loci_memory::Embedder for CachedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, loci_memory::EmbedError> {
        CachedEmbedder::embed(self, texts).map_err(|e| loci_memory::EmbedError(e.to_string()))
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, loci_memory::EmbedError> {
        CachedEmbedder::embed_queries(self, &[text])
            .map(|mut v| v.pop().unwrap_or_default())
            .map_err(|e| loci_memory::EmbedError(e.to_string()))
    }
}
