//! The vector k-NN of a long-lived process, without reading every BLOB per query: the
//! vectors of one store and model are kept in one contiguous `f32` buffer (chunk
//! after chunk, `dim` values each) beside the few columns the recall filter needs of
//! each memory, loaded on first use and reloaded when the database changed since.
//!
//! "Changed" is SQLite's `PRAGMA data_version` on the cache's own read-only
//! connection: it moves whenever any other connection (of this process or another)
//! commits to the file, so a remember, an edit, a forget or a background embedding
//! is seen by the next recall. The scan itself is the exact cosine of every chunk (a
//! dot product over L2-normalised vectors), `dim` values at a time so the compiler
//! vectorises it. The cost is the vectors' size in memory (1.5 KiB per 384-dimension
//! chunk), for at most [`MAX_CACHED`] stores at once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags};

use crate::model::MemoryType;
use crate::store::Filter;
use crate::vector::dot;

/// Stores (with their model) whose vectors one process keeps at once; the least
/// recently used goes first.
pub const MAX_CACHED: usize = 4;

/// One memory's columns the recall filter reads.
struct Owner {
    id: i64,
    namespace: u32,
    memory_type: Option<MemoryType>,
    updated_at: i64,
    deleted: bool,
}

/// The vectors of one store and model as of `version`.
struct Loaded {
    version: i64,
    dim: usize,
    namespaces: Vec<String>,
    owners: Vec<Owner>,
    /// Per chunk: its memory's index in `owners` (chunks of a memory are adjacent).
    chunk_owner: Vec<u32>,
    /// Every chunk's vector, `dim` values each.
    data: Vec<f32>,
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
    if e.loaded.as_ref().is_none_or(|l| l.version != version) {
        e.loaded = None;
        e.loaded = Some(load(&e.conn, model, version)?);
    }
    let l = e.loaded.as_ref()?;
    Some(scan(l, filter, query, k))
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
        entry: Mutex::new(Entry { conn, loaded: None }),
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

/// Reads every memory's filter columns and every vector of `model`, in one snapshot.
fn load(conn: &Connection, model: &str, version: i64) -> Option<Loaded> {
    conn.execute_batch("BEGIN").ok()?;
    let out = load_in_snapshot(conn, model, version);
    let _ = conn.execute_batch("COMMIT");
    out
}

fn load_in_snapshot(conn: &Connection, model: &str, version: i64) -> Option<Loaded> {
    let mut namespaces: Vec<String> = Vec::new();
    let mut owners = Vec::new();
    let mut index: rustc_hash::FxHashMap<i64, u32> = Default::default();
    {
        let mut stmt = conn
            .prepare("SELECT id, namespace, type, updated_at, deleted_at IS NOT NULL FROM memories")
            .ok()?;
        let mut rows = stmt.query([]).ok()?;
        while let Some(r) = rows.next().ok()? {
            let ns: String = r.get(1).ok()?;
            let ns_index = match namespaces.iter().position(|n| *n == ns) {
                Some(i) => i,
                None => {
                    namespaces.push(ns);
                    namespaces.len() - 1
                }
            };
            let id: i64 = r.get(0).ok()?;
            index.insert(id, owners.len() as u32);
            owners.push(Owner {
                id,
                namespace: ns_index as u32,
                memory_type: MemoryType::parse(&r.get::<_, String>(2).ok()?).ok(),
                updated_at: r.get(3).ok()?,
                deleted: r.get(4).ok()?,
            });
        }
    }
    let mut stmt = conn
        .prepare(
            "SELECT memory_id, dim, vector FROM embeddings WHERE model = ?1 ORDER BY memory_id, seq",
        )
        .ok()?;
    let mut rows = stmt.query([model]).ok()?;
    let mut dim = 0usize;
    let mut chunk_owner = Vec::new();
    let mut data: Vec<f32> = Vec::new();
    while let Some(r) = rows.next().ok()? {
        let id: i64 = r.get(0).ok()?;
        let d: i64 = r.get(1).ok()?;
        let blob = r.get_ref(2).ok()?.as_blob().ok()?;
        if dim == 0 {
            dim = usize::try_from(d).ok()?;
        }
        let Some(&owner) = index.get(&id) else {
            continue;
        };
        // A vector of another length would not compare: left out, as the scan's dot
        // product would cut it short.
        if usize::try_from(d).ok()? != dim || blob.len() != dim * 4 {
            continue;
        }
        chunk_owner.push(owner);
        data.extend(
            blob.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    Some(Loaded {
        version,
        dim,
        namespaces,
        owners,
        chunk_owner,
        data,
    })
}

fn scan(l: &Loaded, f: &Filter, query: &[f32], k: usize) -> Vec<(i64, f32)> {
    let Some(ns) = l.namespaces.iter().position(|n| *n == f.namespace) else {
        return Vec::new();
    };
    let pass: Vec<bool> = l
        .owners
        .iter()
        .map(|o| {
            o.namespace as usize == ns
                && (f.include_forgotten || !o.deleted)
                && (f.types.is_empty() || o.memory_type.is_some_and(|t| f.types.contains(&t)))
                && f.since.is_none_or(|s| o.updated_at >= s)
                && f.until.is_none_or(|u| o.updated_at <= u)
        })
        .collect();
    let mut best = vec![f32::NEG_INFINITY; l.owners.len()];
    if l.dim > 0 {
        for (owner, v) in l.chunk_owner.iter().zip(l.data.chunks_exact(l.dim)) {
            let o = *owner as usize;
            if pass[o] {
                let s = dot(query, v);
                if s > best[o] {
                    best[o] = s;
                }
            }
        }
    }
    let mut all: Vec<(i64, f32)> = best
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > f32::NEG_INFINITY)
        .map(|(i, s)| (l.owners[i].id, *s))
        .collect();
    let by = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if all.len() > k && k > 0 {
        all.select_nth_unstable_by(k - 1, by);
        all.truncate(k);
    }
    all.sort_by(by);
    all.truncate(k);
    all
}
