//! Concurrent draining, bounded capture and streamed stdin, on real processes.

use std::time::Duration;

use loci_supervisor::{Exit, SpawnSpec, Supervisor};

const GIB: u64 = 1 << 30;

#[test]
fn one_gib_on_stdout_and_stderr_at_once_does_not_deadlock() {
    let sup = Supervisor::new();
    let cap = 64 * 1024;
    let out = sup
        .run(
            SpawnSpec::new("sh")
                .args([
                    "-c",
                    "head -c 1073741824 /dev/zero & head -c 1073741824 /dev/zero >&2; wait",
                ])
                .capture_cap(cap)
                .budget(Duration::from_secs(300)),
        )
        .unwrap();
    assert_eq!(out.exit, Exit::Code(0), "{out:?}");
    assert!(!out.timed_out);
    for (name, c) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert_eq!(c.total_bytes, GIB, "{name}");
        assert!(c.truncated, "{name}");
        assert_eq!(c.head.len() + c.tail.len(), cap, "{name}");
        assert_eq!(c.omitted_bytes(), GIB - cap as u64, "{name}");
    }
}

#[test]
fn capture_keeps_the_first_and_last_bytes_with_exact_counts() {
    let sup = Supervisor::new();
    // 100 000 numbered lines on stdout, "e" lines on stderr.
    let out = sup
        .run(
            SpawnSpec::new("sh")
                .args(["-c", "seq 1 100000; seq 1 5 >&2"])
                .capture_cap(20),
        )
        .unwrap();
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(out.stdout.total_bytes, expected.len() as u64);
    assert_eq!(out.stdout.head, &expected.as_bytes()[..10]);
    assert_eq!(out.stdout.tail, &expected.as_bytes()[expected.len() - 10..]);
    assert!(out.stdout.truncated);
    assert_eq!(out.stderr.head, b"1\n2\n3\n4\n5\n");
    assert!(!out.stderr.truncated);
}

#[test]
fn large_stdin_payload_arrives_intact_while_output_is_drained() {
    let sup = Supervisor::new();
    let payload: Vec<u8> = (0..20_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    // `cat` echoes stdin to stdout while we still write: both directions at once.
    let out = sup
        .run(
            SpawnSpec::new("cat")
                .stdin_bytes(payload.clone())
                .capture_cap(payload.len()),
        )
        .unwrap();
    assert!(out.success());
    assert_eq!(out.stdin_bytes_written, payload.len() as u64);
    assert_eq!(out.stdout.head, payload);
}

#[test]
fn child_closing_stdin_early_does_not_hang_or_kill_loci() {
    let sup = Supervisor::new();
    let out = sup
        .run(
            SpawnSpec::new("head")
                .args(["-c", "10"])
                .stdin_bytes(vec![b'x'; 8 << 20]),
        )
        .unwrap();
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout.head, b"xxxxxxxxxx");
    assert!(out.stdin_bytes_written < 8 << 20);
}

#[test]
fn without_payload_stdin_is_null() {
    let sup = Supervisor::new();
    let out = sup.run(SpawnSpec::new("cat")).unwrap();
    assert!(out.success());
    assert_eq!(out.stdout.total_bytes, 0);
}
