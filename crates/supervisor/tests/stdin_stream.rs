//! Streamed stdin (`SpawnSpec::stdin_stream` + `Handle::take_stdin`) on real
//! processes: lines echoed back through the stdout sink, large exchanges
//! that would deadlock if writing stdin were not concurrent with draining
//! stdout, a child that dies mid-stream, and the pipe closed on cancel,
//! budget and teardown.

use std::io::{ErrorKind, Write};
use std::ops::ControlFlow;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loci_supervisor::{Exit, SpawnSpec, Supervisor};

/// A `cat` whose stdout chunks arrive on a channel.
fn cat(sup: &Supervisor) -> (loci_supervisor::Handle, mpsc::Receiver<Vec<u8>>) {
    let (tx, rx) = mpsc::channel();
    let handle = sup
        .spawn(
            SpawnSpec::new("cat")
                .stdin_stream()
                .capture_cap(1024)
                .budget(Duration::from_secs(120))
                .on_stdout(move |chunk| {
                    let _ = tx.send(chunk.to_vec());
                    ControlFlow::Continue(())
                }),
        )
        .unwrap();
    (handle, rx)
}

/// Receives exactly `n` bytes from the chunk channel.
fn recv_exact(rx: &mpsc::Receiver<Vec<u8>>, pending: &mut Vec<u8>, n: usize) -> Vec<u8> {
    while pending.len() < n {
        let chunk = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("echo arrives");
        pending.extend_from_slice(&chunk);
    }
    pending.drain(..n).collect()
}

#[test]
fn cat_echoes_each_line_back_through_the_stdout_sink() {
    let sup = Supervisor::new();
    let (handle, rx) = cat(&sup);
    let mut w = handle.take_stdin().expect("a streamed stdin");
    let mut pending = Vec::new();
    let mut sent = 0u64;
    // Request/response, one line at a time: each echo arrives before the
    // next line is written. 2,000 lines of ~100 bytes (well over 64 KiB).
    for i in 0..2_000 {
        let line = format!("request {i} ş漢🦀 {}\n", "x".repeat(i % 90));
        w.write_all(line.as_bytes()).unwrap();
        sent += line.len() as u64;
        assert_eq!(recv_exact(&rx, &mut pending, line.len()), line.as_bytes());
    }
    assert_eq!(w.bytes_written(), sent);
    drop(w); // EOF: cat ends on its own
    let out = handle.wait();
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdin_bytes_written, sent);
    assert_eq!(out.stdout.total_bytes, sent);
}

#[test]
fn sixteen_mib_in_one_write_while_the_echo_is_drained_does_not_deadlock() {
    // `cat` cannot read more until its stdout is drained, and we are still
    // inside one write_all: only concurrent draining lets this finish.
    let sup = Supervisor::new();
    let (handle, rx) = cat(&sup);
    let mut w = handle.take_stdin().unwrap();
    let payload: Vec<u8> = (0..16u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    let t0 = Instant::now();
    w.write_all(&payload).unwrap();
    drop(w);
    let mut pending = Vec::new();
    let echoed = recv_exact(&rx, &mut pending, payload.len());
    assert!(echoed == payload, "echo differs");
    let out = handle.wait();
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdin_bytes_written, payload.len() as u64);
    assert!(t0.elapsed() < Duration::from_secs(60));
}

