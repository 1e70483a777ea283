//! The vector part of the dimension scan ([`super::min_dimension_of`]): R rows l
//! against one group of [`LANES`] interleaved rows j (word k of the group's rows
//! contiguous), R·[`LANES`] pairs at once, one lane per pair, in straight-line
//! code the compiler vectorises under the build's features. Per lane it keeps
//! P = Σ popcount(a_k ⊕ b_k) over the words so far (G at boundary b is
//! c_b − 2P_b). Words of full blocks only add to P ([`carry`]); the words of
//! blocks not yet full are taken a chunk at a time ([`test`]), each boundary's
//! P compared with the chunk table (module doc of `exact`), and only a lane that
//! leaves it is redone pair by pair with the exact test ([`flagged`]).

use super::exact::{block, Ctx};
use super::{CHUNK, LANES};

/// The loops of [`lanes`] for R rows l: P per lane, moved over full blocks
/// ([`Kernel::carry`]) and over a chunk with the table test ([`Kernel::test`]).
/// Two implementations compute the same integers: [`Auto`] (plain arrays the
/// compiler vectorises, for every build) and, with AVX512-VPOPCNTDQ,
/// `super::vpop::Vpop` (512-bit registers written out, so that the register
/// allocation of the loops does not depend on the code around them).
pub(super) trait Kernel<const R: usize>: Copy {
    /// P (or f) of the R·[`LANES`] lanes.
    type Acc: Copy;
    /// All lanes zero.
    fn zero(self) -> Self::Acc;
    /// P += Σ_{k ∈ ka..kb} popcount(a_k ⊕ b_k) for every lane. Exact: P ≤ d.
    fn carry(
        self,
        a: [&[u64]; R],
        b: &[[u64; LANES]],
        ka: usize,
        kb: usize,
        p: Self::Acc,
    ) -> Self::Acc;
    /// One chunk's words (a, b: its words; bias: its boundaries, one more): P
    /// moved over them; per lane f = max over the boundaries of the wrapped
    /// P_b − bias_b (unsigned), so f ≤ W_m iff every boundary passed (module doc
    /// of `exact`); and whether some lane has f > `wl` (W_m ≥ 0). Per word: XOR,
    /// popcount, add, subtract, max.
    fn test(
        self,
        a: [&[u64]; R],
        b: &[[u64; LANES]],
        bias: &[u64],
        wl: u64,
        p: Self::Acc,
    ) -> (Self::Acc, Self::Acc, bool);
    /// Lane i of row r.
    fn lane(acc: &Self::Acc, r: usize, i: usize) -> u64;
    /// The lanes that left the chunk table, f > W_m (every lane if W_m < 0), as
    /// bit r·[`LANES`] + i for lane i of row r. Called inside the vectorised
    /// loops (a kernel with mask compares overrides it; this is lane by lane).
    #[inline(always)]
    fn left(self, f: &Self::Acc, wl: i64) -> u64 {
        const { assert!(R * LANES <= 64) };
        let mut out = 0u64;
        for r in 0..R {
            for i in 0..LANES {
                let left = wl < 0 || Self::lane(f, r, i) > wl as u64;
                out |= u64::from(left) << (r * LANES + i);
            }
        }
        out
    }
}

/// The pairs (a_r, b_i) of R rows a_r (their whole words) and one interleaved
/// group b (b[k][i]: word k of row i of the group) over the stage's words.
/// `selfs[r]` is the lane of row a_r itself when it is in this group (masked:
/// G = d there), else [`LANES`]. Other lanes with j < l are real pairs scanned
/// twice, which sets no bit that is not set anyway.
#[inline(always)]
pub(super) fn lanes<const R: usize, K: Kernel<R>>(
    kernel: K,
    a: [&[u64]; R],
    b: &[[u64; LANES]],
    selfs: [usize; R],
    cx: &mut Ctx,
) {
    let (k0, k1) = cx.words;
    let diagonal = selfs.iter().any(|&i| i < LANES);
    // the lanes of the rows themselves (bit r·LANES + i, as in `Kernel::left`)
    let own = selfs
        .iter()
        .enumerate()
        .filter(|&(_, &i)| i < LANES)
        .fold(0u64, |m, (r, &i)| m | 1 << (r * LANES + i));
    let mut c = cx.open.clamp(k0, k1);
    // P at the first word of a block not full (the words before k0 and the full
    // blocks from k0 on: popcounts only, nothing to record there)
    let mut p = kernel.carry(a, b, 0, c, kernel.zero());
    while c < k1 {
        if cx.safe[c] == i64::MAX {
            // a run of blocks that filled since `open` was set
            let mut e = c + 1;
            while e < k1 && cx.safe[e] == i64::MAX {
                e += 1;
            }
            p = kernel.carry(a, b, c, e, p);
            c = e;
            continue;
        }
        if cx.dirty {
            p = tables(p, cx);
        }
        let m = c / CHUNK;
        let ce = (CHUNK * m + CHUNK).min(k1);
        let o = (CHUNK + 1) * m + c - CHUNK * m;
        let wl = cx.wlim[m];
        let bias = &cx.bias[o..=o + ce - c];
        // (with W_m < 0 every lane leaves: `left` is not used then)
        let (q, f, left) = kernel.test(a.map(|x| &x[c..ce]), &b[c..ce], bias, wl.max(0) as u64, p);
        p = q;
        // in a group holding some row l + r itself, that row's own lane is
        // masked here (not in the loops): it always leaves the table
        if wl < 0 || left || diagonal {
            let out = kernel.left(&f, wl) & !own;
            if out != 0 {
                p = flagged::<R, K>(p, out, a, b, (c, ce), cx);
            }
        }
        c = ce;
    }
}

