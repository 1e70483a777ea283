//! The f64 tier's softmax ([`softmax_f64_into`], module `softmax64`) against the MPFR
//! tier: every f64 output contains the 512-bit MPFR enclosure of `softmax_into` on the
//! same row (random rows of points and intervals: moderate, wide, tied, one entry,
//! huge negative logits whose weights underflow binary64, where the lower end must be
//! 0); NaN, infinite, too large, reversed and empty inputs are refused; a caller's
//! width is honoured; the results are bit-identical on 1, 2 and 3 threads; and the
//! a-priori sum bound ([`sum_nonneg`]) contains the exact sum at its edges.

use crate::common::SplitMix64;
use attncheck_kernel::softmax64::{sum_nonneg, sum_tree_depth, PAR_MIN};
use attncheck_kernel::{softmax_f64, softmax_f64_into, softmax_into, Interval};
use proptest::collection::vec;
use proptest::prelude::*;
use rug::{Float, Rational};

/// The reference precision.
const REF: u32 = 512;

const TINY: f64 = 5e-324; // 2⁻¹⁰⁷⁴

/// One logit: moderate non-dyadic (the shifted difference is inexact), dyadic, wide,
/// tied, huge negative (its weight underflows binary64), at the range's edge.
fn logit() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -50.0f64..50.0,
        2 => (-(1i64 << 20)..(1i64 << 20)).prop_map(|k| k as f64 / 4096.0),
        2 => -1.0e4f64..1.0e4,
        2 => prop_oneof![Just(0.0), Just(1.0), Just(-1.0), Just(-0.0)],
        1 => -1.0e6f64..-700.0,
        1 => prop_oneof![Just(-1.0e300), Just(-2f64.powi(1000)), Just(-745.2), Just(-1000.5)],
    ]
}

/// An entry: a point, or an interval of a random (also tiny or wide) width.
fn entry() -> impl Strategy<Value = (f64, f64)> {
    (
        logit(),
        prop_oneof![
            3 => Just(0.0),
            1 => 0.0f64..1e-12,
            1 => 0.0f64..1.0,
            1 => 0.0f64..100.0,
        ],
    )
        .prop_map(|(x, w)| (x, (x + w).min(2f64.powi(1000))))
}

/// The 512-bit MPFR softmax of the row (ends exact at 512 bits).
fn mpfr(lo: &[f64], hi: &[f64]) -> Vec<Interval> {
    let z: Vec<Interval> = lo
        .iter()
        .zip(hi)
        .map(|(&l, &h)| Interval::from_endpoints(Float::with_val(REF, l), Float::with_val(REF, h)))
        .collect();
    let mut out = Vec::new();
    softmax_into(&z, REF, &mut out);
    out
}

/// The f64 tier's outputs with no width asked for.
fn f64_row(lo: &[f64], hi: &[f64]) -> Option<(Vec<f64>, Vec<f64>, f64)> {
    let (mut ol, mut oh) = (vec![0.0; lo.len()], vec![0.0; lo.len()]);
    let w = softmax_f64_into(lo, hi, f64::INFINITY, &mut ol, &mut oh)?;
    Some((ol, oh, w))
}

