//! The storage seam: everything recall and the front ends need from where memories are
//! kept, as one trait. [`crate::SqliteStore`] keeps them in a SQLite file;
//! [`crate::PgStore`], a team's shared PostgreSQL database, implements the same trait,
//! and recall, graph expansion, staleness and the service layer work over it unchanged.
//! `tests/store.rs` runs one conformance suite against both.

use crate::MemoryError;
use crate::model::{
    CodeKey, CodeLink, Edit, EntityInfo, EntityInput, Memory, MemorySummary, MemoryType,
    NewCodeLink, NewMemory, Relationship, RelationshipInput, Version,
};

/// Most entity names one [`MemoryStore::relationships_among`] takes.
pub const MAX_AMONG_ENTITIES: usize = 1_000;

/// Whether a [`MemoryStore::relationships_among`] call has anything to look up: `false`
/// for no names or a zero limit; more names than [`MAX_AMONG_ENTITIES`] are refused
/// before any query.
pub(crate) fn among_wanted(entities: &[String], limit: usize) -> Result<bool, MemoryError> {
    if entities.len() > MAX_AMONG_ENTITIES {
        return Err(MemoryError::Invalid(format!(
            "{} entity names to find the relationships among; at most {MAX_AMONG_ENTITIES} at once",
            entities.len()
        )));
    }
    Ok(!entities.is_empty() && limit > 0)
}

/// Which memories an operation sees.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// The namespace.
    pub namespace: String,
    /// Only these types (all when empty).
    pub types: Vec<MemoryType>,
    /// Only those changed at or after (unix ms).
    pub since: Option<i64>,
    /// Only those changed at or before (unix ms).
    pub until: Option<i64>,
    /// Forgotten memories too (`list --forgotten`).
    pub include_forgotten: bool,
}

/// A chunk waiting for its vector.
#[derive(Debug, Clone)]
pub struct PendingChunk {
    /// The memory.
    pub memory_id: i64,
    /// The chunk's position.
    pub seq: u32,
    /// Its text.
    pub text: String,
}

/// An entity-to-entity edge as recall walks it.
#[derive(Debug, Clone)]
pub struct EntityEdge {
    /// One end (the one asked about).
    pub from: i64,
    /// The other end.
    pub to: i64,
    /// The other end's name.
    pub to_name: String,
    /// The relation.
    pub relation: String,
    /// 0..=1.
    pub weight: f64,
}

/// Counts of a store.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct StoreStats {
    /// Memories (not forgotten).
    pub memories: u64,
    /// Forgotten memories (restorable).
    pub forgotten: u64,
    /// Versions kept.
    pub versions: u64,
    /// Chunks.
    pub chunks: u64,
    /// Chunks with a vector (any model).
    pub embedded_chunks: u64,
    /// Entities.
    pub entities: u64,
    /// Relationships.
    pub relationships: u64,
    /// Code links.
    pub code_links: u64,
    /// Live memories whose last LLM extraction failed (`memory enrich` retries them).
    pub extraction_failed: u64,
    /// Memories by type.
    pub types: std::collections::BTreeMap<String, u64>,
    /// Namespaces with their memory counts.
    pub namespaces: std::collections::BTreeMap<String, u64>,
}

/// Which kind of store holds the memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// A SQLite file ([`crate::SqliteStore`]): one workspace's, or the user's.
    Sqlite,
    /// A PostgreSQL database a team shares ([`crate::PgStore`]).
    Postgres,
}

/// How vector recall finds its nearest chunks in a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VectorSearch {
    /// The database answers the k-NN itself (pgvector).
    Pgvector,
    /// loci computes the exact cosine over every vector (SQLite's in-process cache, or
    /// a scan of PostgreSQL's vectors where pgvector is not used).
    Exact,
}

/// What a store is, for `memory stats` and health answers: which kind, where (a
/// PostgreSQL URL with its password hidden), which scope, and how it searches vectors.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct StoreDescription {
    /// SQLite or PostgreSQL.
    pub kind: StoreKind,
    /// The file, or the database's connection string with its password hidden. Not
    /// serialised: it may be an absolute path, which the service layer shows only where
    /// paths may go (`memory stats`' `path`, dropped over HTTP).
    #[serde(skip)]
    pub location: String,
    /// The repository identity the memories are shared under (PostgreSQL only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// How vector recall searches.
    pub vector_search: VectorSearch,
}

