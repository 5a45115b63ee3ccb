//! Filling the vector cache from the database: once in full, then by the memories a
//! write touched since. Every write that can change what the k-NN sees — a vector
//! stored or dropped, a memory edited, forgotten, restored, renamed or purged — stamps
//! the memory in `vector_log` (triggers, migration 3), so the cache reads back only
//! those memories, in one snapshot, instead of every vector.

use rusqlite::{Connection, OptionalExtension};

use super::vector_scan::{Span, Vectors};
use crate::model::MemoryType;

/// Changed memories past which a full load is cheaper than reading them one by one.
const INCREMENTAL_MAX: usize = 4_096;

/// One memory's columns the recall filter reads.
pub(crate) struct Owner {
    pub(crate) namespace: u32,
    pub(crate) memory_type: Option<MemoryType>,
    pub(crate) updated_at: i64,
    pub(crate) deleted: bool,
    /// Replaced by a later owner of the same memory (or purged): never passes.
    pub(crate) gone: bool,
}

/// The vectors of one store and model as of `version`.
pub(crate) struct Loaded {
    /// `PRAGMA data_version` when last brought up to date.
    pub(crate) version: i64,
    /// The highest `vector_log` stamp read.
    stamp: i64,
    pub(crate) namespaces: Vec<String>,
    pub(crate) owners: Vec<Owner>,
    /// Per owner: its memory id and its chunks.
    pub(crate) ids: Vec<i64>,
    pub(crate) spans: Vec<Span>,
    /// Memory id → its current owner.
    index: rustc_hash::FxHashMap<i64, u32>,
    pub(crate) vectors: Vectors,
    /// Chunks of gone owners, still in `vectors` until the next compaction.
    dead: usize,
}

/// Reads every memory's filter columns and every vector of `model`, in one snapshot.
pub(crate) fn load(conn: &Connection, model: &str, version: i64) -> Option<Loaded> {
    in_snapshot(conn, || load_in_snapshot(conn, model, version))
}

/// Brings `l` up to `version` by re-reading the memories stamped since it was read;
/// `None` when a full load is the better way (too many, or the log is not readable).
pub(crate) fn update(conn: &Connection, l: &mut Loaded, model: &str, version: i64) -> Option<()> {
    in_snapshot(conn, || update_in_snapshot(conn, l, model, version))
}

fn in_snapshot<T>(conn: &Connection, f: impl FnOnce() -> Option<T>) -> Option<T> {
    conn.execute_batch("BEGIN").ok()?;
    let out = f();
    let _ = conn.execute_batch("COMMIT");
    out
}

fn max_stamp(conn: &Connection) -> Option<i64> {
    conn.query_row("SELECT coalesce(max(stamp), 0) FROM vector_log", [], |r| {
        r.get(0)
    })
    .ok()
}

fn load_in_snapshot(conn: &Connection, model: &str, version: i64) -> Option<Loaded> {
    let mut l = Loaded {
        version,
        stamp: max_stamp(conn)?,
        namespaces: Vec::new(),
        owners: Vec::new(),
        ids: Vec::new(),
        spans: Vec::new(),
        index: Default::default(),
        vectors: Vectors::default(),
        dead: 0,
    };
    {
        let mut stmt = conn
            .prepare("SELECT id, namespace, type, updated_at, deleted_at IS NOT NULL FROM memories ORDER BY id")
            .ok()?;
        let mut rows = stmt.query([]).ok()?;
        while let Some(r) = rows.next().ok()? {
            let id: i64 = r.get(0).ok()?;
            let owner = l.owner_from(r.get_ref(1).ok()?.as_str().ok()?, r, 2)?;
            l.push_owner(id, owner);
        }
    }
    let mut stmt = conn
        .prepare(
            "SELECT memory_id, dim, vector FROM embeddings WHERE model = ?1 ORDER BY memory_id, seq",
        )
        .ok()?;
    let mut rows = stmt.query([model]).ok()?;
    let mut buf = Vec::new();
    while let Some(r) = rows.next().ok()? {
        let id: i64 = r.get(0).ok()?;
        let Some(&owner) = l.index.get(&id) else {
            continue;
        };
        l.push_chunk(
            owner,
            r.get(1).ok()?,
            r.get_ref(2).ok()?.as_blob().ok()?,
            &mut buf,
        );
    }
    Some(l)
}

fn update_in_snapshot(conn: &Connection, l: &mut Loaded, model: &str, version: i64) -> Option<()> {
    let mut changed: Vec<(i64, i64)> = Vec::new();
    {
        let mut stmt = conn
            .prepare_cached("SELECT memory_id, stamp FROM vector_log WHERE stamp > ?1")
            .ok()?;
        let mut rows = stmt.query([l.stamp]).ok()?;
        while let Some(r) = rows.next().ok()? {
            changed.push((r.get(0).ok()?, r.get(1).ok()?));
            if changed.len() > INCREMENTAL_MAX {
                return None;
            }
        }
    }
    // A log that went backwards is another file in this place: start again.
    if max_stamp(conn)? < l.stamp {
        return None;
    }
    let mut memory = conn
        .prepare_cached(
            "SELECT namespace, type, updated_at, deleted_at IS NOT NULL FROM memories WHERE id = ?1",
        )
        .ok()?;
    let mut vectors = conn
        .prepare_cached(
            "SELECT dim, vector FROM embeddings WHERE model = ?1 AND memory_id = ?2 ORDER BY seq",
        )
        .ok()?;
    let mut buf = Vec::new();
    for &(id, stamp) in &changed {
        l.stamp = l.stamp.max(stamp);
        if let Some(o) = l.index.remove(&id) {
            let o = o as usize;
            l.owners[o].gone = true;
            l.dead += l.spans[o].count as usize;
        }
        let owner = memory
            .query_row([id], |r| {
                let ns: String = r.get(0)?;
                Ok(l.owner_from(&ns, r, 1))
            })
            .optional()
            .ok()?;
        let Some(owner) = owner else {
            continue; // purged
        };
        let o = l.push_owner(id, owner?);
        let mut rows = vectors.query(rusqlite::params![model, id]).ok()?;
        while let Some(r) = rows.next().ok()? {
            l.push_chunk(
                o,
                r.get(0).ok()?,
                r.get_ref(1).ok()?.as_blob().ok()?,
                &mut buf,
            );
        }
    }
    l.version = version;
    if l.dead > 1_024 && l.dead * 4 > l.vectors.len() {
        l.compact();
    }
    Some(())
}

