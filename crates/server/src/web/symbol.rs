//! The symbol page: the definition with the source around it, its callers or callees
//! as a graph to a chosen depth (capped, with "show more"), the same nodes as a list
//! with counts by depth, and its references grouped by file. One read of the
//! workspace answers the page, through the `loci_api` functions the JSON routes call
//! (`graph::def`, `graph::traverse`, `graph::refs`, `source::excerpt`, and
//! `memory::linked_to` for the memories linked to the definition); the traversal and
//! the references skip counting the unlinked references, which the page does not show
//! (`Unlinked::Skip`).

use std::collections::BTreeMap;

use axum::Extension;
use axum::extract::{Path, Query, State};
use loci_api::graph::{
    self, Direction, Reach, RefsRequest, SymbolRequest, TraversalRequest, Unlinked,
};
use loci_api::page::PageRequest;
use loci_api::source::Excerpt;
use maud::{Markup, html};
use serde::Deserialize;

use crate::state::Shared;
use crate::web::graph_svg::Node;
use crate::web::impact::{impact_href, linked_memories};
use crate::web::layout::{PageError, PageResult, page};
use crate::web::pages::{symbol_href, url, workspace_id};
use crate::web::session::Session;
use crate::web::traversal_view::{Drawn, FIRST_NODES, MAX_DEPTH, MAX_NODES, depth_links, drawn};

/// Lines of context shown above and below a definition.
const CONTEXT: u32 = 3;
/// Uses listed at most.
const REFS: usize = 300;

/// The page's query.
#[derive(Debug, Deserialize)]
pub struct SymbolQuery {
    /// The selector (`path:LINE`, `name`, `Qualified::name`).
    s: String,
    /// `callers` (default) or `callees`.
    #[serde(default)]
    dir: String,
    /// Hops, 1..=5.
    #[serde(default)]
    depth: Option<u32>,
    /// Nodes to draw.
    #[serde(default)]
    nodes: Option<usize>,
}

struct Answer {
    def: graph::SymbolsPage,
    source: Option<Excerpt>,
    graph: graph::TraversalPage,
    refs: Option<graph::RefsPage>,
    memories: Option<(Vec<loci_api::memory::ImpactMemory>, Option<String>)>,
}