/// Where memories are kept. Every mutation is one transaction that also writes the
/// memory's next version; a failed call stores nothing.
pub trait MemoryStore {
    /// Stores a new memory (already validated) with its entities, relationships and code links.
    fn create(
        &mut self,
        m: &NewMemory,
        ns: &str,
        links: &[NewCodeLink],
    ) -> Result<Memory, MemoryError>;
    /// The memory `name` in `ns`, forgotten or not.
    fn read(&self, ns: &str, name: &str) -> Result<Memory, MemoryError>;
    /// Memories matching `filter`, most recently changed first, with the total.
    fn list(
        &self,
        filter: &Filter,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<MemorySummary>, u64), MemoryError>;
    /// Changes content; `auto_links`, when given, replaces the memory's auto links.
    fn edit(
        &mut self,
        ns: &str,
        name: &str,
        edit: &Edit,
        auto_links: Option<&[NewCodeLink]>,
    ) -> Result<Memory, MemoryError>;
    /// Renames within the namespace.
    fn rename(&mut self, ns: &str, name: &str, new_name: &str) -> Result<Memory, MemoryError>;
    /// Soft delete: hidden from recall and list, kept with its versions.
    fn forget(&mut self, ns: &str, name: &str) -> Result<Memory, MemoryError>;
    /// Undoes a forget, or (with `version`) brings that version's content back as a new version.
    fn restore(
        &mut self,
        ns: &str,
        name: &str,
        version: Option<u32>,
    ) -> Result<Memory, MemoryError>;
    /// Merges memory `from` into `into` (both live, in `ns`): `into` takes `from`'s
    /// body ([`crate::merged_body`]), entities, relationships and code links, `from` is
    /// forgotten with `metadata.merged_into`; each gets a `merge` version. Answers
    /// `(into, from)` as they are after.
    fn merge(&mut self, ns: &str, from: &str, into: &str) -> Result<(Memory, Memory), MemoryError>;
    /// Hard delete of the memory and every version.
    fn purge(&mut self, ns: &str, name: &str) -> Result<(), MemoryError>;
    /// Every version, oldest first.
    fn history(&self, ns: &str, name: &str) -> Result<Vec<Version>, MemoryError>;
    /// Replaces the history of `name` in `ns` with `versions` (oldest first, numbered
    /// 1, 2, 3..., the last one its content: checked by the caller) and its clocks with
    /// theirs, in one transaction: what an import does to a memory it just created, so
    /// a memory moved between stores keeps its history. No versions changes nothing.
    fn replace_history(
        &mut self,
        ns: &str,
        name: &str,
        versions: &[Version],
    ) -> Result<(), MemoryError>;
    /// Adds entities, relationships and code links to a memory.
    fn link(
        &mut self,
        ns: &str,
        name: &str,
        entities: &[EntityInput],
        relationships: &[RelationshipInput],
        code: &[NewCodeLink],
    ) -> Result<Memory, MemoryError>;
    /// Removes an entity from a memory, or a code link.
    fn unlink(
        &mut self,
        ns: &str,
        name: &str,
        entity: Option<&str>,
        code: Option<&CodeKey>,
    ) -> Result<Memory, MemoryError>;
    /// Moves a link to where its code went (a rename the index saw).
    fn move_link(&mut self, link_id: i64, to: &CodeKey, line: u32) -> Result<(), MemoryError>;
    /// The entities of a namespace with their degrees.
    fn entities(&self, ns: &str) -> Result<Vec<EntityInfo>, MemoryError>;
    /// Folds `from` into `into` (memories, relationships, aliases), removing `from`.
    fn merge_entities(
        &mut self,
        ns: &str,
        from: &str,
        into: &str,
    ) -> Result<EntityInfo, MemoryError>;
    /// Renames an entity (the old name becomes an alias).
    fn rename_entity(
        &mut self,
        ns: &str,
        name: &str,
        new_name: &str,
    ) -> Result<EntityInfo, MemoryError>;
    /// Every relationship of a namespace.
    fn relationships(&self, ns: &str) -> Result<Vec<Relationship>, MemoryError>;
    /// The relationships of `ns` whose source and target are both among the entities
    /// named `entities` (matched as entity names are, case-insensitively; no alias, no
    /// pattern), source → target as stated, ordered by source, target and relation, at
    /// most `limit`. What drawing a few entities' corner of the graph needs (a memory's
    /// page): the names are looked up by the entities' name index and the relationships
    /// by their source index, so it costs the relationships leaving those entities, not
    /// the namespace's whole list that [`MemoryStore::relationships`] reads. More than
    /// [`MAX_AMONG_ENTITIES`] names is refused (`Invalid`).
    fn relationships_among(
        &self,
        ns: &str,
        entities: &[String],
        limit: usize,
    ) -> Result<Vec<Relationship>, MemoryError>;
    /// Records how an LLM extraction of a live memory ended, without a new version (the
    /// content did not change); a failure keeps its reason until an enrichment succeeds.
    fn set_extraction(
        &mut self,
        ns: &str,
        name: &str,
        extraction: &crate::extract::Extraction,
    ) -> Result<Memory, MemoryError>;
    /// Attaches extracted entities and relationships and records the extraction as
    /// done, in one transaction that writes an `enrich` version.
    fn enrich(
        &mut self,
        ns: &str,
        name: &str,
        extracted: &crate::extract::Extracted,
        extraction: &crate::extract::Extraction,
    ) -> Result<Memory, MemoryError>;
    /// Every namespace holding a memory, forgotten or not, sorted (what an export walks).
    fn namespaces(&self) -> Result<Vec<String>, MemoryError>;
    /// Counts (of one namespace, or all).
    fn stats(&self, ns: Option<&str>) -> Result<StoreStats, MemoryError>;

