//! The embedder: a BERT sentence encoder (candle) and its tokenizer, loaded from a
//! model folder, giving mean-pooled, L2-normalised vectors as sentence-transformers does.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationParams};

use crate::error::EmbedError;
use crate::install::MANIFEST;
use crate::pinned;
use crate::verify;

/// Texts run through the model together. Inputs are sorted by length first, so a batch
/// pads to lengths close to each other (see docs/models.md for the measurements).
pub const BATCH_SIZE: usize = 16;

/// A loaded sentence encoder. `Send + Sync`: one instance serves every thread.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    model_id: String,
    dim: usize,
    max_tokens: usize,
    device: Device,
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
    /// Loads the pinned model installed under `models_dir` (see [`crate::install_from`]):
    /// every file present with its pinned size, the dimension [`pinned::DIM`]. The
    /// digests are checked at install and by [`crate::status`], not at every load.
    pub fn load_installed(models_dir: &Path) -> Result<Embedder, EmbedError> {
        let dir = pinned::installed_dir(models_dir);
        verify::check_sizes(&dir)?;
        Embedder::load_with_dim(&dir, pinned::DIM)
    }

    /// [`Embedder::load`], refusing a model whose vectors are not `dim` long (vectors
    /// stored by another model would not compare).
    pub fn load_with_dim(dir: &Path, dim: usize) -> Result<Embedder, EmbedError> {
        let embedder = Embedder::load(dir)?;
        if embedder.dim != dim {
            return Err(EmbedError::WrongDimension {
                path: dir.join("config.json"),
                expected: dim,
                found: embedder.dim,
            });
        }
        Ok(embedder)
    }

    /// Loads a BERT sentence encoder from a folder holding `config.json`,
    /// `tokenizer.json`, `model.safetensors` and, optionally,
    /// `sentence_bert_config.json` (its `max_seq_length` is the truncation length; else
    /// the configuration's `max_position_embeddings`). The model's id is the one its
    /// install manifest records, else the folder's name.
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        let config_path = dir.join("config.json");
        let config: Config =
            serde_json::from_slice(&read(&config_path)?).map_err(|e| EmbedError::Config {
                path: config_path.clone(),
                reason: e.to_string(),
            })?;
        if config.hidden_size == 0 || config.num_attention_heads == 0 {
            return Err(EmbedError::Config {
                path: config_path,
                reason: "hidden_size and num_attention_heads must be positive".into(),
            });
        }
        if !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
        {
            return Err(EmbedError::Config {
                path: config_path,
                reason: format!(
                    "hidden_size {} is not a multiple of num_attention_heads {}",
                    config.hidden_size, config.num_attention_heads
                ),
            });
        }
        let max_tokens = max_seq_length(dir)?
            .unwrap_or(config.max_position_embeddings)
            .min(config.max_position_embeddings);
        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"), max_tokens)?;

        let weights_path = dir.join("model.safetensors");
        let bytes = read(&weights_path)?;
        let device = Device::Cpu;
        let weights_error = |e: candle_core::Error| EmbedError::Weights {
            path: weights_path.clone(),
            reason: e.to_string(),
        };
        let vb = VarBuilder::from_slice_safetensors(&bytes, DType::F32, &device)
            .map_err(weights_error)?;
        let model = BertModel::load(vb, &config).map_err(weights_error)?;
        drop(bytes);

        Ok(Embedder {
            model,
            tokenizer,
            model_id: model_id(dir),
            dim: config.hidden_size,
            max_tokens,
            device,
        })
    }

    /// The model's identity, to store beside every vector it makes.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The length of every vector (384 for the pinned model).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Inputs longer than this many tokens (special tokens included) are truncated.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// How many tokens `text` is, special tokens included, before truncation: what a
    /// chunker needs to keep chunks within [`Embedder::max_tokens`].
    pub fn count_tokens(&self, text: &str) -> Result<usize, EmbedError> {
        let mut tokenizer = self.tokenizer.clone();
        tokenizer
            .with_truncation(None)
            .map_err(|e| EmbedError::Tokenize {
                index: 0,
                reason: e.to_string(),
            })?;
        let encoding = tokenizer
            .encode(text, true)
            .map_err(|e| EmbedError::Tokenize {
                index: 0,
                reason: e.to_string(),
            })?;
        Ok(encoding.len())
    }

    /// One unit-length vector per text, in order: mean of the last layer's token
    /// states over the attention mask, then L2-normalised (sentence-transformers'
    /// `Pooling(mean)` + `Normalize`). Tokenizes on all cores, runs
    /// [`BATCH_SIZE`] texts at a time (the matrix products use all cores too).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_batched(texts, BATCH_SIZE)
    }

    /// [`Embedder::embed`] with `batch_size` texts per forward pass instead of
    /// [`BATCH_SIZE`] (for measuring; the vectors are the same).
    pub fn embed_batched(
        &self,
        texts: &[&str],
        batch_size: usize,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenize {
                index: 0,
                reason: e.to_string(),
            })?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(batch_size.max(1)) {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| encodings[i].get_ids()).collect();
            let vectors = self
                .run_batch(&rows)
                .map_err(|e| EmbedError::Inference(e.to_string()))?;
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn run_batch(&self, rows: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(rows.len() * len);
        let mut mask = Vec::with_capacity(rows.len() * len);
        for row in rows {
            ids.extend_from_slice(row);
            ids.extend(std::iter::repeat_n(0u32, len - row.len()));
            mask.extend(std::iter::repeat_n(1u32, row.len()));
            mask.extend(std::iter::repeat_n(0u32, len - row.len()));
        }
        let shape = (rows.len(), len);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let mask = Tensor::from_vec(mask, shape, &self.device)?;
        let type_ids = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?;
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        mean.broadcast_div(&norm)?.to_vec2::<f32>()
    }
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
