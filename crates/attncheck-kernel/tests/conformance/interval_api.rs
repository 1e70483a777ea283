//! The constructors, accessors and small operations of [`Interval`] against values
//! written out by hand (exact binary fractions, or a reference enclosure at a higher
//! precision), each condition of each guard on its own: the containment properties
//! elsewhere would accept a result that is merely wider, or a guard that fires on
//! more inputs than it should.

use crate::common::{is_entire, q, valid};
use attncheck_kernel::{checked_prec, Interval};
use rug::float::{Constant, Round, Special};
use rug::{Float, Integer, Rational};

fn f(prec: u32, x: f64) -> Float {
    Float::with_val(prec, x)
}

fn inf(prec: u32) -> Float {
    Float::with_val(prec, Special::Infinity)
}

fn ninf(prec: u32) -> Float {
    Float::with_val(prec, Special::NegInfinity)
}

fn nan(prec: u32) -> Float {
    Float::with_val(prec, Special::Nan)
}

/// `[lo, hi]` from two f64 at 53 bits (exact).
fn iv(lo: f64, hi: f64) -> Interval {
    Interval::from_endpoints(f(53, lo), f(53, hi))
}

/// `iv`'s ends are exactly `lo` and `hi` (and the invariant holds).
fn is(iv: &Interval, lo: f64, hi: f64) -> bool {
    valid(iv) && *iv.lo() == lo && *iv.hi() == hi
}

#[test]
fn checked_prec_clamps_to_the_kernel_minimum_and_mpfr_maximum() {
    assert_eq!(checked_prec(0), 24);
    assert_eq!(checked_prec(1), 24);
    assert_eq!(checked_prec(24), 24);
    assert_eq!(checked_prec(25), 25);
    assert_eq!(checked_prec(1000), 1000);
    assert_eq!(checked_prec(u32::MAX), rug::float::prec_max());
    // every constructor that takes a precision clamps it
    for iv in [
        Interval::entire(1),
        Interval::zero(1),
        Interval::one(1),
        Interval::from_i64(1, 3),
        Interval::from_integer(1, &Integer::from(3)),
        Interval::from_f64(1, 0.5),
        Interval::from_rational(1, &q("1/3")),
        Interval::from_dyadic(1, &Integer::from(3), 2),
        Interval::parse_decimal(1, "0.1").unwrap(),
        Interval::pi(1),
        Interval::ln2(1),
        Interval::one(53).with_prec(1),
    ] {
        assert_eq!(iv.prec(), 24, "{iv:?}");
        assert_eq!(iv.lo().prec(), iv.hi().prec());
    }
}

/// Each guard of `from_endpoints` on its own gives the whole line: a NaN at either end,
/// lo > hi, lo = +∞, hi = −∞; anything else keeps the two ends.
#[test]
fn from_endpoints_gives_the_whole_line_for_each_invalid_input_alone() {
    let p = 53;
    for (lo, hi, what) in [
        (nan(p), f(p, 1.0), "NaN lo"),
        (f(p, 1.0), nan(p), "NaN hi"),
        (f(p, 2.0), f(p, 1.0), "lo > hi"),
        (inf(p), inf(p), "lo = +∞ (≤ hi)"),
        (ninf(p), ninf(p), "hi = −∞ (≥ lo)"),
    ] {
        let r = Interval::from_endpoints(lo, hi);
        assert!(is_entire(&r) && valid(&r), "{what}: {r:?}");
    }
    for (lo, hi) in [
        (1.0, 1.0),
        (1.0, 2.0),
        (-2.0, -1.0),
        (f64::NEG_INFINITY, 1.0),
        (1.0, f64::INFINITY),
        (f64::NEG_INFINITY, f64::INFINITY),
        (-0.0, 0.0),
    ] {
        assert!(is(&iv(lo, hi), lo, hi), "[{lo}, {hi}]");
    }
}

