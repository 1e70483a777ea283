//! Exact inner products of ±1 vectors by popcount (the sparse construction's
//! Gram certificate).
//!
//! A sign vector s ∈ {±1}^d is stored as d bits (bit 1 = −1), padded with zeros
//! to whole 64-bit words. For two rows, ⟨s_l, s_j⟩ = d − 2·popcount(s_l ⊕ s_j):
//! each coordinate contributes +1 when the signs agree and −1 when they differ,
//! and the zero padding agrees. Everything is exact integer arithmetic.

/// An n × d matrix of signs, bit-packed by rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignMatrix {
    n: usize,
    d: usize,
    words: usize,
    bits: Vec<u64>,
}

impl SignMatrix {
    /// Builds the matrix from `sign(l, c)`: `true` means −1.
    pub fn from_fn(
        n: usize,
        d: usize,
        mut negative: impl FnMut(usize, usize) -> bool,
    ) -> SignMatrix {
        let words = d.div_ceil(64);
        let mut bits = vec![0u64; n * words];
        for l in 0..n {
            for c in 0..d {
                if negative(l, c) {
                    bits[l * words + c / 64] |= 1u64 << (c % 64);
                }
            }
        }
        SignMatrix { n, d, words, bits }
    }

    /// Builds the matrix from packed rows (`words = ⌈d/64⌉` words per row; bits at
    /// columns ≥ d must be zero, else `None`).
    pub fn from_words(n: usize, d: usize, bits: Vec<u64>) -> Option<SignMatrix> {
        let words = d.div_ceil(64);
        if bits.len() != n * words {
            return None;
        }
        if !d.is_multiple_of(64) {
            let mask = !0u64 << (d % 64);
            if (0..n).any(|l| bits[l * words + words - 1] & mask != 0) {
                return None;
            }
        }
        Some(SignMatrix { n, d, words, bits })
    }

    /// Rows n.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Columns d.
    pub fn d(&self) -> usize {
        self.d
    }
    /// Words per row.
    pub fn words_per_row(&self) -> usize {
        self.words
    }
    /// The packed words of row `l`.
    pub fn row(&self, l: usize) -> &[u64] {
        &self.bits[l * self.words..(l + 1) * self.words]
    }
    /// All packed words, row after row.
    pub fn words(&self) -> &[u64] {
        &self.bits
    }
    /// The sign at (l, c): +1 or −1.
    pub fn sign(&self, l: usize, c: usize) -> i64 {
        if self.bits[l * self.words + c / 64] >> (c % 64) & 1 == 1 {
            -1
        } else {
            1
        }
    }

    /// ⟨s_l, s_j⟩ = d − 2·popcount(s_l ⊕ s_j), exactly.
    pub fn inner(&self, l: usize, j: usize) -> i64 {
        let x: u32 = self
            .row(l)
            .iter()
            .zip(self.row(j))
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        self.d as i64 - 2 * x as i64
    }

    /// The matrix of the first `d` columns (d ≤ self.d()): the nested prefix S[:, 0..d].
    pub fn prefix(&self, d: usize) -> SignMatrix {
        assert!(d <= self.d, "prefix wider than the matrix");
        let w = d.div_ceil(64);
        let mask = if d.is_multiple_of(64) {
            !0u64
        } else {
            (1u64 << (d % 64)) - 1
        };
        let mut bits = Vec::with_capacity(self.n * w);
        for l in 0..self.n {
            bits.extend_from_slice(&self.row(l)[..w]);
            if w > 0 {
                *bits.last_mut().expect("w > 0") &= mask;
            }
        }
        SignMatrix {
            n: self.n,
            d,
            words: w,
            bits,
        }
    }

    /// max_{l ≠ j} |⟨s_l, s_j⟩| and a pair attaining it (the smallest (l, j) in
    /// lexicographic order among the maximisers, so the result does not depend on
    /// the thread count nor on the instruction set). `None` when n < 2.
    ///
    /// Streaming and blocked (see [`SignMatrix::for_each_pair_in_tile`]): memory
    /// O(n·d/64), never the n × n Gram matrix; row tiles run on the rayon pool
    /// and the reduction is a total order, so any schedule gives the same answer.
    /// Compiled for the best instruction set this CPU has ([`GramBuild::Best`]); every
    /// build computes the same exact integers.
    pub fn max_abs_offdiag(&self) -> Option<(i64, (usize, usize))> {
        self.best().max_abs_offdiag()
    }

