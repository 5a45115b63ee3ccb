//! The store itself: its connections (checked out of the process's pool for each call,
//! `pool.rs`), its scope, and the reads every operation shares.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use postgres::{GenericClient, IsolationLevel, Transaction};

use super::ctx::{Ctx, Db};
use super::pgvector::Pgvector;
use super::pool::{self, Pool, Pooled};
use super::rows::{LINK_COLUMNS, link_at, memory_at};
use super::url;
use crate::MemoryError;
use crate::model::{CodeLink, Memory};

/// Longest scope, in bytes.
const MAX_SCOPE_BYTES: usize = 512;

/// How a [`PgStore`] talks to its database; [`PgOptions::default`] is what
/// [`PgStore::connect`] uses.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// The server cancels any statement running longer (`SET statement_timeout`), so a
    /// slow or locked database answers a call with [`MemoryError::PgTimeout`] instead
    /// of hanging it. Default 30 s.
    pub statement_timeout: Duration,
    /// The most connections this process opens to the database with these options
    /// (the pool is shared by every store on the same URL). Default 8; 0 pools
    /// nothing (a connection per call, the schema checked by every store: for an
    /// external pooler such as PgBouncer, or to measure what the pool saves).
    pub pool_size: usize,
    /// How long a call waits for a free connection when all are in use before it fails
    /// with [`MemoryError::PgPoolExhausted`]. Default 10 s.
    pub checkout_timeout: Duration,
    /// Vector recall scans every vector exactly in loci even when the database has
    /// pgvector (whose HNSW index is approximate): for a team that wants exact
    /// recall, or to compare the two on one database. Vectors are still written
    /// where the index reads them. Default false.
    pub exact_vectors: bool,
    /// The CA certificates (a PEM file) the server's TLS certificate must be signed by
    /// (`memory.caFile`): `sslmode=verify-ca`/`verify-full` need one, and with one
    /// `prefer` and `require` check the chain too. The URL's `sslrootcert` wins.
    pub ca_file: Option<PathBuf>,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            statement_timeout: Duration::from_secs(30),
            pool_size: pool::DEFAULT_SIZE,
            checkout_timeout: pool::DEFAULT_CHECKOUT_TIMEOUT,
            exact_vectors: false,
            ca_file: None,
        }
    }
}

/// Memories kept in a PostgreSQL database shared by a team: one `scope` (a repository's
/// identity) per workspace, the same behaviour as [`crate::SqliteStore`] behind
/// [`crate::MemoryStore`], every mutation one `SERIALIZABLE` transaction retried on
/// conflicts (docs/memory.md, "The PostgreSQL store").
///
/// The client is `postgres`'s synchronous one, which drives its own Tokio runtime: call
/// a `PgStore` from a plain thread (`tokio::task::spawn_blocking` in an async server, as
/// the front ends already do for SQLite), never from inside a Tokio runtime, where it
/// panics. Each call checks a connection out of the process's pool for that database
/// (bounded, shared by every store on the same URL, `pool.rs`) and returns it after;
/// opening a store is cheap once the pool has migrated the schema. A `visit` callback
/// ([`crate::MemoryStore::scan_vectors`]) must not call the store.
pub struct PgStore {
    pub(super) pool: Arc<Pool>,
    pub(super) ctx: Ctx,
    /// pgvector, when the database has it: vectors are written to its column too.
    pub(super) pgvector: Option<Pgvector>,
    /// Whether the k-NN is asked of pgvector (it is there and not
    /// [`PgOptions::exact_vectors`]); else vector recall is the exact scan.
    pub(super) knn_in_database: bool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.ctx.target)
            .field("scope", &self.ctx.scope)
            .finish()
    }
}

impl PgStore {
    /// The newest schema version this build knows; a database migrated past it is
    /// refused ([`MemoryError::PgSchemaTooNew`]).
    pub const SCHEMA_VERSION: i32 = super::schema::MIGRATIONS.len() as i32;

    /// Connects to the database `url` names (`postgres://user:pass@host:port/db`, or
    /// libpq's `host=/socket/dir user=... dbname=...`), migrates its memory schema (one
    /// transaction under an advisory lock, so processes starting at once do not race;
    /// once per process and pool, later stores on the same URL skip it), and confines
    /// every call to `scope`: the repository identity this workspace's memories belong
    /// to. Default [`PgOptions`].
    pub fn connect(url: &str, scope: &str) -> Result<PgStore, MemoryError> {
        PgStore::connect_with(url, scope, PgOptions::default())
    }

    /// [`PgStore::connect`] with other options (a shorter statement timeout...).
    pub fn connect_with(
        url: &str,
        scope: &str,
        options: PgOptions,
    ) -> Result<PgStore, MemoryError> {
        check_scope(scope)?;
        let ca_file = options.ca_file.as_deref();
        let config = url::config(url, options.statement_timeout, ca_file)?;
        let ctx = Ctx {
            scope: scope.to_string(),
            target: url::redacted(url),
            timeout_ms: options.statement_timeout.as_millis() as u64,
            broken: AtomicBool::new(false),
        };
        let pool = pool::shared(
            url,
            config,
            ca_file,
            ctx.timeout_ms,
            options.pool_size,
            options.checkout_timeout,
        );
        let pgvector = pool.migrate_once(&ctx)?;
        Ok(PgStore {
            pool,
            ctx,
            knn_in_database: pgvector.is_some() && !options.exact_vectors,
            pgvector,
        })
    }

