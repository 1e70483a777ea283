//! Dimension scans for C(t) (sparse.md §4, sparse/log-dimension): the smallest
//! prefix width d of one long seeded S with max_{l≠j} |⟨s_l, s_j⟩_d| ≤ t·d, and the
//! union-bound dimension d_ub = ⌈(2/t²)·ln(n²/δ)⌉ (certified with kernel
//! intervals). Checks of the project's reconstruction of the
//! Likhosherstov–Choromanski–Weller construction (provenance "derived").

use crate::escalate::Ladder;
use crate::kernel::{Interval, SignMatrix};
use crate::sparse::sample::draw_signs;
use rayon::prelude::*;
use rug::{Integer, Rational};

/// Row tiles of the pair scan (the unit of parallel work).
const ROW_TILE: usize = 64;
/// Rows j per inner block (stays in L2).
const COL_TILE: usize = 256;

/// The smallest d ∈ 1..=d_max such that the first d columns of
/// S = `draw_signs(n, d_max, seed)` satisfy C(t): |⟨s_l, s_j⟩_d| ≤ t·d for all
/// l ≠ j; `None` when no d ≤ d_max does. See [`min_dimension_of`].
pub fn min_dimension(n: usize, t: &Rational, seed: u64, d_max: usize) -> Option<usize> {
    min_dimension_of(&draw_signs(n, d_max, seed), t)
}

/// The smallest prefix width d ∈ 1..=s.d() at which C(t) holds for S[:, 0..d]
/// (`None` if none does). Exact: integers only.
///
/// The condition is not monotone in d (a prefix can satisfy it and a longer one
/// fail), so no bisection: every d is decided. Algorithm (one streaming pass
/// over the pairs, memory O(n·d/64 + d), no per-pair state kept):
///
/// * θ_d = ⌊t·d⌋ is precomputed exactly (rug); since G_d(l, j) = ⟨s_l, s_j⟩_d is
///   an integer, |G_d| ≤ t·d ⟺ |G_d| ≤ θ_d. θ is non-decreasing in d (t ≥ 0;
///   for t < 0 every θ_d < 0 and every d fails, as it should).
/// * A bitmap `bad` over d = 1..=d_max (one 64-bit word per block of columns
///   64k+1..=64k+m_k) collects "some pair violates at d". The answer is the
///   smallest d whose bit is clear. The bitmap is an OR over pairs, so it is the
///   same for any schedule; row tiles run in parallel, each with its own bitmap,
///   and the bitmaps are OR-ed.
/// * Per pair, word k is XOR-popcounted: g₀ = G_{64k}, g₁ = G_{64k+m_k} =
///   g₀ + m_k − 2·popcount. Each column changes G by ±1, so for 0 ≤ m ≤ m_k,
///   max(|g₀| − m, |g₁| − (m_k − m)) ≤ |G_{64k+m}| ≤ min(|g₀| + m, |g₁| + m_k − m),
///   hence (|g₀| + |g₁| − m_k)/2 ≤ |G_{64k+m}| ≤ (|g₀| + |g₁| + m_k)/2. With θ
///   non-decreasing: if |g₀| + |g₁| + m_k ≤ 2θ_{64k+1}, the pair violates nowhere
///   in the block (nothing to record); if |g₀| + |g₁| − m_k > 2θ_{64k+m_k}, it
///   violates at every d of the block (set the whole block); otherwise G_d is
///   followed column by column through the word's bits and each violating d is
///   set individually. A block already fully set is skipped (its bits cannot
///   change). Every d's bit is therefore set iff some pair violates at d.
///
/// Layout for SIMD: the rows j are also stored interleaved in groups of
/// [`LANES`] (word k of the group's rows contiguous), so one row l is scanned
/// against [`LANES`] rows j at once, one lane per pair, in straight-line code the
/// compiler vectorises (XOR, popcount, prefix sums, the fast-case test). It is
/// compiled once per instruction set and chosen at run time by `pulp` (AVX-512,
/// AVX2, NEON, or plain scalar code); the crate itself stays free of `unsafe`.
/// Pairs outside full groups (the group holding l itself, the last n mod
/// [`LANES`] rows) go through the one-pair path. The arithmetic is integer, so
/// every instruction set gives the same bitmap (tested against a brute-force
/// scan and against the scalar build).
///
/// Cost: one XOR-popcount per word per pair (like one Gram certification at
/// width d_max), plus exact per-column work only for pairs near the threshold.
pub fn min_dimension_of(s: &SignMatrix, t: &Rational) -> Option<usize> {
    scan(s, t, true)
}

