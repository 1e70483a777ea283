//! The per-step tallies ([`StepTally`]) and consistency readings of the application
//! (`attncheck::reading`, which left the kernel in issue #38: a reading never certifies
//! nor refutes) against what their documentation defines, step by step.

use attncheck::kernel::{parse_rational, Certainty, Interval};
use attncheck::reading::{Agreement, Reading, StepTally};
use rug::float::Special;
use rug::{Float, Rational};

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
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
    assert!(!Reading::all([ok, ok]).violated());
    assert!(Reading::all([ok, bad, ok]).violated());
    assert!(Reading::all([bad]).violated());
    assert!(!Reading::all([]).violated());
}
