//! Bad input gets a clear error and a documented exit code, never a panic; files the
//! indexer cannot use are skipped and reported with their reason.

use crate::common;

use common::Env;

#[test]
fn binary_large_invalid_utf8_symlink_loop_are_skipped_or_flagged() {
    let env = Env::new();
    env.write(&[("src/ok.py", "def fine():\n    return 1\n")]);
    let root = env.root();
    // A binary file with a source extension.
    std::fs::write(root.join("src/blob.c"), b"int x;\0\0\x01\x02binary").unwrap();
    // A 10 MB file (over the 1 MiB default).
    std::fs::write(root.join("src/huge.js"), "// x\n".repeat(2 * 1024 * 1024)).unwrap();
    // Invalid UTF-8 inside otherwise valid Python.
    std::fs::write(
        root.join("src/latin1.py"),
        b"def caf\xe9():\n    pass\ndef ok2():\n    pass\n",
    )
    .unwrap();
    // A symlink loop, and a link pointing at its own parent directory.
    std::os::unix::fs::symlink("loop_b.py", root.join("src/loop_a.py")).unwrap();
    std::os::unix::fs::symlink("loop_a.py", root.join("src/loop_b.py")).unwrap();
    std::os::unix::fs::symlink(".", root.join("src/self_dir")).unwrap();

    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["files_indexed"], 2, "{report}");
    let reasons: Vec<(String, String)> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (path, reason) in [
        ("src/blob.c", "binary"),
        ("src/huge.js", "too_large"),
        ("src/loop_a.py", "symlink_loop"),
        ("src/loop_b.py", "symlink_loop"),
        ("src/self_dir", "symlink_loop"),
    ] {
        assert!(
            reasons.contains(&(path.to_string(), reason.to_string())),
            "{path} not skipped as {reason}: {reasons:?}"
        );
    }
    assert_eq!(
        report["files_skipped"].as_u64().unwrap() as usize,
        reasons.len()
    );
    assert_eq!(report["lossy_files"], serde_json::json!(["src/latin1.py"]));
    // The lossy file's definitions are still there.
    let (code, found) = env.json(&["find", "ok2"]);
    assert_eq!(code, 0);
    assert_eq!(found["symbols"][0]["path"], "src/latin1.py");
}

#[test]
fn unreadable_file_is_skipped_with_its_reason() {
    let env = Env::new();
    env.write(&[
        ("a.py", "def a():\n    pass\n"),
        ("secret.py", "def s():\n    pass\n"),
    ]);
    let secret = env.root().join("secret.py");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = env.cmd();
    if rustix::process::geteuid().is_root() {
        // Root reads anything: drop to `nobody` so the permission bits mean something.
        for dir in [env.root(), env.home.path()] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        cmd = std::process::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(common::bin())
            .env("LOCI_HOME", env.home.path())
            .current_dir(env.root());
    }
    let out = cmd.args(["index", "--json"]).output().unwrap();
    let report = common::parse(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["files_indexed"], 1);
    let skipped = &report["skipped"][0];
    assert_eq!(skipped["path"], "secret.py");
    assert_eq!(skipped["reason"], "unreadable");
}

#[test]
fn missing_path_is_not_found_and_file_path_is_invalid_input() {
    let env = Env::new();
    env.write(&[("f.py", "x = 1\n")]);
    let (code, out) = env.json(&["index", "does/not/exist"]);
    assert_eq!(code, 4);
    assert_eq!(out["error"]["kind"], "not_found");
    assert_eq!(out["error"]["code"], 4);
    let (code, out) = env.json(&["index", "f.py"]);
    assert_eq!(code, 5);
    assert_eq!(out["error"]["kind"], "not_a_directory");
    assert!(out["error"]["message"].as_str().unwrap().contains("f.py"));
}

#[test]
fn usage_errors_exit_2_with_a_json_error() {
    let env = Env::new();
    let (code, out) = env.json(&["callers"]);
    assert_eq!(code, 2);
    assert_eq!(out["error"]["kind"], "usage");
    let (code, out) = env.json(&["callers", "x", "--depth", "0"]);
    assert_eq!(code, 2, "{out}");
    let (code, _) = env.json(&["no-such-command"]);
    assert_eq!(code, 2);
}

#[test]
fn a_file_size_cap_outside_its_range_is_a_usage_error_and_keeps_the_index() {
    let env = Env::new();
    env.write(&[("f.py", "def f():\n    pass\n")]);
    let (code, _) = env.json(&["index"]);
    assert_eq!(code, 0);
    let before = std::fs::read(env.root().join(".loci/index.db")).unwrap();
    for cap in ["0", "1073741825"] {
        let (code, out) = env.json(&["index", "--max-file-bytes", cap]);
        assert_eq!(code, 2, "{cap}: {out}");
        assert_eq!(out["error"]["kind"], "usage");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(cap) && message.contains("1..="),
            "{message}"
        );
    }
    let after = std::fs::read(env.root().join(".loci/index.db")).unwrap();
    assert!(before == after, "a refused index run touched the index");
}

#[test]
fn queries_without_an_index_say_so() {
    let env = Env::new();
    let (code, out) = env.json(&["find", "x"]);
    assert_eq!(code, 4);
    assert_eq!(out["error"]["kind"], "no_index");
    assert!(
        out["error"]["hint"]
            .as_str()
            .unwrap_or("")
            .contains("loci index")
            || out["error"]["message"]
                .as_str()
                .unwrap()
                .contains("loci index")
    );
}

