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
        if !d.is_multiple_of(64) {
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

    /// The matrix of the first `d` columns (d ≤ self.d()): the nested prefix S[:, 0..d].
    pub fn prefix(&self, d: usize) -> SignMatrix {
        assert!(d <= self.d, "prefix wider than the matrix");
        let w = d.div_ceil(64);
        let mask = if d.is_multiple_of(64) {
            !0u64
        } else {
            (1u64 << (d % 64)) - 1
        };
        let mut bits = Vec::with_capacity(self.n * w);
        for l in 0..self.n {
            bits.extend_from_slice(&self.row(l)[..w]);
            if w > 0 {
                *bits.last_mut().expect("w > 0") &= mask;
            }
        }
        SignMatrix {
            n: self.n,
            d,
            words: w,
            bits,
        }
    }

    /// max_{l ≠ j} |⟨s_l, s_j⟩| and a pair attaining it (the smallest (l, j) in
    /// lexicographic order among the maximisers, so the result does not depend on
    /// the thread count). `None` when n < 2.
    ///
    /// Streaming and blocked (see [`SignMatrix::for_each_pair_in_tile`]): memory
    /// O(n·d/64), never the n × n Gram matrix; row tiles run on the rayon pool
    /// and the reduction is a total order, so any schedule gives the same answer.
    pub fn max_abs_offdiag(&self) -> Option<(i64, (usize, usize))> {
        use rayon::prelude::*;
        if self.n < 2 {
            return None;
        }
        let d = self.d as i64;
        self.tiles()
            .into_par_iter()
            .map(|t| {
                let mut best = (-1i64, (usize::MAX, usize::MAX));
                self.for_each_pair_in_tile(t, |l, j, x| {
                    let v = (d - 2 * i64::from(x)).abs();
                    if v > best.0 || (v == best.0 && (l, j) < best.1) {
                        best = (v, (l, j));
                    }
                });
                best
            })
            .filter(|b| b.0 >= 0)
            .reduce_with(better)
    }

    /// The number of pairs l < j with |⟨s_l, s_j⟩| > `bound` (blocked, parallel,
    /// exact).
    pub fn count_offdiag_above(&self, bound: i64) -> u64 {
        use rayon::prelude::*;
        let d = self.d as i64;
        self.tiles()
            .into_par_iter()
            .map(|t| {
                let mut c = 0u64;
                self.for_each_pair_in_tile(t, |_, _, x| {
                    c += u64::from((d - 2 * i64::from(x)).abs() > bound);
                });
                c
            })
            .sum()
    }

    /// The lexicographically smallest pair (l, j), l < j, with |⟨s_l, s_j⟩| >
    /// `bound`, and that value; `None` when every off-diagonal entry is within
    /// the bound (so C(t) holds for bound = ⌊t·d⌋). Stops early: row tiles after
    /// the first one with a violation are not scanned.
    pub fn first_offdiag_above(&self, bound: i64) -> Option<(i64, (usize, usize))> {
        use rayon::prelude::*;
        let d = self.d as i64;
        self.tiles()
            .into_par_iter()
            .filter_map(|t| {
                let mut first: Option<(i64, (usize, usize))> = None;
                self.for_each_pair_in_tile(t, |l, j, x| {
                    let v = (d - 2 * i64::from(x)).abs();
                    if v > bound && first.is_none_or(|f| (l, j) < f.1) {
                        first = Some((v, (l, j)));
                    }
                });
                first
            })
            .find_first(|_| true)
    }

    /// The row tiles of the blocked scans: rows `lo..hi`, ROW_TILE rows each.
    pub fn tiles(&self) -> Vec<(usize, usize)> {
        (0..self.n)
            .step_by(ROW_TILE)
            .map(|lo| (lo, (lo + ROW_TILE).min(self.n)))
            .collect()
    }

    /// Calls `visit(l, j, popcount(s_l ⊕ s_j))` for every pair l < j with l in the
    /// row tile `lo..hi` (and j anywhere above l), in a cache-blocked order: the
    /// rows j are taken COL_TILE at a time (a block that stays in L2) and each
    /// row l of the tile meets them four at a time (one load of s_l's word feeds
    /// four XOR-popcounts, four independent accumulators). The order of visits
    /// is fixed but not lexicographic.
    pub fn for_each_pair_in_tile(
        &self,
        (lo, hi): (usize, usize),
        mut visit: impl FnMut(usize, usize, u32),
    ) {
        let w = self.words;
        let n = self.n;
        let mut jb = lo + 1;
        while jb < n {
            let je = (jb + COL_TILE).min(n);
            let top = hi.min(je);
            let mut l = lo;
            while l < top {
                if l + 1 < top {
                    // Two rows l, l + 1 against four rows j at a time: six loads
                    // feed eight XOR-popcounts.
                    let (a, b) = (self.row(l), self.row(l + 1));
                    if l + 1 >= jb {
                        visit(l, l + 1, xor_pop(a, b));
                    }
                    let mut j = jb.max(l + 2);
                    while j + 4 <= je {
                        let c = pop2x4(a, b, &self.bits[j * w..(j + 4) * w]);
                        for (i, &x) in c[0].iter().enumerate() {
                            visit(l, j + i, x);
                        }
                        for (i, &x) in c[1].iter().enumerate() {
                            visit(l + 1, j + i, x);
                        }
                        j += 4;
                    }
                    while j < je {
                        let r = self.row(j);
                        visit(l, j, xor_pop(a, r));
                        visit(l + 1, j, xor_pop(b, r));
                        j += 1;
                    }
                    l += 2;
                } else {
                    let a = self.row(l);
                    let mut j = jb.max(l + 1);
                    while j + 4 <= je {
                        let c = pop4(a, &self.bits[j * w..(j + 4) * w]);
                        for (i, &x) in c.iter().enumerate() {
                            visit(l, j + i, x);
                        }
                        j += 4;
                    }
                    while j < je {
                        visit(l, j, xor_pop(a, self.row(j)));
                        j += 1;
                    }
                    l += 1;
                }
            }
            jb = je;
        }
    }
}

