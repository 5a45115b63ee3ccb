//! `enrich`: LLM extraction for memories already stored (named, or every one not yet
//! enriched), and the second half of `remember` with `extract: "llm"`. A batch is
//! bounded before it starts — at most `llm.maxCalls` calls, a token estimate shown to
//! the caller, consent above `llm.confirmTokens` — and while it runs (`llm.timeoutMs`
//! per call, `llm.runTimeoutMs` for the whole run).

use std::path::PathBuf;
use std::time::Instant;

use loci_memory::extract::{self, ExtractionState};
use loci_memory::{Filter, Memory, MemoryStore};
use loci_supervisor::Supervisor;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::extract::{LlmChoice, Settings, call_budget, check_allowed, extract_one};
use super::{MemoryView, StoreTarget, ns};
use crate::error::{ApiError, ErrorKind};

/// `enrich`: which memories, which tool, and consent for a large batch.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EnrichRequest {
    /// The namespace (default `default`).
    #[serde(default)]
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// The memories to enrich (again, even if already done).
    #[serde(default)]
    pub names: Vec<String>,
    /// Every live memory of the namespace whose extraction is not `done` (never asked,
    /// or failed).
    #[serde(default)]
    pub all: bool,
    /// The tool (default `claude`).
    #[serde(default)]
    pub llm: Option<LlmChoice>,
    /// Consent to a batch estimated above `llm.confirmTokens`.
    #[serde(default)]
    pub yes: bool,
}

/// What a batch will cost, known before anything runs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EnrichEstimate {
    /// The tool.
    pub tool: String,
    /// Memories in the batch (one call each).
    pub calls: u64,
    /// Estimated tokens: prompt bytes / 4 plus 1,000 output tokens per call.
    pub tokens: u64,
    /// `llm.confirmTokens`: above it the batch needs consent.
    pub confirm_above: u64,
    /// `llm.maxCalls`.
    pub max_calls: u64,
    /// Whether the batch waits for consent (over the threshold without `yes`).
    pub needs_consent: bool,
}

/// How one memory's extraction ended (`done`, `failed`, `skipped` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EnrichState {
    /// Entities and relationships attached (an `enrich` version written).
    Done,
    /// The extraction failed; the memory is kept, marked failed.
    Failed,
    /// The run stopped before it (a budget, or an earlier failure's stop).
    Skipped,
}

impl std::fmt::Display for EnrichState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EnrichState::Done => "done",
            EnrichState::Failed => "failed",
            EnrichState::Skipped => "skipped",
        })
    }
}

/// How one memory's extraction ended.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EnrichResult {
    /// The memory.
    pub name: String,
    /// How it ended.
    pub state: EnrichState,
    /// Entities attached.
    pub entities: u32,
    /// Relationships attached.
    pub relationships: u32,
    /// The memory's version after it (a done extraction writes an `enrich` version).
    pub version: u32,
    /// Why it failed or was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The failure's stable kind (a preflight guard's name, `llm_timed_out`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// What a batch did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EnrichAnswer {
    /// What it was estimated to cost.
    pub estimate: EnrichEstimate,
    /// One result per memory, in order.
    pub results: Vec<EnrichResult>,
    /// Memories enriched.
    pub done: u64,
    /// Memories whose extraction failed (kept, marked `extraction: failed`).
    pub failed: u64,
    /// Memories not attempted because the run stopped.
    pub skipped: u64,
}

/// Where the tool runs: the workspace's root (so the `.mcp.json` walk-up of preflight
/// starts there), or the user store's folder.
fn child_cwd(target: &StoreTarget) -> Result<PathBuf, ApiError> {
    if target.user {
        let p = super::user_store_path()?;
        return Ok(p.parent().map(PathBuf::from).unwrap_or_else(|| ".".into()));
    }
    Ok(crate::locate(&target.workspace)?.root)
}

/// Extracts entities and relationships for memories already stored. `before` sees the
/// estimate before any spawn and returns whether to go on (a front end prints it and,
/// when `needs_consent`, asks); declining, or needing consent without it, is
/// `consent_required` with the estimate in `detail`. When any extraction fails the
/// answer is the first failure's error with every result in `detail.results` (the
/// memories are all kept).
pub fn enrich(
    target: &StoreTarget,
    req: &EnrichRequest,
    before: &mut dyn FnMut(&EnrichEstimate) -> bool,
) -> Result<EnrichAnswer, ApiError> {
    if req.all != req.names.is_empty() {
        return Err(ApiError::new(
            ErrorKind::Usage,
            "enrich needs memory names or all of them (not both)",
        ));
    }
    let n = ns(target, &req.namespace)?;
    check_allowed()?;
    let (location, _code) = super::StoreLocation::of_target(target)?;
    let mut store = location.open()?;
    let batch = batch(&*store, &n, req)?;
    let s = Settings::load(req.llm);
    let estimate = EnrichEstimate {
        tool: s.tool_name().into(),
        calls: batch.len() as u64,
        tokens: batch.iter().map(extract::estimate_tokens).sum(),
        confirm_above: s.confirm_tokens,
        max_calls: s.max_calls,
        needs_consent: false,
    };
    let estimate = EnrichEstimate {
        needs_consent: estimate.tokens > s.confirm_tokens && !req.yes,
        ..estimate
    };
    if estimate.calls > s.max_calls {
        return Err(ApiError::new(
            ErrorKind::LimitExceeded,
            format!(
                "the batch needs {} LLM calls, over llm.maxCalls ({}); nothing was run",
                estimate.calls, s.max_calls
            ),
        )
        .hint("name fewer memories, or raise llm.maxCalls")
        .detail(serde_json::to_value(&estimate).unwrap_or_default()));
    }
    let go_on = before(&estimate);
    if !go_on {
        return Err(ApiError::new(
            ErrorKind::ConsentRequired,
            format!(
                "the batch is estimated at {} tokens in {} {} calls, over llm.confirmTokens ({}); nothing was run",
                estimate.tokens, estimate.calls, estimate.tool, estimate.confirm_above
            ),
        )
        .hint("add --yes to consent (`\"yes\": true` over HTTP and MCP)")
        .detail(serde_json::to_value(&estimate).unwrap_or_default()));
    }
    let cwd = child_cwd(target)?;
    run_batch(&mut *store, &s, &cwd, batch, estimate)
}