/// [`min_dimension_of`] with the vector unit switched off (the portable scalar
/// build of the same code): for tests and benchmarks that compare the two.
#[doc(hidden)]
pub fn min_dimension_of_scalar(s: &SignMatrix, t: &Rational) -> Option<usize> {
    scan(s, t, false)
}

/// Pairs scanned at once (one row l against this many rows j).
pub const LANES: usize = 32;

fn scan(s: &SignMatrix, t: &Rational, simd: bool) -> Option<usize> {
    let (n, d) = (s.n(), s.d());
    if d == 0 {
        return None;
    }
    if n < 2 {
        return Some(1);
    }
    let thr = thresholds(t, d);
    let w = s.words_per_row();
    let full: Vec<u64> = (0..w)
        .map(|k| {
            let m = (d - 64 * k).min(64);
            if m == 64 {
                !0
            } else {
                (1u64 << m) - 1
            }
        })
        .collect();
    // s ≤ safe[k] ⟺ |g₀| + |g₁| + m_k ≤ 2θ_{64k+1}: the pair is clear of block k.
    let safe: Vec<i64> = (0..w)
        .map(|k| 2 * thr[64 * k + 1] - (d - 64 * k).min(64) as i64)
        .collect();
    let groups = n / LANES;
    let mut inter = vec![0u64; groups * LANES * w];
    for g in 0..groups {
        let block = &mut inter[g * LANES * w..(g + 1) * LANES * w];
        for i in 0..LANES {
            for (k, &x) in s.row(g * LANES + i).iter().enumerate() {
                block[k * LANES + i] = x;
            }
        }
    }
    let tiles: Vec<(usize, usize)> = (0..n)
        .step_by(ROW_TILE)
        .map(|lo| (lo, (lo + ROW_TILE).min(n)))
        .collect();
    let bad = tiles
        .into_par_iter()
        .map(|(lo, hi)| {
            let tile = Tile {
                s,
                inter: &inter,
                lo,
                hi,
                thr: &thr,
                full: &full,
                safe: &safe,
            };
            if simd {
                pulp::Arch::new().dispatch(tile)
            } else {
                pulp::WithSimd::with_simd(tile, pulp::Scalar::new())
            }
        })
        .reduce(
            || vec![0u64; w],
            |mut x, y| {
                x.iter_mut().zip(&y).for_each(|(a, b)| *a |= b);
                x
            },
        );
    (0..w).find_map(|k| (bad[k] != full[k]).then(|| 64 * k + bad[k].trailing_ones() as usize + 1))
}

/// One row tile lo..hi of the pair scan, against every row j > l; returns the
/// tile's bitmap. Its body is compiled per instruction set (see [`scan`]).
struct Tile<'a> {
    s: &'a SignMatrix,
    inter: &'a [u64],
    lo: usize,
    hi: usize,
    thr: &'a [i64],
    full: &'a [u64],
    safe: &'a [i64],
}

