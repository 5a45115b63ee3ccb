//! `loci index [PATH]`: build or update a workspace's index and register it.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use loci_api::ApiError;

use crate::output;
use crate::workspace_arg::{load_config, target_path};

#[derive(Args)]
pub struct IndexArgs {
    /// The workspace directory (default: --workspace, else the current directory).
    path: Option<PathBuf>,
    /// Skip files larger than this many bytes (default: `index.maxFileBytes` from the
    /// layered configuration, 1 MiB unless set; see `loci config show`).
    #[arg(long)]
    max_file_bytes: Option<u64>,
    /// Threads for walking and parsing (default: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// List every skipped file in the human output too.
    #[arg(long)]
    verbose: bool,
    /// Keep the index in this file instead of `<PATH>/.loci/index.db` (for a read-only
    /// tree); the registry records it, so every later command finds it.
    #[arg(long, value_name = "FILE")]
    index_path: Option<PathBuf>,
}

/// The progress bar `index`, `sync` and `rebuild` draw on stderr while they parse. It
/// stays hidden until a run has files to parse, so a failed or no-change run draws
/// nothing.
struct Bar(ProgressBar);

impl loci_api::vocab::index::Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
        if total > 0 {
            self.0.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Where an index run reports its progress: progress lines on stderr for the process
/// that started this one as a background run (`LOCI_PROGRESS=lines`), a bar when
/// stderr is a terminal and the output is not `--json`, else nowhere.
pub fn progress(json: bool) -> Box<dyn loci_api::vocab::index::Progress> {
    if loci_api::vocab::lifecycle::lines_requested() {
        return Box::new(loci_api::vocab::lifecycle::ProgressLines::default());
    }
    if json || !std::io::stderr().is_terminal() {
        return Box::new(loci_api::vocab::index::NoProgress);
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden()).with_style(
        ProgressStyle::with_template(
            "{spinner} parsing {pos}/{len} files [{bar:30}] {per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Box::new(Bar(bar))
}

pub fn run(args: IndexArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let path = target_path(args.path, workspace);
    // A bad path gets its own error before anything reads a configuration under it.
    let root = loci_api::workspace_root(&path)?;
    let cfg = load_config(Some(&root));
    warn_if_nested(&path);
    let req = loci_api::IndexRequest {
        path,
        index_path: args.index_path.map(absolute),
        max_file_bytes: args.max_file_bytes,
        threads: args.threads,
    };
    let report = loci_api::index(&req, &cfg, progress(json).as_ref())?;
    if json {
        output::json(&report);
        return Ok(());
    }
    println!(
        "indexed {}: {} files ({} parsed, {} unchanged, {} removed), {} symbols, {} edges in {} ms",
        report.workspace,
        report.files_indexed,
        report.files_parsed,
        report.files_unchanged,
        report.files_removed,
        report.symbols,
        report.edges,
        report.elapsed_ms
    );
    if report.files_skipped > 0 {
        let reasons: Vec<String> = report
            .skipped_by_reason
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        println!(
            "skipped {} files: {}",
            report.files_skipped,
            reasons.join(", ")
        );
        let shown = if args.verbose {
            report.skipped.len()
        } else {
            10
        };
        output::skipped_files(&report.skipped, shown, report.skipped.len() as u64);
        if report.skipped.len() > shown {
            println!("  (--verbose lists all)");
        }
    }
    if !report.lossy_files.is_empty() {
        println!(
            "{} files were not valid UTF-8 and were decoded lossily",
            report.lossy_files.len()
        );
    }
    Ok(())
}

/// A relative `--index-path` is taken from the current directory.
fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        return p;
    }
    std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
}

/// Indexing a directory inside a workspace that already has an index creates a second,
/// nested one that shadows the outer for commands run below it: say so.
fn warn_if_nested(path: &std::path::Path) {
    let Ok(abs) = std::fs::canonicalize(path) else {
        return;
    };
    if loci_api::vocab::store::index_path_for(&abs).is_file() {
        return;
    }
    if let Some(outer) = abs.parent().map(loci_api::enclosing_workspace)
        && loci_api::vocab::store::index_path_for(&outer).is_file()
    {
        eprintln!(
            "warning: {} is inside the indexed workspace {}; this creates a separate index \
             that answers for commands run below it (index the outer workspace instead: \
             `loci index {}`)",
            abs.display(),
            outer.display(),
            outer.display()
        );
    }
}
