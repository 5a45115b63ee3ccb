//! The memory operations every front end offers (the CLI, HTTP and MCP):
//! remember, read, list, edit, rename, forget, restore, merge, purge, history, link, unlink,
//! recall, related, entities, the relationships among one memory's entities, graph
//! export, stats, and `impact` with the memories linked to what a change reaches. Each
//! opens the store [`StoreLocation`] picks — the
//! workspace's `memory.db` (in the index's directory, so an `--index-path` index has its
//! memory beside it, and a rebuild never touches it), the team's PostgreSQL database
//! when `memory.url` is set, or the user-level store — and the workspace's index as the
//! memory's code graph.
mod access;
mod code_graph;
mod enrich;
mod entity_graph;
mod extract;
mod health;
mod impact;
mod location;
mod merge;
mod repository_cache;
mod repository_id;
mod transfer;
pub(crate) mod vectors;

use std::path::{Path, PathBuf};

use loci_memory::recall::{RecallAnswer, Vectors, VectorsState};
use loci_memory::{
    CodeKey, Edit, EntityInfo, EntityInput, Filter, MemorySummary, NewMemory, RelationshipInput,
    StoreDescription, StoreStats, graph, ops, recall,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use access::{MemoryAccess, NamespaceScope};
pub use code_graph::IndexCodeGraph;
pub use enrich::{EnrichAnswer, EnrichEstimate, EnrichRequest, EnrichResult, EnrichState, enrich};
pub use entity_graph::{
    EntityRelationships, EntityRelationshipsRequest, MAX_GRAPH_ENTITIES, MAX_GRAPH_RELATIONSHIPS,
    entity_relationships,
};
pub use extract::{
    ExtractMode, LLM_CAPABILITY, LlmChoice, TOOL_ENV, llm_spawns_allowed, require_llm_opt_in,
};
pub use health::{MemoryHealth, memory_health};
pub(crate) use impact::memories_or_unavailable;
pub use impact::{ImpactAnswer, ImpactMemory, impact, impact_with, linked_to};
pub use location::{BoxedStore, StoreLocation};
pub use loci_memory::merge::MergeView;
pub use loci_memory::ops::MemoryView;
/// A memory's type, one of its versions and a relationship between two entities, as
/// the answers name them.
pub use loci_memory::{MemoryType, Relationship, Version};
pub use merge::{MergeMemoriesRequest, merge};
pub use repository_id::{MAX_REPOSITORY_ID, normalise_remote, repository_id};
pub use transfer::{ExportSummary, ImportReport, export, import};
pub use vectors::{
    EMBED_BATCH, EmbedReport, ModelEmbedder, embed_in_background, embed_missing, embedder,
};

use crate::error::{ApiError, ErrorKind};
use crate::page::{PageInfo, PageRequest};

/// Default page of `list`.
pub const LIST_LIMIT: usize = 50;
/// Most hits of one recall.
pub const MAX_RECALL_LIMIT: usize = 200;

/// Which store an operation uses.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StoreTarget {
    /// The workspace (its `.loci/memory.db`, beside its index).
    pub workspace: PathBuf,
    /// The user-level store instead (notes that span workspaces; no code graph).
    #[serde(default)]
    pub user: bool,
    /// The namespaces the caller may use (an API key's scope); every one by default.
    #[serde(skip)]
    pub access: MemoryAccess,
}

/// The user-level store's file: `memory.db` beside the registry (`$LOCI_HOME`, else
/// `$XDG_DATA_HOME/loci`, else `~/.local/share/loci`).
pub fn user_store_path() -> Result<PathBuf, ApiError> {
    let registry = loci_store::registry::default_registry_path()?;
    Ok(registry
        .parent()
        .unwrap_or(Path::new("."))
        .join(loci_memory::MEMORY_FILE))
}

struct Ctx {
    store: BoxedStore,
    location: StoreLocation,
    code: IndexCodeGraph,
}

impl Ctx {
    fn open(target: &StoreTarget) -> Result<Ctx, ApiError> {
        let (location, code) = StoreLocation::of_target(target)?;
        Ok(Ctx {
            store: location.open()?,
            location,
            code,
        })
    }

    fn have_index(&self) -> bool {
        self.code.available()
    }
}

/// The namespace an operation on `target` uses: `namespace`, or the default, within
/// the caller's access (see [`MemoryAccess::namespace`]).
fn ns(target: &StoreTarget, namespace: &Option<String>) -> Result<String, ApiError> {
    target.access.namespace(namespace.as_deref())
}

