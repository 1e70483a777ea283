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

mod exact;
mod lanes;
#[cfg(target_arch = "x86_64")]
mod lut;
mod tile;
#[cfg(target_arch = "x86_64")]
mod vpop;

/// Row tiles of the pair scan (the unit of parallel work).
const ROW_TILE: usize = 64;
/// Rows j per inner block (stays in L2).
const COL_TILE: usize = 256;
/// Words per chunk of the vector scan: its fast-case bounds are one table per
/// chunk (module doc of `exact`), and a lane that leaves it is redone pair by
/// pair over the chunk.
const CHUNK: usize = 8;

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
///   atomic bitmap and take from it the bits other tiles have set (on the slow
///   path, and before each row l), so a block filled by one tile is skipped by
///   all (only the amount of skipped work depends on the schedule, never a bit:
///   a bit is in the shared bitmap only if some pair violates at its d).
/// * Stages: each row tile scans the words 0..K for its pairs, K a stage
///   boundary (⌈3w/4⌉, ⌈7w/8⌉ or w, for w words a row), and records how far it got. K is
///   the first boundary past the first block not yet full in the shared bitmap
///   when the tile starts: a tile that starts once every block below ⌈3w/4⌉ is
///   full (the answer lies beyond) goes on to ⌈7w/8⌉ or w at once, instead of
///   scanning its pairs twice. After a pass over the tiles, the first word c
///   that is not full is the answer's word if every tile has covered it (its
///   bits are then final: every pair has been scanned there), and the answer
///   is its first clear bit; otherwise the tiles short of it are extended past
///   it (from G at their last word, recomputed by XOR-popcounting the earlier
///   words) and the test repeats. Every word full: no answer. The schedule (which
///   tile reads the shared bitmap when) changes only the work, never a bit, so
///   never the answer. At the log-dimension profiles the answer lies in the
///   first ~3/4 of d_max = d_ub for almost every seed.
/// * Per pair, word k is XOR-popcounted: g₀ = G_{64k}, g₁ = G_{64k+m_k} =
///   g₀ + m_k − 2·popcount. Each column changes G by ±1, so for 0 ≤ m ≤ m_k,
///   max(|g₀| − m, |g₁| − (m_k − m)) ≤ |G_{64k+m}| ≤ min(|g₀| + m, |g₁| + m_k − m),
///   hence (|g₀| + |g₁| − m_k)/2 ≤ |G_{64k+m}| ≤ (|g₀| + |g₁| + m_k)/2. With θ
///   non-decreasing: if |g₀| + |g₁| + m_k ≤ 2θ_{64k+1}, the pair violates nowhere
///   in the block (nothing to record; once a block is full its test always
///   passes). Only the d whose bit is still clear need deciding, so the test
///   takes θ at the block's first clear column, and two one-sided forms of the
///   bound clear a block whose clear bits all lie near one end (module doc of
///   `exact`). Otherwise (the slow path) the block's bits are first merged with
///   the shared bitmap (done if now full); if |g₀| + |g₁| − m_k > 2θ_{64k+m_k},
///   the pair violates at every d of the block (set the whole block); otherwise
///   the block is refined byte by byte with the same bound, and an undecided byte
///   whose bits are not all set already is followed column by column, each
///   violating d set individually. Every d's bit up to the answer is therefore
///   set iff some pair violates at d.
/// * Full blocks are only carried: in a block whose 64 bits are all set (in the
///   tile's bitmap, or taken from the shared one) nothing is left to record, so
///   its words only move G (nothing tested). Below the answer almost every block
///   fills within the first pairs, so for most pairs most words are such runs
///   of full blocks: one XOR, one popcount and one add per word and pair, the
///   same routine that recomputes G at a later stage's first word.
///
/// Layout for SIMD: the rows j are also stored interleaved in groups of
/// [`LANES`] (word k of the group's rows contiguous), so R rows l (two with
/// AVX512-VPOPCNTDQ, else one) are scanned against [`LANES`] rows j at once,
/// one lane per pair, in straight-line code the compiler vectorises (`lanes`):
/// per lane P = Σ popcount(a_k ⊕ b_k) so far (G at a word boundary is 64k − 2P).
/// Runs of full blocks only add to P. The words of blocks not yet full are
/// taken a chunk of `CHUNK` words at a time, and the fast-case test is not
/// branched on per word: each boundary's P is compared, by one subtraction and
/// one unsigned maximum per word, with a per-chunk table that implies the
/// per-word test above (module doc of `exact`); only a lane that leaves it has
/// its chunk redone pair by pair with the per-word test and the slow path. The
/// group holding l itself is scanned the same way with l's own lane masked (its
/// pairs (l, j) with j < l are real pairs scanned twice, which sets no new bit).
/// It is compiled once per instruction set and chosen at run time by `pulp`
/// (AVX-512 with VPOPCNTDQ, AVX-512, AVX2, NEON, or plain scalar code; where a
/// vector popcount is a table lookup of nibbles, on AVX2 and AVX-512 without
/// VPOPCNTDQ, runs of full blocks are summed eight or four words at a time
/// through a carry-save adder tree, Harley–Seal, one popcount per eight words);
/// the crate itself stays free of `unsafe`. Only the last n mod [`LANES`] rows
/// (all rows if n < [`LANES`]) go through the one-pair path. The arithmetic is
/// integer, so every instruction set gives the same bitmap (every build is
/// tested against a brute-force scan and against the others).
///
/// Cost: per pair, the words up to the end of the answer's stage: an
/// XOR-popcount for each word of a full block, an XOR-popcount and the
/// fast-case test for each word of a block not yet full (near and above the
/// answer), plus exact per-column work only for pairs near the threshold there.
pub fn min_dimension_of(s: &SignMatrix, t: &Rational) -> Option<usize> {
    scan(s, t, Build::Best)
}

