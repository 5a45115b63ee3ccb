//! What the memory benches share: the pseudo-random vectors stored under a bench model
//! name, the query "embedder" that meets them, a deterministic generator, and the
//! words of loci's docs that queries and bodies are drawn from.

use loci_memory::{EmbedError, Embedder};

/// The model name the bench's pseudo-random vectors are stored under.
pub const BENCH_MODEL: &str = "bench/pseudo-random-384";
/// Their dimension: the pinned model's.
pub const DIM: usize = 384;

/// A deterministic unit vector from `seed`.
pub fn unit_vector(seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed | 1);
    let mut v: Vec<f32> = (0..DIM)
        .map(|_| (rng.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
        .collect();
    loci_memory::vector::normalize(&mut v);
    v
}

/// The bench's query "embedder": a unit vector seeded by the text.
pub struct PseudoEmbedder;

impl PseudoEmbedder {
    /// The vector of `text`.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        unit_vector(u64::from_le_bytes(
            blake3::hash(text.as_bytes()).as_bytes()[..8]
                .try_into()
                .unwrap(),
        ))
    }
}

impl Embedder for PseudoEmbedder {
    fn model_id(&self) -> &str {
        BENCH_MODEL
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

/// A tiny deterministic generator (xorshift64), so runs compare.
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The value at quantile `q` of `times`, which must be sorted.
pub fn quantile(times: &[f64], q: f64) -> f64 {
    times[((times.len() as f64 * q) as usize).min(times.len() - 1)]
}

/// Every word of loci's docs, in order.
pub fn words() -> Vec<String> {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let mut text = String::new();
    for e in std::fs::read_dir(&docs).expect("docs/") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            text.push_str(&std::fs::read_to_string(p).unwrap());
            text.push(' ');
        }
    }
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
        .filter(|w| !w.is_empty())
        .collect()
}
