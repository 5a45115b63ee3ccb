//! A traversal (callers, callees, impact) as the pages draw it: the depth choice, the
//! count by depth, the graph laid out server-side (capped, with "show more"), and the
//! same nodes as a list, each node a link to its symbol page.

use std::collections::{BTreeMap, HashMap};

use loci_api::graph;
use maud::{Markup, html};

use crate::web::graph_svg::{self, Node};
use crate::web::pages::{symbol_href, url};

/// Deepest traversal a page offers.
pub(super) const MAX_DEPTH: u32 = 5;
/// Nodes drawn at first; "show more" doubles it up to [`MAX_NODES`].
pub(super) const FIRST_NODES: usize = 25;
/// Most nodes one graph draws (past this a graph is a hairball, not an answer).
pub(super) const MAX_NODES: usize = 200;

/// What [`drawn`] draws.
pub(super) struct Drawn<'a> {
    /// The workspace (node links).
    pub id: i64,
    /// The figure's title.
    pub title: &'a str,
    /// The traversal's subject, drawn first.
    pub root: Node,
    /// The traversal.
    pub page: &'a graph::TraversalPage,
    /// Edges point from the subject (callees) or to it (callers, impact).
    pub callees: bool,
    /// Nodes asked for.
    pub cap: usize,
    /// What the count calls the nodes (`reached`, `dependents`).
    pub noun: &'a str,
    /// The page again with more nodes.
    pub more: &'a dyn Fn(usize) -> String,
}

/// The depths 1..=[`MAX_DEPTH`], the current one in bold, the others links.
pub(super) fn depth_links(depth: u32, link: &dyn Fn(u32) -> String) -> Markup {
    html! {
        @for d in 1..=MAX_DEPTH {
            @if d == depth { strong aria-current="page" { (d) } } @else { a href=(link(d)) { (d) } }
            " "
        }
    }
}

/// The count by depth, the graph with its "show more", and the list.
pub(super) fn drawn(d: &Drawn<'_>) -> Markup {
    let page = d.page;
    let (nodes, edges) = graph_of(d.id, d.root.clone(), page, d.callees);
    let shown = page.reached.len();
    let more = page.page.truncated || (page.page.total as usize) > shown;
    html! {
        p class="muted" {
            // A walk that stopped once it had the nodes drawn counted only so far.
            @if !page.page.total_exact { "at least " }
            (page.page.total) " " (d.noun)
            @for (depth, n) in by_depth(page) { " · depth " (depth) ": " (n) }
            @if shown < page.page.total as usize { " · " (shown) " drawn" }
        }
        (graph_svg::render(d.title, &nodes, &edges))
        @if more && d.cap < MAX_NODES {
            p { a href=((d.more)((d.cap * 2).min(MAX_NODES))) { "Show more" } }
        }
        (reached_list(d.id, page))
    }
}

fn by_depth(page: &graph::TraversalPage) -> BTreeMap<u32, usize> {
    let mut counts = BTreeMap::new();
    for r in &page.reached {
        *counts.entry(r.depth).or_insert(0) += 1;
    }
    counts
}

/// The nodes (the target first) and edges of a traversal: each reached node is tied
/// to the one before it on its path (`via`).
fn graph_of(
    id: i64,
    root: Node,
    page: &graph::TraversalPage,
    callees: bool,
) -> (Vec<Node>, Vec<(usize, usize)>) {
    let mut nodes = vec![root];
    let mut by_label: HashMap<String, usize> = HashMap::new();
    if let Some(first) = page.reached.first().and_then(|r| r.via.first()) {
        by_label.insert(first.clone(), 0);
    }
    let mut edges = Vec::new();
    for r in &page.reached {
        let label = node_label(r);
        let index = *by_label.entry(label.clone()).or_insert_with(|| {
            nodes.push(Node {
                label: label.clone(),
                href: reached_href(id, r),
                target: false,
            });
            nodes.len() - 1
        });
        let parent = r
            .via
            .len()
            .checked_sub(2)
            .and_then(|i| r.via.get(i))
            .and_then(|p| by_label.get(p).copied())
            .unwrap_or(0);
        let edge = if callees {
            (parent, index)
        } else {
            (index, parent)
        };
        if !edges.contains(&edge) {
            edges.push(edge);
        }
    }
    (nodes, edges)
}

fn node_label(r: &graph::Reached) -> String {
    r.via.last().cloned().unwrap_or_else(|| {
        r.symbol
            .as_ref()
            .map(|s| s.qualified_name.clone())
            .unwrap_or_else(|| r.path.clone())
    })
}

fn reached_href(id: i64, r: &graph::Reached) -> String {
    match &r.symbol {
        Some(s) => symbol_href(id, &format!("{}:{}", s.path, s.line)),
        None => url(
            &format!("/web/w/{id}/search"),
            &[("mode", "text"), ("path", &r.path), ("q", &r.path)],
        ),
    }
}

fn reached_list(id: i64, page: &graph::TraversalPage) -> Markup {
    html! {
        details {
            summary { "As a list" }
            table {
                thead { tr { th scope="col" { "Depth" } th scope="col" { "Definition" } th scope="col" { "Where" } th scope="col" { "Edge" } } }
                tbody { @for r in &page.reached {
                    tr {
                        td { (r.depth) }
                        td { a href=(reached_href(id, r)) { (node_label(r)) } }
                        td { code { (r.site.path) ":" (r.site.line) } }
                        td { (r.edge.name()) " (" (r.confidence.name()) ")" }
                    }
                } }
            }
        }
    }
}
