//! The teardown paths of a process that owns a supervisor: a termination
//! signal (then the signal is re-raised), normal exit, and several paths at
//! once (the child is signalled exactly once). Uses the
//! `loci-supervisor-harness` binary (see Cargo.toml for why it is a bin).

mod common;

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::time::Duration;

use common::assert_group_gone;
use loci_supervisor::{EnvPolicy, Exit, Handle, SpawnSpec, Supervisor};

const HARNESS: &str = env!("CARGO_BIN_EXE_loci-supervisor-harness");

/// Starts the harness in `mode` and returns its handle and the pgid of the
/// child it reports on stdout.
fn start_harness(sup: &Supervisor, args: &[&str]) -> (Handle, u32) {
    let (tx, rx) = mpsc::channel();
    let mut line = Vec::new();
    let h = sup
        .spawn(
            SpawnSpec::new(HARNESS)
                .args(args)
                .budget(Duration::from_secs(60))
                .on_stdout(move |chunk| {
                    line.extend_from_slice(chunk);
                    let text = String::from_utf8_lossy(&line);
                    if let Some(pgid) = text.strip_prefix("pgid ").and_then(|r| r.split_once('\n'))
                    {
                        let _ = tx.send(pgid.0.parse::<u32>().unwrap());
                    }
                    ControlFlow::Continue(())
                }),
        )
        .unwrap();
    let pgid = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("harness never reported its child: {:?}", h.wait()));
    (h, pgid)
}

fn signal_kills_children_and_is_reraised(sig: i32) {
    let sup = Supervisor::new();
    let (h, pgid) = start_harness(&sup, &["hold-signal"]);
    common::wait_group_size(pgid, 2);
    // SAFETY: kill(2) on the harness pid, which is our own unreaped child.
    unsafe { libc::kill(h.pid() as i32, sig) };
    let out = h.wait();
    assert_eq!(out.exit, Exit::Signal(sig), "{out:?}");
    assert_group_gone(pgid);
}

#[test]
fn sigterm_to_the_owner_kills_its_children_and_reraises() {
    signal_kills_children_and_is_reraised(libc::SIGTERM);
}

#[test]
fn sigint_to_the_owner_kills_its_children_and_reraises() {
    signal_kills_children_and_is_reraised(libc::SIGINT);
}

#[test]
fn sighup_to_the_owner_kills_its_children_and_reraises() {
    signal_kills_children_and_is_reraised(libc::SIGHUP);
}

#[test]
fn normal_exit_of_the_owner_kills_its_children() {
    let sup = Supervisor::new();
    let (h, pgid) = start_harness(&sup, &["hold-exit"]);
    let out = h.wait();
    assert_eq!(out.exit, Exit::Code(0), "{out:?}");
    assert_group_gone(pgid);
}

#[test]
fn cancel_drop_and_exit_together_signal_the_child_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("terms.log");
    let sup = Supervisor::new();
    let (h, pgid) = start_harness(&sup, &["trap-once", log.to_str().unwrap()]);
    let out = h.wait();
    assert_eq!(out.exit, Exit::Code(0), "{out:?}");
    assert_group_gone(pgid);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "term\n");
}

#[test]
fn inherit_pins_auto_watch_over_an_inherited_value_and_keeps_the_rest() {
    let sup = Supervisor::new();
    let path = std::env::var_os("PATH").unwrap();
    let harness_env = [
        ("PATH", path.to_str().unwrap()),
        ("LOCI_AUTO_WATCH", "1"),
        ("CGC_API_KEY", "secret with spaces"),
        ("MULTI_LINE", "a\nb"),
        ("EMPTY", ""),
    ];
    let out = sup
        .run(
            SpawnSpec::new(HARNESS)
                .arg("env")
                .env(EnvPolicy::clear_with(harness_env)),
        )
        .unwrap();
    assert!(out.success(), "{}", out.stderr.to_string_lossy());
    let mut seen: Vec<(String, String)> = out
        .stdout
        .head
        .split(|&b| b == 0)
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let kv = String::from_utf8(kv.to_vec()).unwrap();
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect();
    seen.sort();
    let mut expected: Vec<(String, String)> = harness_env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    expected[1].1 = "0".into();
    expected.sort();
    assert_eq!(seen, expected);
}