    /// The number of pairs l < j with |⟨s_l, s_j⟩| > `bound` (blocked, parallel,
    /// exact).
    pub fn count_offdiag_above(&self, bound: i64) -> u64 {
        self.best().count_offdiag_above(bound)
    }

    /// The lexicographically smallest pair (l, j), l < j, with |⟨s_l, s_j⟩| >
    /// `bound`, and that value; `None` when every off-diagonal entry is within
    /// the bound (so C(t) holds for bound = ⌊t·d⌋). Stops early: row tiles after
    /// the first one with a violation are not scanned.
    pub fn first_offdiag_above(&self, bound: i64) -> Option<(i64, (usize, usize))> {
        self.best().first_offdiag_above(bound)
    }

    /// The scans compiled for `build`, or `None` when this CPU lacks it (the
    /// conformance tests force each build through this).
    pub fn scan(&self, build: GramBuild) -> Option<GramScan<'_>> {
        let build = build.resolve()?;
        let lanes = match build {
            GramBuild::Scalar | GramBuild::Best => Vec::new(),
            _ => self.interleave(),
        };
        Some(GramScan {
            s: self,
            build,
            lanes,
        })
    }

    fn best(&self) -> GramScan<'_> {
        self.scan(GramBuild::Best)
            .expect("GramBuild::Best resolves on every CPU (Scalar at worst)")
    }

    /// The rows interleaved LANES at a time for the vector builds: entry
    /// g·words + k holds word k of rows LANES·g … LANES·g + LANES − 1 (zero rows
    /// past n), so one vector of word k meets LANES rows j at once and the
    /// popcounts of LANES pairs accumulate lane-wise, with no horizontal sum.
    fn interleave(&self) -> Vec<[u64; LANES]> {
        let (n, w) = (self.n, self.words);
        let groups = n.div_ceil(LANES);
        let mut v = vec![[0u64; LANES]; groups * w];
        for (l, row) in self.bits.chunks_exact(w.max(1)).take(n).enumerate() {
            for (k, &x) in row.iter().enumerate() {
                v[(l / LANES) * w + k][l % LANES] = x;
            }
        }
        v
    }

    /// The row tiles of the blocked scans: rows `lo..hi`, ROW_TILE rows each.
    pub fn tiles(&self) -> Vec<(usize, usize)> {
        (0..self.n)
            .step_by(ROW_TILE)
            .map(|lo| (lo, (lo + ROW_TILE).min(self.n)))
            .collect()
    }

    /// Calls `visit(l, j, popcount(s_l ⊕ s_j))` for every pair l < j with l in the
    /// row tile `lo..hi` (and j anywhere above l), in a cache-blocked order: the
    /// rows j are taken COL_TILE at a time (a block that stays in L2) and each
    /// row l of the tile meets them four at a time (one load of s_l's word feeds
    /// four XOR-popcounts, four independent accumulators). The order of visits
    /// is fixed but not lexicographic. This is the portable scalar scan
    /// ([`GramBuild::Scalar`]); [`GramScan::for_each_pair_in_tile`] runs any build.
    pub fn for_each_pair_in_tile(
        &self,
        (lo, hi): (usize, usize),
        mut visit: impl FnMut(usize, usize, u32),
    ) {
        let w = self.words;
        let n = self.n;
        let mut jb = lo + 1;
        while jb < n {
            let je = (jb + COL_TILE).min(n);
            let top = hi.min(je);
            let mut l = lo;
            while l < top {
                if l + 1 < top {
                    // Two rows l, l + 1 against four rows j at a time: six loads
                    // feed eight XOR-popcounts.
                    let (a, b) = (self.row(l), self.row(l + 1));
                    if l + 1 >= jb {
                        visit(l, l + 1, xor_pop(a, b));
                    }
                    let mut j = jb.max(l + 2);
                    while j + 4 <= je {
                        let c = pop2x4(a, b, &self.bits[j * w..(j + 4) * w]);
                        for (i, &x) in c[0].iter().enumerate() {
                            visit(l, j + i, x);
                        }
                        for (i, &x) in c[1].iter().enumerate() {
                            visit(l + 1, j + i, x);
                        }
                        j += 4;
                    }
                    while j < je {
                        let r = self.row(j);
                        visit(l, j, xor_pop(a, r));
                        visit(l + 1, j, xor_pop(b, r));
                        j += 1;
                    }
                    l += 2;
                } else {
                    let a = self.row(l);
                    let mut j = jb.max(l + 1);
                    while j + 4 <= je {
                        let c = pop4(a, &self.bits[j * w..(j + 4) * w]);
                        for (i, &x) in c.iter().enumerate() {
                            visit(l, j + i, x);
                        }
                        j += 4;
                    }
                    while j < je {
                        visit(l, j, xor_pop(a, self.row(j)));
                        j += 1;
                    }
                    l += 1;
                }
            }
            jb = je;
        }
    }
}

