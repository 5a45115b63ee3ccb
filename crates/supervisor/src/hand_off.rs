//! Handing a child off: a process that must outlive the one that started it.
//!
//! A session-start gate answers and is gone within its host's hook timeout, while the
//! maintenance it started can take minutes. Such a child cannot be supervised by the
//! gate (its teardown would end the work with the gate), so it is handed off: started
//! in its own session with no pipes to its parent, left out of the teardown registry,
//! and reaped by a thread while the parent lives (after that, by whoever inherits it).
//! The child takes over what supervision gives every other child: it must bound its own
//! lifetime and output, and supervise its own children (loci's maintenance owner does,
//! `loci_lifecycle::maintenance`).

use std::process::{Command, Stdio};

use crate::error::SpawnError;
use crate::registry::{self, RegisterError};
use crate::spec::SpawnSpec;
use crate::supervisor::Supervisor;
use crate::sys;

impl Supervisor {
    /// Starts `spec` as a handed-off child and returns its pid (also its session and
    /// process-group id) at once. Its stdin, stdout and stderr are `/dev/null`, it is
    /// not in the teardown registry (dropping the supervisor, exiting or a termination
    /// signal leave it running), and the spec's budget, capture, sinks, held values
    /// and single-flight key do not apply: the program must bound itself. Refused like
    /// any spawn once this process's teardown began.
    pub fn hand_off(&self, spec: SpawnSpec) -> Result<u32, SpawnError> {
        let program = spec.program.to_string_lossy().into_owned();
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        spec.env.apply(&mut cmd);
        sys::new_session_on_exec(&mut cmd);
        let mut child = registry::spawn_unregistered(|| cmd.spawn()).map_err(|e| match e {
            RegisterError::Closed => SpawnError::ShuttingDown {
                program: program.clone(),
            },
            RegisterError::Spawn(source) => SpawnError::Spawn {
                program: program.clone(),
                source,
            },
        })?;
        let pid = child.id();
        tracing::debug!(program = %program, pid, argc = spec.args.len(), "handed off");
        // Reap it if it ends while this process lives; a failed thread only leaves a
        // zombie until this process exits.
        let _ = std::thread::Builder::new()
            .name(format!("loci-sup-reap-{pid}"))
            .spawn(move || {
                let _ = child.wait();
            });
        Ok(pid)
    }
}
