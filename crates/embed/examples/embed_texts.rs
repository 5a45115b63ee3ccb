//! Embeds the `text` of each JSONL line on stdin with the installed model and writes
//! the vectors, little-endian f32 rows in input order, to OUT: how the offline quality
//! scripts (scripts/quality_learned.py) embed texts the store never saw, such as windows
//! of a section or the queries.
//!
//! ```text
//! embed_texts OUT MODELS < texts.jsonl
//! ```
use std::io::{BufRead, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or("usage: embed_texts OUT MODELS")?;
    let models = args.next().ok_or("usage: embed_texts OUT MODELS")?;
    let embedder = loci_embed::Embedder::load_installed(std::path::Path::new(&models))?;
    let mut texts = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        texts.push(v["text"].as_str().unwrap_or_default().to_string());
    }
    let started = std::time::Instant::now();
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    for batch in texts.chunks(2048) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        for v in embedder.embed(&refs)? {
            for x in v {
                file.write_all(&x.to_le_bytes())?;
            }
        }
    }
    eprintln!(
        "{} texts in {:.1} s",
        texts.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
