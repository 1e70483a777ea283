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
use std::sync::atomic::{AtomicU64, Ordering};

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
/// fail), so no bisection: every d up to the answer is decided. Algorithm
/// (streaming passes over the pairs, memory O(n·d/64 + d), no per-pair state
/// kept):
///
/// * θ_d = ⌊t·d⌋ is precomputed exactly (rug); since G_d(l, j) = ⟨s_l, s_j⟩_d is
///   an integer, |G_d| ≤ t·d ⟺ |G_d| ≤ θ_d. θ is non-decreasing in d (t ≥ 0;
///   for t < 0 every θ_d < 0 and every d fails, as it should).
/// * A bitmap `bad` over d = 1..=d_max (one 64-bit word per block of columns
///   64k+1..=64k+m_k) collects "some pair violates at d". The answer is the
///   smallest d whose bit is clear. The bitmap is an OR over pairs, so it is the
///   same for any schedule; row tiles run in parallel, each with its own bitmap,
///   and the bitmaps are OR-ed. The tiles also OR the bits they set into a shared
///   atomic bitmap and, on the slow path, take from it the bits other tiles have
///   set, so a block filled by one tile is skipped by all (only the amount of
///   skipped work depends on the schedule, never a bit).
/// * Stages: the words are scanned in two stages, words 0..⌈3w/4⌉ for every pair,
///   then the rest (w words; one stage if ⌈3w/4⌉ = w). After a stage the bits of
///   its words are final (later stages touch only later words); if one is clear,
///   the first clear bit is the answer and the rest is never scanned. A later
///   stage starts each pair from G at its first word, recomputed by
///   XOR-popcounting the earlier words. At the log-dimension profiles the answer
///   lies in the first ~3/4 of d_max = d_ub for almost every seed.
/// * Per pair, word k is XOR-popcounted: g₀ = G_{64k}, g₁ = G_{64k+m_k} =
///   g₀ + m_k − 2·popcount. Each column changes G by ±1, so for 0 ≤ m ≤ m_k,
///   max(|g₀| − m, |g₁| − (m_k − m)) ≤ |G_{64k+m}| ≤ min(|g₀| + m, |g₁| + m_k − m),
///   hence (|g₀| + |g₁| − m_k)/2 ≤ |G_{64k+m}| ≤ (|g₀| + |g₁| + m_k)/2. With θ
///   non-decreasing: if |g₀| + |g₁| + m_k ≤ 2θ_{64k+1}, the pair violates nowhere
///   in the block (nothing to record; once a block is full its test always
///   passes). Otherwise (the slow path) the block's bits are first merged with
///   the shared bitmap (done if now full); if |g₀| + |g₁| − m_k > 2θ_{64k+m_k},
///   the pair violates at every d of the block (set the whole block); otherwise
///   the block is refined byte by byte with the same bound, and an undecided byte
///   whose bits are not all set already is followed column by column, each
///   violating d set individually. Every d's bit up to the answer is therefore
///   set iff some pair violates at d.
///
/// Layout for SIMD: the rows j are also stored interleaved in groups of
/// [`LANES`] (word k of the group's rows contiguous), so one row l is scanned
/// against [`LANES`] rows j at once, one lane per pair, in straight-line code the
/// compiler vectorises (XOR, popcount, prefix sums, the fast-case test). The
/// fast-case test is not branched on per word: each lane ORs safe − s over a
/// chunk of [`CHUNK`] words (sign bit set iff some word left the fast case), and
/// only a flagged lane's chunk is redone pair by pair from its G at the chunk's
/// start. The group holding l itself is scanned the same way with l's own lane
/// masked (its pairs (l, j) with j < l are real pairs scanned twice, which sets
/// no new bit). It is compiled once per instruction set and chosen at run time
/// by `pulp` (AVX-512, AVX2, NEON, or plain scalar code); the crate itself stays
/// free of `unsafe`. Only the last n mod [`LANES`] rows (all rows if n <
/// [`LANES`]) go through the one-pair path. The arithmetic is integer, so every
/// instruction set gives the same bitmap (tested against a brute-force scan and
/// against the scalar build).
///
/// Cost: one XOR-popcount per word per pair over the words up to the answer's
/// stage (like one Gram certification at width ≤ d_max), plus exact per-column
/// work only for pairs near the threshold in blocks not yet full.
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
    // Blocks already known full, shared by all tiles: a hint that lets a tile skip
    // a block another tile has filled (bits are only ever set, so any schedule
    // gives the same final bitmap).
    let shared: Vec<AtomicU64> = (0..w).map(|_| AtomicU64::new(0)).collect();
    let mut bad = vec![0u64; w];
    for (k0, k1) in stages(w) {
        let stage = tiles
            .par_iter()
            .map(|&(lo, hi)| {
                let tile = Tile {
                    s,
                    inter: &inter,
                    lo,
                    hi,
                    words: (k0, k1),
                    thr: &thr,
                    full: &full,
                    safe: &safe,
                    shared: &shared,
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
        bad.iter_mut().zip(&stage).for_each(|(a, b)| *a |= b);
        // words < k1 are final: later stages only touch words ≥ k1
        if let Some(d) = (0..k1)
            .find_map(|k| (bad[k] != full[k]).then(|| 64 * k + bad[k].trailing_ones() as usize + 1))
        {
            return Some(d);
        }
    }
    None
}

/// The word ranges scanned one after another (see [`min_dimension_of`]): the first
/// ⌈3w/4⌉ words, then the rest.
fn stages(w: usize) -> Vec<(usize, usize)> {
    let k = (3 * w).div_ceil(4);
    if k < w {
        vec![(0, k), (k, w)]
    } else {
        vec![(0, w)]
    }
}

/// One row tile lo..hi of the pair scan over the words `words` = k0..k1, against
/// every row j > l; returns the tile's bitmap. Its body is compiled per
/// instruction set (see [`scan`]).
struct Tile<'a> {
    s: &'a SignMatrix,
    inter: &'a [u64],
    lo: usize,
    hi: usize,
    words: (usize, usize),
    thr: &'a [i64],
    full: &'a [u64],
    safe: &'a [i64],
    shared: &'a [AtomicU64],
}

/// What the slow path needs besides the pair's own data.
struct Ctx<'a> {
    d: usize,
    thr: &'a [i64],
    full: &'a [u64],
    shared: &'a [AtomicU64],
    safe: Vec<i64>,
    bad: Vec<u64>,
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
            words,
            thr,
            full,
            safe,
            shared,
        } = self;
        let (n, d, w) = (s.n(), s.d(), s.words_per_row());
        let grouped = n / LANES * LANES;
        // This tile's copy of `safe`, set to i64::MAX once its block is full.
        let mut cx = Ctx {
            d,
            thr,
            full,
            shared,
            safe: safe.to_vec(),
            bad: vec![0u64; w],
        };
        // column tiles end on multiples of COL_TILE (a multiple of LANES), so
        // only the ungrouped tail goes pair by pair
        let mut jb = lo + 1;
        while jb < n {
            let je = ((jb / COL_TILE + 1) * COL_TILE).min(n);
            for l in lo..hi.min(je) {
                let a = s.row(l);
                let mut j = jb.max(l + 1);
                if !j.is_multiple_of(LANES) && j < grouped {
                    // j = l + 1 inside l's own group: the whole group at once, its
                    // lane l masked (the pairs (l, j') with j' < l are real pairs
                    // scanned twice, which sets no bit that is not set anyway)
                    let g = j / LANES;
                    let b = &inter[g * LANES * w..(g + 1) * LANES * w];
                    lanes(a, b, words, l - g * LANES, &mut cx);
                    j = (g + 1) * LANES;
                }
                while j + LANES <= je.min(grouped) {
                    let g = j / LANES;
                    let b = &inter[g * LANES * w..(g + 1) * LANES * w];
                    lanes(a, b, words, LANES, &mut cx);
                    j += LANES;
                }
                while j < je {
                    pair(a, s.row(j), words, &mut cx);
                    j += 1;
                }
            }
            jb = je;
        }
        cx.bad
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