/// `remember`: a new memory with its entities, relationships and code links.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RememberRequest {
    /// The memory.
    #[serde(flatten)]
    pub memory: NewMemory,
    /// Code to link besides what the body mentions (`name`, `Qualified::name`,
    /// `path:name`, a file path, `path:line`); each must name exactly one.
    #[serde(default)]
    pub links: Vec<String>,
    /// `llm`: after storing, extract entities and relationships with an LLM tool
    /// (opt-in; over HTTP and MCP only when the host allows it, `llm.allowSpawn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extract: Option<ExtractMode>,
    /// The tool for `extract` (default `claude`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmChoice>,
}

/// Stores a new memory (committed first); then its chunks' vectors, when a model is
/// installed (inline, or in the background in a long-lived host: see [`vectors`]);
/// then, with `extract: llm`, its entities and relationships from the LLM tool. A
/// failed extraction keeps the memory (marked `extraction: failed`) and answers the
/// failure's error.
pub fn remember(target: &StoreTarget, req: &RememberRequest) -> Result<MemoryView, ApiError> {
    if req.extract.is_some() {
        // A malformed memory is a 400 whatever the host allows; only a sound one
        // meets the capability check, before anything is stored.
        ops::validate(&req.memory)?;
        extract::check_allowed()?;
    }
    let mut memory = req.memory.clone();
    memory.namespace = Some(ns(target, &req.memory.namespace)?);
    let mut c = Ctx::open(target)?;
    let have = c.have_index();
    let mut view = ops::remember(&mut *c.store, &c.code, have, &memory, &req.links)?;
    view.vectors = Some(vectors::after_write(
        &mut *c.store,
        &c.location,
        view.memory.id,
    ));
    if req.extract == Some(ExtractMode::Llm) {
        enrich::after_remember(target, &mut *c.store, &view, req.llm)?;
        let (n, name) = (view.memory.namespace.clone(), view.memory.name.clone());
        let mentions = std::mem::take(&mut view.mentions);
        let vectors = view.vectors.take();
        view = ops::read(&mut *c.store, &c.code, have, &n, &name)?;
        view.mentions = mentions;
        view.vectors = vectors;
    }
    Ok(view)
}

/// A memory by name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NameRequest {
    /// The namespace (default `default`).
    #[serde(default)]
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// The memory's name.
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 200))]
    pub name: String,
}

/// A memory with its links checked against the code now.
pub fn read(target: &StoreTarget, req: &NameRequest) -> Result<MemoryView, ApiError> {
    let mut c = Ctx::open(target)?;
    let have = c.have_index();
    let mut view = ops::read(
        &mut *c.store,
        &c.code,
        have,
        &ns(target, &req.namespace)?,
        &req.name,
    )?;
    view.vectors = Some(vectors::state_of(&*c.store, Some(view.memory.id), None)?);
    Ok(view)
}

/// Which memories a list or recall sees.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct FilterRequest {
    /// The namespace (default `default`).
    #[serde(default)]
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// Only these types.
    #[serde(default)]
    pub types: Vec<MemoryType>,
    /// Changed since: `7d`, `12h`, `30m`, `2026-01-31`, or unix seconds.
    #[serde(default)]
    #[schemars(regex(pattern = crate::time::PATTERN))]
    pub since: Option<String>,
    /// Changed until (same forms).
    #[serde(default)]
    #[schemars(regex(pattern = crate::time::PATTERN))]
    pub until: Option<String>,
}

impl FilterRequest {
    fn filter(&self, target: &StoreTarget, include_forgotten: bool) -> Result<Filter, ApiError> {
        let now = crate::time::now_ms();
        Ok(Filter {
            namespace: ns(target, &self.namespace)?,
            types: self.types.clone(),
            since: self
                .since
                .as_deref()
                .map(|t| crate::time::parse(t, now))
                .transpose()?,
            until: self
                .until
                .as_deref()
                .map(|t| crate::time::parse(t, now))
                .transpose()?,
            include_forgotten,
        })
    }
}

/// `list`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ListRequest {
    /// Which memories.
    #[serde(flatten)]
    pub filter: FilterRequest,
    /// Forgotten memories too.
    #[serde(default)]
    pub forgotten: bool,
    /// The page.
    #[serde(flatten)]
    pub page: PageRequest,
}

