//! LLM extraction of a memory's entities and relationships (opt-in): `remember` with
//! `extract: "llm"` and `enrich`. The memory is always stored first; the tool (`claude
//! -p` or `codex exec`, through the supervisor's runners, so the preflight gate runs
//! before every spawn and the prompt goes on stdin) then answers the extraction schema,
//! which is checked like an agent's `--entities`/`--relationships`. A failure never
//! loses the memory: it is marked `extraction: failed` with the reason, and the caller
//! gets the error (never a silent, entity-less success).
//!
//! The `llm.*` keys come from the user's config and the environment only: a workspace's
//! own `.loci/config.toml` cannot choose what loci runs.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use loci_lifecycle::Config;
use loci_memory::extract::{self, Extraction, ExtractionState};
use loci_memory::{Memory, MemoryStore};
use loci_supervisor::{EnvPolicy, LlmRequest, LlmRunner, LlmTool, Supervisor};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};
use crate::time::now_ms;

/// The variables an LLM tool gets from loci's environment (everything else, such as
/// `LOCI_API_KEY` or a shell's secrets, stays behind); the config directory variable
/// is pinned over them.
pub const TOOL_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// The capability `loci serve` declares when `llm.allowSpawn` is on.
pub const LLM_CAPABILITY: &str = "memory.extract.llm";

/// Which extraction `remember` runs after storing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExtractMode {
    /// Entities and relationships extracted by an LLM tool (`claude` or `codex`).
    Llm,
}

/// Which LLM tool runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LlmChoice {
    /// `claude -p` (the default).
    #[default]
    Claude,
    /// `codex exec`.
    Codex,
}

impl LlmChoice {
    fn name(self) -> &'static str {
        match self {
            LlmChoice::Claude => "claude",
            LlmChoice::Codex => "codex",
        }
    }

    /// Parses `claude` or `codex`.
    pub fn parse(text: &str) -> Result<LlmChoice, ApiError> {
        match text {
            "claude" => Ok(LlmChoice::Claude),
            "codex" => Ok(LlmChoice::Codex),
            other => Err(ApiError::new(
                ErrorKind::InvalidInput,
                format!("unknown LLM tool `{other}`: expected claude or codex"),
            )),
        }
    }
}

static HOST_OPT_IN: AtomicBool = AtomicBool::new(false);

/// Called once by a long-lived host (`loci serve`, `loci mcp`): from then on LLM
/// extraction runs only when `llm.allowSpawn` is on, because the caller is across a
/// socket or an agent, not the person at the terminal.
pub fn require_llm_opt_in(on: bool) {
    HOST_OPT_IN.store(on, Ordering::SeqCst);
}

/// Whether this host's configuration allows LLM spawns for remote callers
/// (`llm.allowSpawn`, from the user's config or `LOCI_LLM_ALLOW_SPAWN`).
pub fn llm_spawns_allowed() -> bool {
    Config::load(None).flag("llm.allowSpawn")
}

/// Refuses an extraction a host's remote caller may not ask for.
pub(super) fn check_allowed() -> Result<(), ApiError> {
    if HOST_OPT_IN.load(Ordering::SeqCst) && !llm_spawns_allowed() {
        return Err(ApiError::new(
            ErrorKind::CapabilityMissing,
            "this server does not run LLM tools: llm.allowSpawn is off",
        )
        .hint("set `allowSpawn = true` under [llm] in the server's user config (or LOCI_LLM_ALLOW_SPAWN=1) and restart it; or run `loci memory enrich` on the machine")
        .detail(serde_json::json!({ "capability": LLM_CAPABILITY })));
    }
    Ok(())
}

/// The budget and tool of one run, from the `llm.*` keys.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    tool: LlmChoice,
    binary: Option<PathBuf>,
    model: Option<String>,
    args: Vec<OsString>,
    config_dir: Option<PathBuf>,
    timeout: Duration,
    pub(super) run_timeout: Duration,
    pub(super) max_calls: u64,
    pub(super) confirm_tokens: u64,
    max_output: u64,
}

impl Settings {
    pub(super) fn load(choice: Option<LlmChoice>) -> Settings {
        let c = Config::load(None);
        let tool = choice.unwrap_or_default();
        let ms = |k: &str, d: u64| Duration::from_millis(c.integer(k).unwrap_or(d));
        Settings {
            tool,
            binary: c.path(match tool {
                LlmChoice::Claude => "llm.claude",
                LlmChoice::Codex => "llm.codex",
            }),
            model: c.text("llm.model").map(str::to_string),
            args: c
                .text("llm.args")
                .map(|a| a.split_whitespace().map(OsString::from).collect())
                .unwrap_or_default(),
            config_dir: c.path("llm.configDir"),
            timeout: ms("llm.timeoutMs", 120_000),
            run_timeout: ms("llm.runTimeoutMs", 900_000),
            max_calls: c.integer("llm.maxCalls").unwrap_or(50),
            confirm_tokens: c.integer("llm.confirmTokens").unwrap_or(20_000),
            max_output: c.integer("llm.maxOutputBytes").unwrap_or(16 << 20),
        }
    }

    pub(super) fn tool_name(&self) -> &'static str {
        self.tool.name()
    }
}