#[test]
fn interleaved_writers_and_a_chatty_child_exchange_megabytes() {
    // The child answers every line with ten lines; two threads share the
    // writer behind a mutex and write whole lines under the lock.
    let sup = Supervisor::new();
    let (tx, rx) = mpsc::channel::<usize>();
    let handle = sup
        .spawn(
            SpawnSpec::new("sh")
                .args([
                    "-c",
                    "while IFS= read -r l; do for i in 0 1 2 3 4 5 6 7 8 9; do echo \"$l\"; done; done",
                ])
                .stdin_stream()
                .capture_cap(1024)
                .on_stdout(move |chunk| {
                    let _ = tx.send(chunk.len());
                    ControlFlow::Continue(())
                }),
        )
        .unwrap();
    let w = Arc::new(Mutex::new(handle.take_stdin().unwrap()));
    let line = format!("{}\n", "y".repeat(999));
    let per_thread = 100;
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let w = w.clone();
            let line = line.clone();
            std::thread::spawn(move || {
                for _ in 0..per_thread {
                    w.lock().unwrap().write_all(line.as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    drop(w); // the last reference: EOF
    let out = handle.wait();
    assert!(out.success(), "{out:?}");
    let expected = (2 * per_thread * 10 * line.len()) as u64;
    assert_eq!(out.stdout.total_bytes, expected);
    assert_eq!(rx.try_iter().sum::<usize>() as u64, expected);
    assert_eq!(
        out.stdin_bytes_written,
        (2 * per_thread * line.len()) as u64
    );
}

#[test]
fn a_child_that_exits_mid_stream_gives_broken_pipe_not_sigpipe() {
    // The default SIGPIPE action (what the loci CLI restores) would end this
    // test process if a write raised it.
    // SAFETY: resetting a signal disposition; no handler is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let sup = Supervisor::new();
    let handle = sup
        .spawn(SpawnSpec::new("head").args(["-n", "1"]).stdin_stream())
        .unwrap();
    let mut w = handle.take_stdin().unwrap();
    w.write_all(b"first line\n").unwrap();
    let out = handle.wait();
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.head, b"first line\n");
    assert!(w.is_closed(), "the supervisor closes the pipe at exit");
    let e = w.write_all(b"second line\n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BrokenPipe, "{e}");
}

#[test]
fn a_dead_reader_fails_a_write_with_broken_pipe_before_the_supervisor_notices() {
    // SAFETY: as above.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let sup = Supervisor::new();
    // The child closes its stdin and keeps running: only EPIPE can tell.
    let handle = sup
        .spawn(
            SpawnSpec::new("sh")
                .args(["-c", "exec 0<&-; sleep 30"])
                .stdin_stream()
                .kill_grace(Duration::from_millis(100)),
        )
        .unwrap();
    let mut w = handle.take_stdin().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let e = loop {
        match w.write_all(b"line\n") {
            Err(e) => break e,
            Ok(()) => {
                assert!(Instant::now() < deadline, "no EPIPE");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    };
    assert_eq!(e.kind(), ErrorKind::BrokenPipe, "{e}");
    assert!(!handle.is_finished());
    handle.cancel();
    assert!(handle.wait().cancelled);
}

/// Starts a child that never reads stdin and a thread stuck writing 8 MiB
/// to it; returns the handle and the writer thread's result channel.
fn stuck_writer(
    sup: &Supervisor,
    budget: Duration,
) -> (
    loci_supervisor::Handle,
    mpsc::Receiver<(std::io::Result<()>, Instant)>,
) {
    let handle = sup
        .spawn(
            SpawnSpec::new("sleep")
                .arg("1000")
                .stdin_stream()
                .budget(budget)
                .kill_grace(Duration::from_millis(100)),
        )
        .unwrap();
    let mut w = handle.take_stdin().unwrap();
    let (tx, rx) = mpsc::channel();
    let (tid_tx, tid_rx) = mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        let _ = tid_tx.send(unsafe { libc::gettid() });
        let r = w.write_all(&vec![b'z'; 8 << 20]);
        let _ = tx.send((r, Instant::now()));
    });
    // Ready when the kernel has the writer asleep in poll(2): the writer polls only
    // once a write would block, so the pipe is full (64 KiB; the child never reads).
    let tid = tid_rx.recv().unwrap();
    let wchan = format!("/proc/self/task/{tid}/wchan");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&wchan).is_ok_and(|w| w.contains("poll")) {
        assert!(
            Instant::now() < deadline,
            "the writer never blocked on the full pipe: {:?}",
            std::fs::read_to_string(&wchan)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        rx.try_recv().is_err(),
        "the write should be waiting for room"
    );
    (handle, rx)
}

#[test]
fn cancel_closes_the_pipe_and_wakes_a_blocked_writer() {
    let sup = Supervisor::new();
    let (handle, rx) = stuck_writer(&sup, Duration::from_secs(120));
    let t0 = Instant::now();
    handle.cancel();
    let (r, at) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::BrokenPipe);
    assert!(at - t0 < Duration::from_secs(1), "woke after {:?}", at - t0);
    let out = handle.wait();
    assert!(out.cancelled);
    assert!(out.stdin_bytes_written > 0 && out.stdin_bytes_written < 8 << 20);
}

#[test]
fn budget_expiry_wakes_a_blocked_writer() {
    let sup = Supervisor::new();
    let (handle, rx) = stuck_writer(&sup, Duration::from_millis(500));
    let (r, _) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::BrokenPipe);
    assert!(handle.wait().timed_out);
}

#[test]
fn dropping_the_supervisor_wakes_a_blocked_writer() {
    let sup = Supervisor::new();
    let (handle, rx) = stuck_writer(&sup, Duration::from_secs(120));
    drop(sup);
    let (r, _) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::BrokenPipe);
    assert!(handle.wait().cancelled);
}

#[test]
fn the_writer_is_taken_once_and_only_for_streamed_runs() {
    let sup = Supervisor::new();
    let (handle, _rx) = cat(&sup);
    let clone = handle.clone();
    let w = handle.take_stdin();
    assert!(w.is_some());
    assert!(clone.take_stdin().is_none(), "one writer per run");
    w.unwrap().close();
    assert_eq!(handle.wait().exit, Exit::Code(0));

    let payload = sup.spawn(SpawnSpec::new("cat").stdin_bytes("x")).unwrap();
    assert!(payload.take_stdin().is_none());
    assert!(payload.wait().success());
    let null = sup.spawn(SpawnSpec::new("true")).unwrap();
    assert!(null.take_stdin().is_none());
    null.wait();
}