/// A page of memories, most recently changed first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListAnswer {
    /// The memories.
    pub memories: Vec<MemorySummary>,
    /// Where the page stands.
    #[serde(flatten)]
    pub page: PageInfo,
}

/// Memories, most recently changed first.
pub fn list(target: &StoreTarget, req: &ListRequest) -> Result<ListAnswer, ApiError> {
    let c = Ctx::open(target)?;
    let window = req.page.window(LIST_LIMIT)?;
    let filter = req.filter.filter(target, req.forgotten)?;
    let (memories, total) = c.store.list(&filter, window.limit, window.offset)?;
    let end = window.offset + memories.len();
    let more = (end as u64) < total;
    Ok(ListAnswer {
        memories,
        page: PageInfo {
            limit: window.limit,
            total,
            total_exact: true,
            truncated: more,
            next_cursor: more.then(|| end.to_string()),
        },
    })
}

/// `edit`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["body"], "properties": {"body": {"type": "string"}}},
    {"required": ["description"], "properties": {"description": {"type": "string"}}},
    {"required": ["type"], "properties": {"type": {"type": "string"}}},
    {"required": ["metadata"], "properties": {"metadata": {"type": "object"}}}
]))]
pub struct EditRequest {
    /// Which memory.
    #[serde(flatten)]
    pub name: NameRequest,
    /// What changes.
    #[serde(flatten)]
    pub edit: Edit,
}

/// Changes a memory (a new version; a new body's mentions replace its auto links).
pub fn edit(target: &StoreTarget, req: &EditRequest) -> Result<MemoryView, ApiError> {
    let mut c = Ctx::open(target)?;
    let have = c.have_index();
    let n = ns(target, &req.name.namespace)?;
    let mut view = ops::edit(&mut *c.store, &c.code, have, &n, &req.name.name, &req.edit)?;
    view.vectors = Some(vectors::after_write(
        &mut *c.store,
        &c.location,
        view.memory.id,
    ));
    Ok(view)
}

/// `rename`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RenameRequest {
    /// Which memory (or entity).
    #[serde(flatten)]
    pub name: NameRequest,
    /// The new name.
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 200))]
    pub new_name: String,
}

/// Renames a memory (a new version).
pub fn rename(target: &StoreTarget, req: &RenameRequest) -> Result<MemoryView, ApiError> {
    let mut c = Ctx::open(target)?;
    let n = ns(target, &req.name.namespace)?;
    c.store.rename(&n, &req.name.name, &req.new_name)?;
    let have = c.have_index();
    Ok(ops::read(&mut *c.store, &c.code, have, &n, &req.new_name)?)
}

/// Forgets a memory (soft: restorable, a new version).
pub fn forget(target: &StoreTarget, req: &NameRequest) -> Result<MemoryView, ApiError> {
    let mut c = Ctx::open(target)?;
    let n = ns(target, &req.namespace)?;
    c.store.forget(&n, &req.name)?;
    let have = c.have_index();
    Ok(ops::read(&mut *c.store, &c.code, have, &n, &req.name)?)
}

/// `restore`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RestoreRequest {
    /// Which memory.
    #[serde(flatten)]
    pub name: NameRequest,
    /// Bring this version's content back (else: undo a forget).
    #[serde(default)]
    #[schemars(range(min = 1, max = 4_294_967_295_u32))]
    pub version: Option<u32>,
}

/// Undoes a forget, or brings an old version back (a new version either way).
pub fn restore(target: &StoreTarget, req: &RestoreRequest) -> Result<MemoryView, ApiError> {
    let mut c = Ctx::open(target)?;
    let n = ns(target, &req.name.namespace)?;
    c.store.restore(&n, &req.name.name, req.version)?;
    let have = c.have_index();
    Ok(ops::read(&mut *c.store, &c.code, have, &n, &req.name.name)?)
}

/// `purge`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PurgeRequest {
    /// Which memory.
    #[serde(flatten)]
    pub name: NameRequest,
    /// Consent: purge deletes the memory and every version for good.
    #[serde(default)]
    pub yes: bool,
}

/// What `purge` removed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Purged {
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
    /// Versions deleted with it.
    pub versions: usize,
}

