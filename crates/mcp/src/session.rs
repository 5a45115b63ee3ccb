//! One MCP session's state, and how a session is bound to its workspace.
//!
//! A session is bound when it starts (`initialize`) and bound anew when it is replaced
//! (a second `initialize` on the same connection, or its roots change); each binding
//! gets a full session-start evaluation of its own workspace by the lifecycle gate, on
//! a thread (the `initialize` answer never waits for it), under a fresh lifecycle
//! session id, so its once-per-session notices, its failure budget and its one-shot
//! flags start over. What belongs to the process (the [`Host`]: read handles, tracked
//! children, recorded snapshots) is untouched by a rebind. Dropping the session (its
//! connection or HTTP session ended) disposes of its state.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use loci_lifecycle::gate::GateRequest;
use loci_lifecycle::{Notice, Status};

use crate::fresh::SessionRuns;
use crate::host::{Host, lock};

/// Where a binding's workspace came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `--workspace`.
    Flag,
    /// The client's first `file://` root.
    Roots,
    /// The process's working directory.
    Cwd,
}

/// The gate's progress for one binding.
#[derive(Debug, Clone)]
pub enum GateView {
    /// The evaluation runs on its thread.
    Pending,
    /// Its status.
    Done(Box<Status>),
}

/// One binding of a session to a workspace.
#[derive(Debug)]
pub struct Binding {
    /// The workspace as resolved (canonical when it exists).
    pub root: PathBuf,
    /// Where it came from.
    pub source: Source,
    /// The binding's number in this session (1 for the first).
    pub generation: u64,
    /// The session's share of background work.
    pub runs: SessionRuns,
    /// The gate's progress.
    pub gate: Arc<Mutex<GateView>>,
    notices_delivered: bool,
}

/// A session's state: its current binding, if any.
#[derive(Debug, Default)]
pub struct Session {
    binding: Option<Binding>,
    generations: u64,
}

impl Session {
    /// Binds the session to `root` (a new binding even when the root is the same: a
    /// replaced session is evaluated in full) and starts the gate on a thread.
    pub fn bind(&mut self, host: &Arc<Host>, root: &Path, source: Source) -> &Binding {
        self.generations += 1;
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let id = format!(
            "mcp-{}-{}-{}",
            std::process::id(),
            host.next_session(),
            random_suffix()
        );
        let runs = SessionRuns::new(id);
        let gate = Arc::new(Mutex::new(GateView::Pending));
        start_gate(host, &root, &runs, &gate);
        self.binding = Some(Binding {
            root,
            source,
            generation: self.generations,
            runs,
            gate,
            notices_delivered: false,
        });
        self.binding.as_ref().expect("just bound")
    }

    /// The current binding.
    pub fn binding(&self) -> Option<&Binding> {
        self.binding.as_ref()
    }

    /// The gate's notices, once per binding: the first result after the gate has
    /// answered carries them, no later one does.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        let Some(b) = self.binding.as_mut() else {
            return Vec::new();
        };
        if b.notices_delivered {
            return Vec::new();
        }
        match &*lock(&b.gate) {
            GateView::Pending => Vec::new(),
            GateView::Done(status) => {
                b.notices_delivered = true;
                status.notices.clone()
            }
        }
    }
}

/// Runs the session-start gate for `root` on a thread: the lifecycle's evaluation, then
/// any decided work started as the host's own supervised child (adopted by the
/// workspace's tracking, so later drift does not start a second run).
fn start_gate(host: &Arc<Host>, root: &Path, runs: &SessionRuns, gate: &Arc<Mutex<GateView>>) {
    let shown = root_text(root);
    let (host, root, runs, slot) = (host.clone(), root.to_path_buf(), runs.clone(), gate.clone());
    let spawned = std::thread::Builder::new()
        .name("loci-mcp-gate".into())
        .spawn(move || {
            let answer = loci_api::gate(&GateRequest {
                path: root.clone(),
                session: Some(runs.id.clone()),
            });
            let (status, run) = answer.settle_owned(&host.sup);
            if let Some(run) = run {
                host.tracked(&root).adopt(run, &runs);
            }
            host.record_snapshot(&root, &status);
            *lock(&slot) = GateView::Done(Box::new(status));
            crate::host::release_free_heap();
        });
    if let Err(e) = spawned {
        let mut s = Status::new(
            loci_lifecycle::State::Corrupt,
            "unknown: the gate could not start",
            shown,
        );
        s.facts.unknown = true;
        s.errors.push(format!("cannot start the gate: {e}"));
        *lock(gate) = GateView::Done(Box::new(s));
    }
}

fn root_text(root: &Path) -> String {
    root.to_string_lossy().into_owned()
}

/// A few random hex digits, so two processes' session ids never collide.
fn random_suffix() -> String {
    let mut b = [0u8; 4];
    let _ = getrandom::fill(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The workspace a root URI names (`file:///path`), if it is a local directory URI.
pub fn root_from_uri(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    Some(PathBuf::from(percent_decode(path)))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(v) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::root_from_uri;
    use std::path::PathBuf;

    #[test]
    fn file_uris_become_paths_and_others_do_not() {
        assert_eq!(
            root_from_uri("file:///home/a%20b/src"),
            Some(PathBuf::from("/home/a b/src"))
        );
        assert_eq!(
            root_from_uri("file://localhost/x"),
            Some(PathBuf::from("/x"))
        );
        assert_eq!(root_from_uri("https://example.com/x"), None);
        assert_eq!(root_from_uri("file://host/x"), None);
        assert_eq!(root_from_uri("file:///a%2"), Some(PathBuf::from("/a%2")));
    }
}
