//! The web view in a real browser (issue #32): Debian's `chromium`, driven through
//! `chromium-driver` (WebDriver), against the real `loci serve` on loopback. One
//! test walks what a person does — sign in through the one-time URL, search, open a
//! symbol, expand its callers graph, follow a node's link — and checks what they would
//! see: the text, where the links go, no console error (a CSP violation is one), no
//! request to another origin. Each page's screenshot is saved under `LOCI_WEB_SHOTS`
//! (`docs/screenshots/` keeps the README's). Without the browser the test fails under
//! CI (`CI` set) and is skipped with a notice elsewhere.

use crate::serve_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::{free_port, wait_until};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use serve_support::*;

const CHROMIUM: &str = "/usr/bin/chromium";
const DRIVER: &str = "/usr/bin/chromedriver";
const DRIVER_DEADLINE: Duration = Duration::from_secs(30);
/// How long a page may take to load after a click.
const PAGE_DEADLINE: Duration = Duration::from_secs(10);

/// A running chromedriver, killed on drop.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The browser and its driver, or `None` (skip) outside CI when they are missing.
fn browser_present() -> bool {
    let present = Path::new(CHROMIUM).exists() && Path::new(DRIVER).exists();
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "the browser tests need Debian's chromium and chromium-driver (`apt-get install chromium chromium-driver`; .ci/run installs them)"
        );
        eprintln!("skipped: no {CHROMIUM} or {DRIVER} (apt-get install chromium chromium-driver)");
    }
    present
}

/// Starts chromedriver on a free loopback port and waits until it says it is ready.
fn driver() -> Driver {
    let port = free_port();
    let child = Command::new(DRIVER)
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let d = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    wait_until("chromedriver to be ready", DRIVER_DEADLINE, || {
        agent()
            .get(&format!("{}/status", d.url))
            .call()
            .ok()
            .and_then(|r| r.into_body().read_json::<Value>().ok())
            .is_some_and(|v| v["value"]["ready"] == true)
    });
    d
}

async fn session(driver: &Driver) -> Client {
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", "--no-first-run", "--disable-extensions"]
        },
        "goog:loggingPrefs": {"browser": "ALL"}
    });
    let Value::Object(caps) = caps else {
        unreachable!()
    };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a browser session")
}

/// Where the screenshots go: `LOCI_WEB_SHOTS`, else a folder under the target dir.
fn shots_dir() -> PathBuf {
    let dir = std::env::var_os("LOCI_WEB_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("loci-web-shots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a person checks on each page, and the screenshot.
struct Walk<'a> {
    c: &'a Client,
    origin: String,
    driver: &'a Driver,
    shots: PathBuf,
}

impl Walk<'_> {
    async fn shot(&self, name: &str) {
        let png = self.c.screenshot().await.unwrap();
        std::fs::write(self.shots.join(format!("{name}.png")), png).unwrap();
    }

    /// The page's text, once it has a body: a click that submits a form returns while
    /// the next page may still be loading (its body not there yet, or gone stale).
    async fn text(&self) -> String {
        let until = std::time::Instant::now() + PAGE_DEADLINE;
        loop {
            let body = self
                .c
                .wait()
                .at_most(PAGE_DEADLINE)
                .for_element(Locator::Css("body"))
                .await;
            if let Ok(body) = body
                && let Ok(text) = body.text().await
            {
                return text;
            }
            assert!(
                std::time::Instant::now() < until,
                "no page body within {PAGE_DEADLINE:?}"
            );
        }
    }

    /// Waits until the address holds `lands` (a click that navigates may return first).
    async fn arrive(&self, lands: &str) {
        let until = std::time::Instant::now() + PAGE_DEADLINE;
        loop {
            let path = self.path().await;
            if path.contains(lands) {
                return;
            }
            assert!(
                std::time::Instant::now() < until,
                "not at {lands} within {PAGE_DEADLINE:?}: {path}"
            );
            tokio::task::yield_now().await;
        }
    }

    /// No console message at error level, no resource from another origin.
    async fn clean(&self, page: &str) {
        let sid = self.c.session_id().await.unwrap().expect("a session id");
        let logs: Value = agent()
            .post(&format!("{}/session/{sid}/se/log", self.driver.url))
            .send_json(json!({"type": "browser"}))
            .unwrap()
            .into_body()
            .read_json()
            .unwrap();
        let errors: Vec<&Value> = logs["value"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["level"] == "SEVERE")
            .collect();
        assert!(errors.is_empty(), "{page}: console errors {errors:?}");
        let resources = self
            .c
            .execute(
                "return performance.getEntriesByType('resource').map(e => e.name).concat([location.href]);",
                vec![],
            )
            .await
            .unwrap();
        for r in resources.as_array().unwrap() {
            let r = r.as_str().unwrap();
            assert!(
                r.starts_with(&self.origin),
                "{page}: a request to another origin: {r}"
            );
        }
    }

    /// Clicks the link that reads `text`, then checks the address holds `lands`.
    async fn follow(&self, text: &str, lands: &str) {
        self.c
            .find(Locator::LinkText(text))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        self.arrive(lands).await;
    }

    async fn path(&self) -> String {
        let u = self.c.current_url().await.unwrap();
        match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        }
    }
}

