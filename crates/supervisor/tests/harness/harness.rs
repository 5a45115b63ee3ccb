//! Test harness: a separate process that owns a `Supervisor`, so tests can
//! signal it, let it exit, or control its environment. Not part of loci.
//!
//! Modes (first argument):
//! - `hold-signal`: start `sh -c 'sleep 1000 & sleep 1000'`, print
//!   `pgid <pid>` once both processes are up, then wait forever (the test
//!   sends a signal).
//! - `hold-exit`: the same, then `std::process::exit(0)` without dropping the
//!   supervisor (the `atexit` path must tear the child down).
//! - `trap-once <log>`: start a shell that appends a line to `<log>` on every
//!   SIGTERM and survives it; cancel it, drop the supervisor, and exit: the
//!   three teardown paths together must signal it exactly once.
//! - `env`: run `env -0` with `EnvPolicy::loci_child()` and copy its output.

use std::io::Write;
use std::ops::ControlFlow;
use std::sync::mpsc;
use std::time::Duration;

use loci_supervisor::{EnvPolicy, SpawnSpec, Supervisor};

#[path = "../common/mod.rs"]
mod common;

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sup = Supervisor::new();
    match args.get(1).map(String::as_str) {
        Some("hold-signal") => {
            hold(&sup);
            loop {
                std::thread::park();
            }
        }
        Some("hold-exit") => {
            hold(&sup);
            std::process::exit(0);
        }
        Some("trap-once") => {
            let log = &args[2];
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
        Some("env") => {
            let out = sup
                .run(SpawnSpec::new("env").arg("-0").env(EnvPolicy::loci_child()))
                .expect("spawn env");
            std::io::stdout().write_all(&out.stdout.head).unwrap();
        }
        other => {
            eprintln!("unknown mode {other:?}");
            std::process::exit(2);
        }
    }
}
