//! `loci memory enrich` and `remember --extract`: parse, call `loci_api::memory::enrich`
//! (which shows the estimate through the callback before anything runs), print.

use std::io::{BufRead, IsTerminal, Write};

use clap::Args;
use loci_api::memory::{self as api, EnrichEstimate, StoreTarget};
use loci_api::{ApiError, ErrorKind};

use super::memory_store::StoreArgs;
use crate::output;

#[derive(Args)]
pub struct EnrichArgs {
    /// The memories to enrich (again, even if already done).
    names: Vec<String>,
    /// Every memory of the namespace not yet enriched (never asked, or failed).
    #[arg(long, conflicts_with = "names")]
    all: bool,
    /// The LLM tool: claude (default) or codex.
    #[arg(long, value_name = "TOOL")]
    llm: Option<String>,
    /// Consent to a batch estimated above llm.confirmTokens (needed without a terminal).
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    pub(super) store: StoreArgs,
}

/// `--extract MODE`: only `llm`.
pub fn extract_mode(text: &str) -> Result<api::ExtractMode, ApiError> {
    match text {
        "llm" => Ok(api::ExtractMode::Llm),
        other => Err(ApiError::new(
            ErrorKind::Usage,
            format!("unknown --extract mode `{other}`: expected llm"),
        )),
    }
}

pub fn run(t: &StoreTarget, a: EnrichArgs, json: bool) -> Result<(), ApiError> {
    let req = api::EnrichRequest {
        namespace: a.store.namespace.clone(),
        names: a.names,
        all: a.all,
        llm: a.llm.as_deref().map(api::LlmChoice::parse).transpose()?,
        yes: a.yes,
    };
    let answer = api::enrich(t, &req, &mut confirm)?;
    if json {
        output::json(&answer);
    } else {
        for r in &answer.results {
            match r.state {
                api::EnrichState::Done => println!(
                    "{}: {} entities, {} relationships (version {})",
                    r.name, r.entities, r.relationships, r.version
                ),
                _ => println!(
                    "{}: {} ({})",
                    r.name,
                    r.state,
                    r.reason.as_deref().unwrap_or("")
                ),
            }
        }
        println!(
            "{} enriched, {} failed, {} skipped",
            answer.done, answer.failed, answer.skipped
        );
    }
    Ok(())
}

/// Prints the estimate on stderr; over the threshold, asks on a terminal (no terminal:
/// declines, so `--yes` is needed).
fn confirm(e: &EnrichEstimate) -> bool {
    eprintln!(
        "estimate: {} {} calls, ~{} tokens (llm.confirmTokens {}, llm.maxCalls {})",
        e.calls, e.tool, e.tokens, e.confirm_above, e.max_calls
    );
    if !e.needs_consent {
        return true;
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return false;
    }
    eprint!("run it? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim(), "y" | "Y" | "yes")
}
