//! The parallel half of an index run: every file read and parsed on worker threads,
//! each file watched.
//!
//! A file's parse and extraction stop on their own at the file's deadline
//! (`budget.rs`), and a panic in them is caught and reported. This pool is the net
//! under both: a worker still busy with one file at twice its budget (a loop that never
//! looks at the deadline, a read that never returns) is abandoned. Its file is
//! reported as `timeout`, a new worker takes its place, and the run completes without
//! it. The abandoned thread can't be stopped from outside; it is lowered to the least
//! CPU priority and whatever it produces later is discarded.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, Sender};

use crate::Lang;
use crate::parse::{self, FileLimits, Outcome};
use crate::walk::{Found, SkipReason};

/// One file to read and parse.
pub(crate) struct ParseJob {
    pub found: Found,
    pub lang: Lang,
    /// The stored content hash, when the stored facts are this build's: an equal hash
    /// means only the stat changed.
    pub known_hash: Option<Vec<u8>>,
}

/// How often the watchdog looks at the workers when no result arrives.
const WATCH_INTERVAL: Duration = Duration::from_millis(50);

/// How much longer than its budget a worker may hold one file before it is abandoned:
/// the file's own deadline stops well-behaved work at 1×.
const ABANDON_AFTER_BUDGETS: u32 = 2;

/// Stack reserved for each worker. Extraction walks trees without recursion and every
/// known recursion over a syntax tree is a loop or bounded, but a stack overflow aborts
/// the whole process, not one file: a deep reserve (address space, committed only as
/// used) is the net under any recursion still unknown.
const WORKER_STACK_BYTES: usize = 64 << 20;

/// A job's outcome was not sent yet.
const PENDING: u8 = 0;
/// Its worker sent its outcome.
const DONE: u8 = 1;
/// The watchdog gave up on it and sent `timeout` in its place.
const ABANDONED: u8 = 2;

/// What a worker is doing, for the watchdog.
#[derive(Clone, Copy)]
struct Slot {
    /// Bumped when the slot's worker is abandoned: the old worker's later reports about
    /// the slot are ignored.
    generation: u64,
    /// The job in hand and since when.
    busy: Option<(usize, Instant)>,
    /// The worker's thread id, to lower an abandoned worker's priority.
    tid: Option<rustix::thread::Pid>,
}

/// What a worker does with one job: [`parse_one`] in every run; tests put a function
/// that panics or never stops in its place.
type Work = fn(&ParseJob, FileLimits) -> Outcome;

/// Reads and parses one file.
fn parse_one(job: &ParseJob, limits: FileLimits) -> Outcome {
    parse::parse_file(&job.found, job.lang, limits, job.known_hash.as_deref())
}

struct Shared {
    work: Work,
    jobs: Vec<ParseJob>,
    limits: FileLimits,
    next: AtomicUsize,
    claims: Vec<AtomicU8>,
    slots: Mutex<Vec<Slot>>,
    /// The receiver went away (the writer failed): take no more jobs.
    stop: AtomicBool,
    /// Workers that own a slot (started and neither ended nor abandoned).
    live: AtomicUsize,
}

impl Shared {
    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        // A worker never panics while holding the lock; a poisoned lock's data is sound.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next job for the worker of `slot` at `generation`, marked busy with it;
    /// `None` when the jobs ran out, the run stopped, or the worker was abandoned.
    fn take_job(&self, slot: usize, generation: u64) -> Option<usize> {
        let mut slots = self.slots();
        if slots[slot].generation != generation || self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        if index >= self.jobs.len() {
            return None;
        }
        slots[slot].busy = Some((index, Instant::now()));
        Some(index)
    }

    /// Marks the worker of `slot` at `generation` idle; whether it still owns the slot.
    fn set_idle(&self, slot: usize, generation: u64) -> bool {
        let mut slots = self.slots();
        let owned = slots[slot].generation == generation;
        if owned {
            slots[slot].busy = None;
        }
        owned
    }

