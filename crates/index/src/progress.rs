//! How a run reports its parse phase to a caller (a terminal's progress bar, or nothing).

/// Receives progress of the parse phase (a TTY progress bar, or nothing).
pub trait Progress: Sync {
    /// The number of files to parse is known.
    fn start(&self, total: u64);
    /// `n` more files were parsed.
    fn advance(&self, n: u64);
    /// Parsing is done.
    fn finish(&self);
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}
