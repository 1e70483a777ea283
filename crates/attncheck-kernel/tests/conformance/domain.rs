//! Domain edges (issue 23, item 6). The partial operations of the kernel — ln (x > 0),
//! √ (x ≥ 0), ÷ (divisor ≠ 0), xⁿ with n < 0 (x ≠ 0) — are defined on an enclosure only
//! when it lies inside the domain. One that touches the edge of an open domain, or
//! crosses the edge of any domain, gives `None` from the `checked_*` form, the whole
//! line from the total form, and an *undefined* term in the certificate language, on
//! which every comparison is undecided — also after `abs`, `min`, `(* 0 ·)`, `exp`, …,
//! which would still decide something from a whole-line enclosure.
//!
//! Arb-style sweeps: exact rational endpoints touching 0 from either side, the point 0,
//! straddling 0 (wide and 2^−3000-narrow), just outside, and inside (wide, tiny widths,
//! tiny and huge magnitudes), an exact rational drawn inside, random precisions.
//! Inside the domain the result must contain f(x) (MPFR at p + 64, both ways, or the
//! exact rational) and equal the total operation's, so tightness is unchanged there.

use crate::common::{drawn, drawn_pair, encloses, is_entire, rat, reference, valid, Drawn};
use attncheck_kernel::{expr, Certainty, Interval};
use proptest::prelude::*;
use rug::float::Special;
use rug::{Float, Rational};

/// Positive rationals: moderate, tiny (down to 2^−3000) and huge (up to 2^224).
fn pos() -> impl Strategy<Value = Rational> + Clone {
    prop_oneof![
        (1i64..=1_000_000, 1i64..=1_000).prop_map(|(n, d)| Rational::from((n, d))),
        (1i64..1 << 24, 1u32..3000).prop_map(|(n, k)| Rational::from(n) >> k),
        (1i64..1 << 24, 0u32..200).prop_map(|(n, k)| Rational::from(n) << k),
    ]
}

/// Exact endpoints at and across 0, and inside (0, ∞).
fn edge_ends() -> impl Strategy<Value = (Rational, Rational)> {
    prop_oneof![
        // touching 0 from above: [0, b]
        pos().prop_map(|b| (Rational::new(), b)),
        // touching 0 from below: [−a, 0]
        pos().prop_map(|a| (-a, Rational::new())),
        // the point 0
        Just((Rational::new(), Rational::new())),
        // straddling 0 (tiny or wide on either side)
        (pos(), pos()).prop_map(|(a, b)| (-a, b)),
        // just outside, below 0
        (pos(), pos()).prop_map(|(a, w)| (-Rational::from(&a + &w), -a)),
        // negative points
        pos().prop_map(|a| (-a.clone(), -a)),
        // inside (0, ∞): wide, tiny widths, points
        (pos(), pos()).prop_map(|(a, w)| (a.clone(), a + w)),
        (pos(), 1u32..3000).prop_map(|(a, k)| (a.clone(), a + (Rational::from(1) >> k))),
        pos().prop_map(|a| (a.clone(), a)),
    ]
}

/// An enclosure of an edge case, with an exact point drawn inside.
fn edge() -> impl Strategy<Value = Drawn> {
    drawn_pair(edge_ends())
}

