//! Remember and recall latency, SQLite against PostgreSQL, in one run on one machine:
//! fills each store with the same N generated memories (default 100,000; bodies are
//! windows of loci's own docs, one entity each, one pseudo-random 384-dimension unit
//! vector per chunk), timing every `remember`; then times recall (text and graph, no
//! vectors), recall with vectors, and the vector k-NN alone, over the same 500
//! queries; and prints p50/p99 of each with its ratio to SQLite's.
//!
//! On a PostgreSQL with pgvector, the k-NN is timed both ways on the same rows: the
//! database's HNSW index and the exact scan loci falls back to without it; recall with
//! vectors there uses pgvector, and its exact counterpart adds the scan's time.
//!
//! `cargo run --release -p loci-memory --example store_latency -- N SQLITE_PATH PG_URL`
//! (`scripts/bench-memory-stores.sh` starts a throwaway PostgreSQL and runs it.)

use std::time::Instant;

use loci_memory::model::EntityInput;
use loci_memory::recall::{RecallRequest, recall};
use loci_memory::vector::{normalize, scan_nearest};
use loci_memory::{
    EmbedError, Embedder, Filter, MemoryStore, NewMemory, NoCode, PgStore, SqliteStore, ops,
};

const MODEL: &str = "bench/pseudo-random-384";
const DIM: usize = 384;
const QUERIES: usize = 500;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let sqlite_path = args.next().expect("SQLITE_PATH");
    let pg_url = args.next().expect("PG_URL");
    let words = words();
    let queries = queries(&words);

    let mut sqlite = SqliteStore::open(std::path::Path::new(&sqlite_path)).unwrap();
    let mut pg = PgStore::connect(&pg_url, "bench/store-latency").unwrap();
    println!(
        "N = {n}; PostgreSQL vector search: {:?}",
        pg.describe().vector_search
    );
    let s = measure("sqlite", &mut sqlite, n, &words, &queries, false);
    let p = measure("postgres", &mut pg, n, &words, &queries, true);

    println!(
        "\n| operation | SQLite p50 / p99 (ms) | PostgreSQL p50 / p99 (ms) | ratio p50 / p99 |"
    );
    println!("|---|---|---|---|");
    for (what, a, b) in [
        ("remember", s.remember, p.remember),
        ("recall (text + graph)", s.recall, p.recall),
        ("recall with vectors", s.recall_vectors, p.recall_vectors),
        ("vector k-NN alone (exact)", s.knn_exact, p.knn_exact),
    ] {
        println!(
            "| {what} | {:.2} / {:.2} | {:.2} / {:.2} | {:.1}× / {:.1}× |",
            a.0,
            a.1,
            b.0,
            b.1,
            b.0 / a.0,
            b.1 / a.1
        );
    }
    if let Some(db) = p.knn_database {
        println!(
            "| vector k-NN alone (pgvector HNSW) | — | {:.2} / {:.2} | {:.1}× / {:.1}× |",
            db.0,
            db.1,
            db.0 / s.knn_exact.0,
            db.1 / s.knn_exact.1
        );
        println!(
            "\nPostgreSQL k-NN: pgvector {:.2} / {:.2} ms against the exact scan {:.2} / {:.2} ms (p50 / p99)",
            db.0, db.1, p.knn_exact.0, p.knn_exact.1
        );
    }
}

/// p50 and p99 of each operation on one store.
struct Figures {
    remember: (f64, f64),
    recall: (f64, f64),
    recall_vectors: (f64, f64),
    knn_exact: (f64, f64),
    knn_database: Option<(f64, f64)>,
}

