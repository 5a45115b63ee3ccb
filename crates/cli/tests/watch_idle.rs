//! `loci watch` as a real process: idle means no sync at all, and one change means one sync.

use crate::lifecycle_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use lifecycle_support::*;

/// A running `loci watch --json` whose sync lines arrive on a channel.
struct Watcher {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Watcher {
    fn start(ws: &Ws) -> Watcher {
        Watcher::start_with(ws, &[])
    }

    fn start_with(ws: &Ws, envs: &[(&str, &std::path::Path)]) -> Watcher {
        let mut cmd = ws.cmd();
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd
            .args(["watch", "--json"])
            .env("LOCI_LIFECYCLE_WATCH_DEBOUNCE_MS", "100")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watcher { child, lines }
    }

    /// The next sync line within `limit`, if any.
    fn next_sync(&self, limit: Duration) -> Option<serde_json::Value> {
        let line = self.lines.recv_timeout(limit).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")))
    }

    /// Every sync line that arrives during `period`.
    fn syncs_during(&self, period: Duration) -> Vec<serde_json::Value> {
        let until = Instant::now() + period;
        let mut seen = Vec::new();
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match self.next_sync(left) {
                Some(sync) => seen.push(sync),
                None => break,
            }
        }
        seen
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn idle_watcher_never_syncs_and_each_change_syncs_once() {
    let ws = Ws::indexed();
    let watcher = Watcher::start(&ws);
    let first = watcher
        .next_sync(Duration::from_secs(30))
        .expect("the watcher's catch-up sync line");
    assert_eq!(first["trigger"], "catch_up", "{first}");

    // Nothing changes: thirty debounces go by without a sync.
    let idle = watcher.syncs_during(Duration::from_secs(3));
    assert!(idle.is_empty(), "an idle watcher synced: {idle:?}");

    // One source file changes: exactly one sync follows, and it parses that file.
    ws.write(&[("src/lib.py", "def helper():\n    return 2\n")]);
    let sync = watcher
        .next_sync(Duration::from_secs(30))
        .expect("a sync after the change");
    assert_eq!(
        (sync["trigger"].as_str(), sync["files_parsed"].as_u64()),
        (Some("change"), Some(1)),
        "{sync}"
    );
    let more = watcher.syncs_during(Duration::from_secs(2));
    assert!(more.is_empty(), "one change synced again: {more:?}");

    // A touch (new mtime, same bytes): one sync, which re-reads the file and parses nothing.
    let path = ws.root().join("src/app.py");
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(file);
    let sync = watcher
        .next_sync(Duration::from_secs(30))
        .expect("a sync after the touch");
    assert_eq!(sync["files_parsed"].as_u64(), Some(0), "{sync}");
    let more = watcher.syncs_during(Duration::from_secs(2));
    assert!(more.is_empty(), "one touch synced again: {more:?}");
}

#[test]
fn watcher_does_not_react_to_its_own_registry_inside_the_workspace() {
    let ws = Ws::indexed();
    // The registry (LOCI_HOME) inside the watched tree, as when watching one's home.
    let home = ws.root().join("loci-home");
    let watcher = Watcher::start_with(&ws, &[("LOCI_HOME", &home)]);
    watcher
        .next_sync(Duration::from_secs(30))
        .expect("the watcher's catch-up sync line");
    let idle = watcher.syncs_during(Duration::from_secs(2));
    assert!(idle.is_empty(), "an idle watcher synced: {idle:?}");
    // A sync that writes records the index in the registry: that write is not a change.
    ws.write(&[("src/lib.py", "def helper():\n    return 3\n")]);
    let sync = watcher
        .next_sync(Duration::from_secs(30))
        .expect("a sync after the change");
    assert_eq!(sync["wrote"], true, "{sync}");
    assert!(
        home.join("registry.db").exists(),
        "the sync recorded the index in {}",
        home.display()
    );
    let more = watcher.syncs_during(Duration::from_secs(2));
    assert!(more.is_empty(), "the registry write synced again: {more:?}");
}