/// Deletes a memory and its versions for good: only with consent.
pub fn purge(target: &StoreTarget, req: &PurgeRequest) -> Result<Purged, ApiError> {
    let mut c = Ctx::open(target)?;
    let n = ns(target, &req.name.namespace)?;
    let versions = c.store.history(&n, &req.name.name)?.len();
    if !req.yes {
        return Err(ApiError::new(
            ErrorKind::ConsentRequired,
            format!(
                "purging deletes the memory `{}` and its {versions} versions for good",
                req.name.name
            ),
        )
        .hint("add --yes to consent, or `loci memory forget` it instead (restorable)"));
    }
    c.store.purge(&n, &req.name.name)?;
    Ok(Purged {
        namespace: n,
        name: req.name.name.clone(),
        versions,
    })
}

/// A memory's versions.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HistoryAnswer {
    /// The memory's name now.
    pub name: String,
    /// Every version, oldest first.
    pub versions: Vec<Version>,
}

/// Every version of a memory.
pub fn history(target: &StoreTarget, req: &NameRequest) -> Result<HistoryAnswer, ApiError> {
    let c = Ctx::open(target)?;
    let versions = c.store.history(&ns(target, &req.namespace)?, &req.name)?;
    Ok(HistoryAnswer {
        name: req.name.clone(),
        versions,
    })
}

/// `link`: entities, relationships or code added to a memory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LinkRequest {
    /// Which memory.
    #[serde(flatten)]
    pub name: NameRequest,
    /// Entities to attach.
    #[serde(default)]
    pub entities: Vec<EntityInput>,
    /// Relationships to add.
    #[serde(default)]
    pub relationships: Vec<RelationshipInput>,
    /// Code to link (each must name exactly one symbol or file).
    #[serde(default)]
    pub code: Vec<String>,
}

/// Adds links to a memory (a new version).
pub fn link(target: &StoreTarget, req: &LinkRequest) -> Result<MemoryView, ApiError> {
    let mut c = Ctx::open(target)?;
    let have = c.have_index();
    let n = ns(target, &req.name.namespace)?;
    let add = ops::LinkSet {
        entities: &req.entities,
        relationships: &req.relationships,
        code: &req.code,
    };
    Ok(ops::link(
        &mut *c.store,
        &c.code,
        have,
        &n,
        &req.name.name,
        add,
    )?)
}

/// `unlink`: an entity, a code link, or both.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["entity"], "properties": {"entity": {"type": "string"}}},
    {"required": ["code"], "properties": {"code": {"type": "string"}}}
]))]
pub struct UnlinkRequest {
    /// Which memory.
    #[serde(flatten)]
    pub name: NameRequest,
    /// An entity to detach.
    #[serde(default)]
    pub entity: Option<String>,
    /// A code link to remove: a file path, or `path:qualified_name`.
    #[serde(default)]
    pub code: Option<String>,
}

/// Removes a link from a memory (a new version).
pub fn unlink(target: &StoreTarget, req: &UnlinkRequest) -> Result<MemoryView, ApiError> {
    if req.entity.is_none() && req.code.is_none() {
        return Err(ApiError::new(
            ErrorKind::Usage,
            "unlink needs an entity or a code link to remove",
        ));
    }
    let mut c = Ctx::open(target)?;
    let n = ns(target, &req.name.namespace)?;
    let key = req.code.as_deref().map(|text| {
        let m = c.store.read(&n, &req.name.name).ok();
        // A link is named as stored (`path` or `path:qualified_name`), or by its mention.
        m.and_then(|m| {
            m.links
                .into_iter()
                .find(|l| l.mention.as_deref() == Some(text))
                .map(|l| l.key)
        })
        .unwrap_or_else(|| match text.split_once(':') {
            Some((path, q)) if !q.starts_with(':') => CodeKey {
                path: path.into(),
                qualified_name: q.into(),
                kind: String::new(),
            },
            _ => CodeKey {
                path: text.into(),
                qualified_name: String::new(),
                kind: String::new(),
            },
        })
    });
    c.store
        .unlink(&n, &req.name.name, req.entity.as_deref(), key.as_ref())?;
    let have = c.have_index();
    Ok(ops::read(&mut *c.store, &c.code, have, &n, &req.name.name)?)
}

