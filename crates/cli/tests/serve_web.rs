//! The web view's sign-in and its security (issue #32, item 1), over real sockets with
//! a real HTTP client: the one-time URL `loci serve` prints signs a browser in once,
//! and only while it is fresh; the session cookie is `HttpOnly; SameSite=Strict`; a
//! page without a session, a form posted from another origin or without the CSRF
//! token, and an API key in any URL are refused; every page carries a
//! Content-Security-Policy that allows no inline script, no script but the server's
//! own and no other origin, and its server time (`Server-Timing`); the workspaces
//! page's live stream follows a run's progress, ends with its session or the server,
//! and is bounded. The browser half is `web_browser.rs`.

use crate::serve_support;

use std::time::{Duration, Instant};

use crate::common::Env;
use serde_json::json;
use serve_support::*;

/// A client that never follows redirects (the sign-in answers one) and keeps no
/// cookies (each test sends the cookie it means to).
fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// One answer, what the tests read of it.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn answer(resp: ureq::http::Response<ureq::Body>) -> Answer {
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

/// A GET with the API key in its header, as a key holder's client sends it.
fn get_with_key(server: &Server, path: &str) -> Answer {
    answer(
        client()
            .get(&format!("http://{}{path}", server.addr))
            .header("Authorization", &format!("Bearer {KEY}"))
            .call()
            .unwrap(),
    )
}

fn get(server: &Server, path: &str, cookie: Option<&str>) -> Answer {
    let mut r = client().get(&format!("http://{}{path}", server.addr));
    if let Some(c) = cookie {
        r = r.header("Cookie", c);
    }
    answer(r.call().unwrap())
}

/// A form post with these headers and fields.
fn post_form(server: &Server, path: &str, headers: &[(&str, &str)], form: &str) -> Answer {
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
fn sign_in(server: &Server, path: &str) -> String {
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

/// A new one-time path minted with the key.
/// A browser signed in to the server, reading one workspace's pages.
struct Signed<'a> {
    server: &'a Server,
    cookie: String,
    /// The workspace's id in the page paths.
    id: i64,
}

impl<'a> Signed<'a> {
    fn open(server: &'a Server) -> Signed<'a> {
        Signed {
            cookie: sign_in(server, &server.web_signin),
            id: workspace_id(server),
            server,
        }
    }

    /// `/web/w/{id}{rest}` with the session's cookie.
    fn page(&self, rest: &str) -> Answer {
        get(
            self.server,
            &format!("/web/w/{}{rest}", self.id),
            Some(&self.cookie),
        )
    }
}

fn mint(server: &Server) -> String {
    let (status, v) = post(server, "/api/v1/web/signin", &serde_json::json!({}));
    assert_eq!(status, 200, "{v}");
    v["url"].as_str().unwrap().to_string()
}

/// The CSRF token of the page's sign-out form.
fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    page[at..].split('"').next().unwrap().to_string()
}

#[test]
fn the_printed_url_signs_in_once_and_the_cookie_opens_the_pages() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    assert!(
        server.web_signin.starts_with("/web/signin?token="),
        "{}",
        server.web_signin
    );
    let cookie = sign_in(&server, &server.web_signin);

    let page = get(&server, "/web/", Some(&cookie));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Workspaces"), "{}", page.body);
    assert!(!page.body.contains(KEY), "the key is never in a page");
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("http"),
        "{csp}"
    );
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "only the server's own script file runs: {csp}"
    );
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    assert!(
        page.header("server-timing")
            .is_some_and(|t| t.starts_with("app;dur="))
    );

    // The same URL again: spent.
    let again = get(&server, &server.web_signin, None);
    assert_eq!(again.status, 401, "{}", again.body);
    assert!(again.body.contains("already used"), "{}", again.body);
    assert!(again.header("set-cookie").is_none());
    // A token minted by the key holder works once too.
    let minted = mint(&server);
    let other = sign_in(&server, &minted);
    assert_ne!(other, cookie, "each sign-in is its own session");
    assert_eq!(get(&server, &minted, None).status, 401);
}

#[test]
fn an_expired_sign_in_url_is_refused() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_WEB_SIGNIN_TTL_MS", "1")]);
    // The token was minted before the server printed it: past this, it is older than
    // its 1 ms.
    let received = Instant::now();
    while received.elapsed() < Duration::from_millis(5) {
        std::thread::yield_now();
    }
    let a = get(&server, &server.web_signin, None);
    assert_eq!(a.status, 401, "{}", a.body);
    assert!(a.body.contains("expired"), "{}", a.body);
    assert!(a.header("set-cookie").is_none());
}

