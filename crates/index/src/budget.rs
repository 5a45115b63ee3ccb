//! How long one file's work may take, and the clock checks that hold it to that.
//!
//! Every file an index run reads is parsed, walked and (later) resolved under a time
//! budget ([`FileBudget`], `index.fileBudgetMs`): the parse through tree-sitter's
//! progress callback, the walk and every long loop of extraction and resolution
//! through a [`Deadline`] they consult as they go. A file over its budget is skipped
//! and reported by name (`timeout`), never allowed to hold up the run; the parse pool's
//! watchdog (`parse_pool.rs`) stops waiting for a file that ignores its deadline.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Default base of `index.fileBudgetMs`: far above any real file (the largest files of
/// a crates.io tree, the Python standard library and npm's minified bundles parse and
/// extract in well under a second even in a debug build), and short enough that a
/// pathological file costs a run seconds, not minutes.
pub const DEFAULT_FILE_BUDGET: Duration = Duration::from_secs(10);

/// The range `index.fileBudgetMs` accepts, in milliseconds: below 10 ms real files
/// would time out on a loaded machine; above an hour the budget bounds nothing.
pub const FILE_BUDGET_MS_RANGE: std::ops::RangeInclusive<u64> = 10..=3_600_000;

/// The time one file's work may take: the base for a file up to 1 MiB, as much again
/// for every further MiB (work grows with the file; a 20 MiB minified bundle may take
/// twenty times what a small file may).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBudget {
    base: Duration,
}

impl Default for FileBudget {
    fn default() -> Self {
        FileBudget::new(DEFAULT_FILE_BUDGET)
    }
}

impl FileBudget {
    /// A budget of `base` per MiB (and at least `base`).
    pub fn new(base: Duration) -> FileBudget {
        FileBudget { base }
    }

    /// The base: what a file up to 1 MiB may take.
    pub fn base(self) -> Duration {
        self.base
    }

    /// What a file of `bytes` may take.
    pub fn for_size(self, bytes: u64) -> Duration {
        let mib = bytes.div_ceil(1 << 20).max(1);
        self.base
            .saturating_mul(u32::try_from(mib).unwrap_or(u32::MAX))
    }
}

/// Calls of [`Deadline::passed`] between two looks at the clock: a look costs about
/// 20 ns, a walk step about as much, so the check stays under a few percent.
const CALLS_PER_CLOCK_CHECK: u32 = 64;

/// A point in time after which a file's work stops. Cheap to ask often: it looks at
/// the clock only every [`CALLS_PER_CLOCK_CHECK`] calls, and once passed stays passed.
#[derive(Debug)]
pub(crate) struct Deadline {
    at: Option<Instant>,
    countdown: Cell<u32>,
    passed: Cell<bool>,
}

impl Deadline {
    /// A deadline `limit` from now (a limit too far to represent never passes).
    pub(crate) fn after(limit: Duration) -> Deadline {
        Deadline {
            at: Instant::now().checked_add(limit),
            countdown: Cell::new(CALLS_PER_CLOCK_CHECK),
            passed: Cell::new(false),
        }
    }

    /// Whether the deadline has passed, looking at the clock now: for loops whose every
    /// step is costly (one reference's resolution).
    pub(crate) fn passed_now(&self) -> bool {
        let passed = self.passed.get() || self.at.is_some_and(|at| Instant::now() >= at);
        self.passed.set(passed);
        passed
    }

    /// Whether the deadline has passed, as of the last look at the clock: for loops of
    /// cheap steps (a tree walk's nodes), which look once every
    /// [`CALLS_PER_CLOCK_CHECK`] calls.
    pub(crate) fn passed(&self) -> bool {
        if self.passed.get() {
            return true;
        }
        let left = self.countdown.get();
        if left > 0 {
            self.countdown.set(left - 1);
            return false;
        }
        self.countdown.set(CALLS_PER_CLOCK_CHECK);
        let passed = self.at.is_some_and(|at| Instant::now() >= at);
        self.passed.set(passed);
        passed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_grows_with_every_started_mib() {
        let budget = FileBudget::new(Duration::from_secs(2));
        assert_eq!(budget.for_size(0), Duration::from_secs(2));
        assert_eq!(budget.for_size(1 << 20), Duration::from_secs(2));
        assert_eq!(budget.for_size((1 << 20) + 1), Duration::from_secs(4));
        assert_eq!(budget.for_size(20 << 20), Duration::from_secs(40));
        assert_eq!(
            FileBudget::new(Duration::MAX).for_size(u64::MAX),
            Duration::MAX
        );
    }

    #[test]
    fn a_deadline_passes_within_a_check_interval_of_its_time_and_stays_passed() {
        let started = Instant::now();
        let deadline = Deadline::after(Duration::from_millis(20));
        let mut calls = 0u64;
        while !deadline.passed() {
            calls += 1;
            assert!(started.elapsed() < Duration::from_secs(10), "never passed");
        }
        assert!(started.elapsed() >= Duration::from_millis(20));
        assert!(calls > 0);
        assert!(deadline.passed());
    }

    #[test]
    fn passed_now_looks_at_the_clock_every_time() {
        let deadline = Deadline::after(Duration::from_millis(5));
        std::thread::sleep(Duration::from_millis(10));
        assert!(deadline.passed_now());
        assert!(deadline.passed());
    }

    #[test]
    fn a_far_deadline_never_passes() {
        let deadline = Deadline::after(Duration::MAX);
        for _ in 0..1_000 {
            assert!(!deadline.passed());
        }
    }
}
