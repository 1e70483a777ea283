//! Certified softmax of a row in the f64 tier (issue #41): the formula of
//! [`softmax`](crate::softmax) on binary64 numbers rounded outward, one correctly
//! rounded exp per distinct endpoint, a summation bound proven a priori instead of a
//! step outward per addition, all of rayon's threads, outputs into caller-owned
//! slices. When it cannot give what the caller asks (the widest relative width
//! `max_rel_width`) or the input is outside its range, it returns `None` and the
//! caller takes the MPFR tier ([`softmax_into`](crate::softmax_into) or the
//! application's `softmax_fast`).
//!
//! # Rounding
//!
//! The one argument of [`f64iv`](crate::f64iv): an IEEE 754 operation in
//! round-to-nearest returns one of the two binary64 numbers around the exact result
//! (the result itself when representable), so `down(RN(y)) = next_down(RN(y)) ≤ y` and
//! `up(RN(y)) = next_up(RN(y)) ≥ y`, at any magnitude, among subnormals and across 0.
//! Every inexact lower bound below is `down(·)` of one IEEE operation whose exact
//! operands are lower bounds of increasing arguments (or upper bounds of decreasing
//! ones), every upper bound `up(·)` likewise. exp is CORE-MATH's `cr_exp`, correctly
//! rounded, so `down`/`up` of it enclose e^t (f64iv's "exp and ln" section).
//!
//! # The formula (proof sketch)
//!
//! Input: a row of closed intervals `[lo_j, hi_j]` with finite binary64 ends,
//! `lo_j ≤ hi_j`, `|lo_j|, |hi_j| ≤ 2^1000` (else `None`). The shift `M = max_j hi_j` is
//! exact (a maximum of binary64 numbers is one of them). p_i is shift invariant:
//! `p_i = a/(a + R)` with `a = e^{z_i − M}` and `R = Σ_{j≠i} e^{z_j − M}`, increasing in
//! a and decreasing in R, so (the kernel's `softmax` argument)
//!
//! `a⁻/(a⁻ + R⁺) ≤ p_i ≤ a⁺/(a⁺ + R⁻)` for any `a⁻ ≤ e^{lo_i−M}`, `a⁺ ≥ e^{hi_i−M}`,
//! `R⁺ ≥ Σ_{j≠i} e^{hi_j−M}`, `0 ≤ R⁻ ≤ Σ_{j≠i} e^{lo_j−M}`,
//!
//! with `R⁺ = up(S⁺ − b⁻)`, `R⁻ = max(0, down(S⁻ − c⁺))` from the row sums
//! `S⁻ ≤ Σ_j e^{lo_j−M} ≤ … ≤ Σ_j e^{hi_j−M} ≤ S⁺` and `b⁻ ≤ e^{hi_i−M}`,
//! `c⁺ ≥ e^{lo_i−M}`. The lower end is `down(a⁻ / up(a⁻ + R⁺))` (0 when a⁻ = 0, and
//! never below 0), the upper end `up(a⁺ / down(a⁺ + R⁻))` capped at 1 (1 when the
//! denominator rounds to 0).
//!
//! **A point entry** `z_i` (lo_i = hi_i) has one `a = e^{z_i − M} ∈ [L, U]`, and
//! `p_i = a/S` with `S = Σ_j e^{z_j − M} ∈ [S⁻, S⁺]`: the quotient has no dependency
//! to undo (a⁻/(a⁻ + R⁺) above is `L/S⁺` up to rounding), so
//! `p_i ∈ [max(0, down(L·inv⁻)), min(1, up(U·inv⁺))]` with `inv⁻ = max(0, down(1/S⁺))`
//! and `inv⁺ = up(1/S⁻)` computed once per row (non-negative lower (upper) bounds
//! multiply to a lower (upper) bound; `S⁺ ≥ 1` since the maximal entry's U is, and
//! `S⁻ = 0` gives `inv⁺ = +∞` and the upper end 1, as `U > 0`). No division per entry.
//!
//! **The exponentials.** For an end x, `t = x − M ≤ 0` is computed as `r = RN(x − M)`
//! with its exact error `err = t − r` by Knuth's TwoSum (six IEEE operations, exact in
//! round-to-nearest when nothing overflows: `|x|, |M| ≤ 2^1000` ensure that). With
//! `E = cr_exp(r) = RN(e^r)`:
//! - `r < −1000`: then `|err| ≤ ½ ulp(r) ≤ 2^-53 |r|` gives `t < −999` and
//!   `0 < e^t < 2^-1074`: the bounds are `[0, 2^-1074]` (`cr_exp` returns 0 there, and
//!   this is its one-step enclosure clamped at 0). A lower end 0 is the only sound
//!   binary64 lower end of a value below the smallest subnormal.
//! - `err = 0` (the subtraction was exact, e.g. any dyadic row of moderate range):
//!   `[max(0, down(E)), up(E)]`.
//! - otherwise `|r| ≤ 1000 < 2^10`, so `|err| ≤ ½ ulp(r) ≤ 2^-44`, and
//!   `e^t = e^r · e^err` with `1 + err ≤ e^err ≤ 1 + err + err²` (convexity; the tail
//!   `Σ_{k≥2} |err|^k/k! ≤ err²(e − 2)` for `|err| ≤ 1`). With `f⁻ = down(1 + err) ≥ 0`
//!   and `f⁺ = up(up(1 + err) + up(err·err))`, the bounds are
//!   `[max(0, down(max(0, down(E))·f⁻)), up(up(E)·f⁺)]`: products of non-negative lower
//!   (upper) bounds bound the product.
//!
//! Pass 1 stores, in the output slices (no scratch allocation), `[L, U]` for a point
//! and `E` for each end of an interval entry; the sums (pass 2) and the outputs (pass 3)
//! recompute an interval's cheap TwoSums and turn its stored E into the same bounds.
//!
//! **The sums: an a-priori bound.** `Ŝ⁻ = fl(Σ_j a⁻_j)` and `Ŝ⁺ = fl(Σ_j a⁺_j)` are summed
//! in round-to-nearest without any step outward, in one fixed tree (below). Each IEEE
//! addition returns `(x + y)(1 + δ)` with `|δ| ≤ u = 2^-53` (no overflow: every term is at
//! most `up(1)` and there are fewer than 2^60; a sum in the subnormal range is exact).
//! Unrolling, `Ŝ = Σ_j x_j Π_{k ∈ path(j)} (1 + δ_k)`, the product over the additions on
//! the path from term j to the root, at most h of them. Every term is `≥ 0`, so
//! `(1 − u)^h Σx ≤ Ŝ ≤ (1 + u)^h Σx`, and by Bernoulli's inequality (`h·u < 1`)
//!
//! `Ŝ (1 − h·u) ≤ Ŝ (1 + u)^{−h} ≤ Σx ≤ Ŝ (1 − u)^{−h} ≤ Ŝ / (1 − h·u) = Ŝ (1 + γ_h)`,
//!
//! with `γ_h = h·u/(1 − h·u)` (Higham's γ; Rump's and INTLAB's a-priori bound
//! `|fl(Σ) − Σ| ≤ γ_{n−1} Σ|x_j|`, here with the tree's depth for n − 1). Computed
//! outward: `h·u` is exact (an integer below 2^53 times a power of two),
//! `g = up(h·u / down(1 − h·u)) ≥ γ_h`, `S⁻ = max(0, down(Ŝ⁻ − up(h·u·Ŝ⁻)))` and
//! `S⁺ = up(Ŝ⁺ + up(g·Ŝ⁺))`.
//!
//! **The tree and its depth.** `tree_sums` splits a range of `n > 8` terms at
//! `8·⌈b/2⌉` where `b = ⌈n/8⌉` (so the left part has `⌈b/2⌉` blocks of 8, the right
//! `⌊b/2⌋`), sums both halves (on two threads above [`PAR_MIN`] terms: `rayon::join`
//! changes who computes a half, never the tree) and adds the two; a range of `n ≤ 8`
//! terms is summed left to right from 0 (at most 8 additions on any path). By
//! induction the depth is at most `h(n) = 8 + ⌈log₂ ⌈n/8⌉⌉`: for `b ≥ 2` blocks with
//! `k = ⌈log₂ b⌉`, `2^{k−1} < b ≤ 2^k` gives `⌈b/2⌉ ≤ 2^{k−1}`, so both halves have
//! depth at most `8 + (k − 1)` and the root adds one. At n = 65,536, h = 21 and the
//! sums are within a relative 2.4·10⁻¹⁵ (`γ_21`): the output widths are dominated by it
//! (2^-46.9 on the anchors' row, bench/anchors/RESULTS.md). Test:
//! `softmax64::tests::sum_tree_depth_is_within_the_bound`.
//!
//! **Determinism.** The maximum, the sums' tree and each output depend on the row only:
//! the results are bit-identical for any number of threads (test
//! `softmax64_is_the_same_on_any_number_of_threads`).
//!
//! **Escalation.** `None` when the row is empty, an end is NaN, infinite or beyond
//! 2^1000 in magnitude, `lo > hi`, or the widest relative width `(hi − lo)/lo` of an
//! output exceeds `max_rel_width` (an output with lower end 0 has width +∞: only
//! `max_rel_width = +∞` accepts it). The width is computed in round-to-nearest: it
//! decides only whether to escalate, never what is enclosed.
//!
//! **Tests.** Each formula's rounding on its own, against exact rationals and 300-bit
//! MPFR (unit tests `exp_bounds_enclose_the_exact_exponential`,
//! `point_output_is_outward`, `reciprocals_are_outward`, `output_is_outward`,
//! `sum_bounds_are_outward`, `a_priori_g_is_gamma_h_rounded_up`); the whole row against the 512-bit MPFR `softmax_into`,
//! the refusals, the caller's width, thread counts and the sum bound's edges in the
//! conformance suite (`softmax64`).

