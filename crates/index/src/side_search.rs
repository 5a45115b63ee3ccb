//! The side thread that builds a first index's search index while the writer writes the
//! graph (the file format and crash safety are `loci_store::search_index`'s).
//!
//! The thread runs at the lowest CPU priority: it fills whatever a core leaves idle (the
//! writer's single-threaded tail of index builds), and only takes a core of its own when
//! the run waits for it at the end. What it has not yet indexed waits in a queue bounded
//! in bytes; a full queue stalls the writer, which frees the cores it needs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use loci_store::search_index;

use crate::trigram;

/// The side file, next to the index; removed once installed.
const SIDE_FILE: &str = "search-build.db";

/// Most text waiting for the side thread, in bytes.
const QUEUE_BYTES: usize = 64 << 20;

/// Bytes waiting in the queue, and the writer's wake-up when they drop.
type Gate = Arc<(Mutex<usize>, Condvar)>;

/// A search index being built on the side.
pub(crate) struct SideSearch {
    /// `None` once every file was sent.
    sender: Option<Sender<(i64, String)>>,
    gate: Gate,
    thread: JoinHandle<rusqlite::Result<()>>,
    path: PathBuf,
}

impl SideSearch {
    /// Where a side build of the index in `index_dir` lives.
    pub(crate) fn path_in(index_dir: &Path) -> PathBuf {
        index_dir.join(SIDE_FILE)
    }

    /// Starts a side build, or `None` (with a warning) if it cannot: the caller then
    /// writes search terms with the graph, which is slower but the same index.
    pub(crate) fn start(index_dir: &Path) -> Option<SideSearch> {
        let path = Self::path_in(index_dir);
        let conn = match search_index::create_side(&path) {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "search index built inline");
                return None;
            }
        };
        let (sender, receiver) = crossbeam_channel::unbounded();
        let gate: Gate = Arc::new((Mutex::new(0), Condvar::new()));
        let thread_gate = Arc::clone(&gate);
        let thread = std::thread::Builder::new()
            .name("loci-search-index".into())
            .spawn(move || build(&conn, &receiver, &thread_gate));
        match thread {
            Ok(thread) => Some(SideSearch {
                sender: Some(sender),
                gate,
                thread,
                path,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "search index built inline");
                None
            }
        }
    }

    /// Queues one file's text (waiting while the queue is full).
    pub(crate) fn send(&self, file_id: i64, text: String) {
        let (queued, drained) = &*self.gate;
        let mut bytes = queued.lock().unwrap_or_else(|p| p.into_inner());
        while *bytes > 0 && *bytes + text.len() > QUEUE_BYTES && !self.thread.is_finished() {
            bytes = drained.wait(bytes).unwrap_or_else(|p| p.into_inner());
        }
        *bytes += text.len();
        drop(bytes);
        // A send fails only when the thread has stopped; `finish` reports why.
        if let Some(sender) = &self.sender {
            let _ = sender.send((file_id, text));
        }
    }

    /// Every file was sent: the thread writes out and commits as soon as it has indexed
    /// them, while the writer goes on with the graph.
    pub(crate) fn all_sent(&mut self) {
        self.sender = None;
    }

    /// Waits for everything queued to be indexed; returns the side file to install.
    pub(crate) fn finish(mut self) -> rusqlite::Result<PathBuf> {
        self.all_sent();
        match self.thread.join() {
            Ok(result) => result.map(|()| self.path),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

fn build(
    conn: &rusqlite::Connection,
    receiver: &Receiver<(i64, String)>,
    gate: &Gate,
) -> rusqlite::Result<()> {
    lower_priority();
    let mut terms_of = trigram::TermsBuilder::default();
    conn.execute_batch("BEGIN")?;
    search_index::buffer_whole_build(conn)?;
    for (file_id, text) in receiver {
        let terms = terms_of.document_terms(&text);
        let (queued, drained) = &**gate;
        *queued.lock().unwrap_or_else(|p| p.into_inner()) -= text.len();
        drained.notify_all();
        drop(text);
        search_index::insert_terms(conn, file_id, &terms)?;
    }
    search_index::buffer_default(conn)?;
    conn.execute_batch("COMMIT")
}

/// Gives this thread the lowest CPU priority (Linux applies `setpriority` to one thread).
fn lower_priority() {
    let tid = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(tid), 19) {
        tracing::debug!(error = %e, "could not lower the search index thread's priority");
    }
}
