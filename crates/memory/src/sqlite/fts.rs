//! Recall's full-text candidates: BM25 over the FTS5 index, exact for every word whose
//! postings fit a budget and bounded for the commonest ones, so recall stays in
//! milliseconds at 100,000 memories (docs/performance.md, "Memory").
//!
//! BM25 is a sum over the query's words, so the words are scored apart and the sums kept
//! per memory. FTS5's `bm25()` reads a word's whole posting list (for its IDF, then for
//! every memory it scores), which costs microseconds per posting: cheap for a word in a
//! few thousand memories, tens of milliseconds for one in half of 100,000. So the words
//! are taken rarest first and scored exactly (one FTS5 query of them OR'ed, whose
//! `bm25()` is each memory's sum over them) while their postings together stay within
//! [`EXACT_BUDGET`]; a word in at most [`PROBE`] memories is always exact. Each word
//! left over (a common one: its weight is low whatever happens) adds its IDF, estimated
//! from how densely its most recent postings fall, as if it occurred once, to the
//! memories it is found in among: its [`PROBE`] most recent postings, the memories the
//! exactly scored words found (an FTS5 `AND`, which seeks through the long posting list
//! instead of reading it), and the most recent memories holding every left-over word.

use rusqlite::{ToSql, params_from_iter};
use rustc_hash::{FxHashMap, FxHashSet};

use super::handle::SqliteStore;
use super::read::filter_sql_by_id;
use super::rows::placeholders;
use crate::MemoryError;
use crate::store::Filter;

/// A word in at most this many memories is scored exactly; a commoner one's most recent
/// this many postings are read first, to estimate how common it is.
const PROBE: usize = 200;
/// The postings scored exactly per query, rarest word first (≈ 1–3 ms of FTS5 `bm25()`).
const EXACT_BUDGET: usize = 2_000;
/// Query terms scored (the first ones).
const MAX_TERMS: usize = 12;

/// One query word and what the probe learned about it.
struct Word {
    /// Its FTS5 phrase (`"word"`).
    phrase: String,
    /// How many memories hold it: exact up to [`PROBE`] (or after a longer probe),
    /// else estimated.
    df: f64,
    /// Its most recent postings, newest first (at most `PROBE + 1`).
    recent: Vec<i64>,
    /// Whether it was scored exactly.
    exact: bool,
}

/// FTS5's BM25 IDF (`ln((N − n + ½) / (n + ½))`, at least 1e-6), the weight a word adds.
fn idf(docs: f64, df: f64) -> f64 {
    ((docs - df + 0.5) / (df + 0.5)).ln().max(1e-6)
}

impl SqliteStore {
    pub(crate) fn fts_impl(
        &self,
        terms: &[String],
        f: &Filter,
        k: usize,
    ) -> Result<Vec<(i64, f64)>, MemoryError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let e = self.err();
        // Rowids are memory ids, given in order: the largest one is the number of rows
        // FTS5's IDF counts, give or take purged memories.
        let last: i64 = self
            .conn
            .query_row("SELECT coalesce(max(id), 0) FROM memories", [], |r| {
                r.get(0)
            })
            .map_err(&e)?;
        if last == 0 {
            return Ok(Vec::new());
        }
        let docs = last as f64;
        let mut probe = self
            .conn
            .prepare_cached(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
            )
            .map_err(&e)?;
        let mut recent = |phrase: &str, n: usize| -> Result<Vec<i64>, MemoryError> {
            probe
                .query_map(rusqlite::params![phrase, n as i64], |r| r.get(0))
                .map_err(&e)?
                .collect::<Result<_, _>>()
                .map_err(&e)
        };
        let mut words = Vec::new();
        for t in terms.iter().take(MAX_TERMS) {
            let phrase = format!("\"{}\"", t.replace('"', "\"\""));
            let found = recent(&phrase, PROBE + 1)?;
            let df = match found.get(PROBE) {
                None => found.len() as f64,
                // PROBE + 1 postings between this rowid and the last: the same density
                // over every memory.
                Some(&oldest) => ((PROBE + 1) as f64 * docs / (last - oldest + 1).max(1) as f64)
                    .min(docs)
                    .max((PROBE + 1) as f64),
            };
            if !found.is_empty() {
                words.push(Word {
                    phrase,
                    df,
                    recent: found,
                    exact: false,
                });
            }
        }
        words.sort_by(|a, b| a.df.total_cmp(&b.df));

