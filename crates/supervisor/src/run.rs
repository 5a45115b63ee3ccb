//! The shared state of one running child: stop requests in, the outcome out.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::outcome::Outcome;
use crate::poison::lock;
use crate::stdin::StdinPipe;

/// Why a run is being stopped early, by request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum StopRequest {
    Cancel = 1,
    Teardown = 2,
}

/// A callback run once with the outcome.
pub(crate) type OnDone = Box<dyn FnOnce(Outcome) + Send + 'static>;

#[derive(Default)]
struct Slot {
    outcome: Option<Outcome>,
    on_done: Vec<OnDone>,
}

pub(crate) struct Run {
    pub(crate) id: u64,
    pub(crate) owner: u64,
    pub(crate) pid: u32,
    pub(crate) grace: Duration,
    stop: AtomicU8,
    /// eventfd the supervision thread polls; written on a stop request.
    pub(crate) wake: File,
    slot: Mutex<Slot>,
    done: Condvar,
    /// The streamed stdin, set once right after spawn (`stdin_stream` runs).
    pub(crate) stdin: OnceLock<Arc<StdinPipe>>,
}

impl Run {
    pub(crate) fn new(id: u64, owner: u64, pid: u32, grace: Duration, wake: File) -> Self {
        Run {
            id,
            owner,
            pid,
            grace,
            stop: AtomicU8::new(0),
            wake,
            slot: Mutex::new(Slot::default()),
            done: Condvar::new(),
            stdin: OnceLock::new(),
        }
    }

    /// Records the first stop request and wakes the supervision thread.
    /// Later requests are ignored, so the group is signalled exactly once
    /// whichever paths (cancel, drop, exit, signal) ask.
    pub(crate) fn request_stop(&self, why: StopRequest) -> bool {
        let first = self
            .stop
            .compare_exchange(0, why as u8, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        if first {
            let _ = (&self.wake).write(&1u64.to_ne_bytes());
        }
        first
    }

    pub(crate) fn stop_requested(&self) -> Option<StopRequest> {
        match self.stop.load(Ordering::SeqCst) {
            1 => Some(StopRequest::Cancel),
            2 => Some(StopRequest::Teardown),
            _ => None,
        }
    }

    pub(crate) fn publish(&self, outcome: Outcome) {
        let callbacks = {
            let mut slot = lock(&self.slot);
            slot.outcome = Some(outcome.clone());
            std::mem::take(&mut slot.on_done)
        };
        self.done.notify_all();
        for cb in callbacks {
            cb(outcome.clone());
        }
    }

    /// Runs `cb` with the outcome: later on the supervision thread, or now on
    /// this thread if the run already ended.
    pub(crate) fn on_done(&self, cb: OnDone) {
        let mut slot = lock(&self.slot);
        match &slot.outcome {
            Some(o) => {
                let o = o.clone();
                drop(slot);
                cb(o);
            }
            None => slot.on_done.push(cb),
        }
    }

    pub(crate) fn try_outcome(&self) -> Option<Outcome> {
        lock(&self.slot).outcome.clone()
    }

    pub(crate) fn is_finished(&self) -> bool {
        lock(&self.slot).outcome.is_some()
    }

    pub(crate) fn wait(&self) -> Outcome {
        let mut slot = lock(&self.slot);
        loop {
            if let Some(o) = &slot.outcome {
                return o.clone();
            }
            slot = self.done.wait(slot).unwrap_or_else(PoisonError::into_inner);
        }
    }

    pub(crate) fn wait_until(&self, deadline: Instant) -> Option<Outcome> {
        let mut slot = lock(&self.slot);
        loop {
            if let Some(o) = &slot.outcome {
                return Some(o.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            slot = self
                .done
                .wait_timeout(slot, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}
