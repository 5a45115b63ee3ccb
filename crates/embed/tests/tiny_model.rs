//! The loading and embedding code, always exercised: a tiny model of the same BERT
//! architecture (random weights) built by the test, and the bad inputs a model folder
//! can hold.

use crate::common;

use common::{TINY_MAX_TOKENS, candle_reference, cosine, max_abs_diff, write_tiny_model};
use loci_embed::{EmbedError, Embedder, Precision};

fn tiny(hidden: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-bert");
    write_tiny_model(&dir, hidden);
    (tmp, dir)
}

#[test]
fn tiny_model_loads_and_gives_unit_vectors_of_its_dimension() {
    let (_tmp, dir) = tiny(32);
    let e = Embedder::load(&dir).unwrap();
    assert_eq!(e.dim(), 32);
    assert_eq!(e.model_id(), "tiny-bert");
    assert_eq!(e.max_tokens(), TINY_MAX_TOKENS);
    let v = e
        .embed(&["the cat sits on the mat", "a dog is running"])
        .unwrap();
    assert_eq!(v.len(), 2);
    for x in &v {
        assert_eq!(x.len(), 32);
        let norm: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
    }
    assert!(
        cosine(&v[0], &v[1]) < 0.9999,
        "different texts, different vectors"
    );
}