        let mut score: FxHashMap<i64, f64> = FxHashMap::default();
        let mut used = 0usize;
        for w in &mut words {
            let mut fits = w.recent.len() <= PROBE;
            if !fits && used + PROBE < EXACT_BUDGET {
                let left = EXACT_BUDGET - used;
                let n = recent(&w.phrase, left + 1)?.len();
                if n <= left {
                    w.df = n as f64;
                    fits = true;
                }
            }
            if !fits {
                continue;
            }
            w.exact = true;
            used += w.df as usize;
        }
        let exact: Vec<&str> = words
            .iter()
            .filter(|w| w.exact)
            .map(|w| w.phrase.as_str())
            .collect();
        self.score_exact(&exact, &mut score)?;
        let common: Vec<&Word> = words.iter().filter(|w| !w.exact).collect();
        self.score_common(&common, &exact, docs, &mut score)?;

        let mut ranked: Vec<(i64, f64)> = score.into_iter().collect();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        self.keep_filtered(ranked, f, k)
    }

    /// Adds the BM25 of the exactly scored words (rarest first) to each memory holding
    /// any: one FTS5 query of the words OR'ed, in that order, which gives each memory
    /// the very sum (bit for bit) that one query per word added up would: FTS5's
    /// `bm25()` sums its phrases' terms in query order and a phrase a memory lacks adds
    /// zero; but the postings are merged and each memory's column sizes read once.
    fn score_exact(
        &self,
        exact: &[&str],
        score: &mut FxHashMap<i64, f64>,
    ) -> Result<(), MemoryError> {
        if exact.is_empty() {
            return Ok(());
        }
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT rowid, bm25(memory_fts, 10.0, 4.0, 1.0) FROM memory_fts WHERE memory_fts MATCH ?1",
            )
            .map_err(&e)?;
        let rows = stmt
            .query_map([exact.join(" OR ")], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .map_err(&e)?;
        for row in rows {
            let (id, s) = row.map_err(&e)?;
            *score.entry(id).or_default() += s;
        }
        Ok(())
    }

    /// Adds each common word's IDF (lower BM25 is better: subtracted) to the memories it
    /// is found in among its recent postings, the exact words' memories, and the most
    /// recent memories holding every common word.
    fn score_common(
        &self,
        common: &[&Word],
        exact: &[&str],
        docs: f64,
        score: &mut FxHashMap<i64, f64>,
    ) -> Result<(), MemoryError> {
        if common.is_empty() {
            return Ok(());
        }
        let e = self.err();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
            )
            .map_err(&e)?;
        let mut ids = |query: &str, n: usize| -> Result<Vec<i64>, MemoryError> {
            stmt.query_map(rusqlite::params![query, n as i64], |r| r.get(0))
                .map_err(&e)?
                .collect::<Result<_, _>>()
                .map_err(&e)
        };
        let all_common: Vec<i64> = if common.len() > 1 {
            let phrases: Vec<&str> = common.iter().map(|w| w.phrase.as_str()).collect();
            ids(&phrases.join(" AND "), PROBE)?
        } else {
            Vec::new()
        };
        let with_exact = (!exact.is_empty()).then(|| exact.join(" OR "));
        for w in common {
            let mut found: FxHashSet<i64> = w.recent.iter().take(PROBE).copied().collect();
            found.extend(all_common.iter().copied());
            if let Some(x) = &with_exact {
                found.extend(ids(&format!("{} AND ({x})", w.phrase), usize::MAX >> 1)?);
            }
            let weight = idf(docs, w.df);
            for id in found {
                *score.entry(id).or_default() -= weight;
            }
        }
        Ok(())
    }

    /// The best `k` of `ranked` (best first) within the filter: candidates checked in
    /// rank order, the first `k` alone, then a slice at a time.
    fn keep_filtered(
        &self,
        ranked: Vec<(i64, f64)>,
        f: &Filter,
        k: usize,
    ) -> Result<Vec<(i64, f64)>, MemoryError> {
        let e = self.err();
        let mut out = Vec::new();
        // The best k first (usually all the filter keeps), then the rest a slice at a time.
        let (first, rest) = ranked.split_at(k.min(ranked.len()));
        for slice in std::iter::once(first).chain(rest.chunks(200)) {
            if slice.is_empty() {
                continue;
            }
            let mut values: Vec<Box<dyn ToSql>> = slice
                .iter()
                .map(|(id, _)| Box::new(*id) as Box<dyn ToSql>)
                .collect();
            let ph = placeholders(slice.len());
            let cond = filter_sql_by_id(f, &mut values);
            let mut stmt = self
                .conn
                .prepare_cached(&format!(
                    "SELECT m.id FROM memories m WHERE m.id IN ({ph}) AND {cond}"
                ))
                .map_err(&e)?;
            let keep: FxHashSet<i64> = stmt
                .query_map(params_from_iter(values.iter()), |r| r.get(0))
                .map_err(&e)?
                .collect::<Result<_, _>>()
                .map_err(&e)?;
            out.extend(slice.iter().filter(|(id, _)| keep.contains(id)).copied());
            if out.len() >= k {
                break;
            }
        }
        out.truncate(k);
        Ok(out)
    }
}
