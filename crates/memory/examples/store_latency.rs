//! Remember and recall latency, SQLite against PostgreSQL, in one run on one machine:
//! fills both stores with the same N generated memories (default 100,000; bodies are
//! windows of loci's own docs, one entity each, one pseudo-random 384-dimension unit
//! vector per chunk), timing every `remember`; then times recall (text and graph, no
//! vectors), recall with vectors, and the vector k-NN alone, over the same 500 (or
//! QUERIES) queries; and prints p50/p99 of each with its ratio to SQLite's. Every operation
//! alternates between the two stores (one on SQLite, the same on PostgreSQL, and so
//! on), so a busy machine slows both alike and the ratios hold.
//!
//! On a PostgreSQL with pgvector, vector recall is timed both ways on the same rows: the
//! database's HNSW index, and the exact scan loci falls back to without it (a second
//! store on the same database with `PgOptions::exact_vectors`). The exact scan reads
//! every vector of the scope from the database on each query, so it runs over the
//! first `EXACT_QUERIES` queries only (its p99 is then nearly its maximum).
//!
//! `cargo run --release -p loci-memory --example store_latency -- N SQLITE_PATH PG_URL [QUERIES]`
//! (`scripts/bench-memory-stores.sh` starts a throwaway PostgreSQL and runs it.)

use std::time::Instant;

mod bench_support;
use bench_support::{BENCH_MODEL, DIM, PseudoEmbedder, Rng, quantile, unit_vector, words};

use loci_memory::model::EntityInput;
use loci_memory::recall::{RecallRequest, recall};
use loci_memory::vector::{nearest, scan_nearest};
use loci_memory::{
    Embedder, Filter, MemoryStore, NewMemory, NoCode, PgOptions, PgStore, SqliteStore,
    VectorSearch, ops,
};

/// Recall queries timed by default.
const QUERIES: usize = 500;
/// Queries timed where PostgreSQL's k-NN is the exact scan (seconds each at 100,000).
const EXACT_QUERIES: usize = 30;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let sqlite_path = args.next().expect("SQLITE_PATH");
    let pg_url = args.next().expect("PG_URL");
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(QUERIES);
    let words = words();
    let queries = queries(&words, count);
    let few = &queries[..EXACT_QUERIES.min(queries.len())];

    let mut sqlite = SqliteStore::open(std::path::Path::new(&sqlite_path)).unwrap();
    let mut pg = PgStore::connect(&pg_url, SCOPE).unwrap();
    let exact_options = PgOptions {
        exact_vectors: true,
        ..PgOptions::default()
    };
    let mut pg_exact = PgStore::connect_with(&pg_url, SCOPE, exact_options).unwrap();
    println!(
        "N = {n}; PostgreSQL vector search: {:?}",
        pg.describe().vector_search
    );
    let started = Instant::now();
    let remember = fill(&mut sqlite, &mut pg, n, &words, started);
    fill_vectors(&mut sqlite);
    fill_vectors(&mut pg);
    eprintln!("vectors stored, {:.0?}", started.elapsed());

    // Once over the queries to warm caches, as a long-lived server would be.
    let with = Some(&PseudoEmbedder as &dyn Embedder);
    alternate(
        &queries,
        |q| recall_once(&mut sqlite, q, with),
        |q| recall_once(&mut pg, q, with),
    );
    let recall = alternate(
        &queries,
        |q| recall_once(&mut sqlite, q, None),
        |q| recall_once(&mut pg, q, None),
    );
    let recall_vectors = alternate(
        &queries,
        |q| recall_once(&mut sqlite, q, with),
        |q| recall_once(&mut pg, q, with),
    );
    eprintln!("recall timed, {:.0?}", started.elapsed());
    // The exact scan of PostgreSQL's vectors: the first queries only, each against
    // the same query on SQLite (whose k-NN is its in-process exact cache).
    let recall_exact = alternate(
        few,
        |q| recall_once(&mut sqlite, q, with),
        |q| recall_once(&mut pg_exact, q, with),
    );
    let knn = alternate(
        &queries,
        |q| knn_once(&sqlite, q, true),
        |q| knn_once(&pg, q, true),
    );
    let knn_scan = alternate(
        few,
        |q| knn_once(&sqlite, q, false),
        |q| knn_once(&pg, q, false),
    );
    eprintln!("k-NN timed, {:.0?}", started.elapsed());

    println!(
        "\n| operation | queries | SQLite p50 / p99 (ms) | PostgreSQL p50 / p99 (ms) | ratio p50 / p99 |"
    );
    println!("|---|---:|---|---|---|");
    let pg_knn = match pg.describe().vector_search {
        VectorSearch::Pgvector => "pgvector's HNSW index",
        VectorSearch::Exact => "exact scan, no pgvector",
    };
    for (what, count, (a, b)) in [
        ("remember", n, remember),
        ("recall (text + graph)", queries.len(), recall),
        (
            &format!("recall with vectors (PostgreSQL: {pg_knn})") as &str,
            queries.len(),
            recall_vectors,
        ),
        (
            "recall with vectors (PostgreSQL: exact scan)",
            few.len(),
            recall_exact,
        ),
        (
            &format!("vector k-NN alone (SQLite: its cache; PostgreSQL: {pg_knn})"),
            queries.len(),
            knn,
        ),
        (
            "vector k-NN alone, exact scan of the stored vectors",
            few.len(),
            knn_scan,
        ),
    ] {
        println!(
            "| {what} | {count} | {:.2} / {:.2} | {:.2} / {:.2} | {:.1}× / {:.1}× |",
            a.0,
            a.1,
            b.0,
            b.1,
            b.0 / a.0,
            b.1 / a.1
        );
    }
}

