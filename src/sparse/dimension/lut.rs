//! The loops of the dimension scan (`lanes::Kernel`, one row l at a time)
//! written out in vector registers for x86-64 vector units without a vector
//! popcount: AVX-512 without VPOPCNTDQ (512-bit registers) and AVX2 (256-bit).
//! A popcount is a table lookup of nibbles (two byte shuffles, a byte add and a
//! sum of absolute differences), and runs of full blocks are summed through a
//! carry-save adder tree (Harley–Seal: ones + x₁ + … + x₈ + 2·twos + 4·fours =
//! ones' + 2·twos' + 4·fours' + 8·eights at every bit position, so Σ_k
//! popcount(x_k) = 8·Σ popcount(eights) + 4·popcount(fours) + 2·popcount(twos) +
//! popcount(ones) at the end: one table popcount per eight words). The same
//! integers as `lanes::Auto`; written out so that the compiler's vectoriser does
//! not decide the speed (see the `vpop` module doc). The intrinsics are pulp's
//! safe wrappers (the feature token proves the CPU has them).

use super::lanes::Kernel;
use super::LANES;
use core::arch::x86_64::{__m256i, __m512i};

/// The operations of one register of W u64 lanes.
pub(super) trait Reg: Copy {
    type V: Copy + pulp::bytemuck::Pod;
    fn splat(self, x: u64) -> Self::V;
    fn xor(self, a: Self::V, b: Self::V) -> Self::V;
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// A maximum per lane that keeps "some x left 0..=W" for the wrapped
    /// differences x = P_b − bias_b, |x| < 2^31, W < 2^31: the unsigned 64-bit
    /// maximum, or (AVX2, which has none) the unsigned maximum of the two 32-bit
    /// halves: x ∈ 0..=W leaves both halves ≤ W; x < 0 sets the high half to
    /// 2^32 − 1 > W; W < x < 2^31 sets the low half to x. A lane read as u64 is
    /// then > W iff some x left 0..=W.
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// Carry-save adder: a + b + c = 2·carry + sum bitwise; (carry, sum).
    fn csa(self, a: Self::V, b: Self::V, c: Self::V) -> (Self::V, Self::V);
    /// popcount per lane.
    fn popcnt(self, a: Self::V) -> Self::V;
    /// The largest lane.
    fn top(self, a: Self::V) -> u64;
    /// Lanes q·W .. (q + 1)·W of word k of a group (W lanes per register).
    fn load(b: &[u64; LANES], q: usize) -> Self::V;
    /// Lane i.
    fn lane(a: Self::V, i: usize) -> u64;
}

/// The kernel on registers of W lanes, REGS = LANES / W of them per row.
#[derive(Clone, Copy)]
pub(super) struct Lut<G, const W: usize, const REGS: usize>(pub G);

/// AVX-512 (pulp's x86-64-v4): 8 lanes per register.
pub(super) type Lut512 = Lut<pulp::x86::V4, 8, 4>;
/// AVX2 (pulp's x86-64-v3): 4 lanes per register.
pub(super) type Lut256 = Lut<pulp::x86::V3, 4, 8>;

impl<G: Reg, const W: usize, const REGS: usize> Lut<G, W, REGS> {
    /// a ⊕ (those lanes of word k); a method, not a closure: a closure does not
    /// have the build's features, so the intrinsics might not be inlined there.
    #[inline(always)]
    fn word(g: G, x: u64, b: &[u64; LANES], q: usize) -> G::V {
        const { assert!(W * REGS == LANES) };
        g.xor(g.splat(x), G::load(b, q))
    }
}

impl<G: Reg, const W: usize, const REGS: usize> Kernel<1> for Lut<G, W, REGS> {
    type Acc = [[G::V; REGS]; 1];

    #[inline(always)]
    fn zero(self) -> Self::Acc {
        [[self.0.splat(0); REGS]]
    }

