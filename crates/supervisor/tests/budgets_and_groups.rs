//! Budgets, cancellation, kill grace and process groups, on real processes.

use crate::common;

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::time::Duration;

use common::{GRANDCHILD_SH, assert_group_gone, wait_group_size};
use loci_supervisor::{Exit, SpawnSpec, Supervisor};

fn grandchild_spec() -> SpawnSpec {
    SpawnSpec::new("sh")
        .args(["-c", GRANDCHILD_SH])
        .kill_grace(Duration::from_millis(500))
}

#[test]
fn cancel_leaves_no_grandchild_behind() {
    let sup = Supervisor::new();
    let h = sup.spawn(grandchild_spec()).unwrap();
    wait_group_size(h.pid(), 2);
    h.cancel();
    let out = h.wait();
    assert!(out.cancelled && !out.timed_out, "{out:?}");
    assert_eq!(out.exit, Exit::Signal(libc::SIGTERM));
    assert_group_gone(h.pid());
}

#[test]
fn budget_expiry_times_out_and_leaves_no_grandchild_behind() {
    let sup = Supervisor::new();
    let h = sup
        .spawn(grandchild_spec().budget(Duration::from_millis(300)))
        .unwrap();
    wait_group_size(h.pid(), 2);
    let out = h.wait();
    assert!(out.timed_out && !out.cancelled, "{out:?}");
    assert!(out.elapsed >= Duration::from_millis(300));
    assert_group_gone(h.pid());
}

#[test]
fn supervisor_drop_leaves_no_grandchild_behind() {
    let sup = Supervisor::new();
    let h = sup.spawn(grandchild_spec()).unwrap();
    wait_group_size(h.pid(), 2);
    assert_eq!(sup.live_children(), 1);
    drop(sup);
    // Drop returns once the child is reaped.
    let out = h.try_outcome().expect("drop waits for the teardown");
    assert!(out.cancelled, "{out:?}");
    assert_group_gone(h.pid());
}

#[test]
fn child_ignoring_sigterm_is_killed_after_the_grace() {
    let sup = Supervisor::new();
    let (tx, rx) = mpsc::channel();
    let grace = Duration::from_millis(400);
    // `trap '' TERM` is inherited by the sleeps, so the whole group ignores it.
    let h = sup
        .spawn(
            SpawnSpec::new("sh")
                .args(["-c", "trap '' TERM; echo ready; sleep 1000 & sleep 1000"])
                .kill_grace(grace)
                .on_stdout(move |_| {
                    let _ = tx.send(());
                    ControlFlow::Continue(())
                }),
        )
        .unwrap();
    rx.recv_timeout(Duration::from_secs(10)).unwrap();
    wait_group_size(h.pid(), 2);
    let cancelled_at = std::time::Instant::now();
    h.cancel();
    // Still alive during the grace: SIGTERM was ignored.
    assert!(h.wait_timeout(grace / 2).is_none());
    assert!(!common::group_members(h.pid()).is_empty());
    let out = h.wait();
    assert!(cancelled_at.elapsed() >= grace);
    assert!(out.killed_after_grace && out.cancelled, "{out:?}");
    assert_eq!(out.exit, Exit::Signal(libc::SIGKILL));
    assert_group_gone(h.pid());
}

#[test]
fn normal_exit_sweeps_background_leftovers_of_the_group() {
    let sup = Supervisor::new();
    // The leader exits at once, leaving a background sleep in its group.
    let out = sup
        .run(SpawnSpec::new("sh").args(["-c", "sleep 1000 >/dev/null 2>&1 & echo $!"]))
        .unwrap();
    assert!(out.success(), "{out:?}");
    let bg: u32 = String::from_utf8_lossy(&out.stdout.head)
        .trim()
        .parse()
        .unwrap();
    assert_ne!(bg, out.pid);
    assert_group_gone(out.pid);
}

#[test]
fn exit_codes_and_signals_are_reported() {
    let sup = Supervisor::new();
    let out = sup
        .run(SpawnSpec::new("sh").args(["-c", "exit 7"]))
        .unwrap();
    assert_eq!(out.exit, Exit::Code(7));
    assert!(!out.success());
    let out = sup
        .run(SpawnSpec::new("sh").args(["-c", "kill -9 $$"]))
        .unwrap();
    assert_eq!(out.exit, Exit::Signal(9));
    assert!(!out.cancelled && !out.timed_out);
}

#[test]
fn missing_program_is_a_spawn_error_naming_it() {
    let sup = Supervisor::new();
    let err = sup
        .spawn(SpawnSpec::new("/nonexistent/loci-no-such-tool"))
        .unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/loci-no-such-tool"),
        "{err}"
    );
    assert_eq!(err.kind(), "spawn_failed");
    assert_eq!(sup.live_children(), 0);
}

#[test]
fn child_runs_in_its_own_session() {
    let sup = Supervisor::new();
    // Field 6 of /proc/self/stat is the session id; the child leads its own.
    let out = sup
        .run(SpawnSpec::new("sh").args(["-c", "cut -d' ' -f6 /proc/$$/stat"]))
        .unwrap();
    let sid: u32 = String::from_utf8_lossy(&out.stdout.head)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(sid, out.pid);
}

#[test]
fn detached_run_reports_through_its_callback_without_blocking() {
    let sup = Supervisor::new();
    let (tx, rx) = mpsc::channel();
    let h = sup
        .spawn_detached(SpawnSpec::new("sh").args(["-c", "echo bg"]), move |out| {
            tx.send(out).unwrap();
        })
        .unwrap();
    let out = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(out.stdout.head, b"bg\n");
    assert_eq!(out.pid, h.pid());
    // A clone of the handle waited on from another thread sees the same.
    let h2 = h.clone();
    let from_thread = std::thread::spawn(move || h2.wait()).join().unwrap();
    assert_eq!(from_thread.pid, out.pid);
}
