//! A retriever for `recall_eval --command`: loci's real memory. It `remember`s every
//! section of the set into a real memory store (`loci_memory::SqliteStore`, in a
//! cache dir, kept for reruns on the same corpus; or, with `--store-url`, a
//! `loci_memory::PgStore` on that PostgreSQL database, refilled unless it already holds
//! the whole corpus), each with the entities the set gives
//! it (its crate, book or package and its inline-code identifiers: see
//! `scripts/quality_set.py`), fills the chunks' vectors with the installed model, then
//! answers each query with `loci_memory::recall::recall` and the signals asked for.
//!
//! ```text
//! LOCI_EVAL_CORPUS=corpus.jsonl memory_recall --signals hybrid|fts|vectors|graph \
//!     [--models DIR] [--cache DIR] [--store-url postgres://...] [--why]
//! ```
//!
//! Protocol (recall_eval's): one `{"n", "query"}` per line on stdin, one
//! `{"n", "hits": [id...]}` per line on stdout; `LOCI_EVAL_K` is the depth. `--why`
//! adds each hit's per-signal ranks and scores (`"why": [{"id", "fts", "vector", "graph",
//! "scores": [fts, vector, graph], "path"}]`), for finding out why a section was missed
//! (with a large `LOCI_EVAL_K`, every candidate of every signal: what
//! `scripts/quality_fusion.py` tunes the fusion on).

