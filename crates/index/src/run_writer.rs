//! The writer's side of a run's parse phase: each parsed file is applied as it arrives,
//! in transactions of [`BATCH_FILES`] files, with what it makes stale marked in the same
//! transaction; a first index also keeps each file's resolution inputs and sends its
//! text to the side-built search index.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rusqlite::Connection;

use crate::meta::meta_set;
use crate::parse::{Outcome, Parsed};
use crate::progress::Progress;
use crate::resolve;
use crate::side_search::SideSearch;
use crate::trigram::TermsBuilder;
use crate::walk::{RelPath, Skipped};
use crate::write::{self, StoredFile};

/// Files written per transaction: large enough to amortise commits, small enough that
/// readers see progress and a crash loses little.
pub(crate) const BATCH_FILES: usize = 1000;

/// Most facts (symbols and references) a first index keeps in memory for resolution;
/// a larger tree is resolved from the index instead, keeping peak memory bounded.
pub(crate) const GATHER_MAX_ROWS: usize = 1_000_000;

/// Where a run's search terms go: a first index builds the search index on the side;
/// any other run writes each changed file's terms with its facts.
pub(crate) enum SearchSink {
    Side(SideSearch),
    Inline(TermsBuilder),
    /// A side build finished early (before chunked resolution), waiting to be installed.
    SideBuilt(std::path::PathBuf),
}

/// Resolution inputs gathered while a first index is written, so that resolution does
/// not read back what was just written. Dropped (the index is read instead) past
/// `max_rows` ([`GATHER_MAX_ROWS`] unless a test lowers it).
pub(crate) struct Gathered {
    pub table: resolve::TableBuilder,
    pub inputs: Vec<resolve::FileInputs>,
    rows: usize,
    max_rows: usize,
}

impl Gathered {
    /// Gathers up to `max_rows` facts.
    pub(crate) fn with_max_rows(max_rows: usize) -> Self {
        Gathered {
            table: Default::default(),
            inputs: Vec::new(),
            rows: 0,
            max_rows,
        }
    }
}

/// What a run did to how many files, for its report.
#[derive(Default)]
pub(crate) struct Counts {
    pub parsed: u64,
    pub touched: u64,
    pub unchanged: u64,
    pub removed: u64,
    pub resolved: u64,
}

/// The writer's side of the parse phase: applies each parsed file as it arrives, in
/// transactions of [`BATCH_FILES`] files, and keeps what the rest of the run needs.
pub(crate) struct RunWriter<'r> {
    pub stored: &'r HashMap<RelPath, StoredFile>,
    pub fresh: bool,
    /// Whether `meta.state` says this run is unfinished (set by the first transaction
    /// that changes something, if the run did not set it up front).
    pub marked: bool,
    pub counts: &'r mut Counts,
    pub skipped: &'r mut Vec<Skipped>,
    pub lossy: &'r mut Vec<String>,
    pub gathered: &'r mut Option<Gathered>,
    pub search: &'r mut SearchSink,
}

/// What one transaction changed that makes other files' edges stale.
#[derive(Default)]
struct Staled {
    /// Whether the transaction changes the index at all.
    changed: bool,
    names: HashSet<String>,
    removed_ids: Vec<i64>,
    added_paths: Vec<String>,
}

