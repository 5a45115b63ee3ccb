//! `loci watch` keeps the vectors of `search --meaning` fresh in the background: the
//! real binary, the real model (see `memory_vectors::model_source`), a real vectors
//! file. A function added while watching is found by meaning once the background embed
//! ran; a workspace that never ran `loci embed` gets no vectors file; without a model
//! watch says so once and goes on syncing.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{Env, wait_until};
use crate::meaning::{FILES, embed, indexed};
use crate::memory_vectors::{install_model, model_source};

/// A running `loci watch --json` and every line it printed so far.
struct Watcher {
    child: Child,
    lines: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Watcher {
    fn start(env: &Env, home: Option<&std::path::Path>) -> Watcher {
        let mut cmd = env.cmd();
        if let Some(home) = home {
            cmd.env("LOCI_HOME", home);
        }
        let mut child = cmd
            .args(["watch", "--json"])
            .env("LOCI_LIFECYCLE_WATCH_DEBOUNCE_MS", "100")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let v = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                sink.lock().unwrap().push(v);
            }
        });
        Watcher { child, lines }
    }

    fn lines(&self) -> Vec<serde_json::Value> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits for the `n`th sync line of `trigger`.
    fn wait_syncs(&self, trigger: &str, n: usize) {
        wait_until(
            &format!("{n} `{trigger}` syncs"),
            Duration::from_secs(60),
            || {
                self.lines()
                    .iter()
                    .filter(|l| l["trigger"] == trigger)
                    .count()
                    >= n
            },
        );
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An indexed workspace with the model installed (and embedded when `embedded`);
/// `None` when no model is at hand (the test is skipped, failing under `CI`).
fn workspace(embedded: bool) -> Option<Env> {
    let source = model_source()?;
    let env = indexed();
    install_model(&env, &source);
    if embedded {
        embed(&env);
    }
    Some(env)
}

fn search(env: &Env, query: &str) -> serde_json::Value {
    let (rc, out) = env.json(&["search", "--meaning", query, "--meaning-only"]);
    assert_eq!(rc, 0, "{out}");
    out
}

#[test]
fn a_function_added_while_watching_is_embedded_in_the_background_and_found_by_meaning() {
    let Some(env) = workspace(true) else {
        return;
    };
    let watcher = Watcher::start(&env, None);
    watcher.wait_syncs("catch_up", 1);

    std::fs::write(
        env.root().join("stats/mean.py"),
        format!(
            "{}\n\ndef send_welcome_email(user):\n    message = compose_greeting(user.name)\n    smtp_deliver(user.email_address, message)\n",
            FILES[3].1
        ),
    )
    .unwrap();
    let query = "mail a greeting to a newly registered account";
    let mut last = serde_json::Value::Null;
    wait_until(
        "the new function found by meaning, nothing unembedded",
        Duration::from_secs(120),
        || {
            last = search(&env, query);
            last["unembedded_files"] == 0 && last["hits"][0]["name"] == "send_welcome_email"
        },
    );
    let top = &last["hits"][0];
    assert_eq!(top["path"], "stats/mean.py", "{last}");
    let lines = watcher.lines();
    let done = lines
        .iter()
        .find(|l| l["embed"] == "done")
        .unwrap_or_else(|| panic!("no embed line: {lines:?}"));
    assert_eq!(done["files_embedded"], 1, "only the changed file: {done}");
    assert_eq!(done["embedded"], 3, "its three functions: {done}");
    assert!(lines.iter().all(|l| l["embed"] != "failed"), "{lines:?}");
}

#[test]
fn a_workspace_that_never_ran_embed_gets_no_vectors_file_from_watch() {
    let Some(env) = workspace(false) else {
        return;
    };
    let vectors = env.root().join(".loci/meaning.db");
    let watcher = Watcher::start(&env, None);
    watcher.wait_syncs("catch_up", 1);
    env.write(&[("extra.py", "def added():\n    return 1\n")]);
    watcher.wait_syncs("change", 1);
    let lines = watcher.lines();
    assert!(!vectors.exists(), "watch made a vectors file: {lines:?}");
    assert!(lines.iter().all(|l| l.get("embed").is_none()), "{lines:?}");
}

#[test]
fn without_a_model_watch_says_so_once_and_keeps_syncing() {
    let Some(env) = workspace(true) else {
        return;
    };
    // Another LOCI_HOME, holding no model; the index is found by its `.loci/` marker.
    let bare = tempfile::tempdir().unwrap();
    let watcher = Watcher::start(&env, Some(bare.path()));
    watcher.wait_syncs("catch_up", 1);
    wait_until("the no-model line", Duration::from_secs(60), || {
        watcher.lines().iter().any(|l| l["embed"] == "no_model")
    });
    env.write(&[("extra.py", "def added():\n    return 1\n")]);
    watcher.wait_syncs("change", 1);
    env.write(&[("extra2.py", "def added_too():\n    return 2\n")]);
    watcher.wait_syncs("change", 2);
    let lines = watcher.lines();
    let said = lines.iter().filter(|l| l["embed"] == "no_model").count();
    assert_eq!(said, 1, "said once: {lines:?}");
    assert!(
        lines
            .iter()
            .filter(|l| l.get("trigger").is_some())
            .all(|l| l["error"].is_null()),
        "every sync clean: {lines:?}"
    );
}
