//! `loci embed`: the code units the vectors file is missing, built from the index and
//! the files (their texts by [`super::text`]) and embedded by the local model, file by
//! file, keyed by the content hash the index holds.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use super::store::{self, NewUnit, UnitStore};
use super::text::{self, UnitSource};
use super::{indexed_files, kinds_sql, model, sqlite_err};
use crate::error::{ApiError, ErrorKind};
use crate::handle::{ReadOptions, Workspace};

/// Units embedded per write (one transaction, a few forward passes).
pub const EMBED_CHUNK: usize = 256;

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

/// A long deadline for the index reads of `embed` (a write-like command).
fn embed_read_options() -> ReadOptions {
    ReadOptions {
        deadline: Duration::from_secs(600),
        ..ReadOptions::default()
    }
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