fn check_contains(lo: &[f64], hi: &[f64]) -> Result<(), TestCaseError> {
    let (ol, oh, _) = f64_row(lo, hi).expect("an in-range row is not refused");
    let want = mpfr(lo, hi);
    for i in 0..lo.len() {
        let (a, b) = (want[i].lo(), want[i].hi());
        prop_assert!(
            0.0 <= ol[i] && *a >= ol[i] && *b <= oh[i] && oh[i] <= 1.0,
            "entry {i} of {lo:?} / {hi:?}: f64 [{:e}, {:e}] does not contain MPFR [{}, {}]",
            ol[i],
            oh[i],
            a.to_f64(),
            b.to_f64()
        );
        // a weight below the smallest subnormal has the lower end 0, never a positive one
        if *a < TINY {
            prop_assert_eq!(ol[i], 0.0);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(800))]

    /// Every f64 output contains the 512-bit MPFR enclosure.
    #[test]
    fn f64_softmax_contains_the_512_bit_mpfr_softmax(row in vec(entry(), 1..=12)) {
        let (lo, hi): (Vec<f64>, Vec<f64>) = row.into_iter().unzip();
        check_contains(&lo, &hi)?;
    }

    /// Rows of points only, with many ties (the dependency-free formula's exact case).
    #[test]
    fn f64_softmax_of_points_contains_the_mpfr_softmax(z in vec(logit(), 1..=40)) {
        check_contains(&z, &z)?;
    }

    /// The a-priori sum bound contains the exact sum of random non-negative terms of
    /// widely spread magnitudes (subnormals included).
    #[test]
    fn sum_nonneg_contains_the_exact_sum(
        x in vec(prop_oneof![
            3 => 0.0f64..1.0,
            1 => (0.0f64..1.0, -1074i32..1000).prop_map(|(m, e)| m * 2f64.powi(e)),
            1 => Just(TINY),
            1 => Just(0.0),
        ], 0..300)
    ) {
        let (lo, hi) = sum_nonneg(&x).expect("finite sums");
        let exact: Rational = x.iter().map(|&t| Rational::from_f64(t).unwrap()).sum();
        prop_assert!(Rational::from_f64(lo).unwrap() <= exact && exact <= Rational::from_f64(hi).unwrap());
    }
}

/// Weights that underflow binary64 have the lower end 0 and a positive upper end; the
/// others are untouched by them.
#[test]
fn underflowing_weights_have_the_lower_end_zero() {
    for tail in [-745.2, -1000.0, -1.0e6, -1.0e300, -(2f64.powi(1000))] {
        let z = [0.0, tail, 0.0];
        let (ol, oh, w) = f64_row(&z, &z).unwrap();
        assert_eq!(ol[1], 0.0, "tail {tail}");
        assert!(oh[1] > 0.0 && oh[1] < 1e-300, "tail {tail}: {}", oh[1]);
        assert!(ol[0] <= 0.5 && 0.5 <= oh[0] && oh[0] - ol[0] < 1e-14);
        assert_eq!(w, f64::INFINITY);
        // a finite width refuses the row: the MPFR tier has the exponent range for it
        let (mut a, mut b) = ([0.0; 3], [0.0; 3]);
        assert_eq!(softmax_f64_into(&z, &z, 1e-3, &mut a, &mut b), None);
    }
}

/// Far below the shift with an inexact difference (r = RN(x − M) < −1000 and err ≠ 0: M =
/// 2⁻⁶⁰): the weight's bounds are the documented [0, 2⁻¹⁰⁷⁴], so the entry's upper end is
/// one step above 2⁻¹⁰⁷⁴·inv⁺, i.e. 2⁻¹⁰⁷³. The test above has M = 0 (err = 0); with only
/// it, `r < −1000` → `r == −1000` lived (cargo mutants): the third case then gives
/// up(2⁻¹⁰⁷⁴·f⁺) = 2⁻¹⁰⁷³ for the weight, and 3·2⁻¹⁰⁷⁴ for the entry.
#[test]
fn an_inexact_difference_far_below_the_shift_has_the_smallest_tail() {
    let m = 2f64.powi(-60);
    for tail in [-1000.5, -1.0e6, -1.0e300] {
        let z = [m, tail];
        let (ol, oh, _) = f64_row(&z, &z).unwrap();
        assert_eq!(ol[1], 0.0, "tail {tail}");
        assert!(
            oh[1] > 0.0 && oh[1] <= 2.0 * TINY,
            "tail {tail}: {:e}",
            oh[1]
        );
        assert!(
            ol[0] <= 1.0 && oh[0] == 1.0,
            "tail {tail}: {} {}",
            ol[0],
            oh[0]
        );
    }
}

