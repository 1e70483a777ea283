//! Dimension scans for C(t) (sparse.md §4, sparse/log-dimension): the smallest
//! prefix width d of one long seeded S with max_{l≠j} |⟨s_l, s_j⟩_d| ≤ t·d, and the
//! union-bound dimension d_ub = ⌈(2/t²)·ln(n²/δ)⌉ (certified with kernel
//! intervals). Checks of the project's reconstruction of the
//! Likhosherstov–Choromanski–Weller construction (provenance "derived").

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
/// Cost: one XOR-popcount per word per pair (like one Gram certification at
/// width d_max), plus exact per-column work only for pairs near the threshold.
pub fn min_dimension_of(s: &SignMatrix, t: &Rational) -> Option<usize> {
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
    let tiles: Vec<(usize, usize)> = (0..n)
        .step_by(ROW_TILE)
        .map(|lo| (lo, (lo + ROW_TILE).min(n)))
        .collect();
    // s ≤ safe[k] ⟺ |g₀| + |g₁| + m_k ≤ 2θ_{64k+1}: the pair is clear of block k.
    let safe: Vec<i64> = (0..w)
        .map(|k| 2 * thr[64 * k + 1] - (d - 64 * k).min(64) as i64)
        .collect();
    let bad = tiles
        .into_par_iter()
        .map(|(lo, hi)| {
            let mut bad = vec![0u64; w];
            // This tile's copy of `safe`, set to i64::MAX once its block is full.
            let mut safe = safe.clone();
            let mut jb = lo + 1;
            while jb < n {
                let je = (jb + COL_TILE).min(n);
                for l in lo..hi.min(je) {
                    let a = s.row(l);
                    let mut j = jb.max(l + 1);
                    while j + 4 <= je {
                        let b = &s.words()[j * w..(j + 4) * w];
                        pair4(a, b, d, &thr, &full, &mut safe, &mut bad);
                        j += 4;
                    }
                    for j in j..je {
                        pair(a, s.row(j), d, &thr, &full, &mut safe, &mut bad);
                    }
                }
                jb = je;
            }
            bad
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

/// [`pair`] for the four pairs (a, b_i), b_0..b_3 consecutive rows packed in `b`:
/// four independent prefix sums per word (instruction-level parallelism), and
/// the slow path only when one of the four leaves the fast case.
#[inline]
fn pair4(
    a: &[u64],
    b: &[u64],
    d: usize,
    thr: &[i64],
    full: &[u64],
    safe: &mut [i64],
    bad: &mut [u64],
) {
    let w = a.len();
    let (b0, r) = b.split_at(w);
    let (b1, r) = r.split_at(w);
    let (b2, b3) = r.split_at(w);
    let b3 = &b3[..w];
    let mut g0 = [0i64; 4];
    for (k, &x) in a.iter().enumerate() {
        let xs = [x ^ b0[k], x ^ b1[k], x ^ b2[k], x ^ b3[k]];
        let mk = (d - 64 * k).min(64) as i64;
        let mut g1 = [0i64; 4];
        let mut s = [0i64; 4];
        for i in 0..4 {
            g1[i] = g0[i] + mk - 2 * i64::from(xs[i].count_ones());
            s[i] = g0[i].abs() + g1[i].abs();
        }
        if s.iter().any(|&s| s > safe[k]) {
            for i in 0..4 {
                if s[i] > safe[k] {
                    block(k, xs[i], g0[i], s[i], mk, thr, full, safe, bad);
                }
            }
        }
        g0 = g1;
    }
}

/// The slow path of one pair in block k (|g₀| + |g₁| = s > safe[k]): the whole
/// block is violated, or the violations are found column by column.
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
        for m in 1..=mk as usize {
            g += 1 - 2 * ((x >> (m - 1)) & 1) as i64;
            if g.abs() > thr[base + m] {
                bad[k] |= 1 << (m - 1);
            }
        }
    }
    if bad[k] == full[k] {
        safe[k] = i64::MAX;
    }
}

/// The union-bound dimension d_ub = ⌈(2/t²)·ln(n²/δ)⌉ (sparse.md §4; §5 table),
/// certified: the value is enclosed by kernel intervals and the ceiling is read
/// off only when both endpoints have the same ceiling; otherwise the precision
/// is doubled. Needs t > 0, δ > 0. If n²/δ = 1 the value is exactly 0; else
/// ln(n²/δ) is transcendental (Lindemann), so (2/t²)·ln(n²/δ) is not an integer
/// and the enclosure eventually separates it from every integer.
pub fn union_bound_dimension(n: u64, t: &Rational, delta: &Rational) -> u64 {
    assert!(
        *t > 0 && *delta > 0,
        "union_bound_dimension needs t > 0, δ > 0"
    );
    let r = Rational::from(Integer::from(n) * Integer::from(n)) / delta;
    if r == 1 {
        return 0;
    }
    let c = Rational::from(2) / Rational::from(t * t);
    let mut prec = 128;
    loop {
        let v = &Interval::from_rational(prec, &c) * &Interval::from_rational(prec, &r).ln();
        let (lo, hi) = (v.lo().clone().ceil(), v.hi().clone().ceil());
        if lo == hi && lo.is_finite() {
            let z = lo.to_integer().expect("finite");
            return if z < 0 {
                0
            } else {
                z.to_u64().expect("d_ub fits in u64")
            };
        }
        assert!(
            prec < 1 << 20,
            "union_bound_dimension: enclosure does not separate"
        );
        prec *= 2;
    }
}