use crate::{F64Iv, Interval};
use rayon::prelude::*;

/// Rows shorter than this are summed on one thread (the tree is the same).
pub const PAR_MIN: usize = 4096;

/// Terms summed left to right at the leaves of the summation tree.
const LEAF: usize = 8;

/// Entries per parallel piece of the validation, the exponentials and the outputs.
const CHUNK: usize = 2048;

/// The largest |end| accepted: the difference of two such numbers never overflows,
/// so TwoSum is exact.
const MAX_ABS: f64 = f64::from_bits((1023 + 1000) << 52);

/// `r = RN(x − m)` and its exact error `err = (x − m) − r` (Knuth's TwoSum).
#[inline(always)]
fn two_diff(x: f64, m: f64) -> (f64, f64) {
    let b = -m;
    let r = x + b;
    let bv = r - x;
    let av = r - bv;
    (r, (x - av) + (b - bv))
}

/// `[L, U] ∋ e^{x − M}` from `E = cr_exp(r)`, `(r, err) = two_diff(x, M)`: the
/// module's three cases.
#[inline(always)]
fn exp_bounds(e: f64, r: f64, err: f64) -> (f64, f64) {
    if r < -1000.0 {
        (0.0, f64::from_bits(1))
    } else if err == 0.0 {
        (e.next_down().max(0.0), e.next_up())
    } else {
        let f_lo = (1.0 + err).next_down();
        let f_hi = ((1.0 + err).next_up() + (err * err).next_up()).next_up();
        let lo = (e.next_down().max(0.0) * f_lo).next_down().max(0.0);
        (lo, (e.next_up() * f_hi).next_up())
    }
}

