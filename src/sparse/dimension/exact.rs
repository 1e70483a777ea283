//! The exact per-pair work of the dimension scan ([`super::min_dimension_of`]):
//! one tile's state ([`Ctx`]: its bitmap, the fast-case bounds, the shared bitmap
//! of full blocks), the one-pair scan ([`pair`]) and the slow path ([`block`]).
//!
//! Everything here is integer arithmetic on the prefix sums G. The vector scan
//! (`lanes`) only filters: a pair it does not hand to [`block`] is one whose
//! exact per-word test below would not have fired either.
//!
//! **Clear of a block, from its ends.** Block k holds the columns 64k+m, m = 1..=m_k,
//! with G = g₀ at m = 0 and g₁ at m = m_k; each column moves G by ±1, so
//! |G_{64k+m}| ≤ min(A + m, B + m_k − m) for A = |g₀|, B = |g₁|. Only the d whose
//! bit is still clear in the tile's bitmap need deciding: let lo..=hi be the first
//! and the last clear column of the block and T = θ_{64k+lo} (θ is non-decreasing,
//! so T ≤ θ_d at every clear d). The pair violates at no clear d of the block if
//! min(A + m, B + m_k − m) ≤ T for every m ∈ lo..=hi; the m with A + m > T are
//! those from T − A + 1, so this holds if
//! (L) A ≤ T − hi (no such m), or (R) B ≤ T − m_k + lo (B + m_k − m ≤ T from
//! m = lo), or (D) A + B ≤ 2T − m_k + 1 (B + m_k − m ≤ T from m = T − A + 1).
//! A + B ≡ m_k (mod 2) (g₁ = g₀ + m_k − 2·popcount), so (D) is A + B ≤ 2T − m_k
//! for the pair itself ([`Ctx::clear`]). With lo = 1, hi = m_k (nothing set yet)
//! (D) is the bound of [`super::min_dimension_of`]; bits only get set, so lo only
//! rises and hi only falls, and each bound only widens as the bitmap fills.
//!
//! **The chunk tables** ([`Ctx::tables`]). A box |g_b| ≤ h_b at the word
//! boundaries (g_b = G at column c_b = min(64b, d)) clears block k if
//! (h_k, h_{k+1}) satisfies (L), (R) or (D) for A ≤ h_k, B ≤ h_{k+1}: block k
//! offers its boundaries the allowance (T − hi, ∞) (L), (∞, T − m_k + lo) (R) or
//! (⌊S/2⌋, S − ⌊S/2⌋) for S = 2T − m_k + 1 (D), the one with the larger minimum; a
//! full block or one outside the stage offers (cap, cap), cap = 2d + 256 >
//! 2·max|G| + 64. Boundary b takes the smaller of the two allowances it is offered
//! (by blocks b − 1 and b). With P_b = Σ_{k<b} popcount(a_k ⊕ b_k) (so
//! g_b = c_b − 2P_b), |g_b| ≤ h_b ⟺ L_b ≤ P_b ≤ U_b for L_b = ⌈(c_b − h_b)/2⌉,
//! U_b = ⌊(c_b + h_b)/2⌋.
//! The words are cut into aligned chunks of [`CHUNK`] words; chunk m covers
//! boundaries b = CHUNK·m ..= CHUNK·m + CHUNK (clipped to w), W_m = min_b (U_b −
//! L_b) over them and bias_b = L_b + ⌊(U_b − L_b − W_m)/2⌋ ∈ [L_b, U_b − W_m]. So
//! if 0 ≤ P_b − bias_b ≤ W_m (one unsigned comparison of the wrapped difference,
//! |P_b − bias_b| < 2^63) at every boundary of a chunk, no block of the chunk can
//! be violated by the pair at a clear d. If W_m < 0 (some h_b < 0) nothing passes.
//! The allowances only widen as bits are set (to cap once a block is full), so
//! tables built before are only more cautious: they are rebuilt lazily
//! ([`Ctx::dirty`]), and only the chunks whose boundaries border a block whose
//! bounds changed (block k borders boundaries k and k + 1; the others' tables are
//! unchanged).

use super::CHUNK;
use std::sync::atomic::{AtomicU64, Ordering};

/// One tile's state in one stage of the scan.
pub(super) struct Ctx<'a> {
    pub d: usize,
    pub thr: &'a [i64],
    pub full: &'a [u64],
    pub shared: &'a [AtomicU64],
    /// The stage's words k0..k1.
    pub words: (usize, usize),
    /// safe[k]: the largest |g₀| + |g₁| for which block k is clear by (D) (module
    /// doc), or i64::MAX once block k is full (nothing left to record there).
    pub safe: Vec<i64>,
    /// lt[k], rt[k]: the largest |g₀|, |g₁| for which block k is clear by (L),
    /// (R) (module doc; i64::MAX once full).
    pub lt: Vec<i64>,
    pub rt: Vec<i64>,
    /// The tile's bitmap.
    pub bad: Vec<u64>,
    /// The first word of the stage whose block is not full here (set by
    /// [`Ctx::refresh`]; blocks only ever fill, so every block before it stays
    /// full).
    pub open: usize,
    /// W_m per chunk m (see the module doc).
    pub wlim: Vec<i64>,
    /// bias_b of chunk m at (CHUNK + 1)·m + (b − CHUNK·m), as u64 (wrapped).
    pub bias: Vec<u64>,
    /// `safe` changed since the tables were built.
    pub dirty: bool,
    /// The chunks to rebuild, `stale.0..stale.1` (empty when not dirty).
    pub stale: (usize, usize),
}