impl RunWriter<'_> {
    /// Writes every outcome the parsers send, then removes `removed`; returns the time
    /// spent writing (not waiting for parsers).
    pub fn write_all(
        &mut self,
        conn: &mut Connection,
        outcomes: crossbeam_channel::Receiver<Outcome>,
        removed: &[i64],
        progress: &dyn Progress,
    ) -> rusqlite::Result<std::time::Duration> {
        let mut writing = std::time::Duration::ZERO;
        let mut incoming = outcomes.iter().peekable();
        // Each transaction opens once its first file has arrived, so that a full batch
        // is committed as soon as it is written.
        while incoming.peek().is_some() {
            let tx = conn.transaction()?;
            let mut staled = Staled::default();
            for outcome in incoming.by_ref().take(BATCH_FILES) {
                let started = Instant::now();
                self.apply(&tx, outcome, &mut staled)?;
                writing += started.elapsed();
                progress.advance(1);
            }
            let started = Instant::now();
            self.commit(tx, &staled)?;
            writing += started.elapsed();
        }
        let started = Instant::now();
        let tx = conn.transaction()?;
        let mut staled = Staled::default();
        for &id in removed {
            write::remove_file(&tx, id, &mut staled.names)?;
            staled.removed_ids.push(id);
            staled.changed = true;
        }
        self.commit(tx, &staled)?;
        Ok(writing + started.elapsed())
    }

    fn apply(
        &mut self,
        tx: &rusqlite::Transaction<'_>,
        outcome: Outcome,
        staled: &mut Staled,
    ) -> rusqlite::Result<()> {
        match outcome {
            Outcome::Changed(parsed) => {
                staled.changed = true;
                let existing = self.stored.get(&parsed.rel).map(|s| s.id);
                let inline_terms = match &mut *self.search {
                    SearchSink::Inline(terms) => Some(terms),
                    SearchSink::Side(_) | SearchSink::SideBuilt(_) => None,
                };
                // A first index resolves every file: no names to collect for staleness.
                let names = (!self.fresh).then_some(&mut staled.names);
                let (file_id, ids) =
                    write::write_parsed(tx, &parsed, existing, names, inline_terms)?;
                if existing.is_none() && !self.fresh {
                    staled.added_paths.push(parsed.rel.display().into_owned());
                }
                if parsed.lossy {
                    self.lossy.push(parsed.rel.display().into_owned());
                }
                self.counts.parsed += 1;
                let Parsed {
                    rel, facts, text, ..
                } = *parsed;
                if let SearchSink::Side(side) = &*self.search {
                    side.send(file_id, text);
                }
                if let Some(g) = self.gathered {
                    g.rows += facts.symbols.len() + facts.refs.len();
                    if g.rows > g.max_rows {
                        *self.gathered = None;
                        // Up to a million facts were just freed: hand them back now,
                        // not after the parse phase, or they stay resident through it.
                        crate::freed_memory::release();
                    } else {
                        let inputs = g.table.add_written(file_id, &rel.display(), &ids, facts);
                        g.inputs.push(inputs);
                    }
                }
            }
            Outcome::Touched { rel, stat } => {
                if let Some(s) = self.stored.get(&rel) {
                    write::write_touched(tx, s.id, stat)?;
                    staled.changed = true;
                }
                self.counts.touched += 1;
            }
            Outcome::Skipped { rel, skip } => {
                // A file that used to be indexed and is now skipped leaves the index.
                if let Some(s) = self.stored.get(&rel) {
                    write::remove_file(tx, s.id, &mut staled.names)?;
                    staled.removed_ids.push(s.id);
                    self.counts.removed += 1;
                    staled.changed = true;
                }
                self.skipped.push(skip);
            }
        }
        Ok(())
    }

    /// Marks what the transaction made stale (a first index resolves everything
    /// anyway) and commits it.
    fn commit(&mut self, tx: rusqlite::Transaction<'_>, staled: &Staled) -> rusqlite::Result<()> {
        if staled.changed && !self.marked {
            meta_set(
                &tx,
                crate::MetaKey::State,
                crate::IndexState::Indexing.name(),
            )?;
            self.marked = true;
        }
        if !self.fresh {
            write::mark_stale(&tx, &staled.names, &staled.removed_ids, &staled.added_paths)?;
        }
        tx.commit()?;
        tracing::debug!(
            parsed = self.counts.parsed,
            rss_mib = crate::resident::resident_mib(),
            "batch committed"
        );
        // The batch's files were freed on this thread and the parsers': without a trim
        // the pages they leave free are touched again piecemeal and the resident size
        // creeps up with the tree (about 15 MB/s on a large one).
        crate::freed_memory::release();
        Ok(())
    }
}
