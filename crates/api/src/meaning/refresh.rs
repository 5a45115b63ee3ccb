//! Keeping the vectors file fresh from a long-lived process (issue #33): after a sync
//! leaves the index clean, [`Refresher::index_changed`] re-embeds what changed on a
//! thread of its own, so the next sync and every query go on meanwhile. One run at a
//! time per workspace; a change arriving during a run asks for one more run after it
//! (a flag, never a queue). Opt-in as `loci embed` is: a workspace without a vectors
//! file gets none, and without a model nothing runs (said once).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;

use super::embed::{EmbedReport, embed};
use super::store;
use crate::error::{ApiError, ErrorKind};
use crate::handle::Workspace;
use crate::poison::lock;

/// How often a long run reports its progress, at most.
const PROGRESS_EVERY_S: u64 = 2;

/// What a background embed reports (one JSON object per line in `loci watch --json`,
/// told from a sync's line by its `embed` field).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "embed", rename_all = "snake_case")]
pub enum RefreshEvent {
    /// Units embedded so far of those this run embeds (first, then every few seconds).
    Progress {
        /// Units embedded so far.
        done: u64,
        /// Units this run embeds.
        total: u64,
    },
    /// A run that changed the vectors file finished.
    Done(EmbedReport),
    /// A run failed (the model failed, the disk); the next clean sync tries again.
    Failed {
        /// Why.
        error: String,
    },
    /// No model is installed (or it did not load): nothing is embedded in this
    /// process; reported once.
    NoModel {
        /// Why.
        error: String,
        /// How to install one.
        #[serde(skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
    },
}

/// What [`Refresher::index_changed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poke {
    /// A run started on its own thread.
    Started,
    /// A run is under way: one more follows it.
    Again,
    /// The workspace has no vectors file (it never ran `loci embed`): nothing to keep.
    OptedOut,
    /// No model in this process: nothing runs.
    NoModel,
    /// The thread could not be started (reported as a failure).
    Failed,
}

/// Whether a run is under way, whether one more is wanted, whether the model is known
/// to be missing.
#[derive(Default)]
struct State {
    running: bool,
    again: bool,
    no_model: bool,
}

type Report = Box<dyn Fn(&RefreshEvent) + Send + Sync>;

struct Inner {
    ws: Workspace,
    report: Report,
    state: Mutex<State>,
}

/// One workspace's background embedder: cheap to clone, every clone the same
/// single-flight state.
#[derive(Clone)]
pub struct Refresher {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Refresher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refresher")
            .field("ws", &self.inner.ws)
            .finish()
    }
}

impl Refresher {
    /// A refresher for the workspace `ws`, reporting through `report` (called from the
    /// background thread).
    pub fn new(ws: Workspace, report: Report) -> Refresher {
        Refresher {
            inner: Arc::new(Inner {
                ws,
                report,
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The vectors file this refresher keeps.
    pub fn vectors_path(&self) -> PathBuf {
        store::path_for(self.inner.ws.index_path())
    }

    /// The index just became clean: re-embed what changed, in the background. Returns
    /// at once.
    pub fn index_changed(&self) -> Poke {
        if !self.vectors_path().exists() {
            return Poke::OptedOut;
        }
        {
            let mut st = lock(&self.inner.state);
            if st.no_model {
                return Poke::NoModel;
            }
            if st.running {
                st.again = true;
                return Poke::Again;
            }
            st.running = true;
        }
        let me = self.clone();
        match std::thread::Builder::new()
            .name("loci-meaning".into())
            .spawn(move || me.run_until_settled())
        {
            Ok(_) => Poke::Started,
            Err(e) => {
                lock(&self.inner.state).running = false;
                (self.inner.report)(&RefreshEvent::Failed {
                    error: format!("cannot start the background embed: {e}"),
                });
                Poke::Failed
            }
        }
    }

    /// Whether a run is under way (or about to start).
    pub fn running(&self) -> bool {
        lock(&self.inner.state).running
    }

    /// Runs, then once more for each time a change asked while it ran.
    fn run_until_settled(&self) {
        loop {
            self.run_once();
            let mut st = lock(&self.inner.state);
            if st.again && !st.no_model {
                st.again = false;
                continue;
            }
            st.running = false;
            st.again = false;
            return;
        }
    }

    fn run_once(&self) {
        let report = &self.inner.report;
        let mut last: Option<Instant> = None;
        let result = embed(&self.inner.ws, &mut |done, total| {
            let due = last.is_none_or(|t| t.elapsed().as_secs() >= PROGRESS_EVERY_S);
            if total > 0 && done < total && due {
                report(&RefreshEvent::Progress { done, total });
                last = Some(Instant::now());
            }
        });
        match result {
            Ok(r) if r.embedded > 0 || r.files_removed > 0 => report(&RefreshEvent::Done(r)),
            Ok(_) => {}
            Err(e) if e.kind == ErrorKind::ModelMissing => self.no_model(e),
            Err(e) => report(&RefreshEvent::Failed {
                error: e.message.clone(),
            }),
        }
    }

    /// The model is missing or broken for the rest of the process (it is loaded once):
    /// say so once and run no more.
    fn no_model(&self, e: ApiError) {
        let first = {
            let mut st = lock(&self.inner.state);
            !std::mem::replace(&mut st.no_model, true)
        };
        if first {
            (self.inner.report)(&RefreshEvent::NoModel {
                error: e.message,
                hint: e.hint,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use loci_lifecycle::Located;
    use loci_lifecycle::state::Decider;

    use super::*;

    #[test]
    fn a_workspace_without_a_vectors_file_runs_nothing_and_gets_none() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(Located {
            root: dir.path().to_path_buf(),
            index_path: dir.path().join(".loci/index.db"),
            decider: Decider::None,
        });
        let reports = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&reports);
        let r = Refresher::new(
            ws,
            Box::new(move |_| {
                seen.fetch_add(1, Ordering::SeqCst);
            }),
        );
        assert_eq!(r.index_changed(), Poke::OptedOut);
        assert_eq!(r.index_changed(), Poke::OptedOut);
        assert!(!r.running());
        assert!(!r.vectors_path().exists());
        assert_eq!(reports.load(Ordering::SeqCst), 0);
    }
}
