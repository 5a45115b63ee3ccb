//! The connections of a process to one memory database: a bounded pool, one per
//! (database, session settings) per process, shared by every [`super::PgStore`] opened
//! on it. A long-lived host (`loci serve`, `loci mcp`) opens a store per request; the
//! pool lets that request reuse a connection instead of paying a connect, a session
//! setup and a schema check each time.
//!
//! Hand-written rather than `r2d2_postgres`: r2d2 cannot drop a connection the caller
//! found broken (it only tests connections on checkout, with one more round trip each
//! time), and the store already knows which call lost its connection ([`Ctx::err`]).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};

use super::ctx::{Ctx, Db};
use super::migrate;
use super::pgvector::Pgvector;
use super::tls::{self, Connector, Tls};
use crate::MemoryError;

/// How many connections one pool opens at most, by default.
pub const DEFAULT_SIZE: usize = 8;
/// How long a call waits for a free connection, by default, before it fails with
/// [`MemoryError::PgPoolExhausted`].
pub const DEFAULT_CHECKOUT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connections to one database with one set of session settings.
pub(super) struct Pool {
    config: postgres::Config,
    tls: Tls,
    size: usize,
    checkout_timeout: Duration,
    state: Mutex<State>,
    freed: Condvar,
    /// Set once the schema was migrated (or found current) through this pool: with
    /// pgvector as the migration found it (`None` inside: the exact fallback).
    migrated: Mutex<Option<Option<Pgvector>>>,
    /// The dimensions whose HNSW index is known to exist (pgvector only).
    indexed_dims: Mutex<Vec<i32>>,
}

/// What the pool holds: idle connections, and how many are open in all.
#[derive(Default)]
struct State {
    idle: Vec<Client>,
    open: usize,
}

/// The pools of this process, by key ([`key`]).
static POOLS: OnceLock<Mutex<HashMap<String, Arc<Pool>>>> = OnceLock::new();

/// The pool of `url` with these settings, created on first use. Every setting is in
/// the key: a store asking for another size, checkout timeout or CA file gets a pool
/// of its own, not the first store's.
pub(super) fn shared(
    url: &str,
    (config, tls): (postgres::Config, Tls),
    ca_file: Option<&std::path::Path>,
    timeout_ms: u64,
    size: usize,
    checkout_timeout: Duration,
) -> Arc<Pool> {
    let key = format!(
        "{url}\u{0}{}\u{0}{timeout_ms}\u{0}{size}\u{0}{}\u{0}{:?}",
        super::schema::SCHEMA,
        checkout_timeout.as_nanos(),
        ca_file,
    );
    let mut pools = lock(POOLS.get_or_init(Default::default));
    pools
        .entry(key)
        .or_insert_with(|| {
            Arc::new(Pool {
                config,
                tls,
                size,
                checkout_timeout,
                state: Mutex::new(State::default()),
                freed: Condvar::new(),
                migrated: Mutex::new(None),
                indexed_dims: Mutex::new(Vec::new()),
            })
        })
        .clone()
}

impl Pool {
    /// Migrates the schema through this pool the first time only: later stores on the
    /// same pool trust it (a newer loci migrating the database meanwhile is found by
    /// the next process, not this one). Answers pgvector as the migration found it.
    pub(super) fn migrate_once(&self, c: &Ctx) -> Result<Option<Pgvector>, MemoryError> {
        let mut done = lock(&self.migrated);
        if let Some(pgvector) = done.as_ref() {
            return Ok(pgvector.clone());
        }
        let mut client = self.checkout(c)?;
        let pgvector = migrate::migrate(&mut client, c)?;
        // Without pooling every store checks again, as a new process would.
        if !self.unpooled() {
            *done = Some(pgvector.clone());
        }
        Ok(pgvector)
    }

    /// Runs `make` unless the HNSW index of `dim` is already known to exist through
    /// this pool; remembers it once `make` succeeds.
    pub(super) fn index_once(
        &self,
        dim: i32,
        make: impl FnOnce() -> Result<(), MemoryError>,
    ) -> Result<(), MemoryError> {
        let mut known = lock(&self.indexed_dims);
        if !known.contains(&dim) {
            make()?;
            known.push(dim);
        }
        Ok(())
    }

    /// Size 0: no pooling (an external pooler such as PgBouncer does it), a connection
    /// per call, closed after it.
    fn unpooled(&self) -> bool {
        self.size == 0
    }

    /// A connection for one call: an idle one still open, else a new one while fewer
    /// than the pool's size are open, else the first one returned within the checkout
    /// timeout.
    pub(super) fn checkout<'a>(&'a self, c: &'a Ctx) -> Result<Pooled<'a>, MemoryError> {
        let deadline = Instant::now() + self.checkout_timeout;
        let mut state = lock(&self.state);
        loop {
            while let Some(client) = state.idle.pop() {
                if !client.is_closed() {
                    return Ok(Pooled::new(self, c, client));
                }
                state.open -= 1;
            }
            if state.open < self.size || self.unpooled() {
                state.open += 1;
                drop(state);
                return match open(&self.config, &self.tls, c) {
                    Ok(client) => Ok(Pooled::new(self, c, client)),
                    Err(e) => {
                        self.forget_one();
                        Err(e)
                    }
                };
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(MemoryError::PgPoolExhausted {
                    target: c.target.clone(),
                    size: self.size,
                    waited_ms: self.checkout_timeout.as_millis() as u64,
                });
            }
            state = self
                .freed
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// One connection fewer is open (dropped or never opened): a waiter may open one.
    fn forget_one(&self) {
        lock(&self.state).open -= 1;
        self.freed.notify_one();
    }
}

/// A connection checked out for one call; back to the pool when dropped, unless the
/// call found it broken or it closed.
pub(super) struct Pooled<'a> {
    pool: &'a Pool,
    ctx: &'a Ctx,
    client: Option<Client>,
}

impl<'a> Pooled<'a> {
    fn new(pool: &'a Pool, ctx: &'a Ctx, client: Client) -> Pooled<'a> {
        Pooled {
            pool,
            ctx,
            client: Some(client),
        }
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        // The flag is the store's: with calls of one store on several threads, a flag
        // another call raised may drop this (good) connection too, which costs one
        // reconnect; a broken one that slips back is dropped at its next checkout once
        // closed, or by the call it fails.
        let broken = self.ctx.broken.swap(false, Ordering::Relaxed);
        if broken || client.is_closed() || self.pool.unpooled() {
            drop(client);
            self.pool.forget_one();
        } else {
            lock(&self.pool.state).idle.push(client);
            self.pool.freed.notify_one();
        }
    }
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client
            .as_ref()
            .expect("a checked-out connection is held")
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client
            .as_mut()
            .expect("a checked-out connection is held")
    }
}

/// A new connection (TLS as `tls` says) with the session settings every call relies
/// on: the statement timeout, and the `loci_memory` schema first on the search path.
fn open(config: &postgres::Config, tls: &Tls, c: &Ctx) -> Result<Client, MemoryError> {
    let connected = match &tls.connector {
        Connector::Plain => config.connect(NoTls),
        Connector::Rustls(make) => config.connect(make.clone()),
    };
    let mut client = connected
        .map_err(|e| tls::explain(&e, config, tls.mode, &c.target).unwrap_or_else(|| c.err(e)))?;
    client
        .batch_execute(&format!(
            "SET statement_timeout = {}; SET search_path TO {}",
            c.timeout_ms,
            super::schema::SCHEMA
        ))
        .db(c)?;
    Ok(client)
}

/// A lock, whether or not a holder panicked (the pool's state stays consistent: every
/// change is one statement).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
