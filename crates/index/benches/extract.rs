//! Criterion benches for the per-file work of a first index, against the floor measured
//! in the same run: tree-sitter parsing the same files and nothing else.
//!
//! The corpus is loci's own sources (on every machine), or any tree given in
//! `LOCI_BENCH_CORPUS` (its `.rs` and `.py` files). Run with
//! `cargo bench -p loci-index --bench extract`.

use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use loci_index::Lang;

/// Most files read from the corpus (keeps one iteration well under a second).
const MAX_FILES: usize = 400;

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name();
        match e.file_type() {
            Ok(t) if t.is_dir() && name != "target" && name != ".loci" && name != ".git" => {
                collect(&path, out)
            }
            Ok(t) if t.is_file() && path.extension().is_some_and(|x| x == "rs" || x == "py") => {
                out.push(path)
            }
            _ => {}
        }
    }
}

fn corpus() -> Vec<(Lang, String)> {
    let root = std::env::var_os("LOCI_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    let mut paths = Vec::new();
    collect(&root, &mut paths);
    paths
        .into_iter()
        .filter_map(|p| {
            let lang = Lang::detect(&p, &[])?;
            let text = std::fs::read_to_string(&p).ok()?;
            (text.len() < 1 << 20).then_some((lang, text))
        })
        .take(MAX_FILES)
        .collect()
}

fn per_file(c: &mut Criterion) {
    let files = corpus();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let mut group = c.benchmark_group("per-file");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);

    group.bench_function("baseline: tree-sitter parse only", |b| {
        b.iter(|| {
            for (lang, text) in &files {
                let mut parser = loci_index::extract::new_parser(*lang).unwrap();
                std::hint::black_box(parser.parse(text, None));
            }
        })
    });
    group.bench_function("extract (parse + facts)", |b| {
        b.iter(|| {
            for (lang, text) in &files {
                std::hint::black_box(loci_index::extract::extract(*lang, text).unwrap());
            }
        })
    });
    let mut terms = loci_index::TermsBuilder::default();
    group.bench_function("search terms", |b| {
        b.iter(|| {
            for (_, text) in &files {
                std::hint::black_box(terms.document_terms(text));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, per_file);
criterion_main!(benches);
