//! The memory graph: neighbours of a memory (through shared entities and their
//! relationships, up to a depth) and the whole graph exported as JSON, DOT or Mermaid.

use rustc_hash::{FxHashMap, FxHashSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::model::{EntityInfo, MemorySummary, Relationship};
use crate::store::{Filter, MemoryStore};

/// Deepest `related` walk.
pub const MAX_RELATED_DEPTH: u32 = 5;
/// Most memories an export holds.
pub const MAX_EXPORT_MEMORIES: usize = 10_000;

/// A memory reached from another through the entity graph.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Related {
    /// The memory.
    #[serde(flatten)]
    pub memory: MemorySummary,
    /// Entity hops from the start (1: shares an entity).
    pub depth: u32,
    /// The entities walked, from the start's.
    pub path: Vec<String>,
}

/// Memories within `depth` hops of memory `id`, nearest first: the memories sharing one
/// of its entities are one hop away; from there, their other entities and the entities
/// related to those reached lead one hop further.
pub fn related(
    store: &dyn MemoryStore,
    filter: &Filter,
    id: i64,
    depth: u32,
) -> Result<Vec<Related>, MemoryError> {
    if !(1..=MAX_RELATED_DEPTH).contains(&depth) {
        return Err(MemoryError::Invalid(format!(
            "depth {depth} is outside 1..={MAX_RELATED_DEPTH}"
        )));
    }
    let start: Vec<(i64, String)> = store
        .entities_of_memories(&[id])?
        .into_iter()
        .map(|(_, e, n)| (e, n))
        .collect();
    let mut seen_entities: FxHashMap<i64, Vec<String>> =
        start.iter().map(|(e, n)| (*e, vec![n.clone()])).collect();
    let mut frontier: Vec<i64> = start.iter().map(|(e, _)| *e).collect();
    let mut found: FxHashMap<i64, (u32, Vec<String>)> = FxHashMap::default();
    let mut seen_memories: FxHashSet<i64> = [id].into_iter().collect();
    for d in 1..=depth {
        if frontier.is_empty() {
            break;
        }
        let mut reached = Vec::new();
        for (m, e) in store.memories_of_entities(filter, &frontier)? {
            if seen_memories.insert(m) {
                found.insert(m, (d, seen_entities[&e].clone()));
                reached.push(m);
            }
        }
        let mut next = Vec::new();
        // A memory reached leads on through its other entities.
        for (m, e, name) in store.entities_of_memories(&reached)? {
            if let std::collections::hash_map::Entry::Vacant(slot) = seen_entities.entry(e) {
                let mut p = found[&m].1.clone();
                p.push(format!("memory#{m}"));
                p.push(name);
                slot.insert(p);
                next.push(e);
            }
        }
        for edge in store.entity_edges(&frontier)? {
            if !seen_entities.contains_key(&edge.to) {
                let mut p = seen_entities[&edge.from].clone();
                p.push(format!("-{}->", edge.relation));
                p.push(edge.to_name.clone());
                seen_entities.insert(edge.to, p);
                next.push(edge.to);
            }
        }
        frontier = next;
    }
    let ids: Vec<i64> = found.keys().copied().collect();
    let mut out: Vec<Related> = store
        .summaries(&ids)?
        .into_iter()
        .filter_map(|s| {
            let (depth, path) = found.remove(&s.id)?;
            Some(Related {
                memory: s,
                depth,
                path,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        a.depth
            .cmp(&b.depth)
            .then(a.memory.name.cmp(&b.memory.name))
    });
    Ok(out)
}

/// The graph of a namespace: memories, entities, relationships, mentions and code links.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GraphDump {
    /// Live memories.
    pub memories: Vec<MemorySummary>,
    /// Entities with degrees.
    pub entities: Vec<EntityInfo>,
    /// Entity relationships.
    pub relationships: Vec<Relationship>,
    /// `(memory name, entity name)`.
    pub mentions: Vec<(String, String)>,
    /// `(memory name, code key text)`.
    pub code_links: Vec<(String, String)>,
}

/// The graph of the namespace in `filter`.
pub fn dump(store: &dyn MemoryStore, filter: &Filter) -> Result<GraphDump, MemoryError> {
    let (memories, _) = store.list(filter, MAX_EXPORT_MEMORIES, 0)?;
    let ids: Vec<i64> = memories.iter().map(|m| m.id).collect();
    let names: FxHashMap<i64, String> = memories.iter().map(|m| (m.id, m.name.clone())).collect();
    let mut mentions = Vec::new();
    let mut code_links = Vec::new();
    for chunk in ids.chunks(500) {
        for (m, _, e) in store.entities_of_memories(chunk)? {
            mentions.push((names[&m].clone(), e));
        }
        for (m, l) in store.links_of(chunk)? {
            code_links.push((names[&m].clone(), l.key.to_string()));
        }
    }
    mentions.sort();
    code_links.sort();
    Ok(GraphDump {
        memories,
        entities: store.entities(&filter.namespace)?,
        relationships: store.relationships(&filter.namespace)?,
        mentions,
        code_links,
    })
}

/// A graph export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// The [`GraphDump`] as JSON.
    Json,
    /// Graphviz DOT.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

impl ExportFormat {
    /// The format named `text`.
    pub fn parse(text: &str) -> Result<ExportFormat, MemoryError> {
        match text {
            "json" => Ok(ExportFormat::Json),
            "dot" => Ok(ExportFormat::Dot),
            "mermaid" => Ok(ExportFormat::Mermaid),
            other => Err(MemoryError::Invalid(format!(
                "unknown graph format `{other}`; expected json|dot|mermaid"
            ))),
        }
    }
}

/// The dump rendered in `format`.
pub fn render(dump: &GraphDump, format: ExportFormat) -> String {
    match format {
        ExportFormat::Json => serde_json::to_string_pretty(dump).unwrap_or_default(),
        ExportFormat::Dot => {
            let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
            let mut out = String::from("digraph memory {\n  rankdir=LR;\n");
            for m in &dump.memories {
                out.push_str(&format!(
                    "  {} [shape=note];\n",
                    q(&format!("memory:{}", m.name))
                ));
            }
            for e in &dump.entities {
                out.push_str(&format!(
                    "  {} [shape=ellipse];\n",
                    q(&format!("entity:{}", e.name))
                ));
            }
            for (m, e) in &dump.mentions {
                out.push_str(&format!(
                    "  {} -> {} [label=\"mentions\"];\n",
                    q(&format!("memory:{m}")),
                    q(&format!("entity:{e}"))
                ));
            }
            for r in &dump.relationships {
                out.push_str(&format!(
                    "  {} -> {} [label={}];\n",
                    q(&format!("entity:{}", r.source)),
                    q(&format!("entity:{}", r.target)),
                    q(&format!("{} {:.2}", r.relation, r.weight))
                ));
            }
            for (m, c) in &dump.code_links {
                out.push_str(&format!(
                    "  {} -> {} [label=\"links\", style=dashed];\n",
                    q(&format!("memory:{m}")),
                    q(&format!("code:{c}"))
                ));
            }
            out.push_str("}\n");
            out
        }
        ExportFormat::Mermaid => {
            let mut ids: FxHashMap<String, String> = FxHashMap::default();
            let mut out = String::from("flowchart LR\n");
            let mut node = |out: &mut String, label: String, shape: (&str, &str)| -> String {
                let n = ids.len();
                ids.entry(label.clone())
                    .or_insert_with(|| {
                        let id = format!("n{n}");
                        let text = label.replace('"', "#quot;");
                        out.push_str(&format!("  {id}{}\"{text}\"{}\n", shape.0, shape.1));
                        id
                    })
                    .clone()
            };
            let mut edges = Vec::new();
            for (m, e) in &dump.mentions {
                let a = node(&mut out, format!("memory:{m}"), ("[", "]"));
                let b = node(&mut out, format!("entity:{e}"), ("((", "))"));
                edges.push(format!("  {a} -->|mentions| {b}\n"));
            }
            for r in &dump.relationships {
                let a = node(&mut out, format!("entity:{}", r.source), ("((", "))"));
                let b = node(&mut out, format!("entity:{}", r.target), ("((", "))"));
                edges.push(format!(
                    "  {a} -->|{} {:.2}| {b}\n",
                    r.relation.replace('|', "/"),
                    r.weight
                ));
            }
            for (m, c) in &dump.code_links {
                let a = node(&mut out, format!("memory:{m}"), ("[", "]"));
                let b = node(&mut out, format!("code:{c}"), ("[/", "/]"));
                edges.push(format!("  {a} -.->|links| {b}\n"));
            }
            for m in &dump.memories {
                node(&mut out, format!("memory:{}", m.name), ("[", "]"));
            }
            out.extend(edges);
            out
        }
    }
}
