//! The named regression tests for the bug classes of home-made ball arithmetic
//! (rounding to nearest, non-monotone functions, 0·∞ and NaN, three-valued logic,
//! printing and exact input); the properties live in `arith`, `elementary`, `softmax`
//! and `compare`, the shared strategies in `common`.

use crate::common::{exact, is_entire, valid};
use attncheck_kernel::{
    dot, log_sum_exp, mat_vec, parse_rational, softmax, softmax_into, Certainty, Interval,
};
use rug::float::Special;
use rug::{Float, Integer, Rational};

fn point(prec: u32, s: &str) -> Interval {
    Interval::parse_decimal(prec, s).expect("valid literal")
}

// ----- regression tests: rounding to nearest -----------------------------------

/// A kernel that rounds endpoints to nearest returns the point `RN(1/3)`, which
/// does not contain 1/3.
#[test]
fn from_rational_one_third_is_not_rounded_to_nearest() {
    let third = Rational::from((1, 3));
    for prec in [1, 2, 24, 53] {
        let iv = Interval::from_rational(prec, &third);
        assert!(iv.lo() < iv.hi(), "{iv:?} is a point");
        assert!(iv.contains_rational(&third), "{iv:?} misses 1/3");
        assert!(*iv.lo() < third && *iv.hi() > third);
    }
    let iv = Interval::parse_decimal(24, "0.1").unwrap();
    assert!(iv.lo() < iv.hi() && iv.contains_rational(&Rational::from((1, 10))));
}

/// `exp` rounded to nearest returns a point for a point argument, although e^x is
/// irrational for every rational x ≠ 0.
#[test]
fn exp_of_irrational_point_is_not_a_point() {
    for s in ["1", "-1", "0.5", "1/3", "100", "-700"] {
        let e = point(53, s).exp();
        assert!(!e.is_point(), "exp({s}) = {e:?} is a point");
        assert!(e.lo() < e.hi());
    }
    assert!(point(53, "0").exp().is_point(), "exp(0) = 1 exactly");
    for s in ["2", "1/3"] {
        assert!(!point(53, s).ln().is_point(), "ln({s})");
        assert!(!point(53, s).sin().is_point(), "sin({s})");
        assert!(!point(53, s).cos().is_point(), "cos({s})");
    }
    assert!(!point(53, "2").sqrt().is_point());
    assert!(point(53, "4").sqrt().is_point(), "√4 = 2 exactly");
}

/// The point exponent of a softmax row used to take a one-call path; the rounded
/// bounds must still straddle the irrational value.
#[test]
fn softmax_of_points_is_not_a_point() {
    let z = [point(53, "0"), point(53, "1")];
    let p = softmax(&z);
    assert!(p.iter().all(|p| !p.is_point()), "{p:?}");
    assert!(!log_sum_exp(&z).is_point());
}

// ----- regression tests: non-monotone functions ---------------------------------

/// Hulling the endpoint values gives `[cos 1, cos 1]` on `[−1, 1]`, missing the
/// maximum cos 0 = 1.
#[test]
fn cos_on_minus_one_one_reaches_one() {
    let x = point(53, "-1").hull(&point(53, "1"));
    let c = x.cos();
    assert_eq!(*c.hi(), 1, "{c:?}");
    assert!(*c.lo() <= Float::with_val(53, 1).cos());
}

/// sin peaks at π/2 ≈ 1.5708 ∈ [1, 2]; the endpoint values sin 1 ≈ 0.841 and
/// sin 2 ≈ 0.909 miss it.
#[test]
fn sin_on_one_two_contains_one() {
    let s = point(53, "1").hull(&point(53, "2")).sin();
    assert!(s.contains_rational(&Rational::from(1)), "{s:?}");
    assert_eq!(*s.hi(), 1);
}

/// cos has its minimum at π ∈ [3, 3.3].
#[test]
fn cos_on_three_to_three_point_three_reaches_minus_one() {
    let c = point(53, "3").hull(&point(53, "3.3")).cos();
    assert_eq!(*c.lo(), -1, "{c:?}");
}

