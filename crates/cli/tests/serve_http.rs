//! `loci serve` end to end: the real binary on a free loopback port, a real index, a
//! real HTTP client. (Here and not in crates/server/tests: only this package's tests
//! get the `loci` binary.)

use crate::common;
use crate::serve_support;

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

#[test]
fn health_answers_without_a_key() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let (status, body) = call(&server, "get", "/health", None, None);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn every_route_refuses_a_missing_or_wrong_key_with_401() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let unauthorized = ErrorKind::Unauthorized;
    for (method, path, body) in routes(&server, id) {
        if path == "/health" {
            continue;
        }
        for auth in [
            None,
            Some(("Authorization", "Bearer wrong-key")),
            Some(("Authorization", "Bearer test-key-012345678")),
            Some(("X-API-Key", "test-key-01234567890")),
            Some(("Authorization", "test-key-0123456789")),
        ] {
            let (status, text) = call(&server, &method, &path, body.as_ref(), auth);
            assert_eq!(
                status,
                unauthorized.http_status(),
                "{method} {path} {auth:?}: {text}"
            );
            assert_eq!(kind_of(&text), unauthorized.name(), "{text}");
        }
        // Both header forms of the right key pass, the scheme in any case (creation and
        // the picker then answer `no_root`: this server has no root).
        for auth in [
            bearer(),
            Some(("X-API-Key", KEY)),
            Some(("Authorization", "bearer test-key-0123456789")),
        ] {
            let (status, text) = call(&server, &method, &path, body.as_ref(), auth);
            assert!(
                with_key(&method, &path).contains(&status),
                "{method} {path} {auth:?}: {text}"
            );
        }
    }
}

#[test]
fn a_graph_read_over_http_returns_the_same_symbols_as_the_cli() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    for (op, body, args) in [
        ("find", json!({"pattern": "*"}), vec!["find", "*"]),
        (
            "def",
            json!({"symbol": "parse_config"}),
            vec!["def", "parse_config"],
        ),
    ] {
        let (status, text) = call(
            &server,
            "post",
            &format!("/api/v1/workspaces/{id}/{op}"),
            Some(&body),
            bearer(),
        );
        assert_eq!(status, 200, "{text}");
        let http: Value = serde_json::from_str(&text).unwrap();
        let (code, cli) = env.json(&args);
        assert_eq!(code, 0, "{cli}");
        assert!(!cli["symbols"].as_array().unwrap().is_empty(), "{cli}");
        assert_eq!(http["symbols"], cli["symbols"], "{op}");
        assert_eq!(http["page"], cli["page"], "{op}");
    }
    let (status, text) = call(
        &server,
        "post",
        &format!("/api/v1/workspaces/{id}/callers"),
        Some(&json!({"target": "helper"})),
        bearer(),
    );
    assert_eq!(status, 200, "{text}");
    let (_, cli) = env.json(&["callers", "helper"]);
    let http: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(http["reached"], cli["reached"]);
}

#[test]
fn errors_carry_the_status_and_envelope_of_their_kind() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    for (path, body, kind) in [
        (
            format!("/api/v1/workspaces/{id}/def"),
            json!({"symbol": "no_such_symbol"}),
            ErrorKind::NotFound,
        ),
        (
            format!("/api/v1/workspaces/{id}/find"),
            json!({"pattern": "x", "limit": 0}),
            ErrorKind::LimitExceeded,
        ),
        (
            format!("/api/v1/workspaces/{id}/callers"),
            json!({"target": "helper", "depth": 99}),
            ErrorKind::InvalidInput,
        ),
        (
            format!("/api/v1/workspaces/{id}/find"),
            json!({"nothing": 1}),
            ErrorKind::InvalidInput,
        ),
        (
            "/api/v1/workspaces/999999/find".to_string(),
            json!({"pattern": "x"}),
            ErrorKind::NotFound,
        ),
        (
            "/api/v1/workspaces/abc/find".to_string(),
            json!({"pattern": "x"}),
            ErrorKind::InvalidInput,
        ),
        (
            "/api/v1/nowhere".to_string(),
            json!({}),
            ErrorKind::NotFound,
        ),
    ] {
        let (status, text) = call(&server, "post", &path, Some(&body), bearer());
        assert_eq!(status, kind.http_status(), "{path} {body}: {text}");
        assert_eq!(kind_of(&text), kind.name(), "{text}");
    }
}

