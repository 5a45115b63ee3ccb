//! `loci workspace create|ls` through the real binary: refusals exit 5 naming the reason,
//! creation runs real git, repeated creation is idempotent.

use crate::common;

use common::Env;

fn cmd_in(env: &Env, base: &std::path::Path) -> std::process::Command {
    let mut cmd = env.cmd();
    cmd.env("LOCI_PROJECTS_BASE", base)
        .env_remove("LOCI_MANAGED_ROOT");
    cmd
}

fn run(mut cmd: std::process::Command, args: &[&str]) -> (i32, serde_json::Value) {
    let out = cmd.args(args).arg("--json").output().unwrap();
    (out.status.code().unwrap_or(-1), common::parse(&out))
}

#[test]
fn missing_root_exits_5_naming_the_variable() {
    let env = Env::new();
    let mut cmd = env.cmd();
    cmd.env_remove("LOCI_PROJECTS_BASE")
        .env_remove("LOCI_MANAGED_ROOT");
    let (code, out) = run(cmd, &["workspace", "create", "--mounted", "team/app"]);
    assert_eq!(code, 5, "{out}");
    assert_eq!(out["error"]["kind"], "no_root");
    let text = format!("{}{}", out["error"]["message"], out["error"]["hint"]);
    assert!(text.contains("LOCI_PROJECTS_BASE"), "{out}");
}

#[test]
fn create_inits_a_repository_and_is_idempotent() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let (code, out) = run(
        cmd_in(&env, base.path()),
        &["workspace", "create", "--mounted", "team/app"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(base.path().join("team/app/.git").is_dir());
    assert!(
        !out.to_string()
            .contains(&base.path().to_string_lossy().to_string()),
        "absolute path leaked: {out}"
    );
    let (code, again) = run(
        cmd_in(&env, base.path()),
        &["workspace", "create", "--mounted", "team/app"],
    );
    assert_eq!(code, 0, "{again}");
    assert_eq!(again["action"], "already_a_repository");

    let (code, listing) = run(cmd_in(&env, base.path()), &["workspace", "ls", "team"]);
    assert_eq!(code, 0, "{listing}");
    assert_eq!(listing["entries"][0]["name"], "app");
}

#[test]
fn hostile_segments_are_refused_and_nothing_is_created_outside() {
    let env = Env::new();
    let outer = tempfile::tempdir().unwrap();
    let base = outer.path().join("base");
    std::fs::create_dir(&base).unwrap();
    for segment in [
        "../escape",
        "a/../../escape",
        "/etc",
        "",
        "a//b",
        "a/",
        ".",
        "a\\b",
        "a\u{1}b",
    ] {
        let (code, out) = run(
            cmd_in(&env, &base),
            &["workspace", "create", "--mounted", segment],
        );
        assert_eq!(code, 5, "{segment:?}: {out}");
        assert_eq!(
            out["error"]["kind"], "invalid_segment",
            "{segment:?}: {out}"
        );
    }
    let entries: Vec<_> = std::fs::read_dir(outer.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["base"], "something was created outside the base");
    let (code, out) = run(cmd_in(&env, &base), &["workspace", "ls", "../"]);
    assert_eq!(code, 5, "{out}");
}

#[test]
fn a_file_in_the_way_is_not_a_directory() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    std::fs::write(base.path().join("taken"), "x").unwrap();
    let (code, out) = run(
        cmd_in(&env, base.path()),
        &["workspace", "create", "--mounted", "taken"],
    );
    assert_eq!(code, 5, "{out}");
    assert_eq!(out["error"]["kind"], "not_a_directory");
}

#[test]
fn create_for_a_project_is_idempotent_and_the_project_cannot_move() {
    let env = Env::new();
    let base = tempfile::tempdir().unwrap();
    let create = |segment: &str, project: &str| {
        run(
            cmd_in(&env, base.path()),
            &[
                "workspace",
                "create",
                "--mounted",
                segment,
                "--project",
                project,
            ],
        )
    };
    let (code, first) = create("team/app", "proj-1");
    assert_eq!(code, 0, "{first}");
    assert_eq!(first["project_id"], "proj-1", "{first}");
    let (code, again) = create("team/app", "proj-1");
    assert_eq!(code, 0, "{again}");
    assert_eq!(again["confirmed"]["id"], first["confirmed"]["id"]);
    assert_eq!(again["confirmed"]["changed"], false, "{again}");
    let (_, listed) = env.json(&["list"]);
    assert_eq!(listed["workspaces"][0]["project_id"], "proj-1", "{listed}");

    let (code, moved) = create("team/elsewhere", "proj-1");
    assert_eq!(
        code,
        i32::from(loci_api::ErrorKind::ProjectConflict.exit().code()),
        "{moved}"
    );
    assert_eq!(moved["error"]["kind"], "project_conflict", "{moved}");
    assert!(!base.path().join("team/elsewhere").exists());
    let (code, bad) = create("team/app", "../x");
    assert_eq!(
        code,
        i32::from(loci_api::ErrorKind::InvalidInput.exit().code()),
        "{bad}"
    );
    assert_eq!(bad["error"]["kind"], "invalid_input", "{bad}");
    let (_, after) = env.json(&["list"]);
    assert_eq!(after, listed, "a refused create changed the registry");
}
