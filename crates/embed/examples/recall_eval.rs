//! The recall harness for loci's memory: recall@1/5/10 on a labelled set (see
//! `scripts/quality_set.py`: `corpus.jsonl` of `{"id", "text"}` memories and
//! `queries.jsonl` of `{"query", "expected"}`), for each retrieval method asked for.
//!
//! ```text
//! cargo run --release -p loci-embed --example recall_eval -- --set DIR \
//!     [--methods fts,vectors] [--models DIR] [--cache DIR] [--limit N] \
//!     [[--label NAME] --command 'PROGRAM ARGS']...
//! ```
//!
//! Each row gives recall@1/5/10 over the whole set, its tune half and its held-out half:
//! a query's `"half"` (`"tune"` or `"held-out"`, as `scripts/quality_questions.py`
//! writes it) when it has one, else its line's parity (0-based; odd is held out, the
//! half kept aside when the memory's fusion was tuned on the even ones).
//!
//! Built in: `fts` (SQLite FTS5, BM25, the query's words OR'ed) and `vectors` (the
//! embedder, exact cosine over every memory, whole text; the vectors are cached in
//! `--cache`, default `DIR/cache`, so a rerun embeds nothing). Any other retriever (the
//! memory's recall: `examples/memory_recall.rs`) plugs in with `--command`, repeatable,
//! each row named by the `--label` before it: it is run once through `sh -c`, with
//! `LOCI_EVAL_CORPUS` naming corpus.jsonl and `LOCI_EVAL_K` the depth; it reads one
//! `{"n": N, "query": "..."}` per line on stdin and writes one
//! `{"n": N, "hits": ["id", ...]}` per line (best first) on stdout. `--answer fts`
//! makes this example such a command (the protocol's reference).

#[path = "common/vector_cache.rs"]
mod vector_cache;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loci_memory::Embedder as _;
use loci_supervisor::{EnvPolicy, SpawnSpec, Supervisor};
use rusqlite::Connection;

const K: usize = 10;

type Error = Box<dyn std::error::Error>;

struct Doc {
    id: String,
    text: String,
}

struct Query {
    query: String,
    expected: String,
    /// In the held-out half: the query's `"half"`, else an odd line number.
    held_out: bool,
}

fn main() -> Result<(), Error> {
    let mut set: Option<PathBuf> = None;
    let mut methods = "fts,vectors".to_string();
    let mut models: Option<PathBuf> = None;
    let mut commands: Vec<(String, String)> = Vec::new();
    let mut label: Option<String> = None;
    let mut cache: Option<PathBuf> = None;
    let mut answer: Option<String> = None;
    let mut limit = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--set" => set = Some(value()?.into()),
            "--methods" => methods = value()?,
            "--models" => models = Some(value()?.into()),
            "--label" => label = Some(value()?),
            "--command" => {
                let cmd = value()?;
                let name = label.take().unwrap_or_else(|| format!("command: {cmd}"));
                commands.push((name, cmd));
            }
            "--cache" => cache = Some(value()?.into()),
            "--answer" => answer = Some(value()?),
            "--limit" => limit = value()?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if let Some(method) = answer {
        let corpus = std::env::var_os("LOCI_EVAL_CORPUS").ok_or("LOCI_EVAL_CORPUS is not set")?;
        return answer_protocol(&method, Path::new(&corpus));
    }
    let set = set.ok_or("--set DIR is required")?;
    let cache = cache.unwrap_or_else(|| set.join("cache"));
    let docs = read_corpus(&set.join("corpus.jsonl"))?;
    let mut queries = read_queries(&set.join("queries.jsonl"))?;
    if limit > 0 {
        queries.truncate(limit);
    }
    println!("set: {} memories, {} queries", docs.len(), queries.len());
    let mut rows = Vec::new();
    for method in methods.split(',').filter(|m| !m.is_empty()) {
        let started = Instant::now();
        let hits = match method {
            "fts" => fts_search(&docs, &queries)?,
            "vectors" => vector_search(&docs, &queries, models.as_deref(), &cache)?,
            other => return Err(format!("unknown method {other} (fts, vectors)").into()),
        };
        rows.push((
            method.to_string(),
            score(&queries, &hits),
            started.elapsed(),
        ));
    }
    for (name, cmd) in &commands {
        let started = Instant::now();
        let hits = command_search(cmd, &set.join("corpus.jsonl"), &queries)?;
        rows.push((name.clone(), score(&queries, &hits), started.elapsed()));
    }
    let halves = |held_out| queries.iter().filter(|q| q.held_out == held_out).count();
    println!(
        "tune half: {} queries, held-out half: {}",
        halves(false),
        halves(true)
    );
    println!(
        "| method | recall@1 | recall@5 | recall@10 | tune half @1 | @5 | @10 | held-out half @1 | @5 | @10 | time |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, r, t) in &rows {
        let cells: Vec<String> = r.iter().map(|x| format!("{:.1} %", x * 100.0)).collect();
        println!(
            "| {name} | {} | {:.1} s |",
            cells.join(" | "),
            t.as_secs_f64()
        );
    }
    Ok(())
}