/// Ends of different precisions are carried at the larger one, and keep their values.
#[test]
fn from_endpoints_carries_both_ends_at_the_larger_precision() {
    let third_lo = Float::with_val_round(100, Rational::from((1, 3)), Round::Down).0;
    for (lo, hi) in [
        (Float::with_val(24, 0.25), third_lo.clone()),
        (-third_lo.clone(), Float::with_val(30, 0.5)),
    ] {
        let (l, h) = (lo.clone(), hi.clone());
        let r = Interval::from_endpoints(lo, hi);
        assert_eq!((r.lo().prec(), r.hi().prec()), (100, 100), "{r:?}");
        assert_eq!((r.lo(), r.hi()), (&l, &h));
        assert_eq!(r.prec(), 100);
    }
}

#[test]
fn constants_and_small_constructors_have_their_values() {
    let p = 64;
    let e = Interval::entire(p);
    assert!(*e.lo() == Special::NegInfinity && *e.hi() == Special::Infinity);
    assert_eq!(e.prec(), p);
    assert!(Interval::zero(p).is_point() && Interval::zero(p).lo().is_zero());
    assert!(Interval::one(p).is_point() && *Interval::one(p).lo() == 1);
    assert!(is(&Interval::from_i64(53, -7), -7.0, -7.0));
    // 2^60 + 1 is not a 24-bit float: one ulp around it
    let big = (1i64 << 60) + 1;
    let r = Interval::from_i64(24, big);
    assert!(!r.is_point() && r.contains_rational(&Rational::from(big)));
    assert_eq!(*r.lo(), 1i64 << 60);
    assert!(Interval::from_i64(64, big).is_point());
    let huge = Integer::from(1) << 200u32;
    let r = Interval::from_integer(24, &(huge.clone() + 1u32));
    assert_eq!(*r.lo(), huge);
    assert!(*r.hi() > huge && r.contains_rational(&Rational::from(huge + 1u32)));
    // f64: a point at 53 bits, one ulp at 24 when it needs more bits, NaN the whole line
    assert!(is(&Interval::from_f64(53, 0.1), 0.1, 0.1));
    let r = Interval::from_f64(24, 0.1);
    assert!(!r.is_point() && r.contains_float(&f(53, 0.1)));
    assert!(*r.lo() < 0.1 && *r.hi() > 0.1);
    assert!(is_entire(&Interval::from_f64(53, f64::NAN)));
    // an infinite f64 is no real number: the whole line (lo = +∞ is refused)
    assert!(is_entire(&Interval::from_f64(53, f64::INFINITY)));
    // dyadics and decimals
    assert!(is(
        &Interval::from_dyadic(53, &Integer::from(3), -5),
        3.0 / 32.0,
        3.0 / 32.0
    ));
    assert!(is(
        &Interval::from_dyadic(53, &Integer::from(-3), 4),
        -48.0,
        -48.0
    ));
    let r = Interval::parse_decimal(53, "0.1").unwrap();
    assert!(*r.lo() < 0.1 || *r.hi() > 0.1);
    assert!(r.contains_rational(&q("1/10")) && !r.is_point());
    assert!(Interval::parse_decimal(53, "0.1x").is_err());
    assert!(is(
        &Interval::parse_decimal(53, "-3/4").unwrap(),
        -0.75,
        -0.75
    ));
}

/// π and ln 2: one ulp wide, containing the constant at 256 bits.
#[test]
fn pi_and_ln2_are_one_ulp_around_the_constant() {
    for p in [24, 53, 100] {
        for (iv, c) in [
            (Interval::pi(p), Constant::Pi),
            (Interval::ln2(p), Constant::Log2),
        ] {
            let exact = Float::with_val(256, c);
            assert!(*iv.lo() < exact && exact < *iv.hi(), "{iv:?}");
            let mut next = iv.lo().clone();
            next.next_up();
            assert_eq!(*iv.hi(), next, "{iv:?} is one ulp wide");
        }
    }
}

