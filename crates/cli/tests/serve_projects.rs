//! `loci serve` creating workspaces for a caller's project (`project_id` in the create
//! body): the same project and locator twice is one workspace confirmed once, shown by
//! every route and `loci list`; the project under another locator, or the locator for
//! another project, is a named 409 with nothing made or changed; a hostile project id
//! is `invalid_input` before anything is made; the OpenAPI document gives the rule.

use crate::common;
use crate::serve_support;

use std::path::PathBuf;

use common::Env;
use loci_api::ErrorKind;
use serde_json::{Value, json};
use serve_support::*;

/// A projects base and a managed root in one temp dir, beside the server's LOCI_HOME.
struct Roots {
    dir: tempfile::TempDir,
}

impl Roots {
    fn new() -> Roots {
        let dir = tempfile::tempdir().unwrap();
        for d in ["base", "managed"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        Roots { dir }
    }
    fn base(&self) -> PathBuf {
        self.dir.path().join("base")
    }
    fn serve(&self, env: &Env) -> Server {
        let base = self.base().to_string_lossy().into_owned();
        let managed = self.dir.path().join("managed");
        let managed = managed.to_string_lossy().into_owned();
        start(
            env,
            &[],
            &[
                ("LOCI_PROJECTS_BASE", base.as_str()),
                ("LOCI_MANAGED_ROOT", managed.as_str()),
            ],
        )
    }
    /// Every path under the temp dir, relative, sorted.
    fn tree(&self) -> Vec<String> {
        tree_under(self.dir.path())
    }
}

fn create(server: &Server, body: &Value) -> (u16, Value) {
    let (status, text) = call(server, "post", "/api/v1/workspaces", Some(body), bearer());
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, v)
}

fn mounted_for(segment: &str, project: &str) -> Value {
    json!({"locator": {"kind": "mounted", "segment": segment}, "project_id": project})
}

/// The registry as `loci list --json` shows it (every column, paths included).
fn registry(env: &Env) -> Value {
    let (code, v) = env.json(&["list"]);
    assert_eq!(code, 0, "{v}");
    v["workspaces"].clone()
}

#[test]
fn create_for_a_project_twice_is_one_workspace_verified_once_and_every_route_shows_the_project() {
    let env = Env::new();
    let roots = Roots::new();
    let server = roots.serve(&env);
    let body = mounted_for("team/app", "org:proj_1.a-b");
    let (status, first) = create(&server, &body);
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["project_id"], "org:proj_1.a-b", "{first}");
    assert_eq!(first["changed"], true);
    assert!(first["verified_at"].as_i64().is_some(), "{first}");
    let (status, again) = create(&server, &body);
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(again["verified_at"], first["verified_at"], "verified once");
    assert_eq!(again["project_id"], "org:proj_1.a-b");

    let id = first["id"].as_i64().unwrap();
    let detail = get_json(&server, &format!("/api/v1/workspaces/{id}"));
    assert_eq!(detail["project_id"], "org:proj_1.a-b", "{detail}");
    assert_eq!(detail["verified_at"], first["verified_at"], "{detail}");
    let list = get_json(&server, "/api/v1/workspaces");
    let entries = list["workspaces"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{list}");
    assert_eq!(entries[0]["project_id"], "org:proj_1.a-b", "{list}");
    let listed = registry(&env);
    assert_eq!(listed[0]["project_id"], "org:proj_1.a-b", "{listed}");
    assert_eq!(listed[0]["verified_at"], first["verified_at"], "{listed}");

    // A workspace made without a project says none.
    let (status, plain) = create(
        &server,
        &json!({"locator": {"kind": "managed", "name": "plain"}}),
    );
    assert_eq!(status, 200, "{plain}");
    assert!(plain.get("project_id").is_none(), "{plain}");
}

