//! The API's reads on a warm workspace handle, in process: `find` and `callers
//! --depth 3` latency beside the cheapest indexed lookup (the baseline in the same run),
//! and how 8 threads on one handle scale against one.
//!
//! Corpus: whole crates from the cargo registry (`~/.cargo/registry/src/*/`, in name
//! order) until at least 800 Rust files, a tokio-sized tree on every machine that has
//! built loci; `LOCI_BENCH_TREE=DIR` uses a tree of your own instead.
//! Run with `cargo bench -p loci-api --bench handle`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use loci_api::ReadOptions;
use loci_api::graph::{Direction, FindRequest, TraversalRequest, find, traverse};

const MIN_FILES: usize = 800;

fn rust_files(dir: &Path, n: &mut usize) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => rust_files(&p, n),
            Ok(t) if t.is_file() && p.extension().is_some_and(|x| x == "rs") => *n += 1,
            _ => {}
        }
    }
}

/// Crates from the registry, in name order, until MIN_FILES Rust files.
fn registry_corpus() -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("HOME or CARGO_HOME");
    let mut crates: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .expect("a cargo registry (build loci once)")
        .flatten()
        .flat_map(|index| {
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .collect();
    crates.sort();
    let (mut files, mut picked) = (0, Vec::new());
    for c in crates {
        if files >= MIN_FILES {
            break;
        }
        rust_files(&c, &mut files);
        picked.push(c);
    }
    picked
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let (p, t) = (e.path(), e.file_type().unwrap());
        if t.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else if t.is_file() && p.extension().is_some_and(|x| x == "rs") {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A typical callee: the first (by path) with a unique name and 5 to 20 direct callers, as an
/// unambiguous `path:name` selector.
fn typical_callee(index: &Path) -> (String, String) {
    let conn = rusqlite::Connection::open(index).unwrap();
    conn.query_row(
        "SELECT f.path, s.name FROM edges e JOIN symbols s ON s.id = e.dst_symbol
         JOIN files f ON f.id = s.file_id WHERE e.kind = 'CALLS'
           AND (SELECT count(*) FROM symbols t WHERE t.name = s.name) = 1
         GROUP BY e.dst_symbol HAVING count(*) BETWEEN 5 AND 20
         ORDER BY f.path, s.start_line LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

fn handle(c: &mut Criterion) {
    // A host serving concurrent reads (a server) makes this choice at start-up.
    assert!(
        loci_api::prefer_parallel_reads(),
        "called before any connection"
    );
    let dir = tempfile::tempdir().unwrap();
    let tree = match std::env::var_os("LOCI_BENCH_TREE") {
        Some(t) => PathBuf::from(t),
        None => {
            for krate in registry_corpus() {
                copy_tree(&krate, &dir.path().join(krate.file_name().unwrap()));
            }
            dir.path().to_path_buf()
        }
    };
    let report = loci_index::index_workspace(
        &loci_index::IndexOptions::new(&tree),
        &loci_index::NoProgress,
    )
    .unwrap();
    eprintln!(
        "corpus: {} files, {} symbols",
        report.files_indexed, report.symbols
    );
    let ws = Arc::new(loci_api::open(&tree).unwrap());
    let (path, name) = typical_callee(Path::new(&report.index_path));
    let selector = format!("{path}:{name}");
    eprintln!("callers target: {selector}");
    let find_req = FindRequest {
        pattern: name.clone(),
        kind: None,
        lang: None,
        page: Default::default(),
    };
    let callers_req = TraversalRequest {
        target: selector,
        include_name_only: false,
        depth: Some(3),
        include_unresolved: false,
        path: None,
        edges: None,
        group_by: None,
        page: Default::default(),
    };
    let opts = ReadOptions::default();

    c.bench_function("baseline: one indexed row through the handle", |b| {
        b.iter(|| {
            ws.read(&opts, |g| {
                Ok(g.connection()
                    .query_row("SELECT id FROM files WHERE id = 1", [], |r| {
                        r.get::<_, i64>(0)
                    })
                    .unwrap())
            })
            .unwrap()
        })
    });
    c.bench_function("api find (exact name)", |b| {
        b.iter(|| find(&ws, &find_req, &opts).unwrap())
    });
    c.bench_function("api callers --depth 3", |b| {
        b.iter(|| traverse(&ws, Direction::Callers, &callers_req, &opts).unwrap())
    });

    // Scaling: the same number of finds on 1 thread and spread over 8.
    let total = 20_000;
    let run = |threads: usize| -> Duration {
        let started = Instant::now();
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (ws, req) = (ws.clone(), find_req.clone());
                std::thread::spawn(move || {
                    for _ in 0..total / threads {
                        find(&ws, &req, &ReadOptions::default()).unwrap();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        started.elapsed()
    };
    run(8); // warm every pooled connection
    let one = run(1);
    let eight = run(8);
    eprintln!(
        "scaling: {total} finds on 1 thread {:.0} ms, on 8 threads {:.0} ms: {:.2}x",
        one.as_secs_f64() * 1e3,
        eight.as_secs_f64() * 1e3,
        one.as_secs_f64() / eight.as_secs_f64()
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3));
    targets = handle
}
criterion_main!(benches);