fn read_corpus(path: &Path) -> Result<Vec<Doc>, Error> {
    let mut out = Vec::new();
    for line in std::fs::read_to_string(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(line)?;
        out.push(Doc {
            id: v["id"]
                .as_str()
                .ok_or("a corpus line has no id")?
                .to_string(),
            text: v["text"].as_str().unwrap_or_default().to_string(),
        });
    }
    Ok(out)
}

fn read_queries(path: &Path) -> Result<Vec<Query>, Error> {
    let mut out = Vec::new();
    for (n, line) in std::fs::read_to_string(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .lines()
        .enumerate()
    {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let held_out = match v["half"].as_str() {
            None => n % 2 == 1,
            Some("held-out") => true,
            Some("tune") => false,
            Some(other) => return Err(format!("half {other:?}: tune or held-out").into()),
        };
        out.push(Query {
            held_out,
            query: v["query"]
                .as_str()
                .ok_or("a query line has no query")?
                .to_string(),
            expected: v["expected"]
                .as_str()
                .ok_or("a query line has no expected")?
                .to_string(),
        });
    }
    Ok(out)
}

/// recall@1, @5, @10 (the share of queries whose expected memory is in the top k) over
/// the whole set, then its tune half, then its held-out half (see [`Query::held_out`]).
fn score(queries: &[Query], hits: &[Vec<String>]) -> [f64; 9] {
    let mut found = [0usize; 9];
    let mut size = [0usize; 3];
    for (q, h) in queries.iter().zip(hits) {
        let half = if q.held_out { 2 } else { 1 };
        size[0] += 1;
        size[half] += 1;
        if let Some(rank) = h.iter().position(|id| *id == q.expected) {
            for (i, k) in [1, 5, 10].iter().enumerate() {
                if rank < *k {
                    found[i] += 1;
                    found[3 * half + i] += 1;
                }
            }
        }
    }
    std::array::from_fn(|i| found[i] as f64 / size[i / 3].max(1) as f64)
}

/// An FTS5 table of the corpus (unicode61 tokenizer, BM25 ranking).
fn fts_index(docs: &[Doc]) -> Result<Connection, Error> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, text);")?;
    let tx = conn.unchecked_transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO docs (id, text) VALUES (?1, ?2)")?;
        for d in docs {
            insert.execute((&d.id, &d.text))?;
        }
    }
    tx.commit()?;
    Ok(conn)
}

/// The query's words, each quoted, OR'ed: what a plain keyword search would ask.
fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

fn fts_top(conn: &Connection, query: &str) -> Result<Vec<String>, Error> {
    let Some(q) = fts_query(query) else {
        return Ok(Vec::new());
    };
    let mut stmt = conn
        .prepare_cached("SELECT id FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs) LIMIT ?2")?;
    let ids = stmt
        .query_map((q, K as i64), |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ids)
}

