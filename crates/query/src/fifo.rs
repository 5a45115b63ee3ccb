//! The request pipe to a worker. The supervisor gives a child a fixed stdin
//! payload (then closes it), not a stream, so requests travel through a FIFO
//! in a private (0700) temp directory that the supervisor removes when the
//! worker ends; answers come back on the child's stdout, which the supervisor
//! drains and hands over chunk by chunk.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Creates a FIFO at `path` readable and writable by the owner only.
pub(crate) fn make(path: &Path) -> io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in the FIFO path"))?;
    // SAFETY: `c` is a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Opens the write end once the worker has opened the read end. A
/// non-blocking open fails with ENXIO until then; `alive` says whether to
/// keep trying. The returned file is in blocking mode.
pub(crate) fn open_writer(
    path: &Path,
    until: Instant,
    alive: impl Fn() -> bool,
) -> io::Result<File> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in the FIFO path"))?;
    loop {
        // SAFETY: valid path; flags are plain open(2) flags.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd >= 0 {
            // SAFETY: `fd` was just opened and is owned by nobody else.
            let file = unsafe { File::from_raw_fd(fd) };
            set_blocking(&file)?;
            return Ok(file);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ENXIO) {
            return Err(err);
        }
        if !alive() {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the worker exited before opening its request pipe",
            ));
        }
        if Instant::now() >= until {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the worker did not open its request pipe in time",
            ));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn set_blocking(f: &File) -> io::Result<()> {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Writes all of `buf` without letting a dead reader raise SIGPIPE (the CLI
/// restores SIGPIPE's default action, which would end the whole process):
/// SIGPIPE is blocked around the write, a pending one is consumed, and the
/// caller sees `BrokenPipe` instead.
pub(crate) fn write_all_no_sigpipe(mut f: &File, buf: &[u8]) -> io::Result<()> {
    // SAFETY: signal-mask calls on local sigsets, in this thread only.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        let result = f.write_all(buf);
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::BrokenPipe) {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero);
        }
        if libc::sigismember(&old, libc::SIGPIPE) == 0 {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        result
    }
}