#[path = "common/vector_cache.rs"]
mod vector_cache;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use loci_memory::recall::{RecallRequest, Signals, recall};
use loci_memory::{
    Embedder, EntityInput, Filter, MemoryStore, MemoryType, NewMemory, NoCode, PgStore,
    SqliteStore, ops,
};
use sha2::{Digest, Sha256};
use vector_cache::CachedEmbedder;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let mut signals = Signals::ALL;
    let mut models: Option<PathBuf> = None;
    let mut cache: Option<PathBuf> = None;
    let mut why = false;
    let mut store_url: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--signals" => {
                signals = match value()?.as_str() {
                    "hybrid" => Signals::ALL,
                    "fts" => Signals::FTS,
                    "vectors" => Signals::VECTORS,
                    "graph" => Signals::GRAPH,
                    other => {
                        return Err(
                            format!("--signals {other}: hybrid, fts, vectors or graph").into()
                        );
                    }
                }
            }
            "--models" => models = Some(value()?.into()),
            "--cache" => cache = Some(value()?.into()),
            "--store-url" => store_url = Some(value()?),
            "--why" => why = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let corpus =
        PathBuf::from(std::env::var_os("LOCI_EVAL_CORPUS").ok_or("LOCI_EVAL_CORPUS is not set")?);
    let k: usize = match std::env::var("LOCI_EVAL_K") {
        Ok(v) => v.parse().map_err(|e| format!("LOCI_EVAL_K={v}: {e}"))?,
        Err(_) => 10,
    };
    let cache = match cache {
        Some(c) => c,
        None => corpus
            .parent()
            .ok_or("the corpus has no folder")?
            .join("cache"),
    };
    let models = match models {
        Some(m) => m,
        None => loci_embed::models_dir(&data_dir().ok_or("no data dir: pass --models")?),
    };
    let embedder = CachedEmbedder::open(&models, &cache)?;
    let mut store: Box<dyn MemoryStore> = match &store_url {
        Some(url) => Box::new(filled_pg_store(url, &corpus, &embedder)?),
        None => Box::new(filled_store(&corpus, &cache, &embedder)?),
    };

    let filter = Filter {
        namespace: "default".into(),
        ..Default::default()
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        let req = RecallRequest {
            query: v["query"].as_str().unwrap_or_default().to_string(),
            filter: filter.clone(),
            limit: k,
            signals,
            ..Default::default()
        };
        let answer = recall(&mut *store, &NoCode, false, Some(&embedder), &req)?;
        let hits: Vec<&str> = answer.hits.iter().map(|h| h.memory.name.as_str()).collect();
        let mut line = serde_json::json!({"n": v["n"], "hits": hits});
        if why {
            line["why"] = answer
                .hits
                .iter()
                .map(|h| {
                    serde_json::json!({
                        "id": h.memory.name,
                        "fts": h.why.fts.as_ref().map(|r| r.rank),
                        "vector": h.why.vector.as_ref().map(|r| r.rank),
                        "graph": h.why.graph.as_ref().map(|r| r.rank),
                        "scores": [
                            h.why.fts.as_ref().map(|r| r.score),
                            h.why.vector.as_ref().map(|r| r.score),
                            h.why.graph.as_ref().map(|r| r.score),
                        ],
                        "path": h.why.graph.as_ref().map(|r| r.path.join(" ")),
                    })
                })
                .collect();
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn data_dir() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("LOCI_HOME") {
        return Some(h.into());
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME") {
        return Some(PathBuf::from(x).join("loci"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/loci"))
}

/// The store for this corpus: reused when a previous run filled it completely, else
/// made again, one `remember` per section, then every chunk embedded.
fn filled_store(
    corpus: &Path,
    cache: &Path,
    embedder: &CachedEmbedder,
) -> Result<SqliteStore, Error> {
    let bytes = std::fs::read(corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let digest = Sha256::digest(&bytes);
    let tag: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let dir = cache.join(format!("store-{tag}"));
    let done = dir.join("complete");
    if done.exists() {
        eprintln!("memory store {} (reused)", dir.display());
        return Ok(SqliteStore::open(&dir.join("memory.db"))?);
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let mut store = SqliteStore::open(&dir.join("memory.db"))?;
    let (n, embedded) = fill(&mut store, &bytes, embedder)?;
    std::fs::write(&done, format!("{n} memories, {embedded} chunks\n"))?;
    Ok(store)
}

/// The PostgreSQL store at `url` holding this corpus: reused when it already holds every
/// section with every chunk embedded, else emptied (a throwaway database's scope) and
/// filled as [`filled_store`] fills SQLite, so both stores answer from the same rows.
fn filled_pg_store(url: &str, corpus: &Path, embedder: &CachedEmbedder) -> Result<PgStore, Error> {
    let bytes = std::fs::read(corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let sections = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count() as u64;
    let mut store = PgStore::connect(url, PG_SCOPE)?;
    let have = store.stats(None)?.memories;
    let pending = store.pending_chunks(embedder.model_id(), 1)?;
    if have == sections && pending.is_empty() {
        eprintln!("PostgreSQL store {PG_SCOPE} (reused, {have} memories)");
        return Ok(store);
    }
    if have > 0 {
        return Err(format!(
            "the PostgreSQL store {PG_SCOPE} holds {have} memories, not this corpus's \
             {sections}: give an empty database"
        )
        .into());
    }
    fill(&mut store, &bytes, embedder)?;
    Ok(store)
}

/// The scope (repository identity) the PostgreSQL store's memories are kept under.
const PG_SCOPE: &str = "loci-quality";

/// `remember`s every section of the corpus into `store`, then embeds every chunk;
/// returns (sections, chunks embedded).
fn fill(
    store: &mut dyn MemoryStore,
    bytes: &[u8],
    embedder: &CachedEmbedder,
) -> Result<(usize, usize), Error> {
    let started = Instant::now();
    let text = std::str::from_utf8(bytes)?;
    let mut n = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let id = v["id"].as_str().ok_or("a corpus line has no id")?;
        let entities = v["entities"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|e| {
                        Some(EntityInput {
                            name: e["name"].as_str()?.to_string(),
                            entity_type: e["type"].as_str()?.to_string(),
                            aliases: Vec::new(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let m = NewMemory {
            name: id.to_string(),
            memory_type: Some(MemoryType::Reference),
            body: v["text"].as_str().unwrap_or_default().to_string(),
            source: v["source"].as_str().map(str::to_string),
            entities,
            ..Default::default()
        };
        ops::remember(store, &NoCode, false, &m, &[]).map_err(|e| format!("{id}: {e}"))?;
        n += 1;
    }
    eprintln!(
        "remembered {n} sections in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let embedded = loci_memory::vector::embed_pending(store, embedder, 256, usize::MAX)?;
    eprintln!(
        "embedded {embedded} chunks in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok((n, embedded))
}
