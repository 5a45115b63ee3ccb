//! Extraction time grows linearly with the input, for the shapes that once made it grow
//! with the square (found by scripts/fuzz.sh's campaign, issue #26): each shape is
//! extracted at a size and at sixteen times that size, and the larger must take less
//! than `MAX_RATIO` times as long (linear is 16, quadratic 256). Each extraction runs on a
//! thread of its own under a deadline, so a quadratic one fails instead of stalling.

use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use loci_index::Lang;
use loci_index::extract::extract;

/// Most the 16× input may take over the 1× one: three times linear, a fifth of quadratic.
const MAX_RATIO: f64 = 48.0;

/// How much larger the second input is.
const GROWTH: usize = 16;

/// Longest one extraction may take in a debug build before the shape counts as stuck.
const DEADLINE: Duration = Duration::from_secs(60);

/// One measurement at a time: the test harness runs tests in parallel, and a timing taken
/// while another test extracts is a timing of both.
static MEASURING: Mutex<()> = Mutex::new(());

/// The time of the fastest of three extractions of `source`.
fn fastest_extraction(lang: Lang, source: String) -> Result<Duration, String> {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let times: Vec<Duration> = (0..3)
            .map(|_| {
                let started = Instant::now();
                let facts = extract(lang, &source);
                let took = started.elapsed();
                assert!(facts.is_ok(), "{}", facts.unwrap_err());
                took
            })
            .collect();
        let _ = done.send(times.into_iter().min().unwrap());
    });
    finished
        .recv_timeout(DEADLINE)
        .map_err(|e| format!("no result within {DEADLINE:?}: {e}"))
}

/// Asserts that `shape(GROWTH × n)` takes less than [`MAX_RATIO`] times `shape(n)`.
fn assert_linear(name: &str, lang: Lang, n: usize, shape: fn(usize) -> String) {
    let _alone = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let small = fastest_extraction(lang, shape(n)).unwrap();
    let large = fastest_extraction(lang, shape(GROWTH * n))
        .unwrap_or_else(|e| panic!("{name} at {}: {e}", GROWTH * n));
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
    eprintln!(
        "{name}: {n} in {small:?}, {} in {large:?}: ×{ratio:.1}",
        GROWTH * n
    );
    assert!(
        ratio < MAX_RATIO,
        "{name}: {GROWTH}× the input took ×{ratio:.1} the time ({small:?} → {large:?})"
    );
}

#[test]
fn definitions_nested_thousands_deep() {
    // Each definition's qualified name once held every enclosing scope.
    assert_linear("mod a{ .. }", Lang::Rust, 1_000, |n| {
        format!("{}{}", "mod a{ fn f() {} ".repeat(n), "}".repeat(n))
    });
}

#[test]
fn macros_nested_thousands_deep() {
    // Each macro invocation once kept a copy of every enclosing scope.
    assert_linear("impl A{fn f(){m!{x}} ..", Lang::Rust, 500, |n| {
        format!("{}{}", "impl A{fn f(){m!{x}} ".repeat(n), "}}".repeat(n))
    });
}

#[test]
fn many_methods_of_one_type() {
    // Each method once looked for its receiver's type through every definition so far.
    assert_linear("func (t *T) M() {}", Lang::Go, 1_000, |n| {
        let methods: String = (0..n)
            .map(|i| format!("func (t *T) M{i}() {{}}\n"))
            .collect();
        format!("package p\ntype T struct{{}}\n{methods}")
    });
}

#[test]
fn calls_in_functions_nested_thousands_deep() {
    // Each `x.m()` once looked for `x`'s type in every enclosing function.
    assert_linear("fn f(){x.m(); ..", Lang::Rust, 500, |n| {
        format!("{}{}", "fn f(){x.m(); ".repeat(n), "}".repeat(n))
    });
}

#[test]
fn impl_blocks_nested_thousands_deep() {
    // Each reference once looked for its enclosing definition through every `impl`.
    assert_linear("impl A{ A; ..", Lang::Rust, 1_000, |n| {
        format!("{}{}", "impl A{ ".repeat(n), "}".repeat(n))
    });
}
