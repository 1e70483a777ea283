//! The f64 tier ([`F64Iv`], issue #41) against the MPFR tier: every f64 enclosure
//! contains the 512-bit MPFR enclosure of the same term (random operands and random
//! small terms), a comparison the f64 tier decides is decided alike at 512 bits, the
//! f64 tier is undefined exactly where the MPFR tier's `checked_*` forms are, each edge
//! of the module's rounding argument by name (powers of two, subnormals, underflow to
//! 0, overflow, ±0, ∞), and the IEEE 1788 vectors of `itf1788` run against the f64 tier.

use crate::common::{dyadic, is_entire, rat};
use crate::itf1788::{self, Case, Dec, Val};
use attncheck_kernel::{Certainty, F64Iv, Interval};
use proptest::prelude::*;
use rug::float::Round;
use rug::{Integer, Rational};

/// The reference precision.
const REF: u32 = 512;

const M: f64 = f64::MAX;
const TINY: f64 = 5e-324; // 2⁻¹⁰⁷⁴, the smallest subnormal

fn iv(lo: f64, hi: f64) -> F64Iv {
    let x = F64Iv::new(lo, hi);
    assert!(x.is_defined(), "[{lo}, {hi}] is an interval");
    x
}

fn pt(x: f64) -> F64Iv {
    F64Iv::from_f64(x)
}

fn entire() -> F64Iv {
    iv(f64::NEG_INFINITY, f64::INFINITY)
}

fn q(s: &str) -> Rational {
    attncheck_kernel::parse_rational(s).unwrap()
}

/// Whether the f64 enclosure contains the exact rational.
fn holds(x: F64Iv, v: &Rational) -> bool {
    x.to_interval(REF).is_some_and(|i| i.contains_rational(v))
}

// ----- random terms ---------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Term {
    Lit(Rational),
    /// A literal enclosed by an interval of relative width 2⁻ᵏ around it (an
    /// enclosure with two ends, as the evaluator's inputs often are).
    Wide(Rational, Rational),
    Neg(Box<Term>),
    Abs(Box<Term>),
    Sqrt(Box<Term>),
    Exp(Box<Term>),
    Ln(Box<Term>),
    Sin(Box<Term>),
    Cos(Box<Term>),
    Add(Box<Term>, Box<Term>),
    Sub(Box<Term>, Box<Term>),
    Mul(Box<Term>, Box<Term>),
    Div(Box<Term>, Box<Term>),
    Min(Box<Term>, Box<Term>),
    Max(Box<Term>, Box<Term>),
}

/// Leaves at every scale the rounding argument has an edge at: small rationals, dyadics
/// from the subnormals to beyond overflow, huge and tiny decimals, 0.
fn leaf() -> impl Strategy<Value = Rational> + Clone {
    prop_oneof![
        4 => rat(1000, 1000),
        2 => dyadic(-1100..1100),
        1 => dyadic(-60..60),
        1 => prop_oneof![
            Just(q("1e400")),
            Just(q("-1e400")),
            Just(q("1e-400")),
            Just(q("-1e-400")),
            Just(q("0")),
            Just(q("709.78")),
            Just(q("-745.2")),
            Just(Rational::from(Integer::from(1) << 1024u32)),
        ],
    ]
}

