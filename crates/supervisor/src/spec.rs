//! What to run and under which limits: the [`SpawnSpec`] builder.

use std::any::Any;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::env::EnvPolicy;

/// Default time budget: seed 004's maintenance budget (600 000 ms). Every
/// child has one; long-lived children (a watcher, a loopback server) pass their
/// longest acceptable lifetime and rely on teardown for the normal end.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(600);

/// Default per-stream capture cap: 1 MiB (512 KiB head + 512 KiB tail).
pub const DEFAULT_CAPTURE_CAP: usize = 1 << 20;

/// Default time between SIGTERM and SIGKILL.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(2);

/// A callback that sees every chunk of a stream as it is read, before the
/// capture cap applies. Returning `ControlFlow::Break(())` stops the run (the
/// child's group is terminated and the outcome says `cancelled`). It runs on
/// the supervision thread: it must not block.
pub type Sink = Box<dyn FnMut(&[u8]) -> ControlFlow<()> + Send + 'static>;

/// What the child's stdin is.
pub(crate) enum StdinMode {
    /// `/dev/null`.
    Null,
    /// A fixed payload written by the supervision thread, then closed.
    Bytes(Vec<u8>),
    /// A pipe the caller writes through a [`crate::StdinWriter`].
    Stream,
}

/// Everything the supervisor needs to start one child.
///
/// Built by chaining; every limit has a documented default so a call site
/// cannot forget one (DESIGN.md invariant 3: every child has a budget and a
/// bounded capture).
pub struct SpawnSpec {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) stdin: StdinMode,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: EnvPolicy,
    pub(crate) budget: Duration,
    pub(crate) capture_cap: usize,
    pub(crate) kill_grace: Duration,
    pub(crate) key: Option<String>,
    pub(crate) stdout_sink: Option<Sink>,
    pub(crate) stderr_sink: Option<Sink>,
    pub(crate) held: Vec<Box<dyn Any + Send>>,
    pub(crate) die_with_parent: bool,
}