#[test]
fn a_foreign_host_or_origin_is_refused_with_403() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let forbidden = ErrorKind::ForbiddenHost;
    for headers in [
        "Host: evil.example",
        "Host: evil.example:8000",
        "Host: localhost.evil.example",
        "Host: 127.0.0.1\r\nOrigin: http://evil.example",
        "Host: 127.0.0.1\r\nOrigin: null",
    ] {
        let (status, body) = raw(
            &server.addr,
            &format!(
                "GET /api/v1/workspaces HTTP/1.1\r\n{headers}\r\nAuthorization: Bearer {KEY}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(status, forbidden.http_status(), "{headers}: {body}");
        assert_eq!(kind_of(&body), forbidden.name(), "{body}");
    }
    for headers in [
        "Host: localhost:1234",
        "Host: [::1]",
        "Host: 127.0.0.1\r\nOrigin: http://localhost:3000",
    ] {
        let (status, body) = raw(
            &server.addr,
            &format!(
                "GET /api/v1/workspaces HTTP/1.1\r\n{headers}\r\nAuthorization: Bearer {KEY}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(status, 200, "{headers}: {body}");
    }
}

#[test]
fn a_body_over_the_limit_is_refused_with_413() {
    let env = indexed();
    let server = start(&env, &[], &[("LOCI_API_MAX_BODY_BYTES", "1024")]);
    let id = workspace_id(&server);
    let big = json!({"pattern": "x".repeat(4096)});
    let (status, text) = call(
        &server,
        "post",
        &format!("/api/v1/workspaces/{id}/search"),
        Some(&big),
        bearer(),
    );
    assert_eq!(status, ErrorKind::TooLong.http_status(), "{text}");
    assert_eq!(kind_of(&text), ErrorKind::TooLong.name());
    assert!(text.contains("1024"), "the limit is named: {text}");
    // Under the limit, the same route answers.
    let (status, text) = call(
        &server,
        "post",
        &format!("/api/v1/workspaces/{id}/search"),
        Some(&json!({"pattern": "parse"})),
        bearer(),
    );
    assert_eq!(status, 200, "{text}");
}

#[test]
fn no_answer_of_any_route_contains_the_workspace_root() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let id = workspace_id(&server);
    let root = env.root().to_string_lossy().into_owned();
    let canonical = std::fs::canonicalize(env.root())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut checked = 0;
    let mut answers = Vec::new();
    for (method, path, body) in routes(&server, id) {
        answers.push((
            format!("{method} {path}"),
            call(&server, &method, &path, body.as_ref(), bearer()),
        ));
    }
    // Failures name things too: a missing file, symbol and workspace.
    for (path, body) in [
        ("outline", json!({"file": "src/missing.rs"})),
        (
            "outline",
            json!({"file": format!("{canonical}/src/lib.rs")}),
        ),
        ("def", json!({"symbol": "nothing_here"})),
        (
            "impact",
            json!({"target": format!("{canonical}/src/lib.rs")}),
        ),
        ("search", json!({"pattern": "(", "regex": true})),
    ] {
        let p = format!("/api/v1/workspaces/{id}/{path}");
        answers.push((
            format!("post {p} {body}"),
            call(&server, "post", &p, Some(&body), bearer()),
        ));
    }
    for (what, (status, text)) in &answers {
        assert!(*status < 500, "{what}: {status} {text}");
        // The documented exception: the loopback-only repositories routes exist to
        // name roots (serve_repositories.rs checks they do, and refuse other peers).
        if what.starts_with("get /api/v1/repositories") {
            continue;
        }
        for forbidden in [&root, &canonical] {
            assert!(
                !text.contains(forbidden.as_str()),
                "{what} answered the workspace root {forbidden}: {text}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 18);
}

/// Schemathesis' own defaults: a schema-valid request may be answered 2xx, 401, 403,
/// 404, 409 or 429 (a missing or conflicting resource), never 400, 412, 413 or 422
/// ("schema-valid request rejected": the schemas state every rule the server checks).
/// The only exemptions are what no JSON Schema can state, each named below: the grammar
/// of the SQL a `query` runs and of the regular expression a `search` compiles, the
/// server's configuration (LLM tools off, the operator's row limit), a rule across two
/// fields (a merge of a memory into itself), where a clone URL leads once resolved and
/// a segment's Unicode rules.
const SCHEMATHESIS_CONFIG: &str = r#"
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]

[[operations]]
include-operation-id = "search"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "400"]

# a meaning search on a workspace `loci embed` never ran in, on a server without the
# model: 412 `no_vectors` / `model_missing`; a query past 2,000 bytes (the schema
# counts characters): 413 `too_long`; one of white space alone by Rust's rule but not
# the schema's pattern: 400.
[[operations]]
include-operation-id = "search_meaning"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "400", "412", "413"]
checks.negative_data_rejection.expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "412", "413", "415", "422", "428", "429"]

# Rules no schema can state, each refused with its documented kind:
# the LLM tools are off on this server (`llm.allowSpawn`): 412 `capability_missing`
# (a remember with `extract: llm`, an enrich; an enrich names memories or `all`, not
# both and not neither, a rule across two fields: 400 `usage`);
[[operations]]
include-operation-id-regex = "^(user_)?memory_remember$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "412"]

[[operations]]
include-operation-id-regex = "^(user_)?memory_enrich$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "412", "400"]

# `from` and `into` naming the same memory (a rule across two fields): 400;
[[operations]]
include-operation-id-regex = "^(user_)?memory_merge$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "400"]

# `max_rows` past the operator's `limits.maxRows`: 422 `limit_exceeded`;
[[operations]]
include-operation-id = "query"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "400", "422"]