#[test]
fn predicates_on_an_interval() {
    // is_point
    assert!(iv(1.0, 1.0).is_point());
    assert!(!iv(1.0, 2.0).is_point());
    // is_finite: each end on its own
    assert!(iv(1.0, 2.0).is_finite());
    assert!(!iv(1.0, f64::INFINITY).is_finite());
    assert!(!iv(f64::NEG_INFINITY, 1.0).is_finite());
    // contains_rational: inside, at each end, beyond each end
    let a = iv(1.0, 2.0);
    for (x, want) in [
        ("3/2", true),
        ("1", true),
        ("2", true),
        ("1/2", false),
        ("5/2", false),
    ] {
        assert_eq!(a.contains_rational(&q(x)), want, "{x}");
    }
    assert!(Interval::entire(53).contains_rational(&q("-10^100")));
    assert!(iv(1.0, f64::INFINITY).contains_rational(&q("10^100")));
    assert!(!iv(1.0, f64::INFINITY).contains_rational(&q("1/2")));
    assert!(!iv(f64::NEG_INFINITY, 1.0).contains_rational(&q("2")));
    // contains_float: inside, at each end, beyond each end, NaN
    for (x, want) in [
        (1.5, true),
        (1.0, true),
        (2.0, true),
        (0.5, false),
        (2.5, false),
    ] {
        assert_eq!(a.contains_float(&f(53, x)), want, "{x}");
    }
    assert!(!a.contains_float(&nan(53)));
    assert!(!Interval::entire(53).contains_float(&nan(53)));
    // contains (⊇): equal, inside, sticking out at either end
    assert!(a.contains(&a));
    assert!(a.contains(&iv(1.25, 1.75)));
    assert!(!a.contains(&iv(0.5, 1.5)));
    assert!(!a.contains(&iv(1.5, 2.5)));
    assert!(!iv(1.25, 1.75).contains(&a));
    // contains_zero: at either end, across, on one side
    for (lo, hi, want) in [
        (-1.0, 1.0, true),
        (0.0, 1.0, true),
        (-1.0, 0.0, true),
        (-0.0, 0.0, true),
        (1.0, 2.0, false),
        (-2.0, -1.0, false),
    ] {
        assert_eq!(iv(lo, hi).contains_zero(), want, "[{lo}, {hi}]");
    }
}

/// The display quantities (never used for a proof) have their documented values.
#[test]
fn midpoint_width_magnitude_and_f64_ends() {
    let p = 53;
    assert_eq!(iv(1.0, 3.0).mid(), 2.0);
    // the midpoint is computed at p + 1 bits: exact for two p-bit ends of one binade
    let (a, b) = (1.0, 1.0 + f64::EPSILON);
    let m = iv(a, b).mid();
    assert!(m > a && m < b, "{m}");
    assert_eq!(iv(-3.0, 1.0).mid(), -1.0);
    assert!(iv(1.0, f64::INFINITY).mid().is_nan());
    assert!(iv(f64::NEG_INFINITY, 1.0).mid().is_nan());
    assert_eq!(iv(1.0, 3.0).mid_f64(), 2.0);
    assert_eq!(iv(-3.0, 1.0).mid_f64(), -1.0);
    assert!(iv(1.0, f64::INFINITY).mid_f64().is_nan());
    assert!(iv(f64::NEG_INFINITY, 1.0).mid_f64().is_nan());
    assert!(Interval::entire(p).mid_f64().is_nan());
    // width, rounded up
    assert_eq!(iv(1.0, 3.0).width_up(), 2.0);
    assert_eq!(iv(-3.0, 1.0).width_up(), 4.0);
    // 2^30 − 1 needs 30 bits: at 24 it rounds up to 2^30 (down would be 2^30 − 64)
    let w = Interval::from_endpoints(Float::with_val(24, 1), Float::with_val(24, 1u64 << 30))
        .width_up();
    assert!(w == (1u64 << 30) && w.prec() == 24, "{w}");
    let tiny = iv(1.0, 1.0 + f64::EPSILON).with_prec(24);
    assert!(tiny.width_up() > 0, "rounded up, never to 0: {tiny:?}");
    assert!(iv(1.0, f64::INFINITY).width_up().is_infinite());
    // magnitude: the larger absolute end, either side
    assert_eq!(iv(-3.0, 2.0).mag(), 3.0);
    assert_eq!(iv(-2.0, 3.0).mag(), 3.0);
    assert_eq!(iv(-3.0, 3.0).mag(), 3.0);
    assert_eq!(iv(-3.0, -2.0).mag(), 3.0);
    assert_eq!(iv(2.0, 5.0).mag(), 5.0);
    // f64 ends, each rounded away from the interval's inside
    let third = Interval::from_rational(200, &q("1/3"));
    let (lo, hi) = (third.lo_f64(), third.hi_f64());
    assert!(
        Rational::from_f64(lo).unwrap() < q("1/3") && Rational::from_f64(hi).unwrap() > q("1/3")
    );
    assert_eq!(hi, f64::from_bits(lo.to_bits() + 1), "one f64 ulp apart");
    let neg = -&third;
    assert_eq!((neg.lo_f64(), neg.hi_f64()), (-hi, -lo));
    assert_eq!(
        (iv(-2.5, 7.0).lo_f64(), iv(-2.5, 7.0).hi_f64()),
        (-2.5, 7.0)
    );
}