impl Loaded {
    /// An owner in namespace `ns` from `type`, `updated_at` and `deleted` at columns
    /// `at..at + 3` of `r`.
    fn owner_from(&mut self, ns: &str, r: &rusqlite::Row<'_>, at: usize) -> Option<Owner> {
        let namespace = match self.namespaces.iter().position(|n| n == ns) {
            Some(i) => i,
            None => {
                self.namespaces.push(ns.to_string());
                self.namespaces.len() - 1
            }
        } as u32;
        Some(Owner {
            namespace,
            memory_type: MemoryType::parse(r.get_ref(at).ok()?.as_str().ok()?).ok(),
            updated_at: r.get(at + 1).ok()?,
            deleted: r.get(at + 2).ok()?,
            gone: false,
        })
    }

    fn push_owner(&mut self, id: i64, owner: Owner) -> u32 {
        let o = self.owners.len() as u32;
        self.owners.push(owner);
        self.ids.push(id);
        self.spans.push(Span {
            first: self.vectors.len() as u32,
            count: 0,
        });
        self.index.insert(id, o);
        o
    }

    /// Appends one stored vector of `owner` (the owner pushed last, or during the full
    /// load the owner of the current memory: chunks arrive in memory order).
    fn push_chunk(&mut self, owner: u32, dim: i64, blob: &[u8], buf: &mut Vec<f32>) {
        let Ok(d) = usize::try_from(dim) else {
            return;
        };
        if self.vectors.len() == 0 && self.vectors.dim == 0 {
            self.vectors.dim = d;
        }
        // A vector of another length would not compare: left out, as the scan's dot
        // product would cut it short.
        if d != self.vectors.dim || blob.len() != d * 4 {
            return;
        }
        let span = &mut self.spans[owner as usize];
        if span.count == 0 {
            span.first = self.vectors.len() as u32;
        }
        span.count += 1;
        buf.clear();
        buf.extend(
            blob.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        self.vectors.push(owner, buf);
    }

    /// Drops gone owners and their chunks, keeping the others in order.
    fn compact(&mut self) {
        let dim = self.vectors.dim;
        let old = std::mem::replace(&mut self.vectors, Vectors::new(dim));
        self.vectors.max_norm = old.max_norm;
        self.vectors.max_err = old.max_err;
        let owners = std::mem::take(&mut self.owners);
        let ids = std::mem::take(&mut self.ids);
        let spans = std::mem::take(&mut self.spans);
        self.index.clear();
        self.dead = 0;
        for ((owner, id), span) in owners.into_iter().zip(ids).zip(spans) {
            if owner.gone {
                continue;
            }
            let o = self.push_owner(id, owner);
            let range = span.first as usize..(span.first + span.count) as usize;
            self.spans[o as usize].count = span.count;
            let v = &mut self.vectors;
            v.data
                .extend_from_slice(&old.data[range.start * dim..range.end * dim]);
            v.codes
                .extend_from_slice(&old.codes[range.start * dim..range.end * dim]);
            v.scales.extend_from_slice(&old.scales[range.clone()]);
            v.chunk_owner.extend(range.map(|_| o));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Loaded {
        Loaded {
            version: 0,
            stamp: 0,
            namespaces: Vec::new(),
            owners: Vec::new(),
            ids: Vec::new(),
            spans: Vec::new(),
            index: Default::default(),
            vectors: Vectors::default(),
            dead: 0,
        }
    }

    fn owner() -> Owner {
        Owner {
            namespace: 0,
            memory_type: None,
            updated_at: 0,
            deleted: false,
            gone: false,
        }
    }

    fn blob(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn compaction_keeps_the_live_chunks_in_order_and_drops_the_gone() {
        let mut l = empty();
        let mut buf = Vec::new();
        for id in 1..=3i64 {
            let o = l.push_owner(id, owner());
            for s in 0..2 {
                l.push_chunk(o, 2, &blob(&[id as f32, s as f32]), &mut buf);
            }
        }
        l.owners[1].gone = true;
        l.index.remove(&2);
        l.compact();
        assert_eq!(l.ids, [1, 3]);
        assert_eq!(l.vectors.chunk_owner, [0, 0, 1, 1]);
        assert_eq!(l.vectors.data, [1.0, 0.0, 1.0, 1.0, 3.0, 0.0, 3.0, 1.0]);
        assert_eq!(l.vectors.codes.len(), 8);
        assert_eq!((l.spans[1].first, l.spans[1].count), (2, 2));
        assert_eq!(l.index.get(&3), Some(&1));
    }
}
