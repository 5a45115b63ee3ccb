//! The process-wide teardown registry: every live child loci started, and the
//! three paths that tear them down (supervisor drop, normal process exit,
//! SIGINT/SIGTERM/SIGHUP).
//!
//! Only children recorded here are ever signalled: loci never looks for
//! processes by name. A run leaves the registry when its leader is reaped.

use std::collections::HashMap;
use std::io;
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use crate::poison::lock;
use crate::run::{Run, StopRequest};
use crate::sys;

/// Extra time teardown waits beyond a child's kill grace for its supervision
/// thread to reap it after SIGKILL.
const TEARDOWN_MARGIN: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Registry {
    runs: HashMap<u64, Arc<Run>>,
    /// Set once the process is going away: no new child may start.
    closed: bool,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static HOOKS: Once = Once::new();
/// A host's own shutdown, run instead of teardown-and-re-raise when a fatal signal
/// arrives (see [`on_shutdown_signal`]).
static HOST_SHUTDOWN: Mutex<Option<ShutdownHandler>> = Mutex::new(None);

/// What a host runs when SIGINT, SIGTERM or SIGHUP arrives.
pub type ShutdownHandler = Arc<dyn Fn(i32) + Send + Sync>;

/// Replaces the default signal path (tear every child down, then re-raise the signal)
/// with the host's own: a server drains its in-flight work, then calls
/// [`teardown_all_children`] and exits; a CLI tears down, reports and exits with its
/// documented code. The handler runs on the supervisor's signal thread, once per signal
/// received (a second SIGINT may mean "hurry").
pub fn on_shutdown_signal(handler: ShutdownHandler) {
    install_hooks();
    *lock(&HOST_SHUTDOWN) = Some(handler);
}

/// Closes the registry to new children and tears down every live one (SIGTERM to each
/// group, SIGKILL after its grace), waiting, bounded, until each is reaped.
pub fn teardown_all_children() {
    teardown_all();
}

/// A fresh id for a run or a supervisor.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Why a spawn could not be registered.
pub(crate) enum RegisterError {
    Closed,
    Spawn(io::Error),
}

/// Spawns through `spawn` and registers the child in one step, under the
/// registry lock, so a teardown running concurrently either sees the child or
/// refuses the spawn: no child can slip between the two.
pub(crate) fn spawn_registered(
    spawn: impl FnOnce() -> io::Result<Child>,
    make_run: impl FnOnce(u32) -> Arc<Run>,
) -> Result<(Child, Arc<Run>), RegisterError> {
    let mut guard = lock(&REGISTRY);
    let reg = guard.get_or_insert_with(Registry::default);
    if reg.closed {
        return Err(RegisterError::Closed);
    }
    let child = spawn().map_err(RegisterError::Spawn)?;
    let run = make_run(child.id());
    reg.runs.insert(run.id, run.clone());
    Ok((child, run))
}

/// Spawns through `spawn` unless teardown began, without registering the child: a
/// handed-off child (`hand_off.rs`) is not this process's to tear down.
pub(crate) fn spawn_unregistered(
    spawn: impl FnOnce() -> io::Result<Child>,
) -> Result<Child, RegisterError> {
    let mut guard = lock(&REGISTRY);
    if guard.get_or_insert_with(Registry::default).closed {
        return Err(RegisterError::Closed);
    }
    spawn().map_err(RegisterError::Spawn)
}

/// Removes a run whose leader has been reaped.
pub(crate) fn unregister(id: u64) {
    if let Some(reg) = lock(&REGISTRY).as_mut() {
        reg.runs.remove(&id);
    }
}

/// Live runs started by supervisor `owner`.
pub(crate) fn owned_by(owner: u64) -> Vec<Arc<Run>> {
    lock(&REGISTRY)
        .as_ref()
        .map(|r| {
            r.runs
                .values()
                .filter(|run| run.owner == owner)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Number of live runs of `owner`.
pub(crate) fn count_owned_by(owner: u64) -> usize {
    lock(&REGISTRY).as_ref().map_or(0, |r| {
        r.runs.values().filter(|run| run.owner == owner).count()
    })
}

/// Stops every run in `runs` (SIGTERM to its group, SIGKILL after its grace;
/// a run already being stopped is not signalled again) and waits, bounded,
/// until each is reaped.
pub(crate) fn teardown(runs: &[Arc<Run>]) {
    if runs.is_empty() {
        return;
    }
    let start = Instant::now();
    for run in runs {
        run.request_stop(StopRequest::Teardown);
    }
    for run in runs {
        if run
            .wait_until(start + run.grace + TEARDOWN_MARGIN)
            .is_none()
        {
            tracing::warn!(pid = run.pid, "child not reaped within its teardown bound");
        }
    }
}

/// Closes the registry to new children and tears down every live one.
fn teardown_all() {
    let runs: Vec<Arc<Run>> = {
        let mut guard = lock(&REGISTRY);
        let reg = guard.get_or_insert_with(Registry::default);
        reg.closed = true;
        reg.runs.values().cloned().collect()
    };
    teardown(&runs);
}

extern "C" fn teardown_at_exit() {
    // Never unwind across the C boundary.
    let _ = std::panic::catch_unwind(teardown_all);
}

/// Installs, once per process, the exit and signal teardown paths.
///
/// - normal exit (`exit(3)`, return from `main`): an `atexit` handler tears
///   down every live child;
/// - SIGINT, SIGTERM, SIGHUP: a dedicated thread tears down every live child,
///   then restores the default action and re-raises the signal, so the process
///   ends with the conventional status (128 + signal) instead of exiting 0.
pub(crate) fn install_hooks() {
    HOOKS.call_once(|| {
        sys::at_exit(teardown_at_exit);
        let signals = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
        match signal_hook::iterator::Signals::new(signals) {
            Ok(mut signals) => {
                let spawned = std::thread::Builder::new()
                    .name("loci-supervisor-signals".into())
                    .spawn(move || {
                        for sig in signals.forever() {
                            let host = lock(&HOST_SHUTDOWN).clone();
                            match host {
                                // A long-running host drains first, then tears down
                                // (through `teardown_all_children`) and exits itself.
                                Some(handler) => handler(sig),
                                None => {
                                    tracing::warn!(
                                        signal = sig,
                                        "signal received; tearing down children"
                                    );
                                    teardown_all();
                                    sys::reraise_default(sig);
                                }
                            }
                        }
                    });
                if let Err(e) = spawned {
                    tracing::warn!(error = %e, "cannot start the signal teardown thread");
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot install signal teardown handlers"),
        }
    });
}
