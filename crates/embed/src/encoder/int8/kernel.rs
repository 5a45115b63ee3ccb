//! The AVX-512 VNNI micro-kernel and the row quantiser. A call computes an `M × 16·N`
//! tile of the output (`M` ≤ 8 rows, `N` ≤ 3 blocks of 16 channels) with its `M·N`
//! accumulators in registers over the whole input width: per group of 4 inputs, `N`
//! 64-byte weight loads, `M` 4-byte broadcasts of the rows' quantised inputs and `M·N`
//! `vpdpbusd`. Then each accumulator has the shift's `128·Σw` subtracted, is scaled by
//! its row's and channel's scales and stored (masked past the last channel), added to
//! the output's value when accumulating.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// One call's operands.
pub struct Tile<'a> {
    /// The tile's rows of quantised inputs, `kp` bytes each.
    pub a: &'a [u8],
    /// Their scales.
    pub a_scale: &'a [f32],
    /// The tile's packed channel blocks, `16·kp` bytes each.
    pub b: &'a [i8],
    /// `128·Σw` per channel of the blocks.
    pub comp: &'a [i32],
    /// The weight scale per channel of the blocks.
    pub b_scale: &'a [f32],
    /// The padded input width (a multiple of 4).
    pub kp: usize,
    /// How many of the blocks' channels are real (the rest is padding, not stored).
    pub cols: usize,
    /// Add to the output instead of overwriting it.
    pub accumulate: bool,
}

/// Computes the `mr × 16·nr` tile into `out` (row stride `ldo`).
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VNNI; `t` must hold `mr` rows and `nr` blocks
/// as described on [`Tile`] (`(nr - 1)·16 < cols ≤ nr·16`), and `out` must address `mr`
/// rows of `cols` writable `f32`s at stride `ldo` that nothing else accesses meanwhile.
#[cfg(target_arch = "x86_64")]
pub unsafe fn run(t: &Tile, mr: usize, nr: usize, out: *mut f32, ldo: usize) {
    assert!(
        t.a.len() >= mr * t.kp && t.b.len() >= nr * 16 * t.kp,
        "tile operands"
    );
    assert!(t.a_scale.len() >= mr && t.comp.len() >= nr * 16 && t.b_scale.len() >= nr * 16);
    assert!(t.cols > (nr - 1) * 16 && t.cols <= nr * 16, "tile columns");
    macro_rules! by_rows {
        ($($m:literal)*) => {
            match mr {
                $($m => match nr {
                    1 => tile::<$m, 1>(t, out, ldo),
                    2 => tile::<$m, 2>(t, out, ldo),
                    _ => tile::<$m, 3>(t, out, ldo),
                },)*
                _ => unreachable!("at most 8 rows per tile"),
            }
        };
    }
    // SAFETY: the caller's contract, with the operand sizes just checked.
    unsafe { by_rows!(1 2 3 4 5 6 7 8) }
}

