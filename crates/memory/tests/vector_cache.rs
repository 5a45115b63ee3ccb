//! The vector k-NN's per-process cache of a store's vectors against the BLOB scan, on
//! a real SQLite file: the same hits in the same order under every filter, and every
//! later write — a new vector, a forget, an edit that drops a memory's vectors — seen
//! by the next query, whichever connection made it.

use loci_memory::vector::{nearest, scan_nearest};
use loci_memory::{Edit, Filter, MemoryStore, MemoryType, NewMemory, NoCode, SqliteStore, ops};

const MODEL: &str = "test/model";

fn unit(v: &[f32]) -> Vec<f32> {
    let mut v = v.to_vec();
    loci_memory::vector::normalize(&mut v);
    v
}

fn remember(store: &mut SqliteStore, ns: &str, name: &str, t: MemoryType, v: &[f32]) -> i64 {
    let m = NewMemory {
        namespace: Some(ns.into()),
        name: name.into(),
        memory_type: Some(t),
        body: format!("{name} body"),
        ..Default::default()
    };
    let id = ops::remember(store, &NoCode, false, &m, &[])
        .unwrap()
        .memory
        .id;
    store
        .store_vectors(MODEL, v.len(), &[(id, 0, unit(v))])
        .unwrap();
    id
}

fn filter(ns: &str) -> Filter {
    Filter {
        namespace: ns.into(),
        ..Filter::default()
    }
}

fn agree(store: &SqliteStore, f: &Filter, q: &[f32]) -> Vec<(i64, f32)> {
    let cached = nearest(store, MODEL, f, q, 10).unwrap();
    let scanned = scan_nearest(store, MODEL, f, q, 10).unwrap();
    assert_eq!(cached, scanned, "the cache and the scan disagree");
    cached
}

#[test]
fn the_cached_knn_agrees_with_the_scan_and_sees_every_later_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let mut a = SqliteStore::open(&path).unwrap();
    let x = remember(
        &mut a,
        "default",
        "x",
        MemoryType::Note,
        &[1.0, 0.0, 0.0, 0.0],
    );
    let y = remember(
        &mut a,
        "default",
        "y",
        MemoryType::Decision,
        &[0.6, 0.8, 0.0, 0.0],
    );
    remember(
        &mut a,
        "other",
        "z",
        MemoryType::Note,
        &[1.0, 0.0, 0.0, 0.0],
    );
    let q = unit(&[1.0, 0.1, 0.0, 0.0]);

    let ids = |hits: &[(i64, f32)]| hits.iter().map(|h| h.0).collect::<Vec<_>>();
    assert_eq!(ids(&agree(&a, &filter("default"), &q)), [x, y]);
    let decisions = Filter {
        types: vec![MemoryType::Decision],
        ..filter("default")
    };
    assert_eq!(ids(&agree(&a, &decisions, &q)), [y]);
    assert!(agree(&a, &filter("nowhere"), &q).is_empty());

    // Another connection (as another process would) writes a nearer memory.
    let mut b = SqliteStore::open(&path).unwrap();
    let w = remember(
        &mut b,
        "default",
        "w",
        MemoryType::Note,
        &[1.0, 0.1, 0.0, 0.0],
    );
    assert_eq!(ids(&agree(&a, &filter("default"), &q)), [w, x, y]);

    // Forgotten: gone from the k-NN; an edit rewrites x's chunks and drops its vector.
    b.forget("default", "w").unwrap();
    assert_eq!(ids(&agree(&a, &filter("default"), &q)), [x, y]);
    let edit = Edit {
        body: Some("new words".into()),
        ..Edit::default()
    };
    b.edit("default", "x", &edit, None).unwrap();
    assert_eq!(ids(&agree(&a, &filter("default"), &q)), [y]);
}

/// A deterministic unit vector of 384 values from `seed` (xorshift).
fn random_unit(seed: u64) -> Vec<f32> {
    let mut x = seed | 1;
    let v: Vec<f32> = (0..384)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    unit(&v)
}