/// Rows per tile of the blocked scans (the unit of parallel work).
const ROW_TILE: usize = 64;
/// Rows j per inner block (COL_TILE · d/8 bytes: 80 KB at d = 2485).
const COL_TILE: usize = 256;

fn better(a: (i64, (usize, usize)), b: (i64, (usize, usize))) -> (i64, (usize, usize)) {
    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
        b
    } else {
        a
    }
}

/// The instruction sets the Gram scans are compiled for, chosen at run time
/// (pulp's dispatch: the kernel itself has no `unsafe`). Every build computes the
/// same exact integers and visits the same pairs; the conformance suite checks
/// each one this CPU has against [`GramBuild::Scalar`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GramBuild {
    /// The first of the builds below that this CPU has.
    Best,
    /// x86-64-v4 with AVX512-VPOPCNTDQ: one VPOPCNTQ counts 8 words.
    Avx512Vpopcnt,
    /// x86-64-v4 (AVX-512 without VPOPCNTDQ: LLVM counts bits by byte table).
    Avx512,
    /// x86-64-v3 (AVX2, byte-table popcount on 256-bit vectors).
    Avx2,
    /// The portable scan: scalar code, POPCNT where the target has it.
    Scalar,
}

impl GramBuild {
    /// Every build, [`GramBuild::Best`] first.
    pub const ALL: [GramBuild; 5] = [
        GramBuild::Best,
        GramBuild::Avx512Vpopcnt,
        GramBuild::Avx512,
        GramBuild::Avx2,
        GramBuild::Scalar,
    ];

