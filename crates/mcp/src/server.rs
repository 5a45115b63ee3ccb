//! The MCP server handler: `initialize` binds the session (and answers at once),
//! `tools/list` is the [`TOOLS`] table, `tools/call` runs one tool on the blocking pool
//! and shapes its answer — budget, freshness note, the session's notices once — or
//! turns its `ApiError` into a tool error carrying the kind and the hint.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use loci_api::{ApiError, CancelToken, ErrorKind, ReadOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::args::Args;
use crate::budget::{self, DEFAULT_MAX_CHARS, MAX_MAX_CHARS, MIN_MAX_CHARS};
use crate::host::{Host, lock};
use crate::session::{Session, Source, root_from_uri};
use crate::tools::{self, Answer, Ctx, TOOLS, ToolDef};

/// The `_meta` key of a tool error's object (`kind`, `message`, `hint`, `detail`).
pub const ERROR_META: &str = "loci/error";
/// The `_meta` key of a tool error's freshness note.
pub const INDEX_META: &str = "loci/index";

/// What the server tells the agent about itself in `initialize`.
const INSTRUCTIONS: &str = "loci: a live code graph of this workspace. `find` locates definitions, \
`symbol` shows one, `relations` walks callers/callees/refs/impact, `search` greps indexed code, \
`query` runs read-only SQL, `status` says whether the index is fresh. Every answer fits `max_chars` \
and gives `page.next_cursor` when more exist; `index` says how fresh it is.";

/// One MCP session's handler (stdio: the process's one session; HTTP: one per
/// `Mcp-Session-Id`), over the process's shared [`Host`].
#[derive(Clone)]
pub struct LociMcp {
    host: Arc<Host>,
    session: Arc<Mutex<Session>>,
    offers_roots: Arc<AtomicBool>,
}

impl std::fmt::Debug for LociMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LociMcp").field("host", &self.host).finish()
    }
}

