//! The cached vectors' k-NN, exact but reading a quarter of the bytes: a first pass
//! over an int8 copy of every chunk (one scale per vector), on both cores when the scan
//! is large, with AVX-512BW or AVX2 when the CPU has them, then the exact `f32` cosine
//! on the candidates only.
//!
//! Exactness is proved per query, not hoped for: the int8 score of a chunk differs from
//! its exact cosine by at most `ε = ‖q − q̂‖·max‖c‖ + ‖q̂‖·max‖c − ĉ‖` (Cauchy–Schwarz on
//! the two rounding errors, `q̂` and `ĉ` the dequantised vectors) plus a margin for the
//! `f32` sums. The pass keeps the best `k × CANDIDATE_FACTOR` memories by int8 score,
//! scores them exactly, and takes the k-th exact score `L`; a memory whose int8 score is
//! below `L − ε` cannot reach the top k, and every other one is scored exactly too.
//! The answer is therefore the same list, scores and order, as the `f32` scan of every
//! chunk ([`scan_full`], the reference the tests and the bench compare with).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::cosine::dot;

/// Candidates scored exactly before the bound is checked, per requested hit. Two is
/// where the recall bench's queries stop gaining: the bound then adds a few more.
pub(crate) const CANDIDATE_FACTOR: usize = 2;

/// Chunks below which one thread scans: a second one costs more than it saves.
const PARALLEL_FROM: usize = 16_384;

/// The float error the int8 bound leaves out (the `f32` dot product's own rounding and
/// the scales' products), far above both at 384 dimensions.
const FLOAT_MARGIN: f32 = 1e-4;

/// Every chunk's vector twice: `f32` for the exact score, int8 for the first pass.
#[derive(Default)]
pub(crate) struct Vectors {
    pub(crate) dim: usize,
    /// Per chunk: its memory's index among the owners. Non-decreasing: a memory's
    /// chunks are adjacent and later owners come later.
    pub(crate) chunk_owner: Vec<u32>,
    /// `dim` values per chunk.
    pub(crate) data: Vec<f32>,
    /// `dim` values per chunk: `round(v / scale)`.
    pub(crate) codes: Vec<i8>,
    /// Per chunk: `max |v| / 127`.
    pub(crate) scales: Vec<f32>,
    /// The largest `‖v‖` and `‖v − scale·code‖` of any chunk (never lowered until the
    /// vectors are rebuilt).
    pub(crate) max_norm: f32,
    pub(crate) max_err: f32,
}

impl Vectors {
    /// Vectors of `dim` values.
    pub(crate) fn new(dim: usize) -> Vectors {
        Vectors {
            dim,
            ..Vectors::default()
        }
    }

    /// How many chunks are kept.
    pub(crate) fn len(&self) -> usize {
        self.chunk_owner.len()
    }

    /// Appends one chunk of `owner` (`v` is `dim` long).
    pub(crate) fn push(&mut self, owner: u32, v: &[f32]) {
        let (scale, err) = quantize_into(v, &mut self.codes);
        self.chunk_owner.push(owner);
        self.data.extend_from_slice(v);
        self.scales.push(scale);
        self.max_norm = self.max_norm.max(dot(v, v).sqrt());
        self.max_err = self.max_err.max(err);
    }

    /// Chunk `c`'s `f32` vector.
    pub(crate) fn vector(&self, c: usize) -> &[f32] {
        &self.data[c * self.dim..(c + 1) * self.dim]
    }

    /// What the cache holds per chunk, in bytes.
    pub(crate) const fn bytes_per_chunk(dim: usize) -> usize {
        dim * 4 + dim + 4 + 4
    }
}

/// Appends `v`'s int8 codes to `out`; returns its scale and `‖v − scale·code‖`.
fn quantize_into(v: &[f32], out: &mut Vec<i8>) -> (f32, f32) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let mut err = 0f32;
    out.extend(v.iter().map(|x| {
        let q = (x / scale).round().clamp(-127.0, 127.0);
        let d = x - q * scale;
        err += d * d;
        q as i8
    }));
    (scale, err.sqrt())
}

/// A memory's chunks: `[first, first + count)`.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    pub(crate) first: u32,
    pub(crate) count: u32,
}

