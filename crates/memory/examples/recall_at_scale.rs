//! Recall latency at scale: fills a store with N generated memories (default 100,000)
//! whose bodies are windows of real English text (loci's own docs), then times recall
//! (full text and graph, no vectors) over queries drawn from the bodies, and prints
//! p50/p90/p99. Also prints the mean `remember` time while filling.
//!
//! `cargo run --release -p loci-memory --example recall_at_scale -- [N] [DB_PATH]`
//! (a DB_PATH that already holds memories is topped up to N and reused).

use std::time::Instant;

use loci_memory::model::EntityInput;
use loci_memory::recall::{RecallRequest, recall};
use loci_memory::{Filter, MemoryStore, NewMemory, NoCode, SqliteStore, ops};

/// A tiny deterministic generator (xorshift), so runs compare.
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

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let path = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("memory.db"));
    let words = words();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut store = SqliteStore::open(&path).unwrap();
    let have = store.stats(None).unwrap().memories as usize;
    let started = Instant::now();
    for i in have..n {
        let len = 40 + rng.below(160);
        let at = rng.below(words.len() - len);
        let body = words[at..at + len].join(" ");
        let description: String = words[at..at + 8].join(" ");
        let m = NewMemory {
            name: format!("m{i}"),
            description,
            body,
            entities: vec![EntityInput {
                name: format!("topic-{}", rng.below(2_000)),
                entity_type: "topic".into(),
                aliases: vec![],
            }],
            ..Default::default()
        };
        ops::remember(&mut store, &NoCode, false, &m, &[]).unwrap();
    }
    if n > have {
        let per = started.elapsed().as_secs_f64() * 1e3 / (n - have) as f64;
        println!("filled {} memories: remember mean {per:.3} ms", n - have);
    }
    let queries: Vec<String> = (0..1_000)
        .map(|_| {
            let k = 2 + rng.below(3);
            (0..k)
                .map(|_| words[rng.below(words.len())].clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let filter = Filter {
        namespace: "default".into(),
        ..Filter::default()
    };
    // Warm the page cache as a long-lived host would be.
    for q in queries.iter().take(50) {
        let req = RecallRequest {
            query: q.clone(),
            filter: filter.clone(),
            limit: 10,
            ..Default::default()
        };
        recall(&mut store, &NoCode, false, None, &req).unwrap();
    }
    let mut times: Vec<f64> = queries
        .iter()
        .map(|q| {
            let req = RecallRequest {
                query: q.clone(),
                filter: filter.clone(),
                limit: 10,
                ..Default::default()
            };
            let t = Instant::now();
            let a = recall(&mut store, &NoCode, false, None, &req).unwrap();
            std::hint::black_box(a);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    if std::env::var_os("PROFILE").is_some() {
        let mut by: Vec<(f64, &String)> = times.iter().copied().zip(queries.iter()).collect();
        by.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (t, q) in by.iter().take(4) {
            eprintln!("slow {t:.2} ms: {q:?}");
            profile(&store, q, &filter);
        }
    }
    times.sort_by(f64::total_cmp);
    let p = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "recall over {n} memories, {} queries (no vectors): p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        p(0.5),
        p(0.9),
        p(0.99),
        times[times.len() - 1]
    );
}

/// With `PROFILE` set: the slowest queries' steps, timed again one by one.
fn profile(store: &SqliteStore, q: &str, filter: &Filter) {
    let terms = loci_memory::recall::query_terms(q);
    let t = Instant::now();
    let f = store.fts(&terms, filter, 50).unwrap();
    let a = t.elapsed();
    let t = Instant::now();
    let ids: Vec<i64> = f.iter().map(|x| x.0).take(3).collect();
    let ents = store.entities_of_memories(&ids).unwrap();
    let eids: Vec<i64> = ents.iter().map(|x| x.1).collect();
    let m = store.memories_of_entities(filter, &eids).unwrap();
    let b = t.elapsed();
    let t = Instant::now();
    let named = store.entities_named("default", &terms).unwrap();
    let c = t.elapsed();
    eprintln!(
        "{q:?}: fts {a:?} ({}), shared {b:?} ({}), named {c:?} ({})",
        f.len(),
        m.len(),
        named.len()
    );
}
