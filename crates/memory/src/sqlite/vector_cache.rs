//! The vector k-NN of a long-lived process, without reading every BLOB per query: the
//! vectors of one store and model are kept in memory (`f32` and an int8 copy, chunk
//! after chunk) beside the few columns the recall filter needs of each memory, loaded
//! on first use and brought up to date when the database changed since.
//!
//! "Changed" is SQLite's `PRAGMA data_version` on the cache's own read-only
//! connection: it moves whenever any other connection (of this process or another)
//! commits to the file, so a remember, an edit, a forget or a background embedding
//! is seen by the next recall. That recall re-reads only the memories the writes
//! stamped in `vector_log` (`vector_load`), not every vector. The scan is exact
//! (`vector_scan`: an int8 first pass, the exact cosine on the candidates, a bound that
//! proves nobody else could enter). The cost is the vectors in memory — 1,928 bytes per
//! 384-dimension chunk (`Vectors::bytes_per_chunk`) — for at most [`MAX_CACHED`]
//! stores at once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags};

use super::vector_load::{self, Loaded};
use super::vector_scan::{self, Vectors};
use crate::store::Filter;

/// Stores (with their model) whose vectors one process keeps at once; the least
/// recently used goes first.
pub const MAX_CACHED: usize = 4;

/// The path the fast one replaced, for the bench to time against: every chunk scanned
/// in `f32`, and a full load after any change.
static REFERENCE: AtomicBool = AtomicBool::new(false);

/// Turns the reference path on or off for the whole process (bench only).
pub(crate) fn set_reference(on: bool) {
    REFERENCE.store(on, Ordering::Relaxed);
}

/// One store and model: its key outside the lock, its connection and vectors inside.
struct Slot {
    path: PathBuf,
    model: String,
    entry: Mutex<Entry>,
}

struct Entry {
    conn: Connection,
    loaded: Option<Loaded>,
    stats: VectorCacheStats,
}

/// What a process's cache of one store's vectors has done, so a test or a bench can
/// tell a write that was folded in from one that cost a full load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VectorCacheStats {
    /// Loads of every vector (the first use, or after too many changes at once).
    pub full_loads: u64,
    /// Updates that re-read only the memories written since.
    pub updates: u64,
    /// Chunks held now (including replaced ones not yet compacted away).
    pub chunks: usize,
}

/// The cache's record for the store at `path` and `model`, if this process keeps one.
pub(crate) fn stats(path: &Path, model: &str) -> Option<VectorCacheStats> {
    let all = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let s = all.iter().find(|s| s.path == path && s.model == model)?;
    let e = s.entry.lock().unwrap_or_else(|p| p.into_inner());
    Some(VectorCacheStats {
        chunks: e.loaded.as_ref().map_or(0, |l| l.vectors.len()),
        ..e.stats
    })
}

type Shared = Arc<Slot>;

static CACHE: Mutex<Vec<Shared>> = Mutex::new(Vec::new());

/// The `k` memories (within `filter`) whose best chunk of `model` is nearest `query`,
/// with that cosine, best first; `None` when the cache cannot serve (the file cannot
/// be opened read-only), and the caller scans the BLOBs instead.
pub(crate) fn nearest(
    path: &Path,
    model: &str,
    filter: &Filter,
    query: &[f32],
    k: usize,
) -> Option<Vec<(i64, f32)>> {
    let slot = slot(path, model)?;
    let mut e = slot.entry.lock().unwrap_or_else(|p| p.into_inner());
    let version = data_version(&e.conn)?;
    let reference = REFERENCE.load(Ordering::Relaxed);
    let Entry {
        conn,
        loaded,
        stats,
    } = &mut *e;
    let fresh = match loaded {
        Some(l) if l.version == version => true,
        Some(l) if !reference => {
            let done = vector_load::update(conn, l, model, version).is_some();
            stats.updates += u64::from(done);
            done
        }
        _ => false,
    };
    if !fresh {
        *loaded = None;
        *loaded = Some(vector_load::load(conn, model, version)?);
        stats.full_loads += 1;
    }
    let l = loaded.as_ref()?;
    Some(scan(l, filter, query, k, reference))
}

fn slot(path: &Path, model: &str) -> Option<Shared> {
    let mut all = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let found = all.iter().position(|s| s.path == path && s.model == model);
    if let Some(i) = found {
        let s = all.remove(i);
        all.push(s.clone());
        return Some(s);
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    let _ = conn.busy_timeout(std::time::Duration::from_secs(10));
    let s = Arc::new(Slot {
        path: path.to_path_buf(),
        model: model.to_string(),
        entry: Mutex::new(Entry {
            conn,
            loaded: None,
            stats: VectorCacheStats::default(),
        }),
    });
    if all.len() >= MAX_CACHED {
        all.remove(0);
    }
    all.push(s.clone());
    Some(s)
}

fn data_version(conn: &Connection) -> Option<i64> {
    conn.query_row("PRAGMA data_version", [], |r| r.get(0)).ok()
}

fn scan(l: &Loaded, f: &Filter, query: &[f32], k: usize, reference: bool) -> Vec<(i64, f32)> {
    let Some(ns) = l.namespaces.iter().position(|n| *n == f.namespace) else {
        return Vec::new();
    };
    let pass: Vec<bool> = l
        .owners
        .iter()
        .map(|o| {
            !o.gone
                && o.namespace as usize == ns
                && (f.include_forgotten || !o.deleted)
                && (f.types.is_empty() || o.memory_type.is_some_and(|t| f.types.contains(&t)))
                && f.since.is_none_or(|s| o.updated_at >= s)
                && f.until.is_none_or(|u| o.updated_at <= u)
        })
        .collect();
    if reference {
        vector_scan::scan_full(&l.vectors, &l.ids, &pass, query, k)
    } else {
        vector_scan::nearest(&l.vectors, &l.ids, &l.spans, &pass, query, k)
    }
}

/// What the cache holds per chunk of `dim` values, in bytes (the vectors; the per
/// memory columns come on top).
pub(crate) const fn bytes_per_chunk(dim: usize) -> usize {
    Vectors::bytes_per_chunk(dim)
}