/// `recall`: a query that is not blank, a symbol or a file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["query"], "properties": {"query": {"type": "string", "pattern": "\\S"}}},
    {"required": ["symbol"], "properties": {"symbol": {"type": "string"}}},
    {"required": ["file"], "properties": {"file": {"type": "string"}}}
]))]
pub struct RecallRequest {
    /// Free text (may be empty with `symbol` or `file`).
    #[serde(default)]
    pub query: String,
    /// Which memories.
    #[serde(flatten)]
    pub filter: FilterRequest,
    /// Only memories linked to this symbol or to what its change reaches.
    #[serde(default)]
    pub symbol: Option<String>,
    /// Only memories linked to this file or to symbols in it.
    #[serde(default)]
    pub file: Option<String>,
    /// At most this many hits (default 10, at most 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_RECALL_LIMIT))]
    pub limit: Option<usize>,
}

/// Hybrid recall: full text, vectors (when a model is installed), graph, fused.
pub fn recall(target: &StoreTarget, req: &RecallRequest) -> Result<RecallAnswer, ApiError> {
    let limit = req.limit.unwrap_or(recall::DEFAULT_LIMIT);
    if !(1..=MAX_RECALL_LIMIT).contains(&limit) {
        return Err(ApiError::new(
            ErrorKind::LimitExceeded,
            format!("limit {limit} is outside 1..={MAX_RECALL_LIMIT}"),
        ));
    }
    if req.query.trim().is_empty() && req.symbol.is_none() && req.file.is_none() {
        return Err(ApiError::new(
            ErrorKind::Usage,
            "recall needs a query (not blank), a symbol or a file",
        ));
    }
    let mut c = Ctx::open(target)?;
    let have = c.have_index();
    let mut symbols = Vec::new();
    if let Some(s) = &req.symbol {
        symbols = resolve_target(&c.code, have, s)?;
    }
    let files = req
        .file
        .iter()
        .map(|f| f.trim_start_matches("./").to_string())
        .collect();
    let r = recall::RecallRequest {
        query: req.query.clone(),
        filter: req.filter.filter(target, false)?,
        symbols,
        files,
        limit,
        ..Default::default()
    };
    let mut answer = match recall::recall(&mut *c.store, &c.code, have, vectors::for_recall(), &r) {
        // The query could not be embedded: full text and graph still answer, and say so.
        Err(loci_memory::MemoryError::Embed(why)) => {
            let mut a = recall::recall(&mut *c.store, &c.code, have, None, &r)?;
            a.vectors = VectorsState {
                state: Vectors::Failed,
                error: Some(why),
                hint: Some(
                    "recall ran full text and graph only; `loci models status` checks the model"
                        .into(),
                ),
                ..VectorsState::default()
            };
            a
        }
        other => other?,
    };
    if answer.vectors.state == Vectors::Off {
        answer.vectors = vectors::off_state();
    }
    Ok(answer)
}

fn resolve_target(code: &IndexCodeGraph, have: bool, text: &str) -> Result<Vec<CodeKey>, ApiError> {
    use loci_memory::CodeGraph;
    if !have {
        return Err(ApiError::new(
            ErrorKind::NoIndex,
            format!("cannot resolve `{text}`: the workspace has no index"),
        )
        .hint("run `loci index` first"));
    }
    let found = code.resolve(&ops::target_mention(text), 20);
    if found.is_empty() {
        return Err(ApiError::new(
            ErrorKind::NotFound,
            format!("`{text}` names no symbol or file in the index"),
        ));
    }
    Ok(found.into_iter().map(|t| t.key).collect())
}

/// `related`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RelatedRequest {
    /// Which memory.
    #[serde(flatten)]
    pub name: NameRequest,
    /// Entity hops (1..=5, default 2).
    #[serde(default)]
    #[schemars(range(min = 1, max = 5))]
    pub depth: Option<u32>,
}

/// Memories near one in the entity graph.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RelatedAnswer {
    /// The memory asked about.
    pub name: String,
    /// Its neighbours, nearest first.
    pub related: Vec<graph::Related>,
}

/// Memories sharing entities (or related entities) with one, up to a depth.
pub fn related(target: &StoreTarget, req: &RelatedRequest) -> Result<RelatedAnswer, ApiError> {
    let c = Ctx::open(target)?;
    let n = ns(target, &req.name.namespace)?;
    let m = c.store.read(&n, &req.name.name)?;
    let filter = Filter {
        namespace: n,
        ..Filter::default()
    };
    let related = graph::related(&*c.store, &filter, m.id, req.depth.unwrap_or(2))?;
    Ok(RelatedAnswer {
        name: m.name,
        related,
    })
}

/// The entities of a namespace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntitiesAnswer {
    /// Entities, highest degree first.
    pub entities: Vec<EntityInfo>,
}

