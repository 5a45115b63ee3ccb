//! The process-wide spawner thread: forks every child whose spec asks to die
//! with its parent.
//!
//! Linux delivers the parent-death signal (`PR_SET_PDEATHSIG`) when the
//! *thread* that forked the child exits, not when the process does. Callers
//! spawn from any thread, short-lived ones included (a request thread that
//! restarts the query worker), so those children are forked here instead,
//! on one thread that is started on first use and never ends: the signal
//! then fires only when loci itself dies.

use std::io;
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Sender, SyncSender};

type Job = (Command, SyncSender<io::Result<Child>>);

static SPAWNER: OnceLock<Option<Sender<Job>>> = OnceLock::new();

fn start() -> Option<Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("loci-sup-spawner".into())
        .spawn(move || {
            for (mut cmd, reply) in rx {
                let _ = reply.send(cmd.spawn());
            }
        })
        .ok()?;
    Some(tx)
}

/// Runs `cmd.spawn()` on the spawner thread and returns its result.
pub(crate) fn spawn(cmd: Command) -> io::Result<Child> {
    let Some(tx) = SPAWNER.get_or_init(start) else {
        return Err(io::Error::other("the spawner thread could not be started"));
    };
    let (reply_tx, reply) = mpsc::sync_channel(1);
    tx.send((cmd, reply_tx))
        .map_err(|_| io::Error::other("the spawner thread has ended"))?;
    reply
        .recv()
        .map_err(|_| io::Error::other("the spawner thread has ended"))?
}
