//! Embedding throughput and the embedder's peak RSS: loci's packed encoder against
//! candle's `BertModel` run the way loci ran it before (inputs sorted by length, 16 per
//! batch, each batch padded to its longest), on the same chunks.
//!
//! ```text
//! cargo build --release -p loci-embed --example embed_bench
//! target/release/examples/embed_bench --engine packed|candle --mix real|full \
//!     [--precision auto|f32|int8] [--models DIR] [--text corpus.jsonl] [--chunks 512] [--batch N]
//! ```
//! `--mix real`: the chunks `loci_memory::chunk` makes of the bodies in `--text` (the
//! quality set's `corpus.jsonl`, one memory per line), every k-th so they spread over
//! the corpus; `--mix full`: 256 consecutive words each, truncated to 256 tokens.
//! `--precision`: the packed encoder's linear layers in f32 or 8-bit (default: auto, as
//! `loci` runs it). One engine per process, so the peak RSS (`VmHWM`, load included) is
//! that engine's; scripts/bench-embed.sh runs the engines alternately and prints ratios.

use std::path::{Path, PathBuf};
use std::time::Instant;

use loci_embed::Embedder;

#[path = "common/proc_status.rs"]
mod proc_status;
use proc_status::status_kb;

type Vectors = Vec<Vec<f32>>;

struct Args {
    models: PathBuf,
    text: Option<PathBuf>,
    chunks: usize,
    batch: Option<usize>,
    engine: String,
    mix: String,
    precision: loci_embed::Precision,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = args()?;
    let rss_before = status_kb("VmRSS");
    let started = Instant::now();
    let engine = match a.engine.as_str() {
        "packed" => Engine::Packed(Embedder::load_installed_with_precision(
            &a.models,
            a.precision,
        )?),
        "candle" => Engine::Candle(candle_old::Model::load(
            &loci_embed::pinned::installed_dir(&a.models),
        )?),
        other => return Err(format!("--engine {other}: packed or candle").into()),
    };
    let load = started.elapsed();
    let rss_loaded = status_kb("VmRSS");

    let pieces = match a.mix.as_str() {
        "real" => real_chunks(a.text.as_deref(), a.chunks)?,
        "full" => full_chunks(a.text.as_deref(), a.chunks)?,
        other => return Err(format!("--mix {other}: real or full").into()),
    };
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let mut tokens: Vec<usize> = engine.tokenize(&refs)?.iter().map(Vec::len).collect();
    let total_tokens: usize = tokens.iter().sum();
    tokens.sort_unstable();
    let pct = |p: usize| tokens[(tokens.len() - 1) * p / 100];
    let mean_tokens = total_tokens as f64 / tokens.len() as f64;
    // The encoder's arithmetic: 2 FLOP per weight per token in the layers, plus the
    // attention's two len × len × hidden products per layer.
    let config = read_config(&a.models)?;
    let (h, layers) = (config["hidden_size"], config["num_hidden_layers"]);
    let layer_weights = 4 * h * h + 2 * h * config["intermediate_size"];
    let gflop: f64 = tokens
        .iter()
        .map(|&l| (2 * layers * layer_weights * l + 4 * layers * l * l * h) as f64)
        .sum::<f64>()
        / 1e9;

    let batch = a.batch.unwrap_or(match engine {
        Engine::Candle(_) => 16,
        Engine::Packed(_) => loci_embed::BATCH_SIZE,
    });
    let warm = &refs[..batch.min(refs.len())];
    let run = |texts: &[&str]| -> Result<(Vectors, f64), Box<dyn std::error::Error>> {
        let t = Instant::now();
        let ids = engine.tokenize(texts)?;
        let tokenize = t.elapsed().as_secs_f64();
        let rows: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        let v = match &engine {
            Engine::Candle(m) => m.embed(&rows, batch)?,
            Engine::Packed(e) => e.embed_ids(&rows, batch)?,
        };
        Ok((v, tokenize))
    };
    run(warm)?;
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let (vectors, tokenize_s) = run(&refs)?;
    let secs = started.elapsed().as_secs_f64();
    let cpu_s = cpu_seconds() - cpu_before;
    assert_eq!(vectors.len(), refs.len());
    let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into());
    let precision = match &engine {
        Engine::Packed(e) => e.precision().name(),
        Engine::Candle(_) => "f32",
    };
    println!(
        "{{\"engine\": \"{}\", \"precision\": \"{precision}\", \"mix\": \"{}\", \"batch\": {batch}, \"chunks\": {}, \
         \"mean_tokens\": {mean_tokens:.0}, \"p50_tokens\": {}, \"p90_tokens\": {}, \
         \"max_tokens\": {}, \"gflop\": {gflop:.1}, \"threads\": \"{threads}\", \
         \"seconds\": {secs:.2}, \"tokenize_s\": {tokenize_s:.3}, \"chunks_per_s\": {:.1}, \
         \"gflop_per_s\": {:.1}, \"cpu_s\": {cpu_s:.2}, \"gflop_per_cpu_s\": {:.1}, \"load_ms\": {}, \"rss_before_mb\": {:.0}, \
         \"rss_loaded_mb\": {:.0}, \"peak_rss_mb\": {:.0}}}",
        a.engine,
        a.mix,
        refs.len(),
        pct(50),
        pct(90),
        tokens.last().unwrap_or(&0),
        refs.len() as f64 / secs,
        gflop / secs,
        gflop / cpu_s.max(0.01),
        load.as_millis(),
        rss_before / 1024.0,
        rss_loaded / 1024.0,
        status_kb("VmHWM") / 1024.0,
    );
    Ok(())
}

/// The engine measured, with the tokenizer it runs behind.
enum Engine {
    Packed(Embedder),
    Candle(candle_old::Model),
}