    #[inline(always)]
    fn carry(
        self,
        a: [&[u64]; 1],
        b: &[[u64; LANES]],
        ka: usize,
        kb: usize,
        mut p: Self::Acc,
    ) -> Self::Acc {
        let g = self.0;
        let b = &b[ka..kb];
        let a = &a[0][ka..ka + b.len()];
        // whole groups of 4 words by the carry-save tree, the rest one by one
        let e = b.len() - b.len() % 4;
        let (a8, a4) = a[..e].as_chunks::<8>();
        let (b8, b4) = b[..e].as_chunks::<8>();
        for (q, p) in p[0].iter_mut().enumerate() {
            macro_rules! word {
                ($x:expr, $b:expr) => {
                    Self::word(g, $x, $b, q)
                };
            }
            let zero = g.splat(0);
            let (mut ones, mut twos, mut fours, mut eights) = (zero, zero, zero, zero);
            for (x, r) in a8.iter().zip(b8) {
                let (ta, o) = g.csa(ones, word!(x[0], &r[0]), word!(x[1], &r[1]));
                let (tb, o) = g.csa(o, word!(x[2], &r[2]), word!(x[3], &r[3]));
                let (fa, t) = g.csa(twos, ta, tb);
                let (ta, o) = g.csa(o, word!(x[4], &r[4]), word!(x[5], &r[5]));
                let (tb, o) = g.csa(o, word!(x[6], &r[6]), word!(x[7], &r[7]));
                let (fb, t) = g.csa(t, ta, tb);
                let (e, f) = g.csa(fours, fa, fb);
                (ones, twos, fours) = (o, t, f);
                eights = g.add(eights, g.popcnt(e));
            }
            if let ([x0, x1, x2, x3], [r0, r1, r2, r3]) = (a4, b4) {
                let (ta, o) = g.csa(ones, word!(*x0, r0), word!(*x1, r1));
                let (tb, o) = g.csa(o, word!(*x2, r2), word!(*x3, r3));
                let (fa, t) = g.csa(twos, ta, tb);
                // fours + fa = 2·e + f: a half adder
                let (e, f) = g.csa(fours, fa, zero);
                (ones, twos, fours) = (o, t, f);
                eights = g.add(eights, g.popcnt(e));
            }
            // Σ popcount = 8·eights + 4·fours + 2·twos + ones (≤ d: no overflow)
            let s = g.add(g.add(eights, eights), g.popcnt(fours));
            let s = g.add(g.add(s, s), g.popcnt(twos));
            let s = g.add(g.add(s, s), g.popcnt(ones));
            let mut acc = g.add(*p, s);
            for (&x, r) in a[e..].iter().zip(&b[e..]) {
                acc = g.add(acc, g.popcnt(word!(x, r)));
            }
            *p = acc;
        }
        p
    }

    #[inline(always)]
    fn test(
        self,
        a: [&[u64]; 1],
        b: &[[u64; LANES]],
        bias: &[u64],
        wl: u64,
        mut p: Self::Acc,
    ) -> (Self::Acc, Self::Acc, bool) {
        let g = self.0;
        let len = b.len();
        let bias = &bias[..=len];
        let a = &a[0][..len];
        let mut f = p;
        let mut top = g.splat(0);
        for q in 0..REGS {
            let mut s = p[0][q];
            let mut m = g.sub(s, g.splat(bias[0]));
            for k in 0..len {
                let x = Self::word(g, a[k], &b[k], q);
                s = g.add(s, g.popcnt(x));
                m = g.max(m, g.sub(s, g.splat(bias[k + 1])));
            }
            p[0][q] = s;
            f[0][q] = m;
            top = g.max(top, m);
        }
        (p, f, g.top(top) > wl)
    }

    #[inline(always)]
    fn lane(acc: &Self::Acc, r: usize, i: usize) -> u64 {
        G::lane(acc[r][i / W], i % W)
    }
}

/// The nibble popcounts 0..=15, repeated for each 128-bit lane.
const NIBBLES: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (i % 16).count_ones() as u8;
        i += 1;
    }
    t
};

impl Reg for pulp::x86::V4 {
    type V = __m512i;

