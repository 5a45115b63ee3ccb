//! Recall's full-text candidates from PostgreSQL's own full text: the generated,
//! English-stemmed `tsvector` of each memory (name weight A, description B, body D: the
//! SQLite store's 10 : 4 : 1, as `ts_rank`'s default weights 1.0, 0.4, 0.1) and its GIN
//! index.
//!
//! A memory's score is, summed over the query words it holds, the word's IDF
//! (`ln((N − n + ½) / (n + ½))`, at least 1e-6: BM25's, over the scope's memories) times
//! `ts_rank` of that word alone, normalised by the memory's length (`1 + log(length)`).
//! So a rare word counts more than a common one and a word said more often, or in the
//! name, counts more, as with BM25; the values differ from FTS5's. They are returned
//! negated, as FTS5's `bm25()` is (lower is better), which is what recall's fusion takes.

use super::ctx::Db;
use super::handle::PgStore;
use super::rows::{Args, filter_sql};
use crate::MemoryError;
use crate::store::Filter;

/// Query words scored (the first ones), as in the SQLite store.
const MAX_TERMS: usize = 12;

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
        let c = &self.ctx;
        let mut a = Args::default();
        let words = a.add(terms);
        let scope = a.add(c.scope.clone());
        let cond = filter_sql(&c.scope, f, &mut a);
        let limit = a.add(k.min(i64::MAX as usize) as i64);
        // `websearch_to_tsquery` never fails on its input; a word that is an English
        // stop word becomes an empty query and drops out. Each word's weight is
        // computed once (`MATERIALIZED`): inlined, the planner may recount the scope's
        // memories for every matching row (seen at 2,000 memories before ANALYZE: 1.9 s
        // a query, 0.1 s materialized).
        let sql = format!(
            "WITH q AS (
                 SELECT websearch_to_tsquery('english', w) AS tq
                 FROM unnest({words}::text[]) AS w
             ),
             docs AS (SELECT count(*)::float8 AS n FROM memories WHERE scope = {scope}),
             weighted AS MATERIALIZED (
                 SELECT q.tq, greatest(ln((docs.n - df.n + 0.5) / (df.n + 0.5)), 1e-6) AS idf
                 FROM q CROSS JOIN docs
                 CROSS JOIN LATERAL (
                     SELECT count(*)::float8 AS n FROM memories d WHERE d.scope = {scope} AND d.fts @@ q.tq
                 ) df
                 WHERE numnode(q.tq) > 0
             )
             SELECT m.id, -sum(w.idf * ts_rank(m.fts, w.tq, 1))::float8 AS score
             FROM weighted w JOIN memories m ON m.fts @@ w.tq
             WHERE {cond}
             GROUP BY m.id
             ORDER BY score, m.id DESC
             LIMIT {limit}"
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