#[test]
fn hostile_query_arguments_never_panic() {
    let env = Env::new();
    env.write(&[("a.py", "def a():\n    pass\n")]);
    assert_eq!(env.json(&["index"]).0, 0);
    let hostile = [
        "",
        ":",
        "::",
        "a:",
        ":a",
        "'; DROP TABLE symbols; --",
        "%",
        "*",
        "[",
        "\u{0}",
        "a\u{0}b",
        "..",
        "../../etc/passwd",
        "ﬁ",
        "🦀::🦀",
        &"x".repeat(100_000),
    ];
    for arg in hostile {
        for cmd in [
            "find", "def", "refs", "callers", "callees", "impact", "outline", "search",
        ] {
            let out = env.cmd().args([cmd, arg, "--json"]).output();
            let Ok(out) = out else { continue }; // an argv with NUL cannot be spawned at all
            let code = out.status.code().unwrap_or(-1);
            // 6 (`too_long`) only for the argument over the pattern limit.
            let allowed: &[i32] = if arg.len() > loci_index::graph::MAX_PATTERN_BYTES {
                &[4, 6]
            } else {
                &[0, 4, 5]
            };
            assert!(
                allowed.contains(&code),
                "{cmd} {:?} exited {code}: {}",
                arg.chars().take(40).collect::<String>(),
                String::from_utf8_lossy(&out.stdout)
            );
            let v = common::parse(&out);
            if code != 0 {
                assert!(v["error"]["message"].is_string());
            }
        }
    }
    // The index is intact afterwards.
    let (code, found) = env.json(&["find", "a"]);
    assert_eq!(code, 0);
    assert_eq!(found["symbols"].as_array().unwrap().len(), 1);
}

#[test]
fn max_file_bytes_comes_from_flag_then_layered_config() {
    let env = Env::new();
    env.write(&[
        ("small.py", "x = 1\n"),
        ("big.py", &format!("y = '{}'\n", "z".repeat(200))),
    ]);
    env.write(&[(".loci/config.toml", "[index]\nmaxFileBytes = 100\n")]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        report["skipped_by_reason"]["too_large"], 1,
        "workspace config applies: {report}"
    );
    // The environment layer overrides the workspace file.
    let out = env
        .cmd()
        .args(["index", "--json"])
        .env("LOCI_INDEX_MAX_FILE_BYTES", "100000")
        .output()
        .unwrap();
    let report = common::parse(&out);
    assert_eq!(
        report["files_indexed"], 2,
        "env overrides the file: {report}"
    );
    // The flag overrides everything.
    let (_, report) = env.json(&["index", "--max-file-bytes", "3"]);
    assert_eq!(report["files_indexed"], 0, "{report}");
}

#[test]
fn index_warns_about_an_invalid_config_value_and_uses_the_layer_below() {
    let env = Env::new();
    env.write(&[
        ("a.py", "x = 1\n"),
        (".loci/config.toml", "[index]\nmaxFileBytes = \"big\"\n"),
    ]);
    let out = env.cmd().args(["index", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("index.maxFileBytes"),
        "no warning naming the key: {stderr}"
    );
    assert_eq!(
        common::parse(&out)["files_indexed"],
        1,
        "the default limit applies"
    );
}

/// A file over `index.fileBudgetMs` is skipped as `timeout` and the rest indexed; the
/// budget comes from the layered config (an out-of-range value is named and the layer
/// below used); `loci status` and `loci stats` keep naming the file afterwards.
#[test]
fn a_file_over_its_time_budget_is_named_by_index_status_and_stats() {
    let env = Env::new();
    let line = "fn main() { let x = vec![1, 2, 3]; println!(\"{x:?}\"); }\n";
    env.write(&[
        ("ok.rs", "fn fine() {}\n"),
        ("big.rs", &line.repeat((1 << 20) / line.len() - 1)),
        (".loci/config.toml", "[index]\nfileBudgetMs = 10\n"),
    ]);
    let (code, report) = env.json(&["index"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["files_indexed"], 1, "{report}");
    assert_eq!(report["skipped_by_reason"]["timeout"], 1, "{report}");
    assert_eq!(report["skipped"][0]["path"], "big.rs");
    let detail = report["skipped"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("10ms") && detail.contains("index.fileBudgetMs"),
        "{detail}"
    );

    let (code, status) = env.json(&["status"]);
    assert_eq!(code, 0);
    assert_eq!(status["state"], "clean", "{status}");
    let skipped = &status["facts"]["skipped"];
    assert_eq!(skipped["total"], 1, "{status}");
    assert_eq!(skipped["by_reason"]["timeout"], 1);
    assert_eq!(skipped["files"][0]["path"], "big.rs");
    assert_eq!(skipped["files"][0]["reason"], "timeout");

    let (code, stats) = env.json(&["stats"]);
    assert_eq!(code, 0);
    assert_eq!(stats["skipped"]["files"][0]["detail"], detail, "{stats}");
    let out = env.cmd().args(["stats"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("skipped    1 (timeout=1)") && text.contains("big.rs (timeout: "),
        "{text}"
    );

    // Below the key's range: named on stderr, and the default (10 s) applies.
    env.write(&[(".loci/config.toml", "[index]\nfileBudgetMs = 1\n")]);
    std::fs::write(env.root().join("big.rs"), line.repeat(100)).unwrap();
    let out = env.cmd().args(["index", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("index.fileBudgetMs"), "{stderr}");
    let report = common::parse(&out);
    assert_eq!(report["files_indexed"], 2, "{report}");
    let (_, status) = env.json(&["status"]);
    assert!(status["facts"].get("skipped").is_none(), "{status}");
}
