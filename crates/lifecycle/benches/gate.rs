//! The gate's answer on a 5,000-file workspace (issue 6: within 50 ms).
//!
//! - `gate/cached`: a repeated session on a clean workspace (liveness cache hit, no walk);
//! - `gate/walk`: the cache off, so every gate walks and compares all 5,000 fingerprints
//!   (integrity check cached, as after the first session);
//! - `classify/cold`: the first check ever, `PRAGMA quick_check` included.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use loci_lifecycle::gate::{self, GateRequest};
use loci_lifecycle::probe::RegistryProbe;
use loci_lifecycle::{Config, State, record};

const FILES: usize = 5_000;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..FILES {
        let sub = dir.path().join(format!("pkg{:02}", i % 50));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("mod{i}.py")),
            format!(
                "import os\n\nclass Thing{i}:\n    def run(self):\n        return helper{i}()\n\ndef helper{i}():\n    return {i}\n"
            ),
        )
        .unwrap();
    }
    loci_index::index_workspace(
        &loci_index::IndexOptions::new(dir.path()),
        &loci_index::NoProgress,
    )
    .unwrap();
    dir
}

fn bench(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    // SAFETY: set once, before any benchmark thread exists.
    unsafe {
        std::env::set_var("LOCI_HOME", home.path());
        std::env::set_var("XDG_CONFIG_HOME", home.path().join("xdg"));
        std::env::set_var("LOCI_LIFECYCLE_GATE_BUDGET_MS", "60000");
    }
    let ws = workspace();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let req = GateRequest {
        path: root.clone(),
        session: None,
    };
    let probe = Arc::new(RegistryProbe);
    let first = gate::evaluate(&req, probe.clone());
    assert_eq!(first.status.state, State::Clean, "{:?}", first.status);

    c.bench_function("gate/cached", |b| {
        b.iter(|| {
            let a = gate::evaluate(&req, probe.clone());
            assert!(a.status.facts.cached);
        })
    });
    unsafe { std::env::set_var("LOCI_LIFECYCLE_LIVENESS_CACHE_MS", "0") };
    c.bench_function("gate/walk", |b| {
        b.iter(|| {
            let a = gate::evaluate(&req, probe.clone());
            assert_eq!(a.status.state, State::Clean);
            assert!(!a.status.facts.cached && a.status.facts.integrity_cached);
        })
    });
    let cfg = Config::load(Some(&root));
    let empty = record::Record::default();
    c.bench_function("classify/cold", |b| {
        b.iter(|| {
            let (s, _) = loci_lifecycle::classify(&root, &cfg, &RegistryProbe, &empty, true);
            assert_eq!(s.state, State::Clean);
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
