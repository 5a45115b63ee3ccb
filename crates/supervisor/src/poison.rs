//! Locks that outlive a panic: a thread that panicked while holding one of the
//! supervisor's mutexes leaves its data whole (every update is a single assignment), so
//! the other threads, and teardown above all, go on with it rather than panic in turn.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, taking the data even when a panicking thread poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