/// The memories of the request, live, in the order named (or most recent first).
fn batch(store: &dyn MemoryStore, n: &str, req: &EnrichRequest) -> Result<Vec<Memory>, ApiError> {
    let mut out = Vec::new();
    if req.all {
        let filter = Filter {
            namespace: n.to_string(),
            ..Filter::default()
        };
        let mut offset = 0;
        loop {
            let (page, total) = store.list(&filter, 1000, offset)?;
            offset += page.len();
            for m in page {
                if m.extraction.as_ref().map(|x| x.state) != Some(ExtractionState::Done) {
                    out.push(store.read(n, &m.name)?);
                }
            }
            if offset as u64 >= total || offset == 0 {
                break;
            }
        }
    } else {
        for name in &req.names {
            let m = store.read(n, name)?;
            if m.deleted_at.is_some() {
                return Err(ApiError::new(
                    ErrorKind::MemoryState,
                    format!("the memory `{name}` is forgotten; restore it first"),
                ));
            }
            out.push(m);
        }
    }
    Ok(out)
}

fn run_batch(
    store: &mut dyn MemoryStore,
    s: &Settings,
    cwd: &std::path::Path,
    batch: Vec<Memory>,
    estimate: EnrichEstimate,
) -> Result<EnrichAnswer, ApiError> {
    let sup = Supervisor::new();
    let started = Instant::now();
    let mut results = Vec::with_capacity(batch.len());
    let mut first_error: Option<ApiError> = None;
    let mut stop: Option<String> = None;
    for m in batch {
        let budget = match (&stop, call_budget(s, started)) {
            (None, Some(b)) => b,
            (None, None) => {
                stop = Some("llm.runTimeoutMs was spent before this call".into());
                results.push(skipped(&m, stop.as_deref()));
                continue;
            }
            (Some(_), _) => {
                results.push(skipped(&m, stop.as_deref()));
                continue;
            }
        };
        match extract_one(store, &sup, s, cwd, &m, budget) {
            Ok(done) => results.push(EnrichResult {
                name: done.name.clone(),
                state: EnrichState::Done,
                entities: done.extraction.as_ref().map_or(0, |x| x.entities),
                relationships: done.extraction.as_ref().map_or(0, |x| x.relationships),
                version: done.version,
                reason: None,
                kind: None,
            }),
            Err(e) => {
                let kind = e
                    .detail
                    .as_ref()
                    .and_then(|d| d["reason"].as_str())
                    .map(str::to_string);
                // A refused spawn (preflight, a missing tool, shutdown) fails every
                // call alike: the rest of the batch is not tried.
                if matches!(
                    e.kind,
                    ErrorKind::Preflight | ErrorKind::SpawnFailed | ErrorKind::Interrupted
                ) {
                    stop = Some(format!("the run stopped: {}", e.message));
                }
                results.push(EnrichResult {
                    name: m.name.clone(),
                    state: EnrichState::Failed,
                    entities: 0,
                    relationships: 0,
                    version: m.version,
                    reason: Some(e.message.clone()),
                    kind,
                });
                first_error.get_or_insert(e);
            }
        }
    }
    let count = |st: EnrichState| results.iter().filter(|r| r.state == st).count() as u64;
    let answer = EnrichAnswer {
        estimate,
        done: count(EnrichState::Done),
        failed: count(EnrichState::Failed),
        skipped: count(EnrichState::Skipped),
        results,
    };
    match first_error {
        None if answer.skipped == 0 => Ok(answer),
        None => Err(ApiError::new(
            ErrorKind::LimitExceeded,
            format!(
                "llm.runTimeoutMs was spent: {} of {} memories were not tried",
                answer.skipped,
                answer.results.len()
            ),
        )
        .hint("run `loci memory enrich --all` again, or raise llm.runTimeoutMs")
        .detail(serde_json::to_value(&answer).unwrap_or_default())),
        Some(mut e) => {
            let mut detail = e.detail.take().unwrap_or_else(|| serde_json::json!({}));
            detail["results"] = serde_json::to_value(&answer.results).unwrap_or_default();
            detail["done"] = answer.done.into();
            detail["failed"] = answer.failed.into();
            detail["skipped"] = answer.skipped.into();
            e.detail = Some(detail);
            Err(e)
        }
    }
}

fn skipped(m: &Memory, why: Option<&str>) -> EnrichResult {
    EnrichResult {
        name: m.name.clone(),
        state: EnrichState::Skipped,
        entities: 0,
        relationships: 0,
        version: m.version,
        reason: why.map(str::to_string),
        kind: None,
    }
}

/// `remember`'s extraction: runs after the memory is committed; returns the memory
/// enriched, or the error after marking it failed.
pub(super) fn after_remember(
    target: &StoreTarget,
    store: &mut dyn MemoryStore,
    view: &MemoryView,
    llm: Option<LlmChoice>,
) -> Result<(), ApiError> {
    let s = Settings::load(llm);
    let cwd = child_cwd(target)?;
    let sup = Supervisor::new();
    let budget = call_budget(&s, Instant::now()).unwrap_or(s.run_timeout);
    extract_one(store, &sup, &s, &cwd, &view.memory, budget).map(|_| ())
}
