//! The Gram hot loop and the dimension scans (checks of the project's
//! reconstruction of Likhosherstov–Choromanski–Weller; provenance "derived"):
//! thread-count independence, seeded sampling, min_dimension against a brute-force
//! scan, and the union-bound dimension table of sparse.md §5. The kernel's blocked
//! popcount scans (`SignMatrix`) are checked against naive i64 arithmetic in the
//! kernel crate (crates/attncheck-kernel/tests/conformance/signs.rs).

#![allow(clippy::needless_range_loop)] // index loops mirror the naive definition

use attncheck::kernel::SignMatrix;
use attncheck::sparse::dimension::{
    min_dimension, min_dimension_of, min_dimension_of_build, min_dimension_of_scalar,
    union_bound_dimension, Build,
};
use attncheck::sparse::sample::draw_signs;
use proptest::prelude::*;
use rug::ops::Pow;
use rug::{Integer, Rational};

fn with_threads<T: Send>(k: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(k)
        .build()
        .unwrap()
        .install(f)
}

/// Rows with many exact ties and near-duplicates (so the tie-break matters).
fn tied(n: usize, d: usize, seed: u64) -> SignMatrix {
    let base = draw_signs(4, d, seed);
    SignMatrix::from_fn(n, d, |l, c| {
        base.sign(l % 4, c) < 0 || (c == l % d.max(1) && l % 3 == 0)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn min_dimension_equals_brute_force(
        n in prop::sample::select(vec![2usize, 3, 9, 31, 32, 33, 40, 70, 100]),
        d_max in 1usize..300,
        seed in any::<u64>(),
        t in prop::sample::select(vec![(0i64, 1i64), (1, 8), (1, 4), (1, 3), (1, 2), (3, 4), (1, 1)]),
    ) {
        let t = Rational::from(t);
        let s = draw_signs(n, d_max, seed);
        let g: Vec<Vec<i64>> = (0..n).map(|_| vec![0; n]).collect();
        let mut g = g;
        let mut want = None;
        for d in 1..=d_max {
            let mut ok = true;
            for l in 0..n {
                for j in 0..n {
                    g[l][j] += s.sign(l, d - 1) * s.sign(j, d - 1);
                    if l != j && g[l][j].abs() > Rational::from(&t * d as u64) {
                        ok = false;
                    }
                }
            }
            if ok {
                want = Some(d);
                break;
            }
        }
        prop_assert_eq!(min_dimension_of(&s, &t), want);
        prop_assert_eq!(min_dimension_of_scalar(&s, &t), want);
        prop_assert_eq!(min_dimension(n, &t, seed, d_max), want);
        if let Some(d) = want {
            let p = s.prefix(d);
            let bound = Rational::from(&t * d as u64).floor().numer().to_i64().unwrap();
            prop_assert!(p.max_abs_offdiag().is_none_or(|m| m.0 <= bound));
            prop_assert_eq!(p.first_offdiag_above(bound), None);
        }
    }
}

/// The brute-force answer of `min_dimension_of`: G_d grown column by column.
fn brute_min_dimension(s: &SignMatrix, t: &Rational) -> Option<usize> {
    let n = s.n();
    let mut g = vec![vec![0i64; n]; n];
    for d in 1..=s.d() {
        let mut max = 0i64;
        for l in 0..n {
            for j in l + 1..n {
                g[l][j] += s.sign(l, d - 1) * s.sign(j, d - 1);
                max = max.max(g[l][j].abs());
            }
        }
        // C(t) at d: every |G_d(l, j)| ≤ t·d (vacuous without pairs)
        if n < 2 || Rational::from(t * d as u64) >= max {
            return Some(d);
        }
    }
    None
}

/// Rows identical on their first `c` columns (every Gram entry c there), random
/// after: the answer falls late, often in the scan's second stage of words.
fn late(n: usize, d: usize, c: usize, seed: u64) -> SignMatrix {
    let r = draw_signs(n, d, seed);
    SignMatrix::from_fn(n, d, |l, col| col >= c && r.sign(l, col) < 0)
}

proptest! {
    /// The staged, chunked, shared-bitmap scan against brute force: any t = p/q
    /// (t ≤ 0, t ≥ 1, t·d an exact integer at many d), n < 2, d not a multiple of
    /// 64, d up to 7 words (two stages from 4 words on), matrices with ties and
    /// with late answers.
    #[test]
    fn min_dimension_equals_brute_force_any_t(
        n in prop::sample::select(vec![0usize, 1, 2, 3, 5, 31, 32, 33, 63, 64, 65, 97]),
        d in 1usize..=448,
        p in -3i64..=40,
        q in 1i64..=40,
        seed in any::<u64>(),
        kind in 0u8..3,
        c_frac in 0usize..=100,
    ) {
        let t = Rational::from((p, q));
        let s = match kind {
            0 => draw_signs(n, d, seed),
            1 => tied(n, d, seed),
            _ => late(n, d, d * c_frac / 100, seed),
        };
        every_build_is_brute_force(&s, &t)?;
    }
}

/// Random rows made identical on the columns c..c + len (every Gram entry grows
/// by one a column there): violations start and stop inside blocks, so blocks
/// are left with their clear bits near one end (the one-sided bounds of the scan,
/// module doc of `sparse::dimension::exact`).
fn bump(n: usize, d: usize, c: usize, len: usize, seed: u64) -> SignMatrix {
    let r = draw_signs(n, d, seed);
    SignMatrix::from_fn(n, d, |l, col| {
        !(c..c + len).contains(&col) && r.sign(l, col) < 0
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Blocks partly set at either end (a bump of identical columns starting and
    /// ending inside blocks), bits set by other tiles taken before a block is
    /// full: every build against brute force.
    #[test]
    fn min_dimension_equals_brute_force_with_bumps(
        n in prop::sample::select(vec![2usize, 3, 33, 64, 65, 97, 140]),
        d in 1usize..=700,
        p in 1i64..=6,
        q in 2i64..=12,
        seed in any::<u64>(),
        c_frac in 0usize..=100,
        len in 0usize..=200,
    ) {
        let t = Rational::from((p, q));
        let s = bump(n, d, d * c_frac / 100, len, seed);
        every_build_is_brute_force(&s, &t)?;
    }
}

/// The dispatched scan, the scalar one and every build this CPU runs give the
/// brute-force answer on `s`.
fn every_build_is_brute_force(s: &SignMatrix, t: &Rational) -> Result<(), TestCaseError> {
    let want = brute_min_dimension(s, t);
    prop_assert_eq!(min_dimension_of(s, t), want);
    prop_assert_eq!(min_dimension_of_scalar(s, t), want);
    for b in Build::ALL {
        if let Some(v) = min_dimension_of_build(s, t, b) {
            prop_assert_eq!(v, want, "{:?}", b);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Long runs of full blocks, which the scan only carries through (their
    /// popcounts summed eight or four words at a time by a carry-save tree, the
    /// rest word by word): d up to 18 words, not a multiple of 64, rows identical
    /// on a long prefix (every block there full after the first pair) then random,
    /// any t (t ≤ 0, t ≥ 1), n below, at and above one lane group, answers in
    /// either stage or none; every build against brute force.
    #[test]
    fn min_dimension_equals_brute_force_over_full_runs(
        n in prop::sample::select(vec![2usize, 3, 17, 32, 33, 64, 70]),
        d in 449usize..=1100,
        p in -1i64..=12,
        q in 1i64..=12,
        seed in any::<u64>(),
        c_frac in 40usize..=95,
    ) {
        let t = Rational::from((p, q));
        let s = late(n, d, d * c_frac / 100, seed);
        every_build_is_brute_force(&s, &t)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Many row tiles (64 rows each) and answers past the first stage boundary
    /// (⌈3w/4⌉ words), so tiles cover different word ranges: those that start
    /// before the blocks below the boundary are full stop there and are extended
    /// in a later pass, the others go on to ⌈7w/8⌉ or w at once. Every
    /// instruction-set build (VPOPCNTDQ, AVX-512, AVX2, where this CPU has them)
    /// against the portable scalar build and brute force, at 1 and 3 threads.
    #[test]
    fn min_dimension_builds_agree_across_tiles_and_stages(
        n in 129usize..=330,
        d in 300usize..=900,
        p in 1i64..=6,
        q in 2i64..=12,
        seed in any::<u64>(),
        c_frac in 0usize..=97,
    ) {
        let t = Rational::from((p, q));
        let s = late(n, d, d * c_frac / 100, seed);
        let want = brute_min_dimension(&s, &t);
        prop_assert_eq!(with_threads(1, || min_dimension_of_scalar(&s, &t)), want);
        for b in Build::ALL {
            for k in [1, 3] {
                if let Some(v) = with_threads(k, || min_dimension_of_build(&s, &t, b)) {
                    prop_assert_eq!(v, want, "{:?} at {} threads", b, k);
                }
            }
        }
    }
}

/// The shared bitmap of full blocks changes only how much work is skipped, never
/// the answer: 1 and 3 threads agree (and agree with brute force), on sizes with
/// many row tiles, a ragged tail and answers in either stage.
#[test]
fn min_dimension_is_the_same_at_1_and_3_threads() {
    for (n, d, seed, t, c) in [
        (700usize, 450usize, 3u64, (1i64, 4i64), 0usize),
        (513, 700, 4, (1, 4), 0),
        (300, 400, 5, (1, 2), 170),
        (130, 900, 6, (1, 3), 300),
    ] {
        let t = Rational::from(t);
        let s = late(n, d, c, seed);
        let want = brute_min_dimension(&s, &t);
        assert_eq!(
            with_threads(1, || min_dimension_of(&s, &t)),
            want,
            "n = {n}"
        );
        assert_eq!(
            with_threads(3, || min_dimension_of(&s, &t)),
            want,
            "n = {n}"
        );
        assert_eq!(
            with_threads(3, || min_dimension_of_scalar(&s, &t)),
            want,
            "n = {n}"
        );
        for b in Build::ALL {
            if let Some(v) = with_threads(3, || min_dimension_of_build(&s, &t, b)) {
                assert_eq!(v, want, "n = {n}, {b:?}");
            }
        }
    }
}

/// The dimension search (untrusted search on the kernel's `SignMatrix`) gives the same
/// answer at 1 and 2 threads; the kernel's own scans are checked the same way in
/// crates/attncheck-kernel/tests/conformance/signs.rs.
#[test]
fn thread_count_does_not_change_min_dimension() {
    for (n, d, seed) in [(200, 131, 7), (300, 65, 8), (257, 1000, 9)] {
        for s in [draw_signs(n, d, seed), tied(n, d, seed)] {
            let t = Rational::from((1, 4));
            assert_eq!(
                with_threads(1, || min_dimension_of(&s, &t)),
                with_threads(2, || min_dimension_of(&s, &t))
            );
        }
    }
}

#[test]
fn draw_signs_is_deterministic_and_seed_dependent() {
    for (n, d) in [(1, 1), (5, 63), (5, 64), (7, 130)] {
        let a = draw_signs(n, d, 2026);
        assert_eq!(a, draw_signs(n, d, 2026));
        assert_eq!((a.n(), a.d(), a.words_per_row()), (n, d, d.div_ceil(64)));
        if d % 64 != 0 {
            for l in 0..n {
                assert_eq!(
                    a.row(l).last().unwrap() >> (d % 64),
                    0,
                    "tail bits are masked"
                );
            }
        }
    }
    let a = draw_signs(64, 256, 1);
    let b = draw_signs(64, 256, 2);
    assert_ne!(a, b);
    // Balanced signs: about half of the 16,384 bits are −1 (±5σ = ±320).
    let ones: u32 = a.words().iter().map(|w| w.count_ones()).sum();
    assert!((8192 - 320..=8192 + 320).contains(&ones), "{ones}");
    // The first word is SplitMix64(seed)'s first output, verbatim.
    let mut r = attncheck::rng::SplitMix64::new(1);
    assert_eq!(a.row(0)[0], r.next_u64());
}

/// Moved from src/sparse/sample.rs's unit tests (the library is compiled once for the tests).
#[test]
fn deterministic_and_masked() {
    let a = draw_signs(7, 130, 42);
    assert_eq!(a, draw_signs(7, 130, 42));
    assert_ne!(a, draw_signs(7, 130, 43));
    assert_eq!(a.words_per_row(), 3);
    assert!(draw_signs(3, 0, 1).words().is_empty());
}

#[test]
fn union_bound_dimension_reproduces_section_5() {
    let delta = Rational::from((1, 100));
    let table = [
        (16u64, 325u64, 1300u64),
        (256, 503, 2010),
        (4096, 680, 2719),
        (65536, 858, 3429),
    ];
    for (n, quarter, eighth) in table {
        assert_eq!(
            union_bound_dimension(n, &Rational::from((1, 4)), &delta),
            Some(quarter),
            "n = {n}"
        );
        assert_eq!(
            union_bound_dimension(n, &Rational::from((1, 8)), &delta),
            Some(eighth),
            "n = {n}"
        );
    }
    // n²/δ = 1: exactly 0.
    assert_eq!(
        union_bound_dimension(1, &Rational::from((1, 4)), &Rational::from(1)),
        Some(0)
    );
}

/// Regression: a tiny t made `union_bound_dimension` panic ("d_ub fits in u64") and
/// `run sparse/log-dimension` abort. It is `None` now, never a panic, and so are t ≤ 0
/// and δ ≤ 0.
#[test]
fn union_bound_dimension_of_a_tiny_t_is_none_not_a_panic() {
    let tiny = Rational::from((1, Integer::from(10).pow(30u32)));
    let delta = Rational::from((1, 100));
    assert_eq!(union_bound_dimension(16, &tiny, &delta), None);
    assert_eq!(union_bound_dimension(16, &Rational::from(0), &delta), None);
    assert_eq!(
        union_bound_dimension(16, &Rational::from((1, 4)), &Rational::from(0)),
        None
    );
    // t = 2^-20: d_ub = 2^41·ln(25600) ≈ 2.2·10^13 fits in a u64, so it is computed
    let small = Rational::from((1, 1u64 << 20));
    assert!(union_bound_dimension(16, &small, &delta).is_some());
}

#[test]
fn min_dimension_at_the_union_bound_scale() {
    // n = 256, t = 1/4: d_min ≤ d_ub = 503 for this seed, and C(t) holds there
    // and fails one column earlier (exact, by the popcount scan).
    let t = Rational::from((1, 4));
    let d = min_dimension(256, &t, 11, 604).expect("found below 1.2·d_ub");
    assert!(d <= 503, "{d}");
    let s = draw_signs(256, 604, 11);
    let ok = |d: usize| s.prefix(d).first_offdiag_above(d as i64 / 4).is_none();
    assert!(ok(d));
    assert!(!ok(d - 1));
}

#[test]
fn min_dimension_equals_prefix_gram_scans() {
    // Independent check at a larger size: every prefix certified by the blocked
    // Gram scan (a different code path), t = 1/4 and t = 1/3.
    for (seed, (p, q)) in [(1u64, (1u64, 4u64)), (2, (1, 4)), (3, (1, 3))] {
        let t = Rational::from((p, q));
        let s = draw_signs(300, 560, seed);
        let want = (1..=560).find(|&d| {
            s.prefix(d)
                .max_abs_offdiag()
                .is_some_and(|m| m.0 as u64 * q <= p * d as u64)
        });
        assert!(want.is_some());
        assert_eq!(min_dimension_of(&s, &t), want, "seed {seed}");
        assert_eq!(min_dimension_of_scalar(&s, &t), want, "seed {seed}");
    }
}

#[test]
fn vector_and_scalar_scans_agree_at_scale() {
    // The dispatched (AVX-512 / AVX2 / NEON) build and the portable scalar build
    // of the same scan, on sizes with full lane groups, a ragged tail and a
    // partial last word; n = 2^12 at t = 1/8 is a log-dimension point.
    for (n, d, seed, t) in [
        (4096, 2719, 5u64, (1, 8)),
        (1000, 700, 6, (1, 4)),
        (777, 333, 7, (1, 3)),
    ] {
        let t = Rational::from(t);
        let s = draw_signs(n, d, seed);
        let v = min_dimension_of(&s, &t);
        assert!(v.is_some(), "n = {n}");
        assert_eq!(v, min_dimension_of_scalar(&s, &t), "n = {n}");
        for b in Build::ALL {
            if let Some(v2) = min_dimension_of_build(&s, &t, b) {
                assert_eq!(v, v2, "n = {n}, {b:?}");
            }
        }
    }
}