/// [`min_dimension_of`] with the vector unit switched off (the portable scalar
/// build of the same code): for tests and benchmarks that compare the two.
#[doc(hidden)]
pub fn min_dimension_of_scalar(s: &SignMatrix, t: &Rational) -> Option<usize> {
    scan(s, t, Build::Scalar)
}

/// [`min_dimension_of`] on one build of the scan, `None` when this CPU cannot
/// run it: for tests and benchmarks that compare the builds.
#[doc(hidden)]
pub fn min_dimension_of_build(s: &SignMatrix, t: &Rational, build: Build) -> Option<Option<usize>> {
    build.available().then(|| scan(s, t, build))
}

/// The builds of the tile scan (see [`min_dimension_of`]: the same integer
/// arithmetic compiled for different instruction sets).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// The best this CPU has: AVX-512 with VPOPCNTDQ, else as chosen by `pulp`
    /// (AVX-512, AVX2, NEON, scalar).
    Best,
    /// `pulp`'s x86-64-v4 (AVX-512).
    Avx512,
    /// `pulp`'s x86-64-v3 (AVX2).
    Avx2,
    /// The portable scalar build.
    Scalar,
    /// `pulp`'s x86-64-v4 plus AVX512-VPOPCNTDQ (which that level lacks): the
    /// popcounts of the carry-save tree are VPOPCNTQs.
    Avx512Vpopcnt,
}

/// `pulp::x86::V4` plus AVX512-VPOPCNTDQ: the kernel's feature set for its Gram scan.
#[cfg(target_arch = "x86_64")]
use crate::kernel::V4Popcnt;

impl Build {
    /// Every build, for tests that compare them.
    pub const ALL: [Build; 5] = [
        Build::Best,
        Build::Avx512,
        Build::Avx2,
        Build::Scalar,
        Build::Avx512Vpopcnt,
    ];

