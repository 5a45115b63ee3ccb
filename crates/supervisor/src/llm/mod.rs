//! LLM command-line runners (`claude -p`, `codex exec`) built on the
//! supervisor, for memory extraction (seed 000, done the loci way).
//!
//! Every run: resolves the binary, gives the tool an isolated, empty config
//! directory (`CLAUDE_CONFIG_DIR` / `CODEX_HOME`) and, for claude, the empty
//! MCP config file with `--strict-mcp-config`; runs [`preflight_check`];
//! sends the prompt on **stdin** (never argv, so E2BIG cannot happen); parses
//! stdout as it streams, in growable buffers (no fixed-size cap, no 64 KiB
//! truncation) bounded only by [`LlmRequest::max_output_bytes`]; and removes
//! the temp config when the child ends.

mod claude;
mod codex;

use std::ffi::OsString;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::env::EnvPolicy;
use crate::error::SpawnError;
use crate::outcome::{Exit, Outcome};
use crate::poison::lock;
use crate::preflight::{self, PreflightArgs, PreflightError, preflight_check};
use crate::spec::{DEFAULT_BUDGET, DEFAULT_KILL_GRACE, SpawnSpec};
use crate::supervisor::Supervisor;

/// Default bound on an LLM tool's stdout: 256 MiB.
pub const DEFAULT_MAX_OUTPUT: u64 = 256 << 20;

/// Bytes of stdout/stderr kept in the run's [`Outcome`] captures (the parser
/// sees the whole stream independently of this).
const LLM_CAPTURE_CAP: usize = 64 * 1024;

/// Which tool a runner drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlmTool {
    /// Anthropic's Claude Code: `claude -p --output-format json`, one JSON
    /// result object on stdout.
    Claude,
    /// OpenAI's Codex CLI: `codex exec --json -`, JSONL events on stdout.
    Codex,
}

impl LlmTool {
    fn name(self) -> &'static str {
        match self {
            LlmTool::Claude => "claude",
            LlmTool::Codex => "codex",
        }
    }

    fn config_var(self) -> &'static str {
        match self {
            LlmTool::Claude => "CLAUDE_CONFIG_DIR",
            LlmTool::Codex => "CODEX_HOME",
        }
    }
}

/// One prompt to run.
#[derive(Clone, Debug)]
pub struct LlmRequest {
    /// The prompt, written to the tool's stdin. Any size.
    pub prompt: String,
    /// The tool's working directory (also where the `.mcp.json` walk-up of
    /// preflight starts).
    pub cwd: PathBuf,
    /// `--model`, if any.
    pub model: Option<String>,
    /// Extra arguments placed after the runner's own.
    pub extra_args: Vec<OsString>,
    /// Time budget of the run.
    pub budget: Duration,
    /// Time between SIGTERM and SIGKILL when the run is stopped.
    pub kill_grace: Duration,
    /// Most stdout bytes accepted; beyond it the run is stopped and fails
    /// with [`LlmError::OutputTooLarge`].
    pub max_output_bytes: u64,
    /// The caller's estimate of the output size (preflight guard 3 checks it
    /// against `max_output_bytes`).
    pub expected_output_bytes: u64,
    /// The tool's environment; the runner pins the config directory variable
    /// over it.
    pub env: EnvPolicy,
}

impl LlmRequest {
    /// A request with the defaults: [`DEFAULT_BUDGET`], [`DEFAULT_KILL_GRACE`],
    /// [`DEFAULT_MAX_OUTPUT`], no model, [`EnvPolicy::loci_child`].
    pub fn new(prompt: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        LlmRequest {
            prompt: prompt.into(),
            cwd: cwd.into(),
            model: None,
            extra_args: Vec::new(),
            budget: DEFAULT_BUDGET,
            kill_grace: DEFAULT_KILL_GRACE,
            max_output_bytes: DEFAULT_MAX_OUTPUT,
            expected_output_bytes: 0,
            env: EnvPolicy::loci_child(),
        }
    }
}

/// What a successful run produced.
#[derive(Clone, Debug)]
pub struct LlmResponse {
    /// The model's final answer text.
    pub text: String,
    /// Tool-specific metadata: claude's result object without `result`;
    /// for codex `{"usage", "thread_id", "events"}`.
    pub details: serde_json::Value,
    /// The run itself (exit, elapsed, bounded stdout/stderr captures).
    pub outcome: Outcome,
}

