//! The web view's live workspaces page (issue #32): its server-sent events follow a
//! background run's progress, need a session, end at sign-out and when the server
//! stops, and are bounded. The browser half is `web_browser.rs`.

use crate::serve_support;

use std::time::{Duration, Instant};

use crate::common::Env;
use serde_json::json;
use serve_support::web::*;
use serve_support::*;

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
