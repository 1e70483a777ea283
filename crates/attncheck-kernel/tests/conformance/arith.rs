//! Exact input, + − × ÷, integer powers and set operations: the exact rational
//! result for rationals drawn inside random intervals must lie in the output.

use crate::common::{any_rat, drawn, exact, fraction, is_entire, prec, rat, valid, Drawn};
use attncheck_kernel::{parse_rational, Interval};
use proptest::prelude::*;
use rug::ops::Pow;
use rug::{Integer, Rational};

/// `hi` is `lo` or its successor: the enclosure of a rational is as tight as the
/// precision allows.
fn one_ulp(iv: &Interval) -> bool {
    let mut next = iv.lo().clone();
    next.next_up();
    iv.is_point() || *iv.hi() == next
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn from_rational_contains_and_is_tight(p in prec(), q in any_rat()) {
        let iv = Interval::from_rational(p, &q);
        prop_assert!(valid(&iv));
        prop_assert!(iv.contains_rational(&q), "{iv:?} ∌ {q}");
        prop_assert!(one_ulp(&iv), "{iv:?} wider than one ulp");
        prop_assert_eq!(iv.is_point(), *iv.lo() == q);
    }

    #[test]
    fn from_dyadic_contains(p in prec(), m in any::<i64>(), hi in any::<i32>(), e in -3000i32..3000) {
        let m = (Integer::from(m) << 32u32) + Integer::from(hi);
        let iv = Interval::from_dyadic(p, &m, e);
        let q = if e >= 0 {
            Rational::from(m.clone() << e.unsigned_abs())
        } else {
            Rational::from((m.clone(), Integer::from(1) << e.unsigned_abs()))
        };
        prop_assert!(valid(&iv));
        prop_assert!(iv.contains_rational(&q), "{iv:?} ∌ {m}·2^{e}");
        prop_assert!(one_ulp(&iv));
        let fits = m == 0 || m.significant_bits() - m.find_one(0).unwrap_or(0) <= p;
        prop_assert_eq!(iv.is_point(), fits);
    }

    #[test]
    fn parse_decimal_contains_exact_value(
        p in prec(),
        neg in any::<bool>(),
        int in 0u64..1_000_000_000_000,
        frac in proptest::option::of(0u64..1_000_000_000),
        frac_zeros in 0usize..4,
        e in proptest::option::of(-400i32..400),
    ) {
        let sign = if neg { "-" } else { "" };
        let (frac_txt, frac_len) = match frac {
            Some(f) => {
                let t = format!("{}{f}", "0".repeat(frac_zeros));
                let n = t.len() as u32;
                (format!(".{t}"), n)
            }
            None => (String::new(), 0),
        };
        let e_txt = e.map(|e| format!("e{e}")).unwrap_or_default();
        let s = format!("{sign}{int}{frac_txt}{e_txt}");
        let digits = Integer::from(int) * Integer::from(10).pow(frac_len) + Integer::from(frac.unwrap_or(0));
        let digits = if neg { -digits } else { digits };
        let scale = e.unwrap_or(0) - frac_len as i32;
        let q = if scale >= 0 {
            Rational::from(digits * Integer::from(10).pow(scale as u32))
        } else {
            Rational::from((digits, Integer::from(10).pow(scale.unsigned_abs())))
        };
        prop_assert_eq!(parse_rational(&s).unwrap(), q.clone(), "{}", s);
        let iv = Interval::parse_decimal(p, &s).unwrap();
        prop_assert!(iv.contains_rational(&q) && one_ulp(&iv), "{s}: {iv:?}");
    }

    #[test]
    fn parse_decimal_fraction_and_power(p in prec(), q in any_rat(), b in -40i64..40, e in -60i32..60) {
        let s = format!("{}/{}", q.numer(), q.denom());
        let iv = Interval::parse_decimal(p, &s).unwrap();
        prop_assert!(iv.contains_rational(&q) && one_ulp(&iv), "{s}: {iv:?}");
        prop_assume!(b != 0 || e >= 0);
        let pw = Rational::from(b).pow(e);
        let iv = Interval::parse_decimal(p, &format!("{b}^{e}"));
        // a leading minus binds looser than the power: "-2^2" is −4
        let expect = if b < 0 { -Rational::from(-b).pow(e) } else { pw };
        let iv = iv.unwrap();
        prop_assert!(iv.contains_rational(&expect) && one_ulp(&iv), "{b}^{e}: {iv:?}");
    }

    #[test]
    fn add_contains(a in drawn(any_rat()), b in drawn(any_rat())) {
        let r = &a.iv + &b.iv;
        prop_assert!(valid(&r));
        prop_assert!(r.contains_rational(&Rational::from(&a.x + &b.x)), "{r:?}");
        let mut acc = a.iv.clone();
        acc.add_assign(&b.iv);
        prop_assert!(acc.contains_rational(&Rational::from(&a.x + &b.x)), "add_assign {acc:?}");
    }

    #[test]
    fn sub_contains(a in drawn(any_rat()), b in drawn(any_rat())) {
        let r = &a.iv - &b.iv;
        let x = Rational::from(&a.x - &b.x);
        prop_assert!(valid(&r) && r.contains_rational(&x), "{r:?} ∌ {x}");
        let mut acc = a.iv.clone();
        acc.sub_assign(&b.iv);
        prop_assert!(acc.contains_rational(&x), "sub_assign {acc:?}");
        let n = -&a.iv;
        prop_assert!(n.contains_rational(&Rational::from(-&a.x)));
    }

    #[test]
    fn mul_contains(a in drawn(any_rat()), b in drawn(any_rat())) {
        let r = &a.iv * &b.iv;
        let x = Rational::from(&a.x * &b.x);
        prop_assert!(valid(&r) && r.is_finite() && r.contains_rational(&x), "{r:?} ∌ {x}");
    }

    #[test]
    fn div_contains(a in drawn(any_rat()), b in drawn(any_rat())) {
        let r = &a.iv / &b.iv;
        prop_assert!(valid(&r));
        if b.iv.contains_zero() {
            prop_assert!(is_entire(&r), "{r:?}");
        } else {
            let x = Rational::from(&a.x / &b.x);
            prop_assert!(r.is_finite() && r.contains_rational(&x), "{r:?} ∌ {x}");
        }
    }

    #[test]
    fn powi_contains(a in drawn(any_rat()), n in -7i32..=9) {
        let r = a.iv.powi(n);
        prop_assert!(valid(&r));
        if n < 0 && a.iv.contains_zero() {
            prop_assert!(is_entire(&r));
        } else {
            let x = a.x.clone().pow(n);
            prop_assert!(r.contains_rational(&x), "{r:?} ∌ ({})^{n}", a.x);
            if n % 2 == 0 && n > 0 {
                prop_assert!(*r.lo() >= 0, "even power below 0: {r:?}");
            }
        }
    }

    #[test]
    fn scaling_and_pointwise_ops_contain(
        a in drawn(any_rat()),
        b in drawn(any_rat()),
        k in any::<i64>(),
        e in -200i32..200,
        p in prec(),
    ) {
        let x = &a.x;
        prop_assert!(a.iv.mul_i64(k).contains_rational(&Rational::from(x * Integer::from(k))));
        if k != 0 {
            prop_assert!(a.iv.div_i64(k).contains_rational(&Rational::from(x / Integer::from(k))));
        }
        let two_e = if e >= 0 {
            Rational::from(Integer::from(1) << e.unsigned_abs())
        } else {
            Rational::from((1, Integer::from(1) << e.unsigned_abs()))
        };
        prop_assert!(a.iv.mul_2exp(e).contains_rational(&Rational::from(x * &two_e)));
        prop_assert!(a.iv.abs().contains_rational(&Rational::from(x.abs_ref())));
        let (mx, mn) = if a.x >= b.x { (&a.x, &b.x) } else { (&b.x, &a.x) };
        prop_assert!(a.iv.max(&b.iv).contains_rational(mx));
        prop_assert!(a.iv.min(&b.iv).contains_rational(mn));
        let w = a.iv.with_prec(p);
        prop_assert!(valid(&w) && w.prec() == p && w.contains(&a.iv));
    }

    #[test]
    fn hull_contains_both(a in drawn(any_rat()), b in drawn(any_rat())) {
        let h = a.iv.hull(&b.iv);
        prop_assert!(valid(&h) && h.contains(&a.iv) && h.contains(&b.iv));
        prop_assert!(h.contains_rational(&a.x) && h.contains_rational(&b.x));
        // and no more than that: each endpoint is one of the inputs'
        prop_assert!(h.lo() == a.iv.lo() || h.lo() == b.iv.lo());
        prop_assert!(h.hi() == a.iv.hi() || h.hi() == b.iv.hi());
    }

    #[test]
    fn intersect_is_the_common_part(a in drawn(rat(100, 7)), b in drawn(rat(100, 7)), t in fraction()) {
        match a.iv.intersect(&b.iv) {
            Some(i) => {
                prop_assert!(valid(&i) && a.iv.contains(&i) && b.iv.contains(&i), "{i:?}");
                // a point of the intersection (drawn exactly) lies in both inputs
                let (lo, hi) = (exact(i.lo()), exact(i.hi()));
                let y = Rational::from(&hi - &lo) * &t + &lo;
                prop_assert!(a.iv.contains_rational(&y) && b.iv.contains_rational(&y));
                for x in [&a.x, &b.x] {
                    if a.iv.contains_rational(x) && b.iv.contains_rational(x) {
                        prop_assert!(i.contains_rational(x));
                    }
                }
            }
            None => prop_assert!(a.iv.hi() < b.iv.lo() || b.iv.hi() < a.iv.lo()),
        }
    }

    #[test]
    fn width_up_bounds_true_width(a in drawn(any_rat())) {
        let w = a.iv.width_up();
        let exact_w = exact(a.iv.hi()) - exact(a.iv.lo());
        prop_assert!(w >= exact_w, "{w} < {exact_w}");
        prop_assert!(w >= Rational::from(&a.hi - &a.lo));
        let mut below = w.clone();
        below.next_down();
        prop_assert!(below < exact_w, "width not tight: {w}");
    }
}

/// `Drawn` is the building block of every property: check it draws inside.
#[test]
fn drawn_points_lie_inside() {
    let third = Rational::from((1, 3));
    let d = Drawn::new(24, Rational::from(2), Rational::from(-1), &third);
    assert!(d.iv.contains_rational(&d.x) && d.x == 0 && d.lo == -1);
}