/// `GET /web/w/{id}/symbol?s=SELECTOR&dir=callers&depth=1`.
pub async fn symbol(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Path(ws): Path<String>,
    Query(q): Query<SymbolQuery>,
) -> PageResult {
    let id = workspace_id(&ws, &session)?;
    let callees = q.dir == "callees";
    let depth = q.depth.unwrap_or(1).clamp(1, MAX_DEPTH);
    let cap = q.nodes.unwrap_or(FIRST_NODES).clamp(1, MAX_NODES);
    let selector = q.s.clone();
    let answer = state
        .read(id, move |w, o| {
            let def = graph::def(
                w,
                &SymbolRequest {
                    symbol: selector.clone(),
                    page: PageRequest::first(1),
                },
                o,
            )?;
            let Some(sym) = def.symbols.first() else {
                return Err(loci_api::ApiError::new(
                    loci_api::ErrorKind::NotFound,
                    format!("no definition `{selector}`"),
                ));
            };
            let at = format!("{}:{}", sym.path, sym.line);
            let source = loci_api::source::excerpt(
                w,
                o,
                &sym.path,
                Some(sym.lang),
                sym.line.saturating_sub(CONTEXT),
                sym.end_line + CONTEXT,
            )
            .ok();
            let direction = if callees {
                Direction::Callees
            } else {
                Direction::Callers
            };
            // The page shows no unlinked references: their scan is skipped. It draws
            // `cap` nodes: the walk stops going deeper once it has them.
            let graph = graph::traverse_with(
                w,
                direction,
                &TraversalRequest::plain(at.clone(), depth, PageRequest::first(cap)),
                o,
                Unlinked::Skip,
                Reach::Page,
            )?;
            // The memories linked to this definition itself.
            let memories = loci_api::memory::linked_to(w, &def.symbols[..1]).ok();
            let refs = graph::refs_with(
                w,
                &RefsRequest {
                    symbol: at,
                    include_unresolved: false,
                    page: PageRequest::first(REFS),
                },
                o,
                Unlinked::Skip,
            )
            .ok();
            Ok(Answer {
                def,
                source,
                graph,
                refs,
                memories,
            })
        })
        .await
        .map_err(PageError::within(&session))?;
    let sym = &answer.def.symbols[0];
    let title = sym.qualified_name.clone();
    let here = format!("{}:{}", sym.path, sym.line);
    let dir = if callees { "callees" } else { "callers" };
    let link = |dir: &str, depth: u32, nodes: usize| {
        url(
            &format!("/web/w/{id}/symbol"),
            &[
                ("s", &here),
                ("dir", dir),
                ("depth", &depth.to_string()),
                ("nodes", &nodes.to_string()),
            ],
        )
    };
    let root = Node {
        label: title.clone(),
        href: symbol_href(id, &here),
        target: true,
    };
    let body = html! {
        p {
            span class="state" { (sym.kind.name()) } " in "
            code { (sym.path) ":" (sym.line) "–" (sym.end_line) } " · " (sym.lang.name())
        }
        p {
            "What depends on "
            a href=(impact_href(id, &here)) { "this definition" } " · "
            a href=(impact_href(id, &sym.path)) { "its file" }
        }
        @if let Some(doc) = &sym.doc { pre class="doc" { (doc) } }
        @if let Some(src) = &answer.source { (source(src, sym.line, sym.end_line)) }
        section aria-labelledby="graph-h" {
            h2 id="graph-h" { (if callees { "Callees" } else { "Callers" }) " to depth " (depth) }
            nav aria-label="Graph" {
                "Show: "
                @if callees { a href=(link("callers", depth, cap)) { "callers" } " · " strong { "callees" } }
                @else { strong { "callers" } " · " a href=(link("callees", depth, cap)) { "callees" } }
                " — depth: "
                (depth_links(depth, &|d| link(dir, d, cap)))
            }
            (drawn(&Drawn {
                id,
                title: &format!("{} of {}", if callees { "Callees" } else { "Callers" }, title),
                root,
                page: &answer.graph,
                callees,
                cap,
                noun: "reached",
                more: &|nodes| link(dir, depth, nodes),
            }))
        }
        @if let Some((memories, unavailable)) = &answer.memories { (linked_memories(id, memories, unavailable.as_deref())) }
        @if let Some(refs) = &answer.refs { (refs_by_file(id, refs)) }
    };
    Ok(page(&title, Some(&session), body))
}

fn source(src: &Excerpt, line: u32, end: u32) -> Markup {
    html! {
        pre class="source" aria-label={ "Source of " (src.path) } {
            @for (i, pieces) in src.lines.iter().enumerate() {
                @let n = src.first_line + i as u32;
                span class="ln" { (n) }
                span class=[(n >= line && n <= end).then_some("def")] {
                    @for p in pieces {
                        @if let Some(class) = p.class {
                            span class={ "hl-" (class.replace('.', "-")) } { (p.text) }
                        } @else { (p.text) }
                    }
                }
                "\n"
            }
        }
    }
}

fn refs_by_file(id: i64, refs: &graph::RefsPage) -> Markup {
    let mut files: BTreeMap<&str, Vec<&graph::RefHit>> = BTreeMap::new();
    for r in &refs.refs {
        files.entry(r.path.as_str()).or_default().push(r);
    }
    html! {
        section aria-labelledby="refs-h" {
            h2 id="refs-h" { "References" }
            p class="muted" { (refs.page.total) " uses in " (files.len()) " files" }
            @for (path, hits) in &files {
                h3 { code { (path) } " (" (hits.len()) ")" }
                ul {
                    @for h in hits {
                        li {
                            "line " (h.line) " · " (h.edge.name())
                            @if let Some(from) = &h.from {
                                " in " a href=(symbol_href(id, &format!("{}:{}", from.path, from.line))) { (from.qualified_name) }
                            }
                        }
                    }
                }
            }
        }
    }
}
