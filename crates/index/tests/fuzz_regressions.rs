//! Every input the fuzz campaign (`scripts/fuzz.sh`) found a defect with, run again
//! through the fuzz targets' own harness (`fuzz/src/lib.rs`): extracted (or indexed, for
//! `resolve/`) without a panic, with facts that keep their invariants, and within a
//! deadline. Each input runs on a thread of its own and the test waits with a timeout,
//! so an extractor that loops again fails the test instead of hanging it.
//!
//! Inputs live in `tests/fuzz_regressions/<target>/<name>`: `<target>` is a language's
//! stable name (`cpp`), `header` or `resolve`, as the fuzz targets are named. Adding a
//! regression is adding a file.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use loci_index::Lang;

#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod harness;

/// Longest one input may take in a debug build. The inputs are at most 64 KiB and each
/// took seconds to forever before its fix; fixed, each takes milliseconds.
const DEADLINE: Duration = Duration::from_secs(20);

fn regressions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions")
}

/// What the fuzz target named `target` runs on an input.
fn harness_for(target: &str) -> fn(&[u8]) {
    match target {
        "header" => harness::header,
        "resolve" => harness::resolve,
        name => {
            let lang = Lang::from_name(name)
                .unwrap_or_else(|| panic!("{name} names no language and no fuzz target"));
            // A plain fn per language: each input runs on a thread that owns nothing.
            match lang {
                Lang::Rust => |d| harness::extract(Lang::Rust, d),
                Lang::Python => |d| harness::extract(Lang::Python, d),
                Lang::JavaScript => |d| harness::extract(Lang::JavaScript, d),
                Lang::TypeScript => |d| harness::extract(Lang::TypeScript, d),
                Lang::Tsx => |d| harness::extract(Lang::Tsx, d),
                Lang::Go => |d| harness::extract(Lang::Go, d),
                Lang::Java => |d| harness::extract(Lang::Java, d),
                Lang::C => |d| harness::extract(Lang::C, d),
                Lang::Cpp => |d| harness::extract(Lang::Cpp, d),
                Lang::CSharp => |d| harness::extract(Lang::CSharp, d),
                Lang::Ruby => |d| harness::extract(Lang::Ruby, d),
                Lang::Php => |d| harness::extract(Lang::Php, d),
                Lang::Kotlin => |d| harness::extract(Lang::Kotlin, d),
                Lang::Swift => |d| harness::extract(Lang::Swift, d),
                Lang::Bash => |d| harness::extract(Lang::Bash, d),
            }
        }
    }
}

/// Every regression input, as (target, path), sorted.
fn inputs() -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for dir in std::fs::read_dir(regressions_dir()).unwrap() {
        let dir = dir.unwrap();
        let target = dir.file_name().into_string().unwrap();
        for file in std::fs::read_dir(dir.path()).unwrap() {
            found.push((target.clone(), file.unwrap().path()));
        }
    }
    found.sort();
    found
}

/// Runs `run` on `data` on a thread of its own: how long it took, or why it failed.
fn run_with_deadline(run: fn(&[u8]), data: Vec<u8>) -> Result<Duration, String> {
    let (done, finished) = mpsc::channel();
    let started = Instant::now();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            run(&data);
            let _ = done.send(started.elapsed());
        })
        .unwrap();
    match finished.recv_timeout(DEADLINE) {
        Ok(took) => Ok(took),
        // The thread ended without sending: it panicked (its message is on stderr).
        Err(mpsc::RecvTimeoutError::Disconnected) => Err("panicked".into()),
        // The thread is left running; the test process ends with the test.
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("still running after {DEADLINE:?}")),
    }
}

#[test]
fn every_fuzz_regression_finishes_in_time_without_a_panic() {
    let inputs = inputs();
    assert!(
        !inputs.is_empty(),
        "no inputs in {}",
        regressions_dir().display()
    );
    let mut failures = Vec::new();
    for (target, path) in &inputs {
        let data = std::fs::read(path).unwrap();
        match run_with_deadline(harness_for(target), data) {
            Ok(took) => eprintln!("{}: {took:?}", path.display()),
            Err(why) => failures.push(format!("{}: {why}", path.display())),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