/// An interval wider than 2π covers a whole period, at any magnitude.
#[test]
fn trig_of_wide_or_huge_intervals_is_minus_one_one() {
    for (a, b) in [
        ("0", "7"),
        ("-1e6", "-999993"),
        ("1e6", "1000010"),
        ("1e30", "1e30"),
    ] {
        let x = point(24, a).hull(&point(24, b));
        let wide = exact(x.hi()) - exact(x.lo()) > 7;
        for y in [x.sin(), x.cos()] {
            assert!(valid(&y));
            assert!(*y.lo() >= -1 && *y.hi() <= 1, "{y:?}");
            if wide {
                assert!(*y.lo() == -1 && *y.hi() == 1, "{a}..{b}: {y:?}");
            }
        }
    }
}

// ----- regression tests: 0·∞ and NaN ------------------------------------------------

/// IEEE gives 0·∞ = NaN; as sets, {0}·[1, ∞] = {0}.
#[test]
fn zero_times_infinity_is_zero_not_nan() {
    let zero = Interval::zero(53);
    let ray = Interval::from_endpoints(
        Float::with_val(53, 1),
        Float::with_val(53, Special::Infinity),
    );
    for r in [&zero * &ray, &ray * &zero] {
        assert!(valid(&r), "{r:?}");
        // not merely "contains 0": the product of the sets is exactly {0}
        assert!(r.is_point() && r.contains_zero(), "{r:?}");
    }
    let neg_ray = -&ray;
    let r = &zero * &neg_ray;
    assert!(valid(&r) && r.contains_zero());
    let r = dot(std::slice::from_ref(&zero), std::slice::from_ref(&ray));
    assert!(valid(&r) && r.contains_zero(), "{r:?}");
}

/// Every operation on the whole line (and on half-lines) stays NaN-free.
#[test]
fn operations_on_entire_never_give_nan() {
    let e = Interval::entire(53);
    let one = Interval::one(53);
    let zero = Interval::zero(53);
    let inf = Float::with_val(53, Special::Infinity);
    let up = Interval::from_endpoints(Float::with_val(53, 1), inf.clone());
    let down = -&up;
    let all = [
        e.clone(),
        one.clone(),
        zero.clone(),
        up.clone(),
        down.clone(),
    ];
    for a in &all {
        for b in &all {
            for r in [a + b, a - b, a * b, a / b, a.hull(b), a.max(b), a.min(b)] {
                assert!(valid(&r), "{a:?} ∘ {b:?} = {r:?}");
            }
            assert!(a.intersect(b).as_ref().is_none_or(valid));
            assert!(valid(&dot(
                std::slice::from_ref(a),
                std::slice::from_ref(b)
            )));
            assert!(valid(&log_sum_exp(&[a.clone(), b.clone()])));
            assert!(softmax(&[a.clone(), b.clone()]).iter().all(valid));
        }
        let unary = [
            a.exp(),
            a.ln(),
            a.sqrt(),
            a.sin(),
            a.cos(),
            a.powi(2),
            a.powi(3),
            a.powi(-1),
            a.powi(-2),
            a.abs(),
            -a,
            a.mul_2exp(3),
        ];
        for r in unary {
            assert!(valid(&r), "{a:?}: {r:?}");
        }
        assert!(!a.width_up().is_nan());
    }
    assert!(is_entire(&(&e / &one)));
    assert!(valid(&(&up / &up)), "∞/∞ must not be NaN");
}

/// x/y for y ∋ 0 has no finite bound; returning anything narrower is unsound.
#[test]
fn division_by_interval_containing_zero_is_entire() {
    let num = point(53, "1");
    for (a, b) in [("0", "0"), ("-1", "1"), ("0", "2"), ("-3", "0")] {
        let den = point(53, a).hull(&point(53, b));
        assert!(is_entire(&(&num / &den)), "1/[{a}, {b}]");
        assert!(is_entire(&(&Interval::zero(53) / &den)), "0/[{a}, {b}]");
    }
    let tiny = Interval::from_endpoints(Float::with_val(53, -0.0), Float::with_val(53, 1));
    assert!(is_entire(&(&num / &tiny)), "−0 is in the divisor");
    assert!(is_entire(&point(53, "0").powi(-1)));
}

