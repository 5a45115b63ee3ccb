//! The BERT configuration (`config.json`) the encoder needs, checked before any weight
//! is read, so a bad file is named with its reason instead of failing mid-forward.

use std::path::Path;

use serde::Deserialize;

use crate::error::EmbedError;

/// The activation between the feed-forward layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// The exact GELU, `x·Φ(x)` with the error function (BERT's `gelu`).
    Gelu,
    /// `max(x, 0)`.
    Relu,
}

/// The fields of a Hugging Face BERT `config.json` that shape the forward pass.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    /// Rows of the word embedding table.
    pub vocab_size: usize,
    /// Width of every token state (384 for all-MiniLM-L6-v2).
    pub hidden_size: usize,
    /// Transformer layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer; `hidden_size` is a multiple of it.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// The feed-forward activation.
    pub hidden_act: Activation,
    /// Rows of the position embedding table: the longest input the model can read.
    pub max_position_embeddings: usize,
    /// Rows of the token type table (at least 1: every token is of type 0).
    pub type_vocab_size: usize,
    /// The layer norms' epsilon.
    pub layer_norm_eps: f64,
}

impl BertConfig {
    /// Reads and checks `path`.
    pub fn read(path: &Path, bytes: &[u8]) -> Result<BertConfig, EmbedError> {
        let bad = |reason: String| EmbedError::Config {
            path: path.to_path_buf(),
            reason,
        };
        let config: BertConfig = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
        for (name, value) in [
            ("vocab_size", config.vocab_size),
            ("hidden_size", config.hidden_size),
            ("num_hidden_layers", config.num_hidden_layers),
            ("num_attention_heads", config.num_attention_heads),
            ("intermediate_size", config.intermediate_size),
            ("max_position_embeddings", config.max_position_embeddings),
            ("type_vocab_size", config.type_vocab_size),
        ] {
            if value == 0 {
                return Err(bad(format!("{name} must be positive")));
            }
        }
        if !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
        {
            return Err(bad(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            )));
        }
        if !(config.layer_norm_eps.is_finite() && config.layer_norm_eps > 0.0) {
            return Err(bad(format!(
                "layer_norm_eps {} is not a positive number",
                config.layer_norm_eps
            )));
        }
        Ok(config)
    }
}
