//! Signing in and out: the one-time URL's token traded for a session cookie, the
//! sign-out form, and the key holder's route that mints a new one-time URL.

use std::collections::HashMap;

use axum::Extension;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use loci_api::memory::MemoryAccess;
use loci_api::{ApiError, ErrorKind};
use maud::html;
use schemars::JsonSchema;
use serde::Serialize;

use crate::reply::{HttpError, Reply};
use crate::state::Shared;
use crate::web::auth::{COOKIE, SessionId, csrf};
use crate::web::layout::{error_page, page};
use crate::web::session::{RedeemError, Session};

/// `POST /api/v1/web/signin`: a one-time URL for a browser.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WebSignIn {
    /// The path to open on this server (`/web/signin?token=...`): good once, and for
    /// `expires_in_ms`.
    pub url: String,
    /// How long the URL stays good (`web.signinTtlMs`).
    pub expires_in_ms: u64,
}

/// The sign-in path with a new token for a session with `access`.
pub fn one_time_path(state: &Shared, access: MemoryAccess) -> Result<String, ApiError> {
    let token = state.signin.mint(access).map_err(|e| {
        ApiError::new(
            ErrorKind::Internal,
            format!("the OS's random source failed: {e}"),
        )
    })?;
    Ok(format!("{}?token={token}", super::SIGNIN))
}

/// `POST /api/v1/web/signin` (API key): mints a one-time sign-in URL whose session has
/// the key's memory namespaces.
pub async fn mint(
    State(state): State<Shared>,
    Extension(access): Extension<MemoryAccess>,
) -> Reply<WebSignIn> {
    let url = one_time_path(&state, access).map_err(HttpError)?;
    Ok(axum::Json(WebSignIn {
        url,
        expires_in_ms: u64::try_from(state.signin.token_ttl().as_millis()).unwrap_or(u64::MAX),
    }))
}

/// `GET /web/signin?token=T`: a good token becomes a session cookie and a redirect to
/// the workspaces (so the token leaves the address bar); without a token, the page
/// says how to sign in.
pub async fn signin(
    State(state): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(token) = query.get("token") else {
        return page(
            "Sign in",
            None,
            html! {
                p { "You are not signed in." }
                p { "Open the one-time sign-in URL that " code { "loci serve" } " printed when it started, or ask a new one with the API key: "
                    code { "curl -X POST -H 'Authorization: Bearer KEY' http://HOST/api/v1/web/signin" } "." }
            },
        )
        .into_response();
    };
    match state.signin.redeem(token) {
        Ok(id) => {
            let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, "/web/")]).into_response();
            set_cookie(&mut resp, &id, state.signin.session_ttl().as_secs());
            resp
        }
        Err(RedeemError::Refused(why)) => error_page(
            ApiError::new(ErrorKind::Unauthorized, why.to_string()).hint(
                "a sign-in URL is good once and for a short time (web.signinTtlMs): ask a new \
                 one with `POST /api/v1/web/signin` and the API key",
            ),
            None,
        ),
        Err(e @ RedeemError::Random(_)) => {
            error_page(ApiError::new(ErrorKind::Internal, e.to_string()), None)
        }
    }
}

/// Sets the session cookie to `value` for `max_age` seconds (0 clears it): only over
/// HTTP (no script reads it), never sent by another site, only to the web view.
fn set_cookie(resp: &mut Response, value: &str, max_age: u64) {
    let cookie =
        format!("{COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/web; Max-Age={max_age}");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
}

/// `POST /web/signout` (CSRF token): ends the session and clears its cookie.
pub async fn signout(
    State(state): State<Shared>,
    Extension(session): Extension<Session>,
    Extension(SessionId(id)): Extension<SessionId>,
    axum::Form(form): axum::Form<HashMap<String, String>>,
) -> Response {
    if let Err(e) = csrf(&session, form.get("csrf").map(String::as_str)) {
        return error_page(e, Some(&session));
    }
    state.signin.end(&id);
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, super::SIGNIN)]).into_response();
    set_cookie(&mut resp, "", 0);
    resp
}