/// ln is undefined at and below 0: no NaN, no information. An enclosure that
/// touches or straddles 0 used to give the ray [−∞, ln hi], which let
/// "(< (ln (- (exp 1) (exp 1))) -80)" — ln 0 — be certified (issue 23).
#[test]
fn ln_of_negative_is_entire() {
    assert!(is_entire(&point(53, "-1").ln()));
    assert!(is_entire(&point(53, "-2").hull(&point(53, "-1")).ln()));
    assert!(is_entire(&point(53, "0").ln()), "ln 0 = −∞ is not a real");
    let straddle = point(53, "-1").hull(&point(53, "2")).ln();
    assert!(is_entire(&straddle), "ln [−1, 2] = {straddle:?}");
    let touch = point(53, "0").hull(&point(53, "2")).ln();
    assert!(is_entire(&touch), "ln [0, 2] = {touch:?}");
    assert!(point(53, "0").hull(&point(53, "2")).checked_ln().is_none());
}

/// √ below 0 is undefined; the interval reaching there gives the whole line.
#[test]
fn sqrt_below_zero_is_entire() {
    assert!(is_entire(&point(53, "-1").sqrt()));
    assert!(is_entire(&point(53, "-1").hull(&point(53, "4")).sqrt()));
    assert!(is_entire(&point(53, "-1e-30").hull(&point(53, "0")).sqrt()));
    let z = Interval::from_endpoints(Float::with_val(53, -0.0), Float::with_val(53, 4)).sqrt();
    assert!(
        valid(&z) && z.contains_zero() && *z.hi() == 2,
        "√[−0, 4] = {z:?}"
    );
}

/// `powi` negated its exponent, which overflows for `i32::MIN` (a panic in
/// debug builds, infinite recursion in release ones).
#[test]
fn powi_i32_min_does_not_overflow() {
    let r = point(53, "2").powi(i32::MIN);
    assert!(valid(&r) && r.contains_zero(), "{r:?}");
    let r = point(53, "1").powi(i32::MIN);
    assert!(
        valid(&r) && r.contains_rational(&Rational::from(1)),
        "{r:?}"
    );
    let r = point(53, "1/2").powi(i32::MIN);
    assert!(valid(&r), "{r:?}");
    let r = point(53, "-1").powi(i32::MAX);
    assert!(r.contains_rational(&Rational::from(-1)), "{r:?}");
}

/// `"-2^-8"` was read as (−2)^−8 = +1/256: the leading sign of a power literal
/// was swallowed by the base, so a negative bound silently became positive.
#[test]
fn parse_rational_minus_sign_binds_looser_than_power() {
    assert_eq!(parse_rational("-2^-8").unwrap(), Rational::from((-1, 256)));
    assert_eq!(parse_rational("-2^2").unwrap(), Rational::from(-4));
    assert_eq!(parse_rational("-2^3").unwrap(), Rational::from(-8));
    assert_eq!(parse_rational("+2^2").unwrap(), Rational::from(4));
    assert_eq!(parse_rational("2^-8").unwrap(), Rational::from((1, 256)));
    assert_eq!(parse_rational("10^0").unwrap(), Rational::from(1));
    assert!(parse_rational("0^-1").is_err());
    assert!(parse_rational("-0^-1").is_err());
    assert!(parse_rational("2^").is_err());
    assert!(parse_rational("--2^2").is_err());
}

#[test]
fn parse_rational_rejects_malformed_literals() {
    for s in [
        "", " ", ".", "-", "+", "e5", "1e", "1.2.3", "1/0", "1/", "/2", "abc", "inf", "NaN",
        "0x10", "1_000", "--1", "+-1", "1e5.5", "1/2/3", "2^1.5", "1/2^3", "1e100001",
    ] {
        assert!(parse_rational(s).is_err(), "{s:?} parsed");
    }
    for (s, q) in [
        ("-.5", Rational::from((-1, 2))),
        ("5.", Rational::from(5)),
        ("+1e+2", Rational::from(100)),
        (" -3 / 4 ", Rational::from((-3, 4))),
        ("1/-3", Rational::from((-1, 3))),
        ("1E-3", Rational::from((1, 1000))),
        ("-0", Rational::new()),
    ] {
        assert_eq!(parse_rational(s).unwrap(), q, "{s:?}");
    }
}

