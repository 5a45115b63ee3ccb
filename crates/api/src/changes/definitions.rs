//! The definitions of every side a diff reads, found as cheaply as they can be: a side
//! whose bytes the live index holds (same path, same content hash, same language) is
//! taken from the index, the rest are parsed by loci's extractor on every core as soon
//! as they are read. Parsing is most of a `changes` answer's time; the index usually
//! holds one side already (`HEAD` or the working tree).

use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver};

use loci_index::graph::{Graph, QueryError};

use super::kinds::NotRead;
use super::sides::{SideBytes, SideFacts};
use crate::handle::ReadOptions;

/// Most threads parsing sides at once.
const MAX_WORKERS: usize = 8;

/// What one side came to: absent on its side, its definitions, or why it was not read.
pub(super) type Found = Result<Option<SideFacts>, NotRead>;

/// One side as read, at its position among `total`.
pub(super) type ReadSide = (usize, Result<Option<SideBytes>, NotRead>);

/// Each of the `total` sides' definitions, in order, as the sides arrive on `sides`
/// (read meanwhile by another thread): from `graph` where it holds the same bytes, else
/// extracted, the extractions spread over the machine's cores from the first side on. A
/// side that never arrives (the reader was cancelled) or a cancelled extraction is
/// `Unreadable`; the caller reports the cancellation.
pub(super) fn definitions(
    graph: &Graph,
    sides: Receiver<ReadSide>,
    total: usize,
    opts: &ReadOptions,
) -> Result<Vec<Found>, QueryError> {
    let mut found: Vec<Option<Found>> = (0..total).map(|_| None).collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_WORKERS);
    let (to_parse, queue) = mpsc::channel::<(usize, SideBytes)>();
    let queue = Mutex::new(queue);
    let take = || queue.lock().ok().and_then(|q| q.recv().ok());
    let work = || {
        let mut done = Vec::new();
        while let Some((at, side)) = take() {
            done.push((at, extract_unless_cancelled(side, opts)));
        }
        done
    };
    let looked_up = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
        let looked_up: Result<(), QueryError> = (|| {
            for (at, side) in sides {
                let Some(slot) = found.get_mut(at) else {
                    continue;
                };
                match side {
                    Ok(Some(bytes)) => match from_index(graph, bytes)? {
                        Ok(facts) => *slot = Some(Ok(Some(facts))),
                        Err(bytes) => {
                            let _ = to_parse.send((at, bytes));
                        }
                    },
                    other => *slot = Some(other.map(|_| None)),
                }
            }
            Ok(())
        })();
        // The workers stop once the queue is empty and closed, on error too.
        drop(to_parse);
        for (at, facts) in handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
        {
            found[at] = Some(facts.map(Some));
        }
        looked_up
    });
    looked_up?;
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

/// One side's definitions; a cancelled read reads no more, and an extractor that
/// panics gives up on this side only.
fn extract_unless_cancelled(side: SideBytes, opts: &ReadOptions) -> Result<SideFacts, NotRead> {
    if opts.cancel.is_cancelled() {
        return Err(NotRead::Unreadable);
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| side.extract()))
        .unwrap_or(Err(NotRead::TooComplex))
}
