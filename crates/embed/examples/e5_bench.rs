//! Throughput and peak RSS of multilingual-e5-small (E5S1, `Embedder::load_e5s1`)
//! against all-MiniLM-L6-v2 on the same real texts: functions cut from Rust sources
//! (by default the crates under `~/.cargo/registry/src`), embedded as documents.
//!
//! ```text
//! cargo build --release -p loci-embed --example e5_bench
//! target/release/examples/e5_bench --model e5 --path e5-small-q4.bin [--precision f32|int8]
//! target/release/examples/e5_bench --model minilm --path <models dir> [--precision f32|int8]
//!     [--src DIR] [--texts 500] [--runs 3]
//! ```
//! One model per process, so the peak RSS (`VmHWM`, load included) is that model's;
//! the model is loaded before the texts are read, so the RSS after load is its own.
//! Prints one JSON line: load time, RSS after load, peak RSS, tokens, and the best of
//! `--runs` timed passes over all texts as texts/s and tokens/s.

use std::path::{Path, PathBuf};
use std::time::Instant;

use loci_embed::{Embedder, Precision};

#[path = "common/proc_status.rs"]
mod proc_status;
use proc_status::status_kb;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut model = String::from("e5");
    let mut path = None;
    let mut precision = Precision::Auto;
    let mut src = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cargo/registry/src"))
        .unwrap_or_default();
    let (mut n, mut runs) = (500usize, 3usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--model" => model = value()?,
            "--path" => path = Some(PathBuf::from(value()?)),
            "--precision" => precision = value()?.parse()?,
            "--src" => src = PathBuf::from(value()?),
            "--texts" => n = value()?.parse()?,
            "--runs" => runs = value()?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let path = path.ok_or("--path is required")?;
    let rss_start = status_kb("VmRSS");
    let started = Instant::now();
    let e = match model.as_str() {
        "e5" => Embedder::load_e5s1(&path, "multilingual-e5-small", precision)?,
        "minilm" => Embedder::load_installed_with_precision(&path, precision)?,
        other => return Err(format!("--model {other}: e5 or minilm").into()),
    };
    let load_s = started.elapsed().as_secs_f64();
    let (rss_loaded, hwm_loaded) = (status_kb("VmRSS"), status_kb("VmHWM"));
    let texts = functions(&src, n)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t = Instant::now();
    let tokens: usize = e.tokenize(&refs)?.iter().map(Vec::len).sum();
    let tokenize_s = t.elapsed().as_secs_f64();
    e.embed(&refs[..refs.len().min(32)])?; // warm the pool and the buffers
    let mut best = f64::INFINITY;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let v = e.embed(&refs)?;
        best = best.min(t.elapsed().as_secs_f64());
        assert_eq!(v.len(), refs.len());
    }
    println!(
        "{{\"model\": \"{model}\", \"precision\": \"{}\", \"texts\": {}, \"tokens\": {tokens}, \
         \"load_s\": {load_s:.2}, \"rss_start_mb\": {:.1}, \"rss_after_load_mb\": {:.1}, \"peak_after_load_mb\": {:.1}, \
         \"peak_mb\": {:.1}, \"tokenize_s\": {tokenize_s:.3}, \"best_s\": {best:.3}, \"texts_per_s\": {:.1}, \"tokens_per_s\": {:.0}}}",
        e.precision().name(),
        refs.len(),
        rss_start / 1024.0,
        rss_loaded / 1024.0,
        hwm_loaded / 1024.0,
        status_kb("VmHWM") / 1024.0,
        refs.len() as f64 / best,
        tokens as f64 / best,
    );
    Ok(())
}

/// `n` functions from the `.rs` files under `src` (files in name order, every k-th
/// function so they spread over the crates): from a line starting `fn` or `pub fn`
/// (indented or not) to the closing brace at its indentation, at most 80 lines. Two
/// passes (count, then keep every k-th), one file in memory at a time, so gathering
/// the texts does not raise the peak RSS measured.
fn functions(src: &Path, n: usize) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    let total: usize = files.iter().map(|f| functions_of(f, |_| {})).sum();
    if total == 0 {
        return Err(format!("no Rust functions under {}", src.display()).into());
    }
    let step = (total / n.max(1)).max(1);
    let (mut out, mut index) = (Vec::with_capacity(n), 0usize);
    for f in &files {
        functions_of(f, |body| {
            if index.is_multiple_of(step) && out.len() < n {
                out.push(body());
            }
            index += 1;
        });
    }
    Ok(out)
}

/// Calls `each` with every function of the file `f` (a closure making its text), and
/// returns how many there were.
fn functions_of(f: &Path, mut each: impl FnMut(&dyn Fn() -> String)) -> usize {
    let Ok(text) = std::fs::read_to_string(f) else {
        return 0;
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut count = 0;
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if !(body.starts_with("fn ") || body.starts_with("pub fn ")) {
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        let end = lines[i..]
            .iter()
            .take(80)
            .position(|l| *l == close)
            .map_or(i + 80, |k| i + k + 1)
            .min(lines.len());
        each(&|| lines[i..end].join("\n"));
        count += 1;
    }
    count
}
