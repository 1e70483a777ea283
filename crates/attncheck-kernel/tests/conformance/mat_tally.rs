//! Dense exact matrices ([`Mat`]) against naive definitions (cofactor determinants,
//! sums of products), and the per-step tallies ([`StepTally`]) against the readings
//! their documentation defines, step by step.

#![allow(clippy::needless_range_loop)] // index loops mirror the definitions

use crate::common::{q, random};
use attncheck_kernel::{Certainty, Interval, Mat, StepTally};
use proptest::prelude::*;
use rug::float::Special;
use rug::{Float, Rational};

fn m(rows: &[&[&str]]) -> Mat {
    Mat::from_rows(
        rows.iter()
            .map(|r| r.iter().map(|s| q(s)).collect())
            .collect(),
    )
}

/// The determinant by cofactor expansion along the first row (the textbook definition).
fn det(a: &Mat) -> Rational {
    let n = a.rows;
    if n == 0 {
        return Rational::from(1);
    }
    let mut s = Rational::new();
    for j in 0..n {
        let minor: Vec<Vec<Rational>> = (1..n)
            .map(|r| {
                (0..n)
                    .filter(|&c| c != j)
                    .map(|c| a.at(r, c).clone())
                    .collect()
            })
            .collect();
        let t: Rational = a.at(0, j) * det(&Mat::from_rows(minor));
        if j % 2 == 0 {
            s += t;
        } else {
            s -= t;
        }
    }
    s
}

/// The leading k × k block.
fn lead(a: &Mat, k: usize) -> Mat {
    Mat::from_rows((0..k).map(|i| a.row(i)[..k].to_vec()).collect())
}

