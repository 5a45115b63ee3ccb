//! The supervision loop of one child: a single thread that polls the child's
//! pipes, its exit, stop requests and its deadlines, so output is drained
//! while the child runs (no pipe deadlock whatever it prints) and every
//! signal to the group is sent from one place.

use std::fs::File;
use std::io::{self, Read, Write};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::capture::CaptureBuf;
use crate::outcome::{Exit, Outcome};
use crate::run::{Run, StopRequest};
use crate::spec::Sink;
use crate::stdin::StdinPipe;
use crate::sys::{self, pollfd};

/// How long output is still drained after the leader exited and its group was
/// swept, at least. Only a descendant that escaped the group (its own
/// `setsid`) can hold a pipe open that long; then the pipe is abandoned.
const MIN_DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);

/// Reads per stream per poll round: enough for throughput, small enough that
/// one chatty stream cannot starve the other.
const READS_PER_ROUND: usize = 8;

const READ_BUF: usize = 128 * 1024;
const WRITE_CHUNK: usize = 64 * 1024;

/// The child's file descriptors, owned by the supervision thread.
pub(crate) struct Io {
    pub(crate) stdin: Option<(File, Vec<u8>)>,
    /// A streamed stdin ([`crate::SpawnSpec::stdin_stream`]): closed here
    /// when the run is stopped or the child exits.
    pub(crate) stdin_stream: Option<Arc<StdinPipe>>,
    pub(crate) stdout: File,
    pub(crate) stderr: File,
    /// Readable once the child has exited (a pidfd, or an eventfd written by
    /// a fallback waiter thread). The child is still unreaped then.
    pub(crate) exited: File,
}

/// Limits of one run.
pub(crate) struct Limits {
    pub(crate) budget: Duration,
    pub(crate) grace: Duration,
    pub(crate) capture_cap: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Why {
    Budget,
    Request(StopRequest),
    Sink,
}

struct Stream {
    file: Option<File>,
    buf: CaptureBuf,
    sink: Option<Sink>,
    sink_broke: bool,
}

impl Stream {
    fn new(file: File, cap: usize, sink: Option<Sink>) -> Self {
        Stream {
            file: Some(file),
            buf: CaptureBuf::new(cap),
            sink,
            sink_broke: false,
        }
    }

