//! The teardown paths of a process that owns a supervisor: a termination
//! signal (then the signal is re-raised), normal exit, and several paths at
//! once (the child is signalled exactly once). The process that owns the
//! supervisor is this test binary itself, re-executed to run only
//! `harness_process` (see `common/harness.rs` for why).

mod common;
#[path = "common/harness.rs"]
mod harness;

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::time::Duration;

use common::assert_group_gone;
use loci_supervisor::{EnvPolicy, Exit, Handle, SpawnSpec, Supervisor};

/// Not a test of its own: the entry point of the harness process. Without
/// the harness variable (a normal test run) it does nothing.
#[test]
fn harness_process() {
    if let Ok(mode) = std::env::var(harness::MODE_VAR) {
        harness::run(&mode);
    }
}

/// This test binary, told to run only `harness_process` with output shown.
fn harness_spec(mode: &str, arg: &str, env: EnvPolicy) -> SpawnSpec {
    SpawnSpec::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "harness_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env.pin(harness::MODE_VAR, mode).pin(harness::ARG_VAR, arg))
        .budget(Duration::from_secs(60))
}

/// Starts the harness in `mode` and returns its handle and the pgid of the
/// child it reports on stdout (amid libtest's own output).
fn start_harness(sup: &Supervisor, mode: &str, arg: &str) -> (Handle, u32) {
    let (tx, rx) = mpsc::channel();
    let mut seen = Vec::new();
    let mut sent = false;
    let h = sup
        .spawn(
            harness_spec(mode, arg, EnvPolicy::loci_child()).on_stdout(move |chunk| {
                seen.extend_from_slice(chunk);
                let text = String::from_utf8_lossy(&seen);
                if let Some(rest) = text.split("pgid ").nth(1)
                    && let Some((num, _)) = rest.split_once('\n')
                    && !sent
                {
                    sent = true;
                    let _ = tx.send(num.trim().parse::<u32>().unwrap());
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
    let (h, pgid) = start_harness(&sup, "hold-signal", "");
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
fn a_child_dies_within_a_second_of_its_owner_being_sigkilled_even_if_spawned_from_an_ended_thread()
{
    let sup = Supervisor::new();
    let (h, pgid) = start_harness(&sup, "from-thread", "");
    common::wait_group_size(pgid, 1);
    // SAFETY: kill(2) on the harness pid, which is our own unreaped child.
    unsafe { libc::kill(h.pid() as i32, libc::SIGKILL) };
    assert_eq!(h.wait().exit, Exit::Signal(libc::SIGKILL));
    assert!(
        common::wait_for(Duration::from_secs(1), || common::group_members(pgid)
            .is_empty()),
        "the child outlived its SIGKILLed owner: {:?}",
        common::group_members(pgid)
    );
}

#[test]
fn a_child_spawned_without_die_with_parent_outlives_a_sigkilled_owner() {
    let sup = Supervisor::new();
    let (h, pgid) = start_harness(&sup, "outlive", "");
    // SAFETY: kill(2) on the harness pid, which is our own unreaped child.
    unsafe { libc::kill(h.pid() as i32, libc::SIGKILL) };
    h.wait();
    let died = common::wait_for(Duration::from_secs(1), || {
        common::group_members(pgid).is_empty()
    });
    // SAFETY: kill(2) with a negative pid signals the orphan's group, which
    // this test created (its leader's pid is not reused while it lives).
    unsafe { libc::kill(-(pgid as i32), libc::SIGKILL) };
    assert!(!died, "die_with_parent(false) should let the child live on");
    assert_group_gone(pgid);
}

#[test]
fn normal_exit_of_the_owner_kills_its_children() {
    let sup = Supervisor::new();
    let (h, pgid) = start_harness(&sup, "hold-exit", "");
    let out = h.wait();
    assert_eq!(out.exit, Exit::Code(0), "{out:?}");
    assert_group_gone(pgid);
}

#[test]
fn cancel_drop_and_exit_together_signal_the_child_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("terms.log");
    let sup = Supervisor::new();
    let (h, pgid) = start_harness(&sup, "trap-once", log.to_str().unwrap());
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
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("env");
    let dump_s = dump.to_str().unwrap();
    let out = sup
        .run(harness_spec(
            "env",
            dump_s,
            EnvPolicy::clear_with(harness_env),
        ))
        .unwrap();
    assert!(out.success(), "{}", out.stderr.to_string_lossy());
    let mut seen: Vec<(String, String)> = std::fs::read(&dump)
        .unwrap()
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
    expected.push((harness::MODE_VAR.into(), "env".into()));
    expected.push((harness::ARG_VAR.into(), dump_s.into()));
    expected.sort();
    assert_eq!(seen, expected);
}