// ----- regression tests: three-valued logic ----------------------------------------

/// An `Unknown` is never a pass: not by itself, not after `and`, `all` or `not`.
#[test]
fn unknown_is_never_true() {
    use Certainty::*;
    assert!(!Unknown.is_true() && !Unknown.is_false());
    assert!(!(!Unknown).is_true());
    for c in [True, False, Unknown] {
        assert!(!Unknown.and(c).is_true());
        assert!(!c.and(Unknown).is_true());
        assert!(!Certainty::all([True, c, Unknown]).is_true());
    }
    assert_eq!(Certainty::all([True, Unknown, False]), False);
    assert_eq!(Certainty::all([]), True);
    let a = point(53, "0").hull(&point(53, "2"));
    let b = point(53, "1");
    for c in [a.lt(&b), a.le(&b), a.gt(&b), a.ge(&b), a.eq_exact(&b)] {
        assert_eq!(c, Unknown);
    }
    assert_eq!(
        a.eq_exact(&a),
        Unknown,
        "a non-point is not provably equal to itself"
    );
    let e = Interval::entire(53);
    for c in [e.lt(&b), e.le(&b), b.gt(&e), e.eq_exact(&e), e.eq_exact(&b)] {
        assert_eq!(c, Unknown);
    }
    let inf = Float::with_val(53, Special::Infinity);
    let ray = Interval::from_endpoints(Float::with_val(53, 3), inf);
    assert_eq!(b.lt(&ray), True);
    assert_eq!(ray.le(&b), False);
    assert_eq!((-&ray).lt(&b), True);
}

/// Falsity needs its own test (Arb): a predicate that only ever answers
/// `True`/`Unknown` would pass every containment test.
#[test]
fn certainty_false_has_its_own_test() {
    use Certainty::*;
    let one = point(53, "1");
    let two = point(53, "2");
    let third = Interval::from_rational(53, &Rational::from((1, 3)));
    assert_eq!(two.lt(&one), False);
    assert_eq!(one.lt(&one), False, "1 < 1 is false");
    assert_eq!(two.le(&one), False);
    assert_eq!(one.gt(&two), False);
    assert_eq!(one.ge(&two), False);
    assert_eq!(one.eq_exact(&two), False);
    assert_eq!(third.eq_exact(&one), False);
    assert_eq!(one.le(&one), True);
    assert_eq!(one.ge(&one), True);
    assert_eq!(one.eq_exact(&one), True);
    assert_eq!(one.lt(&two), True);
    assert_eq!(third.lt(&one), True);
    assert_eq!(Certainty::exact(false), False);
    assert_eq!(!True, False);
    assert_eq!(False.and(Unknown), False);
    assert!(False.is_false() && !False.is_true());
    // Touching intervals: [0, 1] < [1, 2] is not provable, and [1, 2] < [0, 1] is false.
    let lo = point(53, "0").hull(&one);
    let hi = one.hull(&two);
    assert_eq!(lo.lt(&hi), Unknown);
    assert_eq!(lo.le(&hi), True);
    assert_eq!(hi.lt(&lo), False);
    assert_eq!(hi.le(&lo), Unknown);
}

// ----- regression tests: printing and exact input ---------------------------------

#[test]
fn fmt_outward_single_digit_and_extremes() {
    let third = Interval::from_rational(64, &Rational::from((1, 3)));
    assert_eq!(third.fmt_outward(1), "[0.3, 0.4]");
    let neg = -&third;
    assert_eq!(neg.fmt_outward(1), "[-0.4, -0.3]");
    assert_eq!(Interval::from_i64(64, 95).fmt_outward(1), "[90, 100]");
    assert_eq!(Interval::zero(64).fmt_outward(3), "0");
    let e8 = Interval::from_i64(64, 123_456_789);
    assert_eq!(e8.fmt_outward(2), "[1.2e8, 1.3e8]");
    let half = Interval::from_endpoints(
        Float::with_val(64, 0.5),
        Float::with_val(64, Special::Infinity),
    );
    assert_eq!(half.fmt_outward(3), "[0.5, inf]");
}

