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
///   atomic bitmap and take from it the blocks other tiles have filled (on the
///   slow path, and before each row l), so a block filled by one tile is skipped
///   by all (only the amount of skipped work depends on the schedule, never a
///   bit: a block is taken only when all its bits are set, and a bit is in the
///   shared bitmap only if some pair violates at its d).
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
/// * Full blocks are only carried: in a block whose 64 bits are all set (in the
///   tile's bitmap, or taken from the shared one) nothing is left to record, so
///   its words only move G (g₁ = g₀ + m_k − 2·popcount, nothing tested). Below
///   the answer almost every block fills within the first pairs, so for most
///   pairs most words are such runs of full blocks, and there the popcounts of
///   eight (or four) consecutive words are summed through a carry-save adder
///   tree (Harley–Seal: one popcount per eight words; exact integer sums), the
///   same routine that recomputes G at a later stage's first word.
///
/// Layout for SIMD: the rows j are also stored interleaved in groups of
/// [`LANES`] (word k of the group's rows contiguous), so one row l is scanned
/// against [`LANES`] rows j at once, one lane per pair, in straight-line code the
/// compiler vectorises (XOR, popcount, prefix sums, the fast-case test). The
/// fast-case test is not branched on per word: each lane ORs safe − s over a
/// chunk of `CHUNK` words (sign bit set iff some word left the fast case), and
/// only a flagged lane's chunk is redone pair by pair from its G at the chunk's
/// start. The group holding l itself is scanned the same way with l's own lane
/// masked (its pairs (l, j) with j < l are real pairs scanned twice, which sets
/// no new bit). It is compiled once per instruction set and chosen at run time
/// by `pulp` (AVX-512 with VPOPCNTDQ, AVX-512, AVX2, NEON, or plain scalar
/// code; the carry-save tree on AVX2 and AVX-512, where a popcount is a table
/// lookup of nibbles or one VPOPCNTQ per 8 words, not on scalar code, which has
/// POPCNT); the crate itself stays free of `unsafe`.
/// Only the last n mod [`LANES`] rows (all rows if n < [`LANES`]) go through
/// the one-pair path. The arithmetic is integer, so every
/// instruction set gives the same bitmap (every build is tested against a
/// brute-force scan and against the others).
///
/// Cost: per pair, the words up to the end of the answer's stage: a carry-save
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
                #[cfg(target_arch = "x86_64")]
                let build = match build {
                    Build::Best if V4Popcnt::is_available() => Build::Avx512Vpopcnt,
                    b => b,
                };
                match build {
                    #[cfg(target_arch = "x86_64")]
                    Build::Avx512Vpopcnt => {
                        let v4 = pulp::x86::V4::try_new().expect("a subset of V4Popcnt");
                        V4Popcnt::try_new()
                            .expect("checked by Build::available")
                            .vectorize(
                                #[inline(always)]
                                move || pulp::WithSimd::with_simd(tile, v4),
                            )
                    }
                    #[cfg(target_arch = "x86_64")]
                    Build::Avx512 => pulp::Simd::vectorize(
                        pulp::x86::V4::try_new().expect("checked by Build::available"),
                        tile,
                    ),
                    #[cfg(target_arch = "x86_64")]
                    Build::Avx2 => pulp::Simd::vectorize(
                        pulp::x86::V3::try_new().expect("checked by Build::available"),
                        tile,
                    ),
                    Build::Scalar => pulp::WithSimd::with_simd(tile, pulp::Scalar::new()),
                    _ => pulp::Arch::new().dispatch(tile),
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
    /// The first word of the stage whose block is not full here (set by
    /// [`Ctx::refresh`]; blocks only ever fill, so every block before it stays
    /// full).
    open: usize,
}

impl Ctx<'_> {
    /// Takes from the shared bitmap the blocks of `words` other tiles have filled
    /// (their fast-case test is then skipped: see [`lanes`]). Only full blocks
    /// are taken, and only bits some pair violates are ever in the shared bitmap.
    #[inline]
    fn refresh(&mut self, (k0, k1): (usize, usize)) {
        for k in k0..k1 {
            if self.safe[k] != i64::MAX
                && (self.bad[k] | self.shared[k].load(Ordering::Relaxed)) == self.full[k]
            {
                self.bad[k] = self.full[k];
                self.safe[k] = i64::MAX;
            }
        }
        self.open = (k0..k1).find(|&k| self.safe[k] != i64::MAX).unwrap_or(k1);
    }
}

