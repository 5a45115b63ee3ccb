//! The memory pages: the workspace's memories (filtered by namespace and type, paged,
//! most recently changed first), and one memory with its body, its code links and how
//! each stands now (stale ones with why), its entities and the relationships among them
//! (drawn by [`entity_graph`], and listed), and every version with a line diff from the
//! one before. Within the namespaces of the key that signed the session
//! in, through the `loci_api::memory` functions the JSON routes call.

use axum::Extension;
use axum::extract::{Path, Query, State};
use loci_api::memory::{
    EntityRelationshipsRequest, FilterRequest, ListAnswer, ListRequest, MemoryType, MemoryView,
    NameRequest, Version,
};
use loci_api::page::PageRequest;

use maud::{Markup, html};
use serde::Deserialize;
use similar::{ChangeTag, TextDiff};

use crate::memory_routes::on_memory;
use crate::state::Shared;
use crate::web::entity_graph;
use crate::web::layout::{PageError, PageResult, page};
use crate::web::pages::{symbol_href, url, when, workspace_id};
use crate::web::session::Session;

/// Memories per page.
const PAGE: usize = 50;
/// Lines of a version diff shown at most (a rewrite of a long body is summarised).
const DIFF_LINES: usize = 400;

/// The list's query.
#[derive(Debug, Deserialize)]
pub struct ListQuery {
    /// Only this namespace (empty: every one the session may read).
    #[serde(default)]
    namespace: String,
    /// Only this type (empty: any).
    #[serde(default, rename = "type")]
    memory_type: String,
    /// The next page's cursor.
    #[serde(default)]
    cursor: String,
}

/// `GET /web/w/{id}/memories?namespace=&type=`.
pub async fn list(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Path(ws): Path<String>,
    Query(q): Query<ListQuery>,
) -> PageResult {
    let id = workspace_id(&ws, &session)?;
    let types = match q.memory_type.as_str() {
        "" => Vec::new(),
        t => vec![
            loci_api::memory::parse_type(t)
                .map_err(|e| PageError::new(e, Some(session.clone())))?,
        ],
    };
    let request = ListRequest {
        filter: FilterRequest {
            namespace: Some(q.namespace.clone()).filter(|n| !n.is_empty()),
            types,
            ..FilterRequest::default()
        },
        forgotten: false,
        page: PageRequest {
            limit: Some(PAGE),
            cursor: Some(q.cursor.clone()).filter(|c| !c.is_empty()),
        },
    };
    let answer = on_memory(&state, &ws, session.access.clone(), move |t| {
        loci_api::memory::list(t, &request)
    })
    .await
    .map_err(PageError::within(&session))?;
    let body = html! {
        (filter_form(id, &q))
        (table(id, &answer))
        @if let Some(next) = &answer.page.next_cursor {
            nav class="pager" aria-label="Pages" {
                a rel="next" href=(url(&format!("/web/w/{id}/memories"), &[
                    ("namespace", &q.namespace), ("type", &q.memory_type), ("cursor", next),
                ])) { "Next page" }
            }
        }
    };
    Ok(page("Memories", Some(&session), body))
}

fn filter_form(id: i64, q: &ListQuery) -> Markup {
    html! {
        form class="search" method="get" action={ "/web/w/" (id) "/memories" } {
            label { "Namespace" input type="text" name="namespace" value=(q.namespace) placeholder="any"; }
            label { "Type"
                select name="type" {
                    option value="" { "any" }
                    @for t in MemoryType::ALL { option value=(t.name()) selected[q.memory_type == t.name()] { (t.name()) } }
                }
            }
            button type="submit" { "Filter" }
        }
    }
}

fn table(id: i64, a: &ListAnswer) -> Markup {
    html! {
        @if a.memories.is_empty() { p { "No memory matches." } } @else {
            table {
                caption class="muted" { (a.page.total) " memories" }
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Namespace" }
                    th scope="col" { "Version" } th scope="col" { "Changed" }
                } }
                tbody { @for m in &a.memories {
                    tr {
                        td {
                            a href=(memory_href(id, &m.namespace, &m.name)) { (m.name) }
                            @if !m.description.is_empty() { br; span class="muted" { (m.description) } }
                        }
                        td { (m.memory_type.name()) }
                        td { (m.namespace) }
                        td { (m.version) }
                        td { (when(Some(m.updated_at / 1000))) }
                    }
                } }
            }
        }
    }
}

/// The page of the memory `name` in `namespace`.
pub(super) fn memory_href(id: i64, namespace: &str, name: &str) -> String {
    url(
        &format!("/web/w/{id}/memory"),
        &[("namespace", namespace), ("name", name)],
    )
}

/// One memory's query.
#[derive(Debug, Deserialize)]
pub struct ReadQuery {
    /// Its namespace (empty: the session's default).
    #[serde(default)]
    namespace: String,
    /// Its name.
    #[serde(default)]
    name: String,
}