/// Whether 0 lies in the exact interval [lo, hi].
fn holds_zero(a: &Drawn) -> bool {
    a.lo <= 0 && a.hi >= 0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// ln needs x > 0: `None` exactly when the exact lower end is ≤ 0 (touching 0
    /// counts); inside, the result contains ln x and is the total `ln`'s.
    #[test]
    fn ln_is_undefined_when_the_enclosure_touches_or_crosses_zero(a in edge()) {
        let r = a.iv.checked_ln();
        prop_assert_eq!(r.is_none(), a.lo <= 0, "[{}, {}]: {:?}", &a.lo, &a.hi, r);
        match r {
            None => prop_assert!(is_entire(&a.iv.ln())),
            Some(r) => {
                prop_assert!(valid(&r) && r == a.iv.ln());
                let re = reference(&a.x, a.iv.prec(), |y, rd| y.ln_round(rd));
                prop_assert!(encloses(&r, &re), "ln({}) = {:?} ∉ {:?}", &a.x, re, r);
            }
        }
    }

    /// √ needs x ≥ 0, a closed domain: touching 0 is defined (√0 = 0), crossing is not.
    #[test]
    fn sqrt_is_undefined_when_the_enclosure_crosses_zero(a in edge()) {
        let r = a.iv.checked_sqrt();
        prop_assert_eq!(r.is_none(), a.lo < 0, "[{}, {}]: {:?}", &a.lo, &a.hi, r);
        match r {
            None => prop_assert!(is_entire(&a.iv.sqrt())),
            Some(r) => {
                prop_assert!(valid(&r) && r == a.iv.sqrt() && *r.lo() >= 0);
                let re = reference(&a.x, a.iv.prec(), |y, rd| y.sqrt_round(rd));
                prop_assert!(encloses(&r, &re), "√{} = {:?} ∉ {:?}", &a.x, re, r);
            }
        }
    }

    /// x/y needs y ≠ 0: `None` exactly when 0 is in the divisor's enclosure.
    #[test]
    fn division_is_undefined_when_the_divisor_touches_or_crosses_zero(
        num in drawn(rat(1_000_000, 1_000)),
        den in edge(),
    ) {
        let r = num.iv.checked_div(&den.iv);
        prop_assert_eq!(r.is_none(), holds_zero(&den), "1/[{}, {}]: {:?}", &den.lo, &den.hi, r);
        match r {
            None => prop_assert!(is_entire(&(&num.iv / &den.iv))),
            Some(r) => {
                prop_assert!(valid(&r) && r == &num.iv / &den.iv);
                let q = Rational::from(&num.x / &den.x);
                prop_assert!(r.contains_rational(&q), "{}/{} ∉ {:?}", &num.x, &den.x, r);
            }
        }
    }

    /// xⁿ for n < 0 needs x ≠ 0; n ≥ 0 is total (0⁰ = 1).
    #[test]
    fn negative_powers_are_undefined_when_the_enclosure_touches_or_crosses_zero(
        a in edge(),
        n in -9i32..=9,
    ) {
        let r = a.iv.checked_powi(n);
        prop_assert_eq!(r.is_none(), n < 0 && holds_zero(&a), "[{}, {}]^{}: {:?}", &a.lo, &a.hi, n, r);
        match r {
            None => prop_assert!(is_entire(&a.iv.powi(n))),
            Some(r) => {
                prop_assert!(valid(&r) && r == a.iv.powi(n));
                let x = if n >= 0 {
                    rug::ops::Pow::pow(a.x.clone(), n.unsigned_abs())
                } else {
                    rug::ops::Pow::pow(a.x.clone().recip(), n.unsigned_abs())
                };
                prop_assert!(r.contains_rational(&x), "{}^{} ∉ {:?}", &a.x, n, r);
            }
        }
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The same sweep through the certificate language: when the exact argument is not
    /// inside the domain, every comparison on the partial operation — and on every term
    /// built on it — is undecided, at every precision; inside, the term encloses f(x).
    #[test]
    fn formulas_on_a_partial_operation_outside_its_domain_are_undecided(a in edge()) {
        let p = a.iv.prec();
        let x = term_for(&a);
        for (op, undefined) in [
            ("ln", a.lo <= 0),
            ("sqrt", a.lo < 0),
            ("/", holds_zero(&a)),
            ("pow-1", holds_zero(&a)),
            ("pow-2", holds_zero(&a)),
        ] {
            let t = match op {
                "/" => format!("(/ 1 {x})"),
                "pow-1" => format!("(pow {x} -1)"),
                "pow-2" => format!("(pow {x} -2)"),
                _ => format!("({op} {x})"),
            };
            if undefined {
                all_undecided(&t, p, false).map_err(TestCaseError::fail)?;
            } else {
                let v = expr::eval(&t, p).unwrap();
                prop_assert!(valid(&v));
                let want = match op {
                    "ln" => Some(reference(&a.x, p, |y, rd| y.ln_round(rd))),
                    "sqrt" => Some(reference(&a.x, p, |y, rd| y.sqrt_round(rd))),
                    _ => None,
                };
                if let Some(re) = want {
                    prop_assert!(encloses(&v, &re), "{t} = {v:?} ∌ {re:?}");
                } else {
                    let n = if op == "pow-2" { 2 } else { 1 };
                    let q = rug::ops::Pow::pow(a.x.clone().recip(), n);
                    prop_assert!(v.contains_rational(&q), "{t} = {v:?} ∌ {q}");
                }
            }
        }
    }
}

/// A term whose value is the exact interval [lo, hi]: a literal for a point, else
/// `m + r·U` with U = cos(2^400·π) = [−1, 1] (the enclosure of 2^400·π is far wider
/// than 2π at every precision ≤ 200 bits), m the centre and r the radius.
fn term_for(a: &Drawn) -> String {
    if a.lo == a.hi {
        return a.lo.to_string();
    }
    let m = Rational::from(&a.lo + &a.hi) / 2u32;
    let r = Rational::from(&a.hi - &a.lo) / 2u32;
    format!("(+ {m} (* {r} (cos (* 2^400 pi))))")
}

/// Terms built on `t` that a whole-line enclosure of `t` would still let decide
/// something (|t| ≥ 0, 0·t = 0, e^t > 0, t⁰ = 1, …): undefined in, undefined out.
fn wrappers(t: &str) -> Vec<String> {
    [
        "T",
        "(abs T)",
        "(min T 0)",
        "(max T 0)",
        "(* 0 T)",
        "(* T 0)",
        "(exp T)",
        "(sin T)",
        "(cos T)",
        "(pow T 2)",
        "(pow T 0)",
        "(ceil T)",
        "(floor T)",
        "(neg T)",
        "(- T)",
        "(- T T)",
        "(+ T 1)",
        "(+ 1 T)",
        "(/ T 1)",
        "(/ 0 T)",
        "(sum i 1 2 T)",
        "(sqrt (pow T 2))",
        "(ln (exp T))",
        "(min (abs T) -1)",
    ]
    .iter()
    .map(|w| w.replace('T', t))
    .collect()
}

/// Every comparison of every wrapper of `t` against -2, 0 and 1 is `Unknown`
/// (`full = false`: a few wrappers and comparisons, for the random sweeps).
fn all_undecided(t: &str, p: u32, full: bool) -> Result<(), String> {
    let mut ws = wrappers(t);
    if !full {
        ws = [0, 1, 4, 6, 10].iter().map(|&i| ws[i].clone()).collect();
    }
    for w in ws {
        for c in ["-2", "0", "1"] {
            let forms = [
                format!("(< {w} {c})"),
                format!("(<= {w} {c})"),
                format!("(> {w} {c})"),
                format!("(>= {w} {c})"),
                format!("(= {w} {c})"),
                format!("(not (>= {w} {c}))"),
                format!("(forall i 1 3 (>= {w} {c}))"),
                format!("(and (<= 0 1) (>= {w} {c}))"),
            ];
            for f in if full { &forms[..] } else { &forms[..3] } {
                match expr::check(f, p) {
                    Ok(Certainty::Unknown) => {}
                    other => return Err(format!("{f} at {p} bits: {other:?}, want Unknown")),
                }
            }
        }
    }
    Ok(())
}

/// Exact arguments outside the domain (ln 0, ln of a negative, √ of a negative, 1/0,
/// 0/0, 0⁻¹), written as literals or as exact terms: undefined, never decided.
#[test]
fn exact_arguments_outside_the_domain_are_undefined() {
    for t in [
        "(ln 0)",
        "(ln -1)",
        "(ln -1/3)",
        "(ln (- 2 2))",
        "(sqrt -1)",
        "(sqrt -1/1000000000000)",
        "(sqrt (- 2 3))",
        "(/ 1 0)",
        "(/ 0 0)",
        "(/ (exp 1) 0)",
        "(/ 1 (- 3 3))",
        "(pow 0 -1)",
        "(pow 0 -2)",
        "(pow (- 2 2) -3)",
        "(pow (* 0 (exp 1)) -1)",
    ] {
        for p in [24, 64, 128] {
            if let Err(e) = all_undecided(t, p, true) {
                panic!("{e}");
            }
        }
    }
}

/// The closed edge and the rest of the domain stay decided: √0 = 0, 0⁰ = 1, 0³ = 0,
/// 0/5 = 0, ln of a tiny positive number.
#[test]
fn arguments_inside_the_domain_stay_decided() {
    for f in [
        "(= (sqrt 0) 0)",
        "(= (sqrt (- 2 2)) 0)",
        "(= (pow 0 0) 1)",
        "(= (pow 0 3) 0)",
        "(= (/ 0 5) 0)",
        "(< (ln 1/1000000) 0)",
        "(< (ln 2^-3000) -2079)",
        "(> (ln 2^-3000) -2080)",
        "(= (pow -1/2 -3) -8)",
        "(< (/ 1 (- (exp 1) 2)) 2)",
        "(< (pow (- (exp 1) 3) -1) -3)",
        "(< (sqrt (- (exp 1) 2)) 1)",
    ] {
        assert_eq!(expr::check(f, 128), Ok(Certainty::True), "{f}");
    }
}

/// `pow` takes an integer literal exponent only: x^(1/2) of a negative x cannot be
/// written, so there is no rational-exponent domain to check.
#[test]
fn pow_takes_only_an_integer_literal_exponent() {
    for f in [
        "(< (pow 2 1/2) 2)",
        "(< (pow -2 1/2) 2)",
        "(< (pow 2 0.5) 2)",
        "(< (pow 2 (+ 1 1)) 5)",
        "(< (pow 2 x) 5)",
    ] {
        assert!(expr::check(f, 64).is_err(), "{f}");
    }
}

/// ceil/floor of an unbounded (but defined) enclosure keep the finite end instead of
/// giving the whole line; a huge point is not expanded into a 2^30-bit integer.
#[test]
fn ceil_and_floor_of_unbounded_enclosures_keep_the_finite_end() {
    // e^(2^40) overflows MPFR's exponent range: its enclosure is [max float, +∞]
    let big = expr::eval("(exp 2^40)", 64).unwrap();
    assert_eq!(*big.hi(), Special::Infinity);
    assert!(big.lo().is_finite());
    for (f, want) in [
        ("(> (ceil (exp 2^40)) 0)", Certainty::True),
        ("(> (floor (exp 2^40)) 0)", Certainty::True),
        ("(< (floor (neg (exp 2^40))) 0)", Certainty::True),
        ("(< (ceil (neg (exp 2^40))) 0)", Certainty::True),
        ("(> (ceil (exp 700000000)) 1)", Certainty::True),
        (
            "(= (floor (* (pow 2 60000) (pow 2 60000))) (* (pow 2 60000) (pow 2 60000)))",
            Certainty::True,
        ),
        ("(= (ceil 5/2) 3)", Certainty::True),
        ("(= (floor (- (exp 1) 1/1000)) 2)", Certainty::True),
    ] {
        assert_eq!(expr::check(f, 64), Ok(want), "{f}");
    }
    let c = expr::eval("(ceil (exp 2^40))", 64).unwrap();
    assert!(valid(&c) && *c.lo() == *big.lo() && *c.hi() == Special::Infinity);
}

/// −0 is 0: an enclosure [−0, b] touches the edge.
#[test]
fn negative_zero_counts_as_zero_at_the_edge() {
    let z = Interval::from_endpoints(Float::with_val(53, -0.0), Float::with_val(53, 2));
    assert!(z.checked_ln().is_none());
    assert!(Interval::one(53).checked_div(&z).is_none());
    assert!(z.checked_powi(-1).is_none());
    let s = z.checked_sqrt().expect("√ is defined on [0, 2]");
    assert!(s.lo().is_zero() && *s.hi() >= 1.414);
}

// ----- regressions named after the bug (issue 23, item 6) -----------------------

/// e − e at 128 bits: ln of its enclosure (a few ulps around 0) used to be
/// [−∞, ln hi] ≈ [−∞, −87], so "(ln 0) < −80" was certified.
const LN_OF_ZERO: &str = "(< (ln (- (exp 1) (exp 1))) -80)";
/// Q = ⌊e·10⁵⁰⌋/10⁵⁰ + 10⁻⁴⁵ > e, so e − Q ≈ −1.0·10⁻⁴⁵ < 0: ln of a negative number,
/// certified at 128 bits because the enclosure of e − Q straddled 0.
const LN_OF_A_NEGATIVE: &str =
    "(< (ln (- (exp 1) 2.71828182845904523536028747135266249775724709469995)) -80)";

#[test]
fn ln_of_e_minus_e_is_undecided_not_certified() {
    for p in [24, 64, 128, 512] {
        assert_eq!(
            expr::check(LN_OF_ZERO, p),
            Ok(Certainty::Unknown),
            "{p} bits"
        );
    }
}

#[test]
fn ln_of_e_minus_e_plus_10_to_the_minus_45_is_undecided_not_certified() {
    for p in [64, 128, 512, 1024] {
        assert_eq!(
            expr::check(LN_OF_A_NEGATIVE, p),
            Ok(Certainty::Unknown),
            "{p} bits"
        );
    }
    // the argument itself is certified negative at 512 bits: the value does not exist
    assert_eq!(
        expr::check(
            "(< (- (exp 1) 2.71828182845904523536028747135266249775724709469995) 0)",
            512
        ),
        Ok(Certainty::True)
    );
}
