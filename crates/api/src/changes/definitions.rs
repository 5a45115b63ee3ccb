//! The definitions of every side a diff reads, found as cheaply as they can be: a side
//! whose bytes the live index holds (same path, same content hash, same language) is
//! taken from the index, the rest are parsed by loci's extractor on every core as soon
//! as they are read, unless the workspace parsed the same content before (the next
//! page of a diff). Parsing is most of a `changes` answer's time; the index usually
//! holds one side already (`HEAD` or the working tree).

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use loci_index::graph::{Graph, QueryError};

use super::kinds::NotRead;
use super::sides::{SideBytes, SideFacts};
use crate::handle::ReadOptions;
use crate::parsed_sides::{ParsedSides, SideKey};

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
    parsed: &ParsedSides,
    opts: &ReadOptions,
) -> Result<Vec<Found>, QueryError> {
    let mut found: Vec<Option<Found>> = (0..total).map(|_| None).collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_WORKERS);
    let (to_parse, queue) = mpsc::channel::<(usize, SideBytes, SideKey)>();
    let queue = Mutex::new(queue);
    let take = || queue.lock().ok().and_then(|q| q.recv().ok());
    let work = || {
        let mut done = Vec::new();
        while let Some((at, side, key)) = take() {
            let facts = extract_unless_cancelled(side, opts);
            if let Ok(facts) = &facts {
                parsed.put(key, Arc::clone(&facts.symbols));
            }
            done.push((at, facts));
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
                        Err((bytes, key)) => match parsed.get(&key) {
                            Some(symbols) => *slot = Some(Ok(Some(bytes.with(symbols)))),
                            None => {
                                let _ = to_parse.send((at, bytes, key));
                            }
                        },
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
/// this path in this language; else the side back with its content's key, to be found
/// among the sides parsed before or parsed.
#[allow(clippy::type_complexity)]
fn from_index(
    graph: &Graph,
    side: SideBytes,
) -> Result<Result<SideFacts, (SideBytes, SideKey)>, QueryError> {
    let hash = blake3::hash(&side.bytes);
    Ok(
        match graph.definitions_of_content(&side.path, hash.as_bytes())? {
            Some((lang, symbols)) if lang == side.lang => Ok(side.with(Arc::new(symbols))),
            _ => {
                let key = (*hash.as_bytes(), side.lang);
                Err((side, key))
            }
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

#[cfg(test)]
mod tests {
    use loci_index::Lang;

    use super::*;

    /// `total` sides of `a.rs` in `bytes`, found through a fresh channel.
    fn found(root: &std::path::Path, bytes: &str, parsed: &ParsedSides) -> Vec<Found> {
        let graph = Graph::open(root).unwrap();
        let (send, sides) = mpsc::channel();
        let side = SideBytes {
            path: "a.rs".into(),
            lang: Lang::Rust,
            bytes: bytes.as_bytes().to_vec(),
        };
        send.send((0, Ok(Some(side)))).unwrap();
        drop(send);
        definitions(&graph, sides, 1, parsed, &ReadOptions::default()).unwrap()
    }

    fn names(found: &[Found]) -> Vec<String> {
        let facts = found[0].as_ref().unwrap().as_ref().unwrap();
        facts.symbols.iter().map(|s| s.name.clone()).collect()
    }

    #[test]
    fn a_content_parsed_once_is_kept_and_found_again_without_parsing() {
        let (_dir, root) = crate::test_support::indexed_workspace();
        let parsed = ParsedSides::default();
        let other = "pub fn b() {}\n";
        let key = (*blake3::hash(other.as_bytes()).as_bytes(), Lang::Rust);
        assert_eq!(names(&found(&root, other, &parsed)), ["b"]);
        assert_eq!(parsed.get(&key).unwrap()[0].name, "b");
        // What is kept is what the next request gets: not parsed again.
        let mut kept = (*parsed.get(&key).unwrap()).clone();
        kept[0].name = "kept".into();
        parsed.put(key, Arc::new(kept));
        assert_eq!(names(&found(&root, other, &parsed)), ["kept"]);
        // The index's own content is read from the index, and not kept.
        let indexed = "pub fn a() {}\n";
        assert_eq!(names(&found(&root, indexed, &parsed)), ["a"]);
        let indexed_key = (*blake3::hash(indexed.as_bytes()).as_bytes(), Lang::Rust);
        assert!(parsed.get(&indexed_key).is_none());
    }
}
