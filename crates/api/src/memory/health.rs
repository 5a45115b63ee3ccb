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
        return MemoryHealth::sqlite();
    };
    let options = super::location::pg_options(config.path("memory.caFile"));
    let answer = PgStore::connect_with(url.expose(), HEALTH_SCOPE, options)
        .and_then(|s| {
            s.ping()?;
            Ok(s.describe().vector_search)
        })
        .map_err(|e| e.to_string());
    MemoryHealth::postgres(Some(url.masked()), answer)
}

impl MemoryHealth {
    /// Each workspace's SQLite file: always reachable, vectors searched exactly.
    pub fn sqlite() -> MemoryHealth {
        MemoryHealth {
            kind: StoreKind::Sqlite,
            reachable: true,
            vector_search: Some(VectorSearch::Exact),
            target: None,
            error: None,
        }
    }

    /// The team database at `target` (its password hidden): how it searches vectors
    /// when it answered, else why it did not.
    pub fn postgres(target: Option<String>, answer: Result<VectorSearch, String>) -> MemoryHealth {
        let (reachable, vector_search, error) = match answer {
            Ok(mode) => (true, Some(mode), None),
            Err(why) => (false, None, Some(why)),
        };
        MemoryHealth {
            kind: StoreKind::Postgres,
            reachable,
            vector_search,
            target,
            error,
        }
    }

    /// The team database that gave no answer within `budget` (a SQLite store always
    /// answers at once).
    pub fn no_answer(budget: std::time::Duration) -> MemoryHealth {
        MemoryHealth::postgres(
            None,
            Err(format!(
                "the memory database did not answer within {} ms",
                budget.as_millis()
            )),
        )
    }
}
