//! The encoder's arithmetic besides attention: matrix products through `gemm` (the
//! engine under candle's CPU matmul), and the row-wise and element-wise steps (bias,
//! layer norm, GELU, softmax's exponentials) written as plain loops the compiler vectorizes, built
//! again for AVX2 + FMA and for AVX-512 and picked at run time on CPUs that have them.

use gemm::Parallelism;
use rayon::prelude::*;

use super::weights::{Linear, Norm};

/// Rows per task when a row-wise step is spread over the cores.
const ROWS_PER_TASK: usize = 32;

/// Defines `pub fn $name(args)` whose body is compiled three times: for the baseline
/// target, with AVX2 + FMA and with AVX-512, the widest the CPU has chosen at run time.
macro_rules! multiversion {
    ($(#[$meta:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$meta])*
        pub fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn body($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2($($arg: $ty),*) {
                body($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
            fn avx512($($arg: $ty),*) {
                body($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: `avx512` only needs AVX-512 F and BW, AVX2 and FMA, which the
                // CPU was just found to have.
                return unsafe { avx512($($arg),*) };
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: `avx2` only needs the AVX2 and FMA instructions, which the
                // CPU was just found to have.
                return unsafe { avx2($($arg),*) };
            }
            body($($arg),*)
        }
    };
}

/// The parallelism for one large matrix product: every thread of rayon's pool.
pub fn all_threads() -> Parallelism {
    match rayon::current_num_threads() {
        0 | 1 => Parallelism::None,
        n => Parallelism::Rayon(n),
    }
}

/// `out = x·Wᵀ` (or `out += x·Wᵀ` when `accumulate`) for `rows` rows of `x`.
///
/// # Panics
/// When `x` or `out` is not `rows` rows of the layer's input or output width (a bug
/// in the caller, never an input's doing).
pub fn matmul_wt(
    x: &[f32],
    rows: usize,
    layer: &Linear,
    out: &mut [f32],
    accumulate: bool,
    parallelism: Parallelism,
) {
    let (n_in, n_out) = (layer.n_in, layer.n_out);
    assert_eq!(x.len(), rows * n_in, "input rows");
    assert_eq!(out.len(), rows * n_out, "output rows");
    assert_eq!(layer.weight.len(), n_in * n_out, "weight shape");
    if rows == 0 {
        return;
    }
    // SAFETY: the three buffers hold exactly the elements the strides address (checked
    // above): `x` is `rows × n_in` row-major, `W` is `n_out × n_in` row-major (so Wᵀ
    // has row stride 1 and column stride `n_in`), `out` is `rows × n_out` row-major;
    // `out` is borrowed mutably, so it overlaps neither input.
    unsafe {
        gemm::gemm(
            rows,
            n_out,
            n_in,
            out.as_mut_ptr(),
            1,
            n_out as isize,
            accumulate,
            x.as_ptr(),
            1,
            n_in as isize,
            layer.weight.as_ptr(),
            n_in as isize,
            1,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// Every row of `out` (of the bias's width) set to `bias`.
pub fn fill_rows(out: &mut [f32], bias: &[f32]) {
    out.par_chunks_mut(bias.len() * ROWS_PER_TASK)
        .for_each(|rows| {
            for row in rows.chunks_exact_mut(bias.len()) {
                row.copy_from_slice(bias);
            }
        });
}

/// `bias` added to every row of `out`.
pub fn add_rows(out: &mut [f32], bias: &[f32]) {
    out.par_chunks_mut(bias.len() * ROWS_PER_TASK)
        .for_each(|rows| add_rows_seq(rows, bias));
}

multiversion! {
    /// `bias` added to every row of `rows`.
    pub fn add_rows_seq(rows: &mut [f32], bias: &[f32]) {
        for row in rows.chunks_exact_mut(bias.len()) {
            for (x, b) in row.iter_mut().zip(bias) {
                *x += b;
            }
        }
    }
}

/// Each row of `x` (of the norm's width) normalised to mean 0 and variance 1, then
/// scaled and shifted: BERT's `LayerNorm`.
pub fn layer_norm(x: &mut [f32], norm: &Norm, eps: f32) {
    let width = norm.weight.len();
    x.par_chunks_mut(width * ROWS_PER_TASK)
        .for_each(|rows| layer_norm_seq(rows, &norm.weight, &norm.bias, eps));
}

multiversion! {
    /// [`layer_norm`] on one thread.
    pub fn layer_norm_seq(rows: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
        let width = weight.len();
        let n = width as f32;
        for row in rows.chunks_exact_mut(width) {
            let mean = sum(row) / n;
            let mut var = [0f32; LANES];
            let mut chunks = row.chunks_exact(LANES);
            for c in &mut chunks {
                for (v, x) in var.iter_mut().zip(c) {
                    let d = x - mean;
                    *v += d * d;
                }
            }
            let tail: f32 = chunks.remainder().iter().map(|x| (x - mean) * (x - mean)).sum();
            let var = (var.iter().sum::<f32>() + tail) / n;
            let inv = 1.0 / (var + eps).sqrt();
            for ((x, g), b) in row.iter_mut().zip(weight).zip(bias) {
                *x = (*x - mean) * inv * g + b;
            }
        }
    }
}

/// The feed-forward activation over every element of `x`.
pub fn activate(x: &mut [f32], act: super::config::Activation) {
    const ELEMS_PER_TASK: usize = 16 * 1024;
    x.par_chunks_mut(ELEMS_PER_TASK).for_each(|c| match act {
        super::config::Activation::Gelu => gelu_seq(c),
        super::config::Activation::Relu => relu_seq(c),
    });
}

multiversion! {
    /// The exact GELU, `x·Φ(x) = x/2·(1 + erf(x/√2))`, in place.
    pub fn gelu_seq(x: &mut [f32]) {
        for v in x.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

multiversion! {
    /// `max(x, 0)` in place.
    pub fn relu_seq(x: &mut [f32]) {
        for v in x.iter_mut() {
            *v = v.max(0.0);
        }
    }
}

multiversion! {
    /// Each row of `rows` (`width` wide) replaced by `exp(x − max)`, its softmax before
    /// the division, and `inv_sums[i]` set to one over row `i`'s sum: attention divides
    /// its `d`-wide weighted sums by it instead of the `width`-wide row (the same
    /// result, `width / d` times fewer divisions). One pass for the maximum, one that
    /// takes the exponentials and sums them.
    pub fn exp_rows(rows: &mut [f32], width: usize, inv_sums: &mut [f32]) {
        for (row, inv) in rows.chunks_exact_mut(width).zip(inv_sums.iter_mut()) {
            let max = max(row);
            let mut acc = [0f32; LANES];
            let mut chunks = row.chunks_exact_mut(LANES);
            for c in &mut chunks {
                for (a, x) in acc.iter_mut().zip(c.iter_mut()) {
                    *x = exp_nonpositive(*x - max);
                    *a += *x;
                }
            }
            let mut total = 0f32;
            for x in chunks.into_remainder() {
                *x = exp_nonpositive(*x - max);
                total += *x;
            }
            *inv = 1.0 / (acc.iter().sum::<f32>() + total);
        }
    }
}

/// Independent accumulators in a sum, so the compiler can keep them in one vector
/// register (a single running sum is a dependency chain it may not reorder).
const LANES: usize = 16;

/// The largest of `xs` (−∞ for none) in [`LANES`] partial maxima (one running `max`
/// is a dependency chain the compiler may not vectorize: it was half a softmax's time).
#[inline(always)]
pub fn max(xs: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a = if x > *a { x } else { *a };
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    acc.iter().fold(tail, |m, &x| m.max(x))
}

/// The sum of `xs` in [`LANES`] partial sums.
#[inline(always)]
pub fn sum(xs: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x;
        }
    }
    acc.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// `eˣ` within ~2 ulp for the range a softmax or GELU needs (inputs below −87 give
/// ~1e−38 instead of 0, above 88 saturate), in operations that vectorize: `x = n·ln2 +
/// r` (Cody–Waite, Cephes' two-part ln2), `eʳ` by its Taylor polynomial to degree 6
/// (|r| ≤ ln2/2, so the remainder is ~1e−7 of the result), times `2ⁿ` built in the
/// exponent bits.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5·2²³: adding it rounds to an integer
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    p * pow2(shifted)
}

/// `2ⁿ` from `n + 1.5·2²³` (an integer `n` in −126..=127 held in the low mantissa
/// bits, which the rounding step left there), in integer operations: `n as i32` is a
/// saturating conversion the compiler keeps scalar, a lane at a time (it was most of
/// softmax's and GELU's time).
#[inline(always)]
fn pow2(shifted: f32) -> f32 {
    const ROUND_BITS: u32 = 0x4B40_0000; // 1.5·2²³'s bits: the mantissa holds n from here
    f32::from_bits(shifted.to_bits().wrapping_sub(ROUND_BITS).wrapping_add(127) << 23)
}

/// `eˣ` for `x ≤ 0` (what a softmax takes once the row's maximum is subtracted) within
/// 3e−6 of the result: as [`exp`], with a degree-4 polynomial fitted to `eʳ` over
/// |r| ≤ ln2/2 instead of the degree-6 Taylor one, and no upper clamp. Inputs below
/// −87 give ~1e−38 instead of 0; positive inputs are not this function's.
#[inline(always)]
pub fn exp_nonpositive(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5·2²³: adding it rounds to an integer
    let x = x.max(-87.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let p =
        0.999_999_2 + r * (0.999_963_6 + r * (0.500_048_5 + r * (0.167_906_86 + r * 0.041_417_1)));
    p * pow2(shifted)
}

/// The error function within 5e−7 (Abramowitz & Stegun 7.1.26, 1.5e−7, plus f32
/// rounding), vectorizable.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152 + t * 1.061_405_4))));
    (1.0 - poly * exp(-a * a)).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_agrees_with_the_standard_library_over_the_softmax_range() {
        let mut worst = 0f32;
        let mut x = -87.0f32;
        while x < 88.0 {
            let (got, want) = (exp(x), x.exp());
            worst = worst.max(((got - want) / want).abs());
            x += 0.0137;
        }
        assert!(worst < 4e-7, "worst relative error {worst}");
    }

    #[test]
    fn exp_nonpositive_is_within_its_bound_over_the_softmax_range() {
        let mut worst = 0f64;
        let mut x = -87.0f32;
        while x <= 0.0 {
            let (got, want) = (exp_nonpositive(x) as f64, (x as f64).exp());
            worst = worst.max(((got - want) / want).abs());
            x += 0.000_37;
        }
        assert!(worst < 3e-6, "worst relative error {worst}");
        assert_eq!(exp_nonpositive(0.0), 0.999_999_2, "e⁰ within the bound");
        assert!(exp_nonpositive(-1e4) < 1e-37, "far below: ~0");
    }

    #[test]
    fn exp_rows_divided_by_the_sum_is_the_softmax() {
        for width in [1usize, 7, 16, 33, 256] {
            let rows = 3;
            let x: Vec<f32> = (0..rows * width)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.31)
                .collect();
            let mut got = x.clone();
            let mut inv = vec![0f32; rows];
            exp_rows(&mut got, width, &mut inv);
            for (r, row) in x.chunks_exact(width).enumerate() {
                let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
                let e: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
                let total: f64 = e.iter().sum();
                for (c, want) in e.iter().enumerate() {
                    let p = got[r * width + c] as f64 * inv[r] as f64;
                    assert!(
                        (p - want / total).abs() < 1e-6,
                        "width {width} row {r} col {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn erf_agrees_with_libm_within_its_bound() {
        let mut worst = 0f64;
        let mut x = -6.0f32;
        while x < 6.0 {
            worst = worst.max((erf(x) as f64 - libm_erf(x as f64)).abs());
            x += 0.001;
        }
        assert!(worst < 5e-7, "worst absolute error {worst}");
    }

    /// erf by its series (|x| < 3) or continued fraction, in f64: a reference.
    fn libm_erf(x: f64) -> f64 {
        if x.abs() < 3.0 {
            let (mut term, mut total, mut n) = (x, x, 0.0);
            while term.abs() > 1e-17 {
                n += 1.0;
                term *= -x * x / n;
                total += term / (2.0 * n + 1.0);
            }
            total * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc by Lentz's continued fraction, then 1 - erfc.
            let a = x.abs();
            let mut f = a;
            for k in (1..60).rev() {
                f = a + (k as f64 / 2.0) / f;
            }
            let erfc = (-a * a).exp() / (f * std::f64::consts::PI.sqrt());
            (1.0 - erfc).copysign(x)
        }
    }
}
