//! The server's own answers (health, capabilities, the workspace list) and what its
//! answers leave out: the types both the routes and the OpenAPI document name.

use schemars::JsonSchema;
use serde::Serialize;

/// `GET /health`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Health {
    /// `ok`, or `degraded` when the memory store does not answer (the code graph is
    /// still served).
    pub status: String,
    /// loci's version.
    pub version: String,
    /// The memory store of the server's configuration, checked now.
    pub memory: loci_api::memory::MemoryHealth,
}

/// `GET /api/v1/capabilities`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Capabilities {
    /// What this server implements, by name (`graph.read`, `workspaces.list`...).
    pub capabilities: Vec<String>,
}

/// One registered workspace, named by id, locator and folder name — never by its
/// absolute path.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceSummary {
    /// The registry id (the `{id}` of the workspace routes).
    pub id: i64,
    /// The locator it was created under (`managed:NAME`, `mounted:SEGMENT`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// The project it was confirmed for, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// The last component of its root.
    pub name: String,
    /// Files in the index after the last run.
    pub files: Option<i64>,
    /// Symbols in the index after the last run.
    pub symbols: Option<i64>,
    /// Unix seconds of the last completed index run.
    pub last_indexed_at: Option<i64>,
}

/// `GET /api/v1/workspaces`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceSummaries {
    /// The registered workspaces, by id.
    pub workspaces: Vec<WorkspaceSummary>,
}

/// The fields of `StatsAnswer` that hold absolute paths; the HTTP answer omits them.
pub const STATS_PATH_FIELDS: &[&str] = &["workspace", "index_path"];