/// A fresh browser session on `server`'s pages, signed in through the one-time URL,
/// closed after `walk` has checked them.
fn browse(server: &Server, walk: impl AsyncFnOnce(&Walk<'_>)) {
    let driver = driver();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = session(&driver).await;
        let w = Walk {
            c: &c,
            origin: format!("http://{}", server.addr),
            driver: &driver,
            shots: shots_dir(),
        };
        // The token leaves the address bar: the sign-in redirects to the workspaces.
        c.goto(&format!("{}{}", w.origin, server.web_signin))
            .await
            .unwrap();
        assert_eq!(w.path().await, "/web/");
        walk(&w).await;
        c.close().await.unwrap();
    });
}

#[test]
fn a_person_signs_in_searches_opens_a_symbol_and_follows_its_callers() {
    if !browser_present() {
        return;
    }
    let env = indexed();
    let server = start(&env, &[], &[]);
    browse(&server, async |w| {
        let c = w.c;
        assert_eq!(c.title().await.unwrap(), "Workspaces — loci");
        let text = w.text().await;
        let name = env
            .root()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(text.contains(&name), "{text}");
        assert!(
            text.to_lowercase().contains("clean"),
            "the index's state: {text}"
        );
        assert!(
            !c.source().await.unwrap().contains(KEY),
            "the key is never in a page"
        );
        w.clean("workspaces").await;
        w.shot("workspaces").await;

        // Open the workspace, search for a definition.
        w.follow(&name, "/search").await;
        let q = c.find(Locator::Css("input[name=q]")).await.unwrap();
        q.send_keys("parse*").await.unwrap();
        c.find(Locator::Css("form.search button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        w.arrive("q=parse").await;
        let text = w.text().await;
        assert!(text.contains("parse_config"), "{text}");
        assert!(text.contains("src/lib.rs:1"), "{text}");
        w.clean("search").await;
        w.shot("search").await;

        // Open the symbol: its source, its callers.
        w.follow("parse_config", "/symbol?s=src%2Flib.rs%3A1").await;
        let text = w.text().await;
        assert!(
            text.contains("pub fn parse_config() -> u32 { helper() }"),
            "{text}"
        );
        assert!(text.contains("Callers to depth 1"), "{text}");
        w.clean("symbol").await;
        w.shot("symbol").await;

        // Expand the callers graph to depth 3: `Settings::load` calls it; every node
        // (the symbol itself too) is a link.
        w.follow("3", "depth=3").await;
        assert!(w.text().await.contains("Callers to depth 3"));
        let nodes = c.find_all(Locator::Css("svg.graph a")).await.unwrap();
        let mut titles = Vec::new();
        for n in &nodes {
            titles.push(
                n.find(Locator::Css("title"))
                    .await
                    .unwrap()
                    .html(true)
                    .await
                    .unwrap(),
            );
        }
        assert_eq!(titles, ["parse_config", "Settings::load"], "{titles:?}");
        w.clean("callers graph").await;
        w.shot("callers-graph").await;

        // Follow the node of `load` to its own page.
        let load = c
            .find(Locator::XPath(
                "//*[local-name()='a'][*[local-name()='title' and contains(., 'load')]]",
            ))
            .await
            .unwrap();
        let href = load.attr("href").await.unwrap().unwrap();
        assert!(href.starts_with("/web/w/"), "{href}");
        load.click().await.unwrap();
        assert_eq!(w.path().await, href);
        assert_eq!(c.title().await.unwrap(), "Settings::load — loci");
        assert!(
            w.text()
                .await
                .contains("pub fn load() -> u32 { parse_config() }")
        );
        w.clean("followed link").await;

        // Keyboard: the first Tab reaches the skip link.
        let active = c
            .execute("document.body.focus(); return document.querySelector('a.skip').getAttribute('href');", vec![])
            .await
            .unwrap();
        assert_eq!(active, "#main");
    });
}

#[test]
fn a_person_opens_a_stale_memory_on_a_symbol_page_and_follows_its_impact() {
    if !browser_present() {
        return;
    }
    let env = indexed();
    remember_about_helper(&env);
    env.write(&[("src/lib.rs", &lib_with_helper_changed())]);
    let (code, out) = env.json(&["index"]);
    assert_eq!(code, 0, "{out}");
    let server = start(&env, &[], &[]);
    browse(&server, async |w| {
        let c = w.c;
        let id = workspace_id(&server);
        c.goto(&format!("{}/web/w/{id}/symbol?s=helper", w.origin))
            .await
            .unwrap();
        let text = w.text().await;
        assert!(text.contains("helper-is-one"), "the linked memory: {text}");
        // The state word is shown in capitals by the style sheet.
        assert!(
            text.to_lowercase().contains("· stale"),
            "marked stale: {text}"
        );
        assert!(
            text.contains("changed since it was linked"),
            "and why: {text}"
        );
        w.shot("stale-memory").await;
        w.clean("symbol page with a stale memory").await;

        // Its impact: the caller, the caller's callers, and the same memory.
        w.follow("this definition", "/impact?target=src%2Flib.rs%3A2")
            .await;
        assert_eq!(c.title().await.unwrap(), "Impact of src/lib.rs:2 — loci");
        let text = w.text().await;
        for name in ["parse_config", "Settings::load", "helper-is-one"] {
            assert!(text.contains(name), "{name} in {text}");
        }
        w.shot("impact").await;
        w.clean("impact page").await;
    });
}

/// Waits, within 30 s, until `cond` holds in the page.
async fn until_page(what: &str, mut cond: impl AsyncFnMut() -> bool) {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while !cond().await {
        assert!(
            std::time::Instant::now() < until,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn a_person_watches_a_workspace_index_live_without_reloading() {
    if !browser_present() {
        return;
    }
    let env = crate::common::Env::new();
    let HeldRuns {
        server,
        base,
        release,
        tools: _tools,
    } = serve_held(&env);
    let (id, _) = mounted_workspace(&server, base.path(), "team/app", 3);
    browse(&server, async |w| {
        let c = w.c;
        let row = format!("tr[data-ws=\"{id}\"]");
        // As read on screen, lower-cased (the state's style shows it in capitals).
        let row_text = async || match c.find(Locator::Css(&row)).await {
            Ok(r) => r.text().await.unwrap_or_default().to_lowercase(),
            Err(_) => String::new(),
        };
        until_page("the live stream to open", async || {
            c.execute(
                "return document.documentElement.getAttribute('data-live');",
                vec![],
            )
            .await
            .unwrap()
                == "on"
        })
        .await;
        // A mark that a reload would wipe.
        c.execute("window.loadedOnce = true;", vec![])
            .await
            .unwrap();
        assert!(
            row_text().await.contains("unindexed"),
            "{}",
            row_text().await
        );

        let (status, started) = post(
            &server,
            &format!("/api/v1/workspaces/{id}/index"),
            &json!({}),
        );
        assert_eq!(status, 202, "{started}");
        until_page("the run's progress in the row", async || {
            row_text().await.contains("3 of 10 files parsed")
        })
        .await;
        let bar = c
            .find(Locator::Css(&format!("{row} progress")))
            .await
            .unwrap();
        assert_eq!(bar.attr("value").await.unwrap().as_deref(), Some("3"));
        w.clean("workspaces while indexing").await;
        w.shot("workspaces-live").await;

        std::fs::write(&release, "").unwrap();
        until_page("the row to say clean", async || {
            let t = row_text().await;
            t.contains("clean") && !t.contains("files parsed")
        })
        .await;
        let kept = c
            .execute("return window.loadedOnce === true;", vec![])
            .await
            .unwrap();
        assert_eq!(kept, true, "the page was not reloaded");
        let status_line = c
            .find(Locator::Id("live-status"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(status_line, "app: clean");
        w.clean("workspaces after the run").await;
    });
}
