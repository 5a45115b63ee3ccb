//! Hybrid recall: full text (FTS5 BM25), vectors (exact cosine k-NN, when an embedder is
//! given) and graph expansion (entities the query names, their weighted relationships,
//! entities shared with the best text hits, and code: memories linked to the symbols the
//! query names or that the code graph connects to them), fused by their scores and the
//! graph's ranks (`fusion.rs`). Every hit says why it ranked, and whether its code links
//! are stale.

use rustc_hash::{FxHashMap, FxHashSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::code::{self, CheckedLink, CodeGraph};
use crate::fusion;
use crate::mentions::{self, Mention};
use crate::model::{CodeKey, MemorySummary};
use crate::store::{Filter, MemoryStore};
use crate::vector::{self, Embedder};

/// Candidates each source contributes.
pub const CANDIDATES: usize = 50;
/// Default hits returned.
pub const DEFAULT_LIMIT: usize = 10;
/// Hops through the code graph from a named symbol.
pub const CODE_DEPTH: u32 = 2;

/// What to recall.
#[derive(Debug, Clone, Default)]
pub struct RecallRequest {
    /// Free text.
    pub query: String,
    /// Which memories.
    pub filter: Filter,
    /// Only memories linked to these symbols, or to what their change reaches.
    pub symbols: Vec<CodeKey>,
    /// Only memories linked to these files (or symbols in them).
    pub files: Vec<String>,
    /// At most this many hits.
    pub limit: usize,
    /// Which signals run: all three by default (hybrid recall); one alone measures
    /// that signal on its own (the quality harness, docs/performance.md).
    pub signals: Signals,
}

/// Which of recall's three signals take part. With full text or vectors off, their
/// hits also stop seeding the graph's "shares an entity with the best hits" step, so
/// graph alone is the entities and code the query names and what they reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signals {
    /// FTS5 BM25.
    pub fts: bool,
    /// Vector k-NN (when an embedder is given).
    pub vectors: bool,
    /// Graph expansion (entities, relationships, code).
    pub graph: bool,
}

impl Default for Signals {
    fn default() -> Self {
        Signals::ALL
    }
}

impl Signals {
    /// All three: hybrid recall.
    pub const ALL: Signals = Signals {
        fts: true,
        vectors: true,
        graph: true,
    };
    /// Only full text.
    pub const FTS: Signals = Signals {
        fts: true,
        vectors: false,
        graph: false,
    };
    /// Only vectors.
    pub const VECTORS: Signals = Signals {
        fts: false,
        vectors: true,
        graph: false,
    };
    /// Only the graph.
    pub const GRAPH: Signals = Signals {
        fts: false,
        vectors: false,
        graph: true,
    };
}

pub use crate::fusion::{SourceRank, Why};

/// One recalled memory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecallHit {
    /// The memory.
    #[serde(flatten)]
    pub memory: MemorySummary,
    /// The fused score: the sum over the sources that found it of full text's BM25
    /// relative to the best full-text hit's, 0.5 × its cosine similarity scaled between
    /// the vector list's worst (0) and best (1) (3 × for a query ending with `?`), and
    /// the graph's `1 / (10 + rank)` (`loci_memory::fusion`).
    pub score: f64,
    /// Why it ranked.
    pub why: Why,
    /// Whether a linked symbol or file changed, moved or disappeared.
    pub stale: bool,
    /// What changed, one line per stale link.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_reasons: Vec<String>,
    /// Its code links and how each stands.
    pub links: Vec<CheckedLink>,
    /// The line of its body holding most of the query's words (else its first line),
    /// cut to [`crate::snippet::SNIPPET_CHARS`]: why it answers, without a read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// How the vector source stands: the one vocabulary of a [`VectorsState`]'s `state`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Vectors {
    /// Vectors ran (or every chunk has one).
    On,
    /// No model, or vectors not asked for.
    #[default]
    Off,
    /// Some chunks are not embedded yet.
    Pending,
    /// The last try to embed failed.
    Failed,
}

impl Vectors {
    /// The name written in answers (`on`, `off`, `pending`, `failed`).
    pub fn name(self) -> &'static str {
        match self {
            Vectors::On => "on",
            Vectors::Off => "off",
            Vectors::Pending => "pending",
            Vectors::Failed => "failed",
        }
    }
}