/// [`Kernel`] on plain arrays, vectorised by the compiler under the build's
/// features; with `CS` the popcounts of full blocks go through [`carry_save`]
/// four or eight words at a time (where a vector popcount is a table lookup).
#[derive(Clone, Copy)]
pub(super) struct Auto<const CS: bool>;

impl<const R: usize, const CS: bool> Kernel<R> for Auto<CS> {
    type Acc = [[u64; LANES]; R];

    #[inline(always)]
    fn zero(self) -> Self::Acc {
        [[0; LANES]; R]
    }

    #[inline(always)]
    fn carry(
        self,
        a: [&[u64]; R],
        b: &[[u64; LANES]],
        ka: usize,
        kb: usize,
        p: Self::Acc,
    ) -> Self::Acc {
        carry(a, b, ka, kb, CS, p)
    }

    #[inline(always)]
    fn test(
        self,
        a: [&[u64]; R],
        b: &[[u64; LANES]],
        bias: &[u64],
        wl: u64,
        p: Self::Acc,
    ) -> (Self::Acc, Self::Acc, bool) {
        let (p, f) = test(a, b, bias, p);
        let top = f.as_flattened().iter().fold(0u64, |m, &x| m.max(x));
        (p, f, top > wl)
    }

    #[inline(always)]
    fn lane(acc: &Self::Acc, r: usize, i: usize) -> u64 {
        acc[r][i]
    }
}

/// [`Kernel::carry`] of [`Auto`]: word by word (one vector popcount per lanes
/// of a register where the build has it), or with `cs` through
/// [`carry_save`] four or eight words at a time and the rest word by word.
/// Exact: P ≤ d, nothing can overflow (the wrapping forms only keep the overflow
/// checks out of the loops, which would stop them vectorising).
#[inline(always)]
fn carry<const R: usize>(
    a: [&[u64]; R],
    b: &[[u64; LANES]],
    ka: usize,
    kb: usize,
    cs: bool,
    mut p: [[u64; LANES]; R],
) -> [[u64; LANES]; R] {
    let mut k = ka;
    if cs && kb - ka >= 4 {
        let ke = kb - (kb - ka) % 4;
        for r in 0..R {
            let s = carry_save(&a[r][ka..ke], &b[ka..ke]);
            for i in 0..LANES {
                p[r][i] = p[r][i].wrapping_add(s[i]);
            }
        }
        k = ke;
    }
    let b = &b[k..kb];
    let len = b.len();
    let a = a.map(|x| &x[k..k + len]);
    for k in 0..len {
        for r in 0..R {
            let x = a[r][k];
            for i in 0..LANES {
                p[r][i] = p[r][i].wrapping_add(u64::from((x ^ b[k][i]).count_ones()));
            }
        }
    }
    p
}

/// [`Kernel::test`] of [`Auto`] (without the largest f).
#[inline(always)]
fn test<const R: usize>(
    a: [&[u64]; R],
    b: &[[u64; LANES]],
    bias: &[u64],
    mut p: [[u64; LANES]; R],
) -> ([[u64; LANES]; R], [[u64; LANES]; R]) {
    let len = b.len();
    let bias = &bias[..=len];
    let a = a.map(|x| &x[..len]);
    let mut f = [[0u64; LANES]; R];
    for r in 0..R {
        for i in 0..LANES {
            f[r][i] = p[r][i].wrapping_sub(bias[0]);
        }
    }
    for k in 0..len {
        let lo = bias[k + 1];
        for r in 0..R {
            let x = a[r][k];
            for i in 0..LANES {
                let q = p[r][i].wrapping_add(u64::from((x ^ b[k][i]).count_ones()));
                p[r][i] = q;
                f[r][i] = f[r][i].max(q.wrapping_sub(lo));
            }
        }
    }
    (p, f)
}