/// Lists entities with their degrees.
pub fn entities(
    target: &StoreTarget,
    namespace: &Option<String>,
) -> Result<EntitiesAnswer, ApiError> {
    let c = Ctx::open(target)?;
    Ok(EntitiesAnswer {
        entities: c.store.entities(&ns(target, namespace)?)?,
    })
}

/// `entities merge`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MergeRequest {
    /// The namespace.
    #[serde(default)]
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// The entity folded away.
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 200))]
    pub from: String,
    /// The entity kept.
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 200))]
    pub into: String,
}

/// Folds one entity into another (each memory that named it gets a version).
pub fn merge_entities(target: &StoreTarget, req: &MergeRequest) -> Result<EntityInfo, ApiError> {
    let mut c = Ctx::open(target)?;
    Ok(c.store
        .merge_entities(&ns(target, &req.namespace)?, &req.from, &req.into)?)
}

/// Renames an entity (the old name becomes an alias).
pub fn rename_entity(target: &StoreTarget, req: &RenameRequest) -> Result<EntityInfo, ApiError> {
    let mut c = Ctx::open(target)?;
    Ok(c.store.rename_entity(
        &ns(target, &req.name.namespace)?,
        &req.name.name,
        &req.new_name,
    )?)
}

/// A rendered graph.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphExport {
    /// `json`, `dot` or `mermaid`.
    pub format: graph::ExportFormat,
    /// The document.
    pub text: String,
}

/// The graph of a namespace rendered as `json`, `dot` or `mermaid`.
pub fn graph_export(
    target: &StoreTarget,
    namespace: &Option<String>,
    format: &str,
) -> Result<GraphExport, ApiError> {
    let format = graph::ExportFormat::parse(format)?;
    let c = Ctx::open(target)?;
    let filter = Filter {
        namespace: ns(target, namespace)?,
        ..Filter::default()
    };
    Ok(GraphExport {
        format,
        text: graph::render(&graph::dump(&*c.store, &filter)?, format),
    })
}

/// `stats`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryStats {
    /// The memory file, or the PostgreSQL database (password hidden).
    pub path: String,
    /// Which store (SQLite or PostgreSQL), its scope, and how it searches vectors.
    pub store: StoreDescription,
    /// The counts.
    #[serde(flatten)]
    pub stats: StoreStats,
    /// Whether recall uses vectors.
    pub vectors: VectorsState,
}

/// Fills the vectors a store's chunks are missing (`loci memory embed`), `batch` at a
/// time, reporting `progress(done, total)`; `model_missing` without a model.
pub fn embed(
    target: &StoreTarget,
    batch: usize,
    max: Option<usize>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<EmbedReport, ApiError> {
    let (location, _) = StoreLocation::of_target(target)?;
    vectors::embed_missing(&location, batch, max, progress)
}

/// Counts of a store (one namespace, or all).
pub fn stats(target: &StoreTarget, namespace: &Option<String>) -> Result<MemoryStats, ApiError> {
    let c = Ctx::open(target)?;
    let n = target.access.namespace_or_all(namespace.as_deref())?;
    let store = c.store.describe();
    Ok(MemoryStats {
        path: store.location.clone(),
        store,
        stats: c.store.stats(n.as_deref())?,
        vectors: vectors::state_of(&*c.store, None, n.as_deref())?,
    })
}

/// A body read from a file or stdin: within 512 KiB and valid UTF-8, else an error
/// naming where it came from.
pub fn body_from_bytes(origin: &str, bytes: Vec<u8>) -> Result<String, ApiError> {
    Ok(loci_memory::model::body_from_bytes(origin, bytes)?)
}

/// Entities given as JSON (`[{"name", "type", "aliases"?}]`), checked against their schema.
pub fn parse_entities(json: &str) -> Result<Vec<EntityInput>, ApiError> {
    Ok(loci_memory::model::parse_entities(json)?)
}

/// Relationships given as JSON (`[{"source", "target", "relation", "weight"?}]`).
pub fn parse_relationships(json: &str) -> Result<Vec<RelationshipInput>, ApiError> {
    Ok(loci_memory::model::parse_relationships(json)?)
}

/// A memory type by name (`decision|convention|...`).
pub fn parse_type(text: &str) -> Result<MemoryType, ApiError> {
    Ok(MemoryType::parse(text)?)
}
