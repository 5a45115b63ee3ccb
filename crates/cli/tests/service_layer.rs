//! The service layer seen through the binary: one rule for where an index lives, the
//! error table's rows as exit codes, pages with totals and cursors, and freshness on
//! every answer.

use crate::common;

use common::Env;
use serde_json::Value;

const REPO: &[(&str, &str)] = &[
    (
        "src/lib.rs",
        "pub mod more;\npub fn helper() -> u32 { 1 }\npub fn a() -> u32 { helper() }\npub fn b() -> u32 { helper() }\npub fn c() -> u32 { helper() }\n",
    ),
    (
        "src/more.rs",
        "use crate::helper;\npub fn d() -> u32 { helper() }\n",
    ),
];

/// The table's row for a kind, read from the API itself (no number is spelled here).
fn code_of(kind: &str) -> i32 {
    let k = loci_api::ErrorKind::from_name(kind).unwrap_or_else(|| panic!("no kind {kind}"));
    i32::from(k.exit().code())
}

#[test]
fn an_index_outside_the_tree_is_queried_synced_watched_and_rebuilt_in_place() {
    let env = Env::new();
    env.write(REPO);
    let elsewhere = tempfile::tempdir().unwrap();
    let index = elsewhere.path().join("idx/index.db");
    let root = env.root().to_str().unwrap().to_string();
    let (code, report) = env.json(&["index", &root, "--index-path", index.to_str().unwrap()]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["index_path"], index.to_str().unwrap());
    assert!(
        !env.root().join(".loci").exists(),
        "no index inside the tree"
    );

    // Queried: the registry places the index.
    let (code, found) = env.json(&["callers", "helper"]);
    assert_eq!(code, 0, "{found}");
    assert_eq!(found["reached"].as_array().unwrap().len(), 4, "{found}");

    // Synced in place: a new caller appears, no second index is made.
    env.write(&[(
        "src/more.rs",
        "use crate::helper;\npub fn d() -> u32 { helper() }\npub fn e() -> u32 { helper() }\n",
    )]);
    let (code, report) = env.json(&["sync"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["index_path"], index.to_str().unwrap());
    let (_, found) = env.json(&["callers", "helper"]);
    assert_eq!(found["reached"].as_array().unwrap().len(), 5, "{found}");

    // Status finds it through the registry.
    let (_, status) = env.json(&["status"]);
    assert_eq!(
        status["facts"]["index_path"],
        index.to_str().unwrap(),
        "{status}"
    );

    // Rebuilt in place (consent given).
    let (code, report) = env.json(&["rebuild", "--yes"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["index_path"], index.to_str().unwrap());

    // Watched in place: the watcher's catch-up sync writes the outside index.
    let mut watcher = env
        .cmd()
        .args(["watch", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = watcher.stdout.take().unwrap();
    let first = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        line
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !first.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = watcher.kill();
    let _ = watcher.wait();
    let line = first.join().unwrap();
    let event: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert!(event.get("error").is_none_or(Value::is_null), "{event}");
    assert!(
        !env.root().join(".loci").exists(),
        "nothing ever wrote inside the tree"
    );
}

#[test]
fn lists_page_with_a_total_and_a_cursor_and_say_how_fresh_they_are() {
    let env = Env::new();
    env.write(REPO);
    assert_eq!(env.json(&["index"]).0, 0);
    let (code, first) = env.json(&["callers", "helper", "--limit", "3"]);
    assert_eq!(code, 0, "{first}");
    assert_eq!(first["reached"].as_array().unwrap().len(), 3);
    assert_eq!(first["total"], 4);
    assert_eq!(first["truncated"], true);
    assert_eq!(first["index"]["state"], "complete");
    assert_eq!(first["index"]["stale_files"], 0);
    let cursor = first["next_cursor"].as_str().unwrap().to_string();
    let (_, second) = env.json(&["callers", "helper", "--limit", "3", "--cursor", &cursor]);
    assert_eq!(second["reached"].as_array().unwrap().len(), 1, "{second}");
    assert_eq!(second["truncated"], false);
    assert!(second.get("next_cursor").is_none(), "{second}");
    let mut all: Vec<String> = first["reached"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["reached"].as_array().unwrap())
        .map(|r| r["symbol"]["name"].as_str().unwrap().to_string())
        .collect();
    all.sort();
    assert_eq!(all, ["a", "b", "c", "d"]);
}

#[test]
fn every_failure_the_cli_can_meet_exits_with_its_row_of_the_table() {
    let env = Env::new();
    env.write(REPO);
    env.write(&[("src/dup.rs", "pub fn a() {}\n"), ("notes.txt", "x")]);
    // Before an index exists.
    let (code, out) = env.json(&["find", "a"]);
    assert_eq!(out["error"]["kind"], "no_index", "{out}");
    assert_eq!(code, code_of("no_index"));
    assert_eq!(env.json(&["index"]).0, 0);
    let cases: &[(&[&str], &str)] = &[
        (&["def", "nothing_like_this"], "not_found"),
        (&["callers", "a"], "ambiguous"),
        (&["find", "x", "--kind", "gizmo"], "invalid_input"),
        (
            &["find", "x", "--limit", "18446744073709551615"],
            "limit_exceeded",
        ),
        (&["find", "x", "--limit", "0"], "limit_exceeded"),
        (&["find", "x", "--cursor", "nope"], "invalid_input"),
        (&["query", "DELETE FROM files"], "not_read_only"),
        (&["query", "SELECT 1; SELECT 2"], "multiple_statements"),
        (&["query", "SELEKT 1"], "syntax"),
        (
            &["query", "SELECT ?1", "--params", "{nope"],
            "invalid_params",
        ),
        (&["rebuild"], "consent_required"),
        (&["index", "notes.txt"], "not_a_directory"),
        (&["index", "missing/dir"], "not_found"),
        (&["no-such-command"], "usage"),
    ];
    for (args, kind) in cases {
        let (code, out) = env.json(args);
        assert_eq!(out["error"]["kind"], *kind, "{args:?}: {out}");
        assert_eq!(code, code_of(kind), "{args:?}: {out}");
        assert_eq!(out["error"]["code"], code_of(kind), "{args:?}: {out}");
        assert!(out["error"]["message"].is_string(), "{args:?}: {out}");
    }
}

#[test]
fn an_ambiguity_error_shows_the_first_candidates_and_the_count() {
    let env = Env::new();
    let files: Vec<(String, String)> = (0..30)
        .map(|i| (format!("src/m{i}.rs"), "pub fn init() {}\n".to_string()))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    env.write(&refs);
    assert_eq!(env.json(&["index"]).0, 0);
    let (code, out) = env.json(&["callers", "init"]);
    assert_eq!(code, code_of("ambiguous"));
    let detail = &out["error"]["detail"];
    assert_eq!(detail["candidate_count"], 30, "{out}");
    assert_eq!(
        detail["candidates"].as_array().unwrap().len(),
        loci_api::AMBIGUOUS_SHOWN
    );
}

#[test]
fn find_with_no_match_is_an_empty_answer_in_text_and_json_alike() {
    let env = Env::new();
    env.write(REPO);
    assert_eq!(env.json(&["index"]).0, 0);
    let (code, out) = env.json(&["find", "zzz_nothing"]);
    assert_eq!(code, 0);
    assert_eq!(out["symbols"], serde_json::json!([]));
    assert_eq!(out["total"], 0);
    let text = env.cmd().args(["find", "zzz_nothing"]).output().unwrap();
    assert_eq!(text.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&text.stdout).contains("no definition matches"));
}

#[test]
fn sigterm_ends_a_command_with_the_interrupted_row_and_a_json_error() {
    let env = Env::new();
    env.write(REPO);
    assert_eq!(env.json(&["index"]).0, 0);
    let mut watcher = env
        .cmd()
        .args(["watch", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = watcher.stdout.take().unwrap();
    // The first line is the catch-up sync: the watcher is running.
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut all = String::new();
        let _ = stdout.read_to_string(&mut all);
        all
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline
        && loci_store::index_path_for(env.root())
            .parent()
            .map(|d| !d.join("watch.lock").exists())
            .unwrap_or(true)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(watcher.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let status = watcher.wait().unwrap();
    let out = reader.join().unwrap();
    assert_eq!(status.code(), Some(code_of("interrupted")), "{out}");
    let last = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>();
    let tail = last.join("\n");
    assert!(tail.contains("\"interrupted\""), "{tail}");
}

/// The top-level keys of each command's JSON, as docs/cli.md gives them.
#[test]
fn every_query_answers_with_the_keys_docs_cli_md_gives_it() {
    let env = Env::new();
    env.write(REPO);
    assert_eq!(env.json(&["index"]).0, 0);
    let page = ["limit", "total", "total_exact", "truncated", "index"];
    const TRAVERSAL: [&str; 5] = [
        "targets",
        "target_symbols",
        "reached",
        "unresolved",
        "name_only_left_out",
    ];
    let with_page = |items: &[&'static str]| -> Vec<&'static str> {
        let mut v: Vec<&'static str> = items.to_vec();
        v.extend(page);
        v.sort();
        v
    };
    let cases: &[(&[&str], Vec<&str>)] = &[
        (&["find", "helper"], with_page(&["symbols"])),
        (&["def", "helper"], with_page(&["symbols"])),
        (
            &["refs", "helper"],
            with_page(&["target", "refs", "unresolved"]),
        ),
        (&["callers", "helper"], with_page(&TRAVERSAL)),
        (&["callees", "a"], with_page(&TRAVERSAL)),
        (
            &["impact", "src/lib.rs"],
            with_page(&[&TRAVERSAL[..], &["memories"]].concat()),
        ),
        (&["outline", "src/lib.rs"], with_page(&["path", "symbols"])),
        (&["search", "helper"], with_page(&["hits"])),
        (&["list"], vec!["workspaces"]),
    ];
    for (args, want) in cases {
        let (code, out) = env.json(args);
        assert_eq!(code, 0, "{args:?}: {out}");
        let mut keys: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "next_cursor")
            .collect();
        keys.sort();
        assert_eq!(&keys, want, "{args:?}: {out}");
    }
    let (_, stats) = env.json(&["stats"]);
    for key in [
        "files",
        "lines",
        "symbols",
        "edges",
        "refs",
        "unresolved_refs",
        "languages",
        "kinds",
        "edge_kinds",
        "confidence",
        "state",
        "index",
    ] {
        assert!(stats.get(key).is_some(), "stats lacks {key}: {stats}");
    }
}

/// A read that starts no child ends on SIGTERM with the `interrupted` row too (through a
/// plain handler, without a signal thread). The read is held writing its answer (240 KB
/// of text) to a pipe nobody drains; the handler writes the error to stderr (text mode)
/// and exits with the row's code.
#[test]
fn sigterm_ends_a_blocked_read_with_the_interrupted_row_and_its_error() {
    let env = Env::new();
    let many: String = (0..4000)
        .map(|i| format!("pub fn needle_{i}() {{}}\n"))
        .collect();
    env.write(&[("src/lib.rs", many.as_str())]);
    assert_eq!(env.json(&["index"]).0, 0);
    let mut child = env
        .cmd()
        .args(["find", "needle_*", "--limit", "5000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the answer fills the pipe: the process sleeps in the kernel's
    // `pipe_write`, its signal handler long installed.
    let wchan = std::path::PathBuf::from(format!("/proc/{pid}/wchan"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(&wchan).map_or(true, |w| !w.contains("pipe_write")) {
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            panic!("the find never blocked writing its answer");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(code_of("interrupted")), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: interrupted by a signal"),
        "{stderr}"
    );
}

/// A candidate file that became a FIFO holds no read: the search opens files without
/// blocking and only regular ones, so it answers at once (without that file's hits).
#[test]
fn a_fifo_in_a_files_place_does_not_hold_a_search() {
    let env = Env::new();
    env.write(&[
        ("src/lib.rs", "pub fn needle_here() {}\n"),
        ("src/other.rs", "pub fn needle_here_too() {}\n"),
    ]);
    assert_eq!(env.json(&["index"]).0, 0);
    let file = env.root().join("src/lib.rs");
    std::fs::remove_file(&file).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &file,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (code, v) = env.json(&["search", "needle_here"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code, 0, "{v}");
    let text = v.to_string();
    assert!(text.contains("other.rs") && !text.contains("lib.rs"), "{v}");
}