/// One memory's best score: ordered by score, then the lower id first.
#[derive(Clone, Copy, PartialEq)]
struct Scored {
    score: f32,
    id: i64,
    owner: u32,
}
impl Eq for Scored {}
impl Ord for Scored {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.score
            .total_cmp(&o.score)
            .then(o.id.cmp(&self.id))
            .then(o.owner.cmp(&self.owner))
    }
}
impl PartialOrd for Scored {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// The `k` owners (among those `pass` lets through) whose best chunk is nearest `query`,
/// as `(id, exact cosine)`, best first, ties by the lower id; `ids[o]` and `spans[o]`
/// are owner `o`'s memory id and chunks.
pub(crate) fn nearest(
    v: &Vectors,
    ids: &[i64],
    spans: &[Span],
    pass: &[bool],
    query: &[f32],
    k: usize,
) -> Vec<(i64, f32)> {
    nearest_counted(v, ids, spans, pass, query, k, PARALLEL_FROM).0
}

/// [`nearest`], splitting the first pass from `parallel_from` chunks, and how many
/// memories past the first `k × C` the bound made it score exactly.
fn nearest_counted(
    v: &Vectors,
    ids: &[i64],
    spans: &[Span],
    pass: &[bool],
    query: &[f32],
    k: usize,
    parallel_from: usize,
) -> (Vec<(i64, f32)>, usize) {
    if k == 0 || v.dim == 0 || query.len() != v.dim {
        return (scan_full(v, ids, pass, query, k), 0);
    }
    let mut codes = Vec::with_capacity(v.dim);
    let (q_scale, q_err) = quantize_into(query, &mut codes);
    let q16: Vec<i16> = codes.iter().map(|&c| c as i16).collect();
    let approx = first_pass(v, pass, &q16, q_scale, ids.len(), parallel_from);
    let q_hat_norm = codes
        .iter()
        .map(|&c| (c as f32 * q_scale).powi(2))
        .sum::<f32>()
        .sqrt();
    let eps = q_err * v.max_norm + q_hat_norm * v.max_err + FLOAT_MARGIN;

    // The best k × C by int8 score, scored exactly.
    let exact = |o: usize| -> f32 {
        let s = spans[o];
        (s.first as usize..(s.first + s.count) as usize)
            .map(|c| dot(query, v.vector(c)))
            .fold(f32::NEG_INFINITY, f32::max)
    };
    let mut heap: BinaryHeap<Reverse<Scored>> = BinaryHeap::new();
    let m = k.saturating_mul(CANDIDATE_FACTOR);
    for (o, &a) in approx.iter().enumerate() {
        if a == f32::NEG_INFINITY {
            continue;
        }
        let s = Scored {
            score: a,
            id: ids[o],
            owner: o as u32,
        };
        if heap.len() < m {
            heap.push(Reverse(s));
        } else if heap.peek().is_some_and(|Reverse(low)| s > *low) {
            heap.pop();
            heap.push(Reverse(s));
        }
    }
    let mut scored = vec![false; ids.len()];
    let mut hits: Vec<Scored> = heap
        .into_iter()
        .map(|Reverse(s)| {
            scored[s.owner as usize] = true;
            Scored {
                score: exact(s.owner as usize),
                ..s
            }
        })
        .collect();
    hits.sort_unstable_by(|a, b| b.cmp(a));
    // The bound: nobody whose int8 score is below the k-th exact one minus ε can enter.
    let first = hits.len();
    if hits.len() >= k {
        let floor = hits[k - 1].score - eps;
        for (o, &a) in approx.iter().enumerate() {
            if a >= floor && !scored[o] {
                hits.push(Scored {
                    score: exact(o),
                    id: ids[o],
                    owner: o as u32,
                });
            }
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
    }
    let extra = hits.len() - first;
    hits.truncate(k);
    (hits.into_iter().map(|s| (s.id, s.score)).collect(), extra)
}

/// Per owner, its best chunk's int8 score (`-inf` for an owner `pass` leaves out or
/// without chunks), on two threads when the scan is large.
fn first_pass(
    v: &Vectors,
    pass: &[bool],
    q16: &[i16],
    q_scale: f32,
    owners: usize,
    parallel_from: usize,
) -> Vec<f32> {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let mut best = vec![f32::NEG_INFINITY; owners];
    let n = v.len();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |p| p.get()));
    if n < parallel_from || cores < 2 {
        pass_range(v, pass, q16, q_scale, 0..n, 0, &mut best);
        return best;
    }
    // Split at an owner boundary so each thread writes its own owners.
    let mut mid = n / 2;
    while mid < n && mid > 0 && v.chunk_owner[mid] == v.chunk_owner[mid - 1] {
        mid += 1;
    }
    let split_owner = if mid < n {
        v.chunk_owner[mid] as usize
    } else {
        owners
    };
    let (low, high) = best.split_at_mut(split_owner);
    std::thread::scope(|s| {
        s.spawn(|| pass_range(v, pass, q16, q_scale, mid..n, split_owner, high));
        pass_range(v, pass, q16, q_scale, 0..mid, 0, low);
    });
    best
}

