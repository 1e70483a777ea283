//! The Gram scans of [`SignMatrix`] (bit-packed ±1 rows, exact inner products by
//! popcount; `max_abs_offdiag` decides `gram-max-abs`): the blocked, rayon-parallel
//! scans against naive i64 arithmetic, and thread-count independence.

#![allow(clippy::needless_range_loop)] // index loops mirror the naive definition

use crate::common::random_signs as draw_signs;
use attncheck_kernel::SignMatrix;
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
        }
        for l in 0..n.min(5) {
            for j in 0..n.min(5) {
                prop_assert_eq!(s.inner(l, j), g[l][j]);
            }
        }
    }
}

/// The scans use rayon; their answers are the same at 1 and 2 threads.
#[test]
fn thread_count_does_not_change_results() {
    for (n, d, seed) in [(200, 131, 7), (300, 65, 8), (257, 1000, 9)] {
        for s in [draw_signs(n, d, seed), tied(n, d, seed)] {
            let one = with_threads(1, || {
                (
                    s.max_abs_offdiag(),
                    s.count_offdiag_above(d as i64 / 4),
                    s.first_offdiag_above(d as i64 / 4),
                )
            });
            let two = with_threads(2, || {
                (
                    s.max_abs_offdiag(),
                    s.count_offdiag_above(d as i64 / 4),
                    s.first_offdiag_above(d as i64 / 4),
                )
            });
            assert_eq!(one, two);
        }
    }
}
