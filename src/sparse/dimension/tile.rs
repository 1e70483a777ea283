//! One row tile of the dimension scan's pair pass ([`super::min_dimension_of`]):
//! the loop over its rows l (R at a time) and the interleaved groups of rows j,
//! compiled once per instruction set (pulp's `WithSimd`).

use super::exact::{pair, Ctx};
use super::lanes::lanes;
use super::{COL_TILE, LANES};
use crate::kernel::SignMatrix;
use std::sync::atomic::AtomicU64;

/// One row tile lo..hi of the pair scan over the words `words` = k0..k1, against
/// every row j > l; returns the tile's bitmap.
pub(super) struct Tile<'a> {
    pub s: &'a SignMatrix,
    /// The rows in groups of [`LANES`], word k of a group's rows contiguous.
    pub inter: &'a [u64],
    pub lo: usize,
    pub hi: usize,
    pub words: (usize, usize),
    pub thr: &'a [i64],
    pub full: &'a [u64],
    pub safe: &'a [i64],
    pub shared: &'a [AtomicU64],
    /// The build has a vector popcount (VPOPCNTQ): two rows l at a time, and the
    /// popcounts of full blocks one per word instead of by the carry-save tree.
    pub vpop: bool,
}

impl pulp::WithSimd for Tile<'_> {
    type Output = Vec<u64>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<u64> {
        // carry-save popcounts pay off with a vector unit that counts bits by
        // table lookup (several lanes per register), not against VPOPCNTQ or the
        // scalar POPCNT instruction
        let cs = !self.vpop && std::mem::size_of::<S::u64s>() >= 32;
        if self.vpop {
            self.run::<2>(cs)
        } else {
            self.run::<1>(cs)
        }
    }
}

impl Tile<'_> {
    /// The tile's pairs, R rows l at a time (one at the end). Column tiles end
    /// on multiples of COL_TILE (a multiple of LANES), so only the ungrouped tail
    /// goes pair by pair.
    #[inline(always)]
    fn run<const R: usize>(self, cs: bool) -> Vec<u64> {
        let (n, d) = (self.s.n(), self.s.d());
        let grouped = n / LANES * LANES;
        let mut cx = Ctx::new(d, self.thr, self.full, self.shared, self.safe, self.words);
        let mut jb = self.lo + 1;
        while jb < n {
            let je = ((jb / COL_TILE + 1) * COL_TILE).min(n);
            let top = self.hi.min(je);
            let mut l = self.lo;
            while l < top {
                cx.refresh();
                if l + R <= top {
                    self.rows::<R>(l, (jb, je), grouped, cs, &mut cx);
                    l += R;
                } else {
                    self.rows::<1>(l, (jb, je), grouped, cs, &mut cx);
                    l += 1;
                }
            }
            jb = je;
        }
        cx.bad
    }

    /// Rows l..l + R against the rows j ∈ jb..je above them: whole groups from
    /// the one holding max(jb, l + 1) (in a group holding l + r itself, that lane
    /// is masked for row l + r), then the ungrouped tail pair by pair.
    #[inline(always)]
    fn rows<const R: usize>(
        &self,
        l: usize,
        (jb, je): (usize, usize),
        grouped: usize,
        cs: bool,
        cx: &mut Ctx,
    ) {
        let w = self.s.words_per_row();
        let a: [&[u64]; R] = std::array::from_fn(|r| self.s.row(l + r));
        let ge = je.min(grouped) / LANES;
        for g in jb.max(l + 1) / LANES..ge {
            let selfs = std::array::from_fn(|r| {
                if (l + r) / LANES == g {
                    (l + r) % LANES
                } else {
                    LANES
                }
            });
            let b = self.inter[g * LANES * w..(g + 1) * LANES * w]
                .as_chunks::<LANES>()
                .0;
            lanes::<R>(a, b, selfs, cs, cx);
        }
        for (r, a) in a.iter().enumerate() {
            for j in grouped.max(jb).max(l + r + 1)..je {
                pair(a, self.s.row(j), cx);
            }
        }
    }
}
