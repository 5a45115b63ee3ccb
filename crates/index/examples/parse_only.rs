//! The bench's yardstick: parse every file `loci index` would index with tree-sitter
//! alone (the indexer's own file list, the same size cap, all cores), extracting and
//! storing nothing.
//!
//! `cargo run --release -p loci-index --example parse_only -- <dir>` prints one JSON
//! object: files, bytes and wall milliseconds.

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;

fn main() {
    let Some(root) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: parse_only <dir>");
        std::process::exit(2);
    };
    if !root.is_dir() {
        eprintln!("parse_only: not a directory: {}", root.display());
        std::process::exit(2);
    }
    let started = Instant::now();
    let files = loci_index::source_files(&root);
    let bytes: usize = files
        .par_iter()
        .map(|(path, lang)| {
            let Ok(text) = std::fs::read(path) else {
                return 0;
            };
            if text.len() as u64 > loci_index::DEFAULT_MAX_FILE_BYTES || text.contains(&0) {
                return 0;
            }
            let text = String::from_utf8_lossy(&text);
            let lang = lang.for_content(path, &text);
            let mut parser = loci_index::extract::new_parser(lang).expect("grammar loads");
            drop(parser.parse(text.as_bytes(), None));
            text.len()
        })
        .sum();
    println!(
        "{{\"files\": {}, \"bytes\": {}, \"wall_ms\": {}}}",
        files.len(),
        bytes,
        started.elapsed().as_millis()
    );
}
