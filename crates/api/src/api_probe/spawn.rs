//! Starting a loci server for the probe when none answers: `loci serve --host
//! 127.0.0.1 --port P` through the supervisor (its own process group, bounded output,
//! in the teardown registry, SIGKILLed if this process dies), on the configured port
//! first, then on random ephemeral ports while it exits with `bind_conflict`, polling
//! its health, all before the probe's one deadline. The key travels in the child's
//! environment, never in its arguments.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::time::Duration;

use loci_supervisor::{EnvPolicy, Exit, Handle, SpawnSpec, Supervisor};

use super::client::{Client, Deadline};
use crate::error::ErrorKind;

/// How often a starting server's health is polled.
const POLL: Duration = Duration::from_millis(5);
/// SIGTERM, then SIGKILL after this: a probe's server has nothing in flight to drain.
const KILL_GRACE: Duration = Duration::from_millis(100);
/// Output kept from a spawned server (its error, when it fails to start).
const CAPTURE: usize = 16 << 10;
/// Attempts on new ports after bind conflicts.
const MAX_ATTEMPTS: usize = 8;

/// A healthy server the probe started; stopped and reaped when dropped.
pub struct SpawnedServer {
    handle: Handle,
    /// The port it listens on.
    pub port: u16,
    _sup: Supervisor,
}

impl SpawnedServer {
    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.handle.pid()
    }
}

impl Drop for SpawnedServer {
    fn drop(&mut self) {
        stop(&self.handle);
    }
}

fn stop(handle: &Handle) {
    handle.cancel();
    let _ = handle.wait_timeout(KILL_GRACE + Duration::from_millis(200));
}

/// The key the spawned server accepts: the user's `LOCI_API_KEY`, which it inherits
/// untouched, or a fresh ephemeral one pinned into its environment.
pub enum ServerKey<'a> {
    /// The user's key, already in the environment the child inherits.
    Inherited,
    /// A key made for this probe.
    Ephemeral(&'a str),
}

/// Starts a server and waits until it is healthy, or says why none became so before
/// the deadline. `first_port` is tried first; a bind conflict (exit 3) moves on to a
/// random ephemeral port.
pub fn start(
    exe: &Path,
    first_port: u16,
    key: ServerKey<'_>,
    client: &Client,
    deadline: &Deadline,
) -> Result<SpawnedServer, String> {
    let sup = Supervisor::new();
    let conflict = Exit::Code(i32::from(ErrorKind::BindConflict.exit().code()));
    let mut port = first_port;
    let mut tried = Vec::new();
    for _ in 0..MAX_ATTEMPTS {
        if deadline.expired() {
            break;
        }
        let mut env = EnvPolicy::loci_child();
        if let ServerKey::Ephemeral(k) = key {
            env = env.pin(super::KEY_ENV, k);
        }
        let spec = SpawnSpec::new(exe.as_os_str())
            .args(["serve", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .env(env)
            .budget(deadline.remaining())
            .kill_grace(KILL_GRACE)
            .capture_cap(CAPTURE);
        let handle = sup
            .spawn(spec)
            .map_err(|e| format!("cannot start `{} serve`: {e}", exe.display()))?;
        loop {
            if let Some(outcome) = handle.try_outcome() {
                if outcome.timed_out || deadline.expired() {
                    // Its budget was the time left: the deadline stopped it.
                    tried.push(format!("{port} not healthy in time"));
                    return Err(exhausted(deadline, &tried));
                }
                if outcome.exit == conflict {
                    tried.push(format!("{port} in use"));
                    break;
                }
                let stderr = outcome.stderr.to_string_lossy();
                let last = stderr.lines().last().unwrap_or("").trim().to_string();
                return Err(format!(
                    "the loci server started on port {port} ended ({}) before it was healthy{}",
                    outcome.exit,
                    if last.is_empty() {
                        String::new()
                    } else {
                        format!(": {last}")
                    }
                ));
            }
            if deadline.expired() {
                stop(&handle);
                tried.push(format!("{port} not healthy in time"));
                return Err(exhausted(deadline, &tried));
            }
            if client.healthy(port, deadline).is_ok() {
                return Ok(SpawnedServer {
                    handle,
                    port,
                    _sup: sup,
                });
            }
            std::thread::sleep(POLL.min(deadline.remaining()));
        }
        port = ephemeral_port().map_err(|e| format!("cannot pick a free port: {e}"))?;
    }
    Err(exhausted(deadline, &tried))
}

fn exhausted(deadline: &Deadline, tried: &[String]) -> String {
    format!(
        "no loci server it started became healthy within api.probeDeadlineMs (stopped after {} ms; ports: {})",
        deadline.elapsed().as_millis(),
        if tried.is_empty() {
            "none tried".to_string()
        } else {
            tried.join(", ")
        }
    )
}

/// A port the kernel considers free right now, from its ephemeral range (another
/// process may take it before the server binds it: that is a bind conflict, and the
/// next attempt picks again).
fn ephemeral_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}
