//! The Gram scans of [`SignMatrix`] (bit-packed ±1 rows, exact inner products by
//! popcount; `max_abs_offdiag` decides `gram-max-abs`): the blocked, rayon-parallel
//! scans against naive i64 arithmetic, and thread-count independence; every
//! instruction-set build (`GramBuild`: AVX-512 with VPOPCNTDQ, AVX-512, AVX2, the
//! portable scalar scan) forced in turn and checked against the scalar one.

#![allow(clippy::needless_range_loop)] // index loops mirror the naive definition

use crate::common::random_signs as draw_signs;
use attncheck_kernel::{GramBuild, SignMatrix};
use proptest::prelude::*;

fn naive_gram(s: &SignMatrix, d: usize) -> Vec<Vec<i64>> {
    (0..s.n())
        .map(|l| {
            (0..s.n())
                .map(|j| (0..d).map(|c| s.sign(l, c) * s.sign(j, c)).sum())
                .collect()
        })
        .collect()
}

/// (max, smallest maximising pair) over l < j, by plain i64 arithmetic.
fn naive_max(s: &SignMatrix) -> Option<(i64, (usize, usize))> {
    let g = naive_gram(s, s.d());
    let mut best: Option<(i64, (usize, usize))> = None;
    for l in 0..s.n() {
        for j in l + 1..s.n() {
            if best.is_none_or(|b| g[l][j].abs() > b.0) {
                best = Some((g[l][j].abs(), (l, j)));
            }
        }
    }
    best
}

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
    fn blocked_scans_equal_naive(
        n in prop::sample::select(vec![2usize, 3, 65, 200]),
        d in prop::sample::select(vec![1usize, 3, 63, 64, 65, 127, 129, 131, 200]),
        seed in any::<u64>(),
        ties in any::<bool>(),
    ) {
        let s = if ties { tied(n, d, seed) } else { draw_signs(n, d, seed) };
        let want = naive_max(&s);
        prop_assert_eq!(s.max_abs_offdiag(), want);
        let scalar = s.scan(GramBuild::Scalar).unwrap();
        prop_assert_eq!(scalar.max_abs_offdiag(), want);
        let g = naive_gram(&s, d);
        let m = want.unwrap().0;
        for bound in [m - 1, m, m / 2] {
            let mut count = 0u64;
            let mut first = None;
            for l in 0..n {
                for j in l + 1..n {
                    if g[l][j].abs() > bound {
                        count += 1;
                        if first.is_none() {
                            first = Some((g[l][j].abs(), (l, j)));
                        }
                    }
                }
            }
            prop_assert_eq!(s.count_offdiag_above(bound), count);
            prop_assert_eq!(s.first_offdiag_above(bound), first);
            prop_assert_eq!(scalar.count_offdiag_above(bound), count);
            prop_assert_eq!(scalar.first_offdiag_above(bound), first);
        }
        for l in 0..n.min(5) {
            for j in 0..n.min(5) {
                prop_assert_eq!(s.inner(l, j), g[l][j]);
            }
        }
    }
}

/// The scans use rayon; their answers are the same at 1 and 2 threads, in every
/// build this CPU has (and the same as the scalar build's).
#[test]
fn thread_count_does_not_change_results() {
    for (n, d, seed) in [(200, 131, 7), (300, 65, 8), (257, 1000, 9)] {
        for s in [draw_signs(n, d, seed), tied(n, d, seed)] {
            let run = |b: GramBuild, k: usize| {
                with_threads(k, || {
                    let g = s.scan(b).unwrap();
                    (
                        g.max_abs_offdiag(),
                        g.count_offdiag_above(d as i64 / 4),
                        g.first_offdiag_above(d as i64 / 4),
                    )
                })
            };
            let want = run(GramBuild::Scalar, 1);
            for b in builds() {
                assert_eq!(run(b, 1), want, "{b:?}, 1 thread");
                assert_eq!(run(b, 2), want, "{b:?}, 2 threads");
            }
        }
    }
}

/// The builds this CPU runs (the others are reported, not tested: a CPU without
/// them cannot run them).
fn builds() -> Vec<GramBuild> {
    GramBuild::ALL
        .into_iter()
        .filter(|b| {
            let ok = b.available();
            if !ok {
                eprintln!("{b:?}: not on this CPU, not tested here");
            }
            ok
        })
        .collect()
}