#[test]
fn batched_embeddings_equal_one_at_a_time_across_batches_and_lengths() {
    let (_tmp, dir) = tiny(32);
    let e = Embedder::load(&dir).unwrap();
    let words = [
        "the", "cat", "sits", "on", "a", "mat", "memory", "index", "code", "graph",
    ];
    let texts: Vec<String> = (0..3 * loci_embed::BATCH_SIZE + 5)
        .map(|i| {
            (0..(i % 11) + 1)
                .map(|j| words[(i * 7 + j) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batched = e.embed(&refs).unwrap();
    for (text, got) in refs.iter().zip(&batched) {
        let alone = e.embed(&[text]).unwrap().remove(0);
        let max_diff = got
            .iter()
            .zip(&alone)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            max_diff < 1e-4,
            "{text:?}: padded batch differs from alone by {max_diff}"
        );
    }
}

#[test]
fn packed_encoder_equals_candles_bert_on_the_same_weights() {
    // Two widths (one head of 8, one of 16 columns), sequences of many lengths packed
    // into one pass: each vector must be what candle's BERT gives that sequence alone.
    // In f32: the 8-bit path (the default on CPUs with AVX-512 VNNI) is compared with
    // this one in tests/int8.rs.
    for hidden in [32, 64] {
        let (_tmp, dir) = tiny(hidden);
        let e = Embedder::load_with_precision(&dir, Precision::F32).unwrap();
        let ids: Vec<Vec<u32>> = (1..=TINY_MAX_TOKENS)
            .map(|len| {
                let mut row = vec![2u32];
                row.extend((0..len.saturating_sub(2)).map(|i| 5 + ((len * 3 + i) % 25) as u32));
                row.push(3);
                row.truncate(len.max(1));
                row
            })
            .collect();
        let rows: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        let got = e.embed_ids(&rows, rows.len()).unwrap();
        let want = candle_reference(&dir, &rows);
        let diff = max_abs_diff(&got, &want);
        assert!(
            diff < 1e-5,
            "hidden {hidden}: packed differs from candle by {diff}"
        );
        // And one text at a time through the public entry point.
        let text = "the cat sits on the mat";
        let one = e.embed(&[text]).unwrap();
        let ids = e.tokenize(&[text]).unwrap();
        let diff = max_abs_diff(&one, &candle_reference(&dir, &[ids[0].as_slice()]));
        assert!(
            diff < 1e-5,
            "hidden {hidden}: {text:?} differs from candle by {diff}"
        );
    }
}

#[test]
fn token_ids_past_the_vocabulary_are_an_error_naming_the_input() {
    let (_tmp, dir) = tiny(32);
    let e = Embedder::load(&dir).unwrap();
    let vocab = common::VOCAB.len() as u32;
    let err = e.embed_ids(&[&[2, 5, 3], &[2, vocab, 3]], 8).unwrap_err();
    assert!(matches!(err, EmbedError::Inference(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("input 1") && message.contains(&vocab.to_string()),
        "{message}"
    );
    // Longer than the position table: refused the same way, not indexed past it.
    let long = vec![5u32; 65];
    let err = e.embed_ids(&[&long], 8).unwrap_err();
    assert!(err.to_string().contains("65 tokens"), "{err}");
}

#[test]
fn inputs_past_the_max_length_are_truncated_not_refused() {
    let (_tmp, dir) = tiny(32);
    let e = Embedder::load(&dir).unwrap();
    let long: Vec<&str> = std::iter::repeat_n("cat", 100).collect();
    let long = long.join(" ");
    assert_eq!(e.count_tokens(&long).unwrap(), 102);
    // [CLS] + 14 words + [SEP] is the whole window: the rest cannot change the vector.
    let head: Vec<&str> = std::iter::repeat_n("cat", TINY_MAX_TOKENS - 2).collect();
    let v = e.embed(&[&long, &head.join(" ")]).unwrap();
    assert!(cosine(&v[0], &v[1]) > 0.99999);
}

#[test]
fn empty_batch_and_empty_text_are_answered() {
    let (_tmp, dir) = tiny(32);
    let e = Embedder::load(&dir).unwrap();
    assert!(e.embed(&[]).unwrap().is_empty());
    let v = e.embed(&["", "unknownword"]).unwrap();
    assert_eq!(v[0].len(), 32);
    assert_eq!(v[1].len(), 32);
}

#[test]
fn embedder_is_shared_by_threads() {
    let (_tmp, dir) = tiny(32);
    let e = std::sync::Arc::new(Embedder::load(&dir).unwrap());
    let expected = e.embed(&["the graph is fast"]).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let e = e.clone();
            std::thread::spawn(move || e.embed(&["the graph is fast"]).unwrap())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), expected);
    }
}

#[test]
fn corrupt_safetensors_is_a_weights_error_naming_the_file() {
    let (_tmp, dir) = tiny(32);
    let path = dir.join("model.safetensors");
    std::fs::write(&path, b"this is not a safetensors file").unwrap();
    match Embedder::load(&dir).unwrap_err() {
        EmbedError::Weights { path: p, .. } => assert_eq!(p, path),
        other => panic!("expected a weights error, got {other:?}"),
    }
    // Cut in half: the header promises tensors the file no longer holds.
    let (_tmp2, dir2) = tiny(32);
    let path2 = dir2.join("model.safetensors");
    let bytes = std::fs::read(&path2).unwrap();
    std::fs::write(&path2, &bytes[..bytes.len() / 2]).unwrap();
    let err = Embedder::load(&dir2).unwrap_err();
    assert!(matches!(err, EmbedError::Weights { .. }), "{err:?}");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
}

#[test]
fn missing_tokenizer_is_a_missing_file_error() {
    let (_tmp, dir) = tiny(32);
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    match Embedder::load(&dir).unwrap_err() {
        EmbedError::MissingFile { path } => assert_eq!(path, dir.join("tokenizer.json")),
        other => panic!("expected missing_file, got {other:?}"),
    }
}

#[test]
fn unparsable_config_and_tokenizer_are_named_errors() {
    let (_tmp, dir) = tiny(32);
    std::fs::write(dir.join("config.json"), b"{\"hidden_size\": 32}").unwrap();
    let err = Embedder::load(&dir).unwrap_err();
    assert!(matches!(err, EmbedError::Config { .. }), "{err:?}");
    assert_eq!(err.kind(), "bad_config");

    let (_tmp2, dir2) = tiny(32);
    std::fs::write(dir2.join("tokenizer.json"), b"{\"model\": 3}").unwrap();
    let err = Embedder::load(&dir2).unwrap_err();
    assert!(matches!(err, EmbedError::Tokenizer { .. }), "{err:?}");
}

#[test]
fn config_whose_width_disagrees_with_the_weights_is_a_weights_error() {
    let (_tmp, dir) = tiny(32);
    let (_tmp2, other) = tiny(48);
    std::fs::copy(other.join("config.json"), dir.join("config.json")).unwrap();
    let err = Embedder::load(&dir).unwrap_err();
    assert!(matches!(err, EmbedError::Weights { .. }), "{err:?}");
}

#[test]
fn a_model_of_the_wrong_dimension_is_refused() {
    let (_tmp, dir) = tiny(32);
    match Embedder::load_with_dim(&dir, 384).unwrap_err() {
        EmbedError::WrongDimension {
            expected,
            found,
            path,
        } => {
            assert_eq!((expected, found), (384, 32));
            assert_eq!(path, dir.join("config.json"));
        }
        other => panic!("expected wrong_dimension, got {other:?}"),
    }
}

#[test]
fn nothing_installed_is_model_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let err = Embedder::load_installed(&tmp.path().join("models")).unwrap_err();
    assert!(matches!(err, EmbedError::ModelMissing { .. }), "{err:?}");
    assert_eq!(err.kind(), "model_missing");
}

#[test]
fn installed_files_of_the_wrong_size_are_refused_at_load() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    write_tiny_model(&loci_embed::pinned::installed_dir(&models), 32);
    match Embedder::load_installed(&models).unwrap_err() {
        EmbedError::SizeMismatch { path, expected, .. } => {
            assert!(path.ends_with("model.safetensors"), "{path:?}");
            assert_eq!(expected, loci_embed::pinned::FILES[0].size);
        }
        other => panic!("expected size_mismatch, got {other:?}"),
    }
}
