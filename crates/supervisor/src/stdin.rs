//! A child's stdin as a stream: [`StdinWriter`], what
//! [`SpawnSpec::stdin_stream`](crate::SpawnSpec::stdin_stream) gives a caller.
//!
//! The caller writes on its own thread while the supervision thread drains
//! stdout and stderr, so a child that answers every line it reads can never
//! deadlock the exchange: a full stdin pipe only makes the writer wait, the
//! child's output keeps flowing. Our end of the pipe is non-blocking; a write
//! that would block polls the pipe together with a "closed" eventfd, which
//! the supervision thread signals when the run is stopped (cancel, budget,
//! teardown) or the child exits. So a writer is never stuck on a child that
//! stopped reading, and a write to a dead child fails with `BrokenPipe`
//! instead of raising SIGPIPE.

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::poison::lock;
use crate::sys;

/// Our end of a streamed stdin pipe, shared by the writer and the
/// supervision thread (which closes it when the run stops or ends).
pub(crate) struct StdinPipe {
    pid: u32,
    /// `None` once closed. Held by a writer across its wait for room, which
    /// is why [`StdinPipe::close`] signals `closed_evt` before taking it.
    file: Mutex<Option<File>>,
    closed: AtomicBool,
    /// Readable from the moment the pipe is closed (never drained).
    closed_evt: File,
    taken: AtomicBool,
    written: AtomicU64,
}

impl StdinPipe {
    pub(crate) fn new(pid: u32, file: File) -> io::Result<StdinPipe> {
        sys::set_nonblocking(&file)?;
        sys::grow_pipe(&file);
        Ok(StdinPipe {
            pid,
            file: Mutex::new(Some(file)),
            closed: AtomicBool::new(false),
            closed_evt: sys::eventfd()?,
            taken: AtomicBool::new(false),
            written: AtomicU64::new(0),
        })
    }

    /// Closes our end (the child reads EOF) and wakes a writer waiting for
    /// room, which then fails with `BrokenPipe`. Idempotent.
    pub(crate) fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            let _ = (&self.closed_evt).write(&1u64.to_ne_bytes());
        }
        drop(lock(&self.file).take());
    }

    /// Bytes the child's stdin pipe accepted so far.
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::SeqCst)
    }

    /// The writer, the first time only.
    pub(crate) fn take_writer(self: &Arc<Self>) -> Option<StdinWriter> {
        (!self.taken.swap(true, Ordering::SeqCst)).then(|| StdinWriter { pipe: self.clone() })
    }

    fn closed_error(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::BrokenPipe,
            format!(
                "stdin of child pid {} is closed (the child exited, was stopped, or the writer \
                 was closed)",
                self.pid
            ),
        )
    }

    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let guard = lock(&self.file);
        loop {
            if self.closed.load(Ordering::SeqCst) {
                return Err(self.closed_error());
            }
            let Some(f) = guard.as_ref() else {
                return Err(self.closed_error());
            };
            match sys::write_no_sigpipe(f, buf) {
                Ok(n) => {
                    self.written.fetch_add(n as u64, Ordering::SeqCst);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // Wait for room, or for the run to close the pipe.
                    let mut fds = [
                        sys::pollfd(f, libc::POLLOUT),
                        sys::pollfd(&self.closed_evt, libc::POLLIN),
                    ];
                    sys::poll(&mut fds, -1)?;
                }
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    return Err(io::Error::new(
                        io::ErrorKind::BrokenPipe,
                        format!("child pid {} closed its stdin: {e}", self.pid),
                    ));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// The write end of a child's stdin, from [`Handle::take_stdin`] on a run
/// spawned with [`SpawnSpec::stdin_stream`].
///
/// [`Handle::take_stdin`]: crate::Handle::take_stdin
/// [`SpawnSpec::stdin_stream`]: crate::SpawnSpec::stdin_stream
///
/// - **Owned, taken once**: a run has exactly one writer, so two callers'
///   `write_all`s can never interleave inside each other. To share it, wrap
///   it in a `Mutex` and write whole messages under the lock.
/// - **Blocking, never stuck**: a write waits while the pipe is full (the
///   child is busy), and returns `BrokenPipe` as soon as the run is stopped
///   (cancel, budget, teardown) or the child exits, even mid-wait.
/// - **No SIGPIPE**: a write to a child that closed its stdin or died fails
///   with `BrokenPipe`; the signal is blocked around the write and consumed,
///   so it cannot end loci whatever SIGPIPE's disposition is.
/// - **Closing**: dropping the writer (or [`StdinWriter::close`]) closes the
///   pipe, and the child reads end-of-file. The supervisor also closes it
///   when the run stops or ends.
///
/// Do not write from a [`Sink`](crate::Sink): sinks run on the supervision
/// thread, which must keep draining the child's output for a blocked write
/// to make progress.
pub struct StdinWriter {
    pipe: Arc<StdinPipe>,
}

impl StdinWriter {
    /// Closes the child's stdin now (it reads end-of-file); same as drop.
    pub fn close(self) {}

    /// True once the pipe is closed: by the supervisor (the run was stopped
    /// or the child exited). Writes then fail with `BrokenPipe`.
    pub fn is_closed(&self) -> bool {
        self.pipe.closed.load(Ordering::SeqCst)
    }

    /// Bytes the child's stdin pipe has accepted so far.
    pub fn bytes_written(&self) -> u64 {
        self.pipe.written()
    }
}

impl Write for StdinWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pipe.write(buf)
    }

    /// Writes go straight to the pipe; nothing is buffered here.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for StdinWriter {
    fn drop(&mut self) {
        // Close our end only; the run's own reference stays for `written`.
        drop(lock(&self.pipe.file).take());
    }
}

impl std::fmt::Debug for StdinWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdinWriter")
            .field("pid", &self.pipe.pid)
            .field("closed", &self.is_closed())
            .field("bytes_written", &self.bytes_written())
            .finish()
    }
}