impl LociMcp {
    /// A handler for one session over `host`.
    pub fn new(host: Arc<Host>) -> LociMcp {
        LociMcp {
            host,
            session: Arc::new(Mutex::new(Session::default())),
            offers_roots: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Binds (or rebinds) the session at its start: `--workspace`, else (when the
    /// client offers no roots) the working directory; a client with roots is bound
    /// when they arrive.
    pub fn start_session(&self, offers_roots: bool) {
        self.offers_roots.store(offers_roots, Ordering::SeqCst);
        let mut s = lock(&self.session);
        if let Some(ws) = &self.host.fixed_workspace {
            s.bind(&self.host, ws, Source::Flag);
        } else if !offers_roots {
            s.bind(&self.host, &self.host.cwd, Source::Cwd);
        } else {
            *s = Session::default();
        }
    }

    /// Binds the session to the client's roots (the first `file://` one), unless
    /// `--workspace` decides; a session already on that root is left alone.
    pub fn bind_roots(&self, uris: &[String]) {
        if self.host.fixed_workspace.is_some() {
            return;
        }
        let root = uris.iter().find_map(|u| root_from_uri(u));
        let mut s = lock(&self.session);
        let (root, source) = match root {
            Some(r) => (r, Source::Roots),
            None => (self.host.cwd.clone(), Source::Cwd),
        };
        let canonical = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        if s.binding().is_some_and(|b| b.root == canonical) {
            return;
        }
        s.bind(&self.host, &root, source);
    }

    /// The session's current binding number (0: never bound); tests and `status`.
    pub fn generation(&self) -> u64 {
        lock(&self.session).binding().map_or(0, |b| b.generation)
    }

    /// Whether the current binding's session-start evaluation has answered.
    pub fn gate_settled(&self) -> bool {
        lock(&self.session)
            .binding()
            .is_some_and(|b| matches!(*lock(&b.gate), crate::session::GateView::Done(_)))
    }

    /// The session's lifecycle id (notices once per id).
    pub fn session_id(&self) -> Option<String> {
        lock(&self.session).binding().map(|b| b.runs.id.clone())
    }

    /// Runs one tool to its answer (blocking: call it on a blocking thread).
    pub fn call(&self, def: &ToolDef, args: Args, cancel: CancelToken) -> CallToolResult {
        let (root, runs, session_start) = {
            let mut s = lock(&self.session);
            if s.binding().is_none() {
                let (ws, source) = match &self.host.fixed_workspace {
                    Some(ws) => (ws.clone(), Source::Flag),
                    None => (self.host.cwd.clone(), Source::Cwd),
                };
                s.bind(&self.host, &ws, source);
            }
            let b = s.binding().expect("bound above");
            let gate = match &*lock(&b.gate) {
                crate::session::GateView::Done(status) => Some((**status).clone()),
                crate::session::GateView::Pending => None,
            };
            (b.root.clone(), b.runs.clone(), gate)
        };
        let ctx = Ctx {
            host: &self.host,
            root: &root,
            opts: ReadOptions {
                deadline: self.host.read_deadline,
                cancel,
            },
            session_start,
        };
        let max_chars = match args.opt_usize_max("max_chars", MAX_MAX_CHARS as u64) {
            Ok(n) => n.unwrap_or(DEFAULT_MAX_CHARS).max(MIN_MAX_CHARS),
            Err(e) => return self.error(&ctx, e, &runs),
        };
        let reply = match (def.call)(&ctx, &args) {
            Ok(r) => r,
            Err(e) => return self.error(&ctx, e, &runs),
        };
        let note = self
            .host
            .tracked(&root)
            .observe(&self.host, reply.freshness, &runs);
        let notices = lock(&self.session).take_notices();
        let mut extra = Map::new();
        let mut tail = Vec::new();
        if let Some(l) = note.line() {
            tail.push(l);
        }
        extra.insert("index".into(), json!(note));
        if !notices.is_empty() {
            tail.extend(notices.iter().map(|n| format!("notice: {}", n.message)));
            extra.insert("notices".into(), json!(notices));
        }
        let tail = tail.join("\n");
        let fitted = match reply.answer {
            Answer::List(list) => budget::fit(list, extra, &tail, max_chars),
            Answer::One { structured, text } => {
                budget::fit_one(structured, text, extra, &tail, max_chars)
            }
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(fitted.text)]);
        result.structured_content = Some(self.redact_value(fitted.structured, &root));
        result
    }

    /// A tool error: the kind, the message and the hint as text, and the error object
    /// (with the index's freshness) under `_meta` `loci/error` and `loci/index`. No
    /// structured content: clients check it against the tool's output schema, which
    /// describes answers, not errors.
    fn error(
        &self,
        ctx: &Ctx<'_>,
        e: ApiError,
        runs: &crate::fresh::SessionRuns,
    ) -> CallToolResult {
        let freshness = ctx
            .workspace()
            .ok()
            .and_then(|ws| ws.read(&ctx.opts, |_| Ok(())).ok())
            .map(|((), f)| f);
        let note = self
            .host
            .tracked(ctx.root)
            .observe(&self.host, freshness, runs);
        let e = self.redact(e, ctx.root);
        let mut text = format!("{}: {}", e.kind.name(), e.message);
        if let Some(h) = &e.hint {
            text.push_str(&format!("\nhint: {h}"));
        }
        let mut body = json!({"kind": e.kind.name(), "message": e.message});
        if let Some(h) = &e.hint {
            body["hint"] = json!(h);
        }
        if let Some(d) = &e.detail {
            body["detail"] = d.clone();
        }
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        let mut meta = Map::new();
        meta.insert(ERROR_META.into(), body);
        meta.insert(INDEX_META.into(), json!(note));
        result.meta = Some(meta.into());
        result
    }

    /// The error with the workspace's absolute path replaced, when answers hide paths.
    fn redact(&self, mut e: ApiError, root: &std::path::Path) -> ApiError {
        if !self.host.hides_paths() {
            return e;
        }
        let r = root.to_string_lossy().into_owned();
        let scrub = |s: &str| s.replace(&format!("{r}/"), "").replace(&r, "<workspace>");
        e.message = scrub(&e.message);
        e.hint = e.hint.as_deref().map(scrub);
        e.detail = e
            .detail
            .take()
            .and_then(|d| serde_json::from_str(&scrub(&d.to_string())).ok());
        e
    }

    fn redact_value(&self, v: Value, root: &std::path::Path) -> Value {
        if !self.host.hides_paths() {
            return v;
        }
        let r = root.to_string_lossy().into_owned();
        let text = v.to_string();
        if !text.contains(&r) {
            return v;
        }
        serde_json::from_str(
            &text
                .replace(&format!("{r}/"), "")
                .replace(&r, "<workspace>"),
        )
        .unwrap_or(v)
    }
}

/// The tools as `tools/list` shows them, built once per process.
pub fn tool_list() -> &'static [Tool] {
    static LIST: OnceLock<Vec<Tool>> = OnceLock::new();
    LIST.get_or_init(|| {
        TOOLS
            .iter()
            .map(|t| {
                let input = as_object(tools::input_schema(t));
                let mut tool = Tool::new(t.name, t.description, Arc::new(input));
                tool.title = Some(t.title.to_string());
                tool.output_schema = Some(Arc::new(as_object(tools::output_schema(t))));
                tool.annotations = Some(
                    ToolAnnotations::new()
                        .read_only(t.read_only)
                        .destructive(t.destructive)
                        .idempotent(t.idempotent)
                        .open_world(false),
                );
                tool
            })
            .collect()
    })
}

fn as_object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl ServerHandler for LociMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("loci", env!("CARGO_PKG_VERSION"))
                    .with_title("loci code graph"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.start_session(request.capabilities.roots.is_some());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.offers_roots.load(Ordering::SeqCst) {
            self.fetch_roots(context.peer);
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.fetch_roots(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tool_list().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tool_list().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(def) = tools::tool(&request.name) else {
            return Err(McpError::invalid_params(
                format!("no tool is named `{}`; tools/list lists them", request.name),
                None,
            ));
        };
        let args = Args::new(request.arguments);
        let cancel = CancelToken::new();
        let (this, token) = (self.clone(), cancel.clone());
        let task = tokio::task::spawn_blocking(move || this.call(def, args, token));
        tokio::select! {
            joined = task => match joined {
                Ok(result) => Ok(result.into()),
                Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "{}: the tool failed: {e}", ErrorKind::Internal.name()
                ))]).into()),
            },
            _ = context.ct.cancelled() => {
                cancel.cancel();
                Err(McpError::internal_error("the call was cancelled", None))
            }
        }
    }
}

impl LociMcp {
    /// Asks the client for its roots on a task (the answer comes through the same
    /// connection) and binds the session to them; a client that does not answer leaves
    /// the session on the working directory. (Roots are deprecated by the newest
    /// protocol revision, which has no sessions; clients of the session-based
    /// revisions, Claude Code and Codex among them, still send them.)
    #[allow(deprecated)]
    fn fetch_roots(&self, peer: rmcp::Peer<RoleServer>) {
        let this = self.clone();
        tokio::spawn(async move {
            let asked = tokio::time::timeout(ROOTS_WAIT, peer.list_roots()).await;
            let uris: Vec<String> = match asked {
                Ok(Ok(r)) => r.roots.into_iter().map(|r| r.uri).collect(),
                _ => Vec::new(),
            };
            tokio::task::spawn_blocking(move || this.bind_roots(&uris));
        });
    }
}

/// How long the server waits for the client's roots before using the working directory.
const ROOTS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
