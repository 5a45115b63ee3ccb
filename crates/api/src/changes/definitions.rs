//! The definitions of every side a diff reads, found as cheaply as they can be: a side
//! whose bytes the live index holds (same path, same content hash, same language) is
//! taken from the index, the rest are parsed by loci's extractor on every core. Parsing
//! was most of a `changes` answer's time; the index usually holds one side already
//! (`HEAD` or the working tree).

use std::sync::Mutex;

use loci_index::graph::{Graph, QueryError};

use super::kinds::NotRead;
use super::sides::{SideBytes, SideFacts};
use crate::handle::ReadOptions;

/// Most threads parsing sides at once.
const MAX_WORKERS: usize = 8;

/// What one side came to: absent on its side, its definitions, or why it was not read.
pub(super) type Found = Result<Option<SideFacts>, NotRead>;

/// Each of `sides`' definitions, in order: from `graph` where it holds the same bytes,
/// else extracted, the extractions spread over the machine's cores. A cancelled read
/// leaves the remaining sides unread (`Unreadable`); the caller reports the
/// cancellation.
pub(super) fn definitions(
    graph: &Graph,
    sides: Vec<Result<Option<SideBytes>, NotRead>>,
    opts: &ReadOptions,
) -> Result<Vec<Found>, QueryError> {
    let mut found: Vec<Option<Found>> = Vec::with_capacity(sides.len());
    let mut to_parse: Vec<(usize, SideBytes)> = Vec::new();
    for (at, side) in sides.into_iter().enumerate() {
        match side {
            Ok(Some(bytes)) => match from_index(graph, bytes)? {
                Ok(facts) => found.push(Some(Ok(Some(facts)))),
                Err(bytes) => {
                    found.push(None);
                    to_parse.push((at, bytes));
                }
            },
            other => found.push(Some(other.map(|_| None))),
        }
    }
    for (at, facts) in extract_all(to_parse, opts) {
        found[at] = Some(facts.map(Some));
    }
    Ok(found
        .into_iter()
        .map(|f| f.unwrap_or(Err(NotRead::Unreadable)))
        .collect())
}

/// The side's definitions as the index holds them, when it holds these very bytes at
/// this path in this language; else the side back, to be parsed.
fn from_index(graph: &Graph, side: SideBytes) -> Result<Result<SideFacts, SideBytes>, QueryError> {
    let hash = blake3::hash(&side.bytes);
    Ok(
        match graph.definitions_of_content(&side.path, hash.as_bytes())? {
            Some((lang, symbols)) if lang == side.lang => Ok(SideFacts {
                lang,
                symbols,
                bytes: side.bytes,
            }),
            _ => Err(side),
        },
    )
}

/// `sides` extracted on up to one thread per core, the largest first so that no core
/// is left with a big file at the end; each result with its position.
fn extract_all(
    mut sides: Vec<(usize, SideBytes)>,
    opts: &ReadOptions,
) -> Vec<(usize, Result<SideFacts, NotRead>)> {
    sides.sort_by_key(|(_, s)| s.bytes.len());
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_WORKERS)
        .min(sides.len());
    let queue = Mutex::new(sides);
    let take = || queue.lock().ok().and_then(|mut q| q.pop());
    let work = || {
        let mut done = Vec::new();
        while let Some((at, side)) = take() {
            done.push((at, extract_unless_cancelled(side, opts)));
        }
        done
    };
    if workers <= 1 {
        return work();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// One side's definitions; a cancelled read reads no more, and an extractor that
/// panics gives up on this side only.
fn extract_unless_cancelled(side: SideBytes, opts: &ReadOptions) -> Result<SideFacts, NotRead> {
    if opts.cancel.is_cancelled() {
        return Err(NotRead::Unreadable);
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| side.extract()))
        .unwrap_or(Err(NotRead::TooComplex))
}
