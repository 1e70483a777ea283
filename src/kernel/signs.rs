//! Exact inner products of ±1 vectors by popcount (the sparse construction's
//! Gram certificate).
//!
//! A sign vector s ∈ {±1}^d is stored as d bits (bit 1 = −1), padded with zeros
//! to whole 64-bit words. For two rows, ⟨s_l, s_j⟩ = d − 2·popcount(s_l ⊕ s_j):
//! each coordinate contributes +1 when the signs agree and −1 when they differ,
//! and the zero padding agrees. Everything is exact integer arithmetic.

/// An n × d matrix of signs, bit-packed by rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignMatrix {
    n: usize,
    d: usize,
    words: usize,
    bits: Vec<u64>,
}

impl SignMatrix {
    /// Builds the matrix from `sign(l, c)`: `true` means −1.
    pub fn from_fn(
        n: usize,
        d: usize,
        mut negative: impl FnMut(usize, usize) -> bool,
    ) -> SignMatrix {
        let words = d.div_ceil(64);
        let mut bits = vec![0u64; n * words];
        for l in 0..n {
            for c in 0..d {
                if negative(l, c) {
                    bits[l * words + c / 64] |= 1u64 << (c % 64);
                }
            }
        }
        SignMatrix { n, d, words, bits }
    }

    /// Builds the matrix from packed rows (`words = ⌈d/64⌉` words per row; bits at
    /// columns ≥ d must be zero, else `None`).
    pub fn from_words(n: usize, d: usize, bits: Vec<u64>) -> Option<SignMatrix> {
        let words = d.div_ceil(64);
        if bits.len() != n * words {
            return None;
        }
        if d % 64 != 0 {
            let mask = !0u64 << (d % 64);
            if (0..n).any(|l| bits[l * words + words - 1] & mask != 0) {
                return None;
            }
        }
        Some(SignMatrix { n, d, words, bits })
    }

    /// Rows n.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Columns d.
    pub fn d(&self) -> usize {
        self.d
    }
    /// Words per row.
    pub fn words_per_row(&self) -> usize {
        self.words
    }
    /// The packed words of row `l`.
    pub fn row(&self, l: usize) -> &[u64] {
        &self.bits[l * self.words..(l + 1) * self.words]
    }
    /// All packed words, row after row.
    pub fn words(&self) -> &[u64] {
        &self.bits
    }
    /// The sign at (l, c): +1 or −1.
    pub fn sign(&self, l: usize, c: usize) -> i64 {
        if self.bits[l * self.words + c / 64] >> (c % 64) & 1 == 1 {
            -1
        } else {
            1
        }
    }

    /// ⟨s_l, s_j⟩ = d − 2·popcount(s_l ⊕ s_j), exactly.
    pub fn inner(&self, l: usize, j: usize) -> i64 {
        let x: u32 = self
            .row(l)
            .iter()
            .zip(self.row(j))
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        self.d as i64 - 2 * x as i64
    }

    /// max_{l ≠ j} |⟨s_l, s_j⟩| and a pair attaining it (the smallest (l, j) in
    /// lexicographic order among the maximisers, so the result does not depend on
    /// the thread count). `None` when n < 2.
    pub fn max_abs_offdiag(&self) -> Option<(i64, (usize, usize))> {
        use rayon::prelude::*;
        if self.n < 2 {
            return None;
        }
        (0..self.n - 1)
            .into_par_iter()
            .map(|l| {
                let mut best = (-1i64, (l, l + 1));
                for j in l + 1..self.n {
                    let v = self.inner(l, j).abs();
                    if v > best.0 {
                        best = (v, (l, j));
                    }
                }
                best
            })
            .reduce_with(|a, b| {
                if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
                    b
                } else {
                    a
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn inner_products_are_exact() {
        let f = |l: usize, c: usize| (l * 7 + c * 3) % 5 < 2;
        let s = SignMatrix::from_fn(5, 130, f);
        for l in 0..5 {
            for j in 0..5 {
                let naive: i64 = (0..130).map(|c| s.sign(l, c) * s.sign(j, c)).sum();
                assert_eq!(s.inner(l, j), naive);
            }
            assert_eq!(s.inner(l, l), 130);
        }
        let (m, (l, j)) = s.max_abs_offdiag().unwrap();
        assert_eq!(s.inner(l, j).abs(), m);
    }
}
