//! One row tile of the dimension scan's pair pass ([`super::min_dimension_of`]):
//! the loop over its rows l (R at a time) and the interleaved groups of rows j,
//! compiled once per instruction set (pulp's `WithSimd`).

use super::exact::{pair, Ctx};
use super::lanes::{lanes, Auto, Kernel};
use super::{COL_TILE, LANES};
use crate::kernel::SignMatrix;
use std::sync::atomic::AtomicU64;

/// One row tile lo..hi of the pair scan over the words `words` = k0..k1, against
/// every row j > l; returns the tile's bitmap.
pub(super) struct Tile<'a, const R: usize, const CS: bool> {
    pub s: &'a SignMatrix,
    /// The rows in groups of [`LANES`], word k of a group's rows contiguous.
    pub inter: &'a [u64],
    pub lo: usize,
    pub hi: usize,
    pub words: (usize, usize),
    pub thr: &'a [i64],
    pub full: &'a [u64],
    pub shared: &'a [AtomicU64],
}

/// One row l at a time, with [`Auto`]: with `CS` the popcounts of full blocks
/// are summed by the carry-save tree where the vector unit counts bits by table
/// lookup (several lanes per register, not against the scalar POPCNT
/// instruction).
impl<const CS: bool> pulp::WithSimd for Tile<'_, 1, CS> {
    type Output = Vec<u64>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<u64> {
        if CS && std::mem::size_of::<S::u64s>() >= 32 {
            self.run(Auto::<true>)
        } else {
            self.run(Auto::<false>)
        }
    }
}

impl<const R: usize, const CS: bool> Tile<'_, R, CS> {
    /// The tile's pairs, R rows l at a time (at the end, the last row taken R
    /// times: its pairs are scanned again, which sets no new bit). Column tiles
    /// end on multiples of COL_TILE (a multiple of LANES), so only the ungrouped
    /// tail goes pair by pair.
    #[inline(always)]
    pub fn run<K: Kernel<R>>(self, kernel: K) -> Vec<u64> {
        let (n, d) = (self.s.n(), self.s.d());
        let grouped = n / LANES * LANES;
        let mut cx = Ctx::new(d, self.thr, self.full, self.shared, self.words);
        let mut jb = self.lo + 1;
        while jb < n {
            let je = ((jb / COL_TILE + 1) * COL_TILE).min(n);
            let top = self.hi.min(je);
            let mut l = self.lo;
            while l < top {
                cx.refresh();
                let rows = std::array::from_fn(|r| (l + r).min(top - 1));
                self.rows(kernel, rows, (jb, je), grouped, &mut cx);
                l += R;
            }
            jb = je;
        }
        cx.bad
    }

    /// The rows `rows` (l, l + 1, …, each ≥ l) against the rows j ∈ jb..je
    /// above l: whole groups from the one holding max(jb, l + 1) (in a group
    /// holding a row itself, that lane is masked for it), then the ungrouped
    /// tail pair by pair.
    #[inline(always)]
    fn rows<K: Kernel<R>>(
        &self,
        kernel: K,
        rows: [usize; R],
        (jb, je): (usize, usize),
        grouped: usize,
        cx: &mut Ctx,
    ) {
        let w = self.s.words_per_row();
        let l = rows[0];
        let a: [&[u64]; R] = rows.map(|l| self.s.row(l));
        let ge = je.min(grouped) / LANES;
        for g in jb.max(l + 1) / LANES..ge {
            let selfs = rows.map(|l| if l / LANES == g { l % LANES } else { LANES });
            let b = self.inter[g * LANES * w..(g + 1) * LANES * w]
                .as_chunks::<LANES>()
                .0;
            lanes(kernel, a, b, selfs, cx);
        }
        for (&l, a) in rows.iter().zip(&a) {
            for j in grouped.max(jb).max(l + 1)..je {
                pair(a, self.s.row(j), cx);
            }
        }
    }
}
