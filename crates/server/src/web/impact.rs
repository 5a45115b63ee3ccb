//! The impact page: what depends on a file or a definition, to a chosen depth, as a
//! graph (capped, with "show more") and as a list, with counts by depth. It calls the
//! `memory::impact` the JSON impact route calls (`memory::impact_with`, skipping the count
//! of unlinked references, which the page does not show): the traversal and the memories
//! linked to the target or to anything it reaches, stale marked.

use axum::Extension;
use axum::extract::{Path, Query, State};
use loci_api::graph::{Reach, TraversalRequest, Unlinked};
use loci_api::memory::ImpactMemory;
use loci_api::page::PageRequest;
use maud::{Markup, html};
use serde::Deserialize;

use crate::state::Shared;
use crate::web::graph_svg::Node;
use crate::web::layout::{PageError, PageResult, page};
use crate::web::memory::memory_href;
use crate::web::pages::{url, workspace_id};
use crate::web::session::Session;
use crate::web::traversal_view::{Drawn, FIRST_NODES, MAX_DEPTH, MAX_NODES, depth_links, drawn};

/// Hops shown when the query names none (as `loci impact`'s default).
const DEFAULT_DEPTH: u32 = 3;

/// The page's query.
#[derive(Debug, Deserialize)]
pub struct ImpactQuery {
    /// A file (workspace-relative) or a definition's selector.
    #[serde(default)]
    target: String,
    /// Hops, 1..=5.
    #[serde(default)]
    depth: Option<u32>,
    /// Nodes to draw.
    #[serde(default)]
    nodes: Option<usize>,
}

/// The impact page of `target` in workspace `id`.
pub(super) fn impact_href(id: i64, target: &str) -> String {
    url(&format!("/web/w/{id}/impact"), &[("target", target)])
}

/// `GET /web/w/{id}/impact?target=FILE_OR_SELECTOR&depth=3`: without a target, the form.
pub async fn impact(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Path(ws): Path<String>,
    Query(q): Query<ImpactQuery>,
) -> PageResult {
    let id = workspace_id(&ws, &session)?;
    let depth = q.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH);
    let cap = q.nodes.unwrap_or(FIRST_NODES).clamp(1, MAX_NODES);
    let target = q.target.trim().to_string();
    if target.is_empty() {
        let body = html! { (form(id, "", depth)) };
        return Ok(page("Impact", Some(&session), body));
    }
    let request = TraversalRequest::plain(target.clone(), depth, PageRequest::first(cap));
    let answer = state
        .read(id, move |w, o| {
            // The page shows no unlinked references: their scan is skipped. It draws
            // `cap` nodes: the walk stops going deeper once it has them.
            loci_api::memory::impact_with(w, &request, o, Unlinked::Skip, Reach::Page)
        })
        .await
        .map_err(PageError::within(&session))?;
    let memories = linked_memories(id, &answer.memories, answer.memories_unavailable.as_deref());
    let answer = answer.traversal;
    let link = |depth: u32, nodes: usize| {
        url(
            &format!("/web/w/{id}/impact"),
            &[
                ("target", &target),
                ("depth", &depth.to_string()),
                ("nodes", &nodes.to_string()),
            ],
        )
    };
    let root = Node {
        label: target.clone(),
        href: impact_href(id, &target),
        target: true,
    };
    let title = format!("Impact of {target}");
    let body = html! {
        (form(id, &target, depth))
        section aria-labelledby="graph-h" {
            h2 id="graph-h" { "What depends on it, to depth " (depth) }
            nav aria-label="Depth" { "Depth: " (depth_links(depth, &|d| link(d, cap))) }
            @if answer.reached.is_empty() {
                p { "Nothing in the index depends on it." }
            } @else {
                (drawn(&Drawn {
                    id,
                    title: &title,
                    root,
                    page: &answer,
                    callees: false,
                    cap,
                    noun: "dependents",
                    more: &|nodes| link(depth, nodes),
                }))
            }
        }
        (memories)
    };
    Ok(page(&title, Some(&session), body))
}

fn form(id: i64, target: &str, depth: u32) -> Markup {
    html! {
        form class="search" method="get" action={ "/web/w/" (id) "/impact" } {
            label { "File or definition" input type="search" name="target" value=(target) placeholder="src/lib.rs or Type::method"; }
            label { "Depth"
                select name="depth" {
                    @for d in 1..=MAX_DEPTH { option value=(d) selected[d == depth] { (d) } }
                }
            }
            button type="submit" { "Show impact" }
        }
    }
}

/// The memories linked to what a page shows, stale ones marked, or why the store could
/// not be read.
pub(super) fn linked_memories(
    id: i64,
    memories: &[ImpactMemory],
    unavailable: Option<&str>,
) -> Markup {
    html! {
        section aria-labelledby="memories-h" {
            h2 id="memories-h" { "Memories linked (" (memories.len()) ")" }
            @if let Some(why) = unavailable { p class="muted" { (why) } }
            @else if memories.is_empty() { p { "None." } }
            @else {
                ul { @for m in memories {
                    li {
                        strong { a href=(memory_href(id, &m.memory.namespace, &m.memory.name)) { (m.memory.name) } }
                        @if !m.memory.description.is_empty() { " — " (m.memory.description) }
                        " · linked to " code { (m.linked.qualified_name) }
                        @if m.depth > 0 { " (depth " (m.depth) ")" }
                        @if m.stale {
                            " · " span class="state" { "stale" }
                            @for r in &m.stale_reasons { br; span class="muted" { (r) } }
                        }
                    }
                } }
            }
        }
    }
}