/// Runs one extraction of `m` and records it: `Ok` with the enriched memory (an
/// `enrich` version), or the error after marking the memory `extraction: failed`.
pub(super) fn extract_one(
    store: &mut dyn MemoryStore,
    sup: &Supervisor,
    s: &Settings,
    cwd: &std::path::Path,
    m: &Memory,
    budget: Duration,
) -> Result<Memory, ApiError> {
    let tool = s.tool_name();
    match run_tool(sup, s, cwd, m, budget) {
        Ok(x) => {
            let record = Extraction {
                state: ExtractionState::Done,
                tool: tool.into(),
                at: now_ms(),
                reason: None,
                kind: None,
                entities: x.entities.len() as u32,
                relationships: x.relationships.len() as u32,
            };
            match store.enrich(&m.namespace, &m.name, &x, &record) {
                Ok(done) => {
                    tracing::info!(
                        target: "memory",
                        event = "extraction_done",
                        tool,
                        memory = %m.name,
                        entities = record.entities,
                        relationships = record.relationships,
                    );
                    Ok(done)
                }
                // The answer named what the store refuses (a relationship to an unknown
                // entity): the memory stays as it was, marked failed.
                Err(
                    e @ (loci_memory::MemoryError::Invalid(_)
                    | loci_memory::MemoryError::Unresolved(_)),
                ) => {
                    let err = ApiError::new(ErrorKind::ExtractionFailed, e.to_string());
                    Err(fail(store, tool, m, err, "invalid_output"))
                }
                Err(e) => Err(fail(store, tool, m, ApiError::from(e), "storage")),
            }
        }
        Err((err, reason)) => Err(fail(store, tool, m, err, reason)),
    }
}

/// Marks `m` failed with `err`'s message and returns `err` saying the memory is kept.
fn fail(
    store: &mut dyn MemoryStore,
    tool: &'static str,
    m: &Memory,
    err: ApiError,
    reason: &str,
) -> ApiError {
    tracing::warn!(
        target: "memory",
        event = "extraction_failed",
        tool,
        memory = %m.name,
        kind = reason,
        error = %err.message,
    );
    let record = Extraction {
        state: ExtractionState::Failed,
        tool: tool.into(),
        at: now_ms(),
        reason: Some(err.message.clone()),
        kind: Some(reason.into()),
        entities: 0,
        relationships: 0,
    };
    let recorded = store.set_extraction(&m.namespace, &m.name, &record);
    let mut detail = err.detail.clone().unwrap_or_else(|| serde_json::json!({}));
    detail["reason"] = reason.into();
    detail["memory"] = serde_json::json!({
        "namespace": m.namespace, "name": m.name, "stored": true,
        "extraction": if recorded.is_ok() { "failed" } else { "unrecorded" },
    });
    let hint = format!(
        "the memory `{}` is stored without entities; `loci memory enrich {}` retries ({})",
        m.name,
        m.name,
        err.hint.as_deref().unwrap_or("see the message")
    );
    ApiError {
        kind: err.kind,
        message: format!("LLM extraction of `{}` failed: {}", m.name, err.message),
        hint: Some(hint),
        detail: Some(detail),
    }
}

/// One call of the tool; the error carries the failure's stable reason.
fn run_tool(
    sup: &Supervisor,
    s: &Settings,
    cwd: &std::path::Path,
    m: &Memory,
    budget: Duration,
) -> Result<extract::Extracted, (ApiError, &'static str)> {
    let mut runner = match s.tool {
        LlmChoice::Claude => LlmRunner::new(LlmTool::Claude),
        LlmChoice::Codex => LlmRunner::new(LlmTool::Codex),
    }
    .spawner_name("memory_extract");
    if let Some(b) = &s.binary {
        runner = runner.binary(b);
    }
    if let Some(d) = &s.config_dir {
        runner = runner.config_dir(d);
    }
    let mut req = LlmRequest::new(extract::prompt(m), cwd);
    req.model = s.model.clone();
    req.extra_args = s.args.clone();
    req.budget = budget;
    req.max_output_bytes = s.max_output;
    // The answer is about as large as the entities the body can name: the body's size
    // and a margin for the JSON around it.
    req.expected_output_bytes = m.body.len() as u64 + 16 * 1024;
    req.env =
        EnvPolicy::allowlist(TOOL_ENV.iter().copied()).pin(loci_supervisor::AUTO_WATCH_VAR, "0");
    let answer = runner.run(sup, &req).map_err(|e| {
        let reason = e.kind();
        (ApiError::from(e), reason)
    })?;
    extract::parse_answer(&answer.text).map_err(|e| {
        (
            ApiError::new(ErrorKind::ExtractionFailed, e.to_string())
                .detail(serde_json::json!({ "reason": "invalid_output" })),
            "invalid_output",
        )
    })
}

/// The deadline arithmetic of a run: each call gets `llm.timeoutMs` or what is left of
/// `llm.runTimeoutMs`, whichever is shorter; `None` once the run's time is spent.
pub(super) fn call_budget(s: &Settings, started: Instant) -> Option<Duration> {
    let left = s.run_timeout.checked_sub(started.elapsed())?;
    (!left.is_zero()).then(|| left.min(s.timeout))
}
