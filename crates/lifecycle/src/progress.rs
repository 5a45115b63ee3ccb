//! A background run's parse progress, from the child to whoever owns the run.
//!
//! A maintenance run is loci re-executing itself with `--json`, which prints only the
//! final report. With [`PROGRESS_VAR`] set to [`PROGRESS_LINES`] in its environment,
//! its index run also writes one line per step on stderr, `loci-progress TOTAL DONE`
//! (at most one every [`LINE_INTERVAL`], plus the first and the last), which the owner
//! reads back into a [`RunProgress`]. Both ends live here so they always agree.

use std::io::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that turns progress lines on.
pub const PROGRESS_VAR: &str = "LOCI_PROGRESS";
/// Its value for progress lines on stderr.
pub const PROGRESS_LINES: &str = "lines";
/// How often a line is written at most while files are parsed.
pub const LINE_INTERVAL: Duration = Duration::from_millis(100);
/// What every progress line starts with.
const PREFIX: &str = "loci-progress ";
/// Bytes of an unfinished line kept between chunks (a line is far shorter).
const MAX_PENDING: usize = 256;

/// Whether this process was asked for progress lines.
pub fn lines_requested() -> bool {
    std::env::var(PROGRESS_VAR).is_ok_and(|v| v == PROGRESS_LINES)
}

/// Whether `line` is a progress line (kept out of a run's error message).
pub fn is_progress_line(line: &str) -> bool {
    line.starts_with(PREFIX)
}

/// The files a run has to parse and has parsed so far, shared between the thread
/// that reads the child's stderr and the ones that report on the run.
#[derive(Debug, Clone, Default)]
pub struct RunProgress(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    total: AtomicU64,
    done: AtomicU64,
}

impl RunProgress {
    /// `(files to parse, files parsed)`; both 0 until the run has walked the tree.
    pub fn get(&self) -> (u64, u64) {
        (
            self.0.total.load(Ordering::Relaxed),
            self.0.done.load(Ordering::Relaxed),
        )
    }

    fn set(&self, total: u64, done: u64) {
        self.0.total.store(total, Ordering::Relaxed);
        self.0.done.store(done.min(total), Ordering::Relaxed);
    }
}

/// Reads progress lines out of stderr chunks, whatever their boundaries.
#[derive(Debug, Default)]
pub struct ProgressLineReader {
    pending: Vec<u8>,
}

impl ProgressLineReader {
    /// Takes one chunk of the child's stderr and records every complete progress line.
    pub fn feed(&mut self, chunk: &[u8], into: &RunProgress) {
        for &b in chunk {
            if b == b'\n' {
                if let Some((total, done)) = parse(&self.pending) {
                    into.set(total, done);
                }
                self.pending.clear();
            } else if self.pending.len() < MAX_PENDING {
                self.pending.push(b);
            }
        }
    }
}

fn parse(line: &[u8]) -> Option<(u64, u64)> {
    let text = std::str::from_utf8(line).ok()?;
    let rest = text.strip_prefix(PREFIX)?;
    let (total, done) = rest.trim().split_once(' ')?;
    Some((total.parse().ok()?, done.parse().ok()?))
}

/// The child's end: an index [`loci_index::Progress`] that writes progress lines on
/// stderr.
#[derive(Debug)]
pub struct ProgressLines {
    total: AtomicU64,
    done: AtomicU64,
    last: Mutex<Option<Instant>>,
}

impl Default for ProgressLines {
    fn default() -> Self {
        ProgressLines {
            total: AtomicU64::new(0),
            done: AtomicU64::new(0),
            last: Mutex::new(None),
        }
    }
}

impl ProgressLines {
    fn write(&self, force: bool) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if !force && last.is_some_and(|t| now.duration_since(t) < LINE_INTERVAL) {
            return;
        }
        *last = Some(now);
        let line = format!(
            "{PREFIX}{} {}\n",
            self.total.load(Ordering::Relaxed),
            self.done.load(Ordering::Relaxed)
        );
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

impl loci_index::Progress for ProgressLines {
    fn start(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.write(true);
    }
    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        self.write(false);
    }
    fn finish(&self) {
        self.done
            .store(self.total.load(Ordering::Relaxed), Ordering::Relaxed);
        self.write(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_are_read_and_other_lines_ignored() {
        let progress = RunProgress::default();
        let mut reader = ProgressLineReader::default();
        reader.feed(b"warning: something\nloci-progress 1", &progress);
        assert_eq!(progress.get(), (0, 0));
        reader.feed(b"0 4\nloci-progress x y\n", &progress);
        assert_eq!(progress.get(), (10, 4));
        reader.feed(b"loci-progress 10 10\n", &progress);
        assert_eq!(progress.get(), (10, 10));
        assert!(is_progress_line("loci-progress 1 1"));
        assert!(!is_progress_line("error: x"));
    }
}
