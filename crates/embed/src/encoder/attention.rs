//! Self-attention over packed sequences: each (sequence, head) pair is one task on
//! rayon's pool that computes its `len × len` scores in a scratch buffer of its own,
//! so no padding is attended to, no mask is needed, and nothing of size
//! batch × heads × len² ever exists.

use gemm::Parallelism;
use rayon::prelude::*;

use super::kernels::exp_rows;

/// Where one sequence's tokens are in the packed rows: `start..start + len`.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Its first row.
    pub start: usize,
    /// Its number of tokens.
    pub len: usize,
}

/// A pointer to the context rows that tasks write disjoint parts of.
#[derive(Clone, Copy)]
struct Out(*mut f32);
// SAFETY: every task writes only its own sequence's rows and its own head's columns
// of the buffer behind the pointer (see `attention`), so no two threads touch the
// same element, and the buffer outlives the parallel loop that uses it.
unsafe impl Send for Out {}
// SAFETY: as above.
unsafe impl Sync for Out {}

impl Out {
    /// The element `offset` places past the start (a method, so a closure captures the
    /// whole `Out`, not its raw-pointer field, which is neither `Send` nor `Sync`).
    fn at(self, offset: usize) -> *mut f32 {
        self.0.wrapping_add(offset)
    }
}

/// `ctx` (`rows × hidden`) gets, for each sequence in `spans` and each of `heads`
/// heads, `softmax(Q·Kᵀ/√d)·V` (the unnormalised exponentials times `V`, each row
/// then divided by its sum) from the packed projections `qkv` (`rows × 3·hidden`:
/// the queries, then the keys, then the values).
///
/// # Panics
/// When the buffers are not `rows` rows wide as said or a span leaves them (a bug in
/// the caller).
pub fn attention(qkv: &[f32], ctx: &mut [f32], spans: &[Span], hidden: usize, heads: usize) {
    let rows = ctx.len() / hidden;
    assert_eq!(ctx.len(), rows * hidden, "context rows");
    assert_eq!(qkv.len(), rows * 3 * hidden, "projection rows");
    assert!(hidden.is_multiple_of(heads), "head width");
    for s in spans {
        assert!(s.start + s.len <= rows, "span inside the rows");
    }
    let d = hidden / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let stride = 3 * hidden;
    let out = Out(ctx.as_mut_ptr());
    let mut tasks: Vec<(Span, usize)> = spans
        .iter()
        .filter(|s| s.len > 0)
        .flat_map(|&s| (0..heads).map(move |h| (s, h)))
        .collect();
    // The longest first (a task costs ~len²), so the last ones to finish are short.
    tasks.sort_by_key(|(s, _)| std::cmp::Reverse(s.len));
    tasks.par_iter().for_each_init(
        Scratch::default,
        |Scratch { scores, inv_sums }, &(span, head)| {
            let n = span.len;
            scores.clear();
            scores.resize(n * n, 0.0);
            inv_sums.resize(n, 0.0);
            let q = &qkv[span.start * stride + head * d..];
            let k = &qkv[span.start * stride + hidden + head * d..];
            let v = &qkv[span.start * stride + 2 * hidden + head * d..];
            // SAFETY: `q`, `k` and `v` start at this span's first row and address `n`
            // rows of `d` columns at row stride `stride`, inside `qkv` (the spans were
            // checked against the row count); `scores` is `n × n`.
            unsafe {
                gemm::gemm(
                    n,
                    n,
                    d,
                    scores.as_mut_ptr(),
                    1,
                    n as isize,
                    false,
                    q.as_ptr(),
                    1,
                    stride as isize,
                    k.as_ptr(),
                    stride as isize,
                    1,
                    0.0,
                    scale,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
            exp_rows(scores, n, inv_sums);
            // SAFETY: the destination is this span's rows and this head's `d` columns
            // of `ctx` (row stride `hidden`), inside it (checked above) and written by
            // no other task; `scores` and `v` are read only.
            unsafe {
                gemm::gemm(
                    n,
                    d,
                    n,
                    out.at(span.start * hidden + head * d),
                    1,
                    hidden as isize,
                    false,
                    scores.as_ptr(),
                    1,
                    n as isize,
                    v.as_ptr(),
                    1,
                    stride as isize,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    Parallelism::None,
                );
            }
            for (i, &inv) in inv_sums.iter().enumerate() {
                // SAFETY: row `i < n` of this span and this head's `d` columns, the
                // task's own part of `ctx` (as above), no longer borrowed by `gemm`.
                let row = unsafe {
                    std::slice::from_raw_parts_mut(out.at((span.start + i) * hidden + head * d), d)
                };
                row.iter_mut().for_each(|x| *x *= inv);
            }
        },
    );
}

/// A task's buffers, reused from task to task on its thread.
#[derive(Default)]
struct Scratch {
    /// `len × len`: the scores, then their exponentials.
    scores: Vec<f32>,
    /// Per query row: one over the sum of its exponentials.
    inv_sums: Vec<f32>,
}