#[test]
fn a_project_under_another_locator_or_a_locator_of_another_project_is_a_named_409_and_nothing_changes()
 {
    let env = Env::new();
    let roots = Roots::new();
    let server = roots.serve(&env);
    let (status, first) = create(&server, &mounted_for("team/app", "p1"));
    assert_eq!(status, 200, "{first}");
    let (status, other) = create(
        &server,
        &json!({"locator": {"kind": "managed", "name": "other"}, "project_id": "p2"}),
    );
    assert_eq!(status, 200, "{other}");
    let tree = roots.tree();
    let before = registry(&env);
    let conflict = ErrorKind::ProjectConflict;
    for (body, reason, names) in [
        (
            mounted_for("team/elsewhere", "p1"),
            "project_elsewhere",
            ["p1", "mounted:team/app", "mounted:team/elsewhere"],
        ),
        (
            mounted_for("team/app", "p3"),
            "locator_taken",
            ["p3", "p1", "mounted:team/app"],
        ),
        // Both at once (p2 has `managed:other`, the locator has p1): the project's
        // own binding is named first.
        (
            mounted_for("team/app", "p2"),
            "project_elsewhere",
            ["p2", "managed:other", "mounted:team/app"],
        ),
    ] {
        let (status, v) = create(&server, &body);
        assert_eq!(status, conflict.http_status(), "{body}: {v}");
        assert_eq!(status, 409);
        assert_eq!(v["error"]["kind"], conflict.name(), "{body}: {v}");
        assert_eq!(v["error"]["detail"]["reason"], reason, "{body}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        for name in names {
            assert!(message.contains(name), "{name:?} not in {message}");
        }
        assert!(
            !message.contains(&roots.dir.path().to_string_lossy().to_string()),
            "{message}"
        );
    }
    assert_eq!(roots.tree(), tree, "a refused create made something");
    assert!(!roots.base().join("team/elsewhere").exists());
    assert_eq!(
        registry(&env),
        before,
        "a refused create changed the registry"
    );
}

#[test]
fn hostile_project_ids_are_invalid_input_and_nothing_is_created() {
    let env = Env::new();
    let roots = Roots::new();
    let server = roots.serve(&env);
    let before = roots.tree();
    let long = "p".repeat(129);
    for (project, reason) in [
        ("", "empty"),
        (long.as_str(), "too_long"),
        ("a/b", "forbidden_character"),
        ("../etc", "forbidden_character"),
        ("a\0b", "forbidden_character"),
        ("a b", "forbidden_character"),
        (" a", "forbidden_character"),
        ("a\nb", "forbidden_character"),
        ("projé", "forbidden_character"),
        ("проект", "forbidden_character"),
        ("a\u{202E}b", "forbidden_character"),
        ("..", "leading_punctuation"),
        (".", "leading_punctuation"),
        ("-rf", "leading_punctuation"),
    ] {
        let (status, v) = create(&server, &mounted_for("team/app", project));
        assert_eq!(
            status,
            ErrorKind::InvalidInput.http_status(),
            "{project:?}: {v}"
        );
        assert_eq!(
            v["error"]["kind"],
            ErrorKind::InvalidInput.name(),
            "{project:?}: {v}"
        );
        assert_eq!(v["error"]["detail"]["reason"], reason, "{project:?}: {v}");
    }
    // Not a string at all: refused by the body's type.
    let (status, v) = create(
        &server,
        &json!({"locator": {"kind": "mounted", "segment": "team/app"}, "project_id": 7}),
    );
    assert!((400..500).contains(&status), "{status}: {v}");
    assert_eq!(roots.tree(), before, "a refused create made something");
    assert!(registry(&env).as_array().unwrap().is_empty());
    // The longest id allowed is taken.
    let (status, v) = create(&server, &mounted_for("team/app", &"p".repeat(128)));
    assert_eq!(status, 200, "{v}");
}

#[test]
fn the_openapi_document_gives_the_project_id_rule() {
    let env = Env::new();
    let roots = Roots::new();
    let server = roots.serve(&env);
    let doc = get_json(&server, "/api/v1/openapi.json");
    let body = &doc["paths"]["/api/v1/workspaces"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    let schema = match body["$ref"].as_str() {
        Some(r) => {
            let mut at = &doc;
            for part in r.trim_start_matches("#/").split('/') {
                at = &at[part];
            }
            at.clone()
        }
        None => body.clone(),
    };
    let project = &schema["properties"]["project_id"];
    assert_eq!(
        project["pattern"],
        loci_workspace::PROJECT_ID_PATTERN,
        "{schema}"
    );
    assert!(
        !schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r == "project_id"),
        "project_id is optional: {schema}"
    );
}