/// Small integer-valued matrices (many zeros, so pivots vanish).
fn small(n: usize) -> impl Strategy<Value = Mat> {
    proptest::collection::vec(-2i64..=2, n * n).prop_map(move |v| Mat {
        rows: n,
        cols: n,
        data: v.into_iter().map(Rational::from).collect(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The product is Σ_l a_il b_lj; the transpose swaps indices; + and scale are
    /// entrywise.
    #[test]
    fn products_sums_and_transposes_match_their_definitions(seed in 0u64..1000, r in 1usize..4, c in 1usize..4, k in 1usize..4) {
        let (a, b) = (random(seed, r, k), random(seed + 1, k, c));
        let p = a.mul(&b);
        prop_assert_eq!((p.rows, p.cols), (r, c));
        for i in 0..r {
            for j in 0..c {
                let s: Rational = (0..k).map(|l| Rational::from(a.at(i, l) * b.at(l, j))).sum();
                prop_assert_eq!(p.at(i, j), &s);
            }
        }
        let t = a.transpose();
        prop_assert_eq!((t.rows, t.cols), (k, r));
        for i in 0..r {
            for l in 0..k {
                prop_assert_eq!(t.at(l, i), a.at(i, l));
            }
        }
        let a2 = random(seed + 2, r, k);
        let s = a.add(&a2);
        let x = q("-3/7");
        let sc = a.scale(&x);
        for i in 0..r {
            for l in 0..k {
                prop_assert_eq!(s.at(i, l).clone(), Rational::from(a.at(i, l) + a2.at(i, l)));
                prop_assert_eq!(sc.at(i, l).clone(), Rational::from(a.at(i, l) * &x));
            }
        }
    }

    /// leading_minors are the determinants of the leading blocks (0s after a zero
    /// pivot, as documented: elimination without pivoting stops there); the inverse
    /// exists exactly when det ≠ 0 and satisfies A·A⁻¹ = A⁻¹·A = I.
    #[test]
    fn minors_and_inverses_match_cofactor_determinants(a in (1usize..5).prop_flat_map(small)) {
        let d = a.rows;
        let minors = a.leading_minors();
        prop_assert_eq!(minors.len(), d);
        let mut zero_seen = false;
        for k in 1..=d {
            let want = det(&lead(&a, k));
            if zero_seen {
                prop_assert_eq!(&minors[k - 1], &Rational::new());
            } else {
                prop_assert_eq!(&minors[k - 1], &want, "k = {}", k);
                zero_seen = want == 0;
            }
        }
        match a.inverse() {
            Some(inv) => {
                prop_assert!(det(&a) != 0);
                prop_assert_eq!(a.mul(&inv), Mat::identity(d));
                prop_assert_eq!(inv.mul(&a), Mat::identity(d));
            }
            None => prop_assert_eq!(det(&a), Rational::new()),
        }
    }
}

#[test]
fn constructors_and_accessors() {
    let i3 = Mat::identity(3);
    assert_eq!(
        i3,
        m(&[&["1", "0", "0"], &["0", "1", "0"], &["0", "0", "1"]])
    );
    assert_eq!(Mat::zeros(2, 3).data, vec![Rational::new(); 6]);
    assert_eq!((Mat::zeros(2, 3).rows, Mat::zeros(2, 3).cols), (2, 3));
    let d = Mat::diag(&[q("2"), q("-1/2")]);
    assert_eq!(d, m(&[&["2", "0"], &["0", "-1/2"]]));
    let a = m(&[&["1", "2", "3"], &["4", "5", "6"]]);
    assert_eq!(a.at(1, 0), &q("4"));
    assert_eq!(a.row(1), &[q("4"), q("5"), q("6")][..]);
    assert!(!a.is_square() && i3.is_square());
    assert_eq!(Mat::from_rows(vec![]).rows, 0);
    assert_eq!(a.to_f64(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let third = m(&[&["1/3"]]).to_intervals(53);
    assert!(third[0].contains_rational(&q("1/3")) && !third[0].is_point());
    assert!(m(&[&["1/4"]]).to_intervals(53)[0].is_point());
    // Frobenius: Σ a², and its root enclosed
    assert_eq!(a.frobenius_sq(), q("91"));
    let f = m(&[&["3", "0"], &["0", "-4"]]).frobenius(53);
    assert!(f.is_point() && *f.lo() == 5);
    assert!(a
        .frobenius(64)
        .contains(&Interval::from_i64(200, 91).sqrt()));
}

#[test]
fn symmetry_definiteness_and_equal_rows() {
    let s = m(&[&["2", "1"], &["1", "2"]]);
    assert!(s.is_symmetric() && s.is_positive_definite());
    let ns = m(&[&["2", "1"], &["0", "2"]]);
    assert!(
        !ns.is_symmetric() && !ns.is_positive_definite(),
        "not symmetric"
    );
    let ns = m(&[&["2", "0"], &["1", "2"]]);
    assert!(!ns.is_symmetric(), "lower triangle differs");
    // symmetric, indefinite (second minor negative), semidefinite (a zero minor)
    assert!(!m(&[&["1", "2"], &["2", "1"]]).is_positive_definite());
    assert!(!m(&[&["1", "1"], &["1", "1"]]).is_positive_definite());
    assert!(!m(&[&["-1", "0"], &["0", "-1"]]).is_positive_definite());
    assert!(
        !m(&[&["1", "2", "3"], &["2", "1", "0"]]).is_symmetric(),
        "not square"
    );
    // the inverse needs a row swap when the first pivot is 0
    let p = m(&[&["0", "1"], &["1", "0"]]);
    assert_eq!(p.inverse().unwrap(), p);
    let a = m(&[&["0", "2", "1"], &["1", "1", "0"], &["3", "0", "1"]]);
    assert_eq!(a.mul(&a.inverse().unwrap()), Mat::identity(3));
    assert_eq!(m(&[&["1", "2"], &["2", "4"]]).inverse(), None);
    // equal rows: the first pair (i < j)
    let e = m(&[&["1", "2"], &["3", "4"], &["1", "2"], &["3", "4"]]);
    assert_eq!(e.equal_rows(), Some((0, 2)));
    let e = m(&[&["1", "2"], &["3", "4"], &["3", "4"]]);
    assert_eq!(e.equal_rows(), Some((1, 2)));
    assert_eq!(m(&[&["1", "2"], &["2", "1"]]).equal_rows(), None);
}

fn margin(lo: f64, hi: f64) -> Interval {
    Interval::from_endpoints(Float::with_val(53, lo), Float::with_val(53, hi))
}

/// Each margin's class: proven when lo ≥ 0 (−0 counts), violated when hi < 0 (−0 does
/// not), else undecided; the readings follow.
#[test]
fn a_tally_classifies_each_margin() {
    for (lo, hi, proven, violated) in [
        (1.0, 2.0, 1, 0),
        (0.0, 2.0, 1, 0),
        (-0.0, 2.0, 1, 0),
        (-2.0, -1.0, 0, 1),
        (-2.0, 0.0, 0, 0),
        (-2.0, -0.0, 0, 0),
        (-1.0, 1.0, 0, 0),
    ] {
        let mut t = StepTally::default();
        t.record(7, &margin(lo, hi));
        assert_eq!(
            (t.steps(), t.proven(), t.violated()),
            (1, proven, violated),
            "[{lo}, {hi}]"
        );
        let undecided = proven == 0 && violated == 0;
        assert_eq!(
            t.first_violation(),
            (violated == 1).then_some(7),
            "[{lo}, {hi}]"
        );
        assert_eq!(t.first_unknown(), undecided.then_some(7), "[{lo}, {hi}]");
        let want = if violated == 1 {
            Certainty::False
        } else if proven == 1 {
            Certainty::True
        } else {
            Certainty::Unknown
        };
        assert_eq!(t.certainty(), want, "[{lo}, {hi}]");
        assert_eq!(t.consistency().violated(), violated == 1);
        assert_eq!(t.min_margin(), Some((lo, 7)));
    }
}

#[test]
fn a_tally_over_many_steps() {
    let mut t = StepTally::default();
    assert_eq!(t.certainty(), Certainty::Unknown, "no step proves nothing");
    assert!(!t.consistency().violated());
    assert_eq!(t.min_margin(), None);
    assert_eq!(t.summary(), "proven on 0/0 steps");
    t.record(0, &margin(3.0, 4.0));
    t.record(1, &margin(1.0, 2.0));
    t.record(2, &margin(2.0, 5.0));
    assert_eq!(t.certainty(), Certainty::True);
    assert_eq!(t.min_margin(), Some((1.0, 1)));
    assert_eq!(
        t.summary(),
        "proven on 3/3 steps; smallest margin ≥ 1.000e0 (step 1)"
    );
    assert!(t.consistency_summary().starts_with(
        "consistency reading: no step of 3 certifiably violates it; the enclosures alone prove it on 3 steps"
    ));
    t.record(3, &margin(-1.0, 1.0));
    t.record(4, &margin(-0.5, 1.0));
    assert_eq!(t.certainty(), Certainty::Unknown);
    assert_eq!(t.first_unknown(), Some(3), "the first undecided step");
    assert_eq!(t.min_margin(), Some((-1.0, 3)));
    t.record(5, &margin(-3.0, -2.0));
    t.record(6, &margin(-1.0, 1.0));
    t.record(7, &margin(-5.0, -4.0));
    assert_eq!(t.certainty(), Certainty::False);
    assert_eq!((t.steps(), t.proven(), t.violated()), (8, 3, 2));
    assert_eq!(t.first_violation(), Some(5));
    assert_eq!(t.first_unknown(), Some(3));
    assert_eq!(t.min_margin(), Some((-5.0, 7)));
    assert!(t.consistency().violated());
    assert_eq!(
        t.summary(),
        "proven on 3/8 steps; violated on 2 steps, first at step 5; undecided first at step 3; \
         smallest margin ≥ -5.000e0 (step 7)"
    );
    assert_eq!(
        t.consistency_summary(),
        "violated on 2 of 8 steps, first at step 5; smallest margin ≥ -5.000e0 (step 7)"
    );
    // ties keep the first step
    let mut t = StepTally::default();
    t.record(0, &margin(-1.0, 1.0));
    t.record(1, &margin(-1.0, 2.0));
    assert_eq!(t.min_margin(), Some((-1.0, 0)));
    // the margin's lower end is kept rounded down: a value below every f64 near it
    let mut t = StepTally::default();
    let third = -Interval::from_rational(200, &q("1/3"));
    t.record(0, &third);
    let (m, _) = t.min_margin().unwrap();
    assert!(Rational::from_f64(m).unwrap() < q("-1/3"));
    // an unbounded margin
    let mut t = StepTally::default();
    t.record(
        0,
        &Interval::from_endpoints(
            Float::with_val(53, Special::NegInfinity),
            Float::with_val(53, 1),
        ),
    );
    assert_eq!(t.min_margin(), Some((f64::NEG_INFINITY, 0)));
    assert_eq!(t.certainty(), Certainty::Unknown);
}

/// `agreement` and `Reading::all`: violated exactly when the enclosures are disjoint /
/// when one reading is.
#[test]
fn readings_refute_only_on_disjoint_enclosures() {
    let a = margin(0.0, 1.0);
    assert!(!a.agreement(&margin(1.0, 2.0)).violated(), "touching");
    assert!(!a.agreement(&margin(0.5, 0.6)).violated(), "nested");
    assert!(a.agreement(&margin(1.5, 2.0)).violated(), "disjoint above");
    assert!(
        a.agreement(&margin(-2.0, -0.5)).violated(),
        "disjoint below"
    );
    let ok = a.agreement(&a);
    let bad = a.agreement(&margin(2.0, 3.0));
    assert!(!attncheck_kernel::Reading::all([ok, ok]).violated());
    assert!(attncheck_kernel::Reading::all([ok, bad, ok]).violated());
    assert!(attncheck_kernel::Reading::all([bad]).violated());
    assert!(!attncheck_kernel::Reading::all([]).violated());
}
