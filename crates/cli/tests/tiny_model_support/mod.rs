//! A tiny random-weight sentence encoder installed where `loci` looks for its model
//! (`$LOCI_HOME/models/all-MiniLM-L6-v2`): the same BERT architecture and dimension
//! (384) as the pinned all-MiniLM-L6-v2, two layers, a 30-word WordPiece vocabulary,
//! each file padded to its pinned size (a load checks sizes; digests only at install
//! and in `loci models status`). Its vectors mean nothing, but they are real vectors
//! from a real forward pass, fast enough for a test.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use candle_transformers::models::bert::{BertModel, Config};
use loci_embed::pinned;

const VOCAB: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "cat", "dog", "sits", "on", "mat",
    "is", "run", "memory", "index", "code", "graph", "fast", "slow", "note", "about", "function",
    "changed", ".", ",", "?", "##s", "##ing", "##ed",
];

/// How the installed model behaves.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tiny {
    /// Embeds any text.
    Working,
    /// Loads, but fails on any text with a word past its first five tokens: its
    /// embedding table is shorter than its tokenizer's vocabulary.
    FailsToEmbed,
}

/// Installs the tiny model under `home` (a `LOCI_HOME`); answers the model folder.
pub fn install(home: &Path, kind: Tiny) -> PathBuf {
    let dir = pinned::installed_dir(&loci_embed::models_dir(home));
    std::fs::create_dir_all(&dir).unwrap();
    let rows = match kind {
        Tiny::Working => VOCAB.len(),
        Tiny::FailsToEmbed => 5,
    };
    let config = serde_json::json!({
        "architectures": ["BertModel"], "vocab_size": rows, "hidden_size": pinned::DIM,
        "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 512,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 64, "type_vocab_size": 2, "initializer_range": 0.02,
        "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "absolute",
        "model_type": "bert"
    });
    let cfg: Config = serde_json::from_value(config.clone()).unwrap();
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    BertModel::load(vb, &cfg).unwrap();
    let mut tensors: HashMap<String, Tensor> = varmap
        .data()
        .lock()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
        .collect();
    write_padded_safetensors(&dir.join("model.safetensors"), &mut tensors);
    write_padded(&dir, "config.json", config.to_string());
    write_padded(&dir, "tokenizer.json", tokenizer_json());
    write_padded(
        &dir,
        "sentence_bert_config.json",
        r#"{"max_seq_length": 16, "do_lower_case": false}"#.into(),
    );
    dir
}

fn pinned_size(name: &str) -> u64 {
    pinned::FILES.iter().find(|f| f.name == name).unwrap().size
}

/// A JSON document followed by spaces up to the pinned size of `name`.
fn write_padded(dir: &Path, name: &str, mut text: String) {
    let size = pinned_size(name) as usize;
    assert!(text.len() <= size, "{name}: {} > {size}", text.len());
    text.push_str(&" ".repeat(size - text.len()));
    std::fs::write(dir.join(name), text).unwrap();
}

/// The weights plus one unused `u8` tensor sized so the file is the pinned size.
fn write_padded_safetensors(path: &Path, tensors: &mut HashMap<String, Tensor>) {
    let target = pinned_size("model.safetensors") as i64;
    let mut pad = 0i64;
    for _ in 0..8 {
        tensors.insert(
            "loci_test_padding".into(),
            Tensor::zeros(pad as usize, DType::U8, &Device::Cpu).unwrap(),
        );
        candle_core::safetensors::save(tensors, path).unwrap();
        let size = std::fs::metadata(path).unwrap().len() as i64;
        if size == target {
            return;
        }
        pad = (pad + target - size).max(0);
    }
    panic!("could not pad {} to {target} bytes", path.display());
}

fn tokenizer_json() -> String {
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
    let special = |s: &str| serde_json::json!({"SpecialToken": {"id": s, "type_id": 0}});
    serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
            "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]"), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]")],
            "pair": [special("[CLS]"), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]"),
                {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
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
