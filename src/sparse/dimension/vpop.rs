//! The loops of the dimension scan (`lanes::Kernel`) written out in 512-bit
//! registers for x86-64-v4 with AVX512-VPOPCNTDQ: two rows l against the 32
//! lanes of a group, four registers of eight lanes per row. The same integers as
//! `lanes::Auto`, but the register allocation no longer depends on how the
//! compiler vectorises the code around the loops (with plain arrays, small
//! changes elsewhere in the scan moved some lanes of P or f to memory or to
//! general registers inside the loops, and halved the speed). The intrinsics
//! are pulp's safe wrappers (the feature token proves the CPU has them); the
//! popcount is `u64::count_ones` on the eight lanes, which LLVM turns into one
//! VPOPCNTQ under this feature set.

use super::lanes::Kernel;
use super::LANES;
use crate::kernel::V4Popcnt;
use core::arch::x86_64::__m512i;

/// Registers per row: LANES / 8.
const REGS: usize = LANES / 8;

/// The VPOPCNTDQ kernel (R = 2).
#[derive(Clone, Copy)]
pub(super) struct Vpop(pub V4Popcnt);

/// P (or f) of two rows: four registers of eight lanes each.
pub(super) type Regs = [[__m512i; REGS]; 2];

impl Vpop {
    /// One register per 8 lanes of word k of the group.
    #[inline(always)]
    fn load(self, b: &[u64; LANES]) -> [__m512i; REGS] {
        let (v, _) = b.as_chunks::<8>();
        std::array::from_fn(|q| pulp::cast(v[q]))
    }

    /// popcount(a ⊕ b) per lane.
    #[inline(always)]
    fn xor_pop(self, a: __m512i, b: __m512i) -> __m512i {
        let x: [u64; 8] = pulp::cast(self.0.avx512f._mm512_xor_si512(a, b));
        pulp::cast(x.map(|w| u64::from(w.count_ones())))
    }

    #[inline(always)]
    fn splat(self, x: u64) -> __m512i {
        self.0.avx512f._mm512_set1_epi64(x as i64)
    }
}

impl Kernel<2> for Vpop {
    type Acc = Regs;

    #[inline(always)]
    fn zero(self) -> Regs {
        let z = self.splat(0);
        [[z; REGS]; 2]
    }

    #[inline(always)]
    fn carry(self, a: [&[u64]; 2], b: &[[u64; LANES]], ka: usize, kb: usize, mut p: Regs) -> Regs {
        let f = self.0.avx512f;
        let b = &b[ka..kb];
        let a = a.map(|x| &x[ka..ka + b.len()]);
        for (k, b) in b.iter().enumerate() {
            let v = self.load(b);
            for r in 0..2 {
                let x = self.splat(a[r][k]);
                for q in 0..REGS {
                    p[r][q] = f._mm512_add_epi64(p[r][q], self.xor_pop(x, v[q]));
                }
            }
        }
        p
    }

    #[inline(always)]
    fn test(
        self,
        a: [&[u64]; 2],
        b: &[[u64; LANES]],
        bias: &[u64],
        wl: u64,
        mut p: Regs,
    ) -> (Regs, Regs, bool) {
        let f512 = self.0.avx512f;
        let len = b.len();
        let bias = &bias[..=len];
        let a = a.map(|x| &x[..len]);
        let lo = self.splat(bias[0]);
        // no closures around the intrinsics: a closure does not have the
        // features, so they would not be inlined there
        let mut f = p;
        for r in 0..2 {
            for q in 0..REGS {
                f[r][q] = f512._mm512_sub_epi64(p[r][q], lo);
            }
        }
        for (k, b) in b.iter().enumerate() {
            let v = self.load(b);
            let lo = self.splat(bias[k + 1]);
            for r in 0..2 {
                let x = self.splat(a[r][k]);
                for q in 0..REGS {
                    let s = f512._mm512_add_epi64(p[r][q], self.xor_pop(x, v[q]));
                    p[r][q] = s;
                    f[r][q] = f512._mm512_max_epu64(f[r][q], f512._mm512_sub_epi64(s, lo));
                }
            }
        }
        // the lanes' maximum against W_m by one mask compare (no horizontal
        // reduction on this path, which every chunk of every group takes)
        let mut m = f[0][0];
        for &x in f.as_flattened() {
            m = f512._mm512_max_epu64(m, x);
        }
        (p, f, f512._mm512_cmpgt_epu64_mask(m, self.splat(wl)) != 0)
    }

    /// One unsigned compare per register into a lane mask (the lanes of
    /// register q of row r are r·LANES + 8q … + 7).
    #[inline(always)]
    fn left(self, f: &Regs, wl: i64) -> u64 {
        if wl < 0 {
            return !0;
        }
        let w = self.splat(wl as u64);
        let mut out = 0u64;
        for (r, f) in f.iter().enumerate() {
            for (q, &x) in f.iter().enumerate() {
                let m = self.0.avx512f._mm512_cmpgt_epu64_mask(x, w);
                out |= u64::from(m) << (r * LANES + 8 * q);
            }
        }
        out
    }

    #[inline(always)]
    fn lane(acc: &Regs, r: usize, i: usize) -> u64 {
        let x: [u64; 8] = pulp::cast(acc[r][i / 8]);
        x[i % 8]
    }
}
