//! The relationships among one memory's entities: what a front end needs, besides the
//! entity names `read` answers, to draw the memory's corner of the entity graph (the
//! web view's memory page). A relationship counts when both its ends are entities of
//! the memory, whichever memory stated it; its direction is kept (source → target).

use loci_memory::Relationship;
use rustc_hash::FxHashSet;
use schemars::JsonSchema;
use serde::Serialize;

use super::{Ctx, NameRequest, StoreTarget, ns};
use crate::error::ApiError;

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
}

/// The relationships among the entities of one memory (within the caller's namespaces).
/// It reads the namespace's relationships and keeps those within the memory: one query
/// each store already answers, no new one to keep in step on SQLite and PostgreSQL.
pub fn entity_relationships(
    target: &StoreTarget,
    req: &NameRequest,
) -> Result<EntityRelationships, ApiError> {
    let c = Ctx::open(target)?;
    let n = ns(target, &req.namespace)?;
    let m = c.store.read(&n, &req.name)?;
    let mine: FxHashSet<String> = m.entities.iter().map(|e| e.to_lowercase()).collect();
    let relationships = c
        .store
        .relationships(&n)?
        .into_iter()
        .filter(|r| {
            mine.contains(&r.source.to_lowercase()) && mine.contains(&r.target.to_lowercase())
        })
        .collect();
    Ok(EntityRelationships {
        name: m.name,
        entities: m.entities,
        relationships,
    })
}

#[cfg(test)]
mod tests {
    use loci_memory::{EntityInput, NewMemory, RelationshipInput};

    use super::*;
    use crate::memory::{RememberRequest, remember};

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
        let req = NameRequest {
            namespace: None,
            name: "billing".into(),
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
        let missing = NameRequest {
            namespace: None,
            name: "nope".into(),
        };
        assert!(entity_relationships(&target, &missing).is_err());
    }
}