    /// A worker that still owns its slot ends.
    fn end(&self, slot: usize, generation: u64) {
        if self.slots()[slot].generation == generation {
            self.live.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Reads and parses every job on `threads` workers, sending each job's outcome to
/// `out` as it completes (in no particular order). Returns once every job has had an
/// outcome sent (or `out`'s receiver is gone); exactly one outcome per job.
pub(crate) fn parse_all(
    jobs: Vec<ParseJob>,
    threads: usize,
    limits: FileLimits,
    out: &Sender<Outcome>,
) {
    run_all(jobs, threads, limits, out, parse_one);
}

/// [`parse_all`] with `work` done for each job.
fn run_all(
    jobs: Vec<ParseJob>,
    threads: usize,
    limits: FileLimits,
    out: &Sender<Outcome>,
    work: Work,
) {
    let total = jobs.len();
    if total == 0 {
        return;
    }
    let threads = threads.clamp(1, total);
    let shared = Arc::new(Shared {
        work,
        claims: (0..total).map(|_| AtomicU8::new(PENDING)).collect(),
        jobs,
        limits,
        next: AtomicUsize::new(0),
        slots: Mutex::new(vec![
            Slot {
                generation: 0,
                busy: None,
                tid: None,
            };
            // One per worker, and one for the calling thread should no worker start.
            threads + 1
        ]),
        stop: AtomicBool::new(false),
        live: AtomicUsize::new(0),
    });
    let (results_tx, results_rx) = crossbeam_channel::bounded::<Outcome>(threads * 4);
    for slot in 0..threads {
        start_worker(&shared, slot, 0, results_tx.clone());
    }
    let mut outstanding = total;
    let mut last_watch = Instant::now();
    while outstanding > 0 {
        match results_rx.recv_timeout(WATCH_INTERVAL) {
            Ok(outcome) => {
                outstanding -= 1;
                if out.send(outcome).is_err() {
                    break;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            // Every worker ended (they only end when the jobs run out): nothing more.
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last_watch.elapsed() >= WATCH_INTERVAL {
            last_watch = Instant::now();
            for timed_out in abandon_overdue(&shared, &results_tx) {
                outstanding -= 1;
                if out.send(timed_out).is_err() {
                    outstanding = 0;
                    break;
                }
            }
            while outstanding > 0 && shared.live.load(Ordering::Acquire) == 0 {
                // No worker could be started (the system's thread limit): the rest is
                // parsed here.
                let Some(outcome) = parse_next_here(&shared) else {
                    break;
                };
                outstanding -= 1;
                if out.send(outcome).is_err() {
                    outstanding = 0;
                }
            }
        }
    }
    shared.stop.store(true, Ordering::Relaxed);
}

/// Abandons every worker past [`ABANDON_AFTER_BUDGETS`] times its file's budget,
/// starting one in its place; returns the `timeout` outcomes of their files.
fn abandon_overdue(shared: &Arc<Shared>, results_tx: &Sender<Outcome>) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    let mut replaced = Vec::new();
    {
        let mut slots = shared.slots();
        for (index, slot) in slots.iter_mut().enumerate() {
            let Some((job, since)) = slot.busy else {
                continue;
            };
            let found = &shared.jobs[job].found;
            let budget = shared.limits.budget.for_size(found.stat.size);
            let allowed = budget.saturating_mul(ABANDON_AFTER_BUDGETS);
            if since.elapsed() <= allowed {
                continue;
            }
            if shared.claims[job]
                .compare_exchange(PENDING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue; // it finished just now
            }
            tracing::error!(
                path = %found.rel.display(),
                budget_ms = budget.as_millis() as u64,
                "a file's parse ignored its deadline; its worker is abandoned"
            );
            if let Some(tid) = slot.tid {
                // The least CPU priority for a thread that may spin until the process
                // ends (on Linux, a thread id names the thread alone).
                let _ = rustix::process::setpriority_process(Some(tid), 19);
            }
            outcomes.push(parse::skip(
                found,
                SkipReason::Timeout,
                Some(format!(
                    "its parse did not stop within {allowed:?} ({ABANDON_AFTER_BUDGETS}× its \
                     budget of {budget:?}, index.fileBudgetMs) and was abandoned"
                )),
            ));
            *slot = Slot {
                generation: slot.generation + 1,
                busy: None,
                tid: None,
            };
            shared.live.fetch_sub(1, Ordering::AcqRel);
            replaced.push((index, slot.generation));
        }
    }
    for (index, generation) in replaced {
        start_worker(shared, index, generation, results_tx.clone());
    }
    outcomes
}

fn start_worker(shared: &Arc<Shared>, slot: usize, generation: u64, results: Sender<Outcome>) {
    shared.live.fetch_add(1, Ordering::AcqRel);
    let worker = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name(format!("loci-parse-{slot}"))
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || {
            worker_loop(&worker, slot, generation, &results);
            worker.end(slot, generation);
        });
    if let Err(e) = spawned {
        // The other workers take its share; with none left, `parse_all` parses the
        // rest on its own thread.
        shared.live.fetch_sub(1, Ordering::AcqRel);
        tracing::error!(error = %e, "cannot start a parse worker");
    }
}

/// Parses the next job on the calling thread, as the worker of a slot of its own (the
/// file's own deadline still holds; only the watchdog's net is missing).
fn parse_next_here(shared: &Shared) -> Option<Outcome> {
    // The last slot is this thread's own (see `parse_all`).
    let slot = shared.slots().len() - 1;
    let generation = shared.slots()[slot].generation;
    let index = shared.take_job(slot, generation)?;
    let outcome = parse_job(shared, index);
    shared.set_idle(slot, generation);
    claim(shared, index).then_some(outcome)
}

/// A worker: takes jobs until none are left, sending each outcome it still owns.
fn worker_loop(shared: &Shared, slot: usize, generation: u64, results: &Sender<Outcome>) {
    {
        let mut slots = shared.slots();
        if slots[slot].generation == generation {
            slots[slot].tid = Some(rustix::thread::gettid());
        }
    }
    while let Some(index) = shared.take_job(slot, generation) {
        let outcome = parse_job(shared, index);
        if claim(shared, index) && results.send(outcome).is_err() {
            return;
        }
        if !shared.set_idle(slot, generation) {
            return; // abandoned: a replacement has the slot
        }
    }
}

/// Whether the outcome of job `index` is still to be sent (and now is the caller's to send).
fn claim(shared: &Shared, index: usize) -> bool {
    shared.claims[index]
        .compare_exchange(PENDING, DONE, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Reads and parses job `index`, a panic turned into its `panic` outcome.
fn parse_job(shared: &Shared, index: usize) -> Outcome {
    let job = &shared.jobs[index];
    catch_unwind(AssertUnwindSafe(|| (shared.work)(job, shared.limits))).unwrap_or_else(|panic| {
        let message = panic_message(panic.as_ref());
        tracing::error!(path = %job.found.rel.display(), panic = %message, "a file's extraction panicked");
        parse::skip(
            &job.found,
            SkipReason::Panic,
            Some(format!("its extraction panicked: {message}")),
        )
    })
}

/// The text a panic was raised with.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::budget::FileBudget;
    use crate::walk::{RelPath, Stat};

    fn job(name: &str) -> ParseJob {
        ParseJob {
            found: Found {
                rel: RelPath::from_bytes(name.as_bytes().to_vec()),
                abs: PathBuf::from("/nonexistent").join(name),
                stat: Stat {
                    size: 10,
                    mtime_ns: 0,
                    inode: 0,
                },
            },
            lang: Lang::Rust,
            known_hash: None,
        }
    }

    fn limits(budget_ms: u64) -> FileLimits {
        FileLimits {
            max_bytes: 1 << 20,
            budget: FileBudget::new(Duration::from_millis(budget_ms)),
        }
    }

    /// Runs `work` over files `f0.rs`..: (path, reason or "ok") of every outcome, sorted.
    fn outcomes(files: usize, threads: usize, budget_ms: u64, work: Work) -> Vec<(String, String)> {
        let jobs = (0..files).map(|i| job(&format!("f{i}.rs"))).collect();
        let (tx, rx) = crossbeam_channel::unbounded();
        run_all(jobs, threads, limits(budget_ms), &tx, work);
        drop(tx);
        let mut seen: Vec<(String, String)> = rx
            .iter()
            .map(|o| match o {
                Outcome::Skipped { skip, .. } => (skip.path, skip.reason.name().to_string()),
                Outcome::Touched { rel, .. } => (rel.display().into_owned(), "ok".into()),
                Outcome::Changed(p) => (p.rel.display().into_owned(), "ok".into()),
            })
            .collect();
        seen.sort();
        seen
    }

    fn ok(job: &ParseJob, _: FileLimits) -> Outcome {
        Outcome::Touched {
            rel: job.found.rel.clone(),
            stat: job.found.stat,
        }
    }

    fn panics_on_f3(job: &ParseJob, limits: FileLimits) -> Outcome {
        if job.found.rel.display() == "f3.rs" {
            panic!("an extractor bug");
        }
        ok(job, limits)
    }

    /// Never returns for `f1.rs` (a loop that ignores the file's deadline), until the
    /// test process ends.
    fn spins_on_f1(job: &ParseJob, limits: FileLimits) -> Outcome {
        if job.found.rel.display() == "f1.rs" {
            loop {
                std::thread::park_timeout(Duration::from_millis(5));
            }
        }
        ok(job, limits)
    }

    #[test]
    fn every_job_has_exactly_one_outcome() {
        for threads in [1, 2, 7] {
            let seen = outcomes(100, threads, 10_000, ok);
            assert_eq!(seen.len(), 100);
            assert!(seen.iter().all(|(_, r)| r == "ok"));
            let mut paths: Vec<_> = seen.iter().map(|(p, _)| p.clone()).collect();
            paths.dedup();
            assert_eq!(paths.len(), 100, "a job reported twice");
        }
    }

    #[test]
    fn a_panicking_file_is_reported_and_the_rest_complete() {
        let seen = outcomes(10, 2, 10_000, panics_on_f3);
        assert_eq!(seen.len(), 10);
        let bad: Vec<_> = seen.iter().filter(|(_, r)| r != "ok").collect();
        assert_eq!(bad, [&("f3.rs".to_string(), "panic".to_string())]);
    }

    #[test]
    fn a_file_that_never_stops_is_abandoned_at_twice_its_budget_and_the_rest_complete() {
        let started = Instant::now();
        let seen = outcomes(20, 2, 100, spins_on_f1);
        let took = started.elapsed();
        assert_eq!(seen.len(), 20);
        let bad: Vec<_> = seen.iter().filter(|(_, r)| r != "ok").collect();
        assert_eq!(bad, [&("f1.rs".to_string(), "timeout".to_string())]);
        // Abandoned at 2× its 100 ms budget, noticed within a watch interval or two.
        assert!(took >= Duration::from_millis(200), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    #[test]
    fn with_one_thread_a_stuck_worker_is_replaced() {
        let seen = outcomes(5, 1, 50, spins_on_f1);
        assert_eq!(seen.len(), 5);
        assert_eq!(seen.iter().filter(|(_, r)| r == "ok").count(), 4);
    }
}