/// All visits of `for_each_pair_in_tile` over the row range, sorted.
fn visits(s: &SignMatrix, b: GramBuild, t: (usize, usize)) -> Vec<(usize, usize, u32)> {
    let mut v = Vec::new();
    s.scan(b)
        .unwrap()
        .for_each_pair_in_tile(t, |l, j, x| v.push((l, j, x)));
    v.sort_unstable();
    v
}

/// One build against the scalar one on a random matrix: the three scans at
/// bounds around the maximum, and the visits of a random row range (the same
/// pairs, once each, with the same popcounts). Sizes straddle the 8-row lane
/// groups, the 64-row tiles and the 256-row column blocks; d from 0 words to
/// past 8 words (one 512-bit vector).
fn build_equals_scalar(
    b: GramBuild,
    n: usize,
    d: usize,
    seed: u64,
    ties: bool,
    range: (usize, usize),
) -> Result<(), TestCaseError> {
    if !b.available() {
        eprintln!("{b:?}: not on this CPU, not tested here");
        return Ok(());
    }
    let s = if ties {
        tied(n, d, seed)
    } else {
        draw_signs(n, d, seed)
    };
    let (fast, scalar) = (s.scan(b).unwrap(), s.scan(GramBuild::Scalar).unwrap());
    prop_assert!(fast.build() != GramBuild::Best);
    let want = scalar.max_abs_offdiag();
    prop_assert_eq!(fast.max_abs_offdiag(), want);
    let m = want.map_or(0, |w| w.0);
    for bound in [-1, 0, m / 2, m - 1, m] {
        prop_assert_eq!(
            fast.count_offdiag_above(bound),
            scalar.count_offdiag_above(bound)
        );
        prop_assert_eq!(
            fast.first_offdiag_above(bound),
            scalar.first_offdiag_above(bound)
        );
    }
    let lo = range.0 % n;
    let hi = (lo + 1 + range.1 % n).min(n);
    prop_assert_eq!(
        visits(&s, b, (lo, hi)),
        visits(&s, GramBuild::Scalar, (lo, hi))
    );
    Ok(())
}

macro_rules! build_proptest {
    ($name: ident, $build: expr) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(32))]
            #[test]
            fn $name(
                n in prop_oneof![2usize..=20, 60usize..=70, 250usize..=300],
                d in prop_oneof![0usize..=200, 440usize..=600],
                seed in any::<u64>(),
                ties in any::<bool>(),
                range in (any::<usize>(), any::<usize>()),
            ) {
                build_equals_scalar($build, n, d, seed, ties, range)?;
            }
        }
    };
}

build_proptest!(avx512_vpopcnt_build_equals_scalar, GramBuild::Avx512Vpopcnt);
build_proptest!(avx512_build_equals_scalar, GramBuild::Avx512);
build_proptest!(avx2_build_equals_scalar, GramBuild::Avx2);
build_proptest!(best_build_equals_scalar, GramBuild::Best);
build_proptest!(scalar_build_equals_itself, GramBuild::Scalar);

/// `Best` takes the VPOPCNTDQ build on a CPU that has it (the fast path is not
/// silently skipped), and the scalar build at worst.
#[test]
fn best_build_is_the_fastest_available() {
    let s = draw_signs(3, 5, 1);
    let best = s.scan(GramBuild::Best).unwrap().build();
    let first = GramBuild::ALL[1..]
        .iter()
        .copied()
        .find(|b| b.available())
        .unwrap();
    assert_eq!(best, first);
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512vpopcntdq")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512dq")
        && std::is_x86_feature_detected!("avx512cd")
    {
        assert_eq!(best, GramBuild::Avx512Vpopcnt);
    }
    assert!(GramBuild::Scalar.available());
}

