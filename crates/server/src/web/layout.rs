//! The frame of every page (title, navigation, sign-out form with the session's CSRF
//! token), the built-in style sheet, and errors as pages.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use loci_api::ApiError;
use maud::{DOCTYPE, Markup, html};

use crate::reply::HttpError;
use crate::web::session::Session;

/// The style sheet, built into the binary.
const STYLE: &str = include_str!("style.css");

/// `GET /web/static/style.css`.
pub async fn style() -> Response {
    asset(STYLE, "text/css; charset=utf-8")
}

/// The workspaces page's live script, built into the binary.
const LIVE_SCRIPT: &str = include_str!("live.js");

/// `GET /web/static/live.js`.
pub async fn live_script() -> Response {
    asset(LIVE_SCRIPT, "text/javascript; charset=utf-8")
}

/// The icon, built into the binary (a browser asks for one on every site).
const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"#0b5cad\"/></svg>";

/// `GET /web/static/favicon.svg`.
pub async fn icon() -> Response {
    asset(ICON, "image/svg+xml")
}

/// A file built into the binary, cached for an hour (it changes only with loci).
fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut resp = body.into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=3600"),
    );
    resp
}

/// A whole page: `title`, then `body` inside the frame. With a session, the frame has
/// the navigation and the sign-out form.
pub fn page(title: &str, session: Option<&Session>, body: Markup) -> Html<String> {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — loci" }
                link rel="stylesheet" href="/web/static/style.css";
                link rel="icon" href="/web/static/favicon.svg" type="image/svg+xml";
            }
            body {
                a class="skip" href="#main" { "Skip to content" }
                header {
                    nav aria-label="Site" {
                        a href="/web/" { "loci" }
                        @if session.is_some() {
                            " · " a href="/web/" { "Workspaces" }
                        }
                    }
                    @if let Some(s) = session {
                        form method="post" action="/web/signout" class="signout" {
                            input type="hidden" name="csrf" value=(s.csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main id="main" { h1 { (title) } (body) }
            }
        }
    };
    Html(markup.into_string())
}

/// An error as a page, with the status of its kind in the error table; no host path
/// is in it (as in the JSON answers).
pub fn error_page(e: ApiError, session: Option<&Session>) -> Response {
    let e = crate::reply::no_host_paths(e);
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = html! {
        p class="error" role="alert" {
            strong { (e.kind.name()) } ": " (e.message)
        }
        @if let Some(h) = &e.hint { p { (h) } }
    };
    (
        status,
        page(&format!("Error {}", status.as_u16()), session, body),
    )
        .into_response()
}

/// A page handler's result: the page, or an error page.
pub type PageResult = Result<Html<String>, PageError>;

/// An error on a page, with the session to frame it: answered as [`error_page`]
/// (boxed: a handler's `Result` stays small).
pub struct PageError(Box<(ApiError, Option<Session>)>);

impl PageError {
    /// `e`, shown within `session`'s frame.
    pub fn new(e: ApiError, session: Option<Session>) -> PageError {
        PageError(Box::new((e, session)))
    }

    /// What turns a failed `loci_api` call of a page into its error page, framed by
    /// `session`.
    pub fn within(session: &Session) -> impl Fn(HttpError) -> PageError + Copy + '_ {
        move |e| PageError::new(e.0, Some(session.clone()))
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let (e, session) = *self.0;
        error_page(e, session.as_ref())
    }
}
