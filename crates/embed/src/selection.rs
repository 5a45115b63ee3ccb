//! Which installed model loci embeds with: the file `selected` under the models
//! directory names it (written by `loci models install` and `loci models use`);
//! without the file, the default model. Vectors are stored per model, so a switch
//! leaves the other model's vectors in place and the new model's pending.

use std::path::Path;

use crate::error::EmbedError;
use crate::pinned::{self, PinnedModel};
use crate::verify;

/// The file under the models directory that names the model in use.
pub const SELECTED_FILE: &str = "selected";

/// The model loci embeds with under `models_dir`: the one `selected` names, else the
/// default. A name loci does not know is an error naming the file.
pub fn selected(models_dir: &Path) -> Result<&'static PinnedModel, EmbedError> {
    let path = models_dir.join(SELECTED_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => lookup(text.trim()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(pinned::DEFAULT),
        Err(source) => Err(EmbedError::Read { path, source }),
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

/// Makes `model` the one loci embeds with; refused ([`EmbedError::ModelMissing`] or a
/// size mismatch) unless it is installed whole. Written to a temporary file and renamed,
/// so a reader never sees half a name.
pub fn select(models_dir: &Path, model: &PinnedModel) -> Result<(), EmbedError> {
    verify::check_sizes(model, &model.installed_dir(models_dir))?;
    let path = models_dir.join(SELECTED_FILE);
    let staged = models_dir.join(format!(".{SELECTED_FILE}-{}", std::process::id()));
    let write = |source| EmbedError::Write {
        path: path.clone(),
        source,
    };
    std::fs::write(&staged, format!("{}\n", model.name)).map_err(write)?;
    std::fs::rename(&staged, &path).map_err(|source| {
        let _ = std::fs::remove_file(&staged);
        write(source)
    })
}