/// The bounds of `e^{x − M}` for an end x whose `cr_exp(RN(x − M))` is `e`.
#[inline(always)]
fn end_bounds(x: f64, m: f64, e: f64) -> (f64, f64) {
    let (r, err) = two_diff(x, m);
    exp_bounds(e, r, err)
}

/// `cr_exp(RN(x − M))`, the value pass 1 stores for an end.
fn shifted_exp(x: f64, m: f64) -> f64 {
    core_math::exp(x - m)
}

/// The depth bound `h(n) = 8 + ⌈log₂ ⌈n/8⌉⌉` of `tree_sums`'s tree (module doc).
pub fn sum_tree_depth(n: usize) -> u32 {
    let blocks = n.div_ceil(LEAF).max(1);
    LEAF as u32 + blocks.next_power_of_two().trailing_zeros()
}

/// Where `tree_sums` splits a range of `n > 8` terms: after `⌈b/2⌉` blocks of 8.
pub fn sum_tree_split(n: usize) -> usize {
    n.div_ceil(LEAF).div_ceil(2) * LEAF
}

/// Terms of a sum, split the way the summation tree splits them.
trait Terms: Send + Sized {
    fn len(&self) -> usize;
    fn split_at(self, mid: usize) -> (Self, Self);
    /// The pair of terms at index j (each `≥ 0`).
    fn term(&self, j: usize) -> (f64, f64);
}

