//! The linear layers in 8-bit integers, for CPUs with AVX-512 VNNI (`vpdpbusd`: 64
//! `u8 × i8` products summed into 16 `i32` lanes per instruction, 4× the multiply-adds
//! of an f32 FMA on the same register width). The weights are quantised once at load,
//! per output channel (symmetric, `[-127, 127]`, scale = the channel's largest
//! magnitude / 127) and packed in the order the micro-kernel reads them; the
//! activations are quantised per row for every product (same scheme, shifted by 128
//! into `u8`, the operand `vpdpbusd` takes unsigned). The shift adds `128·Σw` to every
//! dot product, which is subtracted from the accumulator before it is scaled back to
//! f32 (`128·Σw` is one precomputed `i32` per channel). On any other CPU the encoder
//! keeps the f32 path.

mod kernel;

use rayon::prelude::*;

/// Output channels per vector register (16 `i32` lanes).
const LANES: usize = 16;
/// Register tile: rows of the left side × blocks of [`LANES`] channels per call of the
/// micro-kernel (8 × 3 accumulators of the 32 `zmm` registers).
const MR: usize = 8;
const NR: usize = 3;

pub(crate) use crate::cpu::int8_kernel_supported as supported;

/// A linear layer's weight `W` (`n × k`, as PyTorch stores it) quantised per output
/// channel and packed: for each block of [`LANES`] channels, for each group of 4 inputs,
/// the 16 channels' 4 weights (64 bytes, one register). Channels past `n` and inputs
/// past `k` are zero.
pub struct PackedI8 {
    n: usize,
    k: usize,
    /// `k` rounded up to a multiple of 4.
    kp: usize,
    data: Vec<i8>,
    /// Per padded channel: `128 · Σ_k w_q`, the shift's contribution to each sum.
    comp: Vec<i32>,
    /// Per padded channel: the weight scale.
    scale: Vec<f32>,
}

impl PackedI8 {
    /// Quantises and packs `w` (`n` rows of `k`).
    ///
    /// # Panics
    /// When `w` is not `n × k` (a bug in the caller).
    pub fn pack(w: &[f32], n: usize, k: usize) -> PackedI8 {
        assert_eq!(w.len(), n * k, "weight shape");
        let kp = k.div_ceil(4) * 4;
        let blocks = n.div_ceil(LANES);
        let np = blocks * LANES;
        let mut data = vec![0i8; np * kp];
        let mut comp = vec![0i32; np];
        let mut scale = vec![1f32; np];
        for c in 0..n {
            let row = &w[c * k..][..k];
            let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
            let s = if max > 0.0 { max / 127.0 } else { 1.0 };
            scale[c] = s;
            let (block, lane) = (c / LANES, c % LANES);
            let mut total = 0i32;
            for (i, &x) in row.iter().enumerate() {
                let q = (x / s).round().clamp(-127.0, 127.0) as i8;
                total += q as i32;
                data[block * kp * LANES + (i / 4) * 4 * LANES + lane * 4 + i % 4] = q;
            }
            comp[c] = 128 * total;
        }
        PackedI8 {
            n,
            k,
            kp,
            data,
            comp,
            scale,
        }
    }
}

/// The activations of one product quantised per row, reused from product to product.
#[derive(Default)]
pub struct Quantized {
    /// `rows × kp`: each value `round(x / scale) + 128`.
    data: Vec<u8>,
    /// Per row: its scale.
    scale: Vec<f32>,
}

/// A pointer to the output that tasks write disjoint column stripes of.
#[derive(Clone, Copy)]
struct Out(*mut f32);
// SAFETY: every task writes only the columns of its own channel blocks (see `matmul`),
// so no two threads touch the same element, and the buffer outlives the parallel loop.
unsafe impl Send for Out {}
// SAFETY: as above.
unsafe impl Sync for Out {}

impl Out {
    /// The pointer (a method, so a closure captures the whole `Out`, which is `Send`).
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// `out = x·Wᵀ` (or `out += x·Wᵀ` when `accumulate`) for `rows` rows of `x`, in 8-bit
/// arithmetic, the channel blocks spread over rayon's threads.
///
/// # Panics
/// When the CPU lacks the kernel's instructions ([`supported`] is false) or `x` / `out`
/// are not `rows` rows of the layer's widths (bugs in the caller).
pub fn matmul(
    x: &[f32],
    rows: usize,
    w: &PackedI8,
    out: &mut [f32],
    accumulate: bool,
    q: &mut Quantized,
) {
    assert!(supported(), "the 8-bit kernel needs AVX-512 VNNI");
    assert_eq!(x.len(), rows * w.k, "input rows");
    assert_eq!(out.len(), rows * w.n, "output rows");
    if rows == 0 {
        return;
    }
    quantize(x, rows, w.k, w.kp, q);
    let blocks = w.n.div_ceil(LANES);
    let panels = blocks.div_ceil(NR);
    let dst = Out(out.as_mut_ptr());
    let q = &*q;
    (0..panels).into_par_iter().for_each(|p| {
        let b0 = p * NR;
        let nr = NR.min(blocks - b0);
        for m0 in (0..rows).step_by(MR) {
            let mr = MR.min(rows - m0);
            let tile = kernel::Tile {
                a: &q.data[m0 * w.kp..(m0 + mr) * w.kp],
                a_scale: &q.scale[m0..m0 + mr],
                b: &w.data[b0 * w.kp * LANES..(b0 + nr) * w.kp * LANES],
                comp: &w.comp[b0 * LANES..(b0 + nr) * LANES],
                b_scale: &w.scale[b0 * LANES..(b0 + nr) * LANES],
                kp: w.kp,
                cols: (w.n - b0 * LANES).min(nr * LANES),
                accumulate,
            };
            // SAFETY: the CPU has AVX-512 F, BW, VL and VNNI (asserted above). The tile's
            // output is rows `m0..m0 + mr` and columns `b0·16 .. b0·16 + cols` of
            // `out` (row stride `n`), inside it (`m0 + mr ≤ rows`, `cols ≤ n - b0·16`),
            // and this task is the only one writing those columns.
            unsafe { kernel::run(&tile, mr, nr, dst.get().add(m0 * w.n + b0 * LANES), w.n) };
        }
    });
}

/// Each row of `x` (`k` wide) quantised into `q` (`kp` wide, the padding 128: zero).
fn quantize(x: &[f32], rows: usize, k: usize, kp: usize, q: &mut Quantized) {
    q.data.resize(rows * kp, 128);
    q.scale.resize(rows, 0.0);
    q.data
        .par_chunks_mut(kp * 64)
        .zip(q.scale.par_chunks_mut(64))
        .zip(x.par_chunks(k * 64))
        .for_each(|((data, scale), x)| {
            for ((d, s), x) in data.chunks_exact_mut(kp).zip(scale).zip(x.chunks_exact(k)) {
                // SAFETY: `supported()` was asserted by the only caller.
                *s = unsafe { kernel::quantize_row(x, d) };
            }
        });
}

#[cfg(test)]
mod tests;
