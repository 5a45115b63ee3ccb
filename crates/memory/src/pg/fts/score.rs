//! The BM25 sum of the words `fts.rs` chose, over the memories it chose: every memory
//! holding an exactly scored word, and the ones found for the common words. Each word a
//! candidate holds adds its BM25 term, its weighted frequency counted from the
//! positions of the candidate's `tsvector` (one pass over it per candidate).

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
        let lexemes = a.add(words.iter().map(|w| w.lexeme.clone()).collect::<Vec<_>>());
        let weights = a.add(
            words
                .iter()
                .map(|w| idf(corpus.docs, w.df))
                .collect::<Vec<f64>>(),
        );
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
        let cond = filter_sql(&c.scope, f, &mut a);
        let limit = a.add(k.min(i64::MAX as usize) as i64);
        let sql = format!(
            "WITH w AS (SELECT * FROM unnest({lexemes}::text[], {weights}::float8[]) AS w(lex, idf)),
             c AS (SELECT DISTINCT x.id FROM unnest({found}::bigint[]) AS x(id) {exact_found})
             SELECT m.id, coalesce((
                 SELECT -sum(w.idf * t.tf * {k1p} / (t.tf + {K1} * ({nb} + {B} * m.fts_len / {avg_len}::float8)))
                 FROM unnest(m.fts) AS u JOIN w ON w.lex = u.lexeme
                 CROSS JOIN LATERAL (
                     SELECT sum(CASE x WHEN 'A' THEN 10 WHEN 'B' THEN 4 ELSE 1 END)::float8 AS tf
                     FROM unnest(u.weights) AS x
                 ) AS t
             ), 0)::float8 AS score
             FROM c JOIN memories m ON m.id = c.id
             WHERE {cond}
             ORDER BY score, m.id DESC
             LIMIT {limit}",
            k1p = K1 + 1.0,
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
