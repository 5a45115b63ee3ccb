//! Embedding throughput and the embedder's peak RSS, on chunks of at most 256 tokens
//! cut from real text (the quality set's corpus, else loci's own docs).
//!
//! ```text
//! cargo run --release -p loci-embed --example embed_bench -- \
//!     [--models DIR] [--text corpus.jsonl] [--chunks 512] [--batch 16] [--tokens 256]
//! ```
//! Run it once per batch size (scripts/bench-embed.sh does): the peak RSS is the
//! process's high-water mark (`VmHWM`), load included.

use std::path::PathBuf;
use std::time::Instant;

use loci_embed::Embedder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut models: Option<PathBuf> = None;
    let mut text: Option<PathBuf> = None;
    let (mut chunks, mut batch, mut tokens) = (512usize, loci_embed::BATCH_SIZE, 256usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--models" => models = Some(value()?.into()),
            "--text" => text = Some(value()?.into()),
            "--chunks" => chunks = value()?.parse()?,
            "--batch" => batch = value()?.parse()?,
            "--tokens" => tokens = value()?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let models = match models {
        Some(m) => m,
        None => default_models_dir().ok_or("no data dir: pass --models")?,
    };
    let rss_before = status_kb("VmRSS");
    let started = Instant::now();
    let embedder = Embedder::load_installed(&models)?;
    let load = started.elapsed();
    let rss_loaded = status_kb("VmRSS");

    let words = source_words(text.as_deref())?;
    let pieces = cut_chunks(&embedder, &words, chunks, tokens.min(embedder.max_tokens()))?;
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let token_counts: Vec<usize> = refs
        .iter()
        .map(|c| embedder.count_tokens(c))
        .collect::<Result<_, _>>()?;
    let mean_tokens = token_counts.iter().sum::<usize>() as f64 / refs.len() as f64;

    embedder.embed_batched(&refs[..batch.min(refs.len())], batch)?; // warm-up
    let started = Instant::now();
    let vectors = embedder.embed_batched(&refs, batch)?;
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(vectors.len(), refs.len());
    let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into());
    println!(
        "{{\"batch\": {batch}, \"chunks\": {}, \"mean_tokens\": {mean_tokens:.0}, \"max_tokens\": {}, \
         \"threads\": \"{threads}\", \"seconds\": {secs:.2}, \"chunks_per_s\": {:.1}, \
         \"load_ms\": {}, \"rss_before_mb\": {:.0}, \"rss_loaded_mb\": {:.0}, \"peak_rss_mb\": {:.0}}}",
        refs.len(),
        token_counts.iter().max().unwrap_or(&0),
        refs.len() as f64 / secs,
        load.as_millis(),
        rss_before / 1024.0,
        rss_loaded / 1024.0,
        status_kb("VmHWM") / 1024.0,
    );
    Ok(())
}

fn default_models_dir() -> Option<PathBuf> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let data = var("LOCI_HOME")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("loci")))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/loci")))?;
    Some(loci_embed::models_dir(&data))
}

/// A line of /proc/self/status in KiB.
fn status_kb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0.0)
}

fn source_words(text: Option<&std::path::Path>) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut all = String::new();
    match text {
        Some(path) => {
            for line in std::fs::read_to_string(path)?.lines() {
                let v: serde_json::Value = serde_json::from_str(line)?;
                all.push_str(v["text"].as_str().unwrap_or_default());
                all.push('\n');
            }
        }
        None => {
            let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs");
            for entry in std::fs::read_dir(docs)? {
                all.push_str(&std::fs::read_to_string(entry?.path())?);
            }
        }
    }
    Ok(all.split_whitespace().map(str::to_string).collect())
}

/// `n` chunks of consecutive words, each as long as fits in `tokens` tokens (the
/// worst case for throughput), cycling through the words.
fn cut_chunks(
    e: &Embedder,
    words: &[String],
    n: usize,
    tokens: usize,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    if words.is_empty() {
        return Err("no text to cut chunks from".into());
    }
    let mut out = Vec::with_capacity(n);
    let mut at = 0usize;
    let mut take = tokens;
    while out.len() < n {
        let mut len = take;
        loop {
            let chunk: Vec<&str> = (0..len)
                .map(|i| words[(at + i) % words.len()].as_str())
                .collect();
            let chunk = chunk.join(" ");
            let count = e.count_tokens(&chunk)?;
            if count <= tokens || len == 1 {
                out.push(chunk);
                at += len;
                // Start the next chunk near the length that fit.
                take = if count + 8 < tokens {
                    len + len / 8 + 1
                } else {
                    len
                };
                break;
            }
            len = (len * tokens / count).min(len - 1).max(1);
        }
    }
    Ok(out)
}
