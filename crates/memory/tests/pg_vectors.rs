//! Vector recall on PostgreSQL, with and without pgvector: the store says which search
//! answers, and pgvector's HNSW index (approximate) finds what the exact cosine finds,
//! within 2 points of recall@10, on the same vectors, through a namespace filter that drops half of the
//! indexed rows. `PgOptions::exact_vectors` keeps the exact scan on such a database
//! while still feeding the index.

use std::collections::HashMap;

use loci_memory::vector::{nearest, normalize, scan_nearest};
use loci_memory::{Filter, MemoryStore, NewMemory, NoCode, PgOptions, PgStore, VectorSearch, ops};

use crate::pg_cluster;
use crate::stores::{self, SCOPE};

const MODEL: &str = "test-clusters-64";
const DIM: usize = 64;
/// Memories per namespace; the query's namespace holds half of the indexed vectors.
const PER_NAMESPACE: usize = 1_500;
const QUERIES: usize = 100;
const K: usize = 10;

#[test]
fn postgres_without_pgvector_searches_exactly() {
    let Some(mut s) = stores::postgres() else {
        return;
    };
    assert_eq!(s.describe().vector_search, VectorSearch::Exact);
    let mut rng = Rng(0x5eed_1234_abcd_0002);
    let centres = fill(&mut *s, &mut rng, 50);
    // No database answer: recall's k-NN is the scan, and it finds the vectors.
    let f = filter("default");
    let q = point(&mut rng, &centres[0], 0.6);
    assert!(s.nearest_cached(MODEL, &f, &q, K).is_none());
    let hits = nearest(&*s, MODEL, &f, &q, K).unwrap();
    assert_eq!(hits, scan_nearest(&*s, MODEL, &f, &q, K).unwrap());
    assert_eq!(hits.len(), K);
}

#[test]
fn pgvector_recall_is_within_two_points_of_the_exact_scan() {
    let Some(url) = pg_cluster::database_pgvector() else {
        return;
    };
    let mut s = PgStore::connect(&url, SCOPE).unwrap();
    assert_eq!(s.describe().vector_search, VectorSearch::Pgvector);
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let centres = fill(&mut s, &mut rng, PER_NAMESPACE);

    let f = filter("default");
    let stored = vectors_in(&s, &f);
    let (mut found, mut wanted) = (0usize, 0usize);
    for _ in 0..QUERIES {
        let c = rng.below(centres.len());
        let q = point(&mut rng, &centres[c], 0.6);
        let exact = scan_nearest(&s, MODEL, &f, &q, K).unwrap();
        let hnsw = s
            .nearest_cached(MODEL, &f, &q, K)
            .expect("pgvector answers the k-NN");
        assert_eq!(exact.len(), K);
        assert!(hnsw.len() <= K, "{hnsw:?}");
        for (id, score) in &hnsw {
            // The database's cosine is the exact one for what it returns, and every
            // hit is of the filtered namespace (the exact scan's ids are).
            let v = stored
                .get(id)
                .unwrap_or_else(|| panic!("memory {id} is not in the filtered namespace"));
            let want = loci_memory::vector::dot(&q, v);
            assert!((score - want).abs() < 1e-4, "{id}: {score} vs {want}");
        }
        wanted += K;
        found += hnsw
            .iter()
            .filter(|(id, _)| exact.iter().any(|(e, _)| e == id))
            .count();
    }
    let recall = found as f64 / wanted as f64;
    eprintln!("pgvector recall@{K} against the exact scan: {recall:.4} ({found}/{wanted})");
    // The exact scan's recall is 1 by definition: HNSW must be within 2 points of it.
    assert!(recall >= 0.98, "pgvector recall@{K} {recall:.4} < 0.98");
}

#[test]
fn exact_vectors_scans_on_a_pgvector_database_and_still_feeds_its_index() {
    let Some(url) = pg_cluster::database_pgvector() else {
        return;
    };
    let options = PgOptions {
        exact_vectors: true,
        ..PgOptions::default()
    };
    let mut exact = PgStore::connect_with(&url, SCOPE, options).unwrap();
    assert_eq!(exact.describe().vector_search, VectorSearch::Exact);
    let mut rng = Rng(0x5eed_1234_abcd_0003);
    let centres = fill(&mut exact, &mut rng, 50);
    let f = filter("default");
    let q = point(&mut rng, &centres[1], 0.6);
    assert!(exact.nearest_cached(MODEL, &f, &q, K).is_none());
    let scanned = nearest(&exact, MODEL, &f, &q, K).unwrap();
    assert_eq!(scanned.len(), K);
    // A default store on the same database asks the index, which holds what the
    // exact store wrote: on 50 rows HNSW finds the same 10.
    let indexed = PgStore::connect(&url, SCOPE).unwrap();
    assert_eq!(indexed.describe().vector_search, VectorSearch::Pgvector);
    let hits = indexed
        .nearest_cached(MODEL, &f, &q, K)
        .expect("pgvector answers the k-NN");
    let ids = |h: &[(i64, f32)]| h.iter().map(|(id, _)| *id).collect::<Vec<_>>();
    assert_eq!(ids(&hits), ids(&scanned));
}

/// Two namespaces of `per_namespace` clustered unit vectors each, one chunk per
/// memory: the clusters' centres.
fn fill(s: &mut dyn MemoryStore, rng: &mut Rng, per_namespace: usize) -> Vec<Vec<f32>> {
    let centres: Vec<Vec<f32>> = (0..40).map(|_| centre(rng)).collect();
    for ns in ["default", "other"] {
        for i in 0..per_namespace {
            let m = NewMemory {
                namespace: Some(ns.into()),
                name: format!("m-{i}"),
                body: format!("memory {i}"),
                ..Default::default()
            };
            ops::remember(s, &NoCode, false, &m, &[]).unwrap();
        }
    }
    let pending = s.pending_chunks(MODEL, 10 * per_namespace).unwrap();
    assert_eq!(pending.len(), 2 * per_namespace);
    let rows: Vec<(i64, u32, Vec<f32>)> = pending
        .iter()
        .map(|p| {
            let c = &centres[rng.below(centres.len())];
            (p.memory_id, p.seq, point(rng, c, 0.5))
        })
        .collect();
    for batch in rows.chunks(500) {
        s.store_vectors(MODEL, DIM, batch).unwrap();
    }
    centres
}

/// The stored vector of each memory `f` keeps (one chunk each), read through the
/// exact scan.
fn vectors_in(s: &dyn MemoryStore, f: &Filter) -> HashMap<i64, Vec<f32>> {
    let mut out = HashMap::new();
    s.scan_vectors(MODEL, f, &mut |m, _, v| {
        out.insert(m, v.to_vec());
    })
    .unwrap();
    out
}

fn filter(ns: &str) -> Filter {
    Filter {
        namespace: ns.into(),
        ..Filter::default()
    }
}

/// A random unit vector.
fn centre(rng: &mut Rng) -> Vec<f32> {
    let mut v: Vec<f32> = (0..DIM).map(|_| rng.gauss()).collect();
    normalize(&mut v);
    v
}

/// A unit vector near `c`: `c` plus Gaussian noise of `spread` per unit length.
fn point(rng: &mut Rng, c: &[f32], spread: f32) -> Vec<f32> {
    let scale = spread / (DIM as f32).sqrt();
    let mut v: Vec<f32> = c.iter().map(|x| x + rng.gauss() * scale).collect();
    normalize(&mut v);
    v
}

/// xorshift64*: the same vectors every run, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Box–Muller.
    fn gauss(&mut self) -> f32 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
}