/// Memories whose vectors crowd around a few directions, so neighbours are near ties.
fn crowded(store: &mut SqliteStore, n: usize) -> Vec<i64> {
    let bases: Vec<Vec<f32>> = (0..3).map(|b| random_unit(1_000 + b)).collect();
    (0..n)
        .map(|i| {
            let noise = random_unit(i as u64 + 7);
            let b = &bases[i % bases.len()];
            let v: Vec<f32> = b.iter().zip(&noise).map(|(b, e)| b + 0.05 * e).collect();
            let t = if i % 4 == 0 {
                MemoryType::Decision
            } else {
                MemoryType::Note
            };
            remember(store, "default", &format!("m{i}"), t, &v)
        })
        .collect()
}

#[test]
fn the_fast_knn_returns_the_exact_scans_top_k_on_a_real_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("memory.db")).unwrap();
    crowded(&mut store, 1_500);
    let decisions = Filter {
        types: vec![MemoryType::Decision],
        ..filter("default")
    };
    for t in 0..20u64 {
        let q = if t % 2 == 0 {
            random_unit(50_000 + t)
        } else {
            let near = random_unit(1_000 + t % 3);
            let e = random_unit(60_000 + t);
            unit(
                &near
                    .iter()
                    .zip(&e)
                    .map(|(a, b)| a + 0.03 * b)
                    .collect::<Vec<_>>(),
            )
        };
        for (f, k) in [(filter("default"), 50), (decisions.clone(), 10)] {
            let fast = nearest(&store, MODEL, &f, &q, k).unwrap();
            let exact = scan_nearest(&store, MODEL, &f, &q, k).unwrap();
            assert_eq!(fast, exact, "query {t}, k {k}");
            assert_eq!(fast.len(), k);
        }
    }
}

#[test]
fn a_long_lived_store_folds_each_write_into_its_cache_without_a_full_reload() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("memory.db")).unwrap();
    let ids = crowded(&mut store, 300);
    let f = filter("default");
    let q = random_unit(424_242);
    let top = |store: &SqliteStore| -> Vec<(i64, f32)> {
        let fast = nearest(store, MODEL, &f, &q, 10).unwrap();
        assert_eq!(fast, scan_nearest(store, MODEL, &f, &q, 10).unwrap());
        fast
    };
    top(&store);
    let loaded = store.vector_cache_stats(MODEL).unwrap();
    assert_eq!(loaded.full_loads, 1);

    // Remember a memory whose vector is the query: the next k-NN has it first.
    let new = remember(&mut store, "default", "new", MemoryType::Note, &q);
    assert_eq!(top(&store)[0].0, new);
    // Forget it: gone. Restore it: back.
    store.forget("default", "new").unwrap();
    assert!(top(&store).iter().all(|h| h.0 != new));
    store.restore("default", "new", None).unwrap();
    assert_eq!(top(&store)[0].0, new);
    // Edit it: its chunks are rewritten and its vector dropped until re-embedded.
    let edit = Edit {
        body: Some("other words".into()),
        ..Edit::default()
    };
    store.edit("default", "new", &edit, None).unwrap();
    assert!(top(&store).iter().all(|h| h.0 != new));
    store
        .store_vectors(MODEL, 384, &[(new, 0, q.clone())])
        .unwrap();
    assert_eq!(top(&store)[0].0, new);
    // A vector replaced in place (by the query's opposite), and a memory purged.
    let away: Vec<f32> = q.iter().map(|x| -x).collect();
    store.store_vectors(MODEL, 384, &[(new, 0, away)]).unwrap();
    assert!(top(&store).iter().all(|h| h.0 != new));
    let first = top(&store)[0].0;
    let name = format!("m{}", ids.iter().position(|i| *i == first).unwrap());
    store.purge("default", &name).unwrap();
    assert!(top(&store).iter().all(|h| h.0 != first));

    let after = store.vector_cache_stats(MODEL).unwrap();
    assert_eq!(after.full_loads, 1, "a write cost a full reload: {after:?}");
    assert_eq!(after.updates, 7, "one update per write: {after:?}");
}
