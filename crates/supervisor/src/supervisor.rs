//! The [`Supervisor`] (spawning, single-flight, teardown on drop) and the
//! [`Handle`] a caller keeps to a run.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::SpawnError;
use crate::monitor::{self, Io, Limits};
use crate::outcome::Outcome;
use crate::poison::lock;
use crate::registry::{self, RegisterError};
use crate::run::{OnDone, Run, StopRequest};
use crate::spawner;
use crate::spec::{SpawnSpec, StdinMode};
use crate::stdin::{StdinPipe, StdinWriter};
use crate::sys;

type Inflight = Arc<Mutex<HashMap<String, Arc<Run>>>>;

/// Starts and supervises child processes; the only way loci spawns
/// (DESIGN.md invariant 3).
///
/// Dropping a supervisor tears down every child it started that is still
/// running (SIGTERM to each group, SIGKILL after the grace) and returns once
/// they are reaped. Share one with `Arc<Supervisor>`. Creating the first
/// supervisor installs the process-wide teardown paths (an `atexit` handler
/// and a SIGINT/SIGTERM/SIGHUP thread that re-raises the signal).
pub struct Supervisor {
    id: u64,
    inflight: Inflight,
}

impl Default for Supervisor {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("id", &self.id)
            .field("live_children", &self.live_children())
            .finish()
    }
}

impl Supervisor {
    /// A supervisor with no children; installs the process-wide teardown
    /// hooks on first use.
    pub fn new() -> Self {
        registry::install_hooks();
        Supervisor {
            id: registry::next_id(),
            inflight: Arc::default(),
        }
    }

    /// Starts `spec` and returns at once with a handle. With a single-flight
    /// key already in flight on this supervisor, nothing is started: the
    /// handle joins the running child and will see its outcome.
    pub fn spawn(&self, spec: SpawnSpec) -> Result<Handle, SpawnError> {
        self.spawn_with(spec, None)
    }

    /// Starts `spec` and blocks until it ends.
    pub fn run(&self, spec: SpawnSpec) -> Result<Outcome, SpawnError> {
        Ok(self.spawn(spec)?.wait())
    }

    /// A detached background run: returns at once, never blocks the caller,
    /// and calls `on_done` with the outcome when the run ends (on the run's
    /// supervision thread, or on this thread if a joined run already ended).
    /// The child is in the teardown registry like any other, and the handle
    /// can still be waited on or cancelled from any thread. `on_done` should
    /// be quick: it delays the release of that run's thread.
    pub fn spawn_detached(
        &self,
        spec: SpawnSpec,
        on_done: impl FnOnce(Outcome) + Send + 'static,
    ) -> Result<Handle, SpawnError> {
        self.spawn_with(spec, Some(Box::new(on_done)))
    }

    /// Tears down every live child of this supervisor now (what drop does).
    pub fn shutdown(&self) {
        registry::teardown(&registry::owned_by(self.id));
    }

    /// Number of children of this supervisor not yet reaped.
    pub fn live_children(&self) -> usize {
        registry::count_owned_by(self.id)
    }

    fn spawn_with(&self, spec: SpawnSpec, on_done: Option<OnDone>) -> Result<Handle, SpawnError> {
        let Some(key) = spec.key.clone() else {
            let run = start(spec, self.id, None)?;
            if let Some(cb) = on_done {
                run.on_done(cb);
            }
            return Ok(Handle { run, joined: false });
        };
        // The in-flight map stays locked while starting, so N concurrent
        // callers with one key start exactly one process.
        let mut map = lock(&self.inflight);
        if let Some(run) = map.get(&key).filter(|r| !r.is_finished()).cloned() {
            drop(map);
            tracing::debug!(key = %key, pid = run.pid, "single-flight: joined a running child");
            if let Some(cb) = on_done {
                run.on_done(cb);
            }
            return Ok(Handle { run, joined: true });
        }
        let finish_key = (self.inflight.clone(), key.clone());
        let run = start(spec, self.id, Some(finish_key))?;
        map.insert(key, run.clone());
        drop(map);
        if let Some(cb) = on_done {
            run.on_done(cb);
        }
        Ok(Handle { run, joined: false })
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A caller's view of one run: its pid, its outcome, and a way to stop it.
///
/// Cheap to clone, `Send + Sync`: hand a clone to a thread to wait on a
/// background run. All handles of a run (including single-flight joiners)
/// see the same outcome, and `cancel()` from any of them stops the run.
#[derive(Clone)]
pub struct Handle {
    run: Arc<Run>,
    joined: bool,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("pid", &self.run.pid)
            .field("joined", &self.joined)
            .field("finished", &self.run.is_finished())
            .finish()
    }
}

impl Handle {
    /// The child's pid, which is also its process-group and session id.
    pub fn pid(&self) -> u32 {
        self.run.pid
    }