#[test]
fn a_page_without_a_signed_in_cookie_is_refused() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    for cookie in [
        None,
        Some("loci_session=made-up"),
        Some("loci_session="),
        // The API key is no session.
        Some(&format!("loci_session={KEY}") as &str),
    ] {
        let a = get(&server, "/web/", cookie);
        assert_eq!(a.status, 401, "{cookie:?}: {}", a.body);
        assert!(a.body.contains("unauthorized"), "{}", a.body);
        assert!(a.header("content-security-policy").is_some());
    }
    // Nor does the key in a header open a page.
    let a = get_with_key(&server, "/web/");
    assert_eq!(a.status, 401, "{}", a.body);
    // And a session cookie opens no JSON route.
    let cookie = sign_in(&server, &server.web_signin);
    let a = get(&server, "/api/v1/workspaces", Some(&cookie));
    assert_eq!(a.status, 401, "{}", a.body);
}

/// A refused post: what it is, its headers, its form, the error kind it gets.
type Refusal<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str);

#[test]
fn a_form_posted_from_another_origin_or_without_the_csrf_token_is_refused() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let cookie = sign_in(&server, &server.web_signin);
    let page = get(&server, "/web/", Some(&cookie));
    let csrf = csrf_of(&page.body);
    let origin = format!("http://{}", server.addr);
    let good_form = format!("csrf={csrf}");
    let refusals: [Refusal; 5] = [
        // Another site: the loopback guard.
        (
            "evil site",
            vec![("Cookie", &cookie), ("Origin", "http://evil.example")],
            &good_form,
            "forbidden_host",
        ),
        // Another loopback origin (another local server's page).
        (
            "other port",
            vec![("Cookie", &cookie), ("Origin", "http://127.0.0.1:1")],
            &good_form,
            "cross_origin",
        ),
        // No Origin at all.
        (
            "no origin",
            vec![("Cookie", &cookie)],
            &good_form,
            "cross_origin",
        ),
        // The right origin, the browser says cross-site.
        (
            "cross-site fetch",
            vec![
                ("Cookie", &cookie),
                ("Origin", &origin),
                ("Sec-Fetch-Site", "cross-site"),
            ],
            &good_form,
            "cross_origin",
        ),
        // The right origin without the session's token.
        (
            "no token",
            vec![("Cookie", &cookie), ("Origin", &origin)],
            "csrf=wrong",
            "cross_origin",
        ),
    ];
    for (what, headers, form, kind) in refusals {
        let a = post_form(&server, "/web/signout", &headers, form);
        assert_eq!(a.status, 403, "{what}: {}", a.body);
        assert!(a.body.contains(kind), "{what}: {}", a.body);
        // The session is untouched.
        assert_eq!(get(&server, "/web/", Some(&cookie)).status, 200, "{what}");
    }
    let a = post_form(
        &server,
        "/web/signout",
        &[("Cookie", &cookie), ("Origin", &origin)],
        &good_form,
    );
    assert_eq!(a.status, 303, "{}", a.body);
    assert!(
        a.header("set-cookie")
            .is_some_and(|c| c.contains("Max-Age=0"))
    );
    assert_eq!(
        get(&server, "/web/", Some(&cookie)).status,
        401,
        "signed out"
    );
}

#[test]
fn an_api_key_in_a_url_is_refused_on_every_route() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    for path in [
        format!("/api/v1/workspaces?key={KEY}"),
        "/api/v1/workspaces?api_key=anything".to_string(),
        format!("/api/v1/workspaces?q={KEY}"),
        format!("/health?access_token={KEY}"),
        format!("/web/?x={KEY}"),
        // The key passed off as a sign-in token.
        format!("/web/signin?token={KEY}"),
    ] {
        let a = get_with_key(&server, &path);
        assert_eq!(a.status, 400, "{path}: {}", a.body);
        assert!(a.body.contains("key_in_url"), "{path}: {}", a.body);
    }
}