/// hull and ∩ give exactly the set operations' ends, with either operand first.
#[test]
fn hull_and_intersection_have_exact_ends() {
    let (a, b) = (iv(1.0, 3.0), iv(2.0, 5.0));
    for (x, y) in [(&a, &b), (&b, &a)] {
        assert!(is(&x.hull(y), 1.0, 5.0));
        assert!(is(&x.intersect(y).unwrap(), 2.0, 3.0));
    }
    let (c, d) = (iv(1.0, 2.0), iv(3.0, 4.0));
    assert!(c.intersect(&d).is_none() && d.intersect(&c).is_none());
    assert!(is(&c.hull(&d), 1.0, 4.0));
    // touching: a point
    assert!(is(&c.intersect(&iv(2.0, 3.0)).unwrap(), 2.0, 2.0));
    // nested
    assert!(is(&iv(0.0, 10.0).intersect(&a).unwrap(), 1.0, 3.0));
    assert!(is(&a.intersect(&iv(0.0, 10.0)).unwrap(), 1.0, 3.0));
    assert!(is(&iv(0.0, 10.0).hull(&a), 0.0, 10.0));
}

/// with_prec rounds outward at a lower precision and is exact at a higher one.
#[test]
fn with_prec_rounds_outward() {
    let third = Interval::from_rational(200, &q("1/3"));
    let low = third.with_prec(24);
    assert_eq!(low.prec(), 24);
    assert!(low.contains(&third) && low.contains_rational(&q("1/3")));
    assert_eq!(
        *low.lo(),
        Float::with_val_round(24, third.lo(), Round::Down).0
    );
    assert_eq!(
        *low.hi(),
        Float::with_val_round(24, third.hi(), Round::Up).0
    );
    let back = low.with_prec(200);
    assert_eq!((back.lo(), back.hi()), (low.lo(), low.hi()));
    assert_eq!(back.prec(), 200);
}

/// In-place + and − round outward like the operators, and restore the invariant (∞ − ∞).
#[test]
fn add_assign_and_sub_assign_equal_the_operators() {
    let third = Interval::from_rational(53, &q("1/3"));
    let seventh = Interval::from_rational(53, &q("-1/7"));
    let mut s = third.clone();
    s.add_assign(&seventh);
    assert_eq!(s, &third + &seventh);
    assert!(s.contains_rational(&q("4/21")) && !s.is_point());
    let mut d = third.clone();
    d.sub_assign(&seventh);
    assert_eq!(d, &third - &seventh);
    assert!(d.contains_rational(&q("10/21")));
    let mut e = iv(1.0, 2.0);
    e.sub_assign(&iv(0.5, 0.75));
    assert!(is(&e, 0.25, 1.5));
    let mut e = iv(1.0, 2.0);
    e.add_assign(&iv(0.5, 0.75));
    assert!(is(&e, 1.5, 2.75));
    // ∞ − ∞: the whole line, never NaN
    let up = iv(1.0, f64::INFINITY);
    let mut n = up.clone();
    n.sub_assign(&up);
    assert!(is_entire(&n) && valid(&n));
    let mut n = up.clone();
    n.add_assign(&-&up);
    assert!(is_entire(&n) && valid(&n));
    // one infinite end only: the other stays
    let mut n = iv(1.0, 2.0);
    n.add_assign(&up);
    assert!(is(&n, 2.0, f64::INFINITY));
}