impl pulp::WithSimd for Tile<'_> {
    type Output = Vec<u64>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<u64> {
        let Tile {
            s,
            inter,
            lo,
            hi,
            thr,
            full,
            safe,
        } = self;
        let (n, d, w) = (s.n(), s.d(), s.words_per_row());
        let grouped = n / LANES * LANES;
        let mut bad = vec![0u64; w];
        // This tile's copy of `safe`, set to i64::MAX once its block is full.
        let mut safe = safe.to_vec();
        // column tiles end on multiples of COL_TILE (a multiple of LANES), so
        // only the group holding l and the ungrouped tail go pair by pair
        let mut jb = lo + 1;
        while jb < n {
            let je = ((jb / COL_TILE + 1) * COL_TILE).min(n);
            for l in lo..hi.min(je) {
                let a = s.row(l);
                let mut j = jb.max(l + 1);
                // up to the next group boundary (or the ungrouped tail), pair by pair
                let first = j.next_multiple_of(LANES).min(grouped).max(j);
                while j < first.min(je) {
                    pair(a, s.row(j), d, thr, full, &mut safe, &mut bad);
                    j += 1;
                }
                while j + LANES <= je.min(grouped) {
                    let g = j / LANES;
                    let b = &inter[g * LANES * w..(g + 1) * LANES * w];
                    lanes(a, b, d, thr, full, &mut safe, &mut bad);
                    j += LANES;
                }
                while j < je {
                    pair(a, s.row(j), d, thr, full, &mut safe, &mut bad);
                    j += 1;
                }
            }
            jb = je;
        }
        bad
    }
}

/// θ_d = ⌊t·d⌋ for d = 0..=d_max, clamped to [−1, d] (|G_d| ≤ d always).
fn thresholds(t: &Rational, d_max: usize) -> Vec<i64> {
    (0..=d_max)
        .map(|d| {
            let f = Rational::from(t * Integer::from(d)).floor();
            let f = f.numer();
            if *f < -1 {
                -1
            } else if *f > d {
                d as i64
            } else {
                f.to_i64().expect("clamped to [-1, d]")
            }
        })
        .collect()
}

/// Records in `bad` every d at which the pair (a, b) violates C(t) (see
/// [`min_dimension_of`] for the bounds used). `safe[k]` is the largest
/// |g₀| + |g₁| for which block k is clear, or i64::MAX once `bad[k]` is full
/// (nothing left to record there), so the common case is one comparison.
#[inline]
fn pair(
    a: &[u64],
    b: &[u64],
    d: usize,
    thr: &[i64],
    full: &[u64],
    safe: &mut [i64],
    bad: &mut [u64],
) {
    let mut g0 = 0i64;
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let x = x ^ y;
        let base = 64 * k;
        let mk = (d - base).min(64) as i64;
        let g1 = g0 + mk - 2 * i64::from(x.count_ones());
        let s = g0.abs() + g1.abs();
        if s > safe[k] {
            block(k, x, g0, s, mk, thr, full, safe, bad);
        }
        g0 = g1;
    }
}

/// [`pair`] for the [`LANES`] pairs (a, b_i), b the interleaved words of
/// [`LANES`] consecutive rows (word k of row i at k·LANES + i): independent
/// prefix sums per lane, written so the compiler vectorises them, and the slow
/// path only for a lane that leaves the fast case.
#[inline(always)]
fn lanes(
    a: &[u64],
    b: &[u64],
    d: usize,
    thr: &[i64],
    full: &[u64],
    safe: &mut [i64],
    bad: &mut [u64],
) {
    let mut g0 = [0i64; LANES];
    let w = a.len();
    let (safe, bad) = (&mut safe[..w], &mut bad[..w]);
    for (k, (&x, b)) in a.iter().zip(b.chunks_exact(LANES)).enumerate() {
        // every word but the last holds 64 columns
        let mk = if k + 1 < w { 64 } else { (d - 64 * k) as i64 };
        let mut g1 = [0i64; LANES];
        let mut s = [0i64; LANES];
        // |G| ≤ d, so nothing here can overflow: the wrapping forms are the plain
        // operations without debug-build overflow checks, which would stop the
        // loop from vectorising in test builds
        for i in 0..LANES {
            let p = i64::from((x ^ b[i]).count_ones());
            g1[i] = g0[i].wrapping_add(mk).wrapping_sub(p.wrapping_mul(2));
            s[i] = g0[i].wrapping_abs().wrapping_add(g1[i].wrapping_abs());
        }
        let top = s.iter().copied().fold(i64::MIN, i64::max);
        if top > safe[k] {
            for i in 0..LANES {
                if s[i] > safe[k] {
                    block(k, x ^ b[i], g0[i], s[i], mk, thr, full, safe, bad);
                }
            }
        }
        g0 = g1;
    }
}