/// `(Ŝ⁻, Ŝ⁺)`: the round-to-nearest sums of both terms in the fixed tree of the module
/// doc (split at [`sum_tree_split`], leaves of at most 8 terms summed left to right
/// from 0, halves of at least [`PAR_MIN`] terms on two threads).
fn tree_sums<T: Terms>(t: T) -> (f64, f64) {
    let n = t.len();
    if n <= LEAF {
        let (mut s0, mut s1) = (0.0, 0.0);
        for j in 0..n {
            let (x, y) = t.term(j);
            s0 += x;
            s1 += y;
        }
        return (s0, s1);
    }
    let (l, r) = t.split_at(sum_tree_split(n));
    let ((a0, a1), (b0, b1)) = if n >= PAR_MIN {
        rayon::join(|| tree_sums(l), || tree_sums(r))
    } else {
        (tree_sums(l), tree_sums(r))
    };
    (a0 + b0, a1 + b1)
}

/// Pass 1, each entry on its own: stores, for a point, its bounds `[L, U] ∋ e^{z_j − M}`
/// in `e_lo[j]`, `e_hi[j]`, and for an interval entry `cr_exp(RN(lo_j − M))` and
/// `cr_exp(RN(hi_j − M))`.
fn exps(lo: &[f64], hi: &[f64], m: f64, e_lo: &mut [f64], e_hi: &mut [f64]) {
    e_lo.par_chunks_mut(CHUNK)
        .zip(e_hi.par_chunks_mut(CHUNK))
        .zip(lo.par_chunks(CHUNK).zip(hi.par_chunks(CHUNK)))
        .for_each(|((el, eh), (l, h))| {
            for j in 0..l.len() {
                let e = shifted_exp(l[j], m);
                if h[j] == l[j] {
                    (el[j], eh[j]) = end_bounds(l[j], m, e);
                } else {
                    (el[j], eh[j]) = (e, shifted_exp(h[j], m));
                }
            }
        });
}

/// Pass 2's terms `a⁻_j`, `a⁺_j`, from what pass 1 stored.
#[derive(Clone, Copy)]
struct Stored<'a> {
    lo: &'a [f64],
    hi: &'a [f64],
    m: f64,
    e_lo: &'a [f64],
    e_hi: &'a [f64],
}

impl Terms for Stored<'_> {
    fn len(&self) -> usize {
        self.lo.len()
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (lo_l, lo_r) = self.lo.split_at(mid);
        let (hi_l, hi_r) = self.hi.split_at(mid);
        let (el_l, el_r) = self.e_lo.split_at(mid);
        let (eh_l, eh_r) = self.e_hi.split_at(mid);
        let m = self.m;
        (
            Stored {
                lo: lo_l,
                hi: hi_l,
                m,
                e_lo: el_l,
                e_hi: eh_l,
            },
            Stored {
                lo: lo_r,
                hi: hi_r,
                m,
                e_lo: el_r,
                e_hi: eh_r,
            },
        )
    }

    #[inline(always)]
    fn term(&self, j: usize) -> (f64, f64) {
        let (l, h) = (self.lo[j], self.hi[j]);
        if h == l {
            (self.e_lo[j], self.e_hi[j])
        } else {
            (
                end_bounds(l, self.m, self.e_lo[j]).0,
                end_bounds(h, self.m, self.e_hi[j]).1,
            )
        }
    }
}

/// A plain slice's terms (the same term twice).
struct Plain<'a>(&'a [f64]);

impl Terms for Plain<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (l, r) = self.0.split_at(mid);
        (Plain(l), Plain(r))
    }

    fn term(&self, j: usize) -> (f64, f64) {
        (self.0[j], self.0[j])
    }
}

