//! The BM25 sum of the words `fts.rs` chose, over the memories it chose: every memory
//! holding an exactly scored word, and the ones found for the common words. Each word a
//! candidate holds adds its BM25 term, its weighted frequency read by `ts_rank_cd` over
//! that word alone (a binary search in the candidate's `tsvector`, in C: unpacking the
//! `tsvector` into rows cost 0.2 ms a candidate).

use super::{Corpus, Word, idf};
use crate::MemoryError;
use crate::pg::ctx::Db;
use crate::pg::handle::PgStore;
use crate::pg::rows::{Args, filter_sql};
use crate::store::Filter;

/// BM25's term-frequency saturation, as FTS5's.
const K1: f64 = 1.2;
/// BM25's length normalisation, as FTS5's.
const B: f64 = 0.75;
/// `ts_rank_cd`'s weights (D, C, B, A: body, unused, description, name): FTS5's column
/// weights 1 : 4 : 10, scaled into the 0..1 PostgreSQL accepts.
const RANK_WEIGHTS: &str = "{0.1,0.2,0.4,1.0}";
/// What undoes that scaling, so a frequency counts as FTS5's does (10 per name word).
const TF_SCALE: f64 = 10.0;

impl PgStore {
    /// The best `k` candidates within the filter, with their negated BM25 (best first):
    /// the memories of the exact words and `found`.
    pub(super) fn score(
        &self,
        corpus: &Corpus,
        words: &[Word],
        found: Vec<i64>,
        f: &Filter,
        k: usize,
    ) -> Result<Vec<(i64, f64)>, MemoryError> {
        let c = &self.ctx;
        let mut a = Args::default();
        let found = a.add(found);
        let exact: Vec<&str> = words
            .iter()
            .filter(|w| w.exact)
            .map(|w| w.query.as_str())
            .collect();
        let exact_found = if exact.is_empty() {
            String::new()
        } else {
            format!(
                "UNION SELECT d.id FROM memories d WHERE d.scope = {} AND d.fts @@ {}::text::tsquery",
                a.add(c.scope.clone()),
                a.add(exact.join(" | "))
            )
        };
        let avg_len = a.add(corpus.avg_len.max(1.0));
        // Each word's weighted frequency, `TF_SCALE ·` its `ts_rank_cd` alone: over a
        // one-word query that is the sum of its positions' weights (name 1.0,
        // description 0.4, body 0.1), found by a binary search in C.
        let freqs: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                format!(
                    "{TF_SCALE:?}::float8 * ts_rank_cd('{RANK_WEIGHTS}'::float4[], d.v, {}::text::tsquery, 0) AS t{i}",
                    a.add(w.query.clone())
                )
            })
            .collect();
        let terms: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let idf = idf(corpus.docs, w.df);
                format!(
                    "{idf:?}::float8 * r.t{i} * {k1p:?} / (r.t{i} + r.n)",
                    k1p = K1 + 1.0
                )
            })
            .collect();
        let cond = filter_sql(&c.scope, f, &mut a);
        let limit = a.add(k.min(i64::MAX as usize) as i64);
        // `OFFSET 0` keeps each lateral row a row: the candidate's `tsvector` is read
        // out of TOAST once (`|| ''`, a copy in memory) rather than once per word, and
        // each word is ranked once.
        let sql = format!(
            "WITH c AS (SELECT DISTINCT x.id FROM unnest({found}::bigint[]) AS x(id) {exact_found})
             SELECT m.id, -({sum})::float8 AS score
             FROM c JOIN memories m ON m.id = c.id
             CROSS JOIN LATERAL (SELECT m.fts || ''::tsvector AS v OFFSET 0) AS d
             CROSS JOIN LATERAL (
                 SELECT {K1:?} * ({nb:?} + {B:?} * m.fts_len / {avg_len}::float8) AS n, {freqs}
                 OFFSET 0
             ) AS r
             WHERE {cond}
             ORDER BY score, m.id DESC
             LIMIT {limit}",
            sum = terms.join(" + "),
            freqs = freqs.join(", "),
            nb = 1.0 - B,
        );
        self.client()?
            .query(&sql, &a.refs())
            .db(c)?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()
            .db(c)
    }
}
