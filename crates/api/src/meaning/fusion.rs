//! How a meaning search ranks: the query's words for full text, and the fusion of the
//! candidates each signal brings (full text, vectors, the graph) into one score with
//! the reasons it is made of, the way memory recall fuses its sources.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::text;

/// Full text's weight: its best hit adds 1 (BM25 relative to the best).
pub const TEXT_WEIGHT: f64 = 1.0;
/// The vectors' weight: the most similar candidate adds this much, the least 0.
pub const VECTOR_WEIGHT: f64 = 1.0;
/// The graph's weight: the most called candidate adds this much (by the logarithm of
/// its call sites against the most called one's), so being called a lot only breaks
/// near ties.
pub const GRAPH_WEIGHT: f64 = 0.1;

/// Vectors' part in a hit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct VectorWhy {
    /// 1-based rank among the vector candidates.
    pub rank: usize,
    /// Cosine similarity to the query.
    pub similarity: f64,
}

/// Full text's part in a hit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TextWhy {
    /// 1-based rank among the full-text candidates.
    pub rank: usize,
    /// BM25 (lower is better).
    pub bm25: f64,
}

/// The graph's part in a hit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphWhy {
    /// Call sites that reach the unit.
    pub callers: u64,
}

/// Which signals matched a hit, and how.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct MeaningWhy {
    /// Among the vector candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<VectorWhy>,
    /// Among the full-text candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextWhy>,
    /// Called from somewhere (hybrid only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphWhy>,
}

/// Common English words that say nothing about code; left out of the full-text query.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "from", "with",
    "into", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these",
    "those", "which", "who", "what", "when", "where", "why", "how", "if", "then", "else", "so",
    "do", "does", "did", "we", "you", "our", "as", "not", "no", "can", "will", "should", "there",
    "here", "any", "all", "each", "some",
];

/// The query's words for full text: identifiers split, lower-cased, stop words and
/// single letters dropped, each once.
pub fn query_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text::words_of(text).split(' ') {
        if w.chars().count() < 2 || STOP_WORDS.contains(&w) || out.iter().any(|o| o == w) {
            continue;
        }
        out.push(w.to_string());
    }
    out
}

/// One candidate's fused score and why.
#[derive(Debug, Default)]
pub struct Fused {
    /// The fused score (higher is better).
    pub score: f64,
    /// Which signals made it.
    pub why: MeaningWhy,
}

/// Fuses the candidates the way memory recall does (see `loci_memory::fusion`): full
/// text adds its BM25 relative to the best hit's times [`TEXT_WEIGHT`], vectors the
/// similarity scaled between the worst and best candidates times [`VECTOR_WEIGHT`], the
/// graph `GRAPH_WEIGHT · ln(1+callers) / ln(1+most callers)`.
pub fn fuse(
    fts: &[(i64, f64)],
    vecs: &[(i64, f32)],
    callers: &HashMap<i64, u64>,
) -> Vec<(i64, Fused)> {
    let mut fused: HashMap<i64, Fused> = HashMap::new();
    let best_bm25 = fts.first().map_or(0.0, |(_, s)| *s);
    for (rank, (id, bm25)) in fts.iter().enumerate() {
        let e = fused.entry(*id).or_default();
        e.score += TEXT_WEIGHT * loci_memory::fusion::fts_part(*bm25, best_bm25);
        e.why.text = Some(TextWhy {
            rank: rank + 1,
            bm25: *bm25,
        });
    }
    let best = vecs.first().map_or(0.0, |v| f64::from(v.1));
    let worst = vecs.last().map_or(0.0, |v| f64::from(v.1));
    for (rank, (id, sim)) in vecs.iter().enumerate() {
        let e = fused.entry(*id).or_default();
        let span = best - worst;
        let scaled = if span > 0.0 {
            (f64::from(*sim) - worst) / span
        } else {
            1.0
        };
        e.score += VECTOR_WEIGHT * scaled;
        e.why.vector = Some(VectorWhy {
            rank: rank + 1,
            similarity: f64::from(*sim),
        });
    }
    let most = callers.values().copied().max().unwrap_or(0);
    if most > 0 {
        for (id, n) in callers {
            if *n == 0 {
                continue;
            }
            if let Some(e) = fused.get_mut(id) {
                e.score += GRAPH_WEIGHT * ((1 + n) as f64).ln() / ((1 + most) as f64).ln();
                e.why.graph = Some(GraphWhy { callers: *n });
            }
        }
    }
    let mut ranked: Vec<(i64, Fused)> = fused.into_iter().collect();
    ranked.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_drop_stop_words_and_split_identifiers() {
        assert_eq!(
            query_words("Where do we retry the failed HTTP requests? retryRequest"),
            ["retry", "failed", "http", "requests", "request"]
        );
        assert!(query_words("the a of").is_empty());
    }

    #[test]
    fn a_unit_both_signals_find_outranks_one_either_finds_and_callers_break_ties() {
        let fts = [(1, -9.0), (3, -8.0), (4, -1.0)];
        let vecs = [(2, 0.9f32), (3, 0.85), (5, 0.2)];
        let got: Vec<i64> = fuse(&fts, &vecs, &HashMap::new())
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(got[0], 3, "{got:?}");
        // Two equal candidates: the one called from more places first.
        let fts = [(7, -5.0), (8, -5.0)];
        let callers = HashMap::from([(7, 0), (8, 12)]);
        let got: Vec<i64> = fuse(&fts, &[], &callers)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(got, [8, 7]);
    }
}
