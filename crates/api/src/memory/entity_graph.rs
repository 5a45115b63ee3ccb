//! The relationships among one memory's entities: what a front end needs, besides the
//! entity names `read` answers, to draw the memory's corner of the entity graph (the
//! web view's memory page). A relationship counts when both its ends are entities of
//! the memory, whichever memory stated it; its direction is kept (source → target).

use loci_memory::Relationship;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Ctx, StoreTarget, ns};
use crate::error::ApiError;

/// Most entities whose relationships one answer looks up (the first ones of the
/// memory; a page draws far fewer).
pub const MAX_GRAPH_ENTITIES: usize = 500;
/// Most relationships one answer holds (the first, in its order).
pub const MAX_GRAPH_RELATIONSHIPS: usize = 1_000;

/// The relationships among the entities of a memory the caller has read: its
/// namespace, name and entity names, as `read` answered them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EntityRelationshipsRequest {
    /// The namespace (default `default`).
    #[serde(default)]
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 100))]
    pub namespace: Option<String>,
    /// The memory's name (named in the answer; not read again).
    #[schemars(regex(pattern = loci_memory::NAME_PATTERN), length(max = 200))]
    pub name: String,
    /// Its entities' names.
    pub entities: Vec<String>,
}

/// The relationships among a memory's entities.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntityRelationships {
    /// The memory asked about.
    pub name: String,
    /// Its entities' names, as `read` answers them.
    pub entities: Vec<String>,
    /// The relationships whose source and target are both among `entities`, ordered by
    /// source, target and relation.
    pub relationships: Vec<Relationship>,
    /// How many of `entities` (past the first [`MAX_GRAPH_ENTITIES`]) had their
    /// relationships left unread.
    pub entities_unsearched: usize,
    /// More relationships than [`MAX_GRAPH_RELATIONSHIPS`] among them: `relationships`
    /// holds the first.
    pub more_relationships: bool,
}

/// The relationships among the entities of one memory (within the caller's namespaces),
/// from the names the caller holds: the store's query for the relationships among
/// given entities, so the memory is not read again and the cost is those entities'
/// relationships, not the namespace's.
pub fn entity_relationships(
    target: &StoreTarget,
    req: &EntityRelationshipsRequest,
) -> Result<EntityRelationships, ApiError> {
    let n = ns(target, &req.namespace)?;
    let searched = &req.entities[..req.entities.len().min(MAX_GRAPH_ENTITIES)];
    let mut relationships = if searched.is_empty() {
        Vec::new()
    } else {
        let c = Ctx::open(target)?;
        c.store
            .relationships_among(&n, searched, MAX_GRAPH_RELATIONSHIPS + 1)?
    };
    let more_relationships = relationships.len() > MAX_GRAPH_RELATIONSHIPS;
    relationships.truncate(MAX_GRAPH_RELATIONSHIPS);
    Ok(EntityRelationships {
        name: req.name.clone(),
        entities: req.entities.clone(),
        relationships,
        entities_unsearched: req.entities.len() - searched.len(),
        more_relationships,
    })
}

#[cfg(test)]
mod tests {
    use loci_memory::{EntityInput, NewMemory, RelationshipInput};

    use super::*;
    use crate::memory::{MemoryAccess, NameRequest, NamespaceScope, RememberRequest, remember};

    fn entity(name: &str) -> EntityInput {
        serde_json::from_value(serde_json::json!({"name": name, "type": "service"})).unwrap()
    }

    fn relation(source: &str, target: &str, relation: &str) -> RelationshipInput {
        serde_json::from_value(
            serde_json::json!({"source": source, "target": target, "relation": relation}),
        )
        .unwrap()
    }

    fn store(target: &StoreTarget, name: &str, entities: &[&str], rels: Vec<RelationshipInput>) {
        let req = RememberRequest {
            memory: NewMemory {
                name: name.into(),
                body: format!("about {name}"),
                entities: entities.iter().map(|e| entity(e)).collect(),
                relationships: rels,
                ..NewMemory::default()
            },
            links: Vec::new(),
            extract: None,
            llm: None,
        };
        remember(target, &req).unwrap();
    }

    #[test]
    fn only_the_relationships_between_the_memorys_own_entities_with_their_direction() {
        let (_dir, root) = crate::test_support::indexed_workspace();
        let target = StoreTarget {
            workspace: root,
            user: false,
            access: Default::default(),
        };
        store(
            &target,
            "billing",
            &["Ledger", "Billing", "Queue"],
            vec![
                relation("Ledger", "Billing", "writes_to"),
                relation("Billing", "Queue", "reads"),
            ],
        );
        // Another memory ties one of them to an entity `billing` does not have.
        store(
            &target,
            "mail",
            &["Mailer"],
            vec![relation("Mailer", "Ledger", "notifies")],
        );
        // The page hands over what `read` answered: no second read of the memory.
        let read = crate::memory::read(
            &target,
            &NameRequest {
                namespace: None,
                name: "billing".into(),
            },
        )
        .unwrap()
        .memory;
        let req = EntityRelationshipsRequest {
            namespace: Some(read.namespace.clone()),
            name: read.name.clone(),
            entities: read.entities.clone(),
        };
        let answer = entity_relationships(&target, &req).unwrap();
        assert_eq!(answer.entities.len(), 3, "{answer:?}");
        let got: Vec<(&str, &str, &str)> = answer
            .relationships
            .iter()
            .map(|r| (r.source.as_str(), r.target.as_str(), r.relation.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("Billing", "Queue", "reads"),
                ("Ledger", "Billing", "writes_to")
            ]
        );
        assert_eq!(answer.entities_unsearched, 0);
        assert!(!answer.more_relationships);

        // Past the cap, the first entities are searched and the rest counted.
        let mut crowd = vec!["Queue".to_string(), "Billing".to_string()];
        crowd.extend((0..MAX_GRAPH_ENTITIES).map(|i| format!("nobody-{i}")));
        let capped = entity_relationships(
            &target,
            &EntityRelationshipsRequest {
                entities: crowd,
                ..req.clone()
            },
        )
        .unwrap();
        assert_eq!(capped.relationships.len(), 1, "{capped:?}");
        assert_eq!(capped.entities_unsearched, 2);

        // A namespace outside the caller's scope is refused before the store is read.
        let scoped = StoreTarget {
            access: MemoryAccess::Scoped(NamespaceScope::new(vec!["team".into()]).unwrap()),
            ..target.clone()
        };
        let err = entity_relationships(&scoped, &req).unwrap_err();
        assert_eq!(
            err.kind,
            crate::error::ErrorKind::ForbiddenNamespace,
            "{err:?}"
        );
    }
}
