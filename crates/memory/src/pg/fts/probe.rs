//! What a query's words are and how common: the scope's size and average length, each
//! word's English lexeme with its newest memories (a common word's count estimated from
//! them), and the bounded counts and look-ups `fts.rs` asks for beyond that.

use super::{Corpus, PROBE, Word, lexeme_query};
use crate::MemoryError;
use crate::pg::ctx::Db;
use crate::pg::handle::PgStore;
use crate::pg::rows::Args;

impl PgStore {
    /// The scope's size and average length (its totals, `scope_totals`: migration 3),
    /// its id span (the ends of its index), and each query word's lexeme with
    /// its newest `PROBE + 1` memories; words that are English stop words, or in no
    /// memory, are left out.
    pub(super) fn probe(&self, terms: Vec<String>) -> Result<(Corpus, Vec<Word>), MemoryError> {
        let c = &self.ctx;
        let mut client = self.client()?;
        // Lexemes first, so each word's probe below is planned for its own lexeme (a
        // parameter the planner sees: a rare word by the GIN index, a common one by
        // walking ids down), which it cannot be for a lexeme computed in the statement.
        let rows = client
            .query(
                "WITH s AS (
                     SELECT coalesce(sum(docs), 0)::float8 AS n,
                            coalesce((SELECT min(id) FROM memories WHERE scope = $1), 0) AS lo,
                            coalesce((SELECT max(id) FROM memories WHERE scope = $1), 0) AS hi,
                            coalesce(sum(words)::float8 / nullif(sum(docs), 0), 0)::float8 AS len
                     FROM scope_totals WHERE scope = $1
                 ),
                 t AS (
                     SELECT l.lex, min(w.ord) AS ord
                     FROM unnest($2::text[]) WITH ORDINALITY AS w(word, ord),
                          unnest(tsvector_to_array(to_tsvector('english', w.word))) AS l(lex)
                     GROUP BY l.lex
                 )
                 SELECT s.n, s.lo, s.hi, s.len, t.lex FROM s LEFT JOIN t ON true ORDER BY t.ord",
                &[&c.scope, &terms],
            )
            .db(c)?;
        let mut corpus = Corpus {
            docs: 0.0,
            lo: 0,
            hi: 0,
            avg_len: 0.0,
        };
        let mut lexemes = Vec::new();
        for r in &rows {
            corpus = Corpus {
                docs: r.try_get(0).db(c)?,
                lo: r.try_get(1).db(c)?,
                hi: r.try_get(2).db(c)?,
                avg_len: r.try_get(3).db(c)?,
            };
            if let Some(lexeme) = r.try_get::<_, Option<String>>(4).db(c)? {
                lexemes.push(lexeme);
            }
        }
        if corpus.docs == 0.0 || lexemes.is_empty() {
            return Ok((corpus, Vec::new()));
        }
        let queries: Vec<String> = lexemes.iter().map(|l| lexeme_query(l)).collect();
        let mut a = Args::default();
        let scope = a.add(c.scope.clone());
        let limit = a.add((PROBE + 1) as i64);
        let each: Vec<String> = queries
            .iter()
            .enumerate()
            .map(|(i, q)| {
                format!(
                    "SELECT {i} AS i, array(
                         SELECT id FROM memories WHERE scope = {scope} AND fts @@ {}::text::tsquery
                         ORDER BY id DESC LIMIT {limit}
                     )",
                    a.add(q.clone())
                )
            })
            .collect();
        let rows = client.query(&each.join(" UNION ALL "), &a.refs()).db(c)?;
        let mut recent: Vec<Vec<i64>> = vec![Vec::new(); lexemes.len()];
        for r in &rows {
            let i: i32 = r.try_get(0).db(c)?;
            recent[i as usize] = r.try_get(1).db(c)?;
        }
        let mut words = Vec::new();
        for (query, recent) in queries.into_iter().zip(recent) {
            let Some(&oldest) = recent.last() else {
                continue;
            };
            let df = if recent.len() <= PROBE {
                recent.len() as f64
            } else {
                // PROBE + 1 memories between this id and the newest: the same density
                // over the scope's whole span of ids.
                let span = (corpus.hi - corpus.lo + 1).max(1) as f64;
                let since = (corpus.hi - oldest + 1).max(1) as f64;
                ((PROBE + 1) as f64 * span / since)
                    .min(corpus.docs)
                    .max((PROBE + 1) as f64)
            };
            words.push(Word {
                query,
                df,
                recent,
                exact: false,
            });
        }
        Ok((corpus, words))
    }

    /// How many of the scope's memories match `query`, counting no further than `n`.
    pub(super) fn count_upto(&self, query: &str, n: usize) -> Result<usize, MemoryError> {
        let c = &self.ctx;
        let found: i64 = self
            .client()?
            .query_one(
                "SELECT count(*) FROM (
                     SELECT 1 FROM memories WHERE scope = $1 AND fts @@ $2::text::tsquery LIMIT $3
                 ) AS x",
                &[&c.scope, &query, &(n as i64)],
            )
            .db(c)?
            .try_get(0)
            .db(c)?;
        Ok(found as usize)
    }

    /// The scope's newest `n` memories matching `query`.
    pub(super) fn newest(&self, query: &str, n: usize) -> Result<Vec<i64>, MemoryError> {
        let c = &self.ctx;
        self.client()?
            .query(
                "SELECT id FROM memories WHERE scope = $1 AND fts @@ $2::text::tsquery
                 ORDER BY id DESC LIMIT $3",
                &[&c.scope, &query, &(n as i64)],
            )
            .db(c)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, postgres::Error>>()
            .db(c)
    }
}