#[test]
fn pages_say_their_server_time() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let cookie = sign_in(&server, &server.web_signin);
    let id = workspace_id(&server);
    for path in [
        "/web/".to_string(),
        format!("/web/w/{id}/search?q=parse*"),
        format!("/web/w/{id}/search?q=helper&mode=text"),
        format!("/web/w/{id}/symbol?s=helper"),
        format!("/web/w/{id}/symbol?s=helper&dir=callers&depth=3"),
    ] {
        let a = get(&server, &path, Some(&cookie));
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        let ms: f64 = a
            .header("server-timing")
            .and_then(|t| t.strip_prefix("app;dur="))
            .and_then(|d| d.parse().ok())
            .unwrap_or_else(|| panic!("{path}: no server time"));
        eprintln!("web page {path}: {ms:.1} ms server time");
        // How fast is the benches' business (docs/web.md); a test only checks the
        // figure is one.
        assert!(ms.is_finite() && ms >= 0.0, "{path}: {ms} ms");
    }
}

#[test]
fn the_impact_page_draws_and_lists_what_depends_on_a_file_or_a_definition() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let web = Signed::open(&server);
    let id = web.id;

    // A definition: `helper` is called by `parse_config`, called by `load` and `main`.
    let page = web.page("/impact?target=helper&depth=3");
    assert_eq!(page.status, 200, "{}", page.body);
    for name in ["parse_config", "Settings::load", "main"] {
        assert!(page.body.contains(name), "{name} in {}", page.body);
    }
    assert!(page.body.contains("depth 1: 1"), "{}", page.body);
    assert!(page.body.contains("<svg"), "a graph: {}", page.body);
    assert!(
        page.body
            .contains(&format!("/web/w/{id}/symbol?s=src%2Flib.rs%3A1")),
        "each node links to its symbol page: {}",
        page.body
    );
    // Depth 1 reaches only the direct caller.
    let shallow = web.page("/impact?target=helper&depth=1");
    assert!(shallow.body.contains("parse_config"), "{}", shallow.body);
    assert!(!shallow.body.contains("Settings::load"), "{}", shallow.body);

    // A file: what depends on src/lib.rs (main.rs calls into it).
    let file = web.page("/impact?target=src%2Flib.rs");
    assert_eq!(file.status, 200, "{}", file.body);
    assert!(file.body.contains("main"), "{}", file.body);

    // The symbol page links here; no target shows the form; a missing one is a 404.
    let symbol = web.page("/symbol?s=helper");
    assert!(
        symbol
            .body
            .contains(&format!("/web/w/{id}/impact?target=src%2Flib.rs")),
        "{}",
        symbol.body
    );
    let form = web.page("/impact");
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(form.body.contains("name=\"target\""), "{}", form.body);
    let missing = web.page("/impact?target=no_such_thing");
    assert_eq!(missing.status, 404, "{}", missing.body);
    // Without a session: refused like every page.
    assert_eq!(
        get(&server, &format!("/web/w/{id}/impact?target=helper"), None).status,
        401
    );
}

#[test]
fn the_changes_page_shows_what_a_diff_changes_and_who_it_reaches() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let web = Signed::open(&server);
    let id = web.id;

    // Outside git: the page says so, with the API's status.
    let outside = web.page("/changes");
    assert_eq!(outside.status, 409, "{}", outside.body);
    assert!(outside.body.contains("git"), "{}", outside.body);

    env.git(&["init", "-q"]);
    env.git(&["add", "src"]);
    env.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "-m",
        "one",
    ]);
    // `helper`'s body changes in the working tree.
    env.write(&[("src/lib.rs", &lib_with_helper_changed())]);
    let page = web.page("/changes");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("HEAD"), "{}", page.body);
    assert!(page.body.contains("src/lib.rs"), "{}", page.body);
    assert!(page.body.contains(">modified<"), "{}", page.body);
    assert!(page.body.contains(">changed<"), "{}", page.body);
    assert!(
        page.body.contains(">helper<"),
        "the changed definition: {}",
        page.body
    );
    assert!(
        page.body.contains(">parse_config<"),
        "its caller: {}",
        page.body
    );
    assert!(
        page.body
            .contains(&format!("/web/w/{id}/impact?target=src%2Flib.rs%3A2")),
        "a link to its impact: {}",
        page.body
    );
    // A revision the repository lacks is the API's 404.
    let missing = web.page("/changes?rev=no-such-rev");
    assert_eq!(missing.status, 404, "{}", missing.body);
}

