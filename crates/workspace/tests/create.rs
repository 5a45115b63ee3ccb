//! Workspace creation end to end: real directories, real git (through the
//! supervisor), a real registry file.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use loci_paths::{Mode, RootKind, RootValues, Roots};
use loci_store::registry::Registry;
use loci_supervisor::Supervisor;
use loci_workspace::{Action, CreateError, CreateOptions, CreateRequest, create, create_with, ls};

struct Env {
    dir: tempfile::TempDir,
    roots: Roots,
    registry: Registry,
    supervisor: Supervisor,
}

impl Env {
    /// `tmp/base` (projects base), `tmp/managed` (managed root),
    /// `tmp/outside`, and a registry in `tmp/registry.db`.
    fn new() -> Env {
        Env::with(true, true)
    }

    fn with(managed: bool, base: bool) -> Env {
        let dir = tempfile::tempdir().unwrap();
        for d in ["base", "managed", "outside"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        let value = |on: bool, d: &str| RootValues {
            env: on.then(|| dir.path().join(d).into()),
            config: None,
        };
        let roots = Roots::from_values(value(managed, "managed"), value(base, "base")).unwrap();
        let registry = Registry::open(&dir.path().join("registry.db")).unwrap();
        Env {
            roots,
            registry,
            supervisor: Supervisor::new(),
            dir,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    #[allow(clippy::result_large_err)] // the library's own error type, as returned
    fn create(&self, request: &CreateRequest) -> Result<loci_workspace::Created, CreateError> {
        create(&self.roots, request, &self.supervisor, &self.registry)
    }
}

/// Test-only git, outside the supervisor, to build fixtures.
fn git(cwd: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=loci", "-c", "user.email=loci@test"])
        .args(args)
        .current_dir(cwd)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

#[test]
fn a_new_folder_is_created_and_initialized() {
    let env = Env::new();
    let created = env.create(&CreateRequest::mounted("team/app")).unwrap();
    assert_eq!(created.action, Action::Initialized);
    assert!(created.created_dir);
    assert!(env.path("base/team/app/.git").is_dir());
    assert_eq!(
        created.path,
        std::fs::canonicalize(env.path("base/team/app")).unwrap()
    );
    assert!(created.confirmed.changed);
    assert!(created.confirmed.verified_at.is_some());
    let entry = env.registry.lookup(&created.path).unwrap().unwrap();
    assert_eq!(entry.locator.as_deref(), Some("mounted:team/app"));

    let json = serde_json::to_value(&created).unwrap();
    assert_eq!(json["locator"]["kind"], "mounted");
    assert_eq!(json["locator"]["segment"], "team/app");
    assert_eq!(json["action"], "initialized");
    assert!(
        !json
            .to_string()
            .contains(&env.dir.path().display().to_string()),
        "no absolute path in the result: {json}"
    );
}

#[test]
fn a_managed_workspace_is_created_under_the_managed_root_only() {
    let env = Env::new();
    let created = env.create(&CreateRequest::managed("ws-1")).unwrap();
    assert_eq!(created.action, Action::Initialized);
    assert!(env.path("managed/ws-1/.git").is_dir());
    assert!(!env.path("base/ws-1").exists());
}

#[test]
fn a_local_bare_repository_is_cloned() {
    let env = Env::new();
    let src = env.path("outside/src");
    std::fs::create_dir(&src).unwrap();
    git(&src, &["init", "--quiet"]);
    std::fs::write(src.join("README.md"), "hello\n").unwrap();
    git(&src, &["add", "README.md"]);
    git(&src, &["commit", "--quiet", "-m", "first"]);
    let bare = env.path("outside/app.git");
    git(
        env.dir.path(),
        &[
            "clone",
            "--quiet",
            "--bare",
            src.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );

    let request = CreateRequest::mounted("clones/app").clone_from(bare.to_str().unwrap());
    let created = env.create(&request).unwrap();
    assert_eq!(created.action, Action::Cloned);
    assert_eq!(
        std::fs::read_to_string(env.path("base/clones/app/README.md")).unwrap(),
        "hello\n"
    );
    assert!(env.path("base/clones/app/.git").is_dir());
}

#[test]
fn a_failed_clone_names_git_and_keeps_its_stderr() {
    let env = Env::new();
    let missing = env.path("outside/no-such-repo.git");
    let request = CreateRequest::mounted("broken").clone_from(missing.to_str().unwrap());
    let err = env.create(&request).unwrap_err();
    assert_eq!(err.kind(), "git", "{err}");
    assert!(err.to_string().contains("clone"), "{err}");
    assert!(env.registry.list().unwrap().is_empty(), "nothing confirmed");
}

#[test]
fn a_remote_helper_url_is_refused_before_anything_is_made() {
    let env = Env::new();
    for url in ["ext::sh -c touch% /tmp/loci-pwned", "ext::sh"] {
        let request = CreateRequest::mounted("ext").clone_from(url);
        let err = env.create(&request).unwrap_err();
        assert_eq!(err.kind(), "invalid_clone_url", "{err}");
        assert!(err.is_refusal());
    }
    assert!(!Path::new("/tmp/loci-pwned").exists());
    assert!(
        !env.path("base/ext").exists(),
        "no folder is made for a refused URL"
    );
}

#[test]
fn an_existing_repository_succeeds_as_already_a_repository() {
    let env = Env::new();
    let existing = env.path("base/existing");
    std::fs::create_dir(&existing).unwrap();
    git(&existing, &["init", "--quiet"]);
    std::fs::write(existing.join("keep.txt"), "mine").unwrap();
    let request = CreateRequest::mounted("existing").clone_from("https://invalid.example/x.git");
    let created = env.create(&request).unwrap();
    assert_eq!(created.action, Action::AlreadyARepository);
    assert!(!created.created_dir);
    assert_eq!(
        std::fs::read_to_string(existing.join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn confirming_twice_changes_nothing_the_second_time() {
    let env = Env::new();
    let first = env.create(&CreateRequest::mounted("twice")).unwrap();
    let second = env.create(&CreateRequest::mounted("twice")).unwrap();
    assert!(first.confirmed.changed);
    assert!(!second.confirmed.changed);
    assert_eq!(second.action, Action::AlreadyARepository);
    assert_eq!(second.confirmed.id, first.confirmed.id);
    assert_eq!(second.confirmed.verified_at, first.confirmed.verified_at);
    assert_eq!(env.registry.list().unwrap().len(), 1);
}

#[test]
fn a_file_in_the_way_is_not_a_directory() {
    let env = Env::new();
    std::fs::write(env.path("base/file"), "x").unwrap();
    for segment in ["file", "file/child"] {
        let err = env.create(&CreateRequest::mounted(segment)).unwrap_err();
        assert_eq!(err.kind(), "not_a_directory", "{segment}: {err}");
        assert!(err.is_refusal(), "{segment}: {err}");
    }
}

#[test]
fn a_missing_root_variable_is_named() {
    let env = Env::with(false, true);
    let err = env.create(&CreateRequest::managed("app")).unwrap_err();
    assert_eq!(err.kind(), "no_root");
    assert_eq!(err.reason(), Some("managed_root_not_configured"));
    assert!(err.to_string().contains("LOCI_MANAGED_ROOT"), "{err}");
    assert!(err.is_refusal(), "{err}");
    assert!(err.hint().unwrap().contains("LOCI_MANAGED_ROOT"));
    // and it never falls back to the base
    assert!(!env.path("base/app").exists());

    let env = Env::with(true, false);
    let err = env.create(&CreateRequest::mounted("app")).unwrap_err();
    assert_eq!(err.kind(), "no_root");
    assert!(err.to_string().contains("LOCI_PROJECTS_BASE"), "{err}");
}

#[test]
fn invalid_locations_are_refused_with_their_reason() {
    let env = Env::new();
    let cases = [
        (CreateRequest::mounted("../etc"), "parent_dir_component"),
        (
            CreateRequest::mounted("a/../../etc"),
            "parent_dir_component",
        ),
        (CreateRequest::mounted("/etc"), "absolute"),
        (CreateRequest::mounted(""), "empty"),
        (CreateRequest::mounted("a//b"), "empty_component"),
        (CreateRequest::mounted("."), "current_dir_component"),
        (CreateRequest::managed("a/b"), "invalid_name_character"),
        (CreateRequest::managed(" app"), "invalid_name_character"),
    ];
    for (request, reason) in cases {
        let err = env.create(&request).unwrap_err();
        assert_eq!(err.kind(), "invalid_segment", "{request:?}: {err}");
        assert_eq!(err.reason(), Some(reason), "{request:?}: {err}");
        assert!(err.is_refusal(), "{request:?}: {err}");
    }
}

#[test]
fn a_symlink_leading_outside_is_refused_and_nothing_is_created_there() {
    let env = Env::new();
    symlink(env.path("outside"), env.path("base/evil")).unwrap();
    let err = env.create(&CreateRequest::mounted("evil/app")).unwrap_err();
    assert_eq!(err.kind(), "invalid_segment");
    assert_eq!(err.reason(), Some("escapes_root"));
    assert!(!env.path("outside/app").exists());
    // what the server sends back names no root path
    let redacted = env.roots.redact(&err.to_string());
    assert!(redacted.contains("$LOCI_PROJECTS_BASE"), "{redacted}");
    let base = std::fs::canonicalize(env.path("base")).unwrap();
    assert!(!redacted.contains(base.to_str().unwrap()), "{redacted}");
}

#[test]
fn a_mode_outside_the_permit_list_is_refused() {
    let env = Env::new();
    let options = CreateOptions {
        served: vec![Mode::Mounted],
        ..CreateOptions::default()
    };
    let err = create_with(
        &env.roots,
        &CreateRequest::managed("app"),
        &env.supervisor,
        &env.registry,
        &options,
    )
    .unwrap_err();
    assert_eq!(err.kind(), "invalid_segment");
    assert_eq!(err.reason(), Some("mode_not_served"));
}

#[test]
fn requests_deserialize_strictly() {
    let ok: CreateRequest = serde_json::from_str(
        r#"{"target":{"kind":"mounted","segment":"a/b"},"clone_url":"https://h/r.git"}"#,
    )
    .unwrap();
    assert_eq!(
        ok,
        CreateRequest::mounted("a/b").clone_from("https://h/r.git")
    );
    assert!(
        serde_json::from_str::<CreateRequest>(
            r#"{"target":{"kind":"mounted","segment":"a","path":"/etc"}}"#
        )
        .is_err()
    );
    assert!(
        serde_json::from_str::<CreateRequest>(r#"{"target":{"kind":"runner","segment":"a"}}"#)
            .is_err()
    );
}

#[test]
fn ls_lists_directories_under_a_root_and_never_outside() {
    let env = Env::new();
    env.create(&CreateRequest::mounted("team/app")).unwrap();
    std::fs::create_dir(env.path("base/team/docs")).unwrap();
    symlink(env.path("outside"), env.path("base/team/out")).unwrap();

    let top = ls(&env.roots, RootKind::Base, None).unwrap();
    assert_eq!(top.entries.len(), 1);
    assert_eq!(top.entries[0].name, "team");

    let team = ls(&env.roots, RootKind::Base, Some("team")).unwrap();
    let names: Vec<_> = team.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["app", "docs"]);
    assert!(team.entries[0].repository);
    assert_eq!(team.entries[0].segment.as_str(), "team/app");

    let err = ls(&env.roots, RootKind::Base, Some("team/out")).unwrap_err();
    assert_eq!(err.kind(), "invalid_segment", "{err}");
    let err = ls(&env.roots, RootKind::Base, Some("../outside")).unwrap_err();
    assert_eq!(err.kind(), "invalid_segment");
    let err = ls(&env.roots, RootKind::Base, Some("nope")).unwrap_err();
    assert_eq!(err.kind(), "not_found");
    assert!(
        ls(&env.roots, RootKind::Managed, None)
            .unwrap()
            .entries
            .is_empty()
    );

    let env = Env::with(false, true);
    let err = ls(&env.roots, RootKind::Managed, None).unwrap_err();
    assert_eq!(err.kind(), "no_root");
    assert!(err.to_string().contains("LOCI_MANAGED_ROOT"));
}

#[test]
fn a_project_bound_to_one_folder_is_refused_for_another_before_anything_is_made() {
    let env = Env::new();
    let first = env
        .create(&CreateRequest::mounted("team/app").for_project("proj-1"))
        .unwrap();
    assert_eq!(first.project_id.as_deref(), Some("proj-1"));
    let again = env
        .create(&CreateRequest::mounted("team/app").for_project("proj-1"))
        .unwrap();
    assert_eq!(again.confirmed.id, first.confirmed.id);
    assert!(!again.confirmed.changed);
    assert_eq!(again.confirmed.verified_at, first.confirmed.verified_at);

    let before = env.registry.list().unwrap();
    let err = env
        .create(&CreateRequest::mounted("team/other").for_project("proj-1"))
        .unwrap_err();
    assert!(matches!(err, CreateError::ProjectConflict(_)), "{err}");
    assert_eq!(err.reason(), Some("project_elsewhere"));
    assert!(!env.path("base/team/other").exists(), "the folder was made");
    let err = env
        .create(&CreateRequest::mounted("team/app").for_project("proj-2"))
        .unwrap_err();
    assert_eq!(err.reason(), Some("locator_taken"), "{err}");
    assert_eq!(env.registry.list().unwrap(), before);
}

#[test]
fn a_hostile_project_id_is_refused_before_anything_is_made() {
    let env = Env::new();
    for hostile in ["", "../x", "a/b", "..", "a b", "a\0b", "ünï"] {
        let err = env
            .create(&CreateRequest::managed("w1").for_project(hostile))
            .unwrap_err();
        assert!(
            matches!(err, CreateError::InvalidProjectId(_)),
            "{hostile:?}: {err}"
        );
    }
    assert!(!env.path("managed/w1").exists());
    assert!(env.registry.list().unwrap().is_empty());
}
