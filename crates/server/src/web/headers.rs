//! The headers every web-view answer carries: a Content-Security-Policy that allows
//! no inline script, no plugin, no frame and no origin but the server's own (its
//! styles, images and one script file; the live stream; forms posted only to
//! itself); no sniffing; no `Referer` (a page's URL
//! never leaves the browser); no caching (pages show a session's data); and
//! `Server-Timing`, the server's own time for the page.

use std::time::Duration;

use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The policy: only the server's own script file runs, nothing is fetched from
/// elsewhere.
pub const CSP: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; \
                       style-src 'self'; img-src 'self'; form-action 'self'; \
                       frame-ancestors 'none'; base-uri 'none'";

/// Adds the headers (see the module doc) to `resp`, which took `took` to make.
pub fn secure(resp: &mut Response, took: Duration) {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    let timing = format!("app;dur={:.1}", took.as_secs_f64() * 1000.0);
    if let Ok(v) = HeaderValue::from_str(&timing) {
        h.insert("server-timing", v);
    }
}
