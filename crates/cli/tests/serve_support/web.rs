//! The web view's tests share this: an HTTP client that keeps no cookies and follows
//! no redirects, what they read of an answer, and signing in through the one-time URL.

use std::time::Duration;

use super::{KEY, Server};

/// A client that never follows redirects (the sign-in answers one) and keeps no
/// cookies (each test sends the cookie it means to).
pub fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// One answer, what the tests read of it.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub fn answer(resp: ureq::http::Response<ureq::Body>) -> Answer {
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = resp.into_body().read_to_string().unwrap_or_default();
    Answer {
        status,
        headers,
        body,
    }
}

pub fn get(server: &Server, path: &str, cookie: Option<&str>) -> Answer {
    let mut r = client().get(&format!("http://{}{path}", server.addr));
    if let Some(c) = cookie {
        r = r.header("Cookie", c);
    }
    answer(r.call().unwrap())
}

/// A form post with these headers and fields.
pub fn post_form(server: &Server, path: &str, headers: &[(&str, &str)], form: &str) -> Answer {
    let mut r = client()
        .post(&format!("http://{}{path}", server.addr))
        .header("Content-Type", "application/x-www-form-urlencoded");
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    answer(r.send(form).unwrap())
}

/// Trades the sign-in path for the session cookie (`name=value`), checking the
/// cookie's attributes.
pub fn sign_in(server: &Server, path: &str) -> String {
    let a = get(server, path, None);
    assert_eq!(a.status, 303, "{}", a.body);
    assert_eq!(a.header("location"), Some("/web/"));
    let cookie = a.header("set-cookie").expect("a session cookie");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/web"] {
        assert!(cookie.contains(attribute), "{attribute} missing: {cookie}");
    }
    assert!(!cookie.contains(KEY), "{cookie}");
    cookie.split(';').next().unwrap().to_string()
}

/// The CSRF token of the page's sign-out form.
pub fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    page[at..].split('"').next().unwrap().to_string()
}
