//! `impact` with the memories linked to the target or to anything its change reaches.

use loci_memory::{CodeKey, Filter, MemorySummary, recall};
use schemars::JsonSchema;
use serde::Serialize;

use super::{IndexCodeGraph, StoreLocation};
use crate::error::{ApiError, ErrorKind};
use crate::graph::{Direction, Reach, TraversalPage, TraversalRequest, Unlinked, traverse_with};
use crate::handle::{ReadOptions, Workspace};

/// A memory `impact` shows: linked to the target or to something its change reaches.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImpactMemory {
    /// The memory.
    #[serde(flatten)]
    pub memory: MemorySummary,
    /// The linked code that the traversal reached.
    pub linked: CodeKey,
    /// Hops from the target (0: linked to the target itself).
    pub depth: u32,
    /// Whether a linked symbol or file changed, moved or disappeared since it was linked.
    pub stale: bool,
    /// What changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_reasons: Vec<String>,
}

/// `impact` with the memories it touches.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImpactAnswer {
    /// The traversal.
    #[serde(flatten)]
    pub traversal: TraversalPage,
    /// Memories linked to the target or to what it reaches (none without a memory file).
    pub memories: Vec<ImpactMemory>,
    /// Set when the memory store could not be read (the team's database down or
    /// unreachable): the code graph's answer stands, `memories` is empty, and this says
    /// why. Absent when the memories were searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memories_unavailable: Option<String>,
}

/// What depends on a target, and the memories linked to it or to anything reached.
/// A workspace without a memory file gets none (and no file is created); with
/// `memory.url` set, the team's memories of its repository are searched. The memories
/// only decorate the answer: when their store cannot be read (a `storage` error: the
/// team's database down), the traversal is still answered, with
/// [`ImpactAnswer::memories_unavailable`] saying why.
pub fn impact(
    ws: &Workspace,
    req: &TraversalRequest,
    opts: &ReadOptions,
) -> Result<ImpactAnswer, ApiError> {
    impact_with(ws, req, opts, Unlinked::Count, Reach::Whole)
}

/// [`impact`], counting what the first hop could not link or not ([`Unlinked`]: the
/// web view's impact page, which does not show them, skips that scan), and read whole
/// or as far as its page needs ([`Reach`]). The memories are those linked to the
/// targets and to the nodes of the page.
pub fn impact_with(
    ws: &Workspace,
    req: &TraversalRequest,
    opts: &ReadOptions,
    unlinked: Unlinked,
    reach: Reach,
) -> Result<ImpactAnswer, ApiError> {
    let traversal = traverse_with(ws, Direction::Impact, req, opts, unlinked, reach)?;
    let (memories, memories_unavailable) = memories_or_unavailable(ws, traversal_keys(&traversal))?;
    Ok(ImpactAnswer {
        traversal,
        memories,
        memories_unavailable,
    })
}

/// The memories linked to the definitions `symbols` themselves (depth 0), as
/// [`impact`] finds them but without a traversal: what a page about one definition
/// shows beside it. None without a memory file; the reason when the store cannot be
/// read.
pub fn linked_to(
    ws: &Workspace,
    symbols: &[loci_index::graph::SymbolInfo],
) -> Result<(Vec<ImpactMemory>, Option<String>), ApiError> {
    memories_or_unavailable(ws, symbols.iter().map(|s| (key_of(s), 0)).collect())
}

/// The memories linked to `keys` (each with its depth), nearest first: none without a
/// memory file (none is created), and, when the store cannot be read (`storage`: the
/// team's database down), none with the reason in the second place, so the code
/// graph's answer stands. `impact` and `changes` decorate their answers with it.
pub(crate) fn memories_or_unavailable(
    ws: &Workspace,
    keys: Vec<(CodeKey, u32)>,
) -> Result<(Vec<ImpactMemory>, Option<String>), ApiError> {
    let index_dir = ws.located().index_dir();
    let location = StoreLocation::of_workspace(ws.root(), index_dir)?;
    if !location.exists() || keys.is_empty() {
        return Ok((Vec::new(), None));
    }
    match linked_memories(ws, &location, keys) {
        Ok(memories) => Ok((memories, None)),
        Err(e) if e.kind == ErrorKind::Storage => {
            tracing::warn!(target: "memory", error = %e.message, "answering without memories");
            Ok((
                Vec::new(),
                Some(format!("memories unavailable: {}", e.message)),
            ))
        }
        Err(e) => Err(e),
    }
}

/// The traversal's targets (depth 0) and what it reached, as code keys.
fn traversal_keys(traversal: &TraversalPage) -> Vec<(CodeKey, u32)> {
    let mut keys: Vec<(CodeKey, u32)> = traversal
        .target_symbols
        .iter()
        .map(|s| (key_of(s), 0))
        .collect();
    for t in &traversal.targets {
        if traversal.target_symbols.is_empty() {
            keys.push((CodeKey::file(t.clone()), 0));
        }
    }
    for r in &traversal.reached {
        let key = match &r.symbol {
            Some(s) => key_of(s),
            None => CodeKey::file(r.path.clone()),
        };
        keys.push((key, r.depth));
    }
    keys
}

/// The memories linked to `keys`, nearest first (a key's smallest depth).
fn linked_memories(
    ws: &Workspace,
    location: &StoreLocation,
    keys: Vec<(CodeKey, u32)>,
) -> Result<Vec<ImpactMemory>, ApiError> {
    let mut store = location.open()?;
    let code = IndexCodeGraph::open(ws.root(), ws.index_path());
    let depth_of: rustc_hash::FxHashMap<CodeKey, u32> = keys.iter().rev().cloned().collect();
    let only: Vec<CodeKey> = keys.into_iter().map(|(k, _)| k).collect();
    let mut linked: Vec<(i64, CodeKey)> = Vec::new();
    let mut all_namespaces = store
        .stats(None)?
        .namespaces
        .into_keys()
        .collect::<Vec<_>>();
    all_namespaces.sort();
    for n in all_namespaces {
        let filter = Filter {
            namespace: n,
            ..Filter::default()
        };
        linked.extend(store.memories_linked_to(&filter, &only, &[])?);
    }
    let ids: Vec<i64> = linked.iter().map(|(id, _)| *id).collect();
    let summaries: rustc_hash::FxHashMap<i64, MemorySummary> = store
        .summaries(&ids)?
        .into_iter()
        .map(|s| (s.id, s))
        .collect();
    let checked = recall::checked_links(&mut *store, &code, code.available(), &ids)?;
    let mut memories: Vec<ImpactMemory> = Vec::new();
    for (id, key) in linked {
        if memories.iter().any(|m| m.memory.id == id) {
            continue;
        }
        let Some(memory) = summaries.get(&id).cloned() else {
            continue;
        };
        let reasons = checked
            .get(&id)
            .map(|l| recall::stale_reasons(l))
            .unwrap_or_default();
        memories.push(ImpactMemory {
            memory,
            depth: depth_of.get(&key).copied().unwrap_or(0),
            linked: key,
            stale: !reasons.is_empty(),
            stale_reasons: reasons,
        });
    }
    memories.sort_by(|a, b| {
        a.depth
            .cmp(&b.depth)
            .then(a.memory.name.cmp(&b.memory.name))
    });
    Ok(memories)
}

fn key_of(s: &loci_index::graph::SymbolInfo) -> CodeKey {
    CodeKey {
        path: s.path.clone(),
        qualified_name: s.qualified_name.clone(),
        kind: s.kind.name().to_string(),
    }
}
