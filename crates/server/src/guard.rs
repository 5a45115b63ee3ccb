//! What every request passes before a handler: loopback `Host` and `Origin` (unless
//! `--allow-remote`), the API key (every route but `GET /health`), a body announced
//! over `api.maxBodyBytes` (413 before it is read), and the request deadline
//! (`api.requestTimeoutMs`). No route takes an API key in its URL; the web view's pages
//! (`/web`) need a session instead of the key, and carry their security headers
//! ([`crate::web`]).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use loci_api::{ApiError, ErrorKind};

use crate::reply::HttpError;
use crate::state::Shared;

/// The one route that answers without a key.
pub const HEALTH_PATH: &str = "/health";

/// The guard layer (see the module doc). A page of the web view (`/web`) answers
/// with its security headers whatever the outcome ([`crate::web::headers`]).
pub async fn guard(State(state): State<Shared>, req: Request, next: Next) -> Response {
    let web = crate::web::auth::is_web(req.uri().path());
    if !web {
        return checked(state, req, next, false).await;
    }
    let started = std::time::Instant::now();
    let mut resp = checked(state, req, next, true).await;
    crate::web::headers::secure(&mut resp, started.elapsed());
    resp
}

/// The checks themselves; `web`: the request is for a page (refusals as pages, a
/// session instead of the key).
async fn checked(state: Shared, mut req: Request, next: Next, web: bool) -> Response {
    if let Err(refusal) = admit(&state, &mut req, web).await {
        let mut resp = if refusal.as_page {
            crate::web::error_page(refusal.error)
        } else {
            HttpError(refusal.error).into_response()
        };
        // The request's body was never read, so the connection cannot carry another
        // request reliably: a client that sent one on it would meet a closed socket
        // (hyper drains only what already arrived). Saying so makes clients reconnect.
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return resp;
    }
    let limit = state.request_timeout;
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(response) => response,
        Err(_) => HttpError(
            ApiError::new(
                ErrorKind::Timeout,
                format!(
                    "the request did not finish within api.requestTimeoutMs ({} ms)",
                    limit.as_millis()
                ),
            )
            .hint("narrow the question (depth, limit, path), or raise api.requestTimeoutMs"),
        )
        .into_response(),
    }
}

/// Why a request is answered before its handler runs, and whether as a page.
struct Refusal {
    error: ApiError,
    as_page: bool,
}

/// Every check before the handler; on success the key's memory access rides in the
/// request's extensions.
async fn admit(state: &Shared, req: &mut Request, web: bool) -> Result<(), Refusal> {
    let page = |error: ApiError| Refusal {
        error,
        as_page: web,
    };
    let api = |error: ApiError| Refusal {
        error,
        as_page: false,
    };
    if !state.allow_remote {
        loopback_only(req.headers()).map_err(page)?;
    }
    // No route takes a key in its URL: it would stay in logs, history and `Referer`.
    crate::web::auth::no_key_in_url(state, req.uri()).map_err(page)?;
    // The key's memory namespaces go with the request to the memory routes and `/mcp`.
    let access = access(state, req.headers());
    if let Some(access) = &access {
        req.extensions_mut().insert(access.clone());
    }
    if web {
        // A page needs a session, never the key (a browser never holds it).
        crate::web::auth::admit(state, req).map_err(page)?;
    } else if req.uri().path() != HEALTH_PATH && access.is_none() {
        return Err(api(ApiError::new(
            ErrorKind::Unauthorized,
            "this request carries no valid API key",
        )
        .hint(
            "send `Authorization: Bearer KEY` or `X-API-Key: KEY`; the key is LOCI_API_KEY, \
             else the file `api-key` beside loci's registry",
        )));
    }
    if let Some(required) = req.headers().get(REQUIRE_HEADER).cloned() {
        require(required.as_bytes()).await.map_err(api)?;
    }
    // A body announced over the limit is refused now, before it is read: sent slowly,
    // it would otherwise meet the request deadline first.
    if let Some(announced) = content_length(req.headers())
        && announced > state.max_body_bytes as u64
    {
        return Err(api(crate::reply::body_too_large(state.max_body_bytes)));
    }
    Ok(())
}

/// The `Content-Length` the request announces, when it is one number.
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A client names the capabilities it needs (`X-Loci-Require: a,b`); the request is
/// refused with 412 naming each one this server lacks, before anything runs.
pub const REQUIRE_HEADER: &str = "x-loci-require";

async fn require(header: &[u8]) -> Result<(), ApiError> {
    let text = String::from_utf8_lossy(header).into_owned();
    let offered = crate::routes::capabilities_now().await?;
    let missing: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty() && !offered.iter().any(|o| o == c))
        .map(str::to_string)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorKind::CapabilityMissing,
        format!(
            "this server lacks the required capabilities: {}",
            missing.join(", ")
        ),
    )
    .hint("GET /api/v1/capabilities lists what it offers")
    .detail(serde_json::json!({ "missing": missing })))
}

/// What the request's key may do with memory; `None` without a valid key (or with two
/// different ones).
fn access(state: &Shared, headers: &HeaderMap) -> Option<loci_api::memory::MemoryAccess> {
    let bearer = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| bearer_token(v.as_bytes()));
    let api_key = headers.get_all("x-api-key").iter().map(|v| v.as_bytes());
    // Every candidate is compared with every key (no early exit on a mismatch).
    state.keys.access(bearer.chain(api_key))
}

/// The token of `Bearer TOKEN` (the scheme is case-insensitive, RFC 9110).
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = value.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(token)
}

/// `Host` and `Origin`, when present, must name a loopback host (any port).
fn loopback_only(headers: &HeaderMap) -> Result<(), ApiError> {
    for (name, strip_scheme) in [(header::HOST, false), (header::ORIGIN, true)] {
        for value in headers.get_all(&name) {
            let text = String::from_utf8_lossy(value.as_bytes());
            let authority = if strip_scheme {
                text.strip_prefix("http://")
                    .or_else(|| text.strip_prefix("https://"))
                    .unwrap_or("")
            } else {
                &text
            };
            if !is_loopback_authority(authority) {
                return Err(ApiError::new(
                    ErrorKind::ForbiddenHost,
                    format!("{name} `{text}` is not a loopback name (localhost, 127.0.0.1, [::1])"),
                )
                .hint("this server only answers local callers; start it with `loci serve --allow-remote` to accept others"));
            }
        }
    }
    Ok(())
}

/// `localhost`, `127.0.0.1`, `[::1]`, each with an optional port.
pub fn is_loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((h, tail)) if tail.is_empty() || valid_port(tail) => h,
            _ => return false,
        }
    } else {
        match authority.split_once(':') {
            Some((h, port)) if valid_port(&format!(":{port}")) => h,
            Some(_) => return false,
            None => authority,
        }
    };
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "::1"
}

fn valid_port(tail: &str) -> bool {
    tail.strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.parse::<u16>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::is_loopback_authority as ok;

    #[test]
    fn loopback_names_with_any_port_pass_and_lookalikes_do_not() {
        for good in [
            "localhost",
            "LOCALHOST:8000",
            "127.0.0.1",
            "127.0.0.1:1",
            "[::1]",
            "[::1]:65535",
        ] {
            assert!(ok(good), "{good}");
        }
        for bad in [
            "evil.example",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "127.0.0.1:80:80",
            "[::1]x",
            "localhost:",
            "::1",
            "",
            "10.0.0.1:8000",
        ] {
            assert!(!ok(bad), "{bad}");
        }
    }
}