/// Why an LLM run failed. Messages name the tool and never include the
/// prompt.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The preflight gate refused the spawn (exit code 16).
    #[error("preflight failed for {tool}: {source}")]
    Preflight {
        /// `claude` or `codex`.
        tool: &'static str,
        /// Which guard failed.
        #[source]
        source: PreflightError,
    },
    /// The tool could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// A temp file or directory for the run could not be created.
    #[error("cannot prepare the {tool} run: {source}")]
    Setup {
        /// `claude` or `codex`.
        tool: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The run hit its time budget.
    #[error("{tool} did not finish within {budget:?}")]
    TimedOut {
        /// `claude` or `codex`.
        tool: &'static str,
        /// The budget.
        budget: Duration,
    },
    /// The run was cancelled or torn down.
    #[error("{tool} run was cancelled")]
    Cancelled {
        /// `claude` or `codex`.
        tool: &'static str,
    },
    /// stdout exceeded `max_output_bytes`; the run was stopped.
    #[error("{tool} printed more than {limit} bytes")]
    OutputTooLarge {
        /// `claude` or `codex`.
        tool: &'static str,
        /// The limit.
        limit: u64,
    },
    /// The tool exited unsuccessfully without a parsable error.
    #[error("{tool} failed ({exit}): {stderr}")]
    Failed {
        /// `claude` or `codex`.
        tool: &'static str,
        /// How it ended.
        exit: Exit,
        /// Head and tail of its stderr.
        stderr: String,
    },
    /// The tool reported an error in its own output.
    #[error("{tool} reported an error: {message}")]
    ToolError {
        /// `claude` or `codex`.
        tool: &'static str,
        /// Its message.
        message: String,
    },
    /// The output could not be understood.
    #[error("cannot parse {tool} output: {message}")]
    Parse {
        /// `claude` or `codex`.
        tool: &'static str,
        /// What was wrong.
        message: String,
    },
}

impl LlmError {
    /// The variant's name in snake_case (a preflight failure gives the
    /// failed guard's [`PreflightError::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Preflight { source, .. } => source.kind(),
            LlmError::Spawn(e) => e.kind(),
            LlmError::Setup { .. } => "llm_setup_failed",
            LlmError::TimedOut { .. } => "llm_timed_out",
            LlmError::Cancelled { .. } => "llm_cancelled",
            LlmError::OutputTooLarge { .. } => "llm_output_too_large",
            LlmError::Failed { .. } => "llm_failed",
            LlmError::ToolError { .. } => "llm_tool_error",
            LlmError::Parse { .. } => "llm_output_unparsable",
        }
    }
}

/// What a tool's stdout parser produced.
struct Parsed {
    text: Option<String>,
    details: serde_json::Value,
    tool_error: Option<String>,
}

/// A streaming parser for one tool's stdout.
trait OutputParser: Send {
    fn feed(&mut self, chunk: &[u8]);
    fn finish(&mut self) -> Result<Parsed, String>;
}

/// Runs prompts through `claude` or `codex` under a [`Supervisor`].
#[derive(Clone, Debug)]
pub struct LlmRunner {
    tool: LlmTool,
    binary: PathBuf,
    config_dir: Option<PathBuf>,
    spawner_name: &'static str,
}

impl LlmRunner {
    /// A runner for `claude` found in `PATH`.
    pub fn claude() -> Self {
        Self::new(LlmTool::Claude)
    }

    /// A runner for `codex` found in `PATH`.
    pub fn codex() -> Self {
        Self::new(LlmTool::Codex)
    }

    /// A runner for `tool` found in `PATH`, with a fresh empty config dir per
    /// run.
    pub fn new(tool: LlmTool) -> Self {
        LlmRunner {
            tool,
            binary: PathBuf::from(tool.name()),
            config_dir: None,
            spawner_name: tool.name(),
        }
    }

