//! [`PgStore`] behind the storage seam.

use super::handle::PgStore;
use crate::MemoryError;
use crate::model::{
    CodeKey, CodeLink, Edit, EntityInfo, EntityInput, Memory, MemorySummary, NewCodeLink,
    NewMemory, Relationship, RelationshipInput, Version,
};
use crate::store::{
    EntityEdge, Filter, MemoryStore, PendingChunk, StoreDescription, StoreKind, StoreStats,
};

impl MemoryStore for PgStore {
    fn create(
        &mut self,
        m: &NewMemory,
        ns: &str,
        links: &[NewCodeLink],
    ) -> Result<Memory, MemoryError> {
        self.create_impl(m, ns, links)
    }
    fn read(&self, ns: &str, name: &str) -> Result<Memory, MemoryError> {
        self.read_impl(ns, name)
    }
    fn list(
        &self,
        filter: &Filter,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<MemorySummary>, u64), MemoryError> {
        self.list_impl(filter, limit, offset)
    }
    fn edit(
        &mut self,
        ns: &str,
        name: &str,
        edit: &Edit,
        auto_links: Option<&[NewCodeLink]>,
    ) -> Result<Memory, MemoryError> {
        self.edit_impl(ns, name, edit, auto_links)
    }
    fn rename(&mut self, ns: &str, name: &str, new_name: &str) -> Result<Memory, MemoryError> {
        self.rename_impl(ns, name, new_name)
    }
    fn forget(&mut self, ns: &str, name: &str) -> Result<Memory, MemoryError> {
        self.forget_impl(ns, name)
    }
    fn restore(
        &mut self,
        ns: &str,
        name: &str,
        version: Option<u32>,
    ) -> Result<Memory, MemoryError> {
        self.restore_impl(ns, name, version)
    }
    fn merge(&mut self, ns: &str, from: &str, into: &str) -> Result<(Memory, Memory), MemoryError> {
        self.merge_impl(ns, from, into)
    }
    fn purge(&mut self, ns: &str, name: &str) -> Result<(), MemoryError> {
        self.purge_impl(ns, name)
    }
    fn history(&self, ns: &str, name: &str) -> Result<Vec<Version>, MemoryError> {
        self.history_impl(ns, name)
    }
    fn replace_history(
        &mut self,
        ns: &str,
        name: &str,
        versions: &[Version],
    ) -> Result<(), MemoryError> {
        self.replace_history_impl(ns, name, versions)
    }
    fn link(
        &mut self,
        ns: &str,
        name: &str,
        entities: &[EntityInput],
        relationships: &[RelationshipInput],
        code: &[NewCodeLink],
    ) -> Result<Memory, MemoryError> {
        self.link_impl(ns, name, entities, relationships, code)
    }
    fn unlink(
        &mut self,
        ns: &str,
        name: &str,
        entity: Option<&str>,
        code: Option<&CodeKey>,
    ) -> Result<Memory, MemoryError> {
        self.unlink_impl(ns, name, entity, code)
    }
    fn move_link(&mut self, link_id: i64, to: &CodeKey, line: u32) -> Result<(), MemoryError> {
        self.move_link_impl(link_id, to, line)
    }
    fn entities(&self, ns: &str) -> Result<Vec<EntityInfo>, MemoryError> {
        self.entities_impl(ns)
    }
    fn merge_entities(
        &mut self,
        ns: &str,
        from: &str,
        into: &str,
    ) -> Result<EntityInfo, MemoryError> {
        self.merge_entities_impl(ns, from, into)
    }
    fn rename_entity(
        &mut self,
        ns: &str,
        name: &str,
        new_name: &str,
    ) -> Result<EntityInfo, MemoryError> {
        self.rename_entity_impl(ns, name, new_name)
    }
    fn relationships(&self, ns: &str) -> Result<Vec<Relationship>, MemoryError> {
        self.relationships_impl(ns)
    }
    fn relationships_among(
        &self,
        ns: &str,
        entities: &[String],
        limit: usize,
    ) -> Result<Vec<Relationship>, MemoryError> {
        self.relationships_among_impl(ns, entities, limit)
    }
    fn set_extraction(
        &mut self,
        ns: &str,
        name: &str,
        extraction: &crate::extract::Extraction,
    ) -> Result<Memory, MemoryError> {
        self.set_extraction_impl(ns, name, extraction)
    }
    fn enrich(
        &mut self,
        ns: &str,
        name: &str,
        extracted: &crate::extract::Extracted,
        extraction: &crate::extract::Extraction,
    ) -> Result<Memory, MemoryError> {
        self.enrich_impl(ns, name, extracted, extraction)
    }
    fn namespaces(&self) -> Result<Vec<String>, MemoryError> {
        self.namespaces_impl()
    }
    fn stats(&self, ns: Option<&str>) -> Result<StoreStats, MemoryError> {
        self.stats_impl(ns)
    }
    fn fts(
        &self,
        terms: &[String],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<(i64, f64)>, MemoryError> {
        self.fts_impl(terms, filter, k)
    }
    fn entities_named(
        &self,
        ns: &str,
        words: &[String],
    ) -> Result<Vec<(i64, String)>, MemoryError> {
        self.entities_named_impl(ns, words)
    }
    fn entity_edges(&self, entities: &[i64]) -> Result<Vec<EntityEdge>, MemoryError> {
        self.entity_edges_impl(entities)
    }
    fn memories_of_entities(
        &self,
        filter: &Filter,
        entities: &[i64],
    ) -> Result<Vec<(i64, i64)>, MemoryError> {
        self.memories_of_entities_impl(filter, entities)
    }
    fn entities_of_memories(&self, ids: &[i64]) -> Result<Vec<(i64, i64, String)>, MemoryError> {
        self.entities_of_memories_impl(ids)
    }
    fn memories_linked_to(
        &self,
        filter: &Filter,
        keys: &[CodeKey],
        paths: &[String],
    ) -> Result<Vec<(i64, CodeKey)>, MemoryError> {
        self.memories_linked_to_impl(filter, keys, paths)
    }
    fn links_of(&self, ids: &[i64]) -> Result<Vec<(i64, CodeLink)>, MemoryError> {
        self.links_of_impl(ids)
    }
    fn summaries(&self, ids: &[i64]) -> Result<Vec<MemorySummary>, MemoryError> {
        self.summaries_impl(ids)
    }
    fn bodies(&self, ids: &[i64]) -> Result<Vec<(i64, String)>, MemoryError> {
        self.bodies_impl(ids)
    }
    fn scan_vectors(
        &self,
        model: &str,
        filter: &Filter,
        visit: &mut dyn FnMut(i64, u32, &[f32]),
    ) -> Result<(), MemoryError> {
        self.scan_vectors_impl(model, filter, visit)
    }
    fn nearest_cached(
        &self,
        model: &str,
        filter: &Filter,
        query: &[f32],
        k: usize,
    ) -> Option<Vec<(i64, f32)>> {
        self.nearest_in_database(model, filter, query, k)
    }
    fn missing_vectors(
        &self,
        model: &str,
        memory_id: Option<i64>,
        ns: Option<&str>,
    ) -> Result<u64, MemoryError> {
        PgStore::missing_vectors(self, model, memory_id, ns)
    }
    fn describe(&self) -> StoreDescription {
        StoreDescription {
            kind: StoreKind::Postgres,
            location: self.target().to_string(),
            scope: Some(self.scope().to_string()),
            vector_search: self.vector_search(),
        }
    }
    fn pending_chunks(&self, model: &str, limit: usize) -> Result<Vec<PendingChunk>, MemoryError> {
        self.pending_chunks_impl(model, limit)
    }
    fn store_vectors(
        &mut self,
        model: &str,
        dim: usize,
        rows: &[(i64, u32, Vec<f32>)],
    ) -> Result<(), MemoryError> {
        self.store_vectors_impl(model, dim, rows)
    }
}