    /// Reads what is available; returns true if a sink asked to stop.
    fn drain(&mut self, scratch: &mut [u8]) -> bool {
        for _ in 0..READS_PER_ROUND {
            let Some(f) = &mut self.file else { break };
            match f.read(scratch) {
                Ok(0) => self.file = None,
                Ok(n) => {
                    let chunk = &scratch[..n];
                    self.buf.push(chunk);
                    if let Some(sink) = &mut self.sink
                        && !self.sink_broke
                        && sink(chunk) == ControlFlow::Break(())
                    {
                        self.sink_broke = true;
                        return true;
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => self.file = None,
            }
            break;
        }
        false
    }
}

struct Feeder {
    file: File,
    data: Vec<u8>,
    pos: usize,
}

impl Feeder {
    /// Writes what the pipe accepts; returns false once stdin is done.
    fn feed(&mut self) -> bool {
        while self.pos < self.data.len() {
            let end = (self.pos + WRITE_CHUNK).min(self.data.len());
            match self.file.write(&self.data[self.pos..end]) {
                Ok(n) => self.pos += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(_) => return false, // EPIPE: the child closed stdin
            }
        }
        false
    }
}

fn timeout_ms(deadline: Option<Instant>, now: Instant) -> i32 {
    match deadline {
        None => -1,
        Some(d) => {
            let ns = d.saturating_duration_since(now).as_nanos();
            ns.div_ceil(1_000_000).min(i32::MAX as u128) as i32
        }
    }
}

/// Supervises the child of `run` until it has exited and its output is
/// drained; returns the outcome (not yet published).
pub(crate) fn supervise(
    run: &Run,
    io: Io,
    limits: Limits,
    sinks: (Option<Sink>, Option<Sink>),
    started: Instant,
) -> Outcome {
    sys::block_sigpipe_in_this_thread();
    let pid = run.pid;
    let budget_deadline = started.checked_add(limits.budget);
    let mut out = Stream::new(io.stdout, limits.capture_cap, sinks.0);
    let mut err = Stream::new(io.stderr, limits.capture_cap, sinks.1);
    let mut feeder = io.stdin.map(|(file, data)| Feeder { file, data, pos: 0 });
    let mut stdin_written = 0u64;
    let exited_fd = io.exited;
    let stream = io.stdin_stream;
    let mut exit: Option<Exit> = None;
    let mut why: Option<Why> = None;
    let mut term_at: Option<Instant> = None;
    let mut killed = false;
    let mut drain_deadline: Option<Instant> = None;
    let mut scratch = vec![0u8; READ_BUF];
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(5);

    if let Some(f) = &mut feeder
        && !f.feed()
    {
        stdin_written = f.pos as u64;
        feeder = None;
    }

    loop {
        if exit.is_some() && out.file.is_none() && err.file.is_none() {
            break;
        }
        let now = Instant::now();
        if why.is_none() {
            if let Some(r) = run.stop_requested() {
                why = Some(Why::Request(r));
            } else if budget_deadline.is_some_and(|d| now >= d) {
                why = Some(Why::Budget);
            }
        }
        if exit.is_none() {
            if why.is_some() && term_at.is_none() {
                if let Some(s) = &stream {
                    s.close();
                }
                sys::kill_group(pid, libc::SIGTERM);
                term_at = Some(now);
            }
            if let Some(t) = term_at
                && !killed
                && now >= t + limits.grace
            {
                sys::kill_group(pid, libc::SIGKILL);
                killed = true;
            }
        } else if drain_deadline.is_some_and(|d| now >= d) {
            tracing::warn!(
                pid,
                "output pipe still open after the child's group ended; a descendant escaped its \
                 process group; abandoning the pipe"
            );
            break;
        }

        let next = [
            budget_deadline.filter(|_| why.is_none() && exit.is_none()),
            term_at
                .map(|t| t + limits.grace)
                .filter(|_| exit.is_none() && !killed),
            drain_deadline.filter(|_| exit.is_some()),
        ]
        .into_iter()
        .flatten()
        .min();

        fds.clear();
        fds.push(pollfd(&run.wake, libc::POLLIN));
        let exited_ix = exit.is_none().then(|| {
            fds.push(pollfd(&exited_fd, libc::POLLIN));
            fds.len() - 1
        });
        let out_ix = out.file.as_ref().map(|f| {
            fds.push(pollfd(f, libc::POLLIN));
            fds.len() - 1
        });
        let err_ix = err.file.as_ref().map(|f| {
            fds.push(pollfd(f, libc::POLLIN));
            fds.len() - 1
        });
        let in_ix = feeder.as_ref().map(|f| {
            fds.push(pollfd(&f.file, libc::POLLOUT));
            fds.len() - 1
        });

        if sys::poll(&mut fds, timeout_ms(next, now)).is_err() {
            // poll(2) only fails on bad arguments or ENOMEM; do not spin.
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let ready = |ix: Option<usize>| ix.is_some_and(|i| fds[i].revents != 0);

        if fds[0].revents != 0 {
            let mut b = [0u8; 8];
            let _ = (&run.wake).read(&mut b);
        }
        if ready(in_ix)
            && let Some(f) = &mut feeder
            && !f.feed()
        {
            stdin_written = f.pos as u64;
            feeder = None;
        }
        if ready(out_ix) && out.drain(&mut scratch) && why.is_none() {
            why = Some(Why::Sink);
        }
        if ready(err_ix) && err.drain(&mut scratch) && why.is_none() {
            why = Some(Why::Sink);
        }
        if ready(exited_ix) {
            // The leader is a zombie: its pid, and so its group id, cannot be
            // reused yet. Sweep whatever is left of the group, then reap.
            sys::kill_group(pid, libc::SIGKILL);
            exit = Some(sys::reap(pid));
            if let Some(s) = &stream {
                s.close();
            }
            if let Some(f) = feeder.take() {
                stdin_written = f.pos as u64;
            }
            drain_deadline = Some(Instant::now() + limits.grace.max(MIN_DRAIN_AFTER_EXIT));
        }
    }

    if let Some(s) = &stream {
        s.close();
        stdin_written = s.written();
    }
    let stopped = term_at.is_some();
    Outcome {
        pid,
        exit: exit.unwrap_or(Exit::Unknown),
        elapsed: started.elapsed(),
        stdout: out.buf.finish(),
        stderr: err.buf.finish(),
        timed_out: stopped && why == Some(Why::Budget),
        cancelled: stopped && matches!(why, Some(Why::Request(_) | Why::Sink)),
        killed_after_grace: killed,
        stdin_bytes_written: stdin_written,
    }
}