/// A certified enclosure `[S⁻, S⁺]` of the exact sum of non-negative binary64 terms,
/// summed in round-to-nearest in [`softmax_f64_into`]'s tree and widened by the
/// a-priori bound of the module doc. `None` when a term is negative, NaN or +∞, or
/// the rounded sum overflows (for non-negative terms every partial sum is at most the
/// root, so a finite root means no addition overflowed). `[0, 0]` for no terms.
///
/// ```
/// let (lo, hi) = attncheck_kernel::softmax64::sum_nonneg(&[0.1; 10]).unwrap();
/// assert!(lo < 1.0 && 1.0 < hi && hi - lo < 1e-14);
/// ```
pub fn sum_nonneg(x: &[f64]) -> Option<(f64, f64)> {
    if !x.iter().all(|&t| (0.0..f64::INFINITY).contains(&t)) {
        return None;
    }
    if x.is_empty() {
        return Some((0.0, 0.0));
    }
    let (s, _) = tree_sums(Plain(x));
    s.is_finite().then(|| sum_bounds(x.len(), s, s))
}

/// `S⁻ ≤ Σ x_j` and `S⁺ ≥ Σ y_j` from the round-to-nearest sums `Ŝ⁻`, `Ŝ⁺` of n ≥ 1
/// non-negative terms in [`tree_sums`]'s tree (the module's a-priori bound).
fn sum_bounds(n: usize, s_lo: f64, s_hi: f64) -> (f64, f64) {
    let (hu, g) = a_priori(sum_tree_depth(n));
    let lo = (s_lo - (hu * s_lo).next_up()).next_down().max(0.0);
    let hi = (s_hi + (g * s_hi).next_up()).next_up();
    (lo, hi)
}

/// `(h·u, g)` of the module's a-priori bound for a tree of depth h: `h·u` exact (an
/// integer below 2^53 times u = 2^-53) and `g = up(h·u / down(1 − h·u)) ≥ γ_h =
/// h·u/(1 − h·u)` (test `a_priori_g_is_gamma_h_rounded_up`).
fn a_priori(h: u32) -> (f64, f64) {
    let hu = f64::from(h) * f64::EPSILON / 2.0;
    (hu, (hu / (1.0 - hu).next_down()).next_up())
}

/// One output `[p⁻, p⁺]` from the entry's exponential bounds and the row sums.
fn output(
    (a_lo, c_hi): (f64, f64),
    (b_lo, a_hi): (f64, f64),
    (s_lo, s_hi): (f64, f64),
) -> (f64, f64) {
    // lower: a⁻ / (a⁻ + R⁺), R⁺ = up(S⁺ − b⁻) ≥ Σ_{j≠i} e^{hi_j−M} ≥ 0
    let p_lo = if a_lo == 0.0 {
        0.0
    } else {
        let r = (s_hi - b_lo).next_up();
        (a_lo / (a_lo + r).next_up()).next_down().max(0.0)
    };
    // upper: a⁺ / (a⁺ + R⁻), R⁻ = max(0, down(S⁻ − c⁺))
    let r = (s_lo - c_hi).next_down().max(0.0);
    let den = (a_hi + r).next_down();
    let p_hi = if den > 0.0 {
        (a_hi / den).next_up().min(1.0)
    } else {
        1.0
    };
    (p_lo, p_hi)
}

/// `inv⁻ = max(0, down(1/S⁺)) ≤ 1/S⁺` and `inv⁺ = up(1/S⁻) ≥ 1/S⁻` (S⁺ ≥ 1: the
/// maximal entry's U is; `S⁻ = 0` gives `+∞`, and then every point's upper end 1).
fn reciprocals((s_lo, s_hi): (f64, f64)) -> (f64, f64) {
    ((1.0 / s_hi).next_down().max(0.0), (1.0 / s_lo).next_up())
}

/// One point's output `[p⁻, p⁺]` from its bounds `[L, U]` and the reciprocals
/// `inv⁻ ≤ 1/S⁺`, `inv⁺ ≥ 1/S⁻` (module doc: no division per entry).
#[inline(always)]
fn point_output((l, u): (f64, f64), (inv_lo, inv_hi): (f64, f64)) -> (f64, f64) {
    (
        (l * inv_lo).next_down().max(0.0),
        (u * inv_hi).next_up().min(1.0),
    )
}