    #[inline(always)]
    fn splat(self, x: u64) -> __m512i {
        self.avx512f._mm512_set1_epi64(x as i64)
    }
    #[inline(always)]
    fn xor(self, a: __m512i, b: __m512i) -> __m512i {
        self.avx512f._mm512_xor_si512(a, b)
    }
    #[inline(always)]
    fn add(self, a: __m512i, b: __m512i) -> __m512i {
        self.avx512f._mm512_add_epi64(a, b)
    }
    #[inline(always)]
    fn sub(self, a: __m512i, b: __m512i) -> __m512i {
        self.avx512f._mm512_sub_epi64(a, b)
    }
    #[inline(always)]
    fn max(self, a: __m512i, b: __m512i) -> __m512i {
        self.avx512f._mm512_max_epu64(a, b)
    }
    #[inline(always)]
    fn csa(self, a: __m512i, b: __m512i, c: __m512i) -> (__m512i, __m512i) {
        // majority and three-way XOR, one ternary-logic instruction each
        let f = self.avx512f;
        (
            f._mm512_ternarylogic_epi64::<0xE8>(a, b, c),
            f._mm512_ternarylogic_epi64::<0x96>(a, b, c),
        )
    }
    #[inline(always)]
    fn popcnt(self, a: __m512i) -> __m512i {
        let (f, bw) = (self.avx512f, self.avx512bw);
        let lut: __m512i = pulp::cast(NIBBLES);
        let low = f._mm512_set1_epi8(0x0f);
        let lo = f._mm512_and_si512(a, low);
        let hi = f._mm512_and_si512(f._mm512_srli_epi64::<4>(a), low);
        let bytes = bw._mm512_add_epi8(
            bw._mm512_shuffle_epi8(lut, lo),
            bw._mm512_shuffle_epi8(lut, hi),
        );
        bw._mm512_sad_epu8(bytes, f._mm512_setzero_si512())
    }
    #[inline(always)]
    fn top(self, a: __m512i) -> u64 {
        self.avx512f._mm512_reduce_max_epu64(a)
    }
    #[inline(always)]
    fn load(b: &[u64; LANES], q: usize) -> __m512i {
        pulp::cast(b.as_chunks::<8>().0[q])
    }
    #[inline(always)]
    fn lane(a: __m512i, i: usize) -> u64 {
        pulp::cast::<_, [u64; 8]>(a)[i]
    }
}

impl Reg for pulp::x86::V3 {
    type V = __m256i;

    #[inline(always)]
    fn splat(self, x: u64) -> __m256i {
        self.avx._mm256_set1_epi64x(x as i64)
    }
    #[inline(always)]
    fn xor(self, a: __m256i, b: __m256i) -> __m256i {
        self.avx2._mm256_xor_si256(a, b)
    }
    #[inline(always)]
    fn add(self, a: __m256i, b: __m256i) -> __m256i {
        self.avx2._mm256_add_epi64(a, b)
    }
    #[inline(always)]
    fn sub(self, a: __m256i, b: __m256i) -> __m256i {
        self.avx2._mm256_sub_epi64(a, b)
    }
    #[inline(always)]
    fn max(self, a: __m256i, b: __m256i) -> __m256i {
        // no unsigned 64-bit maximum in AVX2: the 32-bit halves (see the trait)
        self.avx2._mm256_max_epu32(a, b)
    }
    #[inline(always)]
    fn csa(self, a: __m256i, b: __m256i, c: __m256i) -> (__m256i, __m256i) {
        let x = self.avx2;
        let u = x._mm256_xor_si256(a, b);
        (
            x._mm256_or_si256(x._mm256_and_si256(a, b), x._mm256_and_si256(u, c)),
            x._mm256_xor_si256(u, c),
        )
    }
    #[inline(always)]
    fn popcnt(self, a: __m256i) -> __m256i {
        let x = self.avx2;
        let t: [u8; 32] = std::array::from_fn(|i| NIBBLES[i]);
        let lut: __m256i = pulp::cast(t);
        let low = self.avx._mm256_set1_epi8(0x0f);
        let lo = x._mm256_and_si256(a, low);
        let hi = x._mm256_and_si256(x._mm256_srli_epi64::<4>(a), low);
        let bytes = x._mm256_add_epi8(
            x._mm256_shuffle_epi8(lut, lo),
            x._mm256_shuffle_epi8(lut, hi),
        );
        x._mm256_sad_epu8(bytes, self.avx._mm256_setzero_si256())
    }
    #[inline(always)]
    fn top(self, a: __m256i) -> u64 {
        let x: [u64; 4] = pulp::cast(a);
        x[0].max(x[1]).max(x[2]).max(x[3])
    }
    #[inline(always)]
    fn load(b: &[u64; LANES], q: usize) -> __m256i {
        pulp::cast(b.as_chunks::<4>().0[q])
    }
    #[inline(always)]
    fn lane(a: __m256i, i: usize) -> u64 {
        pulp::cast::<_, [u64; 4]>(a)[i]
    }
}
