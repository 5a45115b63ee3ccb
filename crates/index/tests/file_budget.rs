//! Every file of an index run works under a time budget (`index.fileBudgetMs`): a file
//! over it is skipped as `timeout` and named, the rest of the run completes, the
//! refusal is remembered while the file is unchanged (not parsed again, not drift),
//! and the index records it for `loci status` and `loci stats`.

use std::path::Path;
use std::time::{Duration, Instant};

use loci_index::{FileBudget, IndexOptions, IndexReport, NoProgress, index_workspace};

/// About 1 MiB of ordinary Rust: far more than 10 ms of parsing in any build.
fn big_rust() -> String {
    let one = "fn main() { let x = vec![1, 2, 3]; println!(\"{x:?}\"); }\n";
    one.repeat((1 << 20) / one.len() - 1)
}

fn run(root: &Path, budget_ms: u64) -> IndexReport {
    let mut opts = IndexOptions::new(root);
    opts.file_budget = FileBudget::new(Duration::from_millis(budget_ms));
    index_workspace(&opts, &NoProgress).unwrap()
}

fn reasons(report: &IndexReport) -> Vec<(String, String)> {
    report
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason.name().to_string()))
        .collect()
}

fn recorded(root: &Path) -> loci_index::SkippedFiles {
    let conn = loci_store::open_index_read_only(&loci_store::index_path_for(root)).unwrap();
    loci_index::recorded_skips(&conn, 100).unwrap()
}

#[test]
fn a_file_over_its_budget_is_skipped_as_timeout_and_the_rest_is_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("ok.rs"),
        "fn fine() { helper(); }\nfn helper() {}\n",
    )
    .unwrap();
    std::fs::write(root.join("big.rs"), big_rust()).unwrap();

    let started = Instant::now();
    let report = run(root, 10);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(
        reasons(&report),
        [("big.rs".to_string(), "timeout".to_string())]
    );
    let detail = report.skipped[0].detail.as_deref().unwrap_or("");
    assert!(
        detail.contains("10ms") && detail.contains("index.fileBudgetMs"),
        "{detail}"
    );
    assert_eq!((report.files_indexed, report.symbols), (1, 2), "{report:?}");
    assert_eq!(report.skipped_by_reason.get("timeout"), Some(&1));

    // The index names it for status and stats.
    let skips = recorded(root);
    assert_eq!(skips.total, 1);
    assert_eq!(skips.by_reason.get("timeout"), Some(&1));
    assert_eq!(skips.files[0].path, "big.rs");
    assert_eq!(skips.files[0].detail.as_deref(), Some(detail));

    // Not drift, not parsed again, and a second run writes nothing.
    let drift = loci_index::drift::drift(&loci_index::drift::DriftOptions::new(root)).unwrap();
    assert!(!drift.is_drift(), "{drift:?}");
    let again = run(root, 10);
    assert!(!again.wrote, "{again:?}");
    assert_eq!(again.files_parsed, 0);
    assert_eq!(reasons(&again), reasons(&report));

    // With a budget it fits in, once it changes, it is indexed and no longer recorded.
    std::fs::write(
        root.join("big.rs"),
        format!("fn now_small() {{}}\n{}", "// x\n".repeat(10)),
    )
    .unwrap();
    let fixed = run(root, 10_000);
    assert!(fixed.skipped.is_empty(), "{fixed:?}");
    assert_eq!(fixed.files_indexed, 2);
    assert_eq!(recorded(root).total, 0);
}

#[test]
fn the_skipped_record_keeps_every_reason_and_follows_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("ok.rs"), "fn fine() {}\n").unwrap();
    std::fs::write(root.join("nul.rs"), b"fn a() {}\0\0").unwrap();
    std::fs::write(root.join("wide.py"), [0xFF, 0xFE, b'x', 0]).unwrap();
    let first = run(root, 10_000);
    assert_eq!(
        reasons(&first),
        [
            ("nul.rs".to_string(), "binary".to_string()),
            ("wide.py".to_string(), "not_utf8".to_string())
        ]
    );
    let skips = recorded(root);
    assert_eq!(skips.total, 2);
    assert_eq!(skips.by_reason.get("binary"), Some(&1));
    assert_eq!(skips.by_reason.get("not_utf8"), Some(&1));

    // An unchanged tree: the record stands and nothing is written.
    assert!(!run(root, 10_000).wrote);
    assert_eq!(recorded(root).total, 2);

    // A binary file removed: the record follows.
    std::fs::remove_file(root.join("nul.rs")).unwrap();
    run(root, 10_000);
    let skips = recorded(root);
    assert_eq!(skips.total, 1);
    assert_eq!(skips.files[0].path, "wide.py");
}

/// Resolution is bounded per file, and the rules stay near linear in a name's
/// definitions: 20,000 types named `type` (as in boost) once made the
/// "a type, not also its same-named members" rule compare every candidate with every
/// type (4×10⁸ steps for each reference), which ran past the budget and left the
/// file's references unresolved.
#[test]
fn a_name_with_twenty_thousand_definitions_resolves_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let defs: String = (0..20_000)
        .map(|i| format!("namespace n{i} {{ struct type {{}}; }}\n"))
        .collect();
    std::fs::write(root.join("defs.hpp"), defs).unwrap();
    // Fifty distinct references (each qualifier is its own resolution).
    let uses: String = (0..50).map(|i| format!("n{i}::type a{i}; ")).collect();
    std::fs::write(root.join("use.cpp"), format!("void f() {{ {uses}}}\n")).unwrap();
    // 10 s: the header's parse alone takes seconds in a debug build on a loaded CI
    // machine; the quadratic rule took minutes.
    let report = run(root, 10_000);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.files_indexed, 2);
}

/// The fuzz campaign's Kotlin input (970 bytes of a real file with mangled lines) that
/// tree-sitter-kotlin-ng 1.1's own scanner and error recovery take seconds to parse
/// (6 s in the fuzz build): no extractor loop to fix, so the budget is what bounds it.
/// Under a one-second budget it is skipped as `timeout` and its neighbour is indexed.
#[test]
fn the_fuzz_found_slow_kotlin_input_is_stopped_by_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let slow =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/budget_inputs/kotlin_scanner_slow.kt");
    std::fs::copy(slow, root.join("Slow.kt")).unwrap();
    std::fs::write(
        root.join("Ok.kt"),
        "fun fine() { helper() }\nfun helper() {}\n",
    )
    .unwrap();

    let started = Instant::now();
    let report = run(root, 1_000);
    let took = started.elapsed();
    assert_eq!(
        reasons(&report),
        [("Slow.kt".to_string(), "timeout".to_string())]
    );
    assert_eq!((report.files_indexed, report.symbols), (1, 2), "{report:?}");
    // The budget, then at most the watchdog's second budget: never the parse's seconds.
    assert!(took < Duration::from_secs(20), "{took:?}");
}