impl std::fmt::Display for Vectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether the vector source ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VectorsState {
    /// `on` or `off`; for one memory (or a store) whose chunks are not all embedded yet,
    /// `pending`, or `failed` when the last try to embed them failed.
    pub state: Vectors,
    /// The model, when on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How to turn them on, when off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Chunks still without a vector of the model (`stats`, `read`, `remember`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<u64>,
    /// Why embedding failed, when `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A recall's answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecallAnswer {
    /// The hits, best first.
    pub hits: Vec<RecallHit>,
    /// Whether vectors took part.
    pub vectors: VectorsState,
    /// The code the query named (resolved symbols and files) that the graph source used.
    pub code_named: Vec<CodeKey>,
}

/// Words a query is made of, as FTS5's `unicode61` tokenizer splits them, lower-cased,
/// without the commonest English words.
pub fn query_terms(query: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "in",
        "is", "it", "of", "on", "or", "that", "the", "this", "to", "was", "we", "what", "when",
        "where", "which", "who", "why", "with",
    ];
    let mut seen = FxHashSet::default();
    query
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .filter(|w| seen.insert(w.clone()))
        .take(32)
        .collect()
}

struct Graphed {
    score: f64,
    path: Vec<String>,
}

fn offer(found: &mut FxHashMap<i64, Graphed>, id: i64, score: f64, path: Vec<String>) {
    let e = found.entry(id).or_insert(Graphed {
        score: f64::MIN,
        path: Vec::new(),
    });
    if score > e.score {
        *e = Graphed { score, path };
    }
}