# a clone URL is refused by where it leads once resolved (a private or unreachable
# address: there is no network here) and git's answer: 400 `invalid_clone_url`, 422 `git`;
# a segment's rules (NFC, look-alikes of path syntax, `.`/`..`/`.git` components, no
# leading or doubled `/`) take the one ruler, not a pattern: 400 `invalid_segment`.
[[operations]]
include-operation-id = "create_workspace"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "400", "422"]

[[operations]]
include-operation-id = "fs"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "429", "400"]
"#;

fn on_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

#[test]
fn schemathesis_finds_no_failure_against_the_openapi_document() {
    let Some(st) = on_path("st").or_else(|| on_path("schemathesis")) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "schemathesis is not installed (pip install schemathesis) and CI is set"
        );
        eprintln!("skipped: schemathesis is not installed (pip install schemathesis)");
        return;
    };
    let env = indexed();
    // Real roots, so creation and the picker are fuzzed too (every folder lands inside
    // them).
    let base = tempfile::tempdir().unwrap();
    let managed = tempfile::tempdir().unwrap();
    let server = start(
        &env,
        &[],
        &[
            ("LOCI_PROJECTS_BASE", base.path().to_str().unwrap()),
            ("LOCI_MANAGED_ROOT", managed.path().to_str().unwrap()),
        ],
    );
    assert!(workspace_id(&server) > 0);
    let config = env.home.path().join("schemathesis.toml");
    std::fs::write(&config, SCHEMATHESIS_CONFIG).unwrap();
    // The maintenance runs (a first index, a rebuild) make a workspace's reads answer
    // 503 `indexing` while they build it, as documented: they are fuzzed in a second
    // pass of their own, so every route is covered and no read meets one.
    let runs = "^(index_workspace|sync_workspace|rebuild_workspace)$";
    for filter in [
        ["--exclude-operation-id-regex", runs],
        [
            "--include-operation-id-regex",
            "^(index_workspace|sync_workspace|rebuild_workspace|get_run|get_workspace|workspaces)$",
        ],
    ] {
        let reports = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(&st)
            .current_dir(reports.path())
            .arg("--config-file")
            .arg(&config)
            .args([
                "run",
                &format!("http://{}/api/v1/openapi.json", server.addr),
            ])
            .args(["--header", &format!("Authorization: Bearer {KEY}")])
            .args(["--checks", "all", "--max-examples", "20", "--workers", "1"])
            .args(["--seed", "1", "--no-color"])
            .args(filter)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = wait_exit(&mut child, Duration::from_secs(300));
        assert!(
            status.success(),
            "schemathesis found failures ({filter:?}):\n{out}"
        );
        assert!(out.contains("passed"), "{out}");
        assert!(!out.contains("Failed to extract data"), "{out}");
    }
}