/// Every pair (l, j), l < j, with l in a tile, is visited exactly once by
/// `for_each_pair_in_tile`, with popcount(s_l ⊕ s_j); the tiles cover the rows in
/// order, ROW_TILE = 64 at a time. Sizes around the row tile (64) and the column block
/// (256), where the blocked loops change shape.
#[test]
fn every_pair_is_visited_once_with_its_popcount() {
    for (n, d, seed) in [
        (1, 5, 1),
        (2, 64, 2),
        (5, 1, 3),
        (63, 65, 4),
        (64, 3, 5),
        (65, 130, 6),
        (130, 7, 7),
        (257, 9, 8),
        (300, 64, 9),
        (517, 2, 10),
    ] {
        let s = draw_signs(n, d, seed);
        let tiles = s.tiles();
        let want: Vec<(usize, usize)> = (0..n)
            .step_by(64)
            .map(|lo| (lo, (lo + 64).min(n)))
            .collect();
        assert_eq!(tiles, want, "n = {n}");
        for b in builds() {
            let g = s.scan(b).unwrap();
            let mut seen = vec![0u8; n * n];
            for &t in &tiles {
                g.for_each_pair_in_tile(t, |l, j, x| {
                    assert!(
                        l < j && j < n && (t.0..t.1).contains(&l),
                        "({l}, {j}) from {t:?}"
                    );
                    let naive = (0..d).filter(|&c| s.sign(l, c) != s.sign(j, c)).count() as u32;
                    assert_eq!(x, naive, "n = {n}, ({l}, {j})");
                    assert_eq!(i64::from(x), (d as i64 - s.inner(l, j)) / 2, "inner");
                    seen[l * n + j] += 1;
                });
            }
            for l in 0..n {
                for j in 0..n {
                    assert_eq!(
                        seen[l * n + j],
                        u8::from(l < j),
                        "{b:?}, n = {n}, ({l}, {j})"
                    );
                }
            }
        }
    }
}

/// `for_each_pair_in_tile` takes any row range, not only the tiles of `tiles()`: an
/// odd-sized range that ends before the last row takes the one-row path against rows
/// beyond it (which `tiles()` never does: its only odd tile is the last). Every pair
/// with l in the range is visited once, with its popcount.
#[test]
fn any_row_range_visits_its_pairs_once() {
    for (n, d, seed) in [
        (300, 70, 21),
        (40, 3, 22),
        (600, 129, 23),
        (4, 65, 24),
        (5, 2, 25),
    ] {
        let s = draw_signs(n, d, seed);
        for (lo, hi) in [(0, 1), (0, 5), (3, 10), (7, 8), (1, 64), (250, 263), (0, n)] {
            for b in builds() {
                let hi = hi.min(n);
                let mut seen = vec![0u8; n * n];
                s.scan(b)
                    .unwrap()
                    .for_each_pair_in_tile((lo, hi), |l, j, x| {
                        assert!(
                            (lo..hi).contains(&l) && l < j && j < n,
                            "({l}, {j}) from {lo}..{hi}"
                        );
                        let naive = (0..d).filter(|&c| s.sign(l, c) != s.sign(j, c)).count() as u32;
                        assert_eq!(x, naive, "n = {n}, {lo}..{hi}, ({l}, {j})");
                        seen[l * n + j] += 1;
                    });
                for l in 0..n {
                    for j in 0..n {
                        let want = u8::from((lo..hi).contains(&l) && l < j);
                        assert_eq!(
                            seen[l * n + j],
                            want,
                            "{b:?}, n = {n}, {lo}..{hi}, ({l}, {j})"
                        );
                    }
                }
            }
        }
    }
}

/// Ties that the visit order meets out of lexicographic order: the blocked loop visits
/// (1, 2) before (0, 6), both at |⟨s_l, s_j⟩| = d; the answer is the smaller pair
/// (0, 6). And a matrix whose off-diagonal inner products are all 0 (Hadamard rows):
/// the maximum is 0 at (0, 1), not "no pair".
#[test]
fn ties_visited_out_of_order_and_an_all_zero_gram() {
    let base = draw_signs(10, 64, 31);
    let copy = |l: usize| match l {
        2 => 1,
        6 => 0,
        l => l,
    };
    let s = SignMatrix::from_fn(10, 64, |l, c| base.sign(copy(l), c) < 0);
    assert_eq!(s.max_abs_offdiag(), Some((64, (0, 6))));
    assert_eq!(s.first_offdiag_above(63), Some((64, (0, 6))));
    assert_eq!(s.count_offdiag_above(63), 2);
    // every build (the scalar scan is the one whose order meets the tie reversed)
    for b in builds() {
        let g = s.scan(b).unwrap();
        assert_eq!(g.max_abs_offdiag(), Some((64, (0, 6))), "{b:?}");
        assert_eq!(g.first_offdiag_above(63), Some((64, (0, 6))), "{b:?}");
        assert_eq!(g.count_offdiag_above(63), 2, "{b:?}");
    }
    // Sylvester's Hadamard rows: sign(l, c) = (−1)^popcount(l & c)
    for n in [2, 4, 8] {
        let h = SignMatrix::from_fn(n, n, |l, c| (l & c).count_ones() % 2 == 1);
        assert_eq!(h.max_abs_offdiag(), Some((0, (0, 1))), "n = {n}");
        assert_eq!(h.count_offdiag_above(0), 0);
        assert_eq!(h.first_offdiag_above(0), None);
        assert_eq!(h.first_offdiag_above(-1), Some((0, (0, 1))));
        for b in builds() {
            let g = h.scan(b).unwrap();
            assert_eq!(g.max_abs_offdiag(), Some((0, (0, 1))), "n = {n}, {b:?}");
            assert_eq!(g.count_offdiag_above(0), 0, "{b:?}");
            assert_eq!(g.first_offdiag_above(-1), Some((0, (0, 1))), "{b:?}");
        }
    }
}