/// Runs a hybrid recall over `store`; `code` resolves the code the query names
/// (`have_index` false: no code graph), `embedder` turns vectors on.
pub fn recall(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    embedder: Option<&dyn Embedder>,
    req: &RecallRequest,
) -> Result<RecallAnswer, MemoryError> {
    let limit = if req.limit == 0 {
        DEFAULT_LIMIT
    } else {
        req.limit
    };
    let terms = query_terms(&req.query);
    let signals = req.signals;
    let fts = if signals.fts {
        store.fts(&terms, &req.filter, CANDIDATES)?
    } else {
        Vec::new()
    };
    let installed = embedder.is_some();
    let embedder = embedder.filter(|_| signals.vectors);
    // The query is embedded after full text, not beside it on a second thread: over
    // MCP on a busy 2-core machine the encoder's threads and full text's fought for
    // the cores and recall with vectors got slower (docs/performance.md, 2026-12-07).

    let (vectors, vec_hits) = match embedder {
        Some(m) if !req.query.trim().is_empty() => {
            let mut q = m
                .embed_query(req.query.as_str())
                .map_err(|e| MemoryError::Embed(e.to_string()))?;
            vector::normalize(&mut q);
            let hits = vector::nearest(&*store, m.model_id(), &req.filter, &q, CANDIDATES)?;
            (
                VectorsState {
                    state: Vectors::On,
                    model: Some(m.model_id().into()),
                    hint: None,
                    ..VectorsState::default()
                },
                hits,
            )
        }
        Some(m) => (
            VectorsState {
                state: Vectors::On,
                model: Some(m.model_id().into()),
                hint: None,
                ..VectorsState::default()
            },
            Vec::new(),
        ),
        None if installed => (
            VectorsState {
                state: Vectors::Off,
                model: None,
                hint: Some("vectors were not asked for (signals)".into()),
                ..VectorsState::default()
            },
            Vec::new(),
        ),
        None => (
            VectorsState {
                state: Vectors::Off,
                model: None,
                hint: Some(
                    "no embedding model is installed: recall ran full text and graph only; install the local model (all-MiniLM-L6-v2) to turn vectors on (see docs/memory.md#vectors)".into(),
                ),
                ..VectorsState::default()
            },
            Vec::new(),
        ),
    };

    // Graph: entities the query names, one hop along their relationships.
    let mut graphed: FxHashMap<i64, Graphed> = FxHashMap::default();
    let mut words = terms.clone();
    let phrase = req.query.trim().to_lowercase();
    if !phrase.is_empty() && !words.contains(&phrase) {
        words.push(phrase);
    }
    let named = store.entities_named(&req.filter.namespace, &words)?;
    if !named.is_empty() {
        let ids: Vec<i64> = named.iter().map(|(id, _)| *id).collect();
        let names: FxHashMap<i64, String> = named.iter().cloned().collect();
        for (m, ent) in store.memories_of_entities(&req.filter, &ids)? {
            offer(
                &mut graphed,
                m,
                1.0,
                vec![format!("entity:{}", names[&ent])],
            );
        }
        let edges = store.entity_edges(&ids)?;
        let hop: Vec<i64> = edges.iter().map(|e| e.to).collect();
        let via: FxHashMap<i64, &crate::store::EntityEdge> =
            edges.iter().map(|e| (e.to, e)).collect();
        for (m, ent) in store.memories_of_entities(&req.filter, &hop)? {
            let e = via[&ent];
            offer(
                &mut graphed,
                m,
                0.6 * e.weight,
                vec![
                    format!("entity:{}", names[&e.from]),
                    format!("-{} ({:.2})->", e.relation, e.weight),
                    format!("entity:{}", e.to_name),
                ],
            );
        }
    }
    // Graph: entities shared with the best text and vector hits.
    let seeds: Vec<i64> = fts
        .iter()
        .map(|(id, _)| *id)
        .take(3)
        .chain(vec_hits.iter().map(|(id, _)| *id).take(3))
        .collect();
    if !seeds.is_empty() {
        let seed_entities = store.entities_of_memories(&seeds)?;
        let ids: Vec<i64> = seed_entities.iter().map(|(_, e, _)| *e).collect();
        let names: FxHashMap<i64, (i64, String)> = seed_entities
            .iter()
            .map(|(m, e, n)| (*e, (*m, n.clone())))
            .collect();
        for (m, ent) in store.memories_of_entities(&req.filter, &ids)? {
            let (seed, name) = &names[&ent];
            if m != *seed {
                offer(
                    &mut graphed,
                    m,
                    0.3,
                    vec![format!("memory#{seed}"), format!("entity:{name}")],
                );
            }
        }
    }
    // Graph: code the query names (backticks, qualified names, paths), and what it reaches.
    let mut code_named: Vec<CodeKey> = req.symbols.clone();
    if have_index {
        for m in mentions::extract(&req.query) {
            for t in code.resolve(&m, 3) {
                if !code_named.contains(&t.key) {
                    code_named.push(t.key);
                }
            }
        }
        for w in req.query.split_whitespace() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            if w.contains('_') && !w.starts_with('_') {
                for t in code.resolve(&Mention::Symbol(w.to_string()), 3) {
                    if !code_named.contains(&t.key) {
                        code_named.push(t.key);
                    }
                }
            }
        }
    }
    let mut reach: Vec<(CodeKey, Vec<String>, f64)> = Vec::new();
    for k in &code_named {
        reach.push((k.clone(), vec![format!("code:{k}")], 1.0));
        if have_index && !k.is_file() {
            for (to, via) in code.connected(k, CODE_DEPTH) {
                let depth = via.len().max(1) as f64;
                let mut path = vec![format!("code:{k}")];
                path.extend(via.iter().skip(1).map(|v| format!("-> {v}")));
                path.push(format!("code:{to}"));
                reach.push((to, path, 0.5 / depth));
            }
        }
    }
    let mut allowed: Option<FxHashSet<i64>> = None;
    if !reach.is_empty() || !req.files.is_empty() {
        let keys: Vec<CodeKey> = reach.iter().map(|(k, _, _)| k.clone()).collect();
        let by_key: FxHashMap<&CodeKey, (&Vec<String>, f64)> =
            reach.iter().map(|(k, p, s)| (k, (p, *s))).collect();
        let linked = store.memories_linked_to(&req.filter, &keys, &req.files)?;
        let restrict = !req.symbols.is_empty() || !req.files.is_empty();
        let mut set = FxHashSet::default();
        for (m, key) in linked {
            let (path, score) = by_key
                .get(&key)
                .map(|(p, s)| ((*p).clone(), *s))
                .unwrap_or_else(|| (vec![format!("file:{}", key.path)], 0.9));
            let is_named_reach = req.symbols.is_empty()
                || by_key.contains_key(&key)
                || req.files.contains(&key.path);
            if is_named_reach {
                set.insert(m);
            }
            offer(&mut graphed, m, 0.9 + score * 0.1, path);
        }
        if restrict {
            allowed = Some(set);
        }
    }

    // Fuse.
    let mut graph_list: Vec<(i64, Graphed)> = graphed.into_iter().collect();
    graph_list.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
    graph_list.truncate(if signals.graph { CANDIDATES } else { 0 });
    let mut ranked: Vec<(i64, f64, Why)> = fusion::fuse(fusion::Lists {
        fts: &fts,
        vectors: &vec_hits,
        graph: graph_list
            .into_iter()
            .map(|(id, g)| (id, g.score, g.path))
            .collect(),
        vector_weight: fusion::vector_weight(&req.query),
    });
    ranked.retain(|(id, _, _)| allowed.as_ref().is_none_or(|a| a.contains(id)));
    ranked.truncate(limit);

    let ids: Vec<i64> = ranked.iter().map(|(id, _, _)| *id).collect();
    let mut summaries: FxHashMap<i64, MemorySummary> = store
        .summaries(&ids)?
        .into_iter()
        .map(|s| (s.id, s))
        .collect();
    let mut links = checked_links(store, code, have_index, &ids)?;
    // A memory gone between the ranking and this read loses its snippet only.
    let mut bodies: FxHashMap<i64, String> = store.bodies(&ids)?.into_iter().collect();
    let hits = ranked
        .into_iter()
        .filter_map(|(id, score, why)| {
            let memory = summaries.remove(&id)?;
            let links = links.remove(&id).unwrap_or_default();
            let snippet = bodies
                .remove(&id)
                .and_then(|body| crate::snippet::snippet(&body, &terms));
            Some(RecallHit {
                snippet,
                ..hit(memory, score, why, links)
            })
        })
        .collect();
    Ok(RecallAnswer {
        hits,
        vectors,
        code_named,
    })
}