fn fts_search(docs: &[Doc], queries: &[Query]) -> Result<Vec<Vec<String>>, Error> {
    let conn = fts_index(docs)?;
    queries.iter().map(|q| fts_top(&conn, &q.query)).collect()
}

fn vector_search(
    docs: &[Doc],
    queries: &[Query],
    models: Option<&Path>,
    cache: &Path,
) -> Result<Vec<Vec<String>>, Error> {
    let models = match models {
        Some(m) => m.to_path_buf(),
        None => default_models_dir().ok_or("no data dir: pass --models")?,
    };
    let embedder = vector_cache::CachedEmbedder::open(&models, cache)?;
    let started = Instant::now();
    let texts: Vec<&str> = docs.iter().map(|d| d.text.as_str()).collect();
    let doc_vecs = embedder.embed(&texts)?;
    eprintln!(
        "embedded {} memories in {:.1} s ({:.0}/s)",
        docs.len(),
        started.elapsed().as_secs_f64(),
        docs.len() as f64 / started.elapsed().as_secs_f64()
    );
    let qtexts: Vec<&str> = queries.iter().map(|q| q.query.as_str()).collect();
    let query_vecs = embedder.embed_queries(&qtexts)?;
    let dim = embedder.dim();
    let flat: Vec<f32> = doc_vecs.into_iter().flatten().collect();
    Ok(query_vecs
        .iter()
        .map(|q| {
            // Unit vectors: the dot product is the cosine.
            let mut scored: Vec<(f32, usize)> = flat
                .chunks_exact(dim)
                .enumerate()
                .map(|(i, d)| (d.iter().zip(q).map(|(a, b)| a * b).sum(), i))
                .collect();
            let nth = K.min(scored.len() - 1);
            scored.select_nth_unstable_by(nth, |a, b| b.0.total_cmp(&a.0));
            scored.truncate(K);
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            scored
                .into_iter()
                .map(|(_, i)| docs[i].id.clone())
                .collect()
        })
        .collect())
}

fn command_search(cmd: &str, corpus: &Path, queries: &[Query]) -> Result<Vec<Vec<String>>, Error> {
    let mut input = Vec::new();
    for (n, q) in queries.iter().enumerate() {
        writeln!(input, "{}", serde_json::json!({"n": n, "query": q.query}))?;
    }
    let outcome = Supervisor::new().run(
        SpawnSpec::new("sh")
            .args(["-c", cmd])
            .env(
                EnvPolicy::loci_child()
                    .pin("LOCI_EVAL_CORPUS", corpus.as_os_str())
                    .pin("LOCI_EVAL_K", K.to_string()),
            )
            .stdin_bytes(input)
            .budget(Duration::from_secs(3600))
            .capture_cap(512 << 20),
    )?;
    if !outcome.success() {
        return Err(format!(
            "`{cmd}` failed ({}): {}",
            outcome.exit,
            outcome.stderr.to_string_lossy()
        )
        .into());
    }
    let mut hits = vec![Vec::new(); queries.len()];
    for line in outcome.stdout.head.lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        let n = v["n"].as_u64().ok_or("an answer line has no n")? as usize;
        if let (Some(slot), Some(list)) = (hits.get_mut(n), v["hits"].as_array()) {
            *slot = list
                .iter()
                .filter_map(|h| h.as_str().map(str::to_string))
                .collect();
        }
    }
    Ok(hits)
}

/// The command side of the protocol, for `fts`: the reference a retriever follows.
fn answer_protocol(method: &str, corpus: &Path) -> Result<(), Error> {
    if method != "fts" {
        return Err(format!("--answer knows fts only, not {method}").into());
    }
    let docs = read_corpus(corpus)?;
    let conn = fts_index(&docs)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        let hits = fts_top(&conn, v["query"].as_str().unwrap_or_default())?;
        writeln!(out, "{}", serde_json::json!({"n": v["n"], "hits": hits}))?;
    }
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