fn term() -> impl Strategy<Value = Term> {
    let leaf = prop_oneof![
        3 => leaf().prop_map(Term::Lit),
        1 => (leaf(), leaf()).prop_map(|(a, b)| Term::Wide(a, b)),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Term::Neg(Box::new(t))),
            inner.clone().prop_map(|t| Term::Abs(Box::new(t))),
            inner.clone().prop_map(|t| Term::Sqrt(Box::new(t))),
            inner.clone().prop_map(|t| Term::Exp(Box::new(t))),
            inner.clone().prop_map(|t| Term::Ln(Box::new(t))),
            inner.clone().prop_map(|t| Term::Sin(Box::new(t))),
            inner.clone().prop_map(|t| Term::Cos(Box::new(t))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::Sub(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::Mul(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::Div(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Term::Min(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| Term::Max(Box::new(a), Box::new(b))),
        ]
    })
}

fn eval_f64(t: &Term) -> F64Iv {
    match t {
        Term::Lit(v) => F64Iv::from_rational(v),
        Term::Wide(a, b) => {
            // the hull of the two enclosures
            let (x, y) = (F64Iv::from_rational(a), F64Iv::from_rational(b));
            let ((xl, xh), (yl, yh)) = (x.bounds().unwrap(), y.bounds().unwrap());
            F64Iv::new(xl.min(yl), xh.max(yh))
        }
        Term::Neg(x) => eval_f64(x).neg(),
        Term::Abs(x) => eval_f64(x).abs(),
        Term::Sqrt(x) => eval_f64(x).sqrt(),
        Term::Exp(x) => eval_f64(x).exp(),
        Term::Ln(x) => eval_f64(x).ln(),
        Term::Sin(x) => eval_f64(x).sin(),
        Term::Cos(x) => eval_f64(x).cos(),
        Term::Add(x, y) => eval_f64(x).add(eval_f64(y)),
        Term::Sub(x, y) => eval_f64(x).sub(eval_f64(y)),
        Term::Mul(x, y) => eval_f64(x).mul(eval_f64(y)),
        Term::Div(x, y) => eval_f64(x).div(eval_f64(y)),
        Term::Min(x, y) => eval_f64(x).min(eval_f64(y)),
        Term::Max(x, y) => eval_f64(x).max(eval_f64(y)),
    }
}

/// The MPFR tier's value at `p` bits, `None` where a `checked_*` form is.
fn eval_mp(t: &Term, p: u32) -> Option<Interval> {
    let two = |x: &Term, y: &Term| Some((eval_mp(x, p)?, eval_mp(y, p)?));
    Some(match t {
        Term::Lit(v) => Interval::from_rational(p, v),
        Term::Wide(a, b) => Interval::from_rational(p, a).hull(&Interval::from_rational(p, b)),
        Term::Neg(x) => -eval_mp(x, p)?,
        Term::Abs(x) => eval_mp(x, p)?.abs(),
        Term::Sqrt(x) => eval_mp(x, p)?.checked_sqrt()?,
        Term::Exp(x) => eval_mp(x, p)?.exp(),
        Term::Ln(x) => eval_mp(x, p)?.checked_ln()?,
        Term::Sin(x) => eval_mp(x, p)?.sin(),
        Term::Cos(x) => eval_mp(x, p)?.cos(),
        Term::Add(x, y) => two(x, y).map(|(a, b)| a + b)?,
        Term::Sub(x, y) => two(x, y).map(|(a, b)| a - b)?,
        Term::Mul(x, y) => two(x, y).map(|(a, b)| a * b)?,
        Term::Div(x, y) => two(x, y).and_then(|(a, b)| a.checked_div(&b))?,
        Term::Min(x, y) => two(x, y).map(|(a, b)| a.min(&b))?,
        Term::Max(x, y) => two(x, y).map(|(a, b)| a.max(&b))?,
    })
}

/// The five comparisons of `a` and `b` in one tier.
fn decisions_f64(a: F64Iv, b: F64Iv) -> [Certainty; 5] {
    [a.lt(b), a.le(b), a.gt(b), a.ge(b), a.eq_exact(b)]
}

fn decisions_mp(a: &Option<Interval>, b: &Option<Interval>) -> [Certainty; 5] {
    match (a, b) {
        (Some(a), Some(b)) => [a.lt(b), a.le(b), a.gt(b), a.ge(b), a.eq_exact(b)],
        _ => [Certainty::Unknown; 5],
    }
}

/// Every node of a term: f64 undefined exactly where MPFR is (an f64 enclosure that
/// contains the MPFR one crosses every domain edge that one crosses), and otherwise the
/// f64 enclosure contains the 512-bit one.
fn check_term(t: &Term) -> Result<(), TestCaseError> {
    let f = eval_f64(t);
    let m = eval_mp(t, REF);
    match (f.to_interval(REF), &m) {
        (Some(fi), Some(mi)) => prop_assert!(
            fi.contains(mi),
            "f64 {:?} does not contain MPFR {:?} for {:?}",
            f,
            mi,
            t
        ),
        (None, None) => {}
        (fi, mi) => {
            // the MPFR tier is undefined and the f64 not: a domain edge missed; or the
            // f64 undefined where the MPFR tier is defined: only when the f64 argument
            // enclosure (wider) reaches an edge the 512-bit one does not
            prop_assert!(
                mi.is_some() && fi.is_none(),
                "f64 {:?}, MPFR {:?} for {:?}",
                f,
                m,
                t
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Random small terms: containment of the 512-bit enclosure at the root (every
    /// subterm is a root of another draw), and every comparison of two terms decided by
    /// the f64 tier is decided alike by the MPFR tier.
    #[test]
    fn f64_enclosures_contain_the_512_bit_ones_and_decide_only_as_mpfr(
        s in term(),
        t in term(),
    ) {
        check_term(&s)?;
        check_term(&t)?;
        let (fs, ft) = (eval_f64(&s), eval_f64(&t));
        let (ms, mt) = (eval_mp(&s, REF), eval_mp(&t, REF));
        let (df, dm) = (decisions_f64(fs, ft), decisions_mp(&ms, &mt));
        for (f, m) in df.iter().zip(dm) {
            prop_assert!(
                *f == Certainty::Unknown || *f == m,
                "f64 decides {:?}, MPFR {:?}: {:?} vs {:?}", df, dm, s, t
            );
        }
        // the same against 0, ±1
        for c in ["0", "1", "-1"] {
            let (fc, mc) = (F64Iv::from_rational(&q(c)), Some(Interval::from_rational(REF, &q(c))));
            let (df, dm) = (decisions_f64(fs, fc), decisions_mp(&ms, &mc));
            for (f, m) in df.iter().zip(dm) {
                prop_assert!(*f == Certainty::Unknown || *f == m, "{:?} vs {}: {:?} {:?}", s, c, df, dm);
            }
        }
    }

    /// One operation on binary64 operands: the f64 result contains the exact one's
    /// 512-bit enclosure and lies within one step outside its binary64 rounding
    /// (`[↓RD(y), ↑RU(y)]`: RN(y) is RD(y) or RU(y)), for every operation, exp and ln
    /// included (a function off by more than its rounding fails containment somewhere).
    #[test]
    fn each_operation_is_within_one_step_of_the_exact_result(
        a in any::<f64>(), b in any::<f64>(), c in any::<f64>(), d in any::<f64>(),
        small in -800.0f64..800.0,
    ) {
        let x = F64Iv::new(a.min(b), a.max(b));
        let y = F64Iv::new(c.min(d), c.max(d));
        prop_assume!(x.is_defined() && y.is_defined());
        let (xm, ym) = (x.to_interval(REF).unwrap(), y.to_interval(REF).unwrap());
        let e = pt(small);
        let em = e.to_interval(REF).unwrap();
        let cases: Vec<(&str, F64Iv, Option<Interval>)> = vec![
            ("add", x.add(y), Some(&xm + &ym)),
            ("sub", x.sub(y), Some(&xm - &ym)),
            ("mul", x.mul(y), Some(&xm * &ym)),
            ("div", x.div(y), xm.checked_div(&ym)),
            ("sqrt", x.sqrt(), xm.checked_sqrt()),
            ("ln", x.ln(), xm.checked_ln()),
            ("exp", x.exp(), Some(xm.exp())),
            ("exp small", e.exp(), Some(em.exp())),
            ("ln small", e.abs().ln(), em.abs().checked_ln()),
            ("sin small", e.sin(), Some(em.sin())),
            ("cos small", e.cos(), Some(em.cos())),
        ];
        for (name, f, m) in cases {
            match (f.bounds(), m) {
                (None, None) => {}
                (Some((lo, hi)), Some(m)) => {
                    prop_assert!(f.to_interval(REF).unwrap().contains(&m), "{name} {:?} ⊉ {:?}", f, m);
                    let rlo = m.lo().to_f64_round(Round::Down);
                    let rhi = m.hi().to_f64_round(Round::Up);
                    prop_assert!(
                        lo >= rlo.next_down() && hi <= rhi.next_up(),
                        "{name} {:?} is more than one step beyond [{rlo:e}, {rhi:e}]", f
                    );
                }
                (f, m) => prop_assert!(false, "{name}: f64 {:?}, MPFR {:?}", f, m),
            }
        }
    }

    /// The premise of `check`'s escalation (`expr::tier`, 2.): from 53 bits up, every
    /// MPFR enclosure of a random term lies inside its f64 enclosure, node by node (every
    /// subterm is a root of another draw), and the MPFR tier is undefined only where the
    /// f64 tier is; so every comparison the f64 tier decides, MPFR at that precision
    /// decides alike.
    #[test]
    fn f64_enclosures_contain_the_mpfr_ones_from_53_bits(s in term(), t in term()) {
        for p in [53u32, 54, 64, 113, 128] {
            let (fs, ft) = (eval_f64(&s), eval_f64(&t));
            let (ms, mt) = (eval_mp(&s, p), eval_mp(&t, p));
            for (f, m, x) in [(fs, &ms, &s), (ft, &mt, &t)] {
                match (f.to_interval(REF), m) {
                    (Some(fi), Some(mi)) => prop_assert!(
                        fi.contains(mi), "{} bits: f64 {:?} ⊉ MPFR {:?} for {:?}", p, f, mi, x
                    ),
                    (Some(_), None) => prop_assert!(
                        false, "{} bits: MPFR undefined, f64 {:?} for {:?}", p, f, x
                    ),
                    (None, _) => {}
                }
            }
            let (df, dm) = (decisions_f64(fs, ft), decisions_mp(&ms, &mt));
            for (f, m) in df.iter().zip(dm) {
                prop_assert!(
                    *f == Certainty::Unknown || *f == m,
                    "{} bits: f64 decides {:?}, MPFR {:?}: {:?} vs {:?}", p, df, dm, s, t
                );
            }
        }
    }

    /// Rationals of every scale: the enclosure contains them, is a point exactly when
    /// the rational is a binary64 number, and is otherwise two adjacent numbers.
    #[test]
    fn from_rational_encloses_and_is_a_point_exactly_when_representable(v in leaf(), w in rat(1 << 40, 1 << 20)) {
        for v in [v, w] {
            let x = F64Iv::from_rational(&v);
            prop_assert!(holds(x, &v), "{v} ∉ {:?}", x);
            let (lo, hi) = x.bounds().unwrap();
            let representable = v.to_f64().is_finite() && Rational::from_f64(v.to_f64()) == Some(v.clone());
            if representable {
                prop_assert_eq!(lo, hi);
            } else {
                prop_assert_eq!(lo.next_up(), hi, "{} gives {:?}", v, x);
            }
        }
    }
}

// ----- the rounding argument's edges, one by one ------------------------------------------

#[test]
fn one_step_outward_encloses_at_a_power_of_two() {
    // 1 − 2⁻⁶⁰ rounds to 1; the number below 1 is 1 − 2⁻⁵³ (half the ulp above 1)
    let below = pt(1.0).add(F64Iv::from_rational(&-(Rational::from(1) >> 60u32)));
    assert!(holds(
        below,
        &(Rational::from(1) - (Rational::from(1) >> 60u32))
    ));
    assert_eq!(
        below.bounds(),
        Some((1.0 - f64::EPSILON / 2.0, 1.0 + f64::EPSILON))
    );
    // 1 + 2⁻⁶⁰ rounds to 1 too, and the upper end 1 + 2⁻⁵² is above it
    let above = pt(1.0).add(F64Iv::from_rational(&(Rational::from(1) >> 60u32)));
    assert!(holds(
        above,
        &(Rational::from(1) + (Rational::from(1) >> 60u32))
    ));
    // a product that rounds up to a power of two: (1 + 2⁻²⁷)(1 − 2⁻²⁷) = 1 − 2⁻⁵⁴
    let (a, b) = (1.0 + 2f64.powi(-27), 1.0 - 2f64.powi(-27));
    let p = pt(a).mul(pt(b));
    let exact = Rational::from_f64(a).unwrap() * Rational::from_f64(b).unwrap();
    assert!(holds(p, &exact), "{p:?}");
    assert!(p.lt(pt(1.0)) == Certainty::Unknown); // 1 − 2⁻⁵⁴ < 1, not decided in f64
}

#[test]
fn underflow_to_a_subnormal_and_to_zero_is_enclosed() {
    // 2⁻¹⁰⁰⁰ · 2⁻⁶⁰ = 2⁻¹⁰⁶⁰: a subnormal, exact, widened by one subnormal step
    let s = pt(2f64.powi(-1000)).mul(pt(2f64.powi(-60)));
    let (lo, hi) = s.bounds().unwrap();
    assert_eq!(
        (lo.next_up(), hi.next_down()),
        (2f64.powi(-1060), 2f64.powi(-1060))
    );
    // 2⁻¹⁰⁷⁴ / 2 = 2⁻¹⁰⁷⁵ rounds (to even) to 0: enclosed by ±2⁻¹⁰⁷⁴
    let h = pt(TINY).div(pt(2.0));
    assert_eq!(h.bounds(), Some((-TINY, TINY)));
    assert!(holds(h, &(Rational::from(1) >> 1075u32)));
    // 10⁻²⁰⁰ · 10⁻²⁰⁰ underflows to 0: the exact 10⁻⁴⁰⁰-ish product is inside, and its
    // sign is not decided (the lower end is −2⁻¹⁰⁷⁴)
    let (a, b) = (1e-200, 1e-200);
    let z = pt(a).mul(pt(b));
    assert!(holds(
        z,
        &(Rational::from_f64(a).unwrap() * Rational::from_f64(b).unwrap())
    ));
    assert_eq!(z.gt(pt(0.0)), Certainty::Unknown);
    // −10⁻²⁰⁰ · 10⁻²⁰⁰ likewise from below
    let zn = pt(-a).mul(pt(b));
    assert!(holds(
        zn,
        &-(Rational::from_f64(a).unwrap() * Rational::from_f64(b).unwrap())
    ));
    // subnormal sums are exact and widened by one subnormal step
    assert_eq!(pt(TINY).add(pt(TINY)).bounds(), Some((TINY, 3.0 * TINY)));
}

#[test]
fn overflow_gives_an_unbounded_end_that_still_decides_the_other_side() {
    let p = pt(1e308).mul(pt(10.0));
    assert_eq!(p.bounds(), Some((M, f64::INFINITY)));
    assert!(holds(p, &(Rational::from_f64(1e308).unwrap() * 10u32)));
    assert_eq!(p.gt(pt(1e308)), Certainty::True); // decided: every member is ≥ M
    assert_eq!(p.lt(pt(M)), Certainty::False);
    assert_eq!(p.le(pt(M)), Certainty::Unknown); // M itself is a member
                                                 // M + M and its negation
    assert_eq!(pt(M).add(pt(M)).bounds(), Some((M, f64::INFINITY)));
    assert_eq!(pt(-M).sub(pt(M)).bounds(), Some((f64::NEG_INFINITY, -M)));
    // a sum that rounds to M (M + 1): the upper end steps to +∞
    assert_eq!(
        pt(M).add(pt(1.0)).bounds(),
        Some((M.next_down(), f64::INFINITY))
    );
    // the unbounded interval keeps working: (1e309-ish) − 1e308 is still ≥ 0 … but not
    // bounded above, and ∞ − ∞ never appears
    let d = p.sub(pt(1e308));
    assert_eq!(d.bounds().map(|b| b.1), Some(f64::INFINITY));
    assert!(d.ge(pt(0.0)) == Certainty::True);
    let dd = p.sub(p);
    assert_eq!(dd.bounds(), Some((f64::NEG_INFINITY, f64::INFINITY)));
}

#[test]
fn exact_results_are_widened_by_one_step() {
    assert_eq!(
        pt(1.0).add(pt(1.0)).bounds(),
        Some((2f64.next_down(), 2f64.next_up()))
    );
    assert_eq!(pt(0.0).add(pt(0.0)).bounds(), Some((-TINY, TINY)));
    assert_eq!(
        pt(3.0).sub(pt(1.0)).bounds(),
        Some((2f64.next_down(), 2f64.next_up()))
    );
    assert_eq!(
        pt(3.0).mul(pt(2.0)).bounds(),
        Some((6f64.next_down(), 6f64.next_up()))
    );
    assert_eq!(
        pt(3.0).div(pt(2.0)).bounds(),
        Some((1.5f64.next_down(), 1.5f64.next_up()))
    );
    assert_eq!(
        pt(4.0).sqrt().bounds(),
        Some((2f64.next_down(), 2f64.next_up()))
    );
    assert_eq!(
        pt(0.0).exp().bounds(),
        Some((1f64.next_down(), 1f64.next_up()))
    );
    assert_eq!(pt(1.0).ln().bounds(), Some((-TINY, TINY)));
    // the exact operations are not widened
    assert_eq!(iv(-2.0, 3.0).neg().bounds(), Some((-3.0, 2.0)));
    assert_eq!(iv(-2.0, 3.0).abs().bounds(), Some((0.0, 3.0)));
    assert_eq!(iv(-5.0, -2.0).abs().bounds(), Some((2.0, 5.0)));
    assert_eq!(iv(2.0, 5.0).abs().bounds(), Some((2.0, 5.0)));
    assert_eq!(iv(-5.0, 3.0).abs().bounds(), Some((0.0, 5.0)));
    assert_eq!(iv(-2.0, 3.0).min(iv(-1.0, 1.0)).bounds(), Some((-2.0, 1.0)));
    assert_eq!(iv(-2.0, 3.0).max(iv(-1.0, 1.0)).bounds(), Some((-1.0, 3.0)));
    assert_eq!(iv(-2.0, 3.0).min(iv(-3.0, 4.0)).bounds(), Some((-3.0, 3.0)));
    assert_eq!(iv(-2.0, 3.0).max(iv(-3.0, 4.0)).bounds(), Some((-2.0, 4.0)));
    // the mixed-sign products take the right corners
    assert_eq!(
        iv(-2.0, 3.0).mul(iv(-5.0, 7.0)).bounds(),
        Some(((-15f64).next_down(), 21f64.next_up()))
    );
    assert_eq!(
        iv(-2.0, -1.0).mul(iv(3.0, 5.0)).bounds(),
        Some(((-10f64).next_down(), (-3f64).next_up()))
    );
    assert_eq!(
        iv(1.0, 2.0).div(iv(-4.0, -2.0)).bounds(),
        Some(((-1f64).next_down(), (-0.25f64).next_up()))
    );
}

#[test]
fn sqrt_and_exp_are_clamped_at_zero() {
    // √0 = 0 and e^(−1000) underflows to 0: one step down would be −2⁻¹⁰⁷⁴, clamped to 0
    assert_eq!(iv(0.0, 4.0).sqrt().bounds().map(|b| b.0), Some(0.0));
    assert_eq!(iv(-0.0, 4.0).sqrt().bounds().map(|b| b.0), Some(0.0));
    assert_eq!(iv(-1000.0, 0.0).exp().bounds().map(|b| b.0), Some(0.0));
    assert_eq!(
        iv(f64::NEG_INFINITY, 0.0).exp().bounds().map(|b| b.0),
        Some(0.0)
    );
    assert_eq!(iv(-1000.0, 0.0).exp().ge(pt(0.0)), Certainty::True);
    // a positive lower end is not clamped
    assert_eq!(
        iv(1.0, 4.0).sqrt().bounds().map(|b| b.0),
        Some(1f64.next_down())
    );
}

#[test]
fn plus_and_minus_zero_are_the_same_real() {
    let (p, n) = (pt(0.0), pt(-0.0));
    assert_eq!(p.eq_exact(n), Certainty::True);
    assert_eq!(n.lt(p), Certainty::False);
    assert_eq!(n.le(p), Certainty::True);
    assert_eq!(p.ge(n), Certainty::True);
    assert_eq!(p.gt(n), Certainty::False);
    // √[−0, 4] is inside the domain, ln and ÷ at −0 are not
    assert!(iv(-0.0, 4.0).sqrt().is_defined());
    assert_eq!(iv(-0.0, 4.0).ln(), F64Iv::UNDEFINED);
    assert_eq!(pt(1.0).div(iv(-0.0, 4.0)), F64Iv::UNDEFINED);
    assert_eq!(pt(1.0).div(iv(-4.0, -0.0)), F64Iv::UNDEFINED);
    assert_eq!(pt(1.0).div(n), F64Iv::UNDEFINED);
    // |[−0, −0]| and −[0, 0] are 0
    assert!(n.abs().eq_exact(p).is_true());
    assert!(p.neg().eq_exact(p).is_true());
    // 0·∞ = 0: [0, 0] × [−∞, +∞] is 0 (one step wide), never NaN nor undefined
    assert_eq!(p.mul(entire()).bounds(), Some((-TINY, TINY)));
    assert_eq!(n.mul(iv(1.0, f64::INFINITY)).bounds(), Some((-TINY, TINY)));
    assert_eq!(
        iv(0.0, 1.0).mul(iv(1.0, f64::INFINITY)).bounds(),
        Some((-TINY, f64::INFINITY))
    );
}

#[test]
fn division_by_an_interval_containing_zero_is_undefined() {
    for d in [
        iv(-1.0, 1.0),
        iv(0.0, 1.0),
        iv(-1.0, 0.0),
        pt(0.0),
        entire(),
        iv(-TINY, TINY),
    ] {
        let r = iv(1.0, 2.0).div(d);
        assert_eq!(r, F64Iv::UNDEFINED, "1/{d:?}");
        assert_eq!(r.to_interval(64), None);
        for c in [pt(0.0), pt(1.0), pt(-1.0), entire()] {
            assert_eq!(decisions_f64(r, c), [Certainty::Unknown; 5]);
            assert_eq!(decisions_f64(c, r), [Certainty::Unknown; 5]);
        }
        // undefined spreads: 0·t, |t|, min(t, 3), e^t are undefined too
        assert_eq!(pt(0.0).mul(r), F64Iv::UNDEFINED);
        assert_eq!(r.abs(), F64Iv::UNDEFINED);
        assert_eq!(r.neg(), F64Iv::UNDEFINED);
        assert_eq!(r.min(pt(3.0)), F64Iv::UNDEFINED);
        assert_eq!(pt(3.0).max(r), F64Iv::UNDEFINED);
        assert_eq!(r.exp(), F64Iv::UNDEFINED);
        assert_eq!(r.sqrt(), F64Iv::UNDEFINED);
        assert_eq!(pt(1.0).add(r), F64Iv::UNDEFINED);
        assert_eq!(r.sub(pt(1.0)), F64Iv::UNDEFINED);
        assert_eq!(pt(1.0).div(r), F64Iv::UNDEFINED);
    }
    // a divisor just off 0 is fine
    assert!(pt(1.0).div(iv(TINY, 1.0)).is_defined());
    assert_eq!(
        pt(1.0).div(iv(TINY, 1.0)).bounds().map(|b| b.1),
        Some(f64::INFINITY)
    );
    // ∞/∞: the whole line, as in the MPFR tier
    let ray = iv(1.0, f64::INFINITY);
    assert_eq!(
        ray.div(ray).bounds(),
        Some((f64::NEG_INFINITY, f64::INFINITY))
    );
    // finite/∞ is 0: [1, 2] / [1, +∞] = [0, 2] (one step out)
    assert_eq!(
        iv(1.0, 2.0).div(ray).bounds(),
        Some((-TINY, 2f64.next_up()))
    );
}

#[test]
fn ln_of_a_non_positive_enclosure_is_undefined() {
    for x in [
        iv(0.0, 1.0),
        iv(-1.0, 2.0),
        iv(-2.0, -1.0),
        pt(0.0),
        pt(-0.0),
        entire(),
    ] {
        assert_eq!(x.ln(), F64Iv::UNDEFINED, "ln {x:?}");
        assert_eq!(x.ln().lt(pt(f64::MAX)), Certainty::Unknown);
    }
    let l = iv(TINY, 1.0).ln();
    let (lo, hi) = l.bounds().unwrap();
    assert!(lo < -744.44 && lo > -744.45 && hi == TINY, "{l:?}");
    assert_eq!(
        iv(1.0, f64::INFINITY).ln().bounds().map(|b| b.1),
        Some(f64::INFINITY)
    );
}

#[test]
fn sqrt_of_an_enclosure_reaching_below_zero_is_undefined() {
    for x in [
        iv(-1.0, 4.0),
        iv(-2.0, -1.0),
        pt(-TINY),
        iv(-TINY, 0.0),
        entire(),
    ] {
        assert_eq!(x.sqrt(), F64Iv::UNDEFINED, "sqrt {x:?}");
    }
    assert_eq!(
        iv(4.0, f64::INFINITY).sqrt().bounds(),
        Some((2f64.next_down(), f64::INFINITY))
    );
}

#[test]
fn exp_of_large_arguments_has_an_infinite_upper_end() {
    // e^709 is finite, e^710 overflows: the upper end is +∞, the lower one finite
    let a = iv(709.0, 710.0).exp();
    let (lo, hi) = a.bounds().unwrap();
    assert!(
        lo.is_finite() && lo > 8.2e307 && hi == f64::INFINITY,
        "{a:?}"
    );
    // both ends overflow: [M, +∞], still above every finite number below M
    assert_eq!(iv(710.0, 711.0).exp().bounds(), Some((M, f64::INFINITY)));
    assert_eq!(iv(710.0, 711.0).exp().gt(pt(1e308)), Certainty::True);
    assert_eq!(pt(f64::MAX).exp().bounds(), Some((M, f64::INFINITY)));
    assert_eq!(
        iv(0.0, f64::INFINITY).exp().bounds().map(|b| b.1),
        Some(f64::INFINITY)
    );
    // against MPFR: e^710 is beyond M
    let big = Interval::from_f64(128, 710.0).exp();
    assert!(big.lo().to_f64_round(Round::Down) == M);
}

#[test]
fn huge_and_tiny_rationals_are_enclosed() {
    assert_eq!(
        F64Iv::from_rational(&q("1e400")).bounds(),
        Some((M, f64::INFINITY))
    );
    assert_eq!(
        F64Iv::from_rational(&q("-1e400")).bounds(),
        Some((f64::NEG_INFINITY, -M))
    );
    assert_eq!(
        F64Iv::from_rational(&q("1e-400")).bounds(),
        Some((0.0, TINY))
    );
    let neg_tiny = F64Iv::from_rational(&q("-1e-400")).bounds().unwrap();
    assert!(neg_tiny.0 == -TINY && neg_tiny.1 == 0.0);
    // 2⁻¹⁰⁷⁴ is a point; 2⁻¹⁰⁷⁵ lies between 0 and it; 2¹⁰²⁴ is beyond M
    assert_eq!(
        F64Iv::from_rational(&(Rational::from(1) >> 1074u32)).bounds(),
        Some((TINY, TINY))
    );
    assert_eq!(
        F64Iv::from_rational(&(Rational::from(1) >> 1075u32)).bounds(),
        Some((0.0, TINY))
    );
    assert_eq!(
        F64Iv::from_rational(&Rational::from(Integer::from(1) << 1024u32)).bounds(),
        Some((M, f64::INFINITY))
    );
    // M exactly is a point; 2⁵³ + 1 is two adjacent numbers
    assert_eq!(
        F64Iv::from_rational(&Rational::from_f64(M).unwrap()).bounds(),
        Some((M, M))
    );
    let odd = F64Iv::from_rational(&Rational::from((Integer::from(1) << 53u32) + 1u32));
    assert_eq!(odd.bounds(), Some((2f64.powi(53), 2f64.powi(53) + 2.0)));
    // 1/3: two adjacent numbers, 1/3 strictly inside (not rounded to nearest)
    let third = F64Iv::from_rational(&Rational::from((1, 3)));
    let (lo, hi) = third.bounds().unwrap();
    assert_eq!(lo.next_up(), hi);
    assert!(holds(third, &Rational::from((1, 3))));
    assert_eq!(
        F64Iv::from_rational(&Rational::from((-1, 3))).bounds(),
        Some((-hi, -lo))
    );
}

#[test]
fn what_is_not_an_interval_is_undefined() {
    for (lo, hi) in [
        (f64::NAN, 1.0),
        (0.0, f64::NAN),
        (2.0, 1.0),
        (f64::INFINITY, f64::INFINITY),
        (f64::NEG_INFINITY, f64::NEG_INFINITY),
    ] {
        assert_eq!(F64Iv::new(lo, hi), F64Iv::UNDEFINED, "[{lo}, {hi}]");
    }
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(F64Iv::from_f64(x), F64Iv::UNDEFINED);
    }
    assert!(F64Iv::new(1.0, 1.0).is_defined() && entire().is_defined());
    assert!(F64Iv::new(f64::NEG_INFINITY, -M).is_defined());
    assert!(!entire().contains_f64(f64::INFINITY) && entire().contains_f64(M));
    assert!(!F64Iv::UNDEFINED.contains_f64(0.0));
    assert!(iv(1.0, 2.0).contains_f64(1.0) && iv(1.0, 2.0).contains_f64(2.0));
    assert!(
        !iv(1.0, 2.0).contains_f64(2f64.next_up()) && !iv(1.0, 2.0).contains_f64(1f64.next_down())
    );
}

#[test]
fn comparisons_are_decided_only_when_the_intervals_are_apart() {
    let (a, b, c) = (iv(1.0, 2.0), iv(2.0, 3.0), iv(2.5, 4.0));
    // touching at 2: ≤ holds, < does not decide
    assert_eq!(
        decisions_f64(a, b),
        [
            Certainty::Unknown,
            Certainty::True,
            Certainty::False,
            Certainty::Unknown,
            Certainty::Unknown
        ]
    );
    assert_eq!(
        decisions_f64(a, c),
        [
            Certainty::True,
            Certainty::True,
            Certainty::False,
            Certainty::False,
            Certainty::False
        ]
    );
    assert_eq!(
        decisions_f64(c, a),
        [
            Certainty::False,
            Certainty::False,
            Certainty::True,
            Certainty::True,
            Certainty::False
        ]
    );
    assert_eq!(decisions_f64(b, c), [Certainty::Unknown; 5]);
    assert_eq!(
        decisions_f64(pt(2.0), pt(2.0)),
        [
            Certainty::False,
            Certainty::True,
            Certainty::False,
            Certainty::True,
            Certainty::True
        ]
    );
    // a point inside a wider interval: equality is not decided
    assert_eq!(pt(2.0).eq_exact(a), Certainty::Unknown);
    assert_eq!(a.eq_exact(pt(2.0)), Certainty::Unknown);
    // unbounded ends: members are reals, so [−∞, 0] < [1, +∞]
    let (neg, pos) = (iv(f64::NEG_INFINITY, 0.0), iv(1.0, f64::INFINITY));
    assert_eq!(neg.lt(pos), Certainty::True);
    assert_eq!(pos.le(neg), Certainty::False);
    assert_eq!(entire().lt(pt(0.0)), Certainty::Unknown);
    assert_eq!(pt(M).lt(iv(M, f64::INFINITY)), Certainty::Unknown);
    assert_eq!(pt(M).le(iv(M, f64::INFINITY)), Certainty::True);
    // and each answer is the MPFR tier's on the same sets
    for (x, y) in [
        (a, b),
        (a, c),
        (b, c),
        (neg, pos),
        (pt(2.0), a),
        (pt(M), iv(M, f64::INFINITY)),
    ] {
        let (xm, ym) = (x.to_interval(53), y.to_interval(53));
        assert_eq!(decisions_f64(x, y), decisions_mp(&xm, &ym), "{x:?} {y:?}");
    }
}

#[test]
fn conversions_between_the_tiers_are_exact_at_53_bits_and_outward_below() {
    let third = F64Iv::from_rational(&Rational::from((1, 3)));
    let (lo, hi) = third.bounds().unwrap();
    let i = third.to_interval(53).unwrap();
    assert_eq!((i.lo().to_f64(), i.hi().to_f64()), (lo, hi));
    assert_eq!(F64Iv::from_interval(&i), third);
    // at 24 bits the ends round outward
    let j = third.to_interval(24).unwrap();
    assert!(j.contains(&i) && *j.lo() < *i.lo() && *j.hi() > *i.hi());
    // MPFR's wider exponent range: an MPFR 10⁴⁰⁰ becomes [M, +∞], 10⁻⁴⁰⁰ [0, 2⁻¹⁰⁷⁴]
    assert_eq!(
        F64Iv::from_interval(&Interval::from_rational(128, &q("1e400"))).bounds(),
        Some((M, f64::INFINITY))
    );
    assert_eq!(
        F64Iv::from_interval(&Interval::from_rational(128, &q("1e-400"))).bounds(),
        Some((0.0, TINY))
    );
    assert_eq!(F64Iv::from_interval(&Interval::entire(64)), entire());
    assert_eq!(entire().to_interval(64).map(|e| is_entire(&e)), Some(true));
    assert_eq!(F64Iv::UNDEFINED.to_interval(64), None);
    // a binary64 end of any kind survives the round trip at 53 bits
    for x in [TINY, -TINY, M, -M, 0.1, 1e-310, -0.0] {
        let r = F64Iv::from_interval(&pt(x).to_interval(53).unwrap());
        assert_eq!(r.bounds(), Some((x, x)));
    }
}

// ----- the IEEE 1788 vectors against the f64 tier -----------------------------------------

/// The f64 counterpart of an operation of the vectors (`None`: not in the f64 tier).
fn f64_op(op: &str, a: &[F64Iv]) -> Option<F64Iv> {
    Some(match (op, a) {
        ("neg", [x]) => x.neg(),
        ("add", [x, y]) => x.add(*y),
        ("sub", [x, y]) => x.sub(*y),
        ("mul", [x, y]) => x.mul(*y),
        ("div", [x, y]) => x.div(*y),
        ("recip", [x]) => pt(1.0).div(*x),
        ("sqrt", [x]) => x.sqrt(),
        ("exp", [x]) => x.exp(),
        ("log", [x]) => x.ln(),
        ("sin", [x]) => x.sin(),
        ("cos", [x]) => x.cos(),
        ("abs", [x]) => x.abs(),
        ("min", [x, y]) => x.min(*y),
        ("max", [x, y]) => x.max(*y),
        _ => return None,
    })
}

/// No operation on binary64 numbers rounds in these: their ends are the exact ends.
const EXACT: [&str; 4] = ["neg", "abs", "min", "max"];

fn f64_arg(v: &Val) -> Option<F64Iv> {
    match v {
        Val::Iv(lo, hi, d) if !matches!(d, Some(Dec::Trv) | Some(Dec::Ill)) => {
            Some(F64Iv::new(lo.to_f64(), hi.to_f64()))
        }
        Val::Iv(..) | Val::Nai => Some(F64Iv::UNDEFINED),
        _ => None, // empty: not representable
    }
}

fn f64_decides_nothing(k: F64Iv, extra: &[f64]) -> Result<(), String> {
    let mut probes = vec![pt(-1.0), pt(0.0), pt(1.0)];
    probes.extend(extra.iter().filter(|x| x.is_finite()).map(|&x| pt(x)));
    for c in probes {
        for r in decisions_f64(k, c).into_iter().chain(decisions_f64(c, k)) {
            if r != Certainty::Unknown {
                return Err(format!("{k:?} against {c:?} decides {r:?}"));
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum F64Outcome {
    /// Contained, each end within one step of the standard's (exactly it for the
    /// exact operations).
    WithinOneStep,
    /// ∞/∞: the whole line, as in the MPFR tier.
    WholeLine,
    /// Undefined, where the MPFR tier's `checked_*` is `None` too; nothing decided.
    Undefined,
    /// An input undefined (`trv`, `ill`, NaI): undefined, nothing decided.
    UndefinedArgument,
    /// A relation decided as the standard says.
    Agrees,
    Skipped,
}

fn run_f64(c: &Case) -> Result<F64Outcome, String> {
    if c.args.iter().any(|a| matches!(a, Val::Empty(_))) {
        return Ok(F64Outcome::Skipped);
    }
    if matches!(
        c.op.as_str(),
        "precedes" | "strictPrecedes" | "disjoint" | "equal"
    ) {
        return relation_f64(c);
    }
    let args: Option<Vec<F64Iv>> = c.args.iter().map(f64_arg).collect();
    let Some(args) = args else {
        return Ok(F64Outcome::Skipped); // a number argument (pown): not in the f64 tier
    };
    let Some(k) = f64_op(&c.op, &args) else {
        return Ok(F64Outcome::Skipped);
    };
    if args.iter().any(|a| !a.is_defined()) {
        if k.is_defined() {
            return Err(format!("an undefined argument gives {k:?}"));
        }
        f64_decides_nothing(k, &[])?;
        return Ok(F64Outcome::UndefinedArgument);
    }
    // the MPFR tier on the same sets: undefined exactly where its checked form is
    let mp_args: Vec<Interval> = args
        .iter()
        .map(|a| a.to_interval(itf1788::P).unwrap())
        .collect();
    let (mp_total, mp_checked) =
        itf1788::kernel_op(&c.op, &mp_args, None).ok_or("no MPFR counterpart")?;
    if k.is_defined() != mp_checked.is_some() {
        return Err(format!("f64 {k:?}, MPFR checked {mp_checked:?}"));
    }
    let Some((klo, khi)) = k.bounds() else {
        f64_decides_nothing(k, &[])?;
        return match &c.result {
            Val::Empty(_) | Val::Nai | Val::Iv(..) => Ok(F64Outcome::Undefined),
            other => Err(format!("unexpected result {other:?}")),
        };
    };
    let Val::Iv(lo, hi, dec) = &c.result else {
        return Err(format!(
            "f64 {k:?} where the standard's result is {:?}",
            c.result
        ));
    };
    if *dec == Some(Dec::Trv) {
        return Err(format!("a `trv` result, but the f64 tier gives {k:?}"));
    }
    let (lo, hi) = (lo.to_f64(), hi.to_f64());
    if !(klo <= lo && hi <= khi) {
        return Err(format!(
            "[{klo:e}, {khi:e}] does not contain [{lo:e}, {hi:e}]"
        ));
    }
    if klo == f64::NEG_INFINITY && khi == f64::INFINITY && is_entire(&mp_total) && c.op == "div" {
        return Ok(F64Outcome::WholeLine);
    }
    let tight = if EXACT.contains(&c.op.as_str()) {
        klo == lo && khi == hi
    } else {
        klo >= lo.next_down() && khi <= hi.next_up()
    };
    if tight {
        Ok(F64Outcome::WithinOneStep)
    } else {
        Err(format!(
            "[{klo:e}, {khi:e}] is more than one step beyond [{lo:e}, {hi:e}]"
        ))
    }
}

fn relation_f64(c: &Case) -> Result<F64Outcome, String> {
    let (Some(a), Some(b)) = (f64_arg(&c.args[0]), f64_arg(&c.args[1])) else {
        return Ok(F64Outcome::Skipped);
    };
    if !a.is_defined() || !b.is_defined() {
        // NaI: the standard's relations are false; nothing is decided here
        return if decisions_f64(a, b) == [Certainty::Unknown; 5] {
            Ok(F64Outcome::UndefinedArgument)
        } else {
            Err(format!("{:?}", decisions_f64(a, b)))
        };
    }
    let Val::Bool(want) = c.result else {
        return Err("a boolean result".into());
    };
    let ok = match c.op.as_str() {
        "precedes" => (a.le(b) == Certainty::True) == want && b.ge(a) == a.le(b),
        "strictPrecedes" => (a.lt(b) == Certainty::True) == want && b.gt(a) == a.lt(b),
        "disjoint" => (a.eq_exact(b) == Certainty::False) == want,
        "equal" => match a.eq_exact(b) {
            Certainty::True => want,
            Certainty::False => !want,
            Certainty::Unknown => {
                let (lo, hi) = a.bounds().unwrap();
                !(want && lo == hi)
            }
        },
        _ => unreachable!(),
    };
    if ok {
        Ok(F64Outcome::Agrees)
    } else {
        Err(format!(
            "le {:?}, lt {:?}, eq {:?}",
            a.le(b),
            a.lt(b),
            a.eq_exact(b)
        ))
    }
}

/// How many cases of each file the f64 tier runs (a reader or a mapping that drops
/// cases fails here). elem: 656 before sin and cos joined the tier, then their 110
/// cases less the two with an empty input (`sin [empty]`, `cos [empty]`).
const F64_COUNTS: [(&str, usize); 4] = [
    ("libieeep1788_elem.itl", 764),
    ("libieeep1788_set.itl", 0),
    ("libieeep1788_bool.itl", 109),
    ("libieeep1788_num.itl", 0),
];

#[test]
fn itf1788_vectors_are_contained_by_the_f64_tier_and_undefined_results_decide_nothing() {
    let mut failures = Vec::new();
    let mut by: std::collections::BTreeMap<(String, F64Outcome), usize> = Default::default();
    let mut counts = Vec::new();
    for (file, text) in itf1788::FILES {
        let mut ran = 0;
        for c in itf1788::cases(file, text) {
            match run_f64(&c) {
                Ok(o) => {
                    *by.entry((c.op.clone(), o)).or_default() += 1;
                    if o != F64Outcome::Skipped {
                        ran += 1;
                    }
                }
                Err(e) => failures.push(format!(
                    "{}:{} ({}) {} {:?} = {:?}: {e}",
                    c.file, c.line, c.testcase, c.op, c.args, c.result
                )),
            }
        }
        counts.push((file, ran));
    }
    let mut summary = String::new();
    for ((op, o), n) in &by {
        summary += &format!("{op:>16} {o:?}: {n}\n");
    }
    eprintln!("{summary}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(counts, F64_COUNTS, "{summary}");
}

/// sin and cos at their edges: extrema inside an argument give ±1 exactly, a point next
/// to π counts π as a candidate (binary64's `PI` is below π), huge and unbounded
/// arguments give [−1, 1], ±0 is one point, undefined stays undefined, and every result
/// lies in [−1, 1] and contains the 512-bit one.
#[test]
fn sin_and_cos_find_the_extrema_inside_and_stay_in_the_unit_interval() {
    use std::f64::consts::{FRAC_PI_2, PI};
    let ends = |x: F64Iv| x.bounds().unwrap();
    assert_eq!(iv(-1.0, 1.0).cos().bounds().unwrap().1, 1.0);
    assert_eq!(iv(1.5, 1.6).sin().bounds().unwrap().1, 1.0);
    assert_eq!(iv(3.0, 3.2).cos().bounds().unwrap().0, -1.0);
    assert_eq!(iv(4.6, 4.8).sin().bounds().unwrap().0, -1.0);
    // no extremum inside: the endpoint values, within a step
    let (lo, hi) = ends(iv(0.5, 1.0).cos());
    assert!(lo < 1f64.cos() && hi > 0.5f64.cos() && hi < 0.9);
    let (lo, hi) = ends(pt(PI).cos());
    assert_eq!(lo, -1.0);
    assert!(hi > -1.0 && hi <= (-1.0f64).next_up());
    let (lo, hi) = ends(pt(FRAC_PI_2).sin());
    assert_eq!(hi, 1.0);
    assert!(lo >= 1.0f64.next_down().next_down());
    for x in [
        iv(1e300, 1e300),
        iv(0.0, 7.0),
        entire(),
        iv(f64::NEG_INFINITY, 0.0),
    ] {
        assert_eq!(ends(x.sin()), (-1.0, 1.0), "{x:?}");
        assert_eq!(ends(x.cos()), (-1.0, 1.0), "{x:?}");
    }
    for z in [0.0, -0.0] {
        assert!(pt(z).sin().contains_f64(0.0));
        assert_eq!(ends(pt(z).cos()).1, 1.0);
    }
    assert_eq!(F64Iv::UNDEFINED.sin(), F64Iv::UNDEFINED);
    assert_eq!(F64Iv::UNDEFINED.cos(), F64Iv::UNDEFINED);
    for (a, b) in [
        (-3.0, -2.9),
        (1e-300, 2e-300),
        (2.0, 2.0),
        (100.0, 100.5),
        (-7.1, 7.1),
    ] {
        let x = iv(a, b);
        let xm = x.to_interval(REF).unwrap();
        for (f, m) in [(x.sin(), xm.sin()), (x.cos(), xm.cos())] {
            let (lo, hi) = ends(f);
            assert!(
                (-1.0..=1.0).contains(&lo) && (-1.0..=1.0).contains(&hi),
                "{f:?}"
            );
            assert!(f.to_interval(REF).unwrap().contains(&m), "{f:?} ⊉ {m:?}");
        }
    }
}
