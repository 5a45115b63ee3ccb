//! Recall's full-text candidates from PostgreSQL's own full text, ranked by BM25 as the
//! SQLite store's FTS5 ranks them (k1 = 1.2, b = 0.75; name 10 : description 4 :
//! body 1), with the cost of a common word bounded as there (docs/memory.md, "What
//! differs from SQLite").
//!
//! Each memory has its English-stemmed `tsvector` (name weight A, description B, body
//! D) with a GIN index, which finds the memories holding a word, and its length in
//! words (`fts_len`, kept at write time: migration 2, `schema.rs`). A memory's score is,
//! summed over the query's words it holds, `idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b ·
//! len / avglen))`: `tf` counts the word's positions in the `tsvector`, 10 each in the
//! name, 4 in the description, 1 in the body (`score.rs` reads it with `ts_rank_cd`);
//! `idf` is FTS5's (`ln((N − n + ½) / (n + ½))`, at least 1e-6) over the scope's
//! memories, whose count `N` and average length come from `scope_totals` (kept by
//! triggers: migration 3). That is the sum FTS5's `bm25()`
//! gives, up to how the two tokenise and stem. It is returned negated, as `bm25()` is
//! (lower is better), which is what fusion takes.
//!
//! Scoring a word means reading every memory holding it, so, as in `sqlite/fts.rs`, the
//! words are taken rarest first and scored exactly while their memories together stay
//! within [`EXACT_BUDGET`] (a word in at most [`PROBE`] memories always is). A word left
//! over (a common one: its weight is low whatever happens) has its memory count
//! estimated from how densely its [`PROBE`] newest memories fall among the scope's ids,
//! and counts only where it is found among its [`PROBE`] newest memories, the memories
//! the exact words found, and the newest memories holding every left-over word: what a
//! query costs no longer grows with how many memories hold its commonest word.

mod probe;
mod score;

use super::handle::PgStore;
use crate::MemoryError;
use crate::store::Filter;

/// A word in at most this many memories is scored exactly; a commoner one's newest this
/// many memories are read first, to estimate how common it is.
const PROBE: usize = 200;
/// The memories scored exactly per query, rarest word first (as the SQLite store's).
const EXACT_BUDGET: usize = 2_000;
/// Query words scored (the first ones), as in the SQLite store.
const MAX_TERMS: usize = 12;

/// One query word (an English lexeme) and what the probe learned about it.
struct Word {
    /// Its `tsquery`, the lexeme quoted (matched as it is, not stemmed again).
    query: String,
    /// How many of the scope's memories hold it: exact up to [`PROBE`] (or after a
    /// longer count), else estimated.
    df: f64,
    /// Its newest memories, newest first (at most `PROBE + 1`).
    recent: Vec<i64>,
    /// Whether every memory holding it is scored.
    exact: bool,
}

/// The scope's memories as BM25 needs them.
struct Corpus {
    /// How many (FTS5's N).
    docs: f64,
    /// The lowest and highest id, the span the newest postings' density is taken over.
    lo: i64,
    hi: i64,
    /// Their average length in words.
    avg_len: f64,
}

/// A lexeme as a `tsquery` of itself: quoted, its quotes and backslashes doubled.
fn lexeme_query(lexeme: &str) -> String {
    format!("'{}'", lexeme.replace('\\', "\\\\").replace('\'', "''"))
}

/// FTS5's BM25 IDF (`ln((N − n + ½) / (n + ½))`, at least 1e-6), the weight a word adds.
fn idf(docs: f64, df: f64) -> f64 {
    ((docs - df + 0.5) / (df + 0.5)).ln().max(1e-6)
}

impl PgStore {
    pub(super) fn fts_impl(
        &self,
        terms: &[String],
        f: &Filter,
        k: usize,
    ) -> Result<Vec<(i64, f64)>, MemoryError> {
        let terms: Vec<String> = terms.iter().take(MAX_TERMS).cloned().collect();
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let (corpus, mut words) = self.probe(terms)?;
        if corpus.docs == 0.0 || words.is_empty() {
            return Ok(Vec::new());
        }
        words.sort_by(|a, b| a.df.total_cmp(&b.df));
        let mut used = 0usize;
        for w in &mut words {
            let mut fits = w.recent.len() <= PROBE;
            let left = EXACT_BUDGET.saturating_sub(used);
            // Counted (a walk through up to `left` memories) unless it clearly will not
            // fit: estimated at over twice what is left.
            if !fits && left > PROBE && w.df <= 2.0 * left as f64 {
                let n = self.count_upto(&w.query, left + 1)?;
                if n <= left {
                    w.df = n as f64;
                    fits = true;
                }
            }
            if fits {
                w.exact = true;
                used += w.df as usize;
            }
        }
        let common: Vec<&Word> = words.iter().filter(|w| !w.exact).collect();
        let mut found: Vec<i64> = common
            .iter()
            .flat_map(|w| w.recent.iter().take(PROBE).copied())
            .collect();
        if common.len() > 1 {
            let all: Vec<&str> = common.iter().map(|w| w.query.as_str()).collect();
            found.extend(self.newest(&all.join(" & "), PROBE)?);
        }
        self.score(&corpus, &words, found, f, k)
    }
}
