//! The harness process of the teardown tests: a separate process that owns a
//! `Supervisor`, so tests can signal it, let it exit, or control its
//! environment.
//!
//! It is the teardown test binary itself, re-executed to run only its
//! `harness_process` test with [`MODE_VAR`] set (see `tests/teardown.rs`).
//! Not a `[[bin]]` target: a second binary in the workspace would make a bare
//! `cargo run` at the root ambiguous for everyone; not an example: cargo gives
//! tests no path to examples and `cargo test --test teardown` does not build
//! them. The test binary is always built and its path is `current_exe()`.
//!
//! Modes (the value of [`MODE_VAR`]):
//! - `hold-signal`: start `sh -c 'sleep 1000 & sleep 1000'`, print
//!   `pgid <pid>` once both processes are up, then wait forever (the test
//!   sends a signal).
//! - `hold-exit`: the same, then `std::process::exit(0)` without dropping the
//!   supervisor (the `atexit` path must tear the child down).
//! - `trap-once` (log path in [`ARG_VAR`]): start a shell that appends a line to `<log>` on every
//!   SIGTERM and survives it; cancel it, drop the supervisor, and exit: the
//!   three teardown paths together must signal it exactly once.
//! - `env`: run `env -0` with `EnvPolicy::loci_child()` and copy its output
//!   to the file named by [`ARG_VAR`].
//! - `from-thread`: start a shell that echoes one line of its streamed stdin
//!   and then sleeps, from a thread that then ends; check that the echo
//!   comes (the parent-death signal is tied to the forking thread), print
//!   `pgid <pid>`, wait forever (the test SIGKILLs us).
//! - `outlive`: start `sleep 1000` with `die_with_parent(false)`, print
//!   `pgid <pid>`, wait forever.

use std::io::Write;
use std::ops::ControlFlow;
use std::sync::mpsc;
use std::time::Duration;

use loci_supervisor::{EnvPolicy, SpawnSpec, Supervisor};

use super::common;

/// Selects the harness mode; unset in a normal test run.
pub const MODE_VAR: &str = "LOCI_SUPERVISOR_TEST_HARNESS";
/// The mode's argument (a file path).
pub const ARG_VAR: &str = "LOCI_SUPERVISOR_TEST_HARNESS_ARG";

fn hold(sup: &Supervisor) -> u32 {
    let h = sup
        .spawn(
            SpawnSpec::new("sh")
                .args(["-c", common::GRANDCHILD_SH])
                .budget(Duration::from_secs(3600))
                .kill_grace(Duration::from_millis(500)),
        )
        .expect("spawn");
    common::wait_group_size(h.pid(), 2);
    println!("pgid {}", h.pid());
    std::io::stdout().flush().unwrap();
    h.pid()
}

/// Runs `mode`; the hold modes never return.
pub fn run(mode: &str) {
    let arg = std::env::var(ARG_VAR).unwrap_or_default();
    let sup = Supervisor::new();
    match mode {
        "hold-signal" => {
            hold(&sup);
            loop {
                std::thread::park();
            }
        }
        "hold-exit" => {
            hold(&sup);
            std::process::exit(0);
        }
        "trap-once" => {
            let log = &arg;
            let (tx, rx) = mpsc::channel();
            let script =
                format!("trap 'echo term >> {log}' TERM; echo ready; while :; do sleep 0.05; done");
            let h = sup
                .spawn(
                    SpawnSpec::new("sh")
                        .args(["-c", &script])
                        .kill_grace(Duration::from_millis(300))
                        .on_stdout(move |_| {
                            let _ = tx.send(());
                            ControlFlow::Continue(())
                        }),
                )
                .expect("spawn");
            rx.recv_timeout(Duration::from_secs(10))
                .expect("child ready");
            println!("pgid {}", h.pid());
            h.cancel();
            drop(sup);
            std::process::exit(0);
        }
        "env" => {
            let out = sup
                .run(SpawnSpec::new("env").arg("-0").env(EnvPolicy::loci_child()))
                .expect("spawn env");
            std::fs::write(&arg, &out.stdout.head).unwrap();
        }
        "from-thread" => {
            let (tx, rx) = mpsc::channel();
            let sup = std::sync::Arc::new(sup);
            let s = sup.clone();
            let h = std::thread::spawn(move || {
                s.spawn(
                    // Echoes one line, then outlives its stdin and stdout.
                    SpawnSpec::new("sh")
                        .args(["-c", "read l; echo \"$l\"; exec sleep 1000"])
                        .stdin_stream()
                        .budget(Duration::from_secs(3600))
                        .on_stdout(move |chunk| {
                            let _ = tx.send(chunk.to_vec());
                            ControlFlow::Continue(())
                        }),
                )
                .expect("spawn")
            })
            .join()
            .unwrap();
            let mut stdin = h.take_stdin().unwrap();
            stdin.write_all(b"ping\n").unwrap();
            let echoed = rx.recv_timeout(Duration::from_secs(10)).expect("echo");
            assert_eq!(
                echoed, b"ping\n",
                "cat died with the thread that spawned it"
            );
            println!("pgid {}", h.pid());
            std::io::stdout().flush().unwrap();
            loop {
                std::thread::park();
            }
        }
        "outlive" => {
            let h = sup
                .spawn(
                    SpawnSpec::new("sleep")
                        .arg("1000")
                        .budget(Duration::from_secs(3600))
                        .die_with_parent(false),
                )
                .expect("spawn");
            common::wait_group_size(h.pid(), 1);
            println!("pgid {}", h.pid());
            std::io::stdout().flush().unwrap();
            loop {
                std::thread::park();
            }
        }
        other => panic!("unknown harness mode {other:?}"),
    }
}
