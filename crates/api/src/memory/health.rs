//! The memory part of `GET /health`: which store this process's configuration points
//! at, whether it answers, and how it searches vectors. A team database that is down
//! is reported here (the server is then `degraded` for memory), never an error of the
//! health answer, so a monitor still sees the code graph served.

use loci_lifecycle::config::Config;
use loci_memory::{MemoryStore, PgStore, StoreKind, VectorSearch};
use schemars::JsonSchema;
use serde::Serialize;

/// The scope the health check connects under: it reads and writes no memory.
const HEALTH_SCOPE: &str = "loci-health";

/// The memory store as `/health` reports it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryHealth {
    /// `sqlite` (each workspace's file) or `postgres` (`memory.url`).
    pub kind: StoreKind,
    /// Whether the store answered now (a SQLite file is always reachable).
    pub reachable: bool,
    /// How vector recall searches; absent when the database did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_search: Option<VectorSearch>,
    /// The database, its password hidden (PostgreSQL only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Why it is not reachable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The memory store of this process's own configuration (environment and user
/// configuration; a workspace's `.loci` configuration may name another), checked now.
/// Blocks on the network: call it off the async runtime.
pub fn memory_health() -> MemoryHealth {
    let config = Config::load(None);
    let Some(url) = config.memory_url() else {
        return MemoryHealth {
            kind: StoreKind::Sqlite,
            reachable: true,
            vector_search: Some(VectorSearch::Exact),
            target: None,
            error: None,
        };
    };
    let target = Some(url.masked());
    match PgStore::connect(url.expose(), HEALTH_SCOPE).and_then(|s| {
        s.ping()?;
        Ok(s.describe().vector_search)
    }) {
        Ok(mode) => MemoryHealth {
            kind: StoreKind::Postgres,
            reachable: true,
            vector_search: Some(mode),
            target,
            error: None,
        },
        Err(e) => MemoryHealth {
            kind: StoreKind::Postgres,
            reachable: false,
            vector_search: None,
            target,
            error: Some(e.to_string()),
        },
    }
}

impl MemoryHealth {
    /// The team database that gave no answer within `budget` (a SQLite store always
    /// answers at once).
    pub fn no_answer(budget: std::time::Duration) -> MemoryHealth {
        MemoryHealth {
            kind: StoreKind::Postgres,
            reachable: false,
            vector_search: None,
            target: None,
            error: Some(format!(
                "the memory database did not answer within {} ms",
                budget.as_millis()
            )),
        }
    }
}