/// The widest relative width `(hi − lo)/lo` of a piece of outputs (+∞ when a lower end
/// is 0), in round-to-nearest: it decides escalation only. An entry replaces the widest
/// so far, w, when `hi − lo > w·lo` (then w becomes its quotient): a division only for
/// a new widest entry, exact up to the rounding of `w·lo`. Depends on the piece only
/// (so on no thread count).
fn widest(lo: &[f64], hi: &[f64]) -> f64 {
    let mut w = 0.0;
    for (&l, &h) in lo.iter().zip(hi) {
        if l <= 0.0 {
            return f64::INFINITY;
        }
        let d = h - l;
        if d > w * l {
            w = d / l;
        }
    }
    w
}

/// Whether the row is in the tier's range, and its exact shift `M = max hi_j`.
fn shift(lo: &[f64], hi: &[f64]) -> Option<f64> {
    lo.par_chunks(CHUNK)
        .zip(hi.par_chunks(CHUNK))
        .map(|(l, h)| {
            let (mut bad, mut lo_min, mut hi_max) = (false, f64::INFINITY, f64::NEG_INFINITY);
            for (&a, &b) in l.iter().zip(h) {
                // a NaN on either side, or a reversed interval
                bad |= a.is_nan() | b.is_nan() | (a > b);
                lo_min = lo_min.min(a);
                hi_max = hi_max.max(b);
            }
            // with every lo ≤ hi, the extremes bound all ends (and catch ±∞)
            (!bad && -MAX_ABS <= lo_min && hi_max <= MAX_ABS).then_some(hi_max)
        })
        .reduce(|| Some(f64::NEG_INFINITY), |a, b| Some(a?.max(b?)))
}

/// Certified softmax of the row `[lo_j, hi_j]` in the f64 tier, into `out_lo` and
/// `out_hi`: each `[out_lo[i], out_hi[i]]` contains `e^{z_i}/Σ_j e^{z_j}` for every
/// choice of reals `z_j ∈ [lo_j, hi_j]` (proof in the [module doc](self)).
///
/// Returns the widest relative width `(hi − lo)/lo` of an output, or `None` (the
/// outputs are then unspecified; take the MPFR tier) when the row is empty, an end is
/// not finite or exceeds 2^1000 in magnitude, `lo_j > hi_j`, or the widest width
/// exceeds `max_rel_width`. Bit-identical results for any number of threads.
///
/// # Panics
/// When the four slices do not have one length.
///
/// ```
/// use attncheck_kernel::softmax_f64_into;
/// let z = [0.0, 1.0, -2.0];
/// let (mut lo, mut hi) = ([0.0; 3], [0.0; 3]);
/// let w = softmax_f64_into(&z, &z, 1e-12, &mut lo, &mut hi).unwrap();
/// assert!(w <= 1e-12 && lo[1] <= hi[1] && hi[1] < 0.71 && lo[1] > 0.70);
/// assert_eq!(softmax_f64_into(&[f64::NAN], &[0.0], 1.0, &mut lo[..1], &mut hi[..1]), None);
/// ```
pub fn softmax_f64_into(
    lo: &[f64],
    hi: &[f64],
    max_rel_width: f64,
    out_lo: &mut [f64],
    out_hi: &mut [f64],
) -> Option<f64> {
    let n = lo.len();
    assert!(
        hi.len() == n && out_lo.len() == n && out_hi.len() == n,
        "softmax_f64_into: length mismatch"
    );
    if n == 0 {
        return None;
    }
    // one hand-over to the pool for the four passes (called from outside it, each
    // pass would wake the workers anew)
    rayon::scope(|_| {
        let m = shift(lo, hi)?;
        exps(lo, hi, m, out_lo, out_hi);
        let (s_lo, s_hi) = tree_sums(Stored {
            lo,
            hi,
            m,
            e_lo: out_lo,
            e_hi: out_hi,
        });
        let sums = sum_bounds(n, s_lo, s_hi);
        let inv = reciprocals(sums);
        let widest = out_lo
            .par_chunks_mut(CHUNK)
            .zip(out_hi.par_chunks_mut(CHUNK))
            .zip(lo.par_chunks(CHUNK).zip(hi.par_chunks(CHUNK)))
            .map(|((ol, oh), (l, h))| {
                for j in 0..l.len() {
                    let (p_lo, p_hi) = if h[j] == l[j] {
                        point_output((ol[j], oh[j]), inv)
                    } else {
                        let a = end_bounds(l[j], m, ol[j]);
                        let b = end_bounds(h[j], m, oh[j]);
                        output(a, b, sums)
                    };
                    ol[j] = p_lo;
                    oh[j] = p_hi;
                }
                widest(ol, oh)
            })
            .reduce(|| 0.0, f64::max);
        (widest <= max_rel_width).then_some(widest)
    })
}