/// `GET /web/w/{id}/memory?namespace=N&name=NAME`.
pub async fn read(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Path(ws): Path<String>,
    Query(q): Query<ReadQuery>,
) -> PageResult {
    let id = workspace_id(&ws, &session)?;
    let request = NameRequest {
        namespace: Some(q.namespace.clone()).filter(|n| !n.is_empty()),
        name: q.name.clone(),
    };
    let (view, entities, versions) = on_memory(&state, &ws, session.access.clone(), move |t| {
        let view = loci_api::memory::read(t, &request)?;
        let entities = if view.memory.entities.is_empty() {
            None
        } else {
            let among = EntityRelationshipsRequest {
                namespace: Some(view.memory.namespace.clone()),
                name: view.memory.name.clone(),
                entities: view.memory.entities.clone(),
            };
            Some(loci_api::memory::entity_relationships(t, &among)?)
        };
        let history = loci_api::memory::history(t, &request)?;
        Ok((view, entities, history.versions))
    })
    .await
    .map_err(PageError::within(&session))?;
    let title = view.memory.name.clone();
    let body = html! {
        (summary(&view))
        pre class="doc" { (view.memory.body) }
        (links(id, &view))
        @if let Some(entities) = &entities { (entity_graph::section(entities)) }
        (history(&versions))
    };
    Ok(page(&title, Some(&session), body))
}

fn summary(v: &MemoryView) -> Markup {
    let m = &v.memory;
    html! {
        p {
            span class="state" { (m.memory_type.name()) } " in " code { (m.namespace) }
            " · version " (m.version) " · changed " (when(Some(m.updated_at / 1000)))
            @if v.stale { " · " span class="state" { "stale" } }
        }
        @if !m.description.is_empty() { p { (m.description) } }
    }
}

fn links(id: i64, v: &MemoryView) -> Markup {
    html! {
        section aria-labelledby="links-h" {
            h2 id="links-h" { "Code links (" (v.checked_links.len()) ")" }
            @if v.checked_links.is_empty() { p { "None." } } @else {
                ul { @for l in &v.checked_links {
                    @let key = &l.link.key;
                    @let state = link_state(&l.status);
                    li {
                        a href=(symbol_href(id, &format!("{}:{}", key.path, l.link.line))) { (key.qualified_name) }
                        " " span class="muted" { (key.kind) " in " code { (key.path) } }
                        " · " @if state == "fresh" { (state) } @else { span class="state" { (state) } }
                    }
                } }
                @for r in &v.stale_reasons { p class="muted" { (r) } }
            }
        }
    }
}

/// A link's state word (`fresh`, `changed`, `followed`, `gone`...), as the JSON says it.
fn link_state(status: &impl serde::Serialize) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.get("state").and_then(|s| s.as_str()).map(str::to_string))
        .unwrap_or_default()
}

fn history(versions: &[Version]) -> Markup {
    html! {
        section aria-labelledby="history-h" {
            h2 id="history-h" { "Versions (" (versions.len()) ")" }
            @for (i, v) in versions.iter().enumerate().rev() {
                details open[i + 1 == versions.len()] {
                    summary { "Version " (v.version) " · " (v.op.name()) " · " (v.name) }
                    @if i == 0 { pre class="doc" { (v.body) } }
                    @else { (diff(&versions[i - 1].body, &v.body)) }
                }
            }
        }
    }
}

/// The lines `new` adds to and removes from `old`, each marked in words as well as
/// colour (readable without it).
fn diff(old: &str, new: &str) -> Markup {
    let d = TextDiff::from_lines(old, new);
    let changes: Vec<_> = d
        .iter_all_changes()
        .filter(|c| c.tag() != ChangeTag::Equal)
        .collect();
    html! {
        @if changes.is_empty() { p class="muted" { "The body did not change." } } @else {
            pre class="diff" aria-label="Changes from the version before" {
                @for c in changes.iter().take(DIFF_LINES) {
                    @match c.tag() {
                        ChangeTag::Insert => { ins { "+ " (c.value().trim_end_matches('\n')) } "\n" }
                        ChangeTag::Delete => { del { "- " (c.value().trim_end_matches('\n')) } "\n" }
                        ChangeTag::Equal => {}
                    }
                }
                @if changes.len() > DIFF_LINES { "… " (changes.len() - DIFF_LINES) " more changed lines\n" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_marks_added_and_removed_lines_in_words() {
        let html = diff("keep\nold line\n", "keep\nnew line\n").into_string();
        assert!(html.contains("<del>- old line</del>"), "{html}");
        assert!(html.contains("<ins>+ new line</ins>"), "{html}");
        assert!(!html.contains("keep"), "{html}");
        let same = diff("a\n", "a\n").into_string();
        assert!(same.contains("did not change"), "{same}");
    }
}