/// [`run`] for a fixed tile shape, so the accumulators stay in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn tile<const M: usize, const N: usize>(t: &Tile, out: *mut f32, ldo: usize) {
    let kp = t.kp;
    let block = 16 * kp;
    let mut acc = [[_mm512_setzero_si512(); N]; M];
    let (a, b) = (t.a.as_ptr(), t.b.as_ptr());
    for g in 0..kp / 4 {
        let mut w = [_mm512_setzero_si512(); N];
        for (j, w) in w.iter_mut().enumerate() {
            // SAFETY: block `j` is `16·kp` bytes at `j·16·kp` of `b` (checked by `run`),
            // and group `g < kp/4` is its 64 bytes at `64·g`.
            *w = unsafe { _mm512_loadu_si512(b.add(j * block + g * 64).cast()) };
        }
        for (i, acc) in acc.iter_mut().enumerate() {
            // SAFETY: row `i < M` is `kp` bytes at `i·kp` of `a` (checked by `run`); its
            // group `g` is the 4 bytes at `4·g`.
            let x = unsafe { a.add(i * kp + g * 4).cast::<i32>().read_unaligned() };
            let x = _mm512_set1_epi32(x);
            for (acc, w) in acc.iter_mut().zip(&w) {
                *acc = _mm512_dpbusd_epi32(*acc, x, *w);
            }
        }
    }
    for j in 0..N {
        let c0 = j * 16;
        let valid = (t.cols - c0).min(16);
        let mask: __mmask16 = if valid == 16 {
            u16::MAX
        } else {
            (1u16 << valid) - 1
        };
        // SAFETY: `comp` and `b_scale` hold `16·N` values (checked by `run`).
        let (comp, b_scale) = unsafe {
            (
                _mm512_loadu_si512(t.comp.as_ptr().add(c0).cast()),
                _mm512_loadu_ps(t.b_scale.as_ptr().add(c0)),
            )
        };
        for (i, acc) in acc.iter().enumerate() {
            let scale = _mm512_mul_ps(b_scale, _mm512_set1_ps(t.a_scale[i]));
            let mut v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc[j], comp)), scale);
            // SAFETY: row `i < M`, columns `c0..c0 + valid` (the mask) are inside the
            // caller's `out` tile.
            unsafe {
                let p = out.add(i * ldo + c0);
                if t.accumulate {
                    v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, p));
                }
                _mm512_mask_storeu_ps(p, mask, v);
            }
        }
    }
}

/// Quantises `x` into `d` (`x.len()` values, then 128 up to `d.len()`): each value
/// `round(x / scale) + 128` with `scale = max|x| / 127` (1 for a row of zeros), which
/// it returns.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VL.
///
/// # Panics
/// When `d` is shorter than `x`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
pub unsafe fn quantize_row(x: &[f32], d: &mut [u8]) -> f32 {
    assert!(d.len() >= x.len(), "quantised row width");
    let k = x.len();
    let mask = |c: usize| -> __mmask16 {
        let n = (k - c).min(16);
        if n == 16 { u16::MAX } else { (1u16 << n) - 1 }
    };
    let mut max = _mm512_setzero_ps();
    for c in (0..k).step_by(16) {
        // SAFETY: the mask covers only `c..min(c + 16, k)`, inside `x`.
        let v = unsafe { _mm512_maskz_loadu_ps(mask(c), x.as_ptr().add(c)) };
        max = _mm512_max_ps(max, _mm512_abs_ps(v));
    }
    let max = _mm512_reduce_max_ps(max);
    let (scale, inv) = if max > 0.0 {
        (max / 127.0, 127.0 / max)
    } else {
        (1.0, 0.0)
    };
    let (inv, shift) = (_mm512_set1_ps(inv), _mm512_set1_epi32(128));
    for c in (0..k).step_by(16) {
        // SAFETY: as above for `x`; `d` is at least as long as `x`.
        unsafe {
            let v = _mm512_maskz_loadu_ps(mask(c), x.as_ptr().add(c));
            // Round to nearest (the default rounding mode), then shift into 1..=255.
            let q = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v, inv)), shift);
            // 1..=255 fits a byte: truncate in a register (the narrowing store to memory
            // is several times slower), then store 16 bytes or the tail's.
            let q = _mm512_cvtepi32_epi8(q);
            let p = d.as_mut_ptr().add(c);
            if c + 16 <= k {
                _mm_storeu_si128(p.cast(), q);
            } else {
                _mm_mask_storeu_epi8(p.cast(), mask(c), q);
            }
        }
    }
    d[k..].fill(128);
    scale
}

/// Never called off x86-64 ([`super::supported`] is false there).
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn run(_: &Tile, _: usize, _: usize, _: *mut f32, _: usize) {
    unreachable!("the 8-bit kernel is x86-64 only")
}

/// Never called off x86-64 ([`super::supported`] is false there).
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn quantize_row(_: &[f32], _: &mut [u8]) -> f32 {
    unreachable!("the 8-bit kernel is x86-64 only")
}