/// Rows per tile of the blocked scans (the unit of parallel work).
const ROW_TILE: usize = 64;
/// Rows j per inner block (COL_TILE · d/8 bytes: 80 KB at d = 2485).
const COL_TILE: usize = 256;

fn better(a: (i64, (usize, usize)), b: (i64, (usize, usize))) -> (i64, (usize, usize)) {
    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
        b
    } else {
        a
    }
}

/// popcount(a ⊕ b) over whole rows.
#[inline]
pub fn xor_pop(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// popcount(a ⊕ b_i) and popcount(a' ⊕ b_i) for the four consecutive rows
/// b_0..b_3 packed in `b` (b.len() = 4·a.len()).
#[inline(always)]
fn pop2x4(a: &[u64], a2: &[u64], b: &[u64]) -> [[u32; 4]; 2] {
    let w = a.len();
    let (b0, r) = b.split_at(w);
    let (b1, r) = r.split_at(w);
    let (b2, b3) = r.split_at(w);
    let (b3, a2) = (&b3[..w], &a2[..w]);
    let mut c = [[0u32; 4]; 2];
    for k in 0..w {
        let (x, y) = (a[k], a2[k]);
        let (z0, z1, z2, z3) = (b0[k], b1[k], b2[k], b3[k]);
        c[0][0] += (x ^ z0).count_ones();
        c[0][1] += (x ^ z1).count_ones();
        c[0][2] += (x ^ z2).count_ones();
        c[0][3] += (x ^ z3).count_ones();
        c[1][0] += (y ^ z0).count_ones();
        c[1][1] += (y ^ z1).count_ones();
        c[1][2] += (y ^ z2).count_ones();
        c[1][3] += (y ^ z3).count_ones();
    }
    c
}

/// popcount(a ⊕ b_i) for the four consecutive rows b_0..b_3 packed in `b`
/// (b.len() = 4·a.len()).
#[inline(always)]
fn pop4(a: &[u64], b: &[u64]) -> [u32; 4] {
    let w = a.len();
    let (b0, r) = b.split_at(w);
    let (b1, r) = r.split_at(w);
    let (b2, b3) = r.split_at(w);
    let (b3, a) = (&b3[..w], &a[..w]);
    let mut c = [0u32; 4];
    for k in 0..w {
        let x = a[k];
        c[0] += (x ^ b0[k]).count_ones();
        c[1] += (x ^ b1[k]).count_ones();
        c[2] += (x ^ b2[k]).count_ones();
        c[3] += (x ^ b3[k]).count_ones();
    }
    c
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