#[test]
fn small_operations_have_exact_values() {
    let a = iv(-3.0, 2.0);
    assert!(is(&-&a, -2.0, 3.0));
    assert!(is(&-(a.clone()), -2.0, 3.0));
    assert!(is(&a.mul_i64(3), -9.0, 6.0));
    assert!(is(&a.mul_i64(-2), -4.0, 6.0));
    assert!(is(&a.div_i64(2), -1.5, 1.0));
    assert!(is(&a.div_i64(-4), -0.5, 0.75));
    let third = Interval::one(53).div_i64(3);
    assert!(third.contains_rational(&q("1/3")) && !third.is_point());
    assert!(is_entire(&a.div_i64(0)));
    assert!(is(&a.mul_2exp(3), -24.0, 16.0));
    assert!(is(&a.mul_2exp(-1), -1.5, 1.0));
    // max and min are pointwise: [max lo, max hi], [min lo, min hi]
    let (b, c) = (iv(1.0, 5.0), iv(2.0, 3.0));
    for (x, y) in [(&b, &c), (&c, &b)] {
        assert!(is(&x.max(y), 2.0, 5.0));
        assert!(is(&x.min(y), 1.0, 3.0));
    }
    // abs: each sign class
    assert!(is(&iv(1.0, 2.0).abs(), 1.0, 2.0));
    assert!(is(&iv(-3.0, -1.0).abs(), 1.0, 3.0));
    assert!(is(&iv(-3.0, 2.0).abs(), 0.0, 3.0));
    assert!(is(&iv(-2.0, 3.0).abs(), 0.0, 3.0));
    assert!(is(&iv(0.0, 2.0).abs(), 0.0, 2.0));
    assert!(is(&iv(-2.0, 0.0).abs(), 0.0, 2.0));
}

/// The product's nine sign classes (each operand ≥ 0, ≤ 0 or across 0) give exactly the
/// extreme endpoint products, with either operand first; 0·∞ = 0.
#[test]
fn product_sign_classes_give_the_extreme_endpoint_products() {
    let classes = [
        (2.0, 3.0),
        (-3.0, -2.0),
        (-2.0, 5.0),
        (0.0, 3.0),
        (-3.0, 0.0),
    ];
    let others = [
        (5.0, 7.0),
        (-7.0, -5.0),
        (-5.0, 7.0),
        (-7.0, 5.0),
        (0.0, 5.0),
    ];
    for (al, ah) in classes {
        for (bl, bh) in others {
            let prods = [al * bl, al * bh, ah * bl, ah * bh];
            let lo = prods.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = prods.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            for r in [&iv(al, ah) * &iv(bl, bh), &iv(bl, bh) * &iv(al, ah)] {
                assert!(
                    is(&r, lo, hi),
                    "[{al}, {ah}]·[{bl}, {bh}] = {r:?}, want [{lo}, {hi}]"
                );
            }
        }
    }
    // rounding outward at 24 bits: 1/3 · 3 straddles 1
    let third = Interval::from_rational(24, &q("1/3"));
    let r = &third * &Interval::from_i64(24, 3);
    assert!(*r.lo() < 1 && *r.hi() > 1, "{r:?}");
    let r = &third * &Interval::from_i64(24, -3);
    assert!(*r.lo() < -1 && *r.hi() > -1, "{r:?}");
}

/// Division: the extreme endpoint quotients, tight, for each sign class of a divisor
/// not containing 0.
#[test]
fn quotient_gives_the_extreme_endpoint_quotients() {
    for (al, ah) in [(2.0, 4.0), (-4.0, -2.0), (-2.0, 4.0)] {
        for (bl, bh) in [(1.0, 2.0), (-2.0, -1.0)] {
            let qs = [al / bl, al / bh, ah / bl, ah / bh];
            let lo = qs.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = qs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let r = iv(al, ah).checked_div(&iv(bl, bh)).unwrap();
            assert!(is(&r, lo, hi), "[{al}, {ah}]/[{bl}, {bh}] = {r:?}");
            assert_eq!(r, &iv(al, ah) / &iv(bl, bh));
        }
    }
    let r = Interval::one(24)
        .checked_div(&Interval::from_i64(24, 3))
        .unwrap();
    assert!(r.contains_rational(&q("1/3")) && !r.is_point());
}