impl SpawnSpec {
    /// A spec for `program` (a path, or a bare name looked up in `PATH`) with
    /// no arguments, no stdin, the parent's cwd, [`EnvPolicy::loci_child`],
    /// [`DEFAULT_BUDGET`], [`DEFAULT_CAPTURE_CAP`], [`DEFAULT_KILL_GRACE`],
    /// and [`SpawnSpec::die_with_parent`] on.
    pub fn new(program: impl Into<OsString>) -> Self {
        SpawnSpec {
            program: program.into(),
            args: Vec::new(),
            stdin: StdinMode::Null,
            cwd: None,
            env: EnvPolicy::loci_child(),
            budget: DEFAULT_BUDGET,
            capture_cap: DEFAULT_CAPTURE_CAP,
            kill_grace: DEFAULT_KILL_GRACE,
            key: None,
            stdout_sink: None,
            stderr_sink: None,
            held: Vec::new(),
            die_with_parent: true,
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Bytes written to the child's stdin while its output is drained, then
    /// stdin is closed. Any size: large payloads (prompts) belong here, never
    /// in argv. Without a payload (or a stream) the child's stdin is
    /// `/dev/null`. Replaces an earlier [`SpawnSpec::stdin_stream`].
    pub fn stdin_bytes(mut self, payload: impl Into<Vec<u8>>) -> Self {
        self.stdin = StdinMode::Bytes(payload.into());
        self
    }

    /// Gives the child a stdin pipe that stays open for the caller to write
    /// to while the run lasts: take the writer once with
    /// [`Handle::take_stdin`](crate::Handle::take_stdin). For children that
    /// speak a request/response protocol on stdin/stdout (the query worker).
    /// Writes happen on the caller's thread, concurrently with the draining
    /// of stdout and stderr, so neither side can deadlock the other. The
    /// pipe is closed when the writer is dropped (the child reads EOF), and
    /// by the supervisor when the run is stopped or the child exits (a
    /// pending or later write fails with `BrokenPipe`, never SIGPIPE).
    /// Replaces an earlier [`SpawnSpec::stdin_bytes`].
    pub fn stdin_stream(mut self) -> Self {
        self.stdin = StdinMode::Stream;
        self
    }

    /// The child's working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The child's environment policy.
    pub fn env(mut self, policy: EnvPolicy) -> Self {
        self.env = policy;
        self
    }

    /// Wall-clock budget from spawn; on expiry the group gets SIGTERM, then
    /// SIGKILL after the kill grace, and the outcome says `timed_out`.
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Bytes kept per stream (half head, half tail); the rest is counted.
    pub fn capture_cap(mut self, bytes: usize) -> Self {
        self.capture_cap = bytes;
        self
    }

    /// Time between SIGTERM and SIGKILL when a run is stopped.
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// Single-flight key: while a run with this key is in flight on the same
    /// supervisor, spawning again joins it instead of starting a second
    /// process (seed 004: no two maintenance runs for one workspace at once).
    pub fn single_flight(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Streams stdout chunks to `sink` as they arrive (see [`Sink`]); the
    /// capture still keeps head and tail. Joined single-flight callers do not
    /// get a sink of their own.
    pub fn on_stdout(
        mut self,
        sink: impl FnMut(&[u8]) -> ControlFlow<()> + Send + 'static,
    ) -> Self {
        self.stdout_sink = Some(Box::new(sink));
        self
    }

    /// Streams stderr chunks to `sink` as they arrive.
    pub fn on_stderr(
        mut self,
        sink: impl FnMut(&[u8]) -> ControlFlow<()> + Send + 'static,
    ) -> Self {
        self.stderr_sink = Some(Box::new(sink));
        self
    }

    /// Keeps `value` alive until the run ends, then drops it before the
    /// outcome is published. Used for temp files and dirs that belong to one
    /// spawn (the empty MCP config, an isolated config dir), so they are gone
    /// by the time `wait` returns.
    pub fn hold_until_exit(mut self, value: impl Any + Send) -> Self {
        self.held.push(Box::new(value));
        self
    }

    /// Whether the child is killed (SIGKILL) when loci dies, even by SIGKILL,
    /// which no teardown path can catch: on by default, because every child
    /// is torn down when loci exits anyway, and one that outlives a killed
    /// loci (a query worker, a watcher) holds files and CPU for nobody.
    ///
    /// Linux's parent-death signal (`PR_SET_PDEATHSIG`) is set in the child
    /// between fork and exec. It fires when the *thread* that forked exits,
    /// not the process, so these children are forked by one process-wide
    /// spawner thread that lives as long as loci; and the child checks its
    /// parent right after setting the signal, so a loci that died during
    /// the fork is not missed. It reaches the child only, not processes the
    /// child starts (they are in its group, which teardown signals).
    pub fn die_with_parent(mut self, on: bool) -> Self {
        self.die_with_parent = on;
        self
    }

    /// The program to run.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments (without the program).
    pub fn get_args(&self) -> &[OsString] {
        &self.args
    }

    /// The working directory, if set.
    pub fn get_cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// Total argv bytes as execve counts them (one NUL per element).
    pub fn argv_bytes(&self) -> usize {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.len() + 1)
            .sum()
    }
}

impl fmt::Debug for SpawnSpec {
    /// Arguments, stdin and environment values can carry secrets, so only
    /// their sizes and the variable names appear.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpawnSpec")
            .field("program", &self.program)
            .field("args", &format_args!("<{} args>", self.args.len()))
            .field("argv_bytes", &self.argv_bytes())
            .field(
                "stdin",
                &match &self.stdin {
                    StdinMode::Null => "null".to_string(),
                    StdinMode::Bytes(b) => format!("<{} bytes>", b.len()),
                    StdinMode::Stream => "stream".to_string(),
                },
            )
            .field("cwd", &self.cwd)
            .field("env", &self.env)
            .field("budget", &self.budget)
            .field("capture_cap", &self.capture_cap)
            .field("kill_grace", &self.kill_grace)
            .field("key", &self.key)
            .field("die_with_parent", &self.die_with_parent)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_argument_or_stdin_content() {
        let spec = SpawnSpec::new("tool")
            .arg("--token=sk-live-123")
            .stdin_bytes("prompt with secret")
            .env(EnvPolicy::loci_child().pin("KEY", "v@lue"));
        let s = format!("{spec:?}");
        for secret in ["sk-live-123", "prompt with secret", "v@lue"] {
            assert!(!s.contains(secret), "{s}");
        }
        assert!(s.contains("tool") && s.contains("KEY"));
    }

    #[test]
    fn argv_bytes_counts_one_nul_per_element() {
        assert_eq!(
            SpawnSpec::new("ab").args(["c", "de"]).argv_bytes(),
            3 + 2 + 3
        );
    }
}