impl<'a> Ctx<'a> {
    pub fn new(
        d: usize,
        thr: &'a [i64],
        full: &'a [u64],
        shared: &'a [AtomicU64],
        words: (usize, usize),
    ) -> Ctx<'a> {
        let w = full.len();
        let chunks = w.div_ceil(CHUNK);
        let mut cx = Ctx {
            d,
            thr,
            full,
            shared,
            words,
            safe: vec![0; w],
            lt: vec![0; w],
            rt: vec![0; w],
            bad: vec![0u64; w],
            open: words.0,
            wlim: vec![-1; chunks],
            bias: vec![0; chunks * (CHUNK + 1)],
            dirty: true,
            stale: (0, chunks),
        };
        for k in 0..w {
            cx.bounds(k);
        }
        cx
    }

    /// The clear range lo..=hi of block k (columns 64k + lo ..= 64k + hi, 1-based,
    /// the first and the last whose bit is clear) and m_k; `None` once full.
    #[inline]
    fn span(&self, k: usize) -> Option<(usize, usize, usize)> {
        let open = !self.bad[k] & self.full[k];
        (open != 0).then(|| {
            let mk = (self.d - 64 * k).min(64);
            (
                open.trailing_zeros() as usize + 1,
                64 - open.leading_zeros() as usize,
                mk,
            )
        })
    }

    /// Sets `safe`, `lt` and `rt` of block k from its bits (module doc); whether
    /// they changed.
    #[inline]
    fn bounds(&mut self, k: usize) -> bool {
        let (s, l, r) = match self.span(k) {
            None => (i64::MAX, i64::MAX, i64::MAX),
            Some((lo, hi, mk)) => {
                let t = self.thr[64 * k + lo];
                let (lo, hi, mk) = (lo as i64, hi as i64, mk as i64);
                (2 * t - mk, t - hi, t - mk + lo)
            }
        };
        let changed = (s, l, r) != (self.safe[k], self.lt[k], self.rt[k]);
        (self.safe[k], self.lt[k], self.rt[k]) = (s, l, r);
        changed
    }

    /// Whether a pair with A = |g₀|, B = |g₁| at block k's ends is clear of the
    /// block ((D), (L) or (R) of the module doc): nothing to record there.
    #[inline(always)]
    pub fn clear(&self, k: usize, a: i64, b: i64) -> bool {
        a + b <= self.safe[k] || a <= self.lt[k] || b <= self.rt[k]
    }

    /// Takes from the shared bitmap the bits of the stage other tiles have set
    /// (a block filled has its fast-case test skipped, the others' bounds widen).
    /// Only bits some pair violates are ever in the shared bitmap.
    #[inline]
    pub fn refresh(&mut self) {
        let (k0, k1) = self.words;
        for k in k0..k1 {
            if self.safe[k] != i64::MAX {
                let bad = self.bad[k] | self.shared[k].load(Ordering::Relaxed);
                if bad != self.bad[k] {
                    self.bad[k] = bad;
                    if self.bounds(k) {
                        self.touch(k);
                    }
                }
            }
        }
        self.open = (k0..k1).find(|&k| self.safe[k] != i64::MAX).unwrap_or(k1);
    }

    /// Block k's bounds widened: the chunks holding boundary k or k + 1 (chunk m
    /// holds CHUNK·m ..= CHUNK·m + CHUNK) are to be rebuilt.
    #[inline]
    pub fn touch(&mut self, k: usize) {
        let (lo, hi) = (
            k.saturating_sub(1) / CHUNK,
            ((k + 1) / CHUNK + 1).min(self.wlim.len()),
        );
        self.stale = if self.dirty {
            (self.stale.0.min(lo), self.stale.1.max(hi))
        } else {
            (lo, hi)
        };
        self.dirty = true;
    }

    /// Block k's allowances (h_k, h_{k+1}) for its two boundaries (module doc),
    /// each at most `cap`; (cap, cap) when full or outside the stage.
    #[inline]
    fn allowance(&self, k: usize, cap: i64) -> (i64, i64) {
        let (k0, k1) = self.words;
        let Some((lo, hi, mk)) = (k0..k1).contains(&k).then(|| self.span(k)).flatten() else {
            return (cap, cap);
        };
        let t = self.thr[64 * k + lo];
        let (lo, hi, mk) = (lo as i64, hi as i64, mk as i64);
        let s = 2 * t - mk + 1;
        let d = (s.div_euclid(2), s - s.div_euclid(2));
        let (l, r) = (t - hi, t - mk + lo);
        // the option whose smaller allowance is the larger
        let best = if l >= r { l } else { r };
        let a = if best > d.0 {
            if l >= r {
                (l, cap)
            } else {
                (cap, r)
            }
        } else {
            d
        };
        (a.0.min(cap), a.1.min(cap))
    }

    /// Rebuilds `wlim` and `bias` from the bitmap (module doc) in the stale chunks.
    #[inline(never)]
    pub fn tables(&mut self) {
        let w = self.full.len();
        let d = self.d as i64;
        let cap = 2 * d + 256;
        for m in self.stale.0..self.stale.1 {
            let (b0, b1) = (CHUNK * m, (CHUNK * m + CHUNK).min(w));
            let mut range = [(0i64, 0i64); CHUNK + 1];
            let mut wl = i64::MAX;
            // the allowance block b − 1 offers boundary b
            let mut right = if b0 >= 1 {
                self.allowance(b0 - 1, cap).1
            } else {
                cap
            };
            for b in b0..=b1 {
                let (left, next) = if b < w {
                    self.allowance(b, cap)
                } else {
                    (cap, cap)
                };
                let h = left.min(right);
                right = next;
                let c = (64 * b as i64).min(d);
                let (lo, hi) = ((c - h + 1).div_euclid(2), (c + h).div_euclid(2));
                range[b - b0] = (lo, hi);
                wl = wl.min(hi - lo);
            }
            self.wlim[m] = wl;
            for b in b0..=b1 {
                let (lo, hi) = range[b - b0];
                // bias ∈ [L_b, U_b − W_m] (unused when W_m < 0)
                let bias = if wl >= 0 { lo + (hi - lo - wl) / 2 } else { 0 };
                self.bias[(CHUNK + 1) * m + b - b0] = bias as u64;
            }
        }
        self.dirty = false;
    }
}

