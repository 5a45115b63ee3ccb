//! The `loci` command line: every command has human output and `--json`, and exits
//! with a code from loci's one error table (`loci_api::ErrorKind::TABLE`). The commands
//! only parse, call `loci_api` and print.

mod cmd;
mod output;
mod workspace_arg;

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use loci_api::graph::Direction;
use loci_api::{ApiError, ErrorKind};

/// loci: a local context engine for coding agents.
#[derive(Parser)]
#[command(name = "loci", version, about, propagate_version = true)]
struct Cli {
    /// Print one JSON document on stdout (errors too).
    #[arg(long, global = true)]
    json: bool,
    /// The workspace to query (default: the nearest ancestor of the current directory with an index).
    #[arg(long, short = 'w', global = true, value_name = "PATH")]
    workspace: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build or update the index of a workspace (default: the current directory).
    Index(cmd::index::IndexArgs),
    /// Find definitions by name or glob.
    Find(cmd::graph::FindArgs),
    /// Show where a symbol is defined.
    Def(cmd::graph::SymbolArgs),
    /// List every use of a symbol.
    Refs(cmd::graph::RefsArgs),
    /// Who calls a symbol (transitively with --depth).
    Callers(cmd::graph::DepthArgs),
    /// What a symbol calls (transitively with --depth).
    Callees(cmd::graph::DepthArgs),
    /// What depends on a symbol or a file, with the path that reaches each.
    Impact(cmd::graph::ImpactArgs),
    /// What a git diff changes: files, the definitions hunks touch, their callers, impact, tests and memories.
    Changes(cmd::changes::ChangesArgs),
    /// The definitions in a file, nested.
    Outline(cmd::graph::OutlineArgs),
    /// Search code text (literal, or --regex) with file:line hits, or code units by meaning (--meaning).
    Search(cmd::graph::SearchArgs),
    /// Counts of the index.
    Stats,
    /// Embed the workspace's code units for `search --meaning` (only what changed).
    Embed,
    /// The workspaces loci knows (--prune forgets those whose folder is gone).
    List(cmd::list::ListArgs),
    /// Remove one workspace from the registry (its folder and index are kept).
    Forget(cmd::forget::ForgetArgs),
    /// The index's lifecycle state (clean, drift, corrupt...) and why.
    Status(cmd::status::StatusArgs),
    /// Session-start gate for agent hosts: answers at once, works in the background, exits 0.
    Gate(cmd::gate::GateArgs),
    /// Bring the index up to date incrementally.
    Sync(cmd::sync::SyncArgs),
    /// Delete the index and build it again (needs --yes).
    Rebuild(cmd::rebuild::RebuildArgs),
    /// Keep the index fresh as files change, until stopped.
    Watch(cmd::watch::WatchArgs),
    /// Show the effective configuration and where each value comes from.
    Config(cmd::config::ConfigArgs),
    /// Run one read-only SQL statement over the index (deadline, row cap, params).
    Query(cmd::query::QueryArgs),
    /// The query worker process (started by loci itself).
    #[command(hide = true)]
    Worker(cmd::worker::WorkerArgs),
    /// Create or list workspaces inside the roots loci owns.
    Workspace(cmd::workspace::WorkspaceArgs),
    /// Serve the authenticated HTTP API (loopback only unless --allow-remote).
    Serve(cmd::serve::ServeArgs),
    /// Serve loci's tools to an MCP client (Claude Code, Codex, ...) over stdio.
    Mcp(cmd::mcp::McpArgs),
    /// Keep a memory about the code (a decision, a convention, an incident...).
    Remember(cmd::memory::RememberArgs),
    /// Recall memories: full text, graph (entities, code links) and vectors, fused.
    Recall(cmd::memory::RecallArgs),
    /// Read, list, edit, rename, forget, restore, purge, link memories; entities, graph, stats.
    Memory(cmd::memory::MemoryArgs),
    /// The local embedding model: install a verified copy, or show its state.
    Models(cmd::models::ModelsArgs),
}

fn main() -> ExitCode {
    restore_default_sigpipe();
    init_tracing();
    // Panics become an `internal` failure (exit 20) below; the default hook's backtrace
    // would only add noise to stderr, so it is shown at debug level.
    std::panic::set_hook(Box::new(|info| tracing::debug!(%info, "panic")));
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let wants_json = args.iter().any(|a| a == "--json");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(e, wants_json),
    };
    let as_json = cli.json;
    match &cli.command {
        // Their own signal handling: the gate is fail-open, the worker's parent owns
        // it, the server drains first.
        Command::Gate(_) | Command::Worker(_) | Command::Serve(_) | Command::Mcp(_) => {}
        // Reads that start no child: nothing to tear down, so no signal thread.
        Command::Find(_)
        | Command::Def(_)
        | Command::Refs(_)
        | Command::Callers(_)
        | Command::Callees(_)
        | Command::Impact(_)
        | Command::Changes(_)
        | Command::Outline(_)
        | Command::Search(_)
        | Command::Stats
        | Command::Embed
        | Command::Status(_)
        | Command::Config(_) => exit_on_signal(as_json),
        _ => report_signals(as_json),
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)));
    let failure = match result {
        Ok(Ok(())) => return ExitCode::SUCCESS,
        Ok(Err(f)) => f,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            ApiError::new(ErrorKind::Internal, format!("internal error: {message}"))
                .hint("this is a bug in loci; please report it with the command you ran")
        }
    };
    output::failure(&failure, as_json);
    ExitCode::from(failure.exit_code().code())
}