    /// True when this handle joined a run another caller started
    /// (single-flight).
    pub fn joined(&self) -> bool {
        self.joined
    }

    /// Blocks until the run has ended and its output is drained.
    pub fn wait(&self) -> Outcome {
        self.run.wait()
    }

    /// Like [`Handle::wait`], giving up after `timeout` (the run continues).
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Outcome> {
        self.run.wait_until(Instant::now() + timeout)
    }

    /// The outcome if the run has ended, without blocking.
    pub fn try_outcome(&self) -> Option<Outcome> {
        self.run.try_outcome()
    }

    /// Whether the run has ended.
    pub fn is_finished(&self) -> bool {
        self.run.is_finished()
    }

    /// The writer of the child's stdin, for a run spawned with
    /// [`SpawnSpec::stdin_stream`]: `Some` the first time it is asked for,
    /// on any handle of the run (single-flight joiners included), `None`
    /// after that and for runs without a streamed stdin. A run has one
    /// writer so that messages cannot interleave; share it behind a `Mutex`.
    /// See [`StdinWriter`] for blocking, closing and errors.
    pub fn take_stdin(&self) -> Option<StdinWriter> {
        self.run.stdin.get()?.take_writer()
    }

    /// Stops the run: SIGTERM to the child's group now, SIGKILL after the
    /// grace. Returns at once; `wait` reports `cancelled`. A run that is
    /// already stopping or has ended is left alone.
    pub fn cancel(&self) {
        self.run.request_stop(StopRequest::Cancel);
    }
}

fn program_name(spec: &SpawnSpec) -> String {
    spec.program.to_string_lossy().into_owned()
}

/// Spawns the child of `spec`, registers it, and starts its supervision
/// thread. `finish_key` names the single-flight entry to clear when it ends.
fn start(
    mut spec: SpawnSpec,
    owner: u64,
    finish_key: Option<(Inflight, String)>,
) -> Result<Arc<Run>, SpawnError> {
    let program = program_name(&spec);
    let setup_err = |source| SpawnError::Setup {
        program: program.clone(),
        source,
    };
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args);
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    spec.env.apply(&mut cmd);
    cmd.stdin(match spec.stdin {
        StdinMode::Null => Stdio::null(),
        StdinMode::Bytes(_) | StdinMode::Stream => Stdio::piped(),
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    sys::new_session_on_exec(&mut cmd);
    if spec.die_with_parent {
        sys::parent_death_signal_on_exec(&mut cmd, std::process::id());
    }
    let die_with_parent = spec.die_with_parent;
    let wake = sys::eventfd().map_err(setup_err)?;

    let started = Instant::now();
    let run_id = registry::next_id();
    let grace = spec.kill_grace;
    let (mut child, run) = registry::spawn_registered(
        || {
            if die_with_parent {
                spawner::spawn(cmd)
            } else {
                cmd.spawn()
            }
        },
        |pid| Arc::new(Run::new(run_id, owner, pid, grace, wake)),
    )
    .map_err(|e| match e {
        RegisterError::Closed => SpawnError::ShuttingDown {
            program: program.clone(),
        },
        RegisterError::Spawn(source) => SpawnError::Spawn {
            program: program.clone(),
            source,
        },
    })?;
    let pid = run.pid;

    let io = (|| {
        let stdout = std::fs::File::from(std::os::fd::OwnedFd::from(
            child.stdout.take().expect("stdout is piped"),
        ));
        let stderr = std::fs::File::from(std::os::fd::OwnedFd::from(
            child.stderr.take().expect("stderr is piped"),
        ));
        for f in [&stdout, &stderr] {
            sys::set_nonblocking(f)?;
            sys::grow_pipe(f);
        }
        let mut stdin = None;
        let mut stdin_stream = None;
        match (
            child.stdin.take(),
            std::mem::replace(&mut spec.stdin, StdinMode::Null),
        ) {
            (Some(s), StdinMode::Bytes(data)) => {
                let f = std::fs::File::from(std::os::fd::OwnedFd::from(s));
                sys::set_nonblocking(&f)?;
                stdin = Some((f, data));
            }
            (Some(s), StdinMode::Stream) => {
                let f = std::fs::File::from(std::os::fd::OwnedFd::from(s));
                let pipe = Arc::new(StdinPipe::new(pid, f)?);
                let _ = run.stdin.set(pipe.clone());
                stdin_stream = Some(pipe);
            }
            _ => {}
        }
        let exited = exit_notifier(pid)?;
        Ok(Io {
            stdin,
            stdin_stream,
            stdout,
            stderr,
            exited,
        })
    })();
    let io = match io {
        Ok(io) => io,
        Err(e) => {
            abandon(&run);
            return Err(setup_err(e));
        }
    };

    tracing::debug!(
        program = %program,
        pid,
        argc = spec.args.len(),
        argv_bytes = spec.argv_bytes(),
        stdin_bytes = io.stdin.as_ref().map_or(0, |s| s.1.len()),
        stdin_stream = io.stdin_stream.is_some(),
        budget_ms = spec.budget.as_millis() as u64,
        "spawned"
    );

    let limits = Limits {
        budget: spec.budget,
        grace: spec.kill_grace,
        capture_cap: spec.capture_cap,
    };
    let sinks = (spec.stdout_sink.take(), spec.stderr_sink.take());
    let held = std::mem::take(&mut spec.held);
    let thread_run = run.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("loci-sup-{pid}"))
        .spawn(move || {
            let outcome = monitor::supervise(&thread_run, io, limits, sinks, started);
            registry::unregister(thread_run.id);
            if let Some((inflight, key)) = finish_key {
                let mut map = lock(&inflight);
                if map.get(&key).is_some_and(|r| Arc::ptr_eq(r, &thread_run)) {
                    map.remove(&key);
                }
            }
            // Temp files of this spawn go before anyone sees the outcome.
            drop(held);
            tracing::debug!(
                pid,
                exit = %outcome.exit,
                elapsed_ms = outcome.elapsed.as_millis() as u64,
                timed_out = outcome.timed_out,
                cancelled = outcome.cancelled,
                "child ended"
            );
            thread_run.publish(outcome);
        });
    if let Err(e) = spawned {
        // The closure (and the child's pipes) were dropped with the error.
        abandon(&run);
        return Err(setup_err(e));
    }
    Ok(run)
}

/// Kills and reaps a child whose supervision could not be set up.
fn abandon(run: &Run) {
    sys::kill_group(run.pid, libc::SIGKILL);
    let exit = sys::reap(run.pid);
    registry::unregister(run.id);
    run.publish(Outcome {
        pid: run.pid,
        exit,
        elapsed: Duration::ZERO,
        stdout: Default::default(),
        stderr: Default::default(),
        timed_out: false,
        cancelled: true,
        killed_after_grace: false,
        stdin_bytes_written: 0,
    });
}

/// A file that becomes readable when `pid` exits, leaving it unreaped: a
/// pidfd, or on kernels without one an eventfd written by a waiter thread.
fn exit_notifier(pid: u32) -> std::io::Result<std::fs::File> {
    match sys::pidfd_open(pid) {
        Ok(fd) => Ok(std::fs::File::from(fd)),
        Err(_) => {
            let ev = sys::eventfd()?;
            let writer = ev.try_clone()?;
            std::thread::Builder::new()
                .name(format!("loci-sup-wait-{pid}"))
                .spawn(move || {
                    // Even on error (the child was reaped by someone else)
                    // wake the loop so the run ends instead of hanging.
                    let _ = sys::wait_exited_nowait(pid);
                    use std::io::Write;
                    let _ = (&writer).write(&1u64.to_ne_bytes());
                })?;
            Ok(ev)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supervisor_and_handle_can_be_shared_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Supervisor>();
        send_sync::<Handle>();
        send_sync::<Outcome>();
    }
}