/// One entry: p = 1, enclosed by a few ulps below 1.
#[test]
fn a_row_of_one_is_one() {
    for x in [0.0, -3.5, 1e-300, 2f64.powi(1000), -(2f64.powi(1000))] {
        let (ol, oh, w) = f64_row(&[x], &[x]).unwrap();
        assert!(
            ol[0] < 1.0 && ol[0] > 1.0 - 1e-14 && oh[0] == 1.0,
            "{x}: {ol:?}"
        );
        assert!(w < 1e-14);
    }
    // an interval entry too: the formula has no dependency blow-up (e^{lo − M} against
    // the sum's absolute error, not e^{lo}/e^{hi})
    let (ol, oh, _) = f64_row(&[-0.5], &[0.25]).unwrap();
    assert!(ol[0] > 1.0 - 1e-14 && oh[0] == 1.0, "{ol:?}");
}

/// NaN, ±∞, beyond 2^1000, lo > hi and the empty row are refused (`None`: escalate).
#[test]
fn what_the_tier_cannot_take_is_refused() {
    let big = 2f64.powi(1000);
    let bad: [(f64, f64); 8] = [
        (f64::NAN, 0.0),
        (0.0, f64::NAN),
        (f64::NEG_INFINITY, 0.0),
        (0.0, f64::INFINITY),
        (big.next_up(), big.next_up()),
        (-big.next_up(), 0.0),
        (1.0, 0.5),
        (f64::NAN, f64::NAN),
    ];
    for (l, h) in bad {
        let (lo, hi) = ([0.0, l, 1.0], [0.0, h, 1.0]);
        assert_eq!(f64_row(&lo, &hi).map(|r| r.2), None, "[{l}, {h}]");
    }
    assert!(f64_row(&[-big, big], &[-big, big]).is_some());
    assert_eq!(f64_row(&[], &[]).map(|r| r.2), None);
    // the MPFR entry point: an MPFR end beyond binary64's range is refused too
    let huge = Float::with_val(64, Float::parse("1e400").unwrap());
    let z = [Interval::from_endpoints(huge.clone(), huge)];
    assert_eq!(softmax_f64(&z, f64::INFINITY), None);
}

/// The caller's width decides: the widest width itself is accepted, anything below it
/// is refused.
#[test]
fn the_callers_width_decides_escalation() {
    let z: Vec<f64> = (0..1000).map(|j| (j as f64 * 0.37).sin() * 8.0).collect();
    let (_, _, w) = f64_row(&z, &z).unwrap();
    assert!(w > 0.0 && w < 2f64.powi(-44), "widest width {w:e}");
    let (mut a, mut b) = (vec![0.0; 1000], vec![0.0; 1000]);
    assert_eq!(softmax_f64_into(&z, &z, w, &mut a, &mut b), Some(w));
    assert_eq!(
        softmax_f64_into(&z, &z, w.next_down(), &mut a, &mut b),
        None
    );
    // and the width is the widest entry's, (hi − lo)/lo of one entry, none wider but
    // for the rounding of w·lo (`widest` computed the width of no entry, or of an entry
    // not the widest, and the test above still passed: three mutants lived)
    for (lo, hi) in [
        (z.clone(), z.clone()),
        (
            z.clone(),
            z.iter()
                .enumerate()
                .map(|(j, x)| x + ((j * 7) % 11) as f64 * 1e-7)
                .collect(),
        ),
    ] {
        let (ol, oh, w) = f64_row(&lo, &hi).unwrap();
        let widths: Vec<f64> = ol.iter().zip(&oh).map(|(l, h)| (h - l) / l).collect();
        let max = widths.iter().copied().fold(0.0, f64::max);
        assert!(widths.contains(&w), "{w:e} is no entry's width");
        assert!(
            w >= max * (1.0 - 2f64.powi(-50)),
            "{w:e} below the widest {max:e}"
        );
    }
}

