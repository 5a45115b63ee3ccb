//! `loci status [PATH]`: the workspace's lifecycle state and why. Read-only; always
//! exits 0 (the state is the answer, `unavailable` included).

use std::path::PathBuf;
use std::sync::mpsc;

use clap::Args;
use loci_lifecycle::probe::RegistryProbe;
use loci_lifecycle::{State, Status, classify, record};

use crate::exit::Failure;
use crate::output;
use crate::workspace_arg::{load_config, target_path};

#[derive(Args)]
pub struct StatusArgs {
    /// The workspace directory (default: --workspace, else the current directory).
    path: Option<PathBuf>,
}

pub fn run(args: StatusArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), Failure> {
    let path = target_path(args.path, workspace);
    let status = status_of(&path);
    print(&status, json);
    Ok(())
}

/// Classifies `path` in full (no liveness cache), bounded by `index.probeTimeoutMs`.
pub fn status_of(path: &std::path::Path) -> Status {
    let root = match classify::resolve_root(path) {
        Ok(root) => root,
        Err(status) => return *status,
    };
    let cfg = load_config(Some(&root));
    let record = record::load(&root);
    let last_run = record.last_run.clone();
    let (tx, rx) = mpsc::channel();
    let (r, c) = (root.clone(), cfg.clone());
    let spawned = std::thread::Builder::new()
        .name("loci-status".into())
        .spawn(move || {
            let _ = tx.send(classify::classify(&r, &c, &RegistryProbe, &record, true).0);
        });
    let mut status = match spawned {
        Ok(_) => rx.recv_timeout(cfg.probe_timeout()).unwrap_or_else(|_| {
            classify::unknown(
                root.to_string_lossy().into_owned(),
                loci_lifecycle::state::Decider::None,
                format!(
                    "the state check did not finish within index.probeTimeoutMs ({} ms)",
                    cfg.probe_timeout().as_millis()
                ),
            )
        }),
        Err(e) => classify::unknown(
            root.to_string_lossy().into_owned(),
            loci_lifecycle::state::Decider::None,
            format!("cannot start the state check: {e}"),
        ),
    };
    status.last_run = last_run;
    status
}

/// Prints a status: the object with `--json`, else a few lines.
pub fn print(status: &Status, json: bool) {
    if json {
        output::json(status);
        return;
    }
    println!("loci: {} — {}", status.state, status.reason);
    println!("workspace: {}", status.workspace);
    for n in &status.notices {
        println!("notice: {}", n.message);
    }
    if let Some(s) = &status.started {
        println!(
            "started: loci {} (pid {}, budget {} ms)",
            s.purpose, s.pid, s.budget_ms
        );
    }
    if let Some(h) = &status.hint {
        println!("hint: {h}");
    }
    if let Some(r) = &status.last_run {
        println!(
            "last run: {} {:?}{}",
            r.purpose,
            r.result,
            r.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        );
    }
    for e in &status.errors {
        println!("error (captured): {e}");
    }
    if status.state == State::Clean && status.facts.cached {
        println!("(cached liveness check)");
    }
}
