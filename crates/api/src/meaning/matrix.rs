//! The vectors of one model as one compact matrix (row-major `f32`, one row per unit,
//! with the units' ids beside it), and the exact top-k by cosine similarity over it. A
//! long-lived process keeps it in memory ([`super::resident`]), so a query reads no
//! vector from SQLite.

/// Rows of unit-length vectors, all of one dimension.
#[derive(Debug, Default)]
pub struct Matrix {
    dim: usize,
    ids: Vec<i64>,
    data: Vec<f32>,
}

impl Matrix {
    /// Appends a row read from its stored form (little-endian `f32`s): refused when its
    /// length is not a whole number of floats or differs from the rows before it, so a
    /// damaged file is never read as vectors.
    pub fn push_le_bytes(&mut self, id: i64, blob: &[u8]) -> Result<(), String> {
        if blob.is_empty() || !blob.len().is_multiple_of(4) {
            return Err(format!("a vector of {} bytes", blob.len()));
        }
        let dim = blob.len() / 4;
        if self.ids.is_empty() {
            self.dim = dim;
        } else if dim != self.dim {
            return Err(format!(
                "a vector of {dim} dimensions among vectors of {}",
                self.dim
            ));
        }
        self.data.extend(
            blob.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        self.ids.push(id);
        Ok(())
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds no row.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes the matrix holds (its floats and ids).
    pub fn bytes(&self) -> usize {
        self.data.len() * 4 + self.ids.len() * 8
    }

    /// The `k` rows most similar to the unit-length `query` (their ids and cosine
    /// similarity), best first, ties by id. A query of another dimension matches
    /// nothing: it was embedded by another model.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        if self.dim == 0 || query.len() != self.dim || k == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(i64, f32)> = self
            .data
            .chunks_exact(self.dim)
            .zip(&self.ids)
            .map(|(row, id)| (*id, loci_memory::cosine::dot(row, query)))
            .collect();
        let order = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, order);
            scored.truncate(k);
        }
        scored.sort_by(order);
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::Matrix;

    fn bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn the_top_k_are_the_most_similar_rows_best_first_ties_by_id() {
        let mut m = Matrix::default();
        for (id, v) in [
            (1, [1.0, 0.0]),
            (2, [0.0, 1.0]),
            (3, [0.6, 0.8]),
            (4, [0.8, 0.6]),
            (5, [0.8, 0.6]),
        ] {
            m.push_le_bytes(id, &bytes(&v)).unwrap();
        }
        let got: Vec<i64> = m.nearest(&[1.0, 0.0], 3).into_iter().map(|h| h.0).collect();
        assert_eq!(got, [1, 4, 5]);
        assert_eq!(m.nearest(&[1.0, 0.0], 10).len(), 5);
        assert!(
            m.nearest(&[1.0, 0.0, 0.0], 3).is_empty(),
            "another dimension"
        );
        assert!(m.nearest(&[1.0, 0.0], 0).is_empty());
    }

    #[test]
    fn a_damaged_row_is_refused_not_read() {
        let mut m = Matrix::default();
        assert!(m.push_le_bytes(1, &[0, 0, 0]).is_err());
        assert!(m.push_le_bytes(1, &[]).is_err());
        m.push_le_bytes(1, &bytes(&[1.0, 0.0])).unwrap();
        assert!(m.push_le_bytes(2, &bytes(&[1.0, 0.0, 0.0])).is_err());
        assert_eq!(m.len(), 1);
    }
}