/// Records in `cx.bad` every d of the words k0..k1 at which the pair (a, b)
/// violates C(t) (see [`min_dimension_of`] for the bounds used). `cx.safe[k]` is
/// the largest |g₀| + |g₁| for which block k is clear, or i64::MAX once block k
/// is full (nothing left to record there), so the common case is one comparison.
#[inline]
fn pair(a: &[u64], b: &[u64], (k0, k1): (usize, usize), cx: &mut Ctx) {
    let d = cx.d;
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

/// Words per chunk of [`lanes`]: the lanes' fast-case tests are OR-ed over a chunk
/// and looked at once per chunk.
const CHUNK: usize = 8;

/// [`pair`] for the [`LANES`] pairs (a, b_i), b the interleaved words of
/// [`LANES`] consecutive rows (word k of row i at k·LANES + i): independent
/// prefix sums per lane, written so the compiler vectorises them. The fast-case
/// test of every word is folded into one flag per lane (the sign bit of
/// OR_k (safe[k] − s_k), set iff some s_k > safe[k]) and looked at once per
/// chunk of [`CHUNK`] words; a flagged lane's chunk is then redone pair by pair
/// from its prefix sum at the chunk's start, with the slow path where it leaves
/// the fast case (exactly what a per-word test would have done: `safe` changes
/// only in the slow path, and only to i64::MAX).
#[inline(always)]
fn lanes(a: &[u64], b: &[u64], (k0, k1): (usize, usize), skip: usize, cx: &mut Ctx) {
    let d = cx.d;
    let w = a.len();
    let mut g0 = [0i64; LANES];
    // |G| ≤ d, so nothing here can overflow: the wrapping forms are the plain
    // operations without debug-build overflow checks, which would stop the
    // loops from vectorising in test builds
    // G at column 64·k0: words before k0 hold 64 columns each (k0 < w)
    for (&x, b) in a[..k0].iter().zip(b.chunks_exact(LANES)) {
        for i in 0..LANES {
            let p = i64::from((x ^ b[i]).count_ones());
            g0[i] = g0[i].wrapping_add(64).wrapping_sub(p.wrapping_mul(2));
        }
    }
    let mut c = k0;
    while c < k1 {
        let ce = (c + CHUNK).min(k1);
        let start = g0;
        let mut flag = [0i64; LANES];
        for k in c..ce {
            let x = a[k];
            let b = &b[k * LANES..(k + 1) * LANES];
            // every word but the last holds 64 columns
            let mk = if k + 1 < w { 64 } else { (d - 64 * k) as i64 };
            let safe = cx.safe[k];
            for i in 0..LANES {
                let p = i64::from((x ^ b[i]).count_ones());
                let g1 = g0[i].wrapping_add(mk).wrapping_sub(p.wrapping_mul(2));
                let s = g0[i].wrapping_abs().wrapping_add(g1.wrapping_abs());
                // safe ∈ [−2 − 64, 2d] or i64::MAX, s ∈ [0, 2d]: no overflow
                flag[i] |= safe.wrapping_sub(s);
                g0[i] = g1;
            }
        }
        if skip < LANES {
            flag[skip] = 0;
        }
        if flag.iter().fold(0, |f, &x| f | x) < 0 {
            for i in 0..LANES {
                if flag[i] < 0 {
                    let mut g = start[i];
                    for k in c..ce {
                        let x = a[k] ^ b[k * LANES + i];
                        let mk = if k + 1 < w { 64 } else { (d - 64 * k) as i64 };
                        let g1 = g + mk - 2 * i64::from(x.count_ones());
                        let s = g.abs() + g1.abs();
                        if s > cx.safe[k] {
                            block(k, x, g, s, mk, cx);
                        }
                        g = g1;
                    }
                }
            }
        }
        c = ce;
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
fn block(k: usize, x: u64, g0: i64, s: i64, mk: i64, cx: &mut Ctx) {
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