#[test]
fn workspace_create_over_http_makes_the_folder_once_and_refuses_adversarial_segments() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), base.path().join("link")).unwrap();
    let base_text = base.path().to_string_lossy().into_owned();
    let server = start(&env, &[], &[("LOCI_PROJECTS_BASE", &base_text)]);
    let caps = get_json(&server, "/api/v1/capabilities");
    assert!(
        caps["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("workspace.create")),
        "{caps}"
    );
    let create = |body: Value| call(&server, "post", "/api/v1/workspaces", Some(&body), bearer());
    let mounted = |segment: &str| json!({"locator": {"kind": "mounted", "segment": segment}});

    let (status, first) = create(mounted("team/app"));
    assert_eq!(status, 200, "{first}");
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["action"], "initialized");
    assert_eq!(first["changed"], true);
    assert_eq!(
        first["locator"],
        json!({"kind": "mounted", "segment": "team/app"})
    );
    assert!(base.path().join("team/app/.git").is_dir());
    let (status, again) = create(mounted("team/app"));
    assert_eq!(status, 200, "{again}");
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["id"], first["id"], "one workspace, confirmed once");
    assert_eq!(again["changed"], false);
    assert_eq!(again["action"], "already_a_repository");
    let list = get_json(&server, "/api/v1/workspaces");
    assert_eq!(list["workspaces"][0]["id"], first["id"]);
    assert_eq!(list["workspaces"][0]["locator"], "mounted:team/app");

    let mut answers = Vec::new();
    for (segment, reason) in [
        ("../escape", "parent_dir_component"),
        ("/etc", "absolute"),
        ("a//b", "empty_component"),
        ("", "empty"),
        ("a\u{0}b", "nul"),
    ] {
        let (status, text) = create(mounted(segment));
        assert_eq!(
            status,
            ErrorKind::InvalidSegment.http_status(),
            "{segment:?}: {text}"
        );
        assert_eq!(kind_of(&text), ErrorKind::InvalidSegment.name(), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["error"]["detail"]["reason"], reason,
            "{segment:?}: {text}"
        );
        answers.push(text);
    }
    // Through a symlink out of the base: refused, and nothing is made outside.
    let (status, text) = create(mounted("link/inside"));
    assert!((400..500).contains(&status), "{text}");
    assert!(!outside.path().join("inside").exists());
    answers.push(text);
    // A path can never ride along, and an unknown kind is named.
    for body in [
        json!({"locator": {"kind": "mounted", "segment": "x", "path": "/tmp"}}),
        json!({"locator": {"kind": "elsewhere", "segment": "x"}}),
        json!({"locator": {"kind": "mounted", "segment": "x"}, "root": "/tmp"}),
    ] {
        let (status, text) = create(body.clone());
        assert_eq!(
            status,
            ErrorKind::InvalidInput.http_status(),
            "{body}: {text}"
        );
        answers.push(text);
    }
    // The managed root is not configured: named, with its variable.
    let (status, text) = create(json!({"locator": {"kind": "managed", "name": "app"}}));
    assert_eq!(status, ErrorKind::NoRoot.http_status(), "{text}");
    assert!(text.contains("LOCI_MANAGED_ROOT"), "{text}");
    answers.push(text);
    let canonical = std::fs::canonicalize(base.path())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for text in &answers {
        assert!(
            !text.contains(&base_text) && !text.contains(&canonical),
            "{text}"
        );
    }
}

#[test]
fn without_a_root_workspace_create_is_not_declared_and_answers_no_root() {
    let env = Env::new();
    let server = start(&env, &[], &[]);
    let caps = get_json(&server, "/api/v1/capabilities");
    let caps = caps["capabilities"].as_array().unwrap();
    assert!(caps.contains(&json!("graph.read")), "{caps:?}");
    assert!(!caps.contains(&json!("workspace.create")), "{caps:?}");
    let (status, text) = call(
        &server,
        "post",
        "/api/v1/workspaces",
        Some(&json!({"locator": {"kind": "mounted", "segment": "team/app"}})),
        bearer(),
    );
    assert_eq!(status, ErrorKind::NoRoot.http_status(), "{text}");
    assert_eq!(kind_of(&text), ErrorKind::NoRoot.name());
}

#[test]
fn a_required_capability_the_server_lacks_is_412_naming_each_one() {
    let env = indexed();
    let server = start(&env, &[], &[]);
    let missing = ErrorKind::CapabilityMissing;
    let (status, body) = raw(
        &server.addr,
        &format!(
            "GET /api/v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nX-Loci-Require: graph.read, workspace.create,teleport\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(status, missing.http_status(), "{body}");
    assert_eq!(kind_of(&body), missing.name(), "{body}");
    let v: Value = serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {body}"));
    // No root is configured here, so workspace.create is not offered either.
    assert_eq!(
        v["error"]["detail"]["missing"],
        json!(["workspace.create", "teleport"]),
        "{body}"
    );
    let (status, body) = raw(
        &server.addr,
        &format!(
            "GET /api/v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nX-Loci-Require: graph.read,workspaces.list\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(status, 200, "{body}");
    // What a client offers of its own is never a reason to refuse it: names the server
    // does not know are ignored.
    let (status, body) = raw(
        &server.addr,
        &format!(
            "GET /api/v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\nX-Loci-Offer: teleport, mirror.v9,,x\r\nX-Loci-Require: graph.read\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(status, 200, "{body}");
}