/// The first pass over chunks `range`, whose owners start at `base` in `best`, with
/// the widest int8 kernel this CPU has.
fn pass_range(
    v: &Vectors,
    pass: &[bool],
    q16: &[i16],
    q_scale: f32,
    range: std::ops::Range<usize>,
    base: usize,
    best: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU has AVX-512BW (checked just above).
            return unsafe { pass_avx512(v, pass, q16, q_scale, range, base, best) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { pass_avx2(v, pass, q16, q_scale, range, base, best) };
        }
    }
    pass_body(v, pass, q16, q_scale, range, base, best, dot8_portable);
}

/// The loop of [`pass_range`], inlined into each kernel's variant so the kernel
/// inlines too.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pass_body(
    v: &Vectors,
    pass: &[bool],
    q16: &[i16],
    q_scale: f32,
    range: std::ops::Range<usize>,
    base: usize,
    best: &mut [f32],
    dot8: impl Fn(&[i16], &[i8]) -> i32,
) {
    let dim = v.dim;
    for c in range {
        let o = v.chunk_owner[c] as usize;
        if !pass[o] {
            continue;
        }
        let raw = dot8(q16, &v.codes[c * dim..(c + 1) * dim]);
        let s = raw as f32 * (q_scale * v.scales[c]);
        let b = &mut best[o - base];
        if s > *b {
            *b = s;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn pass_avx2(
    v: &Vectors,
    pass: &[bool],
    q16: &[i16],
    q_scale: f32,
    range: std::ops::Range<usize>,
    base: usize,
    best: &mut [f32],
) {
    // The closure has this function's features, so the kernel is safe to call and inlines.
    pass_body(v, pass, q16, q_scale, range, base, best, |q, c| {
        dot8_avx2(q, c)
    });
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
fn pass_avx512(
    v: &Vectors,
    pass: &[bool],
    q16: &[i16],
    q_scale: f32,
    range: std::ops::Range<usize>,
    base: usize,
    best: &mut [f32],
) {
    // The closure has this function's features, so the kernel is safe to call and inlines.
    pass_body(v, pass, q16, q_scale, range, base, best, |q, c| {
        dot8_avx512(q, c)
    });
}

/// The exact `f32` scan of every chunk: what [`nearest`] must equal.
pub(crate) fn scan_full(
    v: &Vectors,
    ids: &[i64],
    pass: &[bool],
    query: &[f32],
    k: usize,
) -> Vec<(i64, f32)> {
    let mut best = vec![f32::NEG_INFINITY; ids.len()];
    if v.dim > 0 {
        for (c, owner) in v.chunk_owner.iter().enumerate() {
            let o = *owner as usize;
            if pass[o] {
                let s = dot(query, v.vector(c));
                if s > best[o] {
                    best[o] = s;
                }
            }
        }
    }
    let mut all: Vec<(i64, f32)> = best
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > f32::NEG_INFINITY)
        .map(|(i, s)| (ids[i], *s))
        .collect();
    let by = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if all.len() > k && k > 0 {
        all.select_nth_unstable_by(k - 1, by);
        all.truncate(k);
    }
    all.sort_by(by);
    all.truncate(k);
    all
}

/// `Σ q[i]·c[i]` over the shorter length, in sixteen independent lanes.
fn dot8_portable(q: &[i16], c: &[i8]) -> i32 {
    let n = q.len().min(c.len());
    let mut acc = [0i32; 16];
    let (cq, cc) = (q[..n].chunks_exact(16), c[..n].chunks_exact(16));
    let (rq, rc) = (cq.remainder(), cc.remainder());
    for (x, y) in cq.zip(cc) {
        for i in 0..16 {
            acc[i] += x[i] as i32 * y[i] as i32;
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in rq.iter().zip(rc) {
        sum += *x as i32 * *y as i32;
    }
    sum
}

/// [`dot8_portable`] with AVX2: sixteen codes widened to `i16` and multiplied pairwise
/// into eight `i32` lanes (`vpmaddwd`) per step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn dot8_avx2(q: &[i16], c: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = q.len().min(c.len());
    let steps = n / 16;
    let mut acc = _mm256_setzero_si256();
    for i in 0..steps {
        // SAFETY: `i * 16 + 16 <= n`, within both slices; the loads are unaligned.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(q.as_ptr().add(i * 16) as *const __m256i),
                _mm_loadu_si128(c.as_ptr().add(i * 16) as *const __m128i),
            )
        };
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_cvtepi8_epi16(y)));
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 bytes, the size of one `__m256i`; the store is unaligned.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc) };
    let mut sum: i32 = lanes.iter().sum();
    for i in steps * 16..n {
        sum += q[i] as i32 * c[i] as i32;
    }
    sum
}

