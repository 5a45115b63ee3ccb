//! The table of every configuration key: its name, environment variable, kind,
//! default and one-line doc.

use super::value::{KeyDef, Kind, Value};

/// The file-size caps `index.maxFileBytes` (and `loci index --max-file-bytes`) accept: a
/// cap of 0 would index nothing, and over 1 GiB one file could exhaust memory.
pub const MAX_FILE_BYTES_RANGE: std::ops::RangeInclusive<u64> = 1..=1 << 30;

const DAY_MS: u64 = 86_400_000;

/// Every key loci reads (lifecycle, index, roots, the API server, limits).
pub const KEYS: &[KeyDef] = &[
    KeyDef {
        key: "lifecycle.autoCreate",
        env: "LOCI_LIFECYCLE_AUTO_CREATE",
        kind: Kind::Bool,
        default: Some(Value::Bool(false)),
        doc: "the gate indexes an unindexed workspace in the background",
    },
    KeyDef {
        key: "lifecycle.syncOnStart",
        env: "LOCI_LIFECYCLE_SYNC_ON_START",
        kind: Kind::Bool,
        default: Some(Value::Bool(true)),
        doc: "the gate starts a background sync when the index is behind",
    },
    KeyDef {
        key: "lifecycle.livenessCacheMs",
        env: "LOCI_LIFECYCLE_LIVENESS_CACHE_MS",
        kind: Kind::Int {
            min: 0,
            max: DAY_MS,
        },
        default: Some(Value::Int(30_000)),
        doc: "a clean answer is reused this long without re-walking",
    },
    KeyDef {
        key: "lifecycle.gateBudgetMs",
        env: "LOCI_LIFECYCLE_GATE_BUDGET_MS",
        kind: Kind::Int {
            min: 1,
            max: 60_000,
        },
        default: Some(Value::Int(50)),
        doc: "the gate answers within this time with what it knows",
    },
    KeyDef {
        key: "lifecycle.watchDebounceMs",
        env: "LOCI_LIFECYCLE_WATCH_DEBOUNCE_MS",
        kind: Kind::Int {
            min: 10,
            max: 60_000,
        },
        default: Some(Value::Int(300)),
        doc: "`loci watch` waits for this much quiet before syncing",
    },
    KeyDef {
        key: "lifecycle.executable",
        env: "LOCI_LIFECYCLE_EXECUTABLE",
        kind: Kind::Path,
        default: None,
        doc: "the loci binary background runs execute (default: this one)",
    },
    KeyDef {
        key: "index.probeTimeoutMs",
        env: "LOCI_INDEX_PROBE_TIMEOUT_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: Some(Value::Int(30_000)),
        doc: "budget of a probe (the state check the gate finishes after answering)",
    },
    KeyDef {
        key: "index.maintenanceTimeoutMs",
        env: "LOCI_INDEX_MAINTENANCE_TIMEOUT_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: None,
        doc: "budget of a background index/sync/rebuild (unset: the supervisor's 600000)",
    },
    KeyDef {
        key: "index.maxFileBytes",
        env: "LOCI_INDEX_MAX_FILE_BYTES",
        kind: Kind::Int {
            min: *MAX_FILE_BYTES_RANGE.start(),
            max: *MAX_FILE_BYTES_RANGE.end(),
        },
        default: Some(Value::Int(loci_index::DEFAULT_MAX_FILE_BYTES)),
        doc: "files larger than this are not indexed",
    },
    KeyDef {
        key: "index.fileBudgetMs",
        env: "LOCI_INDEX_FILE_BUDGET_MS",
        kind: Kind::Int {
            min: *loci_index::FILE_BUDGET_MS_RANGE.start(),
            max: *loci_index::FILE_BUDGET_MS_RANGE.end(),
        },
        default: Some(Value::Int(
            loci_index::DEFAULT_FILE_BUDGET.as_millis() as u64
        )),
        doc: "time one file's parse, extraction and resolution may take per MiB; past it the file is skipped as `timeout`",
    },
    KeyDef {
        key: "roots.managed",
        env: "LOCI_MANAGED_ROOT",
        kind: Kind::Path,
        default: None,
        doc: "the managed root: workspaces named by a single name live under it",
    },
    KeyDef {
        key: "roots.base",
        env: "LOCI_PROJECTS_BASE",
        kind: Kind::Path,
        default: None,
        doc: "the projects base: workspaces named by a relative segment live under it",
    },
    KeyDef {
        key: "api.enabled",
        env: "LOCI_API_ENABLED",
        kind: Kind::Bool,
        default: Some(Value::Bool(true)),
        doc: "the gate may ask (or start) a loci server about a workspace without a marker",
    },
    KeyDef {
        key: "api.port",
        env: "LOCI_API_PORT",
        kind: Kind::Int { min: 1, max: 65535 },
        default: Some(Value::Int(8000)),
        doc: "the port `loci serve` binds and the gate's probe asks first",
    },
    KeyDef {
        key: "api.probeDeadlineMs",
        env: "LOCI_API_PROBE_DEADLINE_MS",
        kind: Kind::Int { min: 1, max: 60000 },
        default: Some(Value::Int(2_000)),
        doc: "hard deadline of the gate's whole API probe chain",
    },
    KeyDef {
        key: "api.requestTimeoutMs",
        env: "LOCI_API_REQUEST_TIMEOUT_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: Some(Value::Int(30_000)),
        doc: "deadline of one HTTP request to `loci serve`",
    },
    KeyDef {
        key: "api.maxBodyBytes",
        env: "LOCI_API_MAX_BODY_BYTES",
        kind: Kind::Int {
            min: 1,
            max: 64 << 20,
        },
        default: Some(Value::Int(1 << 20)),
        doc: "largest HTTP request body `loci serve` reads",
    },
    KeyDef {
        key: "api.headerReadTimeoutMs",
        env: "LOCI_API_HEADER_READ_TIMEOUT_MS",
        kind: Kind::Int {
            min: 1,
            max: 600_000,
        },
        default: Some(Value::Int(10_000)),
        doc: "a connection that has not sent a request's headers within this time is closed",
    },
    KeyDef {
        key: "api.maxHeaderBytes",
        env: "LOCI_API_MAX_HEADER_BYTES",
        kind: Kind::Int {
            min: 8192,
            max: 1 << 20,
        },
        default: Some(Value::Int(65_536)),
        doc: "largest request head (request line and headers) `loci serve` reads",
    },
    KeyDef {
        key: "web.signinTtlMs",
        env: "LOCI_WEB_SIGNIN_TTL_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: Some(Value::Int(300_000)),
        doc: "how long a one-time sign-in URL of the web view stays valid (it is also single-use)",
    },
    KeyDef {
        key: "web.sessionTtlMs",
        env: "LOCI_WEB_SESSION_TTL_MS",
        kind: Kind::Int {
            min: 1,
            max: 7 * DAY_MS,
        },
        default: Some(Value::Int(43_200_000)),
        doc: "how long a web-view session (its cookie) lasts after sign-in",
    },
    KeyDef {
        key: "mcp.maxSessions",
        env: "LOCI_MCP_MAX_SESSIONS",
        kind: Kind::Int {
            min: 1,
            max: 100_000,
        },
        default: Some(Value::Int(256)),
        doc: "live `/mcp` sessions `loci serve` holds at most (more: too_many_sessions)",
    },
    KeyDef {
        key: "mcp.sessionIdleMs",
        env: "LOCI_MCP_SESSION_IDLE_MS",
        kind: Kind::Int {
            min: 100,
            max: DAY_MS,
        },
        default: Some(Value::Int(300_000)),
        doc: "an `/mcp` session without a message for this long is closed",
    },
    KeyDef {
        key: "clone.allowGit",
        env: "LOCI_CLONE_ALLOW_GIT",
        kind: Kind::Bool,
        default: Some(Value::Bool(false)),
        doc: "HTTP callers may also clone git:// URLs (unauthenticated git daemon)",
    },
    KeyDef {
        key: "clone.allowHttp",
        env: "LOCI_CLONE_ALLOW_HTTP",
        kind: Kind::Bool,
        default: Some(Value::Bool(false)),
        doc: "HTTP callers may also clone plain http:// URLs",
    },
    KeyDef {
        key: "clone.allowAddresses",
        env: "LOCI_CLONE_ALLOW_ADDRESSES",
        kind: Kind::Text,
        default: None,
        doc: "non-public addresses HTTP callers' clones may reach: classes (loopback, unspecified, link_local, private, reserved) and ranges (10.1.0.0/16), comma-separated",
    },
    KeyDef {
        key: "limits.readDeadlineMs",
        env: "LOCI_LIMITS_READ_DEADLINE_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: Some(Value::Int(10_000)),
        doc: "deadline of one graph read (find, callers, search...)",
    },
    KeyDef {
        key: "limits.queryTimeoutMs",
        env: "LOCI_LIMITS_QUERY_TIMEOUT_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: Some(Value::Int(10_000)),
        doc: "default deadline of a read-only SQL statement",
    },
    KeyDef {
        key: "limits.maxRows",
        env: "LOCI_LIMITS_MAX_ROWS",
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: Some(Value::Int(1_000)),
        doc: "default row cap of a read-only SQL statement",
    },
    KeyDef {
        key: "memory.url",
        env: "LOCI_MEMORY_URL",
        kind: Kind::DatabaseUrl,
        default: None,
        doc: "keep workspace memories on this PostgreSQL server (postgres://user:pass@host/db) instead of .loci/memory.db",
    },
    KeyDef {
        key: "memory.repositoryId",
        env: "LOCI_MEMORY_REPOSITORY_ID",
        kind: Kind::Text,
        default: None,
        doc: "the repository identity a workspace's memories are shared under on memory.url (default: its git remote `origin`, normalised)",
    },
    KeyDef {
        key: "memory.caFile",
        env: "LOCI_MEMORY_CA_FILE",
        kind: Kind::Path,
        default: None,
        doc: "the PEM file of the CA that signed memory.url's server certificate: sslmode=verify-ca and verify-full need one (the URL's sslrootcert wins)",
    },
    KeyDef {
        key: "llm.allowSpawn",
        env: "LOCI_LLM_ALLOW_SPAWN",
        kind: Kind::Bool,
        default: Some(Value::Bool(false)),
        doc: "HTTP and MCP callers may have memories extracted by claude/codex (the CLI always may)",
    },
    KeyDef {
        key: "llm.claude",
        env: "LOCI_LLM_CLAUDE",
        kind: Kind::Path,
        default: None,
        doc: "the claude program LLM extraction runs (default: `claude` in PATH)",
    },
    KeyDef {
        key: "llm.codex",
        env: "LOCI_LLM_CODEX",
        kind: Kind::Path,
        default: None,
        doc: "the codex program LLM extraction runs (default: `codex` in PATH)",
    },
    KeyDef {
        key: "llm.model",
        env: "LOCI_LLM_MODEL",
        kind: Kind::Text,
        default: None,
        doc: "`--model` given to the LLM tool (unset: the tool's default)",
    },
    KeyDef {
        key: "llm.args",
        env: "LOCI_LLM_ARGS",
        kind: Kind::Text,
        default: None,
        doc: "extra arguments for the LLM tool, separated by whitespace (no quoting)",
    },
    KeyDef {
        key: "llm.configDir",
        env: "LOCI_LLM_CONFIG_DIR",
        kind: Kind::Path,
        default: None,
        doc: "CLAUDE_CONFIG_DIR / CODEX_HOME for the tool (unset: a fresh empty one per call)",
    },
    KeyDef {
        key: "llm.timeoutMs",
        env: "LOCI_LLM_TIMEOUT_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: Some(Value::Int(120_000)),
        doc: "time budget of one LLM call",
    },
    KeyDef {
        key: "llm.runTimeoutMs",
        env: "LOCI_LLM_RUN_TIMEOUT_MS",
        kind: Kind::Int {
            min: 1,
            max: DAY_MS,
        },
        default: Some(Value::Int(900_000)),
        doc: "time budget of one `memory enrich` run (no call starts after it)",
    },
    KeyDef {
        key: "llm.maxCalls",
        env: "LOCI_LLM_MAX_CALLS",
        kind: Kind::Int {
            min: 1,
            max: 100_000,
        },
        default: Some(Value::Int(50)),
        doc: "most LLM calls one run may make (a larger batch is refused before it starts)",
    },
    KeyDef {
        key: "llm.confirmTokens",
        env: "LOCI_LLM_CONFIRM_TOKENS",
        kind: Kind::Int {
            min: 0,
            max: 1 << 40,
        },
        default: Some(Value::Int(20_000)),
        doc: "a batch estimated above this many tokens needs consent (`--yes`)",
    },
    KeyDef {
        key: "llm.maxOutputBytes",
        env: "LOCI_LLM_MAX_OUTPUT_BYTES",
        kind: Kind::Int {
            min: 1,
            max: 1 << 32,
        },
        default: Some(Value::Int(16 << 20)),
        doc: "most output one LLM call may print (parsed as it streams, no 64 KiB cap)",
    },
];
