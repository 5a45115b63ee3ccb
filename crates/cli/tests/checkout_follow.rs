//! An index that follows the checkout (#34 item 3), over real git repositories and the
//! real binary: the commit a run saw is recorded and named by every answer; a branch
//! switch, a detached `HEAD`, a reset or a commit is noticed by the next status (drift)
//! and synced by reading only the files that differ; a watcher follows `HEAD` by
//! itself; a folder outside git has no commit and no error.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Env, wait_until};
use crate::git_support::git;

/// Files on `main`; the `feature` branch changes 2 of them, adds 1 and deletes 1.
const FILES: usize = 20;

/// A repository with `main` (checked out) and `feature`; their commits.
fn two_branches(env: &Env) -> (String, String) {
    for i in 0..FILES {
        env.write(&[(
            &format!("pkg/m{i}.py"),
            &format!("def f{i}():\n    return {i}\n"),
        )]);
    }
    let g = |args: &[&str]| git(env.root(), args).trim().to_string();
    g(&["init", "-q", "-b", "main"]);
    g(&["add", "-A"]);
    g(&["commit", "-q", "-m", "main"]);
    let main = g(&["rev-parse", "HEAD"]);
    g(&["checkout", "-q", "-b", "feature"]);
    env.write(&[
        ("pkg/m0.py", "def f0():\n    return 100\n"),
        ("pkg/m1.py", "def f1():\n    return f0()\n"),
        ("pkg/extra.py", "def extra():\n    return 1\n"),
    ]);
    std::fs::remove_file(env.root().join("pkg/m2.py")).unwrap();
    g(&["add", "-A"]);
    g(&["commit", "-q", "-m", "feature"]);
    let feature = g(&["rev-parse", "HEAD"]);
    g(&["checkout", "-q", "main"]);
    (main, feature)
}

/// The freshness stamp of an answer (`loci find f5`).
fn stamp(env: &Env) -> Value {
    let (code, v) = env.json(&["find", "f5"]);
    assert_eq!(code, 0, "{v}");
    v["index"].clone()
}

fn sync(env: &Env) -> Value {
    let (code, v) = env.json(&["sync"]);
    assert_eq!(code, 0, "{v}");
    v
}

fn status_state(env: &Env) -> Value {
    let (_, v) = env.json(&["status"]);
    v
}