/// [`dot8_portable`] with AVX-512BW: thirty-two codes per step into sixteen lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
#[inline]
fn dot8_avx512(q: &[i16], c: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = q.len().min(c.len());
    let steps = n / 32;
    let mut acc = _mm512_setzero_si512();
    for i in 0..steps {
        // SAFETY: `i * 32 + 32 <= n`, within both slices; the loads are unaligned.
        let (x, y) = unsafe {
            (
                _mm512_loadu_si512(q.as_ptr().add(i * 32) as *const _),
                _mm256_loadu_si256(c.as_ptr().add(i * 32) as *const __m256i),
            )
        };
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, _mm512_cvtepi8_epi16(y)));
    }
    let mut sum = _mm512_reduce_add_epi32(acc);
    for i in steps * 32..n {
        sum += q[i] as i32 * c[i] as i32;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic generator (xorshift), so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        }
        fn unit(&mut self, dim: usize) -> Vec<f32> {
            let mut v: Vec<f32> = (0..dim).map(|_| self.next()).collect();
            crate::cosine::normalize(&mut v);
            v
        }
    }

    #[test]
    fn the_int8_kernels_agree_with_the_plain_sum_at_every_length() {
        for n in [0, 1, 15, 16, 17, 383, 384] {
            let q: Vec<i16> = (0..n).map(|i| (i as i16 % 255) - 127).collect();
            let c: Vec<i8> = (0..n).map(|i| (127 - (i * 7 % 255)) as i8).collect();
            let plain: i32 = q.iter().zip(&c).map(|(a, b)| *a as i32 * *b as i32).sum();
            assert_eq!(dot8_portable(&q, &c), plain, "n={n}");
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 is present (checked just above).
                    assert_eq!(unsafe { dot8_avx2(&q, &c) }, plain, "n={n}");
                }
                if std::arch::is_x86_feature_detected!("avx512bw") {
                    // SAFETY: AVX-512BW is present (checked just above).
                    assert_eq!(unsafe { dot8_avx512(&q, &c) }, plain, "n={n}");
                }
            }
        }
    }

    /// Many near ties (memories of several chunks, vectors that are small perturbations of
    /// a few directions), so the int8 order differs from the exact one and only the bound
    /// keeps the answer exact.
    #[test]
    fn the_int8_pass_returns_exactly_the_f32_top_k_on_near_ties() {
        let dim = 384;
        let mut rng = Rng(0x2545f4914f6cdd1d);
        let bases: Vec<Vec<f32>> = (0..4).map(|_| rng.unit(dim)).collect();
        let mut v = Vectors::new(dim);
        let (mut ids, mut spans) = (Vec::new(), Vec::new());
        for o in 0..1_500u32 {
            let chunks = 1 + o % 3;
            spans.push(Span {
                first: v.len() as u32,
                count: chunks,
            });
            ids.push(i64::from(o) * 3 + 1);
            for _ in 0..chunks {
                let b = &bases[rng.0 as usize % bases.len()];
                let mut x: Vec<f32> = b.iter().map(|b| b + 0.01 * rng.next()).collect();
                crate::cosine::normalize(&mut x);
                v.push(o, &x);
            }
        }
        let all = vec![true; ids.len()];
        let some: Vec<bool> = (0..ids.len()).map(|o| o % 5 != 0).collect();
        let mut bound_mattered = 0;
        for t in 0..12 {
            let q = if t % 2 == 0 {
                rng.unit(dim)
            } else {
                let mut x: Vec<f32> = bases[t % 4].iter().map(|b| b + 0.02 * rng.next()).collect();
                crate::cosine::normalize(&mut x);
                x
            };
            for (pass, k) in [(&all, 50), (&some, 10), (&all, 1), (&some, 2_000)] {
                // Split from 1,000 chunks: the two-thread pass is what runs at scale.
                let (fast, extra) = nearest_counted(&v, &ids, &spans, pass, &q, k, 1_000);
                assert_eq!(fast, scan_full(&v, &ids, pass, &q, k), "query {t}, k {k}");
                bound_mattered += usize::from(extra > 0);
            }
        }
        assert!(
            bound_mattered > 0,
            "no query needed the bound: the test proves nothing"
        );
    }

    #[test]
    fn a_query_of_another_length_falls_back_to_the_exact_scan() {
        let mut v = Vectors::new(4);
        v.push(0, &[1.0, 0.0, 0.0, 0.0]);
        let spans = [Span { first: 0, count: 1 }];
        let got = nearest(&v, &[7], &spans, &[true], &[1.0, 0.0], 5);
        assert_eq!(got, vec![(7, 1.0)]);
    }
}
