//! `loci watch [PATH]`: keep the index fresh until stopped (SIGINT/SIGTERM), and the
//! vectors of `search --meaning` when the workspace has them. Prints one line per sync
//! and per background embed (a JSON object per line with `--json`).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use clap::Args;
use loci_api::ApiError;
use loci_api::meaning::refresh::RefreshEvent;
use loci_api::vocab::lifecycle::Config;

use crate::workspace_arg::{load_config, target_path};

#[derive(Args)]
pub struct WatchArgs {
    /// The workspace directory (default: --workspace, else the current directory).
    path: Option<PathBuf>,
}

pub fn run(args: WatchArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    let path = target_path(args.path, workspace);
    let root = loci_api::workspace_root(&path)?;
    let cfg = load_config(Some(&root));
    watch_root(root, &cfg, json)
}

/// Watches `root` until the process is stopped.
pub fn watch_root(root: PathBuf, cfg: &Config, json: bool) -> Result<(), ApiError> {
    let stop = AtomicBool::new(false);
    let mut report = |e: &loci_api::vocab::lifecycle::WatchEvent| {
        let mut out = std::io::stdout().lock();
        if json {
            let _ = serde_json::to_writer(&mut out, e);
            let _ = writeln!(out);
        } else if let Some(err) = &e.error {
            let _ = writeln!(out, "sync ({}) failed: {err}", e.trigger);
        } else {
            let _ = writeln!(
                out,
                "synced ({}): {} parsed, {} removed, {} files in {} ms",
                e.trigger, e.files_parsed, e.files_removed, e.files_indexed, e.elapsed_ms
            );
        }
        let _ = out.flush();
    };
    loci_api::watch(
        &root,
        cfg,
        &stop,
        &mut report,
        Box::new(move |e| embed_line(e, json)),
    )
}

/// One line of the background embed that keeps `search --meaning` fresh.
fn embed_line(e: &RefreshEvent, json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        let _ = serde_json::to_writer(&mut out, e);
        let _ = writeln!(out);
    } else {
        let _ = match e {
            RefreshEvent::Progress { done, total } => {
                writeln!(out, "embedding: {done}/{total} code units")
            }
            RefreshEvent::Done(r) => writeln!(
                out,
                "embedded: {} code units of {} files ({} files removed), {} units in all, in {:.1} s",
                r.embedded, r.files_embedded, r.files_removed, r.units, r.seconds
            ),
            RefreshEvent::Failed { error } => writeln!(out, "embed failed: {error}"),
            RefreshEvent::NoModel { error, hint } => writeln!(
                out,
                "embed off: {error}{}",
                hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
            ),
        };
    }
    let _ = out.flush();
}
