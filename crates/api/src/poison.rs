//! Locks that a panic elsewhere does not poison for every later caller: the state
//! behind them (caches, tracking, queues) stays usable, and one failed request must not
//! fail all the next ones.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data even when a panicking thread poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
