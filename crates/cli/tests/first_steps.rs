//! What a newcomer meets first: the registry keeps only workspaces that exist (`list
//! --prune`, `forget`), a file given where a directory is wanted gets only its own
//! error, and a path-like impact target that matches nothing says so with a hint
//! built from the user's own input.

use crate::common;

use common::Env;
use loci_api::ErrorKind;

fn roots(list: &serde_json::Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no `{key}` in {list}"))
        .iter()
        .map(|e| e["root"].as_str().unwrap().to_string())
        .collect()
}

fn indexed_workspace(env: &Env, name: &str) -> std::path::PathBuf {
    let dir = env.root().join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn alpha() {}\n").unwrap();
    let (code, out) = env.json(&["index", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    std::fs::canonicalize(dir).unwrap()
}

#[test]
fn list_prune_forgets_deleted_workspaces_and_names_them() {
    let env = Env::new();
    let kept = indexed_workspace(&env, "kept");
    let gone = indexed_workspace(&env, "gone");
    std::fs::remove_dir_all(&gone).unwrap();

    let (code, out) = env.json(&["list", "--prune"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(roots(&out, "pruned"), vec![gone.display().to_string()]);
    assert_eq!(roots(&out, "workspaces"), vec![kept.display().to_string()]);

    let (_, after) = env.json(&["list"]);
    assert_eq!(
        roots(&after, "workspaces"),
        vec![kept.display().to_string()]
    );
    // Pruning again finds nothing more.
    let (_, again) = env.json(&["list", "--prune"]);
    assert!(roots(&again, "pruned").is_empty(), "{again}");

    let human = env.cmd().args(["list", "--prune"]).output().unwrap();
    assert!(human.status.success());
}

#[test]
fn forget_removes_one_entry_and_keeps_its_index() {
    let env = Env::new();
    let one = indexed_workspace(&env, "one");
    let two = indexed_workspace(&env, "two");
    let index = loci_store::index_path_for(&one);
    assert!(index.is_file());

    // A path relative to the current directory names the same workspace.
    let (code, out) = env.json(&["forget", "one"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["forgotten"]["root"], one.display().to_string());
    assert_eq!(out["index_kept"], true);
    assert!(index.is_file(), "forget must never delete an index");
    let (_, after) = env.json(&["list"]);
    assert_eq!(roots(&after, "workspaces"), vec![two.display().to_string()]);

    // A deleted workspace can be forgotten by the path `loci list` showed.
    std::fs::remove_dir_all(&two).unwrap();
    let (code, out) = env.json(&["forget", two.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let (_, after) = env.json(&["list"]);
    assert!(roots(&after, "workspaces").is_empty(), "{after}");

    // Forgetting what is not registered is not_found, naming the path.
    let (code, out) = env.json(&["forget", "one"]);
    assert_eq!(code, i32::from(ErrorKind::NotFound.exit().code()), "{out}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("one"), "{message}");
}

#[test]
fn index_or_config_of_a_file_gives_only_its_own_error() {
    let env = Env::new();
    env.write(&[("README.md", "# hello\n")]);
    let out = env.cmd().args(["index", "README.md"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(i32::from(ErrorKind::NotADirectory.exit().code())),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "spurious warning:\n{stderr}");
    assert!(stderr.contains("README.md"), "{stderr}");

    // `config show` of a file, too.
    let out = env
        .cmd()
        .args(["config", "show", "README.md"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(i32::from(ErrorKind::NotADirectory.exit().code())),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "spurious warning:\n{stderr}");
}

fn error_of(env: &Env, dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = env
        .cmd()
        .current_dir(dir)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let doc = common::parse(&out);
    (
        out.status.code().unwrap_or(-1),
        doc["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        doc["error"]["hint"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[test]
fn impact_of_a_missing_file_names_the_file_and_a_hint_from_the_input() {
    let env = Env::new();
    env.write(&[("src/lib.rs", "pub fn alpha() {}\n")]);
    let (code, out) = env.json(&["index", "."]);
    assert_eq!(code, 0, "{out}");
    let not_found = i32::from(ErrorKind::NotFound.exit().code());

    let (code, message, hint) = error_of(&env, env.root(), &["impact", "missing/file.rs"]);
    assert_eq!(code, not_found);
    assert_eq!(message, "no file or symbol `missing/file.rs` in the index");
    assert!(hint.contains("loci find '*file*'"), "{hint}");

    // The indexed files with the same name are suggested.
    let out = env
        .cmd()
        .args(["impact", "other/lib.rs", "--json"])
        .output()
        .unwrap();
    let doc = common::parse(&out);
    assert_eq!(out.status.code(), Some(not_found), "{doc}");
    assert_eq!(
        doc["error"]["detail"]["similar_files"][0], "src/lib.rs",
        "{doc}"
    );
    let hint = doc["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("indexed files named `lib.rs`: src/lib.rs"),
        "{hint}"
    );

    // A bare file name with a source extension is a file too.
    let (_, message, hint) = error_of(&env, env.root(), &["impact", "gone.py"]);
    assert_eq!(message, "no file or symbol `gone.py` in the index");
    assert!(hint.contains("'*gone*'"), "{hint}");

    // Every not-found hint names the user's input, not a piece of syntax.
    let cases: [(&[&str], &str); 4] = [
        (&["impact", "nothere"], "'*nothere*'"),
        (&["callers", "src/lib.rs:absent"], "'*absent*'"),
        (&["def", "Widget::frobnicate"], "'*frobnicate*'"),
        (&["outline", "src/missing.rs"], "'*missing*'"),
    ];
    for (args, wanted) in cases {
        let (code, message, hint) = error_of(&env, env.root(), args);
        assert_eq!(code, not_found, "{args:?}: {message}");
        assert!(hint.contains(wanted), "{args:?}: {hint}");
        assert!(message.starts_with("no "), "{args:?}: {message}");
    }
}

#[test]
fn impact_takes_a_file_relative_to_the_current_directory_or_to_the_root() {
    let env = Env::new();
    // A crate (its manifest names the root), so `use crate::alpha` is a proven link:
    // impact follows no link made by name alone.
    env.write(&[
        (
            "Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
        ),
        ("src/lib.rs", "mod user;\npub fn alpha() {}\n"),
        (
            "src/user.rs",
            "use crate::alpha;\npub fn beta() { alpha(); }\n",
        ),
    ]);
    let (code, out) = env.json(&["index", "."]);
    assert_eq!(code, 0, "{out}");
    let src = env.root().join("src");
    for (dir, target) in [(&src, "lib.rs"), (&src, "./lib.rs"), (&src, "src/lib.rs")] {
        let out = env
            .cmd()
            .current_dir(dir)
            .args(["impact", target, "--json"])
            .output()
            .unwrap();
        let doc = common::parse(&out);
        assert_eq!(out.status.code(), Some(0), "{target}: {doc}");
        let targets = doc["targets"].as_array().unwrap();
        assert!(targets.contains(&"src/lib.rs".into()), "{target}: {doc}");
        assert_eq!(doc["reached"][0]["path"], "src/user.rs", "{target}: {doc}");
    }
    // A symbol whose name is also a file in the current directory stays a symbol.
    env.write(&[("src/alpha", "not source\n")]);
    let out = env
        .cmd()
        .current_dir(&src)
        .args(["impact", "alpha", "--json"])
        .output()
        .unwrap();
    let doc = common::parse(&out);
    assert_eq!(out.status.code(), Some(0), "{doc}");
    assert_eq!(doc["target_symbols"][0]["name"], "alpha", "{doc}");
}
