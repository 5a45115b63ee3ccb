//! Embeds the `text` of each JSONL line on stdin with the installed model into the
//! quality harness's vector cache (`common/vector_cache.rs`, the file `recall_eval` and
//! `memory_recall` fill): how the offline quality scripts (scripts/quality_learned.py)
//! get vectors for texts the store never saw, such as windows of a section. Texts
//! already cached are not embedded again.
//!
//! ```text
//! embed_texts MODELS CACHE < texts.jsonl
//! ```

#[path = "common/vector_cache.rs"]
mod vector_cache;

use std::io::BufRead;
use std::path::Path;

/// Texts per call into the cache, so memory stays bounded on a large input.
const BATCH: usize = 2048;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(models), Some(cache)) = (args.next(), args.next()) else {
        return Err("usage: embed_texts MODELS CACHE < texts.jsonl".into());
    };
    let embedder = vector_cache::CachedEmbedder::open(Path::new(&models), Path::new(&cache))?;
    let mut texts = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        texts.push(v["text"].as_str().ok_or("a line has no text")?.to_string());
    }
    let started = std::time::Instant::now();
    for batch in texts.chunks(BATCH) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        embedder.embed(&refs)?;
    }
    eprintln!(
        "{} texts in {:.1} s",
        texts.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
