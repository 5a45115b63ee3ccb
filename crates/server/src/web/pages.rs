//! The search page: it calls the `loci_api` functions the JSON routes call
//! (`graph::find`, `graph::search`) and renders the answer.

use axum::Extension;
use axum::extract::{Path, Query, State};
use loci_api::graph::{self, FindRequest, SearchRequest};
use loci_api::page::PageRequest;
use loci_api::vocab::index::{Lang, SymbolKind};
use loci_api::{ApiError, ErrorKind};
use maud::{Markup, html};
use serde::Deserialize;

use crate::state::Shared;
use crate::web::layout::{PageError, PageResult, page};
use crate::web::session::Session;

/// Results on one page of search.
const PAGE: usize = 50;

/// The workspace id of a page's path.
pub(super) fn workspace_id(raw: &str, session: &Session) -> Result<i64, PageError> {
    crate::handler::id(raw).map_err(PageError::within(session))
}

/// Unix seconds as `YYYY-MM-DD HH:MM UTC`, or `never`.
pub(super) fn when(secs: Option<i64>) -> String {
    secs.map_or_else(|| "never".into(), loci_api::time::utc_minutes)
}

/// The search form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct SearchQuery {
    /// The name, glob or text.
    #[serde(default)]
    q: String,
    /// `find` (definitions) or `text` (code text).
    #[serde(default)]
    mode: String,
    /// `find`: only this kind.
    #[serde(default)]
    kind: String,
    /// `find`: only this language.
    #[serde(default)]
    lang: String,
    /// `text`: only these files (a glob or a path).
    #[serde(default)]
    path: String,
    /// The page's cursor.
    #[serde(default)]
    cursor: String,
}

fn invalid(what: &str, value: &str, session: &Session) -> PageError {
    PageError::new(
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("`{value}` is not a {what}"),
        ),
        Some(session.clone()),
    )
}

/// `GET /web/w/{id}/search`: definitions by name or glob, or code text.
pub async fn search(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Path(ws): Path<String>,
    Query(q): Query<SearchQuery>,
) -> PageResult {
    let id = workspace_id(&ws, &session)?;
    let text = q.mode == "text";
    let kind = match q.kind.as_str() {
        "" => None,
        k => Some(SymbolKind::from_name(k).ok_or_else(|| invalid("symbol kind", k, &session))?),
    };
    let lang = match q.lang.as_str() {
        "" => None,
        l => Some(Lang::from_name(l).ok_or_else(|| invalid("language", l, &session))?),
    };
    let page_req = PageRequest {
        limit: Some(PAGE),
        cursor: (!q.cursor.is_empty()).then(|| q.cursor.clone()),
    };
    let fail = PageError::within(&session);
    let results = if q.q.trim().is_empty() {
        html! {}
    } else if text {
        let req = SearchRequest {
            pattern: q.q.clone(),
            regex: false,
            ignore_case: false,
            path: (!q.path.is_empty()).then(|| q.path.clone()),
            source_only: false,
            page: page_req,
        };
        let answer = state
            .read(id, move |w, o| graph::search(w, &req, o))
            .await
            .map_err(fail)?;
        html! {
            p class="muted" { (answer.page.total) " lines" @if answer.index.is_partial() { " (the index is not complete: the answer may be partial)" } }
            table {
                thead { tr { th scope="col" { "Where" } th scope="col" { "Line" } } }
                tbody { @for h in &answer.hits {
                    tr { td { code { (h.path) ":" (h.line) } } td { code { (h.text) } } }
                } }
            }
            (pager(id, &q, answer.page.next_cursor.as_deref()))
        }
    } else {
        let req = FindRequest {
            pattern: q.q.clone(),
            kind,
            lang,
            page: page_req,
        };
        let answer = state
            .read(id, move |w, o| graph::find(w, &req, o))
            .await
            .map_err(fail)?;
        html! {
            p class="muted" { (answer.page.total) " definitions" @if answer.index.is_partial() { " (the index is not complete: the answer may be partial)" } }
            table {
                thead { tr { th scope="col" { "Symbol" } th scope="col" { "Kind" } th scope="col" { "Where" } } }
                tbody { @for s in &answer.symbols {
                    tr {
                        td { a href=(symbol_href(id, &format!("{}:{}", s.path, s.line))) { (s.qualified_name) } }
                        td { (s.kind.name()) }
                        td { code { (s.path) ":" (s.line) } }
                    }
                } }
            }
            (pager(id, &q, answer.page.next_cursor.as_deref()))
        }
    };
    Ok(page(
        "Search",
        Some(&session),
        html! {
            (search_form(id, &q))
            section aria-label="Results" { (results) }
        },
    ))
}

fn search_form(id: i64, q: &SearchQuery) -> Markup {
    html! {
        form class="search" method="get" action={ "/web/w/" (id) "/search" } role="search" {
            label { "Name, glob or text" input type="search" name="q" value=(q.q) autofocus; }
            label { "Search"
                select name="mode" {
                    option value="find" selected[q.mode != "text"] { "definitions (find)" }
                    option value="text" selected[q.mode == "text"] { "code text (search)" }
                }
            }
            label { "Kind"
                select name="kind" {
                    option value="" { "any" }
                    @for k in SymbolKind::ALL { option value=(k.name()) selected[q.kind == k.name()] { (k.name()) } }
                }
            }
            label { "Language"
                select name="lang" {
                    option value="" { "any" }
                    @for l in Lang::ALL { option value=(l.name()) selected[q.lang == l.name()] { (l.name()) } }
                }
            }
            label { "Files (text)" input type="text" name="path" value=(q.path) placeholder="src/**/*.rs"; }
            button type="submit" { "Search" }
        }
    }
}

fn pager(id: i64, q: &SearchQuery, next: Option<&str>) -> Markup {
    html! {
        @if let Some(next) = next {
            nav class="pager" aria-label="Pages" {
                a rel="next" href=(url(&format!("/web/w/{id}/search"), &[
                    ("q", &q.q), ("mode", &q.mode), ("kind", &q.kind), ("lang", &q.lang),
                    ("path", &q.path), ("cursor", next),
                ])) { "Next page" }
            }
        }
    }
}

/// The symbol page of `selector`.
pub(super) fn symbol_href(id: i64, selector: &str) -> String {
    url(&format!("/web/w/{id}/symbol"), &[("s", selector)])
}

/// `path?k=v&...` with each value percent-encoded (empty values left out).
pub(super) fn url(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = path.to_string();
    let mut sep = '?';
    for (k, v) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
        out.push(sep);
        sep = '&';
        out.push_str(k);
        out.push('=');
        for b in v.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_read_as_utc() {
        assert_eq!(super::when(Some(0)), "1970-01-01 00:00 UTC");
        assert_eq!(super::when(Some(1_767_225_600)), "2026-01-01 00:00 UTC");
        assert_eq!(super::when(None), "never");
    }

    #[test]
    fn urls_encode_every_value() {
        assert_eq!(
            super::url("/p", &[("s", "a b&c=d/é"), ("e", "")]),
            "/p?s=a%20b%26c%3Dd%2F%C3%A9"
        );
    }
}
