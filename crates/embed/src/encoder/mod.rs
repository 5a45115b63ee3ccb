//! loci's BERT encoder: the forward pass of a BERT sentence encoder over the weights
//! of a `model.safetensors`, written for throughput on a few CPU cores. Candle's
//! `BertModel` (which loci ran first, and which the tests still compare with) pads
//! every input of a batch to the longest, builds the whole batch × heads × len²
//! attention tensor and allocates a tensor per operation; here a batch's tokens are
//! packed into one matrix without padding (every matrix product then has one tall
//! left side), attention runs per sequence and head in a small scratch buffer, biases
//! and residuals are added in place, and the buffers are reused from layer to layer.

mod attention;
pub mod config;
mod int8;
mod kernels;
pub mod q4;
pub mod weights;

use std::path::Path;

pub use attention::Span;
use config::BertConfig;
use weights::Weights;

use crate::error::EmbedError;
use crate::precision::Precision;

/// The work buffers of a forward pass, grown to the largest batch's token count and
/// reused by every batch of one [`crate::Embedder::embed`] call.
#[derive(Default)]
pub struct Buffers {
    x: Vec<f32>,
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    up: Vec<f32>,
    quantized: int8::Quantized,
}

/// A loaded BERT encoder.
pub struct Encoder {
    config: BertConfig,
    weights: Weights,
    precision: Precision,
}

impl Encoder {
    /// Loads the weights at `path` for `config`, quantising the linear layers when
    /// `precision` (resolved for this CPU: [`Precision::resolve`]) is 8-bit.
    pub fn load(
        path: &Path,
        config: BertConfig,
        precision: Precision,
    ) -> Result<Encoder, EmbedError> {
        let precision = precision.resolve()?;
        let weights = Weights::read(path, &config)?;
        Ok(Encoder::from_weights(config, weights, precision))
    }

    /// An encoder over weights read elsewhere (an E5S1 file: [`crate::e5s1`]), shaped
    /// as `config` (the caller checked). `precision` must be resolved
    /// ([`Precision::resolve`]); in 8-bit, every linear layer not yet quantised is.
    pub fn from_weights(config: BertConfig, mut weights: Weights, precision: Precision) -> Encoder {
        if precision == Precision::Int8 {
            for layer in &mut weights.layers {
                layer
                    .linears_mut()
                    .into_iter()
                    .filter(|l| l.int8.is_none())
                    .for_each(|l| l.quantise());
            }
        }
        Encoder {
            config,
            weights,
            precision,
        }
    }

    /// The precision the linear layers run in ([`Precision::F32`] or [`Precision::Int8`]).
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// One mean-pooled, L2-normalised vector per sequence of token ids (each already
    /// truncated to the model's length), computed in one pass over all their tokens.
    pub fn embed_ids(&self, seqs: &[&[u32]], b: &mut Buffers) -> Result<Vec<Vec<f32>>, EmbedError> {
        let c = &self.config;
        let (h, vocab) = (c.hidden_size, c.vocab_size);
        let mut spans = Vec::with_capacity(seqs.len());
        let mut rows = 0usize;
        for (index, ids) in seqs.iter().enumerate() {
            if ids.len() > c.max_position_embeddings {
                return Err(EmbedError::Inference(format!(
                    "input {index} is {} tokens, past the model's {} positions",
                    ids.len(),
                    c.max_position_embeddings
                )));
            }
            if let Some(&id) = ids.iter().find(|&&id| id as usize >= vocab) {
                return Err(EmbedError::Inference(format!(
                    "input {index} has token id {id}, past the model's {vocab} words \
                     (the tokenizer and the weights disagree)"
                )));
            }
            spans.push(Span {
                start: rows,
                len: ids.len(),
            });
            rows += ids.len();
        }
        self.embed_tokens(seqs, &mut b.x, rows);
        for (buf, width) in [
            (&mut b.qkv, 3 * h),
            (&mut b.ctx, h),
            (&mut b.up, c.intermediate_size),
        ] {
            buf.resize(rows * width, 0.0);
        }
        let eps = c.layer_norm_eps as f32;
        let par = kernels::all_threads();
        let q = &mut b.quantized;
        for layer in &self.weights.layers {
            kernels::fill_rows(&mut b.qkv, &layer.qkv.bias);
            linear(&b.x, rows, &layer.qkv, &mut b.qkv, par, q);
            attention::attention(&b.qkv, &mut b.ctx, &spans, h, c.num_attention_heads);
            kernels::add_rows(&mut b.x, &layer.attn_out.bias);
            linear(&b.ctx, rows, &layer.attn_out, &mut b.x, par, q);
            kernels::layer_norm(&mut b.x, &layer.attn_norm, eps);
            kernels::fill_rows(&mut b.up, &layer.up.bias);
            linear(&b.x, rows, &layer.up, &mut b.up, par, q);
            kernels::activate(&mut b.up, c.hidden_act);
            kernels::add_rows(&mut b.x, &layer.down.bias);
            linear(&b.up, rows, &layer.down, &mut b.x, par, q);
            kernels::layer_norm(&mut b.x, &layer.out_norm, eps);
        }
        Ok(spans.iter().map(|s| pool(&b.x, *s, h)).collect())
    }

    /// The embedding layer: each token's word, position and type-0 rows summed, then
    /// normalised, into `x` (`rows × hidden`).
    fn embed_tokens(&self, seqs: &[&[u32]], x: &mut Vec<f32>, rows: usize) {
        let h = self.config.hidden_size;
        let w = &self.weights;
        x.clear();
        x.resize(rows * h, 0.0);
        let tokens = seqs
            .iter()
            .flat_map(|ids| ids.iter().enumerate().map(|(pos, &id)| (pos, id)));
        for (row, (pos, id)) in x.chunks_exact_mut(h).zip(tokens) {
            w.word.row_into(id as usize, row);
            let position = &w.position[pos * h..][..h];
            for ((v, p), t) in row.iter_mut().zip(position).zip(&w.token_type0) {
                *v = *v + p + t;
            }
        }
        kernels::layer_norm(x, &w.embed_norm, self.config.layer_norm_eps as f32);
    }
}

/// `out += x·Wᵀ` for `rows` rows of `x`, in the layer's precision (8-bit when it was
/// quantised at load, else f32 through `gemm`).
fn linear(
    x: &[f32],
    rows: usize,
    layer: &weights::Linear,
    out: &mut [f32],
    par: gemm::Parallelism,
    q: &mut int8::Quantized,
) {
    match &layer.int8 {
        Some(packed) => int8::matmul(x, rows, packed, out, true, q),
        None => kernels::matmul_wt(x, rows, layer, out, true, par),
    }
}

/// The mean of a sequence's last-layer states, L2-normalised (sentence-transformers'
/// `Pooling(mean)` + `Normalize`); an empty sequence gives the zero vector.
fn pool(x: &[f32], span: Span, h: usize) -> Vec<f32> {
    let mut mean = vec![0f32; h];
    for row in x[span.start * h..(span.start + span.len) * h].chunks_exact(h) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    let n = span.len.max(1) as f32;
    mean.iter_mut().for_each(|m| *m /= n);
    let norm = mean.iter().map(|m| m * m).sum::<f32>().sqrt().max(1e-12);
    mean.iter_mut().for_each(|m| *m /= norm);
    mean
}
