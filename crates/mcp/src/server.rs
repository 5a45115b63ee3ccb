//! The MCP server handler: `initialize` binds the session (and answers at once),
//! `tools/list` is the [`TOOLS`] table, `tools/call` runs one tool on the blocking pool
//! and shapes its answer — budget, freshness note, the session's notices once — or
//! turns its `ApiError` into a tool error carrying the kind and the hint.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use loci_api::confine;
use loci_api::memory::MemoryAccess;
use loci_api::{ApiError, ErrorKind, ReadOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::args::Args;
use crate::budget::{self, DEFAULT_MAX_CHARS, MIN_MAX_CHARS};
use crate::cancel::{CallCancel, FireOnDrop};
use crate::host::Host;
use crate::poison::lock;
use crate::session::{Session, Source, root_from_uri};
use crate::tools::{self, Answer, Ctx, TOOLS, ToolDef};

/// The `_meta` key of a tool error's object (`kind`, `message`, `hint`, `detail`).
pub const ERROR_META: &str = "loci/error";
/// The `_meta` key of a tool error's freshness note.
pub const INDEX_META: &str = "loci/index";
/// The HTTP header a session's `initialize` names its workspace by on `/mcp`: a JSON
/// locator, `{"kind": "mounted", "segment": "team/app"}`.
pub const WORKSPACE_HEADER: &str = "loci-workspace";
/// The tool argument that names (and binds) the session's workspace on `/mcp`.
pub const WORKSPACE_ARG: &str = "workspace";

/// What the server tells the agent about itself in `initialize`.
const INSTRUCTIONS: &str = "loci: a live code graph of this workspace. `find` locates definitions, \
`symbol` shows one, `relations` walks callers/callees/refs/impact, `search` greps indexed code, \
`query` runs read-only SQL, `status` says whether the index is fresh. Every answer fits `max_chars` \
and gives `page.next_cursor` when more exist; `index` says how fresh it is.";
/// What a served session (`/mcp`) is told on top of [`INSTRUCTIONS`].
const SERVED_INSTRUCTIONS: &str = " On this server a session reads one workspace inside the server's roots, \
named by locator: every tool's `workspace` argument ({\"kind\": \"mounted\", \"segment\": \"team/app\"} or \
{\"kind\": \"managed\", \"name\": \"app\"}) binds it, as does the `Loci-Workspace` header or a client root inside them.";

/// One MCP session's handler (stdio: the process's one session; HTTP: one per
/// `Mcp-Session-Id`), over the process's shared [`Host`].
#[derive(Clone)]
pub struct LociMcp {
    host: Arc<Host>,
    session: Arc<Mutex<Session>>,
    offers_roots: Arc<AtomicBool>,
    /// Served: the session's `initialize` named its workspace by header (roots ignored).
    named_by_header: Arc<AtomicBool>,
    /// Woken when the client's roots have answered (calls wait for them, bounded).
    roots_settled: Arc<tokio::sync::Notify>,
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
            named_by_header: Arc::new(AtomicBool::new(false)),
            roots_settled: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Binds (or rebinds) the session at its start. Stdio: `--workspace`, else (when
    /// the client offers no roots) the working directory; a client with roots is bound
    /// when they arrive. Served (`/mcp`): the `Loci-Workspace` header's locator, else
    /// the client's roots when they arrive; no name binds nothing.
    pub fn start_session(&self, offers_roots: bool, header: Option<&str>) {
        self.offers_roots.store(offers_roots, Ordering::SeqCst);
        self.named_by_header
            .store(header.is_some(), Ordering::SeqCst);
        let mut s = lock(&self.session);
        s.roots_pending = false;
        if let Some(roots) = self.host.confine() {
            match header {
                Some(h) => match serde_json::from_str::<Value>(h)
                    .map_err(|e| {
                        ApiError::new(
                            ErrorKind::InvalidInput,
                            format!("the Loci-Workspace header is not a JSON locator: {e}"),
                        )
                    })
                    .and_then(|wire| confine::by_locator(roots, &wire))
                {
                    Ok(c) => s.bind_confined(&self.host, c, Source::Header),
                    Err(e) => s.refuse(e),
                },
                None if offers_roots => s.roots_pending = true,
                None => s.refuse(confine::no_workspace()),
            }
            return;
        }
        if let Some(ws) = &self.host.fixed_workspace {
            s.bind(&self.host, ws, Source::Flag);
        } else if !offers_roots {
            s.bind(&self.host, &self.host.cwd, Source::Cwd);
        } else {
            *s = Session::default();
            s.roots_pending = true;
        }
    }

    /// Binds the session to the client's roots, unless `--workspace` (stdio) or the
    /// header (served) decides; a session already on that root is left alone. Stdio:
    /// the first `file://` root, else the working directory. Served: the first root
    /// whose real path lies inside the server's roots; if none does, the session is
    /// unbound and every call answers why.
    pub fn bind_roots(&self, uris: &[String]) {
        self.bind_roots_now(uris);
        lock(&self.session).roots_pending = false;
        self.roots_settled.notify_waiters();
    }

    fn bind_roots_now(&self, uris: &[String]) {
        if let Some(roots) = self.host.confine() {
            if !self.named_by_header.load(Ordering::SeqCst) {
                self.bind_served_roots(roots, uris);
            }
            return;
        }
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

    fn bind_served_roots(&self, roots: &loci_api::vocab::paths::Roots, uris: &[String]) {
        let mut refusal: Option<ApiError> = None;
        for uri in uris {
            let named = match root_from_uri(uri) {
                Some(path) => confine::by_path(roots, &path),
                None => Err(confine::not_a_local_root()),
            };
            match named {
                Ok(c) => {
                    let mut s = lock(&self.session);
                    if s.binding().is_none_or(|b| b.root != c.root) {
                        s.bind_confined(&self.host, c, Source::Roots);
                    }
                    return;
                }
                // The most telling refusal: one inside the roots over `outside_roots`.
                Err(e) => {
                    if refusal
                        .as_ref()
                        .is_none_or(|r| r.kind == ErrorKind::OutsideRoots && e.kind != r.kind)
                    {
                        refusal = Some(e);
                    }
                }
            }
        }
        lock(&self.session).refuse(refusal.unwrap_or_else(confine::no_workspace));
    }

    /// Waits (at most [`ROOTS_WAIT`]) until the client's roots have answered, so a call
    /// right after `initialize` reads the workspace the client named.
    async fn roots_answered(&self) {
        let until = Instant::now() + ROOTS_WAIT;
        loop {
            let settled = self.roots_settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            if !lock(&self.session).roots_pending {
                return;
            }
            let left = until.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, settled).await.is_err() {
                return;
            }
        }
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
    /// Runs tool `def` with `args`; its memory calls use only the namespaces `access`
    /// allows.
    pub fn call(
        &self,
        def: &ToolDef,
        args: Args,
        cancel: CallCancel,
        access: MemoryAccess,
    ) -> CallToolResult {
        let (root, runs, session_start) = {
            let mut s = lock(&self.session);
            if let Some(roots) = self.host.confine() {
                if let Some(wire) = args.value(WORKSPACE_ARG) {
                    match confine::by_locator(roots, wire) {
                        Ok(c) if s.binding().is_some_and(|b| b.root == c.root) => {}
                        Ok(c) => s.bind_confined(&self.host, c, Source::Argument),
                        Err(e) => return self.unbound(e),
                    }
                }
                if s.binding().is_none() {
                    let why = s.refusal().cloned().unwrap_or_else(confine::no_workspace);
                    return self.unbound(why);
                }
            } else if s.binding().is_none() {
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
                cancel: cancel.token(),
            },
            cancel: &cancel,
            session_start,
            access,
        };
        let max_chars = match tools::max_chars(&args) {
            Ok(n) => n.unwrap_or(DEFAULT_MAX_CHARS).max(MIN_MAX_CHARS),
            Err(e) => return self.error(&ctx, e, &runs),
        };
        let reply = match (def.call)(&ctx, &args) {
            Ok(r) => r,
            Err(e) => return self.error(&ctx, e, &runs),
        };
        let note = self.host.tracked(&root).observe(reply.freshness, &runs);
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
        runs: &loci_api::tracking::SessionRuns,
    ) -> CallToolResult {
        let freshness = ctx
            .workspace()
            .ok()
            .and_then(|ws| ws.read(&ctx.opts, |_| Ok(())).ok())
            .map(|((), f)| f);
        let note = self.host.tracked(ctx.root).observe(freshness, runs);
        let e = self.redact(e, ctx.root);
        let mut result = error_result(&e);
        if let Some(meta) = result.meta.as_mut() {
            meta.insert(INDEX_META.into(), json!(note));
        }
        result
    }

    /// A call in a session bound to nothing: why, as a tool error (no freshness: there
    /// is no workspace).
    fn unbound(&self, e: ApiError) -> CallToolResult {
        let e = match self.host.confine() {
            Some(roots) => confine::scrub_error(e, roots, None),
            None => e,
        };
        error_result(&e)
    }

    /// The error with host paths replaced, when answers hide paths (served).
    fn redact(&self, e: ApiError, root: &std::path::Path) -> ApiError {
        let Some(roots) = self.host.confine() else {
            return e;
        };
        let index = lock_workspace_index(&self.host, root);
        confine::scrub_error(e, roots, Some((root, index.as_deref().unwrap_or(root))))
    }

    fn redact_value(&self, v: Value, root: &std::path::Path) -> Value {
        let Some(roots) = self.host.confine() else {
            return v;
        };
        let text = v.to_string();
        let index = lock_workspace_index(&self.host, root);
        let scrubbed = confine::scrub(&text, roots, Some((root, index.as_deref().unwrap_or(root))));
        if scrubbed == text {
            return v;
        }
        serde_json::from_str(&scrubbed).unwrap_or(v)
    }
}

/// The index file of the workspace at `root`, when its read handle is open.
fn lock_workspace_index(host: &Host, root: &std::path::Path) -> Option<std::path::PathBuf> {
    host.open_workspace(root)
        .map(|ws| ws.index_path().to_path_buf())
}

/// A tool error: `KIND: MESSAGE` and the hint as text, the error object under `_meta`
/// `loci/error`.
fn error_result(e: &ApiError) -> CallToolResult {
    let mut text = format!("{}: {}", e.kind.name(), e.message);
    // Hints name the tool call that helps, not the CLI command.
    let hint = e.hint.as_deref().map(crate::hints::for_mcp);
    if let Some(h) = &hint {
        text.push_str(&format!("\nhint: {h}"));
    }
    text.push_str(&candidate_lines(e.detail.as_ref()));
    let mut body = json!({"kind": e.kind.name(), "message": e.message});
    if let Some(h) = &hint {
        body["hint"] = json!(h);
    }
    if let Some(d) = &e.detail {
        body["detail"] = d.clone();
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    let mut meta = Map::new();
    meta.insert(ERROR_META.into(), body);
    result.meta = Some(meta.into());
    result
}

/// An ambiguity's candidates as text, one per line, each led by the `path:line` that
/// names it alone, so an agent picks without another call (empty for other errors).
fn candidate_lines(detail: Option<&Value>) -> String {
    let Some(list) = detail
        .and_then(|d| d.get("candidates"))
        .and_then(Value::as_array)
    else {
        return String::new();
    };
    let mut out = String::from("\ncandidates:");
    for c in list {
        out.push_str(&format!(
            "\n  {}:{} {} {}  {}",
            c["path"].as_str().unwrap_or(""),
            c["line"],
            c["kind"].as_str().unwrap_or(""),
            c["qualified_name"].as_str().unwrap_or(""),
            c["signature"].as_str().unwrap_or("")
        ));
    }
    let count = detail
        .and_then(|d| d.get("candidate_count"))
        .and_then(Value::as_u64)
        .unwrap_or(list.len() as u64);
    if count > list.len() as u64 {
        out.push_str(&format!("\n  ... {} more", count - list.len() as u64));
    }
    out
}

/// The tools as `tools/list` shows them, built once per process: on stdio, and (with
/// `served`) on `/mcp`, where every tool also takes the `workspace` locator.
pub fn tool_list(served: bool) -> &'static [Tool] {
    static LOCAL: OnceLock<Vec<Tool>> = OnceLock::new();
    static SERVED: OnceLock<Vec<Tool>> = OnceLock::new();
    let list = if served { &SERVED } else { &LOCAL };
    list.get_or_init(|| {
        TOOLS
            .iter()
            .map(|t| {
                let mut input = as_object(tools::input_schema(t));
                if served && let Some(Value::Object(props)) = input.get_mut("properties") {
                    props.insert(WORKSPACE_ARG.into(), workspace_arg_schema());
                }
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

/// The `workspace` argument on `/mcp`: a locator inside the server's roots (described
/// once, in the served instructions: `tools/list` is paid for in every client's context).
fn workspace_arg_schema() -> Value {
    json!({"type": "object"})
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
            .with_instructions(if self.host.hides_paths() {
                format!("{INSTRUCTIONS}{SERVED_INSTRUCTIONS}")
            } else {
                INSTRUCTIONS.to_string()
            })
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        // Over HTTP, rmcp hands the request's head to the handler.
        let header = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get(WORKSPACE_HEADER))
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        self.start_session(request.capabilities.roots.is_some(), header.as_deref());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.offers_roots.load(Ordering::SeqCst) {
            self.fetch_roots(context.peer);
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        lock(&self.session).roots_pending = true;
        self.fetch_roots(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            tool_list(self.host.hides_paths()).to_vec(),
        ))
    }

    /// A request rmcp could not read as its method's params: for a method this server
    /// serves that is invalid params (-32602), not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if crate::protocol::SERVED_METHODS.contains(&request.method.as_str()) {
            return Err(McpError::invalid_params(
                format!(
                    "invalid params of {}: they do not match its schema",
                    request.method
                ),
                None,
            ));
        }
        Err(McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tool_list(self.host.hides_paths())
            .iter()
            .find(|t| t.name == name)
            .cloned()
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
        // Over HTTP, the server's guard put the request key's memory namespaces beside
        // the request's head; on stdio there is no key and every namespace is the user's.
        let access = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<MemoryAccess>())
            .cloned()
            .unwrap_or_default();
        self.roots_answered().await;
        // Cancelled by the client, by the session's end, or by this future being
        // dropped (the client went away): the read's token and the tool's hooks (a
        // statement in the worker) stop with it.
        let cancel = CallCancel::new();
        let guard = FireOnDrop::new(cancel.clone());
        let (this, call_cancel) = (self.clone(), cancel.clone());
        let task = tokio::task::spawn_blocking(move || this.call(def, args, call_cancel, access));
        let answer = tokio::select! {
            joined = task => match joined {
                Ok(result) => Ok(result.into()),
                Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "{}: the tool failed: {e}", ErrorKind::Internal.name()
                ))]).into()),
            },
            _ = context.ct.cancelled() => {
                cancel.fire();
                Err(McpError::internal_error("the call was cancelled", None))
            }
        };
        guard.disarm();
        answer
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
