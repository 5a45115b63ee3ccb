//! `loci gate [PATH]`: the session-start gate an agent host runs. Answers at once,
//! starts any work in the background through the supervisor, and always exits 0.
//!
//! A background run is handed off to an owner process (`loci gate --own <purpose>
//! <root>`, hidden) that outlives the gate: the gate exits as soon as it has answered
//! (or, when the check overran its budget, finished it), and killing it leaves the run
//! alone.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use loci_api::vocab::lifecycle::GateRequest;
use loci_api::vocab::lifecycle::{State, Status};

use loci_api::ApiError;

/// Bytes of hook input read from stdin.
const HOOK_INPUT_MAX: u64 = 1 << 20;
/// How long the gate waits for the host's hook input.
const HOOK_INPUT_WAIT: Duration = Duration::from_millis(500);

#[derive(Args)]
pub struct GateArgs {
    /// The session's working directory (default: the hook input's `cwd`, then
    /// --workspace, then the current directory).
    path: Option<PathBuf>,
    /// The session id: notices are shown once per session, failing work retried once.
    #[arg(long, env = "LOCI_SESSION_ID", value_name = "ID")]
    session: Option<String>,
    /// Read the host's hook input (JSON with `session_id` and `cwd`, as Claude Code and
    /// Codex send it) from stdin.
    #[arg(long)]
    hook: bool,
    /// Internal: own a handed-off background run (`index` or `sync`) of PATH.
    #[arg(long, hide = true, value_name = "PURPOSE")]
    own: Option<String>,
}

#[derive(Default, serde::Deserialize)]
struct HookInput {
    session_id: Option<String>,
    cwd: Option<PathBuf>,
}

pub fn run(args: GateArgs, workspace: Option<PathBuf>, json: bool) -> Result<(), ApiError> {
    // Fail-open: whatever happens inside, the host gets a status and exit 0.
    let answered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gate_and_own(args, workspace, json)
    }));
    if let Err(panic) = answered {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let mut s = Status::new(State::Corrupt, "unknown: the gate failed", ".");
        s.facts.unknown = true;
        s.errors.push(format!("internal error: {message}"));
        super::status::print(&s, json);
    }
    Ok(())
}

fn gate_and_own(args: GateArgs, workspace: Option<PathBuf>, json: bool) {
    if let Some(purpose) = args.own.as_deref() {
        own(purpose, args.path.or(workspace), args.session);
        return;
    }
    let hook = if args.hook {
        read_hook_input()
    } else {
        HookInput::default()
    };
    let path = args
        .path
        .or(hook.cwd)
        .or(workspace)
        .unwrap_or_else(|| PathBuf::from("."));
    let req = GateRequest {
        path,
        session: args.session.or(hook.session_id).filter(|s| !s.is_empty()),
    };
    let mut answer = loci_api::gate(&req);
    for w in &answer.config_warnings {
        eprintln!("warning: {w}");
    }
    let sup = loci_api::vocab::process::Supervisor::new();
    answer.start(&sup);
    super::status::print(&answer.status, json);
    let _ = std::io::stdout().flush();
    if answer.has_background_work() {
        detach_stdio();
        answer.finish(&sup);
    }
}

/// The owner of a run a gate handed off: runs it to its end and records the outcome.
/// Its stdio is /dev/null; everything it learns goes to the workspace's record.
fn own(purpose: &str, path: Option<PathBuf>, session: Option<String>) {
    if let Some(path) = path {
        loci_api::maintain::own_handed_off_run(
            &path,
            purpose,
            session.as_deref(),
            std::process::exit,
        );
    }
}

/// The host's JSON on stdin, read for at most [`HOOK_INPUT_WAIT`]; anything
/// unreadable is ignored (fail-open).
fn read_hook_input() -> HookInput {
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("loci-gate-stdin".into())
        .spawn(move || {
            let mut text = String::new();
            let _ = std::io::stdin()
                .take(HOOK_INPUT_MAX)
                .read_to_string(&mut text);
            let _ = tx.send(text);
        });
    rx.recv_timeout(HOOK_INPUT_WAIT)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Points stdout and stderr at /dev/null so a host reading them sees end-of-file
/// while this process stays to own its background run.
fn detach_stdio() {
    let _ = std::io::stderr().flush();
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto the standard descriptors with a valid open descriptor.
        unsafe {
            libc::dup2(null.as_raw_fd(), 1);
            libc::dup2(null.as_raw_fd(), 2);
        }
    }
}