/// The scans against naive arithmetic at sizes past the column block (n > 256), where
/// the proptest above does not reach.
#[test]
fn scans_equal_naive_past_the_column_block() {
    for (n, d, seed, ties) in [(300, 5, 11, false), (300, 70, 12, true), (521, 3, 13, true)] {
        let s = if ties {
            tied(n, d, seed)
        } else {
            draw_signs(n, d, seed)
        };
        let g = naive_gram(&s, d);
        let want = naive_max(&s);
        assert_eq!(s.max_abs_offdiag(), want, "n = {n}");
        for bound in [0, 1, d as i64 / 2, want.unwrap().0 - 1, want.unwrap().0] {
            let mut count = 0;
            let mut first = None;
            for l in 0..n {
                for j in l + 1..n {
                    if g[l][j].abs() > bound {
                        count += 1;
                        first = first.or(Some((g[l][j].abs(), (l, j))));
                    }
                }
            }
            assert_eq!(
                s.count_offdiag_above(bound),
                count,
                "n = {n}, bound {bound}"
            );
            assert_eq!(
                s.first_offdiag_above(bound),
                first,
                "n = {n}, bound {bound}"
            );
        }
    }
}

/// The constructors and the prefix: bits at columns ≥ d are refused, rows have ⌈d/64⌉
/// words, the prefix is the matrix of the first columns.
#[test]
fn constructors_and_prefixes() {
    // from_fn: bit 1 = −1
    let s = SignMatrix::from_fn(2, 70, |l, c| (l + c) % 3 == 0);
    assert_eq!((s.n(), s.d(), s.words_per_row()), (2, 70, 2));
    assert_eq!(s.words().len(), 4);
    for l in 0..2 {
        for c in 0..70 {
            assert_eq!(s.sign(l, c), if (l + c) % 3 == 0 { -1 } else { 1 });
        }
    }
    assert_eq!(s.row(1), &s.words()[2..4]);
    assert_eq!(s.inner(0, 0), 70);
    // from_words: the length, and the tail bits
    assert_eq!(
        SignMatrix::from_words(2, 70, vec![0; 4]),
        Some(SignMatrix::from_fn(2, 70, |_, _| false))
    );
    assert!(SignMatrix::from_words(2, 70, vec![0; 3]).is_none());
    assert!(SignMatrix::from_words(2, 70, vec![0; 5]).is_none());
    assert!(
        SignMatrix::from_words(2, 70, vec![0, 1 << 6, 0, 0]).is_none(),
        "bit 70 of row 0"
    );
    assert!(
        SignMatrix::from_words(2, 70, vec![0, 0, 0, 1 << 63]).is_none(),
        "bit 127 of row 1"
    );
    assert!(SignMatrix::from_words(2, 70, vec![u64::MAX, (1 << 6) - 1, 0, 0]).is_some());
    assert!(
        SignMatrix::from_words(1, 64, vec![u64::MAX]).is_some(),
        "no tail at d = 64"
    );
    assert!(SignMatrix::from_words(3, 0, vec![]).is_some());
    // prefixes: equal to the matrix built from the first columns
    let s = draw_signs(5, 200, 42);
    for d in [0, 1, 63, 64, 65, 128, 130, 200] {
        let p = s.prefix(d);
        let want = SignMatrix::from_fn(5, d, |l, c| s.sign(l, c) < 0);
        assert_eq!(p, want, "prefix {d}");
    }
    assert!(SignMatrix::from_fn(1, 10, |_, _| true)
        .max_abs_offdiag()
        .is_none());
    assert!(SignMatrix::from_fn(0, 10, |_, _| true)
        .max_abs_offdiag()
        .is_none());
}
