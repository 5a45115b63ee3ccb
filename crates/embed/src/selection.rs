//! Which installed model loci embeds with, per purpose: memories (notes, recall) and
//! code (`loci embed`, `loci search --meaning`) may each use their own, since the two
//! models win on different sets (docs/models.md). The file `selected` under the models
//! directory names them, one line per purpose (`memory NAME`, `code NAME`; a bare
//! `NAME` line sets both); it is written by `loci models install` and `loci models use`.
//! Without the file, or without a line for a purpose, the default model. Vectors are
//! stored per model, so a switch leaves the other model's vectors in place and the new
//! model's pending.

use std::path::Path;

use crate::error::EmbedError;
use crate::pinned::{self, PinnedModel};

/// The file under the models directory that names the models in use.
pub const SELECTED_FILE: &str = "selected";

/// What a model embeds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// Memory chunks and recall queries.
    Memory,
    /// Code units (`loci embed`) and search-by-meaning queries.
    Code,
}

impl Purpose {
    /// Every purpose, in the order the file lists them.
    pub const ALL: [Purpose; 2] = [Purpose::Memory, Purpose::Code];

    /// Its name in the file, the CLI (`--for`) and `status`.
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Memory => "memory",
            Purpose::Code => "code",
        }
    }

    /// The purpose called `name`.
    pub fn from_name(name: &str) -> Option<Purpose> {
        Purpose::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// The model each purpose uses under `models_dir` ([`Purpose::ALL`]'s order). A name
/// loci does not know, or a line it cannot read, is an error naming the file.
pub fn choices(models_dir: &Path) -> Result<[&'static PinnedModel; 2], EmbedError> {
    let path = models_dir.join(SELECTED_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(EmbedError::Read { path, source }),
    };
    let mut chosen = [pinned::DEFAULT; 2];
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.split_once(char::is_whitespace) {
            None => chosen = [lookup(line)?; 2],
            Some((purpose, name)) => {
                let Some(p) = Purpose::from_name(purpose) else {
                    return Err(EmbedError::Config {
                        path,
                        reason: format!(
                            "line {line:?}: {purpose:?} is not a purpose (memory, code)"
                        ),
                    });
                };
                chosen[index(p)] = lookup(name.trim())?;
            }
        }
    }
    Ok(chosen)
}

/// The model `purpose` uses under `models_dir`.
pub fn selected(models_dir: &Path, purpose: Purpose) -> Result<&'static PinnedModel, EmbedError> {
    Ok(choices(models_dir)?[index(purpose)])
}

fn index(purpose: Purpose) -> usize {
    match purpose {
        Purpose::Memory => 0,
        Purpose::Code => 1,
    }
}

/// The pinned model called `name`, or [`EmbedError::UnknownModel`] listing them all.
pub fn lookup(name: &str) -> Result<&'static PinnedModel, EmbedError> {
    pinned::by_name(name).ok_or_else(|| EmbedError::UnknownModel {
        name: name.to_string(),
        known: pinned::MODELS
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Makes `model` the one loci embeds with for each of `purposes` (the others keep
/// theirs; a garbled file is replaced, not kept); refused ([`EmbedError::ModelMissing`]
/// or a size mismatch) unless it is installed whole. Written to a temporary file and
/// renamed, so a reader never sees half a file.
pub fn select(
    models_dir: &Path,
    model: &'static PinnedModel,
    purposes: &[Purpose],
) -> Result<(), EmbedError> {
    model.check_installed(&model.installed_dir(models_dir))?;
    let mut chosen = choices(models_dir).unwrap_or([pinned::DEFAULT; 2]);
    for &p in purposes {
        chosen[index(p)] = model;
    }
    let text: String = Purpose::ALL
        .iter()
        .map(|&p| format!("{} {}\n", p.name(), chosen[index(p)].name))
        .collect();
    let path = models_dir.join(SELECTED_FILE);
    let staged = models_dir.join(format!(".{SELECTED_FILE}-{}", std::process::id()));
    let write = |source| EmbedError::Write {
        path: path.clone(),
        source,
    };
    std::fs::write(&staged, text).map_err(write)?;
    std::fs::rename(&staged, &path).map_err(|source| {
        let _ = std::fs::remove_file(&staged);
        write(source)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choices_of(text: Option<&str>) -> Result<[&'static str; 2], EmbedError> {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = text {
            std::fs::write(dir.path().join(SELECTED_FILE), text).unwrap();
        }
        choices(dir.path()).map(|c| c.map(|m| m.name))
    }

    #[test]
    fn the_file_names_a_model_per_purpose_or_one_for_both() {
        assert_eq!(choices_of(None).unwrap(), ["minilm", "minilm"]);
        assert_eq!(choices_of(Some("e5-small\n")).unwrap(), ["e5-small"; 2]);
        let split = "memory minilm\ncode e5-small\n";
        assert_eq!(choices_of(Some(split)).unwrap(), ["minilm", "e5-small"]);
        // A purpose without a line keeps the default; blank lines and spaces are fine.
        assert_eq!(
            choices_of(Some("\n  code   e5-small  \n")).unwrap(),
            ["minilm", "e5-small"]
        );
        assert!(matches!(
            choices_of(Some("bert\n")),
            Err(EmbedError::UnknownModel { .. })
        ));
        assert!(matches!(
            choices_of(Some("docs minilm\n")),
            Err(EmbedError::Config { .. })
        ));
    }
}
