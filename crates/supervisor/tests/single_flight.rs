//! Single-flight: concurrent spawns with one key start one process.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use loci_supervisor::{SpawnSpec, Supervisor};

#[test]
fn concurrent_spawns_with_one_key_start_one_process() {
    const N: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let release = dir.path().join("release");
    // Each start appends a line, then the child waits for the release file.
    let script = format!(
        "echo started >> {s}; while [ ! -e {r} ]; do sleep 0.01; done; echo done",
        s = starts.display(),
        r = release.display()
    );
    let sup = Arc::new(Supervisor::new());
    let barrier = Arc::new(Barrier::new(N));
    let threads: Vec<_> = (0..N)
        .map(|_| {
            let (sup, barrier, script) = (sup.clone(), barrier.clone(), script.clone());
            std::thread::spawn(move || {
                barrier.wait();
                sup.spawn(
                    SpawnSpec::new("sh")
                        .args(["-c", &script])
                        .single_flight("index:/work/repo")
                        .budget(Duration::from_secs(60)),
                )
                .unwrap()
            })
        })
        .collect();
    let handles: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    std::fs::write(&release, "").unwrap();
    let outcomes: Vec<_> = handles.iter().map(|h| h.wait()).collect();
    let pid = outcomes[0].pid;
    assert!(
        outcomes
            .iter()
            .all(|o| o.pid == pid && o.stdout.head == b"done\n")
    );
    assert_eq!(handles.iter().filter(|h| !h.joined()).count(), 1);
    assert_eq!(std::fs::read_to_string(&starts).unwrap(), "started\n");

    // Once it ended, the same key starts a new process.
    let again = sup
        .run(SpawnSpec::new("true").single_flight("index:/work/repo"))
        .unwrap();
    assert_ne!(again.pid, pid);
}

#[test]
fn different_keys_run_in_parallel() {
    let sup = Supervisor::new();
    let a = sup
        .spawn(SpawnSpec::new("sleep").arg("1000").single_flight("a"))
        .unwrap();
    let b = sup
        .spawn(SpawnSpec::new("sleep").arg("1000").single_flight("b"))
        .unwrap();
    assert_ne!(a.pid(), b.pid());
    assert!(!a.joined() && !b.joined());
    a.cancel();
    b.cancel();
    assert!(a.wait().cancelled && b.wait().cancelled);
}