#[test]
fn a_symbol_page_and_its_impact_show_the_memories_linked_to_it_stale_once_it_changes() {
    let env = indexed();
    remember_about_helper(&env);
    let server = start(&env, &[], &[]);
    let web = Signed::open(&server);

    let symbol = web.page("/symbol?s=helper");
    assert_eq!(symbol.status, 200, "{}", symbol.body);
    assert!(symbol.body.contains("helper-is-one"), "{}", symbol.body);
    assert!(!symbol.body.contains(">stale<"), "fresh: {}", symbol.body);
    // Its caller's page does not show it as its own.
    let caller = web.page("/symbol?s=parse_config");
    assert!(!caller.body.contains("helper-is-one"), "{}", caller.body);
    // Its impact page lists it too.
    let impact = web.page("/impact?target=helper");
    assert!(impact.body.contains("helper-is-one"), "{}", impact.body);

    // `helper` changes: the same pages mark the memory stale and say why.
    env.write(&[("src/lib.rs", &lib_with_helper_changed())]);
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 0, "{out}");
    let stale = web.page("/symbol?s=helper");
    assert!(stale.body.contains(">stale<"), "{}", stale.body);
    assert!(
        stale.body.contains("changed since it was linked"),
        "{}",
        stale.body
    );
}

#[test]
fn the_memory_pages_list_filter_and_show_links_and_version_diffs() {
    let env = indexed();
    for args in [
        vec![
            "remember",
            "--name",
            "helper-is-one",
            "--type",
            "decision",
            "We keep `helper` returning one.",
        ],
        vec!["remember", "--name", "a-note", "Nothing about code."],
        vec![
            "memory",
            "edit",
            "helper-is-one",
            "We keep `helper` returning one.\nCallers count on it.",
        ],
    ] {
        let (code, out) = env.json(&args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    let server = start(&env, &[], &[]);
    let web = Signed::open(&server);
    let id = web.id;

    let all = web.page("/memories");
    assert_eq!(all.status, 200, "{}", all.body);
    assert!(
        all.body.contains(">helper-is-one<") && all.body.contains(">a-note<"),
        "{}",
        all.body
    );
    let decisions = web.page("/memories?type=decision");
    assert!(
        decisions.body.contains(">helper-is-one<"),
        "{}",
        decisions.body
    );
    assert!(
        !decisions.body.contains(">a-note<"),
        "filtered: {}",
        decisions.body
    );
    let bad = web.page("/memories?type=nonsense");
    assert_eq!(bad.status, 400, "{}", bad.body);

    let one = web.page("/memory?name=helper-is-one");
    assert_eq!(one.status, 200, "{}", one.body);
    assert!(
        one.body.contains("Callers count on it."),
        "the body: {}",
        one.body
    );
    assert!(one.body.contains("Code links (1)"), "{}", one.body);
    assert!(
        one.body
            .contains(&format!("/web/w/{id}/symbol?s=src%2Flib.rs%3A2")),
        "the link goes to helper's page: {}",
        one.body
    );
    assert!(one.body.contains("Versions (2)"), "{}", one.body);
    assert!(
        one.body.contains("<ins>+ Callers count on it.</ins>"),
        "the second version's diff: {}",
        one.body
    );
    let missing = web.page("/memory?name=no-such-memory");
    assert_eq!(missing.status, 404, "{}", missing.body);
    // The symbol page's memory links here.
    let symbol = web.page("/symbol?s=helper");
    assert!(
        symbol
            .body
            .contains(&format!("/web/w/{id}/memory?namespace=")),
        "{}",
        symbol.body
    );
}

#[test]
fn a_memory_page_draws_its_entities_and_labelled_relationships_capped_with_a_note() {
    let env = indexed();
    let crowd: Vec<serde_json::Value> = (0..45)
        .map(|i| serde_json::json!({"name": format!("Part{i:02}"), "type": "concept"}))
        .collect();
    let crowd = serde_json::to_string(&crowd).unwrap();
    for args in [
        vec![
            "remember",
            "--name",
            "ledger",
            "The ledger writes invoices to billing.",
            "--entities",
            r#"[{"name": "Ledger", "type": "service"}, {"name": "Billing", "type": "service"}, {"name": "Alone", "type": "concept"}]"#,
            "--relationships",
            r#"[{"source": "Ledger", "target": "Billing", "relation": "writes_to"}]"#,
        ],
        vec![
            "remember",
            "--name",
            "crowded",
            "Many parts.",
            "--entities",
            &crowd,
        ],
    ] {
        let (code, out) = env.json(&args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    let server = start(&env, &[], &[]);
    let web = Signed::open(&server);

    let page = web.page("/memory?name=ledger");
    assert_eq!(page.status, 200, "{}", page.body);
    let body = &page.body;
    let svg = &body[body.find("<svg").expect("an SVG graph")..body.find("</svg>").unwrap()];
    assert!(
        svg.contains("aria-label=\"The entities of ledger and their relationships\""),
        "{svg}"
    );
    for entity in ["Ledger", "Billing", "Alone"] {
        assert!(
            svg.contains(&format!("<title>{entity}</title>"))
                && svg.contains(&format!(">{entity}</text></a>")),
            "{entity} is a node: {svg}"
        );
    }
    assert!(
        svg.contains("class=\"edge-label\"") && svg.contains(">writes_to</text>"),
        "the edge says its relation: {svg}"
    );
    assert!(svg.contains("marker-end"), "the edge points: {svg}");
    // The same, as text.
    assert!(body.contains("Relationships (1)"), "{body}");
    assert!(
        body.contains("Ledger — <em>writes_to</em> → Billing"),
        "{body}"
    );
    assert!(!body.contains("not drawn"), "{body}");

    let crowded = web.page("/memory?name=crowded");
    assert_eq!(crowded.status, 200, "{}", crowded.body);
    let body = &crowded.body;
    let svg = &body[body.find("<svg").expect("an SVG graph")..body.find("</svg>").unwrap()];
    assert_eq!(
        svg.matches("<a href=\"#entity-").count(),
        40,
        "capped: {svg}"
    );
    assert!(body.contains("5 more not drawn"), "{body}");
    assert!(
        body.contains(">Part44</li>") && body.contains(">Part00</li>"),
        "every entity still listed: {body}"
    );
}

/// A live stream of the workspaces page, read on its own thread: each event in order,
/// then `None` once the server ends the stream.
struct Events {
    rx: std::sync::mpsc::Receiver<Option<(String, String)>>,
}

/// A `row` event: the workspace's row as the page renders it, and the status line.
struct LiveRow {
    html: String,
    says: String,
}

impl Events {
    /// Opens the stream with the session `cookie`, asserting it is admitted.
    fn open(server: &Server, cookie: &str) -> Events {
        // No overall timeout: the stream is meant to stay open.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let resp = agent
            .get(&format!("http://{}/web/events/workspaces", server.addr))
            .header("Cookie", cookie)
            .header("Accept", "text/event-stream")
            .call()
            .unwrap();
        assert_eq!(resp.status(), 200);
        let kind = resp
            .headers()
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = resp.into_body().into_reader();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let (mut event, mut data) = (String::new(), String::new());
            for line in std::io::BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                if line.is_empty() {
                    if !data.is_empty() && tx.send(Some((event.clone(), data.clone()))).is_err() {
                        return;
                    }
                    event.clear();
                    data.clear();
                } else if let Some(e) = line.strip_prefix("event:") {
                    event = e.trim().to_string();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.strip_prefix(' ').unwrap_or(d));
                }
            }
            let _ = tx.send(None);
        });
        Events { rx }
    }

    /// The next event, within `limit`.
    fn next(&self, limit: Duration) -> Option<(String, String)> {
        self.rx
            .recv_timeout(limit)
            .unwrap_or_else(|e| panic!("no event within {limit:?}: {e}"))
    }

    /// Reads rows until workspace `id`'s row satisfies `ok` (30 s at most).
    fn row_until(&self, id: i64, what: &str, ok: impl Fn(&str) -> bool) -> LiveRow {
        let until = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        loop {
            let left = until.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no row {what}; rows seen: {seen:#?}");
            let Some((event, data)) = self.next(left) else {
                panic!("the stream ended before a row {what}; rows seen: {seen:#?}")
            };
            if event != "row" {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&data).unwrap();
            let html = v["html"].as_str().unwrap().to_string();
            if v["id"] == id && ok(&html) {
                let says = v["says"].as_str().unwrap().to_string();
                return LiveRow { html, says };
            }
            seen.push(html);
        }
    }

    /// Asserts the server ends the stream within `limit` (events before the end are
    /// skipped).
    fn ends_within(&self, limit: Duration) {
        let until = Instant::now() + limit;
        while let Some(_event) = self.next(until.saturating_duration_since(Instant::now())) {}
    }
}

#[test]
fn the_workspaces_page_follows_a_run_live_and_its_stream_ends_at_sign_out() {
    let env = Env::new();
    let HeldRuns {
        server,
        base,
        release,
        tools: _tools,
    } = serve_held(&env);
    let (id, _) = mounted_workspace(&server, base.path(), "team/app", 3);
    let cookie = sign_in(&server, &server.web_signin);

    // The page names its stream and loads the one built-in script, which the policy
    // allows (and nothing inline).
    let page = get(&server, "/web/", Some(&cookie));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains(&format!("<tr data-ws=\"{id}\">")),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("data-live=\"/web/events/workspaces\""),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("<script src=\"/web/static/live.js\" defer>"),
        "{}",
        page.body
    );
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe"), "{csp}");
    let script = get(&server, "/web/static/live.js", None);
    assert_eq!(script.status, 200);
    assert!(
        script
            .header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(script.body.contains("new EventSource("), "{}", script.body);
    // No stream without a session.
    for cookie in [None, Some("loci_session=made-up")] {
        let a = get(&server, "/web/events/workspaces", cookie);
        assert_eq!(a.status, 401, "{cookie:?}: {}", a.body);
    }

    let events = Events::open(&server, &cookie);
    events.row_until(id, "not indexed yet", |h| {
        h.contains("<span class=\"state\">unindexed</span>")
    });
    let (status, started) = post(
        &server,
        &format!("/api/v1/workspaces/{id}/index"),
        &json!({}),
    );
    assert_eq!(status, 202, "{started}");
    // The run's progress arrives without asking: the held run reported 3 of 10.
    let working = events.row_until(id, "with the run's progress", |h| {
        h.contains("index: 3 of 10 files parsed (30 %)")
    });
    assert!(
        working.html.contains("<progress max=\"10\" value=\"3\">"),
        "{}",
        working.html
    );
    assert_eq!(working.says, "app: index: 3 of 10 files parsed (30 %)");
    // A page read now renders the same progress.
    let page = get(&server, "/web/", Some(&cookie));
    assert!(
        page.body.contains("index: 3 of 10 files parsed (30 %)"),
        "{}",
        page.body
    );

    std::fs::write(&release, "").unwrap();
    let clean = events.row_until(id, "clean after the run", |h| {
        h.contains("<span class=\"state\">clean</span>")
    });
    assert!(!clean.html.contains("files parsed"), "{}", clean.html);
    assert!(
        clean.html.contains("<td>3</td>"),
        "three files: {}",
        clean.html
    );
    assert!(
        clean.html.contains("rust 3"),
        "the languages: {}",
        clean.html
    );
    assert_eq!(clean.says, "app: clean");

    // Signing out ends the stream.
    let csrf = csrf_of(&page.body);
    let origin = format!("http://{}", server.addr);
    let out = post_form(
        &server,
        "/web/signout",
        &[("Cookie", &cookie), ("Origin", &origin)],
        &format!("csrf={csrf}"),
    );
    assert_eq!(out.status, 303, "{}", out.body);
    events.ends_within(Duration::from_secs(30));
}

#[test]
fn live_streams_are_bounded_and_end_when_the_server_stops() {
    let env = indexed();
    let mut server = start(&env, &[], &[]);
    let cookie = sign_in(&server, &server.web_signin);
    let id = workspace_id(&server);
    let streams: Vec<Events> = (0..16)
        .map(|_| {
            let events = Events::open(&server, &cookie);
            events.row_until(id, "on a new stream", |h| h.contains("clean"));
            events
        })
        .collect();
    // One more is refused with the error table's code, as a page.
    let refused = get(&server, "/web/events/workspaces", Some(&cookie));
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(
        refused.body.contains("too_many_sessions"),
        "{}",
        refused.body
    );
    assert_eq!(
        get(&server, "/web/", Some(&cookie)).status,
        200,
        "pages still answer"
    );

    // SIGTERM: the streams end at once rather than holding the drain to its deadline
    // (past it the server would give up on them and exit anyway).
    let stopped = Instant::now();
    let pid = rustix::process::Pid::from_raw(server.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = wait_exit(&mut server.child, Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    assert!(
        stopped.elapsed() < loci_server::DRAIN,
        "the live streams held the stop for {:?}",
        stopped.elapsed()
    );
    for events in &streams {
        events.ends_within(Duration::from_secs(5));
    }
}
