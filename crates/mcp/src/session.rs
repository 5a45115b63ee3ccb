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

use loci_api::ApiError;
use loci_api::confine::Confined;
use loci_api::vocab::lifecycle::GateRequest;
use loci_api::vocab::lifecycle::{Notice, Status};

use crate::host::Host;
use crate::poison::lock;
use loci_api::tracking::SessionRuns;

/// Where a binding's workspace came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `--workspace`.
    Flag,
    /// The client's first `file://` root (served: the first inside the roots).
    Roots,
    /// The process's working directory.
    Cwd,
    /// Served: the `Loci-Workspace` header of the session's `initialize`.
    Header,
    /// Served: a tool call's `workspace` argument.
    Argument,
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
    /// How callers name it, when served (inside the server's roots).
    pub locator: Option<loci_api::vocab::paths::Locator>,
    /// The binding's number in this session (1 for the first).
    pub generation: u64,
    /// The session's share of background work.
    pub runs: SessionRuns,
    /// The gate's progress.
    pub gate: Arc<Mutex<GateView>>,
    notices_delivered: bool,
}

/// A session's state: its current binding, if any, or why nothing is bound.
#[derive(Debug, Default)]
pub struct Session {
    binding: Option<Binding>,
    generations: u64,
    refusal: Option<ApiError>,
    /// The client's roots were asked for and have not answered yet.
    pub(crate) roots_pending: bool,
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
        self.refusal = None;
        self.binding = Some(Binding {
            root,
            source,
            locator: None,
            generation: self.generations,
            runs,
            gate,
            notices_delivered: false,
        });
        self.binding.as_ref().expect("just bound")
    }

    /// Binds the session to a workspace inside the server's roots (served), named by
    /// its locator.
    pub fn bind_confined(&mut self, host: &Arc<Host>, confined: Confined, source: Source) {
        self.bind(host, &confined.root, source);
        if let Some(b) = self.binding.as_mut() {
            b.locator = Some(confined.locator);
        }
    }

    /// Unbinds the session, keeping why: every call answers this error until a
    /// workspace is named again. Nothing is bound, evaluated or created.
    pub fn refuse(&mut self, why: ApiError) {
        self.binding = None;
        self.refusal = Some(why);
    }

    /// Why nothing is bound, if a name was refused.
    pub fn refusal(&self) -> Option<&ApiError> {
        self.refusal.as_ref()
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
            let req = GateRequest {
                path: root.clone(),
                session: Some(runs.id.clone()),
            };
            // Inside a server the probe chain must not ask the API (this process) or
            // start another server: its own registry decides.
            let answer = if host.hides_paths() {
                loci_api::gate_in_server(&req)
            } else {
                loci_api::gate(&req)
            };
            let (status, run) = answer.settle_owned(host.supervisor());
            if let Some(run) = run {
                host.tracked(&root).adopt(run, &runs);
            }
            host.record_snapshot(&root, &status);
            *lock(&slot) = GateView::Done(Box::new(status));
            crate::host::release_free_heap();
        });
    if let Err(e) = spawned {
        let mut s = Status::new(
            loci_api::vocab::lifecycle::State::Corrupt,
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

/// The local path a root URI names (`file:///path`, `file://localhost/path`), if it
/// is one: another scheme or host, a relative path, a backslash, a query or fragment,
/// a malformed escape and an escaped `/` or NUL (which no path component may hold) are
/// not local paths. `..` is left in: the ruler refuses it by name.
pub fn root_from_uri(uri: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let (scheme, rest) = uri.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("file") {
        return None;
    }
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') || path.contains(['\\', '?', '#', '\0']) {
        return None;
    }
    let decoded = percent_decode(path)?;
    if decoded.contains(&0) {
        return None;
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(decoded)))
}

/// `s` with its `%XX` escapes decoded; `None` for a malformed escape or an escaped `/`.
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            if v == b'/' {
                return None;
            }
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
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
        assert_eq!(
            root_from_uri("file:///a/%2e%2E/b"),
            Some(PathBuf::from("/a/../b"))
        );
        for refused in [
            "https://example.com/x",
            "file://host/x",
            "file:///a%2",
            "file:///a%zz",
            "file:///a%2Fb",
            "file:///a%00",
            "file:///C:\\x",
            "file://C:/x",
            "file:relative",
            "file:///a?b",
            "file:///a#b",
            "\\\\server\\share",
        ] {
            assert_eq!(root_from_uri(refused), None, "{refused}");
        }
    }
}