/// SIGINT, SIGTERM and SIGHUP: tear every child down, report `interrupted` (a JSON
/// error with `--json`) and exit with its code, instead of dying by the signal.
fn report_signals(as_json: bool) {
    loci_api::vocab::process::on_shutdown_signal(Arc::new(move |signal| {
        loci_api::vocab::process::teardown_all_children();
        let mut e = interrupted();
        e.message = format!("interrupted by signal {signal}");
        output::failure(&e, as_json);
        std::process::exit(i32::from(e.exit_code().code()));
    }));
}

/// The `interrupted` error a signal ends a command with.
fn interrupted() -> ApiError {
    ApiError::new(ErrorKind::Interrupted, "interrupted by a signal")
        .hint("nothing stored was lost: the next run finishes what this one left")
}

/// SIGINT, SIGTERM and SIGHUP for a command that starts no child: a plain handler
/// writes the pre-rendered `interrupted` error and exits with its code. No thread is
/// started for it (that thread was most of what a quick query's process paid for
/// signal handling).
fn exit_on_signal(as_json: bool) {
    let e = interrupted();
    let (fd, text) = if as_json {
        let body = serde_json::to_string_pretty(&e.envelope()).unwrap_or_default();
        (libc::STDOUT_FILENO, format!("{body}\n"))
    } else {
        let hint = e.hint.as_deref().unwrap_or_default();
        (
            libc::STDERR_FILENO,
            format!("error: {}\nhint: {hint}\n", e.message),
        )
    };
    // Lives until the process ends: the handler may run at any time.
    let text: &'static [u8] = Box::leak(text.into_bytes().into_boxed_slice());
    let code = i32::from(e.exit_code().code());
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler calls only write(2) and _exit(2), both async-signal-safe,
        // on a buffer that is never freed; it takes no lock and allocates nothing.
        let registered = unsafe {
            signal_hook::low_level::register(signal, move || {
                libc::write(fd, text.as_ptr().cast(), text.len());
                libc::_exit(code);
            })
        };
        if let Err(err) = registered {
            tracing::debug!(signal, error = %err, "cannot install the signal handler");
        }
    }
}

fn run(cli: Cli) -> Result<(), ApiError> {
    let json = cli.json;
    let ws = cli.workspace;
    match cli.command {
        Command::Index(a) => cmd::index::run(a, ws, json),
        Command::Find(a) => cmd::graph::find(a, ws, json),
        Command::Def(a) => cmd::graph::def(a, ws, json),
        Command::Refs(a) => cmd::graph::refs(a, ws, json),
        Command::Callers(a) => cmd::graph::traverse(a, ws, json, Direction::Callers),
        Command::Callees(a) => cmd::graph::traverse(a, ws, json, Direction::Callees),
        Command::Impact(a) => cmd::graph::impact(a, ws, json),
        Command::Changes(a) => cmd::changes::changes(a, ws, json),
        Command::Outline(a) => cmd::graph::outline(a, ws, json),
        Command::Search(a) => cmd::graph::search(a, ws, json),
        Command::Stats => cmd::graph::stats(ws, json),
        Command::Embed => cmd::graph::embed(ws, json),
        Command::List(a) => cmd::list::run(a, json),
        Command::Forget(a) => cmd::forget::run(a, json),
        Command::Status(a) => cmd::status::run(a, ws, json),
        Command::Gate(a) => cmd::gate::run(a, ws, json),
        Command::Sync(a) => cmd::sync::run(a, ws, json),
        Command::Rebuild(a) => cmd::rebuild::run(a, ws, json),
        Command::Watch(a) => cmd::watch::run(a, ws, json),
        Command::Config(a) => cmd::config::run(a, ws, json),
        Command::Query(a) => cmd::query::run(a, ws, json),
        Command::Worker(a) => cmd::worker::run(a),
        Command::Workspace(a) => cmd::workspace::run(a, json),
        Command::Serve(a) => cmd::serve::run(a, json),
        Command::Mcp(a) => cmd::mcp::run(a, ws),
        Command::Remember(a) => cmd::memory::remember(a, ws, json),
        Command::Recall(a) => cmd::memory::recall(a, ws, json),
        Command::Memory(a) => cmd::memory::run(a, ws, json),
        Command::Models(a) => cmd::models::run(a, json),
    }
}

fn usage_error(e: clap::Error, as_json: bool) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(loci_api::ExitCode::Usage.code())
        } else {
            ExitCode::SUCCESS
        };
    }
    if as_json {
        let message = e.render().to_string();
        let first = message
            .lines()
            .next()
            .unwrap_or("usage error")
            .trim_start_matches("error: ")
            .to_string();
        output::failure(
            &ApiError::new(loci_api::ErrorKind::Usage, first).hint("run `loci --help`"),
            true,
        );
    } else {
        let _ = e.print();
    }
    ExitCode::from(loci_api::ExitCode::Usage.code())
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("LOCI_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Rust ignores SIGPIPE, which turns `loci find x | head` into a write error; restore the
/// default so loci ends quietly like any Unix filter when its reader goes away.
fn restore_default_sigpipe() {
    // SAFETY: setting a signal disposition to SIG_DFL at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        // clap checks argument ids (a field named `version` clashes with `--version`) only
        // when a command is built; this builds every subcommand once.
        super::Cli::command().debug_assert();
    }
}
