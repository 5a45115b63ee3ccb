//! What a finished run reports.

use std::time::Duration;

use crate::capture::Capture;

/// How a reaped child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exit {
    /// The child called `exit(code)` (or returned from `main`).
    Code(i32),
    /// The child was terminated by this signal number.
    Signal(i32),
    /// The status could not be collected (someone else reaped the child, for
    /// example because the embedding program set `SIGCHLD` to `SIG_IGN`).
    Unknown,
}

impl Exit {
    /// The status a POSIX shell would report: the code, or 128 + signal.
    pub fn shell_status(self) -> Option<i32> {
        match self {
            Exit::Code(c) => Some(c),
            Exit::Signal(s) => Some(128 + s),
            Exit::Unknown => None,
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
            Exit::Unknown => f.write_str("unknown exit status"),
        }
    }
}

/// The result of one run, shared by every handle that joined it.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The child's pid (also its process-group and session id).
    pub pid: u32,
    /// How the child ended.
    pub exit: Exit,
    /// Time from spawn to the end of the run (output drained).
    pub elapsed: Duration,
    /// What was kept of stdout, with the exact byte count.
    pub stdout: Capture,
    /// What was kept of stderr, with the exact byte count.
    pub stderr: Capture,
    /// The time budget expired and the supervisor stopped the child.
    pub timed_out: bool,
    /// The run was stopped by `cancel()`, a sink, or teardown.
    pub cancelled: bool,
    /// SIGTERM was not enough: the group was SIGKILLed after the grace.
    pub killed_after_grace: bool,
    /// Bytes of the stdin payload (or of the streamed stdin) the child's
    /// pipe accepted before it closed stdin or exited.
    pub stdin_bytes_written: u64,
}

impl Outcome {
    /// Exit code 0, not stopped by loci.
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0) && !self.timed_out && !self.cancelled
    }
}