/// Records in `cx.bad` every d of the stage's words at which the pair (a, b)
/// violates C(t) (see [`super::min_dimension_of`] for the bounds used). The
/// common case is one comparison per word.
#[inline]
pub(super) fn pair(a: &[u64], b: &[u64], cx: &mut Ctx) {
    let d = cx.d;
    let (k0, k1) = cx.words;
    // G at column 64·k0: words before k0 hold 64 columns each (k0 < w)
    let mut g0 = 0i64;
    for (x, y) in a[..k0].iter().zip(&b[..k0]) {
        g0 += 64 - 2 * i64::from((x ^ y).count_ones());
    }
    for k in k0..k1 {
        let x = a[k] ^ b[k];
        let mk = (d - 64 * k).min(64) as i64;
        let g1 = g0 + mk - 2 * i64::from(x.count_ones());
        if !cx.clear(k, g0.abs(), g1.abs()) {
            block(k, x, g0, g0.abs() + g1.abs(), mk, cx);
        }
        g0 = g1;
    }
}

/// The slow path of one pair in block k (|g₀| + |g₁| = s, not [`Ctx::clear`]): first the
/// block's bits other tiles have set are taken from the shared bitmap (and the
/// pair is done if the block is now full); then the whole block is violated, or
/// the block is refined byte by byte with the same bound (for a sub-block of
/// m_b ≤ 8 columns starting at G = h₀ and ending at h₁: clear if
/// |h₀| + |h₁| + m_b ≤ 2θ at its first column, all violated if
/// |h₀| + |h₁| − m_b > 2θ at its last), and only an undecided byte whose bits are
/// not all set already is followed column by column. New bits go to the shared
/// bitmap too.
#[inline(never)]
pub(super) fn block(k: usize, x: u64, g0: i64, s: i64, mk: i64, cx: &mut Ctx) {
    let (thr, full) = (cx.thr, cx.full);
    let before = cx.bad[k] | cx.shared[k].load(Ordering::Relaxed);
    let mut bad = before;
    let base = 64 * k;
    if bad == full[k] {
        // filled elsewhere: nothing to record
    } else if s - mk > 2 * thr[base + mk as usize] {
        bad = full[k];
    } else {
        let mut g = g0;
        let mut c = 0usize; // columns of the block done
        while c < mk as usize {
            let mb = (mk as usize - c).min(8);
            let mask = ((1u64 << mb) - 1) << c;
            let xb = x & mask;
            let h1 = g + mb as i64 - 2 * i64::from(xb.count_ones());
            let sb = g.abs() + h1.abs();
            let (first, last) = (base + c + 1, base + c + mb);
            if bad & mask == mask || sb + mb as i64 <= 2 * thr[first] {
                // nothing new to record in this byte
            } else if sb - mb as i64 > 2 * thr[last] {
                bad |= mask;
            } else {
                let mut h = g;
                for m in 0..mb {
                    h += 1 - 2 * ((xb >> (c + m)) & 1) as i64;
                    if h.abs() > thr[first + m] {
                        bad |= 1 << (c + m);
                    }
                }
            }
            g = h1;
            c += mb;
        }
    }
    if bad != before {
        cx.shared[k].fetch_or(bad, Ordering::Relaxed);
    }
    if bad != cx.bad[k] {
        cx.bad[k] = bad;
        if cx.bounds(k) {
            cx.touch(k);
        }
    }
}
