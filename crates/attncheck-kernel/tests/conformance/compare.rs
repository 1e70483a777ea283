//! Three-valued comparisons against sampled point pairs, and outward printing
//! parsed back exactly.

use crate::common::{any_rat, exact, fraction, prec, rat, Drawn};
use attncheck_kernel::{parse_rational, Certainty, Interval};
use proptest::prelude::*;
use rug::ops::Pow;
use rug::{Integer, Rational};

/// Intervals from a small grid of rationals (so that endpoints touch and
/// coincide often), from anywhere, and points.
fn cmp_interval() -> impl Strategy<Value = Drawn> {
    let grid = rat(6, 3);
    prop_oneof![
        (prec(), grid.clone(), grid.clone(), fraction())
            .prop_map(|(p, a, b, t)| Drawn::new(p, a, b, &t)),
        (prec(), any_rat(), any_rat(), fraction()).prop_map(|(p, a, b, t)| Drawn::new(p, a, b, &t)),
        (prec(), grid, fraction()).prop_map(|(p, a, t)| Drawn::new(p, a.clone(), a, &t)),
        (prec(), any_rat(), fraction()).prop_map(|(p, a, t)| Drawn::new(p, a.clone(), a, &t)),
    ]
}

type Pred = fn(&Rational, &Rational) -> bool;

/// `True` only if every sampled pair satisfies the predicate, `False` only if none
/// does. The samples include both endpoints of each float interval, so for these
/// order predicates the check is exhaustive.
fn consistent(c: Certainty, a: &Drawn, b: &Drawn, pred: Pred) -> Result<(), String> {
    let (pa, pb) = (a.points(), b.points());
    let pairs = || pa.iter().flat_map(|x| pb.iter().map(move |y| (x, y)));
    let all = pairs().all(|(x, y)| pred(x, y));
    let none = pairs().all(|(x, y)| !pred(x, y));
    match c {
        Certainty::True if !all => Err(format!("True but a pair fails: {pa:?} vs {pb:?}")),
        Certainty::False if !none => Err(format!("False but a pair holds: {pa:?} vs {pb:?}")),
        _ => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn comparisons_agree_with_every_point_pair(a in cmp_interval(), b in cmp_interval()) {
        let checks: [(&str, Certainty, Pred); 5] = [
            ("lt", a.iv.lt(&b.iv), |x, y| x < y),
            ("le", a.iv.le(&b.iv), |x, y| x <= y),
            ("gt", a.iv.gt(&b.iv), |x, y| x > y),
            ("ge", a.iv.ge(&b.iv), |x, y| x >= y),
            ("eq_exact", a.iv.eq_exact(&b.iv), |x, y| x == y),
        ];
        for (name, c, pred) in checks {
            if let Err(e) = consistent(c, &a, &b, pred) {
                return Err(TestCaseError::fail(format!("{name}: {e}; {:?} vs {:?}", a.iv, b.iv)));
            }
        }
        // decisiveness: disjoint intervals and pairs of points are never Unknown
        if a.iv.hi() < b.iv.lo() || b.iv.hi() < a.iv.lo() {
            prop_assert!(a.iv.lt(&b.iv) != Certainty::Unknown);
            prop_assert!(a.iv.le(&b.iv) != Certainty::Unknown);
            prop_assert_eq!(a.iv.eq_exact(&b.iv), Certainty::False);
            prop_assert!(!a.iv.overlaps(&b.iv));
        } else {
            prop_assert!(a.iv.overlaps(&b.iv));
        }
        if a.iv.is_point() && b.iv.is_point() {
            for c in [a.iv.lt(&b.iv), a.iv.le(&b.iv), a.iv.eq_exact(&b.iv)] {
                prop_assert!(c != Certainty::Unknown, "points decide every comparison");
            }
        }
        // duality: gt is lt swapped, ¬(a < b) is a ≥ b and ¬(a ≤ b) is a > b
        prop_assert_eq!(a.iv.gt(&b.iv), b.iv.lt(&a.iv));
        prop_assert_eq!(!a.iv.lt(&b.iv), a.iv.ge(&b.iv));
        prop_assert_eq!(!a.iv.le(&b.iv), a.iv.gt(&b.iv));
    }

    /// The printed lower end, parsed back exactly, is ≤ the true lower end and
    /// the printed upper end ≥ the true upper end; both within one unit of the
    /// last printed digit. The midpoint printed to nearest lies between them.
    #[test]
    fn fmt_outward_parsed_back_encloses(
        p in prec(),
        a in any_rat(),
        b in any_rat(),
        k in -60i32..60,
        point in any::<bool>(),
        digits in 1usize..=25,
    ) {
        let scale = Rational::from(10).pow(k);
        let a = a * &scale;
        let b = if point { a.clone() } else { b * &scale };
        let iv = Interval::from_rational(p, &a).hull(&Interval::from_rational(p, &b));
        let s = iv.fmt_outward(digits);
        let (lo_s, hi_s) = match s.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            Some(t) => t.split_once(", ").expect("two endpoints"),
            None => (s.as_str(), s.as_str()),
        };
        prop_assert_eq!(lo_s, iv.fmt_lo(digits));
        prop_assert_eq!(hi_s, iv.fmt_hi(digits));
        let lo = parse_rational(lo_s).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let hi = parse_rational(hi_s).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (tlo, thi) = (exact(iv.lo()), exact(iv.hi()));
        prop_assert!(lo <= tlo, "printed lo {lo_s} > {tlo}");
        prop_assert!(hi >= thi, "printed hi {hi_s} < {thi}");
        let ulp = Rational::from(10).pow(1 - digits as i32);
        prop_assert!(Rational::from(&tlo - &lo) <= Rational::from(tlo.abs_ref()) * &ulp, "{lo_s} far below {tlo}");
        prop_assert!(Rational::from(&hi - &thi) <= Rational::from(thi.abs_ref()) * &ulp, "{hi_s} far above {thi}");
        prop_assert!(!s.contains("NaN"));
        // the midpoint, printed to nearest, lies between the ends printed outward
        let mid_s = iv.fmt_mid(digits);
        let mid = parse_rational(&mid_s).map_err(|e| TestCaseError::fail(format!("{mid_s}: {e}")))?;
        prop_assert!(lo <= mid && mid <= hi, "{} outside [{}, {}]", mid_s, lo_s, hi_s);
        let sig = lo_s.trim_start_matches('-').split('e').next().unwrap().replace('.', "");
        prop_assert!(sig.trim_matches('0').len() <= digits, "{lo_s} has more than {digits} digits");
    }
}

#[test]
fn fmt_outward_on_large_and_small_magnitudes() {
    let big = Interval::from_integer(64, &(Integer::from(10).pow(40) + 1));
    let s = big.fmt_outward(5);
    // 10⁴⁰ needs 93 bits, so at 64 the lower end is below it
    assert_eq!(s, "[9.9999e39, 1.0001e40]");
    let tiny = Interval::from_rational(64, &Rational::from((1, Integer::from(10).pow(30))));
    assert_eq!(tiny.fmt_outward(3), "[9.99e-31, 1.01e-30]");
    let third = Interval::from_rational(64, &Rational::from((-1, 3000)));
    assert_eq!(third.fmt_outward(2), "[-0.00034, -0.00033]");
}
