//! Thin wrappers over the Linux calls the supervisor needs.
//!
//! Every `unsafe` block of the crate lives here, each next to the reason it is
//! sound, so the rest of the crate is safe code over `OwnedFd`/`File`.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::outcome::Exit;

/// Makes the child the leader of a new session (and so of a new process
/// group whose id is its pid) before it execs.
pub(crate) fn new_session_on_exec(cmd: &mut Command) {
    // SAFETY: the closure runs between fork and exec and calls only setsid(2),
    // which is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes the child receive SIGKILL when the thread that forks it exits (see
/// [`crate::SpawnSpec::die_with_parent`]); `parent` is this process's pid, so
/// a child whose parent died before the signal was set ends at once.
pub(crate) fn parent_death_signal_on_exec(cmd: &mut Command, parent: u32) {
    let parent = parent as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only prctl(2),
    // getppid(2) and _exit(2), which are async-signal-safe and touch no
    // memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) == -1
            {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
}

/// Sends `sig` to every process of group `pgid`. A group that is already
/// empty is not an error.
///
/// Callers only pass the pgid of a child whose leader has not been reaped yet,
/// so the id cannot have been recycled for somebody else's group.
pub(crate) fn kill_group(pgid: u32, sig: i32) {
    let Ok(pgid) = i32::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return; // never signal "every process" or init's group
    }
    // SAFETY: kill(2) with a negative pid only sends a signal; no memory involved.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// A file descriptor that becomes readable when process `pid` exits.
pub(crate) fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this fd to us; nobody else owns it.
    // pidfds are always close-on-exec.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Blocks until `pid` has exited, leaving it unreaped (a zombie), so its pid
/// and process-group id stay reserved until [`reap`]. Fallback for kernels
/// without `pidfd_open`.
pub(crate) fn wait_exited_nowait(pid: u32) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data; waitid writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a local siginfo_t.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Collects the exit status of `pid`, which must have exited already.
pub(crate) fn reap(pid: u32) -> Exit {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: valid pointer to a local int.
        let r = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        if r == pid as libc::pid_t {
            if libc::WIFEXITED(status) {
                return Exit::Code(libc::WEXITSTATUS(status));
            }
            if libc::WIFSIGNALED(status) {
                return Exit::Signal(libc::WTERMSIG(status));
            }
            return Exit::Unknown;
        }
        if r == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return Exit::Unknown;
    }
}

/// A close-on-exec, non-blocking eventfd: a wake-up counter that, unlike a
/// pipe, can be written after its reader is gone without raising SIGPIPE.
pub(crate) fn eventfd() -> io::Result<File> {
    // SAFETY: eventfd(2) takes an initial value and flags.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fd was just created and is owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Blocks SIGPIPE in the calling thread, so writing to a child's closed stdin
/// returns `EPIPE` instead of killing loci, whatever the process-wide
/// disposition is.
pub(crate) fn block_sigpipe_in_this_thread() {
    // SAFETY: plain signal-mask calls on a local sigset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Writes `buf` to `f` once (a partial write is possible) with SIGPIPE
/// blocked in this thread, so a reader that is gone gives `EPIPE` instead of
/// a signal that would end loci (the CLI restores SIGPIPE's default action).
/// A SIGPIPE raised by this write is consumed before the mask is restored.
pub(crate) fn write_no_sigpipe(mut f: &File, buf: &[u8]) -> io::Result<usize> {
    use std::io::Write;
    // SAFETY: signal-mask calls on local sigsets, in this thread only;
    // sigtimedwait with a zero timeout only dequeues a pending SIGPIPE.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        let result = f.write(buf);
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

/// A `pollfd` for `fd` waiting for `events`.
pub(crate) fn pollfd(fd: &impl AsRawFd, events: i16) -> libc::pollfd {
    libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    }
}

/// Puts our end of a pipe in non-blocking mode (the child's end is a separate
/// open file description and keeps blocking semantics).
pub(crate) fn set_nonblocking(fd: &impl AsRawFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on an fd we own; F_GETFL/F_SETFL take no pointers.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags == -1 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Best effort: grow a pipe to 1 MiB so a chatty child needs fewer wake-ups.
pub(crate) fn grow_pipe(fd: &impl AsRawFd) {
    // SAFETY: F_SETPIPE_SZ takes an int; failure is harmless and ignored.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
    }
}

/// poll(2) over `fds`; an interrupted call reports no events.
pub(crate) fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> io::Result<usize> {
    // SAFETY: the slice is valid for `len` pollfd structures.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if r == -1 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

/// `sysconf(_SC_ARG_MAX)`: the kernel's limit on argv + envp for execve.
pub(crate) fn arg_max() -> usize {
    // SAFETY: sysconf takes an int and returns a long.
    let v = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    if v <= 0 { 131_072 } else { v as usize }
}

/// Registers `f` to run when the process exits normally (`exit(3)` or a
/// return from `main`).
pub(crate) fn at_exit(f: extern "C" fn()) {
    // SAFETY: atexit only stores the function pointer.
    unsafe {
        libc::atexit(f);
    }
}

/// Restores the default action of `sig` and raises it, so the process ends
/// the way it would have without our handler (status 128 + sig for a shell).
pub(crate) fn reraise_default(sig: i32) -> ! {
    // SAFETY: plain signal-disposition calls on a local sigset.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
        // Only reached if the signal did not end us (it always does for
        // INT/TERM/HUP with the default action).
        libc::_exit(128 + sig)
    }
}