/// Scaling by 2^e is exact until it leaves MPFR's exponent range; beyond it the
/// result must still round outward (0 < 2^−2³¹ and 2^(2³¹−1) < ∞).
#[test]
fn mul_2exp_beyond_exponent_range_rounds_outward() {
    let one = Interval::one(53);
    let tiny = one.mul_2exp(i32::MIN);
    assert!(
        valid(&tiny) && *tiny.lo() >= 0 && *tiny.hi() > 0,
        "{tiny:?}"
    );
    assert!(!tiny.contains_zero() || *tiny.lo() == 0);
    let huge = one.mul_2exp(i32::MAX);
    assert!(
        valid(&huge) && huge.lo().is_finite() && huge.hi().is_infinite(),
        "{huge:?}"
    );
    let neg = (-&one).mul_2exp(i32::MIN);
    assert!(valid(&neg) && *neg.lo() < 0 && *neg.hi() <= 0, "{neg:?}");
    let d = Interval::from_dyadic(53, &Integer::from(1), i32::MIN);
    assert!(*d.hi() > 0 && *d.lo() >= 0, "{d:?}");
}

#[test]
fn from_dyadic_is_exact_when_representable() {
    let iv = Interval::from_dyadic(53, &Integer::from(3), -5);
    assert!(iv.is_point() && iv.contains_rational(&Rational::from((3, 32))));
    let big = Integer::from(u64::MAX);
    let iv = Interval::from_dyadic(24, &big, 10);
    let q = Rational::from(big.clone() << 10u32);
    assert!(!iv.is_point() && iv.contains_rational(&q));
    // far outside any double's range, still inside MPFR's
    let iv = Interval::from_dyadic(53, &Integer::from(-7), -100_000);
    assert!(iv.is_point() && *iv.hi() < 0);
}

/// `softmax_into` took its precision unchecked, so a precision of 0 panicked
/// inside MPFR; every other entry point clamps to the kernel's minimum.
#[test]
fn softmax_into_clamps_precision() {
    let z = [point(53, "1/3"), point(53, "-2")];
    let mut out = Vec::new();
    for prec in [0, 1, 2] {
        softmax_into(&z, prec, &mut out);
        assert_eq!(out.len(), 2);
        for (o, p) in out.iter().zip(softmax(&z)) {
            assert!(valid(o) && o.prec() >= 24 && o.overlaps(&p), "{o:?}");
        }
    }
}

/// e^x beyond MPFR's exponent range: the upper end becomes +∞ (or the lower end
/// 0), never NaN and never a finite value on the wrong side.
#[test]
fn exp_overflow_and_underflow_stay_outward() {
    let big = point(53, "1e10").exp();
    assert!(valid(&big) && big.hi().is_infinite() && big.lo().is_finite() && *big.lo() > 0);
    let small = point(53, "-1e10").exp();
    assert!(
        valid(&small) && *small.lo() == 0 && *small.hi() > 0,
        "{small:?}"
    );
    let p = softmax(&[point(53, "0"), point(53, "-1e10")]);
    assert!(*p[0].hi() == 1 && *p[0].lo() > 0.5, "{:?}", p[0]);
    assert!(*p[1].lo() == 0 && *p[1].hi() > 0, "{:?}", p[1]);
    let l = log_sum_exp(&[point(53, "1e10"), point(53, "1e10")]);
    assert!(valid(&l) && l.is_finite(), "lse needs no e^(1e10): {l:?}");
}

#[test]
fn softmax_into_at_lower_precision_still_encloses() {
    let z: Vec<Interval> = ["1/3", "2/7", "-5"].iter().map(|s| point(200, s)).collect();
    let mut out = Vec::new();
    softmax_into(&z, 24, &mut out);
    let hi_prec = softmax(&z);
    for (a, b) in out.iter().zip(&hi_prec) {
        assert!(a.contains(b), "{a:?} ⊉ {b:?}");
    }
    assert!(mat_vec(&[], &z).is_empty());
    assert!(is_entire(&log_sum_exp(&[])));
    assert!(softmax(&[]).is_empty());
    assert!(dot(&[], &[]).is_point());
}