impl Engine {
    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, Box<dyn std::error::Error>> {
        Ok(match self {
            Engine::Packed(e) => e.tokenize(texts)?,
            Engine::Candle(m) => m.tokenize(texts).map_err(|e| e.to_string())?,
        })
    }
}

fn args() -> Result<Args, Box<dyn std::error::Error>> {
    let mut a = Args {
        models: PathBuf::new(),
        text: None,
        chunks: 512,
        batch: None,
        engine: "packed".into(),
        mix: "real".into(),
        precision: loci_embed::Precision::Auto,
    };
    let mut models = None;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--models" => models = Some(PathBuf::from(value()?)),
            "--text" => a.text = Some(value()?.into()),
            "--chunks" => a.chunks = value()?.parse()?,
            "--batch" => a.batch = Some(value()?.parse()?),
            "--engine" => a.engine = value()?,
            "--mix" => a.mix = value()?,
            "--precision" => a.precision = value()?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    a.models = match models {
        Some(m) => m,
        None => default_models_dir().ok_or("no data dir: pass --models")?,
    };
    Ok(a)
}

fn read_config(
    models: &Path,
) -> Result<std::collections::HashMap<String, usize>, Box<dyn std::error::Error>> {
    let path = loci_embed::pinned::installed_dir(models).join("config.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path)?)?;
    Ok(v.as_object()
        .ok_or("config.json is not an object")?
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_u64()? as usize)))
        .collect())
}

fn default_models_dir() -> Option<PathBuf> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let data = var("LOCI_HOME")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("loci")))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/loci")))?;
    Some(loci_embed::models_dir(&data))
}

/// The CPU time (user + system, every thread) this process has used: on a shared
/// machine, GFLOP per CPU second says how well the code uses the time it gets.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    let ticks = f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0);
    ticks / 100.0 // USER_HZ, 100 on Linux
}

/// The bodies of `text` (one `{"text"}` object a line), else loci's own docs.
fn bodies(text: Option<&Path>) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    match text {
        Some(path) => std::fs::read_to_string(path)?
            .lines()
            .map(|line| {
                let v: serde_json::Value = serde_json::from_str(line)?;
                Ok(v["text"].as_str().unwrap_or_default().to_string())
            })
            .collect(),
        None => {
            let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs");
            std::fs::read_dir(docs)?
                .map(|e| Ok(std::fs::read_to_string(e?.path())?))
                .collect()
        }
    }
}

/// `n` of the chunks the memory makes of the bodies, every k-th of them all.
fn real_chunks(text: Option<&Path>, n: usize) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let all: Vec<String> = bodies(text)?
        .iter()
        .flat_map(|b| {
            loci_memory::chunk::chunks(b)
                .into_iter()
                .map(|c| b[c.start..c.end].to_string())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.trim().is_empty())
        .collect();
    if all.is_empty() {
        return Err("no text to chunk".into());
    }
    let step = (all.len() / n.max(1)).max(1);
    Ok(all.into_iter().step_by(step).take(n).collect())
}

/// `n` chunks of 256 consecutive words each, cycling through the words: at least 258
/// tokens with the special ones, so the tokenizer truncates every one to the model's
/// 256 (the worst case for throughput).
fn full_chunks(text: Option<&Path>, n: usize) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let all = bodies(text)?.join("\n");
    let words: Vec<&str> = all.split_whitespace().collect();
    if words.is_empty() {
        return Err("no text to cut chunks from".into());
    }
    Ok((0..n)
        .map(|c| {
            (0..256)
                .map(|i| words[(c * 256 + i) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect())
}

/// The baseline: candle's `BertModel` as loci ran it before its own encoder.
mod candle_old {
    use std::path::Path;

    use candle_core::{DType, Device, Tensor};
    use candle_nn::VarBuilder;
    use candle_transformers::models::bert::{BertModel, Config};

    pub struct Model {
        model: BertModel,
        device: Device,
        tokenizer: tokenizers::Tokenizer,
    }

    impl Model {
        pub fn load(dir: &Path) -> Result<Model, Box<dyn std::error::Error>> {
            let config: Config = serde_json::from_slice(&std::fs::read(dir.join("config.json"))?)?;
            let bytes = std::fs::read(dir.join("model.safetensors"))?;
            let device = Device::Cpu;
            let vb = VarBuilder::from_slice_safetensors(&bytes, DType::F32, &device)?;
            let model = BertModel::load(vb, &config)?;
            let mut tokenizer = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json"))
                .map_err(|e| e.to_string())?;
            tokenizer.with_padding(None);
            tokenizer
                .with_truncation(Some(tokenizers::TruncationParams {
                    max_length: 256,
                    ..Default::default()
                }))
                .map_err(|e| e.to_string())?;
            Ok(Model {
                model,
                device,
                tokenizer,
            })
        }

        pub fn tokenize(&self, texts: &[&str]) -> tokenizers::Result<Vec<Vec<u32>>> {
            let encodings = self.tokenizer.encode_batch(texts.to_vec(), true)?;
            Ok(encodings.iter().map(|e| e.get_ids().to_vec()).collect())
        }

        /// Sorted by length, `batch` at a time, each batch padded to its longest.
        pub fn embed(
            &self,
            ids: &[&[u32]],
            batch: usize,
        ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>> {
            let mut order: Vec<usize> = (0..ids.len()).collect();
            order.sort_by_key(|&i| ids[i].len());
            let mut out = vec![Vec::new(); ids.len()];
            for b in order.chunks(batch.max(1)) {
                let rows: Vec<&[u32]> = b.iter().map(|&i| ids[i]).collect();
                for (&i, v) in b.iter().zip(self.run_batch(&rows)?) {
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
}
