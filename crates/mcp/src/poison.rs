//! Locks that outlive a panic: a tool call that panicked while holding one of the
//! host's or a session's mutexes must not take every later call of the process down.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, taking the data even when a panicking thread poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