#[test]
fn index_records_its_commit_and_a_branch_switch_rereads_only_the_differing_files() {
    let env = Env::new();
    let (main, feature) = two_branches(&env);
    let (code, v) = env.json(&["index", env.root().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let s = stamp(&env);
    assert_eq!(s["commit"]["id"], main.as_str(), "{s}");
    assert_eq!(s["commit"]["short"], &main[..7], "{s}");
    assert_eq!(s["commit"]["branch"], "main", "{s}");
    assert_eq!(
        s["commit"]["modified"], false,
        "the marker folder is no change: {s}"
    );
    assert!(s["commit"].get("head_now").is_none(), "{s}");

    // The checkout moves HEAD: answers say the index is behind, status calls it drift.
    git(env.root(), &["checkout", "-q", "feature"]);
    let s = stamp(&env);
    assert_eq!(s["commit"]["id"], main.as_str(), "{s}");
    assert_eq!(s["commit"]["head_now"], feature.as_str(), "{s}");
    let st = status_state(&env);
    assert_eq!(st["state"], "drift", "{st}");
    assert_eq!(st["facts"]["drift"]["head_moved"], 1, "{st}");
    assert_eq!(st["facts"]["drift"]["changed"], 2, "{st}");

    // The sync reads the 2 changed and 1 added files, removes 1, and names feature.
    let r = sync(&env);
    assert_eq!(r["files_parsed"], 2 + 1, "{r}");
    assert_eq!(r["files_removed"], 1, "{r}");
    assert_eq!(r["files_unchanged"], (FILES - 3) as u64, "{r}");
    let s = stamp(&env);
    assert_eq!(s["commit"]["id"], feature.as_str(), "{s}");
    assert_eq!(s["commit"]["branch"], "feature", "{s}");
    assert!(s["commit"].get("head_now").is_none(), "{s}");

    // And back: the same few files, nothing else.
    git(env.root(), &["checkout", "-q", "main"]);
    let r = sync(&env);
    assert_eq!(
        r["files_parsed"],
        2 + 1,
        "the two changed and the re-added one: {r}"
    );
    assert_eq!(r["files_removed"], 1, "{r}");
    assert_eq!(stamp(&env)["commit"]["id"], main.as_str());
    assert_eq!(status_state(&env)["state"], "clean");
}

#[test]
fn detached_head_reset_and_a_commit_without_file_changes_are_followed() {
    let env = Env::new();
    let (main, feature) = two_branches(&env);
    let (code, v) = env.json(&["index", env.root().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");

    // Detached at feature's commit: no branch.
    git(env.root(), &["checkout", "-q", "--detach", &feature]);
    let r = sync(&env);
    assert_eq!(r["files_parsed"], 3, "{r}");
    let s = stamp(&env);
    assert_eq!(s["commit"]["id"], feature.as_str(), "{s}");
    assert!(s["commit"].get("branch").is_none(), "detached: {s}");

    // Back on main, then `reset --hard` moves main itself to feature's commit.
    git(env.root(), &["checkout", "-q", "main"]);
    sync(&env);
    git(env.root(), &["reset", "-q", "--hard", &feature]);
    let r = sync(&env);
    assert_eq!(r["files_parsed"], 3, "{r}");
    let s = stamp(&env);
    assert_eq!(s["commit"]["id"], feature.as_str(), "{s}");
    assert_eq!(s["commit"]["branch"], "main", "{s}");

    // A commit that changes no file moves HEAD only: drift, and a sync that reads
    // nothing but records the new commit.
    git(
        env.root(),
        &["commit", "-q", "--allow-empty", "-m", "empty"],
    );
    let empty = git(env.root(), &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(status_state(&env)["state"], "drift");
    let r = sync(&env);
    assert_eq!(r["files_parsed"], 0, "{r}");
    assert_eq!(r["wrote"], true, "the commit is recorded: {r}");
    assert_eq!(stamp(&env)["commit"]["id"], empty.as_str());
    assert_eq!(status_state(&env)["state"], "clean");
    let r = sync(&env);
    assert_eq!(r["wrote"], false, "nothing moved, nothing written: {r}");

    // An uncommitted edit indexed: the commit is named as modified.
    env.write(&[("pkg/m5.py", "def f5():\n    return 55\n")]);
    sync(&env);
    let s = stamp(&env);
    assert_eq!(s["commit"]["id"], empty.as_str(), "{s}");
    assert_eq!(s["commit"]["modified"], true, "{s}");
    let _ = main;
}

#[test]
fn a_folder_outside_git_has_no_commit_and_no_error() {
    let env = Env::new();
    env.write(&[("a.py", "def f5():\n    return 5\n")]);
    let (code, v) = env.json(&["index", env.root().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let s = stamp(&env);
    assert_eq!(s["state"], "complete", "{s}");
    assert!(s.get("commit").is_none(), "{s}");
    assert_eq!(status_state(&env)["state"], "clean");
}

#[test]
fn a_watcher_follows_head_within_its_deadline() {
    let env = Env::new();
    let (main, feature) = two_branches(&env);
    let mut watcher = env
        .cmd()
        .args(["watch", "--json"])
        .env("LOCI_LIFECYCLE_WATCH_DEBOUNCE_MS", "100")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let out = watcher.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let event = || -> Value {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a watch event within 30 s");
        serde_json::from_str(&line).unwrap()
    };
    let first = event();
    assert_eq!(first["trigger"], "catch_up", "{first}");
    assert_eq!(stamp(&env)["commit"]["id"], main.as_str());

    // A checkout: the stamp names the new commit within the deadline.
    git(env.root(), &["checkout", "-q", "feature"]);
    wait_until("the stamp to name feature", Duration::from_secs(10), || {
        stamp(&env)["commit"]["id"] == feature.as_str()
    });

    // A commit that changes no file is followed too (only HEAD's ref moved).
    git(
        env.root(),
        &["commit", "-q", "--allow-empty", "-m", "empty"],
    );
    let empty = git(env.root(), &["rev-parse", "HEAD"]).trim().to_string();
    wait_until(
        "the stamp to name the empty commit",
        Duration::from_secs(10),
        || stamp(&env)["commit"]["id"] == empty.as_str(),
    );
    let _ = watcher.kill();
    let _ = watcher.wait();
}
