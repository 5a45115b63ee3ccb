//! `loci changes` through every front end, over a real git repository and index: the
//! CLI's JSON and exit codes, the HTTP route and its statuses, the MCP tool and its
//! errors — one answer, and each error from its row of the one table.

use serde_json::{Value, json};

use crate::common::Env;
use crate::git_support::git;
use crate::mcp_support::{Stdio_, loci};
use crate::serve_support::mcp::error_kind;
use crate::serve_support::{post, start, workspace_id};

/// A committed, indexed Python project with a memory linked to `target`, then an
/// uncommitted edit of `target`'s body.
fn edited_project() -> Env {
    let env = Env::new();
    env.write(&[
        ("pkg/core.py", "def target(x):\n    return x + 1\n"),
        (
            "pkg/app.py",
            "from pkg.core import target\n\n\ndef run():\n    return target(1)\n",
        ),
        (
            "tests/test_core.py",
            "from pkg.core import target\n\n\ndef test_target():\n    assert target(1) == 2\n",
        ),
    ]);
    git(env.root(), &["init", "-q", "-b", "main"]);
    git(env.root(), &["add", "-A"]);
    git(env.root(), &["commit", "-q", "-m", "one"]);
    let (code, v) = env.json(&["index", env.root().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = env.json(&[
        "remember",
        "--name",
        "core-note",
        "--link",
        "pkg/core.py:target",
        "target adds one",
    ]);
    assert_eq!(code, 0, "{v}");
    env.write(&[("pkg/core.py", "def target(x):\n    return x + 2\n")]);
    env
}

fn check_answer(v: &Value) {
    let s = &v["symbols"][0];
    assert_eq!(s["change"], "changed", "{v}");
    assert_eq!(s["qualified_name"], "target");
    assert_eq!(s["callers_total"], 2);
    assert_eq!(s["tests"][0]["qualified_name"], "test_target");
    assert_eq!(v["files"][0]["status"], "modified");
}

#[test]
fn the_cli_answers_the_diff_and_each_error_exits_with_its_row() {
    let env = edited_project();
    let (code, v) = env.json(&["changes"]);
    assert_eq!(code, 0, "{v}");
    check_answer(&v);
    assert_eq!(v["memories"][0]["name"], "core-note", "{v}");
    assert_eq!(v["base"]["label"], "HEAD");
    let (code, v) = env.json(&["changes", "no-such-branch"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (4, Some("not_found")),
        "{v}"
    );
    let (code, v) = env.json(&["changes", "HEAD", "--staged"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (2, Some("usage")),
        "{v}"
    );
    let (code, v) = env.json(&["changes", "--depth", "40"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (5, Some("invalid_input")),
        "{v}"
    );
    // Text output names the definition and its test.
    let out = env.cmd().args(["changes"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("changed  pkg/core.py:1 function target"),
        "{text}"
    );
    assert!(
        text.contains("tests: tests/test_core.py:4 test_target"),
        "{text}"
    );
    // A folder outside git: `not_a_repository`, exit 5.
    let plain = Env::new();
    plain.write(&[("a.py", "def a():\n    pass\n")]);
    let (code, _) = plain.json(&["index", plain.root().to_str().unwrap()]);
    assert_eq!(code, 0);
    let (code, v) = plain.json(&["changes"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (5, Some("not_a_repository")),
        "{v}"
    );
}

#[test]
fn http_and_mcp_answer_the_same_and_map_errors_to_their_statuses() {
    let env = edited_project();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let path = format!("/api/v1/workspaces/{id}/changes");
    let (status, v) = post(&server, &path, &json!({}));
    assert_eq!(status, 200, "{v}");
    check_answer(&v);
    let (status, v) = post(&server, &path, &json!({"rev": "no-such-branch"}));
    assert_eq!(
        (status, v["error"]["kind"].as_str()),
        (404, Some("not_found")),
        "{v}"
    );
    let (status, v) = post(&server, &path, &json!({"staged": true, "worktree": true}));
    assert_eq!(
        (status, v["head"]["label"].as_str()),
        (200, Some("index")),
        "{v}"
    );
    drop(server);

    let mut cmd = loci(env.home.path());
    cmd.arg("mcp").arg("--workspace").arg(env.root());
    let mut s = Stdio_::start(cmd);
    s.initialize();
    let r = s.call("changes", json!({"depth": "2"}));
    assert_eq!(error_kind(&r), None, "{r}");
    let sc = &r["structuredContent"];
    assert_eq!(sc["symbols"][0]["qualified_name"], "target", "{r}");
    assert_eq!(
        sc["symbols"][0]["tests"][0],
        "tests/test_core.py:4 test_target"
    );
    assert_eq!(sc["files"][0], "modified pkg/core.py +1 -1");
    assert_eq!(sc["memories"][0]["name"], "core-note");
    let r = s.call("changes", json!({"rev": "no-such-branch"}));
    assert_eq!(error_kind(&r).as_deref(), Some("not_found"), "{r}");
}