    /// Full-text candidates for `terms` (OR'ed), best first, with their score: lower is
    /// better (FTS5's BM25, or the PostgreSQL store's negated rank), as fusion takes it.
    fn fts(
        &self,
        terms: &[String],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<(i64, f64)>, MemoryError>;
    /// Entities whose name or alias is one of `words` (lower-cased), or the whole `phrase`.
    fn entities_named(&self, ns: &str, words: &[String])
    -> Result<Vec<(i64, String)>, MemoryError>;
    /// The relationships touching `entities`, both directions.
    fn entity_edges(&self, entities: &[i64]) -> Result<Vec<EntityEdge>, MemoryError>;
    /// `(memory, entity)` pairs for memories (within `filter`) naming any of `entities`.
    fn memories_of_entities(
        &self,
        filter: &Filter,
        entities: &[i64],
    ) -> Result<Vec<(i64, i64)>, MemoryError>;
    /// `(memory, entity id, entity name)` for the given memories.
    fn entities_of_memories(&self, ids: &[i64]) -> Result<Vec<(i64, i64, String)>, MemoryError>;
    /// `(memory, key)` for memories (within `filter`) linked to any of `keys`, or to
    /// anything in the files `paths`.
    fn memories_linked_to(
        &self,
        filter: &Filter,
        keys: &[CodeKey],
        paths: &[String],
    ) -> Result<Vec<(i64, CodeKey)>, MemoryError>;
    /// The code links of the given memories.
    fn links_of(&self, ids: &[i64]) -> Result<Vec<(i64, CodeLink)>, MemoryError>;
    /// Summaries of the given memories (any order).
    fn summaries(&self, ids: &[i64]) -> Result<Vec<MemorySummary>, MemoryError>;
    /// The bodies of the given memories (any order), read in one go: what recall cuts
    /// its hits' snippets from, without reading each whole memory.
    fn bodies(&self, ids: &[i64]) -> Result<Vec<(i64, String)>, MemoryError>;
    /// Calls `visit(memory, chunk, vector)` for every vector of `model` within `filter`.
    fn scan_vectors(
        &self,
        model: &str,
        filter: &Filter,
        visit: &mut dyn FnMut(i64, u32, &[f32]),
    ) -> Result<(), MemoryError>;
    /// The vector k-NN from a store's own cache of its vectors, when it keeps one
    /// ([`crate::vector::nearest`] scans [`MemoryStore::scan_vectors`] otherwise): the
    /// `k` memories within `filter` whose best chunk is nearest `query`, best first.
    fn nearest_cached(
        &self,
        _model: &str,
        _filter: &Filter,
        _query: &[f32],
        _k: usize,
    ) -> Option<Vec<(i64, f32)>> {
        None
    }
    /// How many chunks (of live memories; of one memory, of a namespace, or all) have no
    /// vector of `model` yet: what `vectors: pending` counts.
    fn missing_vectors(
        &self,
        model: &str,
        memory_id: Option<i64>,
        ns: Option<&str>,
    ) -> Result<u64, MemoryError>;
    /// What this store is and where it keeps memories (no secret in it).
    fn describe(&self) -> StoreDescription;
    /// Chunks of live memories without a vector of `model`, at most `limit`.
    fn pending_chunks(&self, model: &str, limit: usize) -> Result<Vec<PendingChunk>, MemoryError>;
    /// Stores vectors of `model` (each `dim` long) for chunks.
    fn store_vectors(
        &mut self,
        model: &str,
        dim: usize,
        rows: &[(i64, u32, Vec<f32>)],
    ) -> Result<(), MemoryError>;
}