    /// Whether this CPU can run the build.
    pub fn available(self) -> bool {
        match self {
            Build::Best | Build::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Build::Avx512 => pulp::x86::V4::is_available(),
            #[cfg(target_arch = "x86_64")]
            Build::Avx2 => pulp::x86::V3::is_available(),
            #[cfg(target_arch = "x86_64")]
            Build::Avx512Vpopcnt => V4Popcnt::is_available(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// Pairs scanned at once (one row l against this many rows j).
pub const LANES: usize = 32;

fn scan(s: &SignMatrix, t: &Rational, build: Build) -> Option<usize> {
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
    let bounds = boundaries(w);
    // cover[i]: tile i has scanned words 0..cover[i] for all its pairs
    let mut cover = vec![0usize; tiles.len()];
    let mut bad = vec![0u64; w];
    loop {
        // the first word not full: every d before it is violated (final), and
        // the answer lies in it once every tile covers it
        let c = (0..w).find(|&k| bad[k] != full[k])?;
        // the tiles that have not scanned word c yet
        let short: Vec<usize> = (0..tiles.len()).filter(|&i| cover[i] <= c).collect();
        if short.is_empty() {
            return Some(64 * c + bad[c].trailing_ones() as usize + 1);
        }
        let pass: Vec<(Vec<u64>, usize)> = short
            .par_iter()
            .map(|&i| {
                let (lo, hi) = tiles[i];
                let k0 = cover[i];
                // the end: the first boundary past k0 with a block not yet full
                // before it (from the shared bitmap; only the work depends on
                // when this is read, never a bit)
                let open = (0..w)
                    .find(|&k| (bad[k] | shared[k].load(Ordering::Relaxed)) != full[k])
                    .unwrap_or(w);
                if open == w {
                    // every d is violated: nothing left to record
                    return (vec![0u64; w], w);
                }
                let k1 = bounds
                    .iter()
                    .copied()
                    .find(|&b| b > k0 && b > open)
                    .unwrap_or(w);
                (
                    run_tile(s, &inter, (lo, hi), (k0, k1), &thr, &full, &shared, build),
                    k1,
                )
            })
            .collect();
        for (&i, (b, k1)) in short.iter().zip(pass) {
            bad.iter_mut().zip(&b).for_each(|(a, b)| *a |= b);
            cover[i] = k1;
        }
    }
}

/// One row tile lo..hi over the words k0..k1 on `build` (see [`scan`]); its
/// bitmap.
#[allow(clippy::too_many_arguments)]
fn run_tile(
    s: &SignMatrix,
    inter: &[u64],
    (lo, hi): (usize, usize),
    (k0, k1): (usize, usize),
    thr: &[i64],
    full: &[u64],
    shared: &[AtomicU64],
    build: Build,
) -> Vec<u64> {
    let d = s.d();
    #[cfg(target_arch = "x86_64")]
    let build = match build {
        Build::Best if V4Popcnt::is_available() => Build::Avx512Vpopcnt,
        Build::Best if pulp::x86::V4::is_available() => Build::Avx512,
        Build::Best if pulp::x86::V3::is_available() => Build::Avx2,
        b => b,
    };
    macro_rules! tile {
        ($r:literal, $cs:literal) => {
            tile::Tile::<$r, $cs> {
                s,
                inter,
                lo,
                hi,
                words: (k0, k1),
                thr,
                full,
                shared,
            }
        };
    }
    match build {
        #[cfg(target_arch = "x86_64")]
        Build::Avx512Vpopcnt => {
            let simd = V4Popcnt::try_new().expect("checked by Build::available");
            let tile = tile!(2, false);
            simd.vectorize(
                #[inline(always)]
                move || tile.run(vpop::Vpop(simd)),
            )
        }
        #[cfg(target_arch = "x86_64")]
        Build::Avx512 => {
            let simd = pulp::x86::V4::try_new().expect("checked by Build::available");
            let tile = tile!(1, true);
            simd.vectorize(
                #[inline(always)]
                move || tile.run(lut::Lut512 { 0: simd }),
            )
        }
        // the AVX2 kernel's maximum needs d < 2^30 (module doc of `lut`)
        #[cfg(target_arch = "x86_64")]
        Build::Avx2 if d < 1 << 30 => {
            let simd = pulp::x86::V3::try_new().expect("checked by Build::available");
            let tile = tile!(1, true);
            simd.vectorize(
                #[inline(always)]
                move || tile.run(lut::Lut256 { 0: simd }),
            )
        }
        #[cfg(target_arch = "x86_64")]
        Build::Avx2 => pulp::Simd::vectorize(
            pulp::x86::V3::try_new().expect("checked by Build::available"),
            tile!(1, true),
        ),
        Build::Scalar => pulp::WithSimd::with_simd(tile!(1, false), pulp::Scalar::new()),
        _ => pulp::Arch::new().dispatch(tile!(1, true)),
    }
}

/// The stage boundaries (see [`min_dimension_of`]): ⌈3w/4⌉, ⌈7w/8⌉ and w
/// (those below w only when they are above 0 and distinct).
fn boundaries(w: usize) -> Vec<usize> {
    let mut b: Vec<usize> = [(3 * w).div_ceil(4), (7 * w).div_ceil(8), w]
        .into_iter()
        .filter(|&k| k > 0)
        .collect();
    b.dedup();
    b
}

/// θ_d = ⌊t·d⌋ for d = 0..=d_max, clamped to [−1, d] (|G_d| ≤ d always).
/// Exact and incremental, with t = p/q (q > 0) and p = a·q + b (0 ≤ b < q): if
/// p·d = q·f + r with 0 ≤ r < q, then p·(d + 1) = q·(f + a) + (r + b), and
/// r + b < 2q, so f_{d+1} = f + a + [r + b ≥ q] (an integer add and compare per
/// d, instead of a rational product and floor, which corollary-dimension's
/// tens of thousands of columns per scan felt).
fn thresholds(t: &Rational, d_max: usize) -> Vec<i64> {
    let (p, q) = (t.numer(), t.denom());
    let (a, b) = p.clone().div_rem_floor(q.clone());
    // f = ⌊p·d/q⌋, r = p·d − q·f
    let (mut f, mut r) = (Integer::new(), Integer::new());
    let mut out = Vec::with_capacity(d_max + 1);
    for d in 0..=d_max {
        out.push(if f < -1 {
            -1
        } else if f > d {
            d as i64
        } else {
            f.to_i64().expect("clamped to [-1, d]")
        });
        f += &a;
        r += &b;
        if r >= *q {
            r -= q;
            f += 1;
        }
    }
    out
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
