//! What the workspaces page's live streams share: the rows as last rendered, whether
//! a poller runs, and the permits that bound the streams. Kept apart from the stream
//! itself ([`super::live`]) so the server's state can hold it without depending on
//! the handlers that use the state.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tokio::sync::{Semaphore, watch};

/// Live streams open at once; a browser holds one per open workspaces page.
pub const MAX_STREAMS: usize = 16;

/// One rendered row.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LiveRow {
    pub(super) id: i64,
    pub(super) html: String,
    pub(super) says: String,
}

/// The server's live view of its workspaces: what the poller publishes and the
/// streams follow ([`super::live`]).
#[derive(Debug)]
pub struct LiveWorkspaces {
    /// The rows as last read and rendered (`None` before the first read).
    pub(super) rows: watch::Sender<Option<Arc<Vec<LiveRow>>>>,
    /// Whether a poller runs.
    pub(super) polling: AtomicBool,
    /// One permit per open stream.
    pub(super) streams: Arc<Semaphore>,
}

impl Default for LiveWorkspaces {
    fn default() -> Self {
        LiveWorkspaces {
            rows: watch::Sender::new(None),
            polling: AtomicBool::new(false),
            streams: Arc::new(Semaphore::new(MAX_STREAMS)),
        }
    }
}
