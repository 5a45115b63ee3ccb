//! Criterion benches for the graph queries, over an index of loci's own sources (a real
//! tree on every machine). Run with `cargo bench -p loci-index --bench queries`.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use loci_index::graph::{self, Graph, SearchOptions};

fn copy_rs(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let t = e.file_type().unwrap();
        let name = e.file_name();
        if t.is_dir() && name != "target" && name != ".loci" {
            copy_rs(&e.path(), &to.join(&name));
        } else if t.is_file() && e.path().extension().is_some_and(|x| x == "rs" || x == "py") {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

fn queries(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    copy_rs(crates, dir.path());
    let opts = loci_index::IndexOptions::new(dir.path());
    loci_index::index_workspace(&opts, &loci_index::NoProgress).unwrap();
    let root = loci_index::workspace_root(dir.path()).unwrap();
    let g = Graph::open(&root).unwrap();

    // Baseline in the same run: the cheapest possible indexed lookup.
    c.bench_function("baseline: SELECT 1 by primary key", |b| {
        b.iter(|| {
            g.connection()
                .query_row("SELECT id FROM files WHERE id = 1", [], |r| {
                    r.get::<_, i64>(0)
                })
                .unwrap()
        })
    });
    c.bench_function("find exact name", |b| {
        b.iter(|| graph::find(&g, "index_workspace", None, None, 100).unwrap())
    });
    c.bench_function("find glob", |b| {
        b.iter(|| graph::find(&g, "parse_*", None, None, 100).unwrap())
    });
    c.bench_function("def", |b| b.iter(|| g.def("index_workspace").unwrap()));
    c.bench_function("callers --depth 3", |b| {
        b.iter(|| graph::callers(&g, "walk::walk", 3).unwrap())
    });
    c.bench_function("callees --depth 2", |b| {
        b.iter(|| graph::callees(&g, "index_workspace", 2).unwrap())
    });
    c.bench_function("impact --depth 3", |b| {
        b.iter(|| graph::impact(&g, "Collector::def", 3, false).unwrap())
    });
    c.bench_function("outline", |b| {
        b.iter(|| g.outline("index/src/sync.rs").unwrap())
    });
    let opts = SearchOptions::default();
    c.bench_function("search literal", |b| {
        b.iter(|| graph::search(&g, "prepare_cached", &opts).unwrap())
    });
    let regex = SearchOptions {
        regex: true,
        ..SearchOptions::default()
    };
    c.bench_function("search regex", |b| {
        b.iter(|| graph::search(&g, r"fn \w+_file\(", &regex).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2));
    targets = queries
}
criterion_main!(benches);
