//! How recall's three candidate lists become one ranking. Full text and vectors are fused
//! by their scores, not only their ranks: a full-text hit adds its BM25 relative to the
//! best full-text hit's (1 for the best), a vector hit its cosine similarity scaled
//! between the vector list's worst (0) and best (1) candidates, times
//! [`VECTOR_WEIGHT`] ([`QUESTION_VECTOR_WEIGHT`] for a query asked as a question, see
//! [`vector_weight`]); the graph, whose scores are path weights shared by many memories,
//! adds a reciprocal-rank term [`GRAPH_WEIGHT`]` / (`[`RRF_K`]` + rank)`. A memory found
//! by several sources adds them all. Chosen on the even-numbered queries of the
//! documentation quality set and checked on the odd ones (docs/performance.md, "Memory
//! recall quality"): recall@5 60.1 % held out, against 59.1 % for the reciprocal rank
//! fusion it replaced (RRF k 10, graph 0.5). The question weight was chosen on the tune
//! half of the FAQ question set (scripts/quality_questions.py) and checked on its
//! held-out half.

use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The vector source's weight against full text's 1: a scaled similarity of 1 (the
/// best vector candidate) is worth half of the best full-text hit.
pub const VECTOR_WEIGHT: f64 = 0.5;
/// The vector source's weight for a query asked as a question ("How do I ...?"): its
/// words are mostly the asking, so what it means (the model) says more than which words
/// it shares with an answer; at 3, full text mostly breaks the vectors' near-ties.
pub const QUESTION_VECTOR_WEIGHT: f64 = 3.0;
/// The graph's weight in its reciprocal-rank term.
pub const GRAPH_WEIGHT: f64 = 1.0;
/// The graph's reciprocal-rank constant: rank 1 adds `GRAPH_WEIGHT / 11`, so an entity
/// the query names lifts a memory without outweighing a full-text or vector hit.
pub const RRF_K: f64 = 10.0;

/// The vector weight for `query`: [`QUESTION_VECTOR_WEIGHT`] when it ends with a
/// question mark, else [`VECTOR_WEIGHT`].
pub fn vector_weight(query: &str) -> f64 {
    if query.trim_end().ends_with('?') {
        QUESTION_VECTOR_WEIGHT
    } else {
        VECTOR_WEIGHT
    }
}

/// One source's candidates, best first: `(memory id, the source's score)`.
pub struct Lists<'a> {
    /// Full text: BM25 (lower, i.e. more negative, is better).
    pub fts: &'a [(i64, f64)],
    /// Vectors: cosine similarity (higher is better).
    pub vectors: &'a [(i64, f32)],
    /// Graph: path weight and the path, already ranked.
    pub graph: Vec<(i64, f64, Vec<String>)>,
    /// What a scaled similarity of 1 is worth against the best full-text hit's 1
    /// ([`vector_weight`] of the query).
    pub vector_weight: f64,
}

/// What full text adds for a hit of BM25 `score` when the best hit's is `best`.
pub fn fts_part(score: f64, best: f64) -> f64 {
    if best < 0.0 { score / best } else { 1.0 }
}

/// What vectors add for a similarity `sim` in a list whose similarities span
/// `[worst, best]`, at `weight` ([`vector_weight`]).
pub fn vector_part(sim: f64, worst: f64, best: f64, weight: f64) -> f64 {
    let span = best - worst;
    let scaled = if span > 0.0 {
        (sim - worst) / span
    } else {
        1.0
    };
    weight * scaled
}

/// What the graph adds at 1-based `rank`.
pub fn graph_part(rank: usize) -> f64 {
    GRAPH_WEIGHT / (RRF_K + rank as f64)
}

/// A source's view of one hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SourceRank {
    /// 1-based rank within the source.
    pub rank: usize,
    /// The source's own score: BM25 (lower is better) for `fts`, cosine distance for
    /// `vector`, path weight for `graph`.
    pub score: f64,
    /// For `graph`: the path that reached the memory (`entity:X`, `code:path:name`...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
}

/// Why a hit ranked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Why {
    /// Full-text rank and BM25.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fts: Option<SourceRank>,
    /// Vector rank and cosine distance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<SourceRank>,
    /// Graph rank and path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<SourceRank>,
}

