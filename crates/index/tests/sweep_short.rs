//! The short sweep: real code from the machine (what `.ci/run` installs), one tree per
//! language family, indexed for real. Each completes within a wall-clock limit, skips
//! no file for `timeout` or `panic`, and skips at most a handful for any reason.
//! `scripts/sweep.sh` is the long version (every crate, every tree, release build).
//!
//! A tree missing from the machine fails the test under CI (`CI` set), and is skipped
//! with a note otherwise.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loci_index::{IndexOptions, NoProgress, index_workspace};

/// Wall-clock limit for one tree in a debug build on a loaded 2-core machine.
const LIMIT: Duration = Duration::from_secs(240);

/// Most files one tree may skip for any reason but links (binary test data and the
/// like). Symbolic links are never followed, by design, and listed: `/usr/lib/git-core`
/// holds 140 of them.
const HANDFUL: u64 = 5;

fn first_dir(patterns: &[&str]) -> Option<PathBuf> {
    patterns.iter().find_map(|p| {
        let (dir, rest) = p.split_once('*').unwrap_or((p, ""));
        if rest.is_empty() {
            return Path::new(dir).is_dir().then(|| PathBuf::from(dir));
        }
        // One `*` in the last-but-one component: `/usr/share/go-*/src/strings`.
        let (parent, prefix) = dir.rsplit_once('/').unwrap();
        let mut hits: Vec<PathBuf> = std::fs::read_dir(parent)
            .ok()?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .map(|e| PathBuf::from(format!("{}{}", e.path().display(), rest)))
            .filter(|p| p.is_dir())
            .collect();
        hits.sort();
        hits.pop()
    })
}

fn python_stdlib(package: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join(package);
    dir.is_dir().then_some(dir)
}

fn newest_crate(prefix: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut hits: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .flatten()
        .flat_map(|index| {
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    hits.sort();
    hits.pop()
}

/// Indexes a copy-free view of `tree` (the index goes to a temp dir) and checks it.
fn sweep(name: &str, tree: Option<PathBuf>) -> Option<String> {
    let Some(tree) = tree else {
        let why = format!("{name}: not on this machine (.ci/run installs it)");
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("note: {why}");
        return None;
    };
    let out = tempfile::tempdir().unwrap();
    let mut opts = IndexOptions::new(&tree);
    opts.index_path = Some(out.path().join("index.db"));
    let started = Instant::now();
    let report = match index_workspace(&opts, &NoProgress) {
        Ok(report) => report,
        Err(e) => return Some(format!("{name}: failed: {e}")),
    };
    let took = started.elapsed();
    eprintln!(
        "{name:<24} {:>6} files {:>8.1?}  skipped {:?}",
        report.files_indexed, took, report.skipped_by_reason
    );
    let fatal: Vec<_> = report
        .skipped
        .iter()
        .filter(|s| matches!(s.reason.name(), "timeout" | "panic"))
        .collect();
    if took > LIMIT {
        Some(format!("{name}: took {took:?}, over {LIMIT:?}"))
    } else if !fatal.is_empty() {
        Some(format!("{name}: {fatal:?}"))
    } else if report.files_skipped
        - report
            .skipped_by_reason
            .get("symlink")
            .copied()
            .unwrap_or(0)
        > HANDFUL
    {
        Some(format!("{name}: skipped {:?}", report.skipped_by_reason))
    } else if report.files_indexed == 0 {
        Some(format!("{name}: indexed nothing"))
    } else {
        None
    }
}

#[test]
fn real_trees_of_every_language_family_index_to_completion() {
    let trees = [
        ("googletest (C++)", first_dir(&["/usr/src/googletest"])),
        ("fmt headers (C++)", first_dir(&["/usr/include/fmt"])),
        ("boost/asio (C++)", first_dir(&["/usr/include/boost/asio"])),
        ("linux uapi (C)", first_dir(&["/usr/include/linux"])),
        ("python email (Python)", python_stdlib("email")),
        ("tokio (Rust)", newest_crate("tokio-1.")),
        (
            "go strings (Go)",
            first_dir(&["/usr/share/go-*/src/strings", "/usr/lib/go-*/src/strings"]),
        ),
        ("ruby net (Ruby)", first_dir(&["/usr/lib/ruby/3*/net"])),
        ("phpunit (PHP)", first_dir(&["/usr/share/php/PHPUnit"])),
        ("git scripts (Bash)", first_dir(&["/usr/lib/git-core"])),
    ];
    let failures: Vec<String> = trees
        .into_iter()
        .filter_map(|(name, tree)| sweep(name, tree))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
