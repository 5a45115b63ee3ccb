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
