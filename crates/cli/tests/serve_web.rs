//! The web view's sign-in and its security (issue #32, item 1), over real sockets with
//! a real HTTP client: the one-time URL `loci serve` prints signs a browser in once,
//! and only while it is fresh; the session cookie is `HttpOnly; SameSite=Strict`; a
//! page without a session, a form posted from another origin or without the CSRF
//! token, and an API key in any URL are refused; every page carries a
//! Content-Security-Policy that allows no inline script, no script but the server's
//! own and no other origin, and its server time (`Server-Timing`). The live stream is
//! `serve_web_live.rs`; the browser half is `web_browser.rs`.

use crate::serve_support;

use std::time::{Duration, Instant};

use serve_support::web::*;
use serve_support::*;

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

/// A new one-time path minted with the key.
fn mint(server: &Server) -> String {
    let (status, v) = post(server, "/api/v1/web/signin", &serde_json::json!({}));
    assert_eq!(status, 200, "{v}");
    v["url"].as_str().unwrap().to_string()
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
    // All three drawn: the count is exact.
    assert!(!page.body.contains("at least"), "{}", page.body);
    // One node drawn: the walk stops after depth 1, so the count is a lower bound and
    // the page offers more; the symbol page's callers graph does the same.
    for capped in [
        "/impact?target=helper&depth=3&nodes=1",
        "/symbol?s=helper&dir=callers&depth=3&nodes=1",
    ] {
        let page = web.page(capped);
        assert_eq!(page.status, 200, "{capped}: {}", page.body);
        assert!(page.body.contains("at least 1 "), "{capped}: {}", page.body);
        assert!(page.body.contains("Show more"), "{capped}: {}", page.body);
        assert!(
            page.body.contains("parse_config"),
            "{capped}: {}",
            page.body
        );
    }
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
