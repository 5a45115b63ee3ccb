//! Who may see a web page, and what no request may carry. The guard asks this module
//! for every request: a URL that carries an API key (or a parameter named for one) is
//! refused on every route, so a key never lands in a log, a history or a `Referer`;
//! a page under `/web` needs a live session cookie (the sign-in page and the style
//! sheet excepted), and a form posted to it must come from the page's own origin.

use axum::extract::{Query, Request};
use axum::http::{HeaderMap, Method, Uri, header};
use loci_api::{ApiError, ErrorKind};

use crate::state::Shared;
use crate::web::session::{Session, same};

/// The session cookie's name.
pub const COOKIE: &str = "loci_session";

/// Query parameters that would carry an API key: refused on every route, whatever
/// their value.
const KEY_PARAMS: &[&str] = &[
    "key",
    "api_key",
    "apikey",
    "api-key",
    "x-api-key",
    "access_token",
    "authorization",
    "bearer",
];

/// The session cookie value of a signed-in request (in its extensions), so sign-out
/// can end it.
#[derive(Debug, Clone)]
pub struct SessionId(pub String);

/// Refuses a URL whose query names a key parameter or holds a valid key as any value.
pub fn no_key_in_url(state: &Shared, uri: &Uri) -> Result<(), ApiError> {
    if uri.query().is_none() {
        return Ok(());
    }
    let Ok(Query(pairs)) = Query::<Vec<(String, String)>>::try_from_uri(uri) else {
        return Ok(());
    };
    let named = pairs
        .iter()
        .find(|(k, _)| KEY_PARAMS.iter().any(|p| k.eq_ignore_ascii_case(p)));
    // One read of the keys for every name and value: two different keys in one URL
    // are as refused as one.
    let holds_key = state
        .keys
        .current()
        .holds_any(pairs.iter().flat_map(|(k, v)| [k.as_bytes(), v.as_bytes()]));
    if named.is_none() && !holds_key {
        return Ok(());
    }
    let what = match named {
        Some((k, _)) => format!("the URL has a `{k}` parameter"),
        None => "the URL holds an API key".to_string(),
    };
    Err(ApiError::new(
        ErrorKind::KeyInUrl,
        format!("{what}: API keys are never accepted in a URL (logs, history and Referer headers keep URLs)"),
    )
    .hint("send the key as `Authorization: Bearer KEY` or `X-API-Key: KEY`; a browser signs in with the one-time URL `loci serve` prints"))
}

/// Whether `path` is a page of the web view.
pub fn is_web(path: &str) -> bool {
    path == super::ROOT || path.starts_with(super::PREFIX)
}

/// Whether the path answers without a session: the sign-in page and static files.
fn public(path: &str) -> bool {
    path == super::SIGNIN || path.starts_with(super::STATIC)
}

/// Admits a web request: a live session (put in the request's extensions), and for a
/// form post the page's own origin. `Err` is the refusal to answer.
pub fn admit(state: &Shared, req: &mut Request) -> Result<(), ApiError> {
    let path = req.uri().path().to_string();
    let unsafe_method = !matches!(*req.method(), Method::GET | Method::HEAD);
    if unsafe_method {
        same_origin(req.headers())?;
    }
    if public(&path) {
        return Ok(());
    }
    let Some(id) = cookie(req.headers(), COOKIE) else {
        return Err(signed_out(
            "this page needs a session, and the request has no session cookie",
        ));
    };
    let Some(session) = state.signin.session(&id) else {
        return Err(signed_out("the session cookie is unknown or expired"));
    };
    req.extensions_mut().insert::<Session>(session);
    req.extensions_mut().insert(SessionId(id));
    Ok(())
}

fn signed_out(why: &str) -> ApiError {
    ApiError::new(ErrorKind::Unauthorized, format!("not signed in: {why}")).hint(
        "open the one-time sign-in URL `loci serve` printed, or ask a new one with \
         `POST /api/v1/web/signin` and the API key",
    )
}

/// A form post must name its origin, and it must be this server's (`Host`); a browser
/// that says where the request came from must say `same-origin`.
fn same_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    let refuse = |why: String| {
        Err(ApiError::new(ErrorKind::CrossOrigin, why)
            .hint("post the form from the web view's own page"))
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return refuse("a form post without an Origin header is refused".into());
    };
    if host.is_empty() || origin != format!("http://{host}") {
        return refuse(format!(
            "a form post from `{origin}` to `{host}` crosses origins"
        ));
    }
    if let Some(site) = headers.get("sec-fetch-site").and_then(|s| s.to_str().ok())
        && site != "same-origin"
    {
        return refuse(format!("the browser says the post is `{site}`"));
    }
    Ok(())
}

/// The value of cookie `name`, if the request carries it once.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut found = None;
    for value in headers.get_all(header::COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        for pair in text.split(';') {
            if let Some((k, v)) = pair.trim().split_once('=')
                && k == name
            {
                if found.is_some() {
                    return None;
                }
                found = Some(v.to_string());
            }
        }
    }
    found
}

/// Checks a form's CSRF token against the session's.
pub fn csrf(session: &Session, offered: Option<&str>) -> Result<(), ApiError> {
    if same(offered.unwrap_or(""), &session.csrf) {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorKind::CrossOrigin,
            "the form carries no CSRF token of this session",
        )
        .hint("reload the page and post the form again"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_a_post_from_the_servers_own_origin_passes() {
        let ok = headers(&[
            ("host", "127.0.0.1:8000"),
            ("origin", "http://127.0.0.1:8000"),
        ]);
        assert!(same_origin(&ok).is_ok());
        for bad in [
            headers(&[("host", "127.0.0.1:8000")]),
            headers(&[
                ("host", "127.0.0.1:8000"),
                ("origin", "http://127.0.0.1:9000"),
            ]),
            headers(&[("host", "127.0.0.1:8000"), ("origin", "null")]),
            headers(&[
                ("host", "127.0.0.1:8000"),
                ("origin", "http://127.0.0.1:8000"),
                ("sec-fetch-site", "cross-site"),
            ]),
        ] {
            assert!(same_origin(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_cookie_given_twice_is_no_cookie() {
        let h = headers(&[
            ("cookie", "a=1; loci_session=x"),
            ("cookie", "loci_session=y"),
        ]);
        assert_eq!(cookie(&h, COOKIE), None);
        let h = headers(&[("cookie", "a=1; loci_session=x")]);
        assert_eq!(cookie(&h, COOKIE).as_deref(), Some("x"));
    }
}
