//! The impact of a change: what a git diff changes in the code graph, as `loci
//! changes` answers it — the changed files, a page of changed definitions with their
//! callers, impact and tests, and the memories linked to them. It calls
//! `loci_api::changes::changes`, as the JSON route does.

use axum::Extension;
use axum::extract::{Path, Query, State};
use loci_api::changes::{ChangedSymbol, ChangesAnswer, ChangesRequest};
use loci_api::page::PageRequest;
use maud::{Markup, html};
use serde::Deserialize;

use crate::state::Shared;
use crate::web::impact::{impact_href, linked_memories};
use crate::web::layout::{PageError, PageResult, page};
use crate::web::pages::{symbol_href, url, workspace_id};
use crate::web::session::Session;

/// Changed definitions per page.
const PAGE: usize = 50;

/// The page's query.
#[derive(Debug, Deserialize)]
pub struct ChangesQuery {
    /// `REV`, `A..B` or `A...B`; empty: `HEAD` against the working tree.
    #[serde(default)]
    rev: String,
    /// The next page's cursor.
    #[serde(default)]
    cursor: String,
}

/// `GET /web/w/{id}/changes?rev=A..B`.
pub async fn changes(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Path(ws): Path<String>,
    Query(q): Query<ChangesQuery>,
) -> PageResult {
    let id = workspace_id(&ws, &session)?;
    let rev = q.rev.trim().to_string();
    let request = ChangesRequest {
        rev: Some(rev.clone()).filter(|r| !r.is_empty()),
        page: PageRequest {
            limit: Some(PAGE),
            cursor: Some(q.cursor.clone()).filter(|c| !c.is_empty()),
        },
        ..ChangesRequest::default()
    };
    let answer = state
        .read(id, move |w, o| loci_api::changes::changes(w, &request, o))
        .await
        .map_err(PageError::within(&session))?;
    let title = format!("Changes: {} → {}", answer.base.label, answer.head.label);
    let body = html! {
        (form(id, &rev))
        (files(&answer))
        (symbols(id, &answer))
        (memories(id, &answer))
        @if let Some(next) = &answer.page.next_cursor {
            nav class="pager" aria-label="Pages" {
                a rel="next" href=(url(&format!("/web/w/{id}/changes"), &[("rev", &rev), ("cursor", next)])) { "Next page" }
            }
        }
    };
    Ok(page(&title, Some(&session), body))
}

fn form(id: i64, rev: &str) -> Markup {
    html! {
        form class="search" method="get" action={ "/web/w/" (id) "/changes" } {
            label { "Revisions" input type="search" name="rev" value=(rev) placeholder="empty: HEAD against the working tree; or REV, A..B, A...B"; }
            button type="submit" { "Show changes" }
        }
    }
}

fn files(a: &ChangesAnswer) -> Markup {
    html! {
        section aria-labelledby="files-h" {
            h2 id="files-h" { "Files (" (a.files_total) ")" }
            @if a.files.is_empty() { p { "No file differs." } } @else {
                table {
                    thead { tr { th scope="col" { "File" } th scope="col" { "How" } th scope="col" { "Lines" } th scope="col" { "Definitions" } } }
                    tbody { @for f in &a.files {
                        tr {
                            td { code { (f.path) } @if let Some(old) = &f.old_path { br; span class="muted" { "from " code { (old) } } } }
                            td { (word(f.status)) }
                            td { "+" (f.lines_added) " −" (f.lines_removed) }
                            td {
                                (f.symbols)
                                @if let Some(why) = f.not_read { br; span class="muted" { "not read: " (word(why)) } }
                            }
                        }
                    } }
                }
            }
        }
    }
}

fn symbols(id: i64, a: &ChangesAnswer) -> Markup {
    html! {
        section aria-labelledby="symbols-h" {
            h2 id="symbols-h" { "Changed definitions (" (a.page.total) ")" }
            @if a.symbols.is_empty() { p { "No definition changed." } } @else {
                table {
                    thead { tr {
                        th scope="col" { "Change" } th scope="col" { "Definition" } th scope="col" { "Where" }
                        th scope="col" { "Callers" } th scope="col" { "Impact" } th scope="col" { "Tests" }
                    } }
                    tbody { @for s in &a.symbols { (symbol_row(id, s)) } }
                }
            }
        }
    }
}

fn symbol_row(id: i64, s: &ChangedSymbol) -> Markup {
    let at = format!("{}:{}", s.path, s.line);
    let r = &s.reach;
    html! {
        tr {
            td { span class="state" { (word(s.change)) } }
            td {
                @if r.in_index { a href=(symbol_href(id, &at)) { (s.qualified_name) } } @else { (s.qualified_name) }
                " " span class="muted" { (s.kind.name()) }
            }
            td {
                code { (at) }
                @if let Some(old) = &s.old { br; span class="muted" { "was " code { (old.path) ":" (old.line) } } }
            }
            td {
                (r.callers_total)
                @for c in &r.callers { br; a href=(symbol_href(id, &format!("{}:{}", c.path, c.line))) { (c.qualified_name) } }
            }
            td {
                @if r.in_index {
                    a href=(impact_href(id, &at)) { (r.impact.symbols) " definitions in " (r.impact.files) " files" }
                    " to depth " (r.impact.depth)
                } @else { span class="muted" { "not in the index" } }
            }
            td {
                (r.tests_total)
                @for t in &r.tests { br; a href=(symbol_href(id, &format!("{}:{}", t.path, t.line))) { (t.qualified_name) } }
            }
        }
    }
}

fn memories(id: i64, a: &ChangesAnswer) -> Markup {
    linked_memories(id, &a.memories, a.memories_unavailable.as_deref())
}
/// A value's name in the JSON answers (`type_changed`, `too_large`).
fn word(v: impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}