/// The scope the PostgreSQL memories are written under.
const SCOPE: &str = "bench/store-latency";

/// p50 and p99 (ms) of each of two operations over `items`, one of each in turn so
/// both see the same machine at the same moment.
fn alternate<T>(
    items: &[T],
    mut a: impl FnMut(&T),
    mut b: impl FnMut(&T),
) -> ((f64, f64), (f64, f64)) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for (i, item) in items.iter().enumerate() {
        // Which goes first alternates too.
        let mut one = |first: bool| {
            let t = Instant::now();
            if first {
                a(item)
            } else {
                b(item)
            }
            if first {
                ta.push(ms(t))
            } else {
                tb.push(ms(t))
            }
        };
        one(i % 2 == 0);
        one(i % 2 != 0);
    }
    (percentiles(&mut ta), percentiles(&mut tb))
}

/// The same N generated memories into both stores, one remember of each in turn,
/// timed; resumes where an earlier run of the bench stopped.
fn fill(
    sqlite: &mut dyn MemoryStore,
    pg: &mut dyn MemoryStore,
    n: usize,
    words: &[String],
    started: Instant,
) -> ((f64, f64), (f64, f64)) {
    let have = sqlite.stats(None).unwrap().memories as usize;
    let have = have.min(pg.stats(None).unwrap().memories as usize);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let memories: Vec<NewMemory> = (0..n)
        .map(|i| {
            let len = 40 + rng.below(160);
            let at = rng.below(words.len() - len);
            let topic = rng.below(2_000);
            NewMemory {
                name: format!("m{i}"),
                description: words[at..at + 8].join(" "),
                body: words[at..at + len].join(" "),
                entities: vec![EntityInput {
                    name: format!("topic-{topic}"),
                    entity_type: "topic".into(),
                    aliases: vec![],
                }],
                ..Default::default()
            }
        })
        .skip(have)
        .collect();
    let mut done = have;
    let times = alternate(
        &memories,
        |m| {
            ops::remember(&mut *sqlite, &NoCode, false, m, &[])
                .map(drop)
                .unwrap()
        },
        |m| {
            ops::remember(&mut *pg, &NoCode, false, m, &[])
                .map(drop)
                .unwrap();
            done += 1;
            if done.is_multiple_of(10_000) {
                eprintln!("{done} memories in each store, {:.0?}", started.elapsed());
            }
        },
    );
    if memories.is_empty() {
        ((f64::NAN, f64::NAN), (f64::NAN, f64::NAN))
    } else {
        times
    }
}

/// One recall of `q` (10 hits; vectors when `embedder`).
fn recall_once(store: &mut dyn MemoryStore, q: &str, embedder: Option<&dyn Embedder>) {
    let req = RecallRequest {
        query: q.to_string(),
        filter: bench_filter(),
        limit: 10,
        ..Default::default()
    };
    recall(store, &NoCode, false, embedder, &req).unwrap();
}

/// One vector k-NN of `q`'s vector (50 memories): the store's own (`cached`: SQLite's
/// cache, PostgreSQL's pgvector) or the exact scan of its stored vectors.
fn knn_once(store: &dyn MemoryStore, q: &str, cached: bool) {
    let v = PseudoEmbedder.vector(q);
    let f = bench_filter();
    if cached {
        nearest(store, BENCH_MODEL, &f, &v, 50).unwrap();
    } else {
        scan_nearest(store, BENCH_MODEL, &f, &v, 50).unwrap();
    }
}

/// The namespace every bench memory is in.
fn bench_filter() -> Filter {
    Filter {
        namespace: "default".into(),
        ..Filter::default()
    }
}

/// Every chunk without a bench vector gets its pseudo-random one.
fn fill_vectors(store: &mut dyn MemoryStore) {
    loop {
        let pending = store.pending_chunks(BENCH_MODEL, 2_000).unwrap();
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
        store.store_vectors(BENCH_MODEL, DIM, &rows).unwrap();
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// p50 and p99 of `times` (ms).
fn percentiles(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (quantile(times, 0.5), quantile(times, 0.99))
}

fn queries(words: &[String], count: usize) -> Vec<String> {
    let mut rng = Rng(0x5151_2026_1205_0001);
    (0..count)
        .map(|_| {
            let k = 2 + rng.below(3);
            (0..k)
                .map(|_| words[rng.below(words.len())].clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}