    /// Use this program instead of the one in `PATH`.
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = path.into();
        self
    }

    /// Use this config directory instead of a fresh empty temp dir (for
    /// claude, preflight still requires it to be empty).
    pub fn config_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config_dir = Some(dir.into());
        self
    }

    /// The spawner name in preflight events (defaults to the tool name).
    pub fn spawner_name(mut self, name: &'static str) -> Self {
        self.spawner_name = name;
        self
    }

    /// Runs `req` to completion under `sup`.
    pub fn run(&self, sup: &Supervisor, req: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let tool = self.tool.name();
        let setup = |source| LlmError::Setup { tool, source };
        let binary =
            preflight::resolve_program(&self.binary).unwrap_or_else(|| self.binary.clone());
        let mut spec = SpawnSpec::new(&binary);

        let (config_dir, temp_dir) = match &self.config_dir {
            Some(d) => (d.clone(), None),
            None => {
                let d = tempfile::Builder::new()
                    .prefix(&format!("loci-{tool}-config-"))
                    .tempdir()
                    .map_err(setup)?;
                (d.path().to_path_buf(), Some(d))
            }
        };
        let mut args: Vec<OsString> = Vec::new();
        let parser: Box<dyn OutputParser> = match self.tool {
            LlmTool::Claude => {
                let mcp = preflight::write_empty_mcp_config_tempfile().map_err(setup)?;
                args.extend(claude::args(mcp.path(), req.model.as_deref()));
                spec = spec.hold_until_exit(mcp);
                Box::new(claude::Parser::default())
            }
            LlmTool::Codex => {
                args.extend(codex::args(req.model.as_deref()));
                Box::new(codex::Parser::default())
            }
        };
        args.extend(req.extra_args.iter().cloned());
        if self.tool == LlmTool::Codex {
            args.push("-".into()); // read the prompt from stdin
        }

        let claude_dir = (self.tool == LlmTool::Claude).then_some(config_dir.as_path());
        let pf = PreflightArgs {
            spawner_name: self.spawner_name,
            binary_path: &binary,
            argv: &args,
            child_cwd: &req.cwd,
            mcp_config_inline_json: None,
            expected_output_bytes: req.expected_output_bytes,
            output_cap_bytes: req.max_output_bytes,
            claude_config_dir: claude_dir,
        };
        preflight_check(&pf).map_err(|source| LlmError::Preflight { tool, source })?;

        let state = Arc::new(Mutex::new(Stream {
            parser,
            seen: 0,
            limit: req.max_output_bytes,
            over: false,
        }));
        let sink_state = state.clone();
        spec = spec
            .args(args)
            .stdin_bytes(req.prompt.as_bytes())
            .cwd(&req.cwd)
            .env(
                req.env
                    .clone()
                    .pin(self.tool.config_var(), config_dir.as_os_str()),
            )
            .budget(req.budget)
            .kill_grace(req.kill_grace)
            .capture_cap(LLM_CAPTURE_CAP)
            .on_stdout(move |chunk| lock(&sink_state).feed(chunk));
        if let Some(d) = temp_dir {
            spec = spec.hold_until_exit(d);
        }
        tracing::info!(
            tool,
            spawner = self.spawner_name,
            prompt_bytes = req.prompt.len(),
            "llm run starting"
        );
        let outcome = sup.spawn(spec)?.wait();
        let mut st = lock(&state);
        finish(self.tool, req, &mut st, outcome)
    }
}

struct Stream {
    parser: Box<dyn OutputParser>,
    seen: u64,
    limit: u64,
    over: bool,
}

impl Stream {
    fn feed(&mut self, chunk: &[u8]) -> ControlFlow<()> {
        self.seen += chunk.len() as u64;
        if self.seen > self.limit {
            self.over = true;
            return ControlFlow::Break(());
        }
        self.parser.feed(chunk);
        ControlFlow::Continue(())
    }
}

fn finish(
    tool: LlmTool,
    req: &LlmRequest,
    st: &mut Stream,
    outcome: Outcome,
) -> Result<LlmResponse, LlmError> {
    let tool_name = tool.name();
    if st.over {
        return Err(LlmError::OutputTooLarge {
            tool: tool_name,
            limit: st.limit,
        });
    }
    if outcome.timed_out {
        return Err(LlmError::TimedOut {
            tool: tool_name,
            budget: req.budget,
        });
    }
    if outcome.cancelled {
        return Err(LlmError::Cancelled { tool: tool_name });
    }
    let parsed = st.parser.finish();
    let failed = outcome.exit != Exit::Code(0);
    match parsed {
        Ok(Parsed {
            tool_error: Some(message),
            ..
        }) => Err(LlmError::ToolError {
            tool: tool_name,
            message,
        }),
        Ok(Parsed {
            text: Some(text),
            details,
            ..
        }) if !failed => Ok(LlmResponse {
            text,
            details,
            outcome,
        }),
        Ok(_) if !failed => Err(LlmError::Parse {
            tool: tool_name,
            message: "no final answer in the output".into(),
        }),
        Err(message) if !failed => Err(LlmError::Parse {
            tool: tool_name,
            message,
        }),
        _ => Err(LlmError::Failed {
            tool: tool_name,
            exit: outcome.exit,
            stderr: outcome.stderr.to_string_lossy(),
        }),
    }
}
