//! One creation of a folder at a time: an exclusive `flock` on the folder's own open
//! handle, held until the handle closes. Two creates of one workspace (two requests,
//! or the server and the CLI) otherwise both find no `.git` and run git into the same
//! folder at once, which breaks one of them; with the lock the second waits, then finds
//! the repository made and the registry confirmed. The wait is bounded by the holder's
//! own git budget, and the kernel drops the lock if the holder dies.

use std::os::fd::AsFd;

use rustix::fs::{FlockOperation, flock};
use rustix::io::Errno;

/// Takes the exclusive lock of `dir`'s open file description, waiting for a holder
/// (released when `dir` is closed).
pub(crate) fn hold(dir: &impl AsFd) -> std::io::Result<()> {
    loop {
        match flock(dir, FlockOperation::LockExclusive) {
            Ok(()) => return Ok(()),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}
