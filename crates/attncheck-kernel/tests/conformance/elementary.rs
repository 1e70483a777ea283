//! √, exp, ln, sin, cos: the output at precision p must contain the both-way
//! enclosure of f(x) computed by MPFR at p + 64 bits, for a rational x drawn
//! inside the input; sin and cos on wide intervals (extrema inside) and at huge
//! arguments. Also the p vs p + 20 overlap (quickcheck) and exp(a)·exp(b) ∩ exp(a+b).

use crate::common::{centred, drawn, drawn_pair, encloses, is_entire, rat, reference, valid};
use attncheck_kernel::{dot, log_sum_exp, softmax, Interval};
use proptest::prelude::*;
use quickcheck::{QuickCheck, TestResult};
use rug::ops::AssignRound;
use rug::Rational;

/// Arguments of exp: moderate, and up to ±10⁶ (far beyond f64's range).
fn exp_arg() -> impl Strategy<Value = Rational> + Clone {
    prop_oneof![
        rat(1_000_000, 100_000),
        rat(1_000_000_000, 1_000_000),
        rat(1_000_000, 1),
        rat(1, 1_000_000_000_000),
    ]
}

/// Positive arguments of ln and √, from 10⁻¹⁸ to 10¹⁸, and sometimes ≤ 0.
fn positive_arg() -> impl Strategy<Value = Rational> + Clone {
    prop_oneof![
        4 => rat(1_000_000, 1_000).prop_map(|q| q.abs()),
        4 => rat(1_000_000_000_000_000_000, 1_000_000_000_000_000_000).prop_map(|q| q.abs()),
        1 => rat(10, 10),
    ]
}