fn hit(memory: MemorySummary, score: f64, why: Why, links: Vec<CheckedLink>) -> RecallHit {
    let stale_reasons = stale_reasons(&links);
    RecallHit {
        memory,
        score,
        why,
        stale: !stale_reasons.is_empty(),
        stale_reasons,
        links,
        snippet: None,
    }
}

/// One line per stale link.
pub fn stale_reasons(links: &[CheckedLink]) -> Vec<String> {
    links
        .iter()
        .filter_map(|l| match &l.status {
            code::LinkState::Changed { reason, .. } | code::LinkState::Missing { reason } => {
                Some(reason.clone())
            }
            _ => None,
        })
        .collect()
}

/// The code links of `ids`, each checked against the code graph; a link whose code
/// moved unchanged is moved to follow it.
pub fn checked_links(
    store: &mut dyn MemoryStore,
    code: &dyn CodeGraph,
    have_index: bool,
    ids: &[i64],
) -> Result<FxHashMap<i64, Vec<CheckedLink>>, MemoryError> {
    let mut out: FxHashMap<i64, Vec<CheckedLink>> = FxHashMap::default();
    for (id, mut link) in store.links_of(ids)? {
        let (status, follow) = code::check(&link, code, have_index);
        if let Some(to) = follow {
            store.move_link(link.id, &to.key, to.line)?;
            link.key = to.key;
            link.line = to.line;
        }
        out.entry(id)
            .or_default()
            .push(CheckedLink { link, status });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::Vectors;

    /// The wire form of each state is the name the CLI prints and the docs list, so a
    /// renamed variant cannot change an answer unnoticed.
    #[test]
    fn each_vectors_state_is_written_as_its_name() {
        for v in [Vectors::On, Vectors::Off, Vectors::Pending, Vectors::Failed] {
            let wire = serde_json::to_value(v).unwrap();
            assert_eq!(wire, serde_json::json!(v.name()));
            assert_eq!(serde_json::from_value::<Vectors>(wire).unwrap(), v);
        }
        assert!(serde_json::from_value::<Vectors>(serde_json::json!("maybe")).is_err());
    }
}