    /// The scope this store reads and writes.
    pub fn scope(&self) -> &str {
        &self.ctx.scope
    }

    /// The database, as a message may name it (password hidden).
    pub fn target(&self) -> &str {
        &self.ctx.target
    }

    /// Chunks (of live memories in this scope; of one memory, or of a namespace, or
    /// all) that have no vector of `model` yet: what `vectors: pending` counts.
    pub fn missing_vectors(
        &self,
        model: &str,
        memory_id: Option<i64>,
        ns: Option<&str>,
    ) -> Result<u64, MemoryError> {
        let c = &self.ctx;
        let n: i64 = self
            .client()?
            .query_one(
                "SELECT count(*) FROM chunks ch JOIN memories m ON m.id = ch.memory_id
                 WHERE m.scope = $1 AND m.deleted_at IS NULL
                   AND ($3::bigint IS NULL OR m.id = $3) AND ($4::text IS NULL OR m.namespace = $4)
                   AND NOT EXISTS (SELECT 1 FROM embeddings x
                       WHERE x.model = $2 AND x.memory_id = ch.memory_id AND x.seq = ch.seq)",
                &[&c.scope, &model, &memory_id, &ns],
            )
            .db(c)?
            .try_get(0)
            .db(c)?;
        Ok(n as u64)
    }

    /// A connection for one call, out of the pool: a lost one (a restarted server, a
    /// dropped network: the call that found out failed) is not handed out again, so a
    /// long-lived process outlives its connections.
    pub(super) fn client(&self) -> Result<Pooled<'_>, MemoryError> {
        self.pool.checkout(&self.ctx)
    }

    /// Whether the database answers now: one connection checked out and a trivial
    /// query run on it (what `/health` reports).
    pub fn ping(&self) -> Result<(), MemoryError> {
        self.client()?.simple_query("SELECT 1").db(&self.ctx)?;
        Ok(())
    }

    /// Runs `f` in one read-only `REPEATABLE READ` transaction: the reads of one
    /// answer see one snapshot (a read-only transaction never fails to serialize).
    pub(super) fn read_tx<T>(
        &self,
        f: impl FnOnce(&mut Transaction<'_>, &Ctx) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let c = &self.ctx;
        let mut client = self.client()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .db(c)?;
        let out = f(&mut tx, c)?;
        tx.commit().db(c)?;
        Ok(out)
    }

    /// The memory `id` of this scope, with its entities and code links.
    pub(super) fn memory_by_id(&self, id: i64) -> Result<Memory, MemoryError> {
        self.read_tx(|tx, c| memory_in(tx, c, id))
    }
}

/// A scope names a repository (`github.com/team/repo`, a UUID...): not blank, no
/// control character, at most 512 bytes.
fn check_scope(scope: &str) -> Result<(), MemoryError> {
    if scope.trim().is_empty() || scope.chars().any(char::is_control) {
        return Err(MemoryError::Invalid(format!(
            "the memory scope {scope:?} must name the repository: not blank, no control characters"
        )));
    }
    if scope.len() > MAX_SCOPE_BYTES {
        return Err(MemoryError::TooLong {
            what: "the memory scope".into(),
            got: scope.len(),
            limit: MAX_SCOPE_BYTES,
        });
    }
    Ok(())
}

/// The memory `id` of the scope, read through `db` (a transaction or the client).
pub(super) fn memory_in(
    db: &mut impl GenericClient,
    c: &Ctx,
    id: i64,
) -> Result<Memory, MemoryError> {
    let row = db
        .query_opt(
            "SELECT id, namespace, name, type, description, body, body_hash, source, session_id,
                    metadata, version, created_at, updated_at, deleted_at, extraction
             FROM memories WHERE id = $1 AND scope = $2",
            &[&id, &c.scope],
        )
        .db(c)?
        .ok_or_else(|| MemoryError::NotFound(format!("no memory with id {id} in this scope")))?;
    let mut m = memory_at(&row).db(c)?;
    m.entities = db
        .query(
            "SELECT e.name FROM memory_entities me JOIN entities e ON e.id = me.entity_id
             WHERE me.memory_id = $1 ORDER BY e.name COLLATE \"C\"",
            &[&id],
        )
        .db(c)?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()
        .db(c)?;
    m.links = links_in(db, c, id)?;
    Ok(m)
}

/// The code links of memory `id`, by path and qualified name.
pub(super) fn links_in(
    db: &mut impl GenericClient,
    c: &Ctx,
    id: i64,
) -> Result<Vec<CodeLink>, MemoryError> {
    db.query(
        &format!(
            "SELECT {LINK_COLUMNS} FROM code_links WHERE memory_id = $1
             ORDER BY path COLLATE \"C\", qualified_name COLLATE \"C\""
        ),
        &[&id],
    )
    .db(c)?
    .iter()
    .map(|r| link_at(r, 0))
    .collect::<Result<_, _>>()
    .db(c)
}