impl pulp::WithSimd for Tile<'_> {
    type Output = Vec<u64>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<u64> {
        // carry-save popcounts pay off with a vector unit (several lanes per
        // register) but not against the scalar POPCNT instruction
        let wide = std::mem::size_of::<S::u64s>() >= 32;
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
            open: words.0,
        };
        // column tiles end on multiples of COL_TILE (a multiple of LANES), so
        // only the ungrouped tail goes pair by pair
        let mut jb = lo + 1;
        while jb < n {
            let je = ((jb / COL_TILE + 1) * COL_TILE).min(n);
            for l in lo..hi.min(je) {
                cx.refresh(words);
                let a = s.row(l);
                let mut j = jb.max(l + 1);
                if !j.is_multiple_of(LANES) && j < grouped {
                    // j = l + 1 inside l's own group: the whole group at once, its
                    // lane l masked (the pairs (l, j') with j' < l are real pairs
                    // scanned twice, which sets no bit that is not set anyway)
                    let g = j / LANES;
                    let b = &inter[g * LANES * w..(g + 1) * LANES * w];
                    lanes(a, b, words, l - g * LANES, wide, &mut cx);
                    j = (g + 1) * LANES;
                }
                while j + LANES <= je.min(grouped) {
                    let g = j / LANES;
                    let b = &inter[g * LANES * w..(g + 1) * LANES * w];
                    lanes(a, b, words, LANES, wide, &mut cx);
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
/// only in the slow path, and only to i64::MAX). Runs of full blocks (`safe` =
/// i64::MAX: nothing to record) only carry G, by [`advance`]; so do the words
/// before k0.
#[inline(always)]
fn lanes(a: &[u64], b: &[u64], (k0, k1): (usize, usize), skip: usize, wide: bool, cx: &mut Ctx) {
    let d = cx.d;
    let w = a.len();
    // word k of the LANES rows: b[k]
    let b = &b.as_chunks::<LANES>().0[..k1];
    let a = &a[..k1];
    let mut g0 = [0i64; LANES];
    // |G| ≤ d, so nothing here can overflow: the wrapping forms are the plain
    // operations without debug-build overflow checks, which would stop the
    // loops from vectorising in test builds
    // G at the first word of a block not full (the words before k0 and the full
    // blocks from k0 on, popcounts only: nothing to record there)
    let mut c = cx.open.clamp(k0, k1);
    advance(a, b, 0, c, d, wide, &mut g0);
    while c < k1 {
        if cx.safe[c] == i64::MAX {
            // a run of blocks that filled since `open` was set
            let mut e = c + 1;
            while e < k1 && cx.safe[e] == i64::MAX {
                e += 1;
            }
            advance(a, b, c, e, d, wide, &mut g0);
            c = e;
            continue;
        }
        let ce = (c + CHUNK).min(k1);
        let start = g0;
        let mut flag = [0i64; LANES];
        for k in c..ce {
            let x = a[k];
            let b = &b[k];
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
                        let x = a[k] ^ b[k][i];
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

/// Moves the [`LANES`] prefix sums `g` over the words ka..kb (a, b as in
/// [`lanes`]): g_i += Σ_k (m_k − 2·popcount(a_k ⊕ b_{k,i})), m_k the columns of
/// word k. With `wide`, the words go through [`carry_save`] four or eight at a
/// time, the last one to three word by word. Exact: |G| ≤ d and the popcount
/// sums are at most d, so nothing can overflow (the wrapping forms only keep the
/// overflow checks out of the loops).
#[inline(always)]
fn advance(
    a: &[u64],
    b: &[[u64; LANES]],
    ka: usize,
    kb: usize,
    d: usize,
    wide: bool,
    g: &mut [i64; LANES],
) {
    let mut k = ka;
    if wide && kb - ka >= 4 {
        let ke = kb - (kb - ka) % 4;
        let cols = (d.min(64 * ke) - 64 * ka) as i64;
        carry_save(&a[ka..ke], &b[ka..ke], cols, g);
        k = ke;
    }
    for (k, (&x, b)) in a[k..kb]
        .iter()
        .zip(&b[k..kb])
        .enumerate()
        .map(|(i, y)| (k + i, y))
    {
        let mk = (d - 64 * k).min(64) as i64;
        for i in 0..LANES {
            let p = i64::from((x ^ b[i]).count_ones());
            g[i] = g[i].wrapping_add(mk).wrapping_sub(p.wrapping_mul(2));
        }
    }
}

/// Lanes of one carry-save group in [`carry_save`] (one AVX-512 register).
const SUB: usize = 8;

/// g_i += cols − 2·Σ_k popcount(a_k ⊕ b_{k,i}) over the words given (a multiple
/// of 4 of them; `cols` their columns), eight (then four) words at a time
/// through a carry-save adder tree (Harley–Seal): bitwise, ones + x₁ + … + x₈ +
/// 2·twos + 4·fours = ones' + 2·twos' + 4·fours' + 8·eights at every bit
/// position, so Σ_k popcount(x_k) = 8·Σ popcount(eights) + 4·popcount(fours) +
/// 2·popcount(twos) + popcount(ones) at the end: one popcount per eight (or
/// four) words instead of one per word.
#[inline(always)]
fn carry_save(a: &[u64], b: &[[u64; LANES]], cols: i64, g: &mut [i64; LANES]) {
    // one group of SUB lanes at a time (LANES = 4·SUB), each with constant offsets
    let p2 = [
        carry_save_sub::<0>(a, b),
        carry_save_sub::<1>(a, b),
        carry_save_sub::<2>(a, b),
        carry_save_sub::<3>(a, b),
    ];
    for (g, p2) in g.iter_mut().zip(p2.as_flattened()) {
        // 2·Σ popcount ≤ 2·cols ≤ 2d: no overflow
        *g = g.wrapping_add(cols).wrapping_sub(*p2);
    }
}

/// 2·Σ_k popcount(a_k ⊕ b_{k,i}) for the lanes i = H·SUB .. (H + 1)·SUB (see
/// [`carry_save`]).
#[inline(always)]
fn carry_save_sub<const H: usize>(a: &[u64], b: &[[u64; LANES]]) -> [i64; SUB] {
    const { assert!(LANES == 4 * SUB) };
    let pc =
        |x: [u64; SUB]| -> [i64; SUB] { std::array::from_fn(|i| i64::from(x[i].count_ones())) };
    let word =
        |x: u64, r: &[u64; LANES]| -> [u64; SUB] { std::array::from_fn(|i| x ^ r[H * SUB + i]) };
    let (a8, a4) = a.as_chunks::<8>();
    let (b8, b4) = b.as_chunks::<8>();
    let (mut ones, mut twos, mut fours) = ([0u64; SUB], [0u64; SUB], [0u64; SUB]);
    let mut eights = [0i64; SUB];
    for (x, r) in a8.iter().zip(b8) {
        let (ta, o) = csa(ones, word(x[0], &r[0]), word(x[1], &r[1]));
        let (tb, o) = csa(o, word(x[2], &r[2]), word(x[3], &r[3]));
        let (fa, t) = csa(twos, ta, tb);
        let (ta, o) = csa(o, word(x[4], &r[4]), word(x[5], &r[5]));
        let (tb, o) = csa(o, word(x[6], &r[6]), word(x[7], &r[7]));
        let (fb, t) = csa(t, ta, tb);
        let (e, f) = csa(fours, fa, fb);
        (ones, twos, fours) = (o, t, f);
        let e = pc(e);
        for i in 0..SUB {
            eights[i] = eights[i].wrapping_add(e[i]);
        }
    }
    if let ([x0, x1, x2, x3], [r0, r1, r2, r3]) = (a4, b4) {
        let (ta, o) = csa(ones, word(*x0, r0), word(*x1, r1));
        let (tb, o) = csa(o, word(*x2, r2), word(*x3, r3));
        let (fa, t) = csa(twos, ta, tb);
        // fours + fa = 2·e + f: a half adder
        let (e, f) = csa(fours, fa, [0; SUB]);
        (ones, twos, fours) = (o, t, f);
        let e = pc(e);
        for i in 0..SUB {
            eights[i] = eights[i].wrapping_add(e[i]);
        }
    }
    let (o, t, f) = (pc(ones), pc(twos), pc(fours));
    // 2·Σ popcount = 16·eights + 8·fours + 4·twos + 2·ones
    std::array::from_fn(|i| {
        (eights[i] << 4)
            .wrapping_add(f[i] << 3)
            .wrapping_add(t[i] << 2)
            .wrapping_add(o[i] << 1)
    })
}

/// Carry-save adder, bitwise: a + b + c = 2·carry + sum at every bit position;
/// returns (carry, sum).
#[inline(always)]
fn csa(a: [u64; SUB], b: [u64; SUB], c: [u64; SUB]) -> ([u64; SUB], [u64; SUB]) {
    let mut carry = [0u64; SUB];
    let mut sum = [0u64; SUB];
    for i in 0..SUB {
        let u = a[i] ^ b[i];
        carry[i] = (a[i] & b[i]) | (u & c[i]);
        sum[i] = u ^ c[i];
    }
    (carry, sum)
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
