//! The web view: pages served by `loci serve` itself (issue #32) — sign-in by a
//! one-time URL, the workspaces, search, symbol pages with their callers and callees
//! as a graph, what depends on a file or a definition (its impact), what a git
//! diff changes, and the memories with their versions and their entities drawn as a
//! graph. Server-rendered HTML (maud escapes every value), one style sheet built into
//! the binary, no remote origin: it works air-gapped. The one script, also built in,
//! only swaps in the workspaces page's rows as the server streams them ([`live`]);
//! every page reads and works without it. Like the
//! JSON routes, every page converts the request, calls the same `loci_api` functions
//! and renders the answer; nothing here is product logic.
//!
//! Security (docs/web.md): the API key never reaches the browser. `loci serve` prints
//! a one-time URL whose short-lived token ([`session`]) is traded for an `HttpOnly;
//! SameSite=Strict` session cookie; the guard's `Host`/`Origin` check covers every
//! page; a form post must come from the page's origin and carry the session's CSRF
//! token ([`auth`]); every answer carries a Content-Security-Policy that allows no
//! inline script, no script but the server's own and no other origin ([`headers`]).

pub mod auth;
mod changes;
mod entity_graph;
mod graph_svg;
pub mod headers;
mod impact;
mod layout;
pub mod live;
pub mod live_rows;
mod memory;
mod pages;
pub mod session;
mod signin;
mod symbol;
mod traversal_view;
mod workspaces;

use axum::Router;
use axum::routing::{get, post};

use crate::state::Shared;

/// The web view's root page.
pub const ROOT: &str = "/web";
/// Every page's path starts so.
pub const PREFIX: &str = "/web/";
/// The sign-in page (the one page without a session).
pub const SIGNIN: &str = "/web/signin";
/// The built-in static files (no session needed: they hold nothing of the server's).
pub const STATIC: &str = "/web/static/";
/// The JSON route that mints a one-time sign-in URL for the key holder.
pub const MINT_PATH: &str = "/api/v1/web/signin";

/// The web view's routes, without layers (the guard admits them: [`auth::admit`]).
pub fn router() -> Router<Shared> {
    Router::new()
        .route(ROOT, get(workspaces::workspaces))
        .route(PREFIX, get(workspaces::workspaces))
        .route(workspaces::EVENTS, get(live::events))
        .route(SIGNIN, get(signin::signin))
        .route("/web/signout", post(signin::signout))
        .route("/web/static/style.css", get(layout::style))
        .route("/web/static/favicon.svg", get(layout::icon))
        .route("/web/static/live.js", get(layout::live_script))
        .route("/web/w/{id}/search", get(pages::search))
        .route("/web/w/{id}/symbol", get(symbol::symbol))
        .route("/web/w/{id}/impact", get(impact::impact))
        .route("/web/w/{id}/changes", get(changes::changes))
        .route("/web/w/{id}/memories", get(memory::list))
        .route("/web/w/{id}/memory", get(memory::read))
        .route(MINT_PATH, post(signin::mint))
}

pub use signin::{WebSignIn, one_time_path as signin_path};

/// An error refused before a page ran, as a page.
pub fn error_page(e: loci_api::ApiError) -> axum::response::Response {
    layout::error_page(e, None)
}