/// Every candidate with its fused score and why, best first (ties by id).
pub fn fuse(lists: Lists<'_>) -> Vec<(i64, f64, Why)> {
    let mut fused: FxHashMap<i64, (f64, Why)> = FxHashMap::default();
    let best_bm25 = lists.fts.first().map_or(0.0, |(_, s)| *s);
    for (rank, (id, bm25)) in lists.fts.iter().enumerate() {
        let e = fused.entry(*id).or_default();
        e.0 += fts_part(*bm25, best_bm25);
        e.1.fts = Some(SourceRank {
            rank: rank + 1,
            score: *bm25,
            path: Vec::new(),
        });
    }
    let sims = lists.vectors.iter().map(|(_, s)| f64::from(*s));
    let best_sim = sims.clone().fold(f64::MIN, f64::max);
    let worst_sim = sims.fold(f64::MAX, f64::min);
    for (rank, (id, sim)) in lists.vectors.iter().enumerate() {
        let e = fused.entry(*id).or_default();
        e.0 += vector_part(f64::from(*sim), worst_sim, best_sim, lists.vector_weight);
        e.1.vector = Some(SourceRank {
            rank: rank + 1,
            score: f64::from(1.0 - *sim),
            path: Vec::new(),
        });
    }
    for (rank, (id, score, path)) in lists.graph.into_iter().enumerate() {
        let e = fused.entry(id).or_default();
        e.0 += graph_part(rank + 1);
        e.1.graph = Some(SourceRank {
            rank: rank + 1,
            score,
            path,
        });
    }
    let mut ranked: Vec<(i64, f64, Why)> =
        fused.into_iter().map(|(id, (s, w))| (id, s, w)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(l: Lists<'_>) -> Vec<i64> {
        fuse(l).into_iter().map(|(id, _, _)| id).collect()
    }

    #[test]
    fn a_memory_found_by_full_text_and_vectors_outranks_one_found_by_either_alone() {
        // 1 is the best full-text hit, 2 the best vector hit; 3 is second in both.
        let fts = [(1, -9.0), (3, -8.0), (4, -1.0)];
        let vectors = [(2, 0.9), (3, 0.85), (5, 0.2)];
        let got = order(Lists {
            fts: &fts,
            vectors: &vectors,
            graph: Vec::new(),
            vector_weight: VECTOR_WEIGHT,
        });
        assert_eq!(got[0], 3, "{got:?}");
    }

    #[test]
    fn the_best_full_text_hit_outweighs_the_best_vector_hit() {
        let fts = [(1, -9.0), (4, -1.0)];
        let vectors = [(2, 0.9), (5, 0.2)];
        let got = order(Lists {
            fts: &fts,
            vectors: &vectors,
            graph: Vec::new(),
            vector_weight: VECTOR_WEIGHT,
        });
        assert_eq!(got[..2], [1, 2], "{got:?}");
    }

    #[test]
    fn a_graph_hit_alone_ranks_below_a_strong_text_hit_and_lifts_a_weak_one() {
        let fts = [(1, -9.0), (2, -4.0), (3, -3.9)];
        let graph = vec![(3, 1.0, vec!["entity:x".into()]), (9, 1.0, vec![])];
        let got = order(Lists {
            fts: &fts,
            vectors: &[],
            graph,
            vector_weight: VECTOR_WEIGHT,
        });
        assert_eq!(got, [1, 3, 2, 9], "{got:?}");
    }

    #[test]
    fn every_fused_score_is_the_sum_its_why_accounts_for() {
        let fts = [(1, -9.0), (3, -8.0), (4, -1.0)];
        let vectors = [(2, 0.9), (3, 0.85), (5, 0.2)];
        let graph = vec![(4, 0.6, vec!["entity:x".into()])];
        for (_, score, why) in fuse(Lists {
            fts: &fts,
            vectors: &vectors,
            graph,
            vector_weight: VECTOR_WEIGHT,
        }) {
            let mut sum = 0.0;
            if let Some(f) = &why.fts {
                sum += fts_part(f.score, -9.0);
            }
            if let Some(v) = &why.vector {
                sum += vector_part(1.0 - v.score, 0.2, 0.9, VECTOR_WEIGHT);
            }
            if let Some(g) = &why.graph {
                sum += graph_part(g.rank);
            }
            assert!((sum - score).abs() < 1e-6, "{score} vs {sum}: {why:?}");
        }
    }

    #[test]
    fn a_question_weighs_vectors_above_full_text() {
        assert_eq!(
            vector_weight("How do I copy a file?  "),
            QUESTION_VECTOR_WEIGHT
        );
        assert_eq!(vector_weight("copying files"), VECTOR_WEIGHT);
        assert_eq!(vector_weight(""), VECTOR_WEIGHT);
        // 1 is the best full-text hit, 2 the best vector hit: a statement keeps full
        // text first, a question puts the vector hit first.
        let fts = [(1, -9.0), (2, -5.0)];
        let vectors = [(2, 0.9), (1, 0.6), (5, 0.2)];
        for (query, first) in [("copying files", 1), ("How do I copy files?", 2)] {
            let got = order(Lists {
                fts: &fts,
                vectors: &vectors,
                graph: Vec::new(),
                vector_weight: vector_weight(query),
            });
            assert_eq!(got[0], first, "{query}: {got:?}");
        }
    }
}
