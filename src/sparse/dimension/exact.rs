//! The exact per-pair work of the dimension scan ([`super::min_dimension_of`]):
//! one tile's state ([`Ctx`]: its bitmap, the fast-case bounds, the shared bitmap
//! of full blocks), the one-pair scan ([`pair`]) and the slow path ([`block`]).
//!
//! Everything here is integer arithmetic on the prefix sums G. The vector scan
//! (`lanes`) only filters: a pair it does not hand to [`block`] is one whose
//! exact per-word test below would not have fired either.
//!
//! **The chunk tables** ([`Ctx::tables`]). Block k (columns 64k+1..=64k+m_k) is
//! clear for a pair if |g_k| + |g_{k+1}| ≤ safe_k (g_b = G at column c_b =
//! min(64b, d), the word boundaries; see [`super::min_dimension_of`]). Give each
//! boundary b the half-width h_b = ⌊min(safe_{b−1}, safe_b, cap)/2⌋ (a block
//! outside the stage or full counts as cap = 2d + 256 > 2·max|G| + 64); then
//! |g_b| ≤ h_b at both ends of block k gives |g_k| + |g_{k+1}| ≤ 2·⌊safe_k/2⌋ ≤
//! safe_k. With P_b = Σ_{k<b} popcount(a_k ⊕ b_k) (so g_b = c_b − 2P_b),
//! |g_b| ≤ h_b ⟺ L_b ≤ P_b ≤ U_b for L_b = ⌈(c_b − h_b)/2⌉, U_b = ⌊(c_b + h_b)/2⌋.
//! The words are cut into aligned chunks of [`CHUNK`] words; chunk m covers
//! boundaries b = CHUNK·m ..= CHUNK·m + CHUNK (clipped to w), W_m = min_b (U_b −
//! L_b) over them and bias_b = L_b + ⌊(U_b − L_b − W_m)/2⌋ ∈ [L_b, U_b − W_m]. So
//! if 0 ≤ P_b − bias_b ≤ W_m (one unsigned comparison of the wrapped difference,
//! |P_b − bias_b| < 2^63) at every boundary of a chunk, no block of the chunk can
//! be violated by the pair. If W_m < 0 (some h_b < 0: θ below 32) nothing passes.
//! `safe` only ever rises (to i64::MAX, a block filled), so tables built before a
//! rise are only more cautious: they are rebuilt lazily ([`Ctx::dirty`]), and only
//! the chunks whose boundaries border a block whose `safe` rose (block k borders
//! boundaries k and k + 1; the others' tables are unchanged).

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
    /// safe[k]: the largest |g₀| + |g₁| for which block k is clear, or i64::MAX
    /// once block k is full (nothing left to record there).
    pub safe: Vec<i64>,
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
        safe: &[i64],
        words: (usize, usize),
    ) -> Ctx<'a> {
        let w = full.len();
        let chunks = w.div_ceil(CHUNK);
        Ctx {
            d,
            thr,
            full,
            shared,
            words,
            safe: safe.to_vec(),
            bad: vec![0u64; w],
            open: words.0,
            wlim: vec![-1; chunks],
            bias: vec![0; chunks * (CHUNK + 1)],
            dirty: true,
            stale: (0, chunks),
        }
    }

    /// Takes from the shared bitmap the blocks of the stage other tiles have
    /// filled (their fast-case test is then skipped). Only full blocks are taken,
    /// and only bits some pair violates are ever in the shared bitmap.
    #[inline]
    pub fn refresh(&mut self) {
        let (k0, k1) = self.words;
        for k in k0..k1 {
            if self.safe[k] != i64::MAX
                && (self.bad[k] | self.shared[k].load(Ordering::Relaxed)) == self.full[k]
            {
                self.bad[k] = self.full[k];
                self.safe[k] = i64::MAX;
                self.touch(k);
            }
        }
        self.open = (k0..k1).find(|&k| self.safe[k] != i64::MAX).unwrap_or(k1);
    }

    /// Block k's `safe` rose: the chunks holding boundary k or k + 1 (chunk m
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

    /// Rebuilds `wlim` and `bias` from `safe` (module doc) in the stale chunks.
    #[inline(never)]
    pub fn tables(&mut self) {
        let (k0, k1) = self.words;
        let w = self.full.len();
        let d = self.d as i64;
        let cap = 2 * d + 256;
        let safe = |k: usize| {
            if (k0..k1).contains(&k) {
                self.safe[k].min(cap)
            } else {
                cap
            }
        };
        for m in self.stale.0..self.stale.1 {
            let (b0, b1) = (CHUNK * m, (CHUNK * m + CHUNK).min(w));
            let mut range = [(0i64, 0i64); CHUNK + 1];
            let mut wl = i64::MAX;
            for b in b0..=b1 {
                let left = if b >= 1 { safe(b - 1) } else { cap };
                let right = if b < w { safe(b) } else { cap };
                let h = left.min(right).div_euclid(2);
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
        let s = g0.abs() + g1.abs();
        if s > cx.safe[k] {
            block(k, x, g0, s, mk, cx);
        }
        g0 = g1;
    }
}

/// The slow path of one pair in block k (|g₀| + |g₁| = s > safe[k]): first the
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
    cx.bad[k] = bad;
    if bad == full[k] {
        cx.safe[k] = i64::MAX;
        cx.touch(k);
    }
}
