//! A memory's entities and the relationships among them, as its page shows them: a
//! small graph laid out by [`graph_svg`] (at most [`MAX_NODES`] entities, the most
//! related first, and a note of how many more are not drawn), over the same entities
//! and relationships as lists, so the page reads without the picture and without
//! colour. Each node links to its entity in the list.

use std::collections::HashMap;

use loci_api::memory::EntityRelationships;
use maud::{Markup, html};

use crate::web::graph_svg::{self, Node};

/// Most entities one memory's graph draws (past this it is a hairball, not an answer;
/// the lists below it keep every one).
pub(super) const MAX_NODES: usize = 40;

/// The memory's entities section: the graph, what it leaves out, and the lists.
/// Nothing for a memory without entities.
pub(super) fn section(g: &EntityRelationships) -> Markup {
    if g.entities.is_empty() {
        return html! {};
    }
    let drawn = drawn(g);
    let (nodes, edges) = graph_of(g, &drawn);
    let hidden = g.entities.len() - drawn.len();
    let hidden_edges = g.relationships.len() - edges.len();
    let title = format!("The entities of {} and their relationships", g.name);
    html! {
        section aria-labelledby="entities-h" {
            h2 id="entities-h" { "Entities (" (g.entities.len()) ")" }
            (graph_svg::render_labelled(&title, &nodes, &edges))
            @if hidden > 0 {
                p class="muted" {
                    (hidden) " more not drawn"
                    @if hidden_edges > 0 { ", with " (hidden_edges) " of the relationships" }
                    "; every one is listed below."
                }
            }
            ul { @for (i, e) in g.entities.iter().enumerate() { li id=(anchor(i)) { (e) } } }
            h3 { "Relationships (" (g.relationships.len()) ")" }
            (bounds(g))
            @if g.relationships.is_empty() { p { "None among these entities." } } @else {
                ul { @for r in &g.relationships {
                    li {
                        (r.source) " — " em { (r.relation) } " → " (r.target)
                        @if r.weight < 1.0 { " " span class="muted" { "(weight " (r.weight) ")" } }
                    }
                } }
            }
        }
    }
}

/// What the answer's bounds left out, if anything: the entities past the first ones
/// whose relationships were not looked up, and the relationships past the first.
fn bounds(g: &EntityRelationships) -> Markup {
    html! {
        @if g.entities_unsearched > 0 || g.more_relationships {
            p class="muted" {
                @if g.entities_unsearched > 0 {
                    "The relationships of the last " (g.entities_unsearched)
                    " entities are not looked up. "
                }
                @if g.more_relationships { "Only the first " (g.relationships.len()) " are shown." }
            }
        }
    }
}

/// The list item of entity `i`, which its node links to.
fn anchor(i: usize) -> String {
    format!("entity-{i}")
}

/// The entities drawn (their indexes, in the memory's order): the [`MAX_NODES`] in the
/// most relationships, ties kept in the memory's order.
fn drawn(g: &EntityRelationships) -> Vec<usize> {
    let mut degree: HashMap<String, usize> = HashMap::new();
    for r in &g.relationships {
        *degree.entry(r.source.to_lowercase()).or_default() += 1;
        *degree.entry(r.target.to_lowercase()).or_default() += 1;
    }
    let mut order: Vec<usize> = (0..g.entities.len()).collect();
    order.sort_by_key(|&i| {
        std::cmp::Reverse(
            degree
                .get(&g.entities[i].to_lowercase())
                .copied()
                .unwrap_or(0),
        )
    });
    order.truncate(MAX_NODES);
    order.sort_unstable();
    order
}

/// The nodes of the drawn entities and the labelled edges between them.
fn graph_of<'a>(
    g: &'a EntityRelationships,
    drawn: &[usize],
) -> (Vec<Node>, Vec<(usize, usize, &'a str)>) {
    let mut index: HashMap<String, usize> = HashMap::new();
    let nodes = drawn
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            index.insert(g.entities[i].to_lowercase(), n);
            Node {
                label: g.entities[i].clone(),
                href: format!("#{}", anchor(i)),
                target: false,
            }
        })
        .collect();
    let edges = g
        .relationships
        .iter()
        .filter_map(|r| {
            let from = index.get(&r.source.to_lowercase())?;
            let to = index.get(&r.target.to_lowercase())?;
            Some((*from, *to, r.relation.as_str()))
        })
        .collect();
    (nodes, edges)
}

#[cfg(test)]
mod tests {
    use loci_api::memory::Relationship;

    use super::*;

    fn graph(entities: usize, relationships: &[(usize, usize)]) -> EntityRelationships {
        let name = |i: usize| format!("E{i}");
        EntityRelationships {
            name: "m".into(),
            entities: (0..entities).map(name).collect(),
            relationships: relationships
                .iter()
                .map(|&(s, t)| Relationship {
                    source: name(s),
                    target: name(t),
                    relation: "uses".into(),
                    weight: 1.0,
                })
                .collect(),
            entities_unsearched: 0,
            more_relationships: false,
        }
    }

    #[test]
    fn past_the_cap_the_most_related_are_drawn_and_the_rest_counted() {
        let g = graph(MAX_NODES + 5, &[(MAX_NODES + 4, MAX_NODES + 3), (0, 1)]);
        let d = drawn(&g);
        assert_eq!(d.len(), MAX_NODES);
        assert!(
            d.contains(&(MAX_NODES + 4)) && d.contains(&(MAX_NODES + 3)),
            "{d:?}"
        );
        let (nodes, edges) = graph_of(&g, &d);
        assert_eq!(nodes.len(), MAX_NODES);
        assert_eq!(edges.len(), 2, "{edges:?}");
        let html = section(&g).into_string();
        assert!(html.contains("5 more not drawn"), "{html}");
        let last = anchor(MAX_NODES + 4);
        assert!(html.contains(&format!("href=\"#{last}\"")), "{html}");
        assert!(html.contains(&format!("id=\"{last}\"")), "{html}");
    }

    #[test]
    fn within_the_cap_every_entity_is_drawn_and_nothing_said_missing() {
        let html = section(&graph(3, &[(0, 1)])).into_string();
        assert!(!html.contains("not drawn"), "{html}");
        assert_eq!(html.matches("<a href=\"#entity-").count(), 3, "{html}");
        assert!(html.contains(">uses</text>"), "{html}");
        assert!(section(&graph(0, &[])).into_string().is_empty());
    }

    #[test]
    fn what_the_answers_bounds_left_out_is_said() {
        assert!(
            !section(&graph(3, &[(0, 1)]))
                .into_string()
                .contains("looked up")
        );
        let mut g = graph(3, &[(0, 1)]);
        g.entities_unsearched = 2;
        g.more_relationships = true;
        let html = section(&g).into_string();
        assert!(
            html.contains("The relationships of the last 2 entities are not looked up.")
                && html.contains("Only the first 1 are shown."),
            "{html}"
        );
    }
}
