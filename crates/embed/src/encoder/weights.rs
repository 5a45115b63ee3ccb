//! The encoder's weights, read once from `model.safetensors` into owned `f32` arrays
//! (the file is mapped read-only while it is read, then unmapped), each checked
//! against the configuration's shapes so a file that disagrees is refused at load,
//! naming the tensor.

use std::path::Path;

use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};

use super::config::BertConfig;
use super::int8::PackedI8;
use super::q4::Q4Rows;
use crate::error::EmbedError;

/// A layer norm's scale and shift.
pub struct Norm {
    /// γ, one per channel.
    pub weight: Vec<f32>,
    /// β, one per channel.
    pub bias: Vec<f32>,
}

/// A linear layer `y = x·Wᵀ + b`, `W` stored as PyTorch does: `out` rows of `in`.
pub struct Linear {
    /// `out × in`, row-major (empty once quantised: [`Linear::quantise`]).
    pub weight: Vec<f32>,
    /// `W` quantised and packed for the 8-bit kernel, when the encoder runs it.
    pub int8: Option<PackedI8>,
    /// `out`.
    pub bias: Vec<f32>,
    /// Input width.
    pub n_in: usize,
    /// Output width.
    pub n_out: usize,
}

impl Linear {
    /// Quantises `W` for the 8-bit kernel and drops its f32 copy (no longer read).
    pub fn quantise(&mut self) {
        self.int8 = Some(PackedI8::pack(&self.weight, self.n_out, self.n_in));
        self.weight = Vec::new();
    }
}

/// One transformer layer.
pub struct Layer {
    /// Query, key and value as one `3·hidden × hidden` projection (one matrix product
    /// instead of three).
    pub qkv: Linear,
    /// The attention's output projection.
    pub attn_out: Linear,
    /// The norm after the attention's residual.
    pub attn_norm: Norm,
    /// The feed-forward's first projection (to `intermediate_size`).
    pub up: Linear,
    /// Its second (back to `hidden_size`).
    pub down: Linear,
    /// The norm after the feed-forward's residual.
    pub out_norm: Norm,
}

impl Layer {
    /// The layer's four linear layers.
    pub fn linears_mut(&mut self) -> [&mut Linear; 4] {
        [
            &mut self.qkv,
            &mut self.attn_out,
            &mut self.up,
            &mut self.down,
        ]
    }
}

/// The word embedding table, `vocab_size × hidden`: f32 as `model.safetensors` holds
/// it, or 4-bit as an E5S1 file does (multilingual-e5-small's 250,037 rows would be
/// 384 MB of f32; a token's row is decoded when it is looked up).
pub enum WordTable {
    /// Row-major f32, `hidden` per row.
    F32(Vec<f32>),
    /// Q4_0 blocks.
    Q4(Q4Rows),
}

impl WordTable {
    /// Row `id` (`out.len()` = hidden) written into `out`.
    ///
    /// # Panics
    /// When `id` is not a row (the encoder checks ids against `vocab_size` first).
    pub fn row_into(&self, id: usize, out: &mut [f32]) {
        match self {
            WordTable::F32(table) => out.copy_from_slice(&table[id * out.len()..][..out.len()]),
            WordTable::Q4(table) => table.row_into(id, out),
        }
    }
}

/// Every weight of the encoder.
pub struct Weights {
    /// `vocab_size × hidden`.
    pub word: WordTable,
    /// `max_position_embeddings × hidden`.
    pub position: Vec<f32>,
    /// Row 0 of the token type table (every input is one segment of type 0).
    pub token_type0: Vec<f32>,
    /// The embeddings' norm.
    pub embed_norm: Norm,
    /// The layers, in order.
    pub layers: Vec<Layer>,
}

impl Weights {
    /// Reads `path` for a model shaped as `config`.
    pub fn read(path: &Path, config: &BertConfig) -> Result<Weights, EmbedError> {
        let file = std::fs::File::open(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => EmbedError::MissingFile {
                path: path.to_path_buf(),
            },
            _ => EmbedError::Read {
                path: path.to_path_buf(),
                source,
            },
        })?;
        // SAFETY: the map is read-only and lives only for this function; loci never
        // writes an installed model in place (an install stages a new folder and
        // renames it over the old one, which leaves this file's contents as they are).
        let map = unsafe { Mmap::map(&file) }.map_err(|source| EmbedError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |reason: String| EmbedError::Weights {
            path: path.to_path_buf(),
            reason,
        };
        let st = SafeTensors::deserialize(&map).map_err(|e| bad(e.to_string()))?;
        let prefix = ["", "bert.", "model."]
            .into_iter()
            .find(|p| {
                st.tensor(&format!("{p}embeddings.word_embeddings.weight"))
                    .is_ok()
            })
            .ok_or_else(|| bad("no tensor embeddings.word_embeddings.weight".into()))?;
        let reader = Reader {
            st: &st,
            prefix,
            bad: &bad,
        };
        let h = config.hidden_size;
        let norm = |name: &str| -> Result<Norm, EmbedError> {
            Ok(Norm {
                weight: reader.get(&format!("{name}.weight"), &[h])?,
                bias: reader.get(&format!("{name}.bias"), &[h])?,
            })
        };
        let linear = |name: &str, n_in: usize, n_out: usize| -> Result<Linear, EmbedError> {
            Ok(Linear {
                weight: reader.get(&format!("{name}.weight"), &[n_out, n_in])?,
                bias: reader.get(&format!("{name}.bias"), &[n_out])?,
                int8: None,
                n_in,
                n_out,
            })
        };
        let word = reader.get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?;
        let position = reader.get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        let mut token_type = reader.get(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        token_type.truncate(h);
        let embed_norm = norm("embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let q = linear(&format!("{p}.attention.self.query"), h, h)?;
            let k = linear(&format!("{p}.attention.self.key"), h, h)?;
            let v = linear(&format!("{p}.attention.self.value"), h, h)?;
            let qkv = Linear {
                weight: [q.weight, k.weight, v.weight].concat(),
                bias: [q.bias, k.bias, v.bias].concat(),
                int8: None,
                n_in: h,
                n_out: 3 * h,
            };
            layers.push(Layer {
                qkv,
                attn_out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                up: linear(
                    &format!("{p}.intermediate.dense"),
                    h,
                    config.intermediate_size,
                )?,
                down: linear(&format!("{p}.output.dense"), config.intermediate_size, h)?,
                out_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Weights {
            word: WordTable::F32(word),
            position,
            token_type0: token_type,
            embed_norm,
            layers,
        })
    }
}

struct Reader<'a, 'd> {
    st: &'a SafeTensors<'d>,
    prefix: &'a str,
    bad: &'a dyn Fn(String) -> EmbedError,
}

impl Reader<'_, '_> {
    /// The tensor `name` as `f32`s, refused unless its shape is `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let full = format!("{}{name}", self.prefix);
        let view = self
            .st
            .tensor(&full)
            .map_err(|_| (self.bad)(format!("no tensor {full}")))?;
        if view.shape() != shape {
            return Err((self.bad)(format!(
                "tensor {full} has shape {:?}, the configuration needs {shape:?}",
                view.shape()
            )));
        }
        match view.dtype() {
            Dtype::F32 => Ok(view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()),
            other => Err((self.bad)(format!(
                "tensor {full} is {other:?}; only F32 weights are read"
            ))),
        }
    }
}