/// [`softmax_f64_into`] of a row of MPFR enclosures, each converted outward to binary64
/// once ([`F64Iv::from_interval`]); `None` as there (escalate to
/// [`softmax_into`](crate::softmax_into)).
pub fn softmax_f64(z: &[Interval], max_rel_width: f64) -> Option<Vec<F64Iv>> {
    let (lo, hi): (Vec<f64>, Vec<f64>) = z
        .iter()
        .map(|x| F64Iv::from_interval(x).bounds())
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .unzip();
    let (mut out_lo, mut out_hi) = (vec![0.0; z.len()], vec![0.0; z.len()]);
    softmax_f64_into(&lo, &hi, max_rel_width, &mut out_lo, &mut out_hi)?;
    Some(
        out_lo
            .into_iter()
            .zip(out_hi)
            .map(|(l, h)| F64Iv::new(l, h))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The depth of the tree tree_sums builds, counted by the same recursion.
    fn depth(n: usize) -> u32 {
        if n <= LEAF {
            n as u32
        } else {
            let mid = sum_tree_split(n);
            1 + depth(mid).max(depth(n - mid))
        }
    }

    #[test]
    fn sum_tree_depth_is_within_the_bound() {
        for n in (1..5000).chain([65_535, 65_536, 65_537, 1 << 20, (1 << 20) + 9]) {
            assert!(depth(n) <= sum_tree_depth(n), "n = {n}");
        }
        assert_eq!(sum_tree_depth(65_536), 21);
        assert_eq!(sum_tree_depth(1), 8);
    }

    use proptest::prelude::*;
    use rug::float::Round;
    use rug::{Float, Rational};

    fn q(x: f64) -> Rational {
        Rational::from_f64(x).expect("finite")
    }

    /// `[RD, RU]` of `e^t` at 300 bits for an exact rational t.
    fn exp_ref(t: &Rational) -> (Float, Float) {
        let mut d = Float::with_val_round(300, t, Round::Down).0;
        let mut u = Float::with_val_round(300, t, Round::Up).0;
        d.exp_round(Round::Down);
        u.exp_round(Round::Up);
        (d, u)
    }

    /// Reals in [0, 1] at every scale, and 0 and 1 themselves.
    fn unit() -> impl Strategy<Value = f64> {
        prop_oneof![
            3 => 0.0f64..=1.0,
            2 => (0.5f64..1.0, -1074i32..0).prop_map(|(m, e)| m * 2f64.powi(e)),
            1 => prop_oneof![Just(0.0), Just(1.0), Just(f64::from_bits(1))],
        ]
    }

    /// Differences x − M at every scale: exact and inexact, beyond −1000 too.
    fn end_and_shift() -> impl Strategy<Value = (f64, f64)> {
        let any = prop_oneof![
            3 => -60.0f64..60.0,
            1 => -2000.0f64..2000.0,
            1 => (-(1i64 << 30)..(1i64 << 30)).prop_map(|k| k as f64 / 65536.0),
            1 => -1e300f64..1e300,
        ];
        (any.clone(), any).prop_map(|(a, b)| (a.min(b), a.max(b)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Each case of exp_bounds encloses e^{x − M} (exact difference, 300-bit exp).
        #[test]
        fn exp_bounds_enclose_the_exact_exponential((x, m) in end_and_shift()) {
            let (r, err) = two_diff(x, m);
            prop_assert_eq!(q(r) + q(err), q(x) - q(m));
            let (lo, hi) = end_bounds(x, m, shifted_exp(x, m));
            let (d, u) = exp_ref(&(q(x) - q(m)));
            prop_assert!(0.0 <= lo && lo <= d && u <= hi, "x = {x:e}, M = {m:e}: [{lo:e}, {hi:e}]");
        }

        /// The point output is outward: `p⁻ ≤ L·inv⁻` and `p⁺ ≥ min(1, U·inv⁺)` exactly.
        #[test]
        fn point_output_is_outward(l in unit(), u in unit(), a in unit(), b in 0.5f64..4.0) {
            let (p_lo, p_hi) = point_output((l, u), (a, b));
            prop_assert!(0.0 <= p_lo && q(p_lo) <= q(l) * q(a));
            prop_assert!(p_hi <= 1.0 && (p_hi == 1.0 || q(p_hi) >= q(u) * q(b)));
        }

        /// The reciprocals are outward.
        #[test]
        fn reciprocals_are_outward(s_lo in 0.0f64..1e5, s_hi in 1.0f64..1e5) {
            let (a, b) = reciprocals((s_lo, s_hi));
            prop_assert!(0.0 <= a && q(a) * q(s_hi) <= 1);
            prop_assert!(s_lo == 0.0 && b == f64::INFINITY || q(b) * q(s_lo) >= 1);
        }

        /// The dependency-aware output is outward: `p⁻ ≤ a⁻/(a⁻ + S⁺ − b⁻)` and
        /// `p⁺ ≥ min(1, a⁺/(a⁺ + max(0, S⁻ − c⁺)))` exactly, for ends as the row gives them
        /// (a⁻ ≤ c⁺, b⁻ ≤ a⁺, b⁻ ≤ S⁺).
        #[test]
        fn output_is_outward(
            a_lo in unit(), c_hi in unit(), b_lo in unit(), a_hi in unit(),
            s_lo in 0.0f64..1e4, extra in 0.0f64..1e4,
        ) {
            let (a_lo, c_hi) = (a_lo.min(c_hi), a_lo.max(c_hi));
            let (b_lo, a_hi) = (b_lo.min(a_hi), b_lo.max(a_hi));
            let s_hi = b_lo + extra + 1.0;
            let (p_lo, p_hi) = output((a_lo, c_hi), (b_lo, a_hi), (s_lo, s_hi));
            prop_assert!(0.0 <= p_lo && p_hi <= 1.0);
            if a_lo > 0.0 {
                prop_assert!(q(p_lo) * (q(a_lo) + q(s_hi) - q(b_lo)) <= q(a_lo));
            } else {
                prop_assert_eq!(p_lo, 0.0);
            }
            let r = (q(s_lo) - q(c_hi)).max(Rational::new());
            prop_assert!(p_hi == 1.0 || q(p_hi) * (q(a_hi) + r) >= q(a_hi));
        }

        /// The a-priori sum bound is outward: `S⁻ ≤ Ŝ(1 − h·u)` and `S⁺ ≥ Ŝ/(1 − h·u)`.
        #[test]
        fn sum_bounds_are_outward(n in 1usize..(1 << 40), s in 0.0f64..1e12) {
            let (lo, hi) = sum_bounds(n, s, s);
            let hu = Rational::from((sum_tree_depth(n), 1u64 << 53));
            prop_assert!(0.0 <= lo && q(lo) <= q(s) * (1 - hu.clone()));
            prop_assert!(q(hi) * (1 - hu) >= q(s));
        }
    }

    /// g is γ_h rounded up, neither below it (the bound's soundness: a g below γ_h by
    /// about (h·u)², as a slip in its formula gives, survived `sum_bounds_are_outward`,
    /// whose two steps outward absorb it) nor more than a few ulps above it.
    #[test]
    fn a_priori_g_is_gamma_h_rounded_up() {
        for h in (1u32..=4096).chain([1 << 20, 1 << 31, u32::MAX]) {
            let (hu, g) = a_priori(h);
            let exact = Rational::from((h, 1u64 << 53));
            assert_eq!(q(hu), exact, "h = {h}");
            let gamma = exact.clone() / (1 - exact);
            assert!(q(g) >= gamma, "h = {h}: g = {g:e} below γ_h");
            let ulp = Rational::from_f64(g - g.next_down()).expect("finite");
            assert!(q(g) <= gamma + 4 * ulp, "h = {h}: g = {g:e} loose");
        }
    }

    #[test]
    fn two_diff_is_exact() {
        let (r, e) = two_diff(0.1, 3.7);
        assert!(e != 0.0 && r < 0.0);
        assert_eq!(two_diff(-1.5, 2.25), (-3.75, 0.0));
    }
}
