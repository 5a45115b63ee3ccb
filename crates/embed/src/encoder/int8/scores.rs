//! Attention's scores `Q·Kᵀ` in 8 bits, on the linear layers' kernel: a sequence's keys
//! of one head are the "weights" (each key row quantised with its own scale, as an
//! output channel is) and its queries the "activations" (per row), so each score is
//! `s_q · s_k · (Σ q_u8·k_i8 − 128·Σk)`, 64 products per instruction instead of an f32
//! FMA's 16. The head width (32) is the whole reduction, so a query row's error is
//! that of one 32-term dot product of 8-bit values.

use super::{LANES, MR, NR, PackedI8, Quantized, kernel, supported};

/// The buffers of one thread's score products, reused from head to head.
#[derive(Default)]
pub struct Scores {
    keys: PackedI8,
    queries: Quantized,
    /// The key rows quantised (shifted into `u8`) before they are spread into `keys`.
    rows: Vec<u8>,
}

/// `out` (`n × n`, row-major) = `scale · Q·Kᵀ` for the `n` query rows of `d` values that
/// start every `stride` values of `q`, and the `n` key rows of `k` likewise, one thread.
///
/// # Panics
/// When the CPU lacks the kernel's instructions ([`supported`] is false) or the
/// buffers are shorter than said (bugs in the caller).
#[allow(clippy::too_many_arguments)]
pub fn scores(
    q: &[f32],
    k: &[f32],
    stride: usize,
    n: usize,
    d: usize,
    scale: f32,
    out: &mut [f32],
    s: &mut Scores,
) {
    assert!(supported(), "the 8-bit kernel needs AVX-512 VNNI");
    assert_eq!(out.len(), n * n, "score rows");
    if n == 0 {
        return;
    }
    assert!(q.len() >= (n - 1) * stride + d, "query rows");
    assert!(k.len() >= (n - 1) * stride + d, "key rows");
    pack_keys(k, stride, n, d, s);
    let kp = s.keys.kp;
    let qd = &mut s.queries;
    qd.data.resize(n * kp, 128);
    qd.scale.resize(n, 0.0);
    // SAFETY: `supported()` was asserted above.
    unsafe { kernel::quantize_rows(q, stride, d, kp, &mut qd.data, &mut qd.scale, scale, None) };
    let (w, a) = (&s.keys, &s.queries);
    let blocks = n.div_ceil(LANES);
    for b0 in (0..blocks).step_by(NR) {
        let nr = NR.min(blocks - b0);
        for m0 in (0..n).step_by(MR) {
            let mr = MR.min(n - m0);
            let tile = kernel::Tile {
                a: &a.data[m0 * kp..(m0 + mr) * kp],
                a_scale: &a.scale[m0..m0 + mr],
                b: &w.data[b0 * kp * LANES..(b0 + nr) * kp * LANES],
                comp: &w.comp[b0 * LANES..(b0 + nr) * LANES],
                b_scale: &w.scale[b0 * LANES..(b0 + nr) * LANES],
                kp,
                cols: (n - b0 * LANES).min(nr * LANES),
                accumulate: false,
            };
            // SAFETY: the CPU has the kernel's instructions (asserted above); the tile's
            // output is rows `m0..m0 + mr` and columns `b0·16 .. b0·16 + cols` of the
            // `n × n` `out`, inside it, and `out` is borrowed mutably here.
            unsafe { kernel::run(&tile, mr, nr, out.as_mut_ptr().add(m0 * n + b0 * LANES), n) };
        }
    }
}

/// [`PackedI8::repack`] for attention's keys, vectorised: the rows through the
/// activations' quantiser (`u8` = the symmetric `i8` value + 128, the same scale, ties
/// to even instead of away from zero), then flipped back to `i8` and spread four
/// inputs (one `u32`) at a time into the packed layout. The weights at load keep
/// `repack`.
fn pack_keys(k: &[f32], stride: usize, n: usize, d: usize, s: &mut Scores) {
    let kp = d.div_ceil(4) * 4;
    let np = n.div_ceil(LANES) * LANES;
    let w = &mut s.keys;
    (w.n, w.k, w.kp) = (n, d, kp);
    w.data.clear();
    w.data.resize(np * kp, 0);
    w.comp.clear();
    w.comp.resize(np, 0);
    w.scale.clear();
    w.scale.resize(np, 1.0);
    s.rows.resize(n * kp, 128);
    // SAFETY: the only caller asserted `supported()`.
    unsafe {
        kernel::quantize_rows(
            k,
            stride,
            d,
            kp,
            &mut s.rows,
            &mut w.scale[..n],
            1.0,
            Some(&mut w.comp[..n]),
        )
    };
    w.comp[..n].iter_mut().for_each(|t| *t *= 128);
    for (c, row) in s.rows.chunks_exact(kp).enumerate() {
        let (block, lane) = (c / LANES, c % LANES);
        let base = block * kp * LANES + lane * 4;
        for (g, four) in row.chunks_exact(4).enumerate() {
            let bits = u32::from_ne_bytes([four[0], four[1], four[2], four[3]]) ^ 0x8080_8080;
            let at = base + g * 4 * LANES;
            for (dst, b) in w.data[at..at + 4].iter_mut().zip(bits.to_ne_bytes()) {
                *dst = b as i8;
            }
        }
    }
}