fn measure(
    name: &str,
    store: &mut dyn MemoryStore,
    n: usize,
    words: &[String],
    queries: &[String],
    database_knn: bool,
) -> Figures {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let have = store.stats(None).unwrap().memories as usize;
    let mut times = Vec::with_capacity(n);
    let started = Instant::now();
    for i in 0..n {
        let len = 40 + rng.below(160);
        let at = rng.below(words.len() - len);
        let topic = rng.below(2_000);
        if i < have {
            continue;
        }
        let m = NewMemory {
            name: format!("m{i}"),
            description: words[at..at + 8].join(" "),
            body: words[at..at + len].join(" "),
            entities: vec![EntityInput {
                name: format!("topic-{topic}"),
                entity_type: "topic".into(),
                aliases: vec![],
            }],
            ..Default::default()
        };
        let t = Instant::now();
        ops::remember(store, &NoCode, false, &m, &[]).unwrap();
        times.push(ms(t));
        if (i + 1) % 10_000 == 0 {
            eprintln!("{name}: {} memories in {:.0?}", i + 1, started.elapsed());
        }
    }
    fill_vectors(store);
    eprintln!("{name}: filled in {:.0?}", started.elapsed());
    let remember = if times.is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        percentiles(&mut times)
    };
    let filter = Filter {
        namespace: "default".into(),
        ..Filter::default()
    };
    let mut run = |embedder: Option<&dyn Embedder>| {
        let mut t: Vec<f64> = queries
            .iter()
            .map(|q| {
                let req = RecallRequest {
                    query: q.clone(),
                    filter: filter.clone(),
                    limit: 10,
                    ..Default::default()
                };
                let t = Instant::now();
                recall(store, &NoCode, false, embedder, &req).unwrap();
                ms(t)
            })
            .collect();
        percentiles(&mut t)
    };
    // Once over the queries to warm caches, as a long-lived server would be.
    run(Some(&Pseudo));
    let recall = run(None);
    let recall_vectors = run(Some(&Pseudo));
    let vectors: Vec<Vec<f32>> = queries.iter().map(|q| Pseudo.vector(q)).collect();
    let knn = |f: &dyn Fn(&[f32])| {
        let mut t: Vec<f64> = vectors
            .iter()
            .map(|v| {
                let t = Instant::now();
                f(v);
                ms(t)
            })
            .collect();
        percentiles(&mut t)
    };
    let knn_exact = knn(&|v| {
        scan_nearest(&*store, MODEL, &filter, v, 50).unwrap();
    });
    let knn_database = database_knn.then(|| {
        knn(&|v| {
            store
                .nearest_cached(MODEL, &filter, v, 50)
                .expect("the database answers the k-NN");
        })
    });
    Figures {
        remember,
        recall,
        recall_vectors,
        knn_exact,
        knn_database,
    }
}

/// Every chunk without a bench vector gets its pseudo-random one.
fn fill_vectors(store: &mut dyn MemoryStore) {
    loop {
        let pending = store.pending_chunks(MODEL, 2_000).unwrap();
        if pending.is_empty() {
            return;
        }
        let rows: Vec<(i64, u32, Vec<f32>)> = pending
            .iter()
            .map(|c| {
                (
                    c.memory_id,
                    c.seq,
                    unit_vector(((c.memory_id as u64) << 16) ^ c.seq as u64),
                )
            })
            .collect();
        store.store_vectors(MODEL, DIM, &rows).unwrap();
    }
}

/// The bench's query "embedder": a unit vector seeded by the text.
struct Pseudo;
impl Pseudo {
    fn vector(&self, text: &str) -> Vec<f32> {
        unit_vector(u64::from_le_bytes(
            blake3::hash(text.as_bytes()).as_bytes()[..8]
                .try_into()
                .unwrap(),
        ))
    }
}
impl Embedder for Pseudo {
    fn model_id(&self) -> &str {
        MODEL
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

fn unit_vector(seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed | 1);
    let mut v: Vec<f32> = (0..DIM)
        .map(|_| (rng.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
        .collect();
    normalize(&mut v);
    v
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// p50 and p99 of `times` (ms).
fn percentiles(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let p = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    (p(0.5), p(0.99))
}

fn queries(words: &[String]) -> Vec<String> {
    let mut rng = Rng(0x5151_2026_1205_0001);
    (0..QUERIES)
        .map(|_| {
            let k = 2 + rng.below(3);
            (0..k)
                .map(|_| words[rng.below(words.len())].clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn words() -> Vec<String> {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let mut text = String::new();
    for e in std::fs::read_dir(&docs).expect("docs/") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            text.push_str(&std::fs::read_to_string(p).unwrap());
            text.push(' ');
        }
    }
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// xorshift64, so runs compare.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