/// The lanes `out` of chunk c..ce (bit r·[`LANES`] + i: those that left the
/// table, [`Kernel::left`], never a lane of row r itself; at least one), redone
/// pair by pair: G at the chunk's start from P at its end, then each word with the
/// exact test and the slow path where it fires (what a per-word test would have
/// done: the bounds change only in the slow path, and only widen). P is
/// passed through (see [`tables`]).
#[cold]
#[inline(never)]
fn flagged<const R: usize, K: Kernel<R>>(
    p: K::Acc,
    mut out: u64,
    a: [&[u64]; R],
    b: &[[u64; LANES]],
    (c, ce): (usize, usize),
    cx: &mut Ctx,
) -> K::Acc {
    let d = cx.d;
    while out != 0 {
        let bit = out.trailing_zeros() as usize;
        out &= out - 1;
        let (r, i) = (bit / LANES, bit % LANES);
        // P at the chunk's start; c < w: the words before c hold 64 columns each
        let chunk: u64 = (c..ce)
            .map(|k| u64::from((a[r][k] ^ b[k][i]).count_ones()))
            .sum();
        let mut g = 64 * c as i64 - 2 * (K::lane(&p, r, i) - chunk) as i64;
        for k in c..ce {
            let x = a[r][k] ^ b[k][i];
            let mk = (d - 64 * k).min(64) as i64;
            let g1 = g + mk - 2 * i64::from(x.count_ones());
            if !cx.clear(k, g.abs(), g1.abs()) {
                block(k, x, g, g.abs() + g1.abs(), mk, cx);
            }
            g = g1;
        }
    }
    p
}

/// [`Ctx::tables`], P passed through: every vector register is caller-saved,
/// so P is not live across this call (nor across [`flagged`]) but goes through
/// memory on this rare path only; otherwise the register allocator may keep
/// some lanes' P in memory in the hot loops.
#[cold]
#[inline(never)]
fn tables<A>(p: A, cx: &mut Ctx) -> A {
    cx.tables();
    p
}

/// Lanes of one carry-save group in [`carry_save`] (one AVX-512 register).
const SUB: usize = 8;

/// Σ_k popcount(a_k ⊕ b_{k,i}) for every lane i over the words given (a multiple
/// of 4 of them), eight (then four) words at a time through a carry-save adder
/// tree (Harley–Seal): bitwise, ones + x₁ + … + x₈ + 2·twos + 4·fours = ones' +
/// 2·twos' + 4·fours' + 8·eights at every bit position, so Σ_k popcount(x_k) =
/// 8·Σ popcount(eights) + 4·popcount(fours) + 2·popcount(twos) + popcount(ones)
/// at the end: one popcount per eight (or four) words instead of one per word
/// (worth it where a vector popcount is a nibble-table lookup).
#[inline(always)]
fn carry_save(a: &[u64], b: &[[u64; LANES]]) -> [u64; LANES] {
    // one group of SUB lanes at a time (LANES = 4·SUB), each with constant offsets
    let p = [
        carry_save_sub::<0>(a, b),
        carry_save_sub::<1>(a, b),
        carry_save_sub::<2>(a, b),
        carry_save_sub::<3>(a, b),
    ];
    std::array::from_fn(|i| p[i / SUB][i % SUB])
}

/// Σ_k popcount(a_k ⊕ b_{k,i}) for the lanes i = H·SUB .. (H + 1)·SUB (see
/// [`carry_save`]).
#[inline(always)]
fn carry_save_sub<const H: usize>(a: &[u64], b: &[[u64; LANES]]) -> [u64; SUB] {
    const { assert!(LANES == 4 * SUB) };
    let pc =
        |x: [u64; SUB]| -> [u64; SUB] { std::array::from_fn(|i| u64::from(x[i].count_ones())) };
    let word =
        |x: u64, r: &[u64; LANES]| -> [u64; SUB] { std::array::from_fn(|i| x ^ r[H * SUB + i]) };
    let (a8, a4) = a.as_chunks::<8>();
    let (b8, b4) = b.as_chunks::<8>();
    let (mut ones, mut twos, mut fours) = ([0u64; SUB], [0u64; SUB], [0u64; SUB]);
    let mut eights = [0u64; SUB];
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
    // Σ popcount = 8·eights + 4·fours + 2·twos + ones (≤ d: no overflow)
    std::array::from_fn(|i| {
        (eights[i] << 3)
            .wrapping_add(f[i] << 2)
            .wrapping_add(t[i] << 1)
            .wrapping_add(o[i])
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