/// The MPFR entry point encloses the same reals as the slices' one.
#[test]
fn softmax_f64_of_intervals_contains_the_mpfr_softmax() {
    let z: Vec<Interval> = ["-2", "0.1", "3", "3"]
        .iter()
        .map(|s| {
            let x = Float::with_val(128, Float::parse(s).unwrap());
            Interval::from_endpoints(x.clone(), x + 0.25f64)
        })
        .collect();
    let got = softmax_f64(&z, f64::INFINITY).unwrap();
    let mut want = Vec::new();
    softmax_into(&z, REF, &mut want);
    for (g, w) in got.iter().zip(&want) {
        let (lo, hi) = g.bounds().unwrap();
        assert!(*w.lo() >= lo && *w.hi() <= hi);
    }
}

/// Rows long enough to be split across threads: the same bits on 1, 2 and 3 threads.
#[test]
fn softmax64_is_the_same_on_any_number_of_threads() {
    let mut rng = SplitMix64::new(41);
    for n in [PAR_MIN - 1, 3 * PAR_MIN + 5, 70_001] {
        let lo: Vec<f64> = (0..n)
            .map(|_| (rng.next_u64() >> 11) as f64 / 2f64.powi(53) * 40.0 - 20.0)
            .collect();
        let hi: Vec<f64> = lo
            .iter()
            .map(|&x| x + (rng.below(3) as f64) * 1e-9)
            .collect();
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
                    let w = softmax_f64_into(&lo, &hi, 1.0, &mut a, &mut b).unwrap();
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    (bits(&a), bits(&b), w.to_bits())
                })
        };
        let one = run(1);
        assert_eq!(run(2), one, "n = {n}");
        assert_eq!(run(3), one, "n = {n}");
    }
}

/// The sum bound at its edges: no terms, zeros, one term, subnormals only (their sums
/// are exact), sums where every addition rounds the same way (1 + u, ties to even),
/// the largest finite terms (overflow refused), negative and non-finite terms refused.
#[test]
fn sum_bound_edge_cases() {
    let exact = |x: &[f64]| -> Rational { x.iter().map(|&t| Rational::from_f64(t).unwrap()).sum() };
    let holds = |x: &[f64]| {
        let (lo, hi) = sum_nonneg(x).unwrap();
        let s = exact(x);
        assert!(
            Rational::from_f64(lo).unwrap() <= s && s <= Rational::from_f64(hi).unwrap(),
            "{} terms: [{lo:e}, {hi:e}]",
            x.len()
        );
        (lo, hi)
    };
    assert_eq!(sum_nonneg(&[]), Some((0.0, 0.0)));
    assert_eq!(holds(&[0.0; 5]).0, 0.0);
    let (lo, hi) = holds(&[1.0]);
    assert!(lo < 1.0 && 1.0 < hi);
    holds(&[TINY; 1000]);
    holds(&[f64::MIN_POSITIVE, TINY, TINY]);
    // 1 followed by halves of an ulp of 1: round-to-nearest-even drops each one
    let u = f64::EPSILON / 2.0;
    for n in [2, 9, 17, 1000, 65_536] {
        let mut x = vec![u; n];
        x[0] = 1.0;
        holds(&x);
        // and at the end of each leaf of 8
        let x: Vec<f64> = (0..n).map(|j| if j % 8 == 0 { 1.0 } else { u }).collect();
        holds(&x);
    }
    // a sum that reaches MAX without overflowing, then one that overflows
    holds(&[f64::MAX / 2.0, f64::MAX / 4.0]);
    assert_eq!(sum_nonneg(&[f64::MAX, f64::MAX]), None);
    assert_eq!(sum_nonneg(&[1.0, -0.5]), None);
    assert_eq!(sum_nonneg(&[1.0, f64::NAN]), None);
    assert_eq!(sum_nonneg(&[f64::INFINITY]), None);
    // the bound's width is γ_h on both sides: h(65,536) = 21
    assert_eq!(sum_tree_depth(65_536), 21);
    let (lo, hi) = sum_nonneg(&[1.0; 65_536]).unwrap();
    let rel = (hi - lo) / 65_536.0;
    assert!(rel < 48.0 * u && rel > 42.0 * u, "{rel:e}");
}