/// Intervals for sin and cos: narrow or up to width 20, centred anywhere in
/// [−10⁶, 10⁶] or near 0.
fn trig_interval() -> impl Strategy<Value = (Rational, Rational)> {
    let big = rat(1_000_000_000, 1_000);
    let small = rat(10_000, 1_000);
    prop_oneof![
        centred(big.clone(), rat(20_000, 1_000)),
        centred(big, rat(1, 1_000_000)),
        centred(small.clone(), rat(20_000, 1_000)),
        centred(small, rat(1_000, 1_000)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn exp_contains_reference(a in drawn(exp_arg())) {
        let r = a.iv.exp();
        let re = reference(&a.x, a.iv.prec(), |y, rd| y.exp_round(rd));
        prop_assert!(valid(&r) && *r.lo() >= 0, "{r:?}");
        prop_assert!(encloses(&r, &re), "exp({}) = {re:?} ∉ {r:?}", a.x);
    }

    /// `exp` of a point, a few-ulp or a narrow interval (one MPFR call at p + 32 bits
    /// for both ends when it decides them) is the two directed MPFR calls at p, bit for
    /// bit; so is a wide one (the two calls themselves).
    #[test]
    fn exp_is_the_two_directed_mpfr_calls(
        a in drawn(exp_arg()),
        ulps in 0u32..3,
        shift in prop_oneof![Just(None), (20u32..700).prop_map(Some)],
    ) {
        let p = a.iv.prec();
        let lo = a.iv.lo().clone();
        let hi = match shift {
            None => {
                let mut h = lo.clone();
                (0..ulps).for_each(|_| h.next_up());
                h
            }
            Some(s) => {
                let step = rug::Float::with_val(p, 1) >> s;
                rug::Float::with_val_round(p, &lo + &step, rug::float::Round::Up).0
            }
        };
        let iv = Interval::from_endpoints(lo.clone(), hi.clone());
        let r = iv.exp();
        let (mut d, mut u) = (lo, hi);
        d.exp_round(rug::float::Round::Down);
        u.exp_round(rug::float::Round::Up);
        prop_assert_eq!((r.lo(), r.hi()), (&d, &u));
        prop_assert_eq!((r.lo().prec(), r.hi().prec()), (p, p));
        let wide = a.iv.exp();
        let (mut d, mut u) = (a.iv.lo().clone(), a.iv.hi().clone());
        d.exp_round(rug::float::Round::Down);
        u.exp_round(rug::float::Round::Up);
        prop_assert_eq!((wide.lo(), wide.hi()), (&d, &u));
    }

    #[test]
    fn ln_contains_reference(a in drawn(positive_arg())) {
        let r = a.iv.ln();
        prop_assert!(valid(&r));
        if *a.iv.hi() <= 0 {
            prop_assert!(is_entire(&r));
        } else if a.x > 0 {
            let re = reference(&a.x, a.iv.prec(), |y, rd| y.ln_round(rd));
            prop_assert!(encloses(&r, &re), "ln({}) = {re:?} ∉ {r:?}", a.x);
        }
    }

    #[test]
    fn sqrt_contains_reference(a in drawn(positive_arg())) {
        let r = a.iv.sqrt();
        prop_assert!(valid(&r));
        if *a.iv.lo() < 0 {
            prop_assert!(is_entire(&r));
        } else {
            let re = reference(&a.x, a.iv.prec(), |y, rd| y.sqrt_round(rd));
            prop_assert!(encloses(&r, &re), "√{} = {re:?} ∉ {r:?}", a.x);
            prop_assert!(*r.lo() >= 0);
        }
    }

    #[test]
    fn sin_contains_reference(a in drawn_pair(trig_interval())) {
        let r = a.iv.sin();
        let re = reference(&a.x, a.iv.prec(), |y, rd| y.sin_round(rd));
        prop_assert!(valid(&r) && *r.lo() >= -1 && *r.hi() <= 1, "{r:?}");
        prop_assert!(encloses(&r, &re), "sin({}) = {re:?} ∉ {r:?}", a.x);
        if Rational::from(&a.hi - &a.lo) >= 7 {
            prop_assert!(*r.lo() == -1 && *r.hi() == 1, "a full period: {r:?}");
        }
    }

    #[test]
    fn cos_contains_reference(a in drawn_pair(trig_interval())) {
        let r = a.iv.cos();
        let re = reference(&a.x, a.iv.prec(), |y, rd| y.cos_round(rd));
        prop_assert!(valid(&r) && *r.lo() >= -1 && *r.hi() <= 1, "{r:?}");
        prop_assert!(encloses(&r, &re), "cos({}) = {re:?} ∉ {r:?}", a.x);
        if Rational::from(&a.hi - &a.lo) >= 7 {
            prop_assert!(*r.lo() == -1 && *r.hi() == 1, "a full period: {r:?}");
        }
    }

    /// A kernel that hulls the endpoint values would stay strictly inside (−1, 1)
    /// on [2kπ − δ, 2kπ + δ]; a correct one reaches the extremum.
    #[test]
    fn trig_reaches_interior_extrema(k in -300_000i64..300_000, d in 1i64..1_000_000, p in 24u32..120) {
        let pi = Interval::pi(p + 64);
        let delta = Rational::from((d, 1_000_000));
        for (shift, is_sin) in [(Rational::new(), false), (Rational::from((1, 2)), true)] {
            // c encloses (k + shift)·π; [c.lo − δ, c.hi + δ] contains it
            let c = &pi * Interval::from_rational(p + 64, &(Rational::from(k) + &shift));
            let lo = c.lo().to_rational().unwrap() - &delta;
            let hi = c.hi().to_rational().unwrap() + &delta;
            let x = Interval::from_rational(p, &lo).hull(&Interval::from_rational(p, &hi));
            let r = if is_sin { x.sin() } else { x.cos() };
            if k % 2 == 0 {
                prop_assert!(*r.hi() == 1, "k = {k}, sin: {is_sin}: {r:?}");
            } else {
                prop_assert!(*r.lo() == -1, "k = {k}, sin: {is_sin}: {r:?}");
            }
        }
    }

    /// exp(a)·exp(b) and exp(a + b) enclose the same reals, so they must meet.
    #[test]
    fn exp_of_sum_meets_product_of_exps(a in drawn(exp_arg()), b in drawn(rat(1_000, 10))) {
        let prod = &a.iv.exp() * &b.iv.exp();
        let sum = (&a.iv + &b.iv).exp();
        prop_assert!(prod.overlaps(&sum), "{prod:?} ∩ {sum:?} = ∅");
    }

    /// ln(exp(x)) ∋ x and (√x)² ∋ x: round trips keep the value.
    #[test]
    fn round_trips_contain_the_argument(a in drawn(rat(10_000, 100))) {
        prop_assert!(a.iv.exp().ln().contains_rational(&a.x));
        let s = a.iv.abs().sqrt().powi(2);
        prop_assert!(s.contains_rational(&Rational::from(a.x.abs_ref())), "{s:?}");
        let one = &a.iv.sin().powi(2) + &a.iv.cos().powi(2);
        prop_assert!(one.contains_rational(&Rational::from(1)), "sin² + cos² = {one:?}");
    }
}

/// Builds `[n1/d1, n1/d1 + w/64]` at `prec`.
fn iv(prec: u32, n: i32, d: i32, w: u16) -> Interval {
    let a = Rational::from((n, if d == 0 { 1 } else { d }));
    let b = Rational::from((w, 64)) + &a;
    Interval::from_rational(prec, &a).hull(&Interval::from_rational(prec, &b))
}

/// Every operation at precision p and at p + 20 encloses the same exact value,
/// so the two results overlap (MPFR's test of each function at p and p + 20).
fn results_at_p_and_p20_overlap(
    n1: i32,
    d1: i32,
    w1: u16,
    n2: i32,
    d2: i32,
    w2: u16,
    p: u8,
) -> TestResult {
    let p = 24 + u32::from(p);
    let ops = |x: &Interval, y: &Interval| -> Vec<Interval> {
        let small_x = x.mul_2exp(-24);
        let mut v = vec![
            x + y,
            x - y,
            x * y,
            x / y,
            x.abs().sqrt(),
            small_x.exp(),
            x.abs().ln(),
            x.sin(),
            x.cos(),
            x.powi(3),
            x.powi(-2),
            log_sum_exp(&[small_x.clone(), y.mul_2exp(-24)]),
            dot(&[x.clone(), y.clone()], &[y.clone(), x.clone()]),
        ];
        v.extend(softmax(&[small_x, y.mul_2exp(-24), x.sin()]));
        v
    };
    let lo = ops(&iv(p, n1, d1, w1), &iv(p, n2, d2, w2));
    let hi = ops(&iv(p + 20, n1, d1, w1), &iv(p + 20, n2, d2, w2));
    for (k, (a, b)) in lo.iter().zip(&hi).enumerate() {
        if !valid(a) || !valid(b) || !a.overlaps(b) {
            return TestResult::error(format!("op {k}: p = {p}: {a:?} vs {b:?}"));
        }
    }
    TestResult::passed()
}

#[test]
fn precision_p_and_p_plus_20_overlap() {
    type Prop = fn(i32, i32, u16, i32, i32, u16, u8) -> TestResult;
    QuickCheck::new()
        .tests(1000)
        .quickcheck(results_at_p_and_p20_overlap as Prop);
}

/// The p vs p + 20 check with the arguments the kernel finds hardest: points
/// (zero width) and exact multiples of powers of two.
#[test]
fn precision_overlap_on_points() {
    for (n, d) in [
        (0, 1),
        (1, 1),
        (-1, 3),
        (355, 113),
        (1 << 20, 1),
        (-7, 1 << 10),
    ] {
        assert!(!results_at_p_and_p20_overlap(n, d, 0, d, n, 0, 29).is_failure());
    }
}

/// The constants are enclosures, not nearest values: π and ln 2 are irrational.
#[test]
fn constants_enclose_pi_and_ln2() {
    use rug::float::Constant;
    for p in [24, 53, 100, 333] {
        let (pi, ln2) = (Interval::pi(p), Interval::ln2(p));
        let pi_ref = reference(&Rational::new(), p, |y, r| y.assign_round(Constant::Pi, r));
        let ln2_ref = reference(&Rational::new(), p, |y, r| {
            y.assign_round(Constant::Log2, r)
        });
        assert!(encloses(&pi, &pi_ref) && !pi.is_point(), "{pi:?}");
        assert!(encloses(&ln2, &ln2_ref) && !ln2.is_point(), "{ln2:?}");
        assert!(Interval::ln2(p).exp().contains_rational(&Rational::from(2)));
    }
}

/// An extremum inside the tightest enclosure of itself, [RD(kπ), RU(kπ)] (and of
/// (k + ½)π for sin), is reached exactly, at every precision: each end lies within
/// an ulp of the extremum, where a quotient by the wrong end of π's enclosure would
/// put the extremum outside, and at large k and low precision the endpoints' own
/// values are far from ±1 (1 − cos δ ≈ δ²/2 with δ up to an ulp of kπ).
#[test]
fn trig_reaches_an_extremum_at_the_ends_of_its_tightest_enclosure() {
    let ks: Vec<i64> = (1..=400)
        .chain((4..=24).flat_map(|j| [(1i64 << j) - 1, 1 << j, (1 << j) + 1, 3 << (j - 2)]))
        .flat_map(|k| [k, -k])
        .chain([0])
        .collect();
    for p in [24u32, 25, 31, 40, 53, 64, 113] {
        let pi = Interval::pi(p + 64);
        for &k in &ks {
            for (shift, is_sin) in [(Rational::new(), false), (Rational::from((1, 2)), true)] {
                let c = &pi * Interval::from_rational(p + 64, &(Rational::from(k) + &shift));
                let x = Interval::from_rational(p, &c.lo().to_rational().unwrap())
                    .hull(&Interval::from_rational(p, &c.hi().to_rational().unwrap()));
                let r = if is_sin { x.sin() } else { x.cos() };
                // even k: a maximum (+1), odd k: a minimum (−1)
                if k % 2 == 0 {
                    assert!(
                        *r.hi() == 1,
                        "p = {p}, k = {k}, sin: {is_sin}: {x:?} ↦ {r:?}"
                    );
                } else {
                    assert!(
                        *r.lo() == -1,
                        "p = {p}, k = {k}, sin: {is_sin}: {x:?} ↦ {r:?}"
                    );
                }
            }
        }
    }
}

/// e^{−x}: the exponential of the negation, containing e^{−q} for q in the
/// enclosure, and decreasing.
#[test]
fn neg_exp_is_the_exponential_of_the_negation() {
    for (n, d) in [(0i64, 1i64), (1, 1), (-1, 1), (7, 3), (-50, 7), (123, 10)] {
        let q = Rational::from((n, d));
        for p in [24u32, 53, 128] {
            let x = Interval::from_rational(p, &q);
            let r = x.neg_exp();
            let reference = Interval::from_rational(p + 64, &Rational::from(-&q)).exp();
            assert!(
                r.contains(&reference),
                "e^-({q}) at {p}: {r:?} ∌ {reference:?}"
            );
            assert!(r.contains(&(-&x).exp()) && (-&x).exp().contains(&r), "{q}");
            if n != 0 {
                // not e^{x}: on the other side of 1
                assert!(!r.contains(&x.exp()), "e^-({q}) at {p}: {r:?}");
            }
        }
    }
}
