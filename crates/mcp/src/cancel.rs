//! What stops one tool call: the read's [`CancelToken`] (SQLite's progress handler
//! checks it) and hooks a tool registers for work elsewhere (a statement in the killable
//! worker is cancelled through its service). The call's task fires it when the client
//! cancels (`notifications/cancelled`), when the session ends, and when the call's
//! future is dropped (the client went away).

use std::sync::{Arc, Mutex};

use loci_api::CancelToken;

use crate::poison::lock;

type Hook = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Hooks {
    fired: bool,
    pending: Vec<Hook>,
}

/// One call's cancellation: cheap to clone, shared by the call's task and its tool.
#[derive(Clone, Default)]
pub struct CallCancel {
    token: CancelToken,
    hooks: Arc<Mutex<Hooks>>,
}

impl std::fmt::Debug for CallCancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallCancel")
            .field("cancelled", &self.token.is_cancelled())
            .finish()
    }
}

impl CallCancel {
    /// A call not cancelled yet.
    pub fn new() -> CallCancel {
        CallCancel::default()
    }

    /// The token reads of this call hold.
    pub fn token(&self) -> CancelToken {
        self.token.clone()
    }

    /// Runs `hook` when the call is cancelled (at once, if it already was).
    pub fn on_cancel(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hooks = lock(&self.hooks);
        if hooks.fired {
            drop(hooks);
            hook();
        } else {
            hooks.pending.push(Box::new(hook));
        }
    }

    /// Cancels the call: the token, then every hook, once.
    pub fn fire(&self) {
        self.token.cancel();
        let pending = {
            let mut hooks = lock(&self.hooks);
            hooks.fired = true;
            std::mem::take(&mut hooks.pending)
        };
        for hook in pending {
            hook();
        }
    }
}

/// Fires its call's cancellation when dropped before [`FireOnDrop::disarm`]: the call's
/// task holds one, so a call whose future is dropped stops its work.
pub struct FireOnDrop(Option<CallCancel>);

impl FireOnDrop {
    /// Guards `cancel`.
    pub fn new(cancel: CallCancel) -> FireOnDrop {
        FireOnDrop(Some(cancel))
    }

    /// The call answered: nothing to stop.
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for FireOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.0.take() {
            cancel.fire();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn hooks_run_once_on_fire_or_at_once_after_it() {
        let runs = Arc::new(AtomicUsize::new(0));
        let c = CallCancel::new();
        let r = runs.clone();
        c.on_cancel(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        drop(FireOnDrop::new(c.clone()));
        c.fire();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(c.token().is_cancelled());
        let r = runs.clone();
        c.on_cancel(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        let quiet = CallCancel::new();
        FireOnDrop::new(quiet.clone()).disarm();
        assert!(!quiet.token().is_cancelled());
    }
}