/// The slow path of one pair in block k (|g₀| + |g₁| = s > safe[k]): the whole
/// block is violated, or the block is refined byte by byte with the same bound
/// (for a sub-block of m_b ≤ 8 columns starting at G = h₀ and ending at h₁:
/// clear if |h₀| + |h₁| + m_b ≤ 2θ at its first column, all violated if
/// |h₀| + |h₁| − m_b > 2θ at its last), and only an undecided byte whose bits are
/// not all set already is followed column by column.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn block(
    k: usize,
    x: u64,
    g0: i64,
    s: i64,
    mk: i64,
    thr: &[i64],
    full: &[u64],
    safe: &mut [i64],
    bad: &mut [u64],
) {
    let base = 64 * k;
    if s - mk > 2 * thr[base + mk as usize] {
        bad[k] = full[k];
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
            if bad[k] & mask == mask || sb + mb as i64 <= 2 * thr[first] {
                // nothing new to record in this byte
            } else if sb - mb as i64 > 2 * thr[last] {
                bad[k] |= mask;
            } else {
                let mut h = g;
                for m in 0..mb {
                    h += 1 - 2 * ((xb >> (c + m)) & 1) as i64;
                    if h.abs() > thr[first + m] {
                        bad[k] |= 1 << (c + m);
                    }
                }
            }
            g = h1;
            c += mb;
        }
    }
    if bad[k] == full[k] {
        safe[k] = i64::MAX;
    }
}

/// The union-bound dimension d_ub = ⌈(2/t²)·ln(n²/δ)⌉ (sparse.md §4; §5 table),
/// certified: the value is enclosed by kernel intervals and the ceiling is read
/// off only when both endpoints have the same ceiling; otherwise the precision
/// is doubled (from 128 bits, at most 8 times: `crate::escalate`). If n²/δ = 1 the
/// value is exactly 0; else ln(n²/δ) is transcendental (Lindemann), so
/// (2/t²)·ln(n²/δ) is not an integer and the enclosure separates it from every
/// integer at some finite precision. `None` for t ≤ 0 or δ ≤ 0, when the ladder
/// runs out, or when d_ub does not fit in a u64 (a tiny t): never a panic.
pub fn union_bound_dimension(n: u64, t: &Rational, delta: &Rational) -> Option<u64> {
    if *t <= 0 || *delta <= 0 {
        return None;
    }
    let r = Rational::from(Integer::from(n) * Integer::from(n)) / delta;
    if r == 1 {
        return Some(0);
    }
    let c = Rational::from(2) / Rational::from(t * t);
    // the ceiling of the enclosure, once both endpoints agree on it
    let ceiling = |prec: u32| {
        let v = &Interval::from_rational(prec, &c) * &Interval::from_rational(prec, &r).ln();
        let (lo, hi) = (v.lo().clone().ceil(), v.hi().clone().ceil());
        (lo == hi && lo.is_finite())
            .then(|| lo.to_integer())
            .flatten()
    };
    let (z, _) =
        crate::escalate::escalate(Ladder::new(128, 8), ceiling, Option::is_some).settled()?;
    let z = z?;
    if z < 0 {
        Some(0)
    } else {
        z.to_u64()
    }
}