    /// Whether this CPU runs the build.
    pub fn available(self) -> bool {
        match self {
            GramBuild::Best | GramBuild::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            GramBuild::Avx512Vpopcnt => V4Popcnt::is_available(),
            #[cfg(target_arch = "x86_64")]
            GramBuild::Avx512 => pulp::x86::V4::is_available(),
            #[cfg(target_arch = "x86_64")]
            GramBuild::Avx2 => pulp::x86::V3::is_available(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The build that runs: `Best` becomes the first available one.
    fn resolve(self) -> Option<GramBuild> {
        match self {
            GramBuild::Best => GramBuild::ALL[1..].iter().copied().find(|b| b.available()),
            b => b.available().then_some(b),
        }
    }
}

#[cfg(target_arch = "x86_64")]
pulp::simd_type! {
    /// pulp's x86-64-v4 (`pulp::x86::V4`) plus AVX512-VPOPCNTDQ, which that level
    /// lacks: code vectorised under it counts 8 words per VPOPCNTQ. Public so that
    /// `sparse::dimension`'s scan uses the same feature set, not a copy of it.
    pub struct V4Popcnt {
        pub sse: "sse",
        pub sse2: "sse2",
        pub fxsr: "fxsr",
        pub sse3: "sse3",
        pub ssse3: "ssse3",
        pub sse4_1: "sse4.1",
        pub sse4_2: "sse4.2",
        pub popcnt: "popcnt",
        pub avx: "avx",
        pub avx2: "avx2",
        pub bmi1: "bmi1",
        pub bmi2: "bmi2",
        pub fma: "fma",
        pub lzcnt: "lzcnt",
        pub avx512f: "avx512f",
        pub avx512bw: "avx512bw",
        pub avx512cd: "avx512cd",
        pub avx512dq: "avx512dq",
        pub avx512vl: "avx512vl",
        pub avx512vpopcntdq: "avx512vpopcntdq",
    }
}

/// The Gram scans of one [`SignMatrix`] compiled for one [`GramBuild`] (from
/// [`SignMatrix::scan`]). The vector builds hold the rows interleaved LANES at a
/// time (one more copy of the matrix, O(n·d/64) words).
#[derive(Debug)]
pub struct GramScan<'a> {
    s: &'a SignMatrix,
    build: GramBuild,
    lanes: Vec<[u64; LANES]>,
}

impl GramScan<'_> {
    /// The build that runs (never [`GramBuild::Best`]).
    pub fn build(&self) -> GramBuild {
        self.build
    }

    /// As [`SignMatrix::max_abs_offdiag`], in this build.
    pub fn max_abs_offdiag(&self) -> Option<(i64, (usize, usize))> {
        use rayon::prelude::*;
        if self.s.n < 2 {
            return None;
        }
        let d = self.s.d as i64;
        self.s
            .tiles()
            .into_par_iter()
            .map(|t| {
                let mut m = Max {
                    d,
                    best: (-1i64, (usize::MAX, usize::MAX)),
                };
                self.visit_tile(t, &mut m);
                m.best
            })
            .filter(|b| b.0 >= 0)
            .reduce_with(better)
    }

    /// As [`SignMatrix::count_offdiag_above`], in this build.
    pub fn count_offdiag_above(&self, bound: i64) -> u64 {
        use rayon::prelude::*;
        let d = self.s.d as i64;
        self.s
            .tiles()
            .into_par_iter()
            .map(|t| {
                let mut c = Count { d, bound, c: 0 };
                self.visit_tile(t, &mut c);
                c.c
            })
            .sum()
    }

    /// As [`SignMatrix::first_offdiag_above`], in this build.
    pub fn first_offdiag_above(&self, bound: i64) -> Option<(i64, (usize, usize))> {
        use rayon::prelude::*;
        let d = self.s.d as i64;
        self.s
            .tiles()
            .into_par_iter()
            .filter_map(|t| {
                let mut f = First {
                    d,
                    bound,
                    first: None,
                };
                self.visit_tile(t, &mut f);
                f.first
            })
            .find_first(|_| true)
    }

    /// As [`SignMatrix::for_each_pair_in_tile`] (every pair l < j with l in
    /// `lo..hi`, once, with popcount(s_l ⊕ s_j)), in this build; the order of
    /// the visits depends on the build.
    pub fn for_each_pair_in_tile(&self, t: (usize, usize), visit: impl FnMut(usize, usize, u32)) {
        self.visit_tile(t, &mut All(visit));
    }

    /// The pairs of the row tile `t`, in this build. The vector builds skip
    /// whole register blocks of pairs that `v.window()` says cannot matter.
    fn visit_tile<V: Visit>(&self, t: (usize, usize), v: &mut V) {
        match self.build {
            GramBuild::Best | GramBuild::Scalar => {
                self.s.for_each_pair_in_tile(t, |l, j, x| v.visit(l, j, x))
            }
            #[cfg(target_arch = "x86_64")]
            GramBuild::Avx512Vpopcnt => V4Popcnt::try_new()
                .expect("checked by GramBuild::available")
                .vectorize(
                    #[inline(always)]
                    move || {
                        // moved, not reborrowed: the closure is FnOnce, so
                        // pulp's target-feature function inlines its body
                        let v = v;
                        self.lanes_in_tile::<4, 2, V>(t, v)
                    },
                ),
            #[cfg(target_arch = "x86_64")]
            GramBuild::Avx512 => pulp::x86::V4::try_new()
                .expect("checked by GramBuild::available")
                .vectorize(
                    #[inline(always)]
                    move || {
                        // moved, not reborrowed: the closure is FnOnce, so
                        // pulp's target-feature function inlines its body
                        let v = v;
                        self.lanes_in_tile::<4, 2, V>(t, v)
                    },
                ),
            #[cfg(target_arch = "x86_64")]
            GramBuild::Avx2 => pulp::x86::V3::try_new()
                .expect("checked by GramBuild::available")
                .vectorize(
                    #[inline(always)]
                    move || {
                        // moved, not reborrowed: the closure is FnOnce, so
                        // pulp's target-feature function inlines its body
                        let v = v;
                        self.lanes_in_tile::<2, 1, V>(t, v)
                    },
                ),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("no vector build resolves off x86-64"),
        }
    }

    /// The vector scan of the row tile `lo..hi`: the groups of LANES rows j are
    /// taken COL_TILE rows at a time (a block that stays in L2), and R rows l
    /// at a time meet G groups at a time ([`lanes`]: R·G·LANES popcounts in
    /// registers). Lanes with j ≤ l (the diagonal group) or j ≥ n (zero rows
    /// padding the last group) are computed and not visited. A register block
    /// whose popcounts all lie strictly inside `v.window()` is not visited.
    #[inline(always)]
    fn lanes_in_tile<const R: usize, const G: usize, V: Visit>(
        &self,
        (lo, hi): (usize, usize),
        v: &mut V,
    ) {
        let n = self.s.n;
        let groups = n.div_ceil(LANES);
        let block = COL_TILE / LANES;
        let mut gb = (lo + 1) / LANES;
        while gb < groups {
            let ge = (gb + block).min(groups);
            let mut l = lo;
            while l < hi {
                let r = if l + R <= hi { R } else { 1 };
                // the first group holding a row j > l
                let mut g = gb.max((l + 1) / LANES);
                if r == R {
                    let a: [&[u64]; R] = core::array::from_fn(|i| self.s.row(l + i));
                    while g + G <= ge {
                        let c = core::hint::black_box(lanes::<R, G>(
                            a,
                            core::array::from_fn(|q| self.group(g + q)),
                        ));
                        visit_lanes(n, l, g, &c, v);
                        g += G;
                    }
                    while g < ge {
                        let c = core::hint::black_box(lanes::<R, 1>(a, [self.group(g)]));
                        visit_lanes(n, l, g, &c, v);
                        g += 1;
                    }
                } else {
                    let a = [self.s.row(l)];
                    while g + G <= ge {
                        let c = core::hint::black_box(lanes::<1, G>(
                            a,
                            core::array::from_fn(|q| self.group(g + q)),
                        ));
                        visit_lanes(n, l, g, &c, v);
                        g += G;
                    }
                    while g < ge {
                        let c = core::hint::black_box(lanes::<1, 1>(a, [self.group(g)]));
                        visit_lanes(n, l, g, &c, v);
                        g += 1;
                    }
                }
                l += r;
            }
            gb = ge;
        }
    }

    /// Word k of the rows of group g, for every k.
    #[inline(always)]
    fn group(&self, g: usize) -> &[[u64; LANES]] {
        let w = self.s.words;
        &self.lanes[g * w..(g + 1) * w]
    }
}

/// A scan's use of the pairs it is shown.
trait Visit {
    /// Pair (l, j), l < j, with popcount(s_l ⊕ s_j) = x.
    fn visit(&mut self, l: usize, j: usize, x: u32);
    /// (lo, hi): a pair whose popcount x has lo < x < hi would change nothing now
    /// (the vector builds then skip it; the answer does not depend on it).
    fn window(&self) -> (i64, i64);
}

/// The popcounts x with |d − 2x| < m: lo < x < hi for lo = ⌊(d − m)/2⌋ and hi =
/// ⌈(d + m)/2⌉ (empty when m ≤ 0). For integers, d − 2x ≥ m ⟺ x ≤ ⌊(d − m)/2⌋ and
/// 2x − d ≥ m ⟺ x ≥ ⌈(d + m)/2⌉.
fn below(d: i64, m: i64) -> (i64, i64) {
    (
        (d.saturating_sub(m)).div_euclid(2),
        -(d.saturating_add(m).saturating_neg()).div_euclid(2),
    )
}

/// Every pair (the public `for_each_pair_in_tile`).
struct All<F>(F);
impl<F: FnMut(usize, usize, u32)> Visit for All<F> {
    #[inline(always)]
    fn visit(&mut self, l: usize, j: usize, x: u32) {
        (self.0)(l, j, x)
    }
    #[inline(always)]
    fn window(&self) -> (i64, i64) {
        (i64::MAX, i64::MIN)
    }
}

/// The largest |⟨s_l, s_j⟩| and its smallest pair: pairs below the best so far
/// change nothing.
struct Max {
    d: i64,
    best: (i64, (usize, usize)),
}
impl Visit for Max {
    #[inline(always)]
    fn visit(&mut self, l: usize, j: usize, x: u32) {
        let v = (self.d - 2 * i64::from(x)).abs();
        if v > self.best.0 || (v == self.best.0 && (l, j) < self.best.1) {
            self.best = (v, (l, j));
        }
    }
    #[inline(always)]
    fn window(&self) -> (i64, i64) {
        below(self.d, self.best.0)
    }
}

/// The number of pairs with |⟨s_l, s_j⟩| > bound.
struct Count {
    d: i64,
    bound: i64,
    c: u64,
}
impl Visit for Count {
    #[inline(always)]
    fn visit(&mut self, _: usize, _: usize, x: u32) {
        self.c += u64::from((self.d - 2 * i64::from(x)).abs() > self.bound);
    }
    #[inline(always)]
    fn window(&self) -> (i64, i64) {
        below(self.d, self.bound.saturating_add(1))
    }
}

/// The smallest pair with |⟨s_l, s_j⟩| > bound.
struct First {
    d: i64,
    bound: i64,
    first: Option<(i64, (usize, usize))>,
}
impl Visit for First {
    #[inline(always)]
    fn visit(&mut self, l: usize, j: usize, x: u32) {
        let v = (self.d - 2 * i64::from(x)).abs();
        if v > self.bound && self.first.is_none_or(|f| (l, j) < f.1) {
            self.first = Some((v, (l, j)));
        }
    }
    #[inline(always)]
    fn window(&self) -> (i64, i64) {
        below(self.d, self.bound.saturating_add(1))
    }
}

/// Shows `v` the pairs of one register block (rows l + r, groups g + q), unless
/// every popcount in it lies strictly inside `v.window()`.
#[inline(always)]
fn visit_lanes<const R: usize, const G: usize, V: Visit>(
    n: usize,
    l: usize,
    g: usize,
    c: &[[[u64; LANES]; G]; R],
    v: &mut V,
) {
    let (lo, hi) = v.window();
    // the extremes first: one contiguous min/max reduction (vector min/max)
    let (mut mn, mut mx) = (u64::MAX, 0u64);
    for &x in c.as_flattened().as_flattened() {
        (mn, mx) = (mn.min(x), mx.max(x));
    }
    // popcounts are at most d < 2^63, so the casts are exact
    if lo < mn as i64 && (mx as i64) < hi {
        return;
    }
    for (r, c) in c.iter().enumerate() {
        for (q, lanes) in c.iter().enumerate() {
            for (i, &x) in lanes.iter().enumerate() {
                let j = (g + q) * LANES + i;
                if j > l + r && j < n {
                    // x ≤ d: the count of differing columns
                    v.visit(l + r, j, x as u32);
                }
            }
        }
    }
}

/// Rows per interleaved group: one 512-bit vector of 64-bit words.
const LANES: usize = 8;

/// popcount(a_r ⊕ s_j) for the R rows a_r and the G·LANES rows j of the groups
/// `v` (lane i of group q: row j = LANES·q + i of the block), all words summed:
/// per word, R broadcasts and G vector loads feed R·G vector XOR-popcounts into
/// R·G accumulators (LLVM vectorises the lane loop under the build's features).
#[inline(always)]
fn lanes<const R: usize, const G: usize>(
    a: [&[u64]; R],
    v: [&[[u64; LANES]]; G],
) -> [[[u64; LANES]; G]; R] {
    let w = a[0].len();
    let a = a.map(|x| &x[..w]);
    let v = v.map(|x| &x[..w]);
    let mut acc = [[[0u64; LANES]; G]; R];
    // After k words each accumulator is at most 64·k ≤ 64·w, the bits of a row
    // (< 2^64), so nothing here can overflow: the wrapping form is the plain sum
    // without the release build's overflow checks, which stop LLVM vectorising.
    for k in 0..w {
        for r in 0..R {
            let x = a[r][k];
            for q in 0..G {
                let p = &v[q][k];
                for i in 0..LANES {
                    acc[r][q][i] = acc[r][q][i].wrapping_add(u64::from((x ^ p[i]).count_ones()));
                }
            }
        }
    }
    acc
}

/// popcount(a ⊕ b) over whole rows.
#[inline]
pub fn xor_pop(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// popcount(a ⊕ b_i) and popcount(a' ⊕ b_i) for the four consecutive rows
/// b_0..b_3 packed in `b` (b.len() = 4·a.len()).
#[inline(always)]
fn pop2x4(a: &[u64], a2: &[u64], b: &[u64]) -> [[u32; 4]; 2] {
    let w = a.len();
    let (b0, r) = b.split_at(w);
    let (b1, r) = r.split_at(w);
    let (b2, b3) = r.split_at(w);
    let (b3, a2) = (&b3[..w], &a2[..w]);
    let mut c = [[0u32; 4]; 2];
    for k in 0..w {
        let (x, y) = (a[k], a2[k]);
        let (z0, z1, z2, z3) = (b0[k], b1[k], b2[k], b3[k]);
        c[0][0] += (x ^ z0).count_ones();
        c[0][1] += (x ^ z1).count_ones();
        c[0][2] += (x ^ z2).count_ones();
        c[0][3] += (x ^ z3).count_ones();
        c[1][0] += (y ^ z0).count_ones();
        c[1][1] += (y ^ z1).count_ones();
        c[1][2] += (y ^ z2).count_ones();
        c[1][3] += (y ^ z3).count_ones();
    }
    c
}

/// popcount(a ⊕ b_i) for the four consecutive rows b_0..b_3 packed in `b`
/// (b.len() = 4·a.len()).
#[inline(always)]
fn pop4(a: &[u64], b: &[u64]) -> [u32; 4] {
    let w = a.len();
    let (b0, r) = b.split_at(w);
    let (b1, r) = r.split_at(w);
    let (b2, b3) = r.split_at(w);
    let (b3, a) = (&b3[..w], &a[..w]);
    let mut c = [0u32; 4];
    for k in 0..w {
        let x = a[k];
        c[0] += (x ^ b0[k]).count_ones();
        c[1] += (x ^ b1[k]).count_ones();
        c[2] += (x ^ b2[k]).count_ones();
        c[3] += (x ^ b3[k]).count_ones();
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn inner_products_are_exact() {
        let f = |l: usize, c: usize| (l * 7 + c * 3) % 5 < 2;
        let s = SignMatrix::from_fn(5, 130, f);
        for l in 0..5 {
            for j in 0..5 {
                let naive: i64 = (0..130).map(|c| s.sign(l, c) * s.sign(j, c)).sum();
                assert_eq!(s.inner(l, j), naive);
            }
            assert_eq!(s.inner(l, l), 130);
        }
        let (m, (l, j)) = s.max_abs_offdiag().unwrap();
        assert_eq!(s.inner(l, j).abs(), m);
    }

    /// The vector builds skip a register block when every popcount x in it has
    /// lo < x < hi for (lo, hi) = below(d, m): exactly the x with |d − 2x| < m.
    #[test]
    fn the_skip_window_is_exactly_the_popcounts_below_the_threshold() {
        for d in 0..140i64 {
            for m in [
                i64::MIN,
                -5,
                -1,
                0,
                1,
                2,
                3,
                d / 2,
                d - 1,
                d,
                d + 1,
                d + 2,
                i64::MAX,
            ] {
                let (lo, hi) = below(d, m);
                for x in 0..=d {
                    assert_eq!(
                        lo < x && x < hi,
                        (d - 2 * x).abs() < m,
                        "d {d}, m {m}, x {x}"
                    );
                }
            }
        }
        assert_eq!(All(|_, _, _| ()).window(), (i64::MAX, i64::MIN));
    }
}
