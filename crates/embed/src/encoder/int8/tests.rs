//! The 8-bit product against naive references on shapes that are not multiples of the
//! tile (8 rows × 48 channels) nor of the 4-input groups.

use super::*;

/// Deterministic values in `[-1, 1)` (a 64-bit LCG), some rows scaled to show the
/// per-row scales at work.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

const SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (3, 5, 7),
    (8, 48, 4),
    (9, 17, 13),
    (17, 50, 131),
    (23, 97, 386),
    (5, 1152, 384),
    (13, 384, 1539),
];

/// Symmetric quantisation as the module describes it, written plainly: the values and
/// their scale.
fn naive_quantise(row: &[f32]) -> (Vec<i32>, f64) {
    let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
    let s = if max > 0.0 { max / 127.0 } else { 1.0 };
    let q = row
        .iter()
        .map(|x| (x / s).round().clamp(-127.0, 127.0) as i32)
        .collect();
    (q, s as f64)
}

fn skip_without_vnni() -> bool {
    if supported() {
        return false;
    }
    eprintln!("skipped: this CPU lacks AVX-512 VNNI, so the encoder never runs the 8-bit kernel");
    true
}

#[test]
fn int8_matmul_equals_a_naive_product_of_the_quantised_values_on_odd_shapes() {
    if skip_without_vnni() {
        return;
    }
    let mut q = Quantized::default();
    for &(m, n, k) in SHAPES {
        let (x, w) = (values(m * k, 1 + m as u64), values(n * k, 7 + n as u64));
        let packed = PackedI8::pack(&w, n, k);
        for accumulate in [false, true] {
            let start = values(m * n, 99);
            let mut out = start.clone();
            matmul(&x, m, &packed, &mut out, accumulate, &mut q);
            for r in 0..m {
                let (xq, xs) = naive_quantise(&x[r * k..][..k]);
                for c in 0..n {
                    let (wq, ws) = naive_quantise(&w[c * k..][..k]);
                    let dot: i64 = xq.iter().zip(&wq).map(|(a, b)| (a * b) as i64).sum();
                    let mut want = dot as f64 * xs * ws;
                    if accumulate {
                        want += start[r * n + c] as f64;
                    }
                    let got = out[r * n + c] as f64;
                    // f32 rounding of the scale products and the i32 → f32 conversion.
                    let tol = 1e-5 * (1.0 + want.abs());
                    assert!(
                        (got - want).abs() <= tol,
                        "{m}×{n}×{k} accumulate={accumulate} at ({r}, {c}): {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn int8_matmul_is_within_quantisation_error_of_the_f32_product() {
    if skip_without_vnni() {
        return;
    }
    let mut q = Quantized::default();
    for &(m, n, k) in SHAPES.iter().filter(|s| s.2 >= 64) {
        let (x, w) = (values(m * k, 3), values(n * k, 5));
        let mut out = vec![0f32; m * n];
        matmul(&x, m, &PackedI8::pack(&w, n, k), &mut out, false, &mut q);
        let (mut err, mut norm) = (0f64, 0f64);
        for r in 0..m {
            for c in 0..n {
                let want: f64 = (0..k).map(|i| (x[r * k + i] * w[c * k + i]) as f64).sum();
                err += (out[r * n + c] as f64 - want).powi(2);
                norm += want * want;
            }
        }
        // Two 8-bit roundings of uniform values: ~0.6 % relative error in the products.
        let rel = (err / norm).sqrt();
        assert!(rel < 0.015, "{m}×{n}×{k}: relative error {rel}");
    }
}

#[test]
fn quantising_a_row_of_zeros_gives_zeros_and_the_unit_scale() {
    if skip_without_vnni() {
        return;
    }
    let mut d = vec![0u8; 24];
    // SAFETY: the CPU has AVX-512 F, BW and VL (checked above).
    let s = unsafe { kernel::quantize_row(&[0.0; 21], &mut d) };
    assert_eq!(s, 1.0);
    assert!(d.iter().all(|&b| b == 128), "{d:?}");
}
