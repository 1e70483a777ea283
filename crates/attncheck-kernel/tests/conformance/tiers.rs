//! The two tiers of `check` (issue #41, `expr::tier`): every committed certificate is
//! decided the same with and without the f64 tier; random formulas get the same
//! decisions, the same charges and the same errors in both; the f64 pass alone never
//! decides what MPFR does not decide alike; the hostile edges (±0, subnormals, overflow
//! to ±∞ in an intermediate, 0·∞, ∞ − ∞, ln of a non-positive value, division by an
//! enclosure of 0, exact boundaries) are left to MPFR or decided as MPFR decides; and
//! the dispatch itself (which tier decides, when the f64 tier is not tried, what the
//! budget is charged) is pinned, so that a mutant of it is caught.

use attncheck_kernel::certificate;
use attncheck_kernel::expr::{self, Budget, Data, Decided, Tiers, MAX_WORK};
use attncheck_kernel::Certainty::{self, False, True, Unknown};
use attncheck_kernel::{check_with, Statement};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// One formula in one tier, with a fresh budget: (answer, who decided, units charged).
fn run(f: &str, prec: u32, tiers: Tiers) -> Result<(Certainty, Decided, u128), String> {
    let data = Data::new();
    let p = expr::prepare(f, prec, &data).map_err(|e| e.to_string())?;
    let start = MAX_WORK - p.work();
    let budget = Budget::new(start);
    let (c, who) = p.decide(&budget, tiers).map_err(|e| e.to_string())?;
    Ok((c, who, start - budget.left()))
}

/// The answer and the charges of both tiers, required equal; who decided with the f64
/// tier enabled.
fn both(f: &str, prec: u32) -> (Certainty, Decided) {
    let two = run(f, prec, Tiers::F64ThenMpfr).unwrap_or_else(|e| panic!("{f}: {e}"));
    let one = run(f, prec, Tiers::MpfrOnly).unwrap_or_else(|e| panic!("{f}: {e}"));
    assert_eq!(one.1, Decided::Mpfr, "{f}: MpfrOnly decided in f64");
    assert_eq!(
        (two.0, two.2),
        (one.0, one.2),
        "{f} at {prec} bits: (answer, charges) with the f64 tier, without"
    );
    (two.0, two.1)
}

/// The f64 pass alone, with a fresh budget.
fn f64_alone(f: &str, prec: u32) -> Option<Certainty> {
    let data = Data::new();
    let p = expr::prepare(f, prec, &data).unwrap_or_else(|e| panic!("{f}: {e}"));
    p.f64_pass(&Budget::new(MAX_WORK - p.work()))
}

// ----- the committed certificates ---------------------------------------------------------

fn cert_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cert_files(&p, out);
        } else if p.to_string_lossy().ends_with(".cert.json") {
            out.push(p);
        }
    }
}

/// Every committed certificate (`reports/**/*.cert.json`), checked at its precision with
/// the f64 tier disabled (`Tiers::MpfrOnly`, the whole certificate, its budget shared as
/// in `check`), and every obligation the f64 tier tries decided with it (`check`'s road):
/// the same decision, in order. An obligation the f64 tier does not try (data
/// operations other than `sandwich-centred`; `Prepared::f64_tried`) takes the very same
/// MPFR call in both modes (`Prepared::decide`), so it is not evaluated a second time.
/// Not vacuous: at least 20 certificates, and the f64 tier decides some of their
/// obligations by itself.
#[test]
fn every_committed_certificate_is_decided_the_same_with_and_without_the_f64_tier() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let mut files = Vec::new();
    cert_files(&reports, &mut files);
    assert!(
        files.len() >= 20,
        "only {} certificates under {}",
        files.len(),
        reports.display()
    );
    let (mut by_f64, mut tried, mut obligations) = (0usize, 0usize, 0usize);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let cert = certificate::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
        let st = cert.statement(path).unwrap_or_else(|e| panic!("{e}"));
        let one = check_with(&st, cert.precision, Tiers::MpfrOnly)
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        assert_eq!(one.decisions().len(), st.obligations.len());
        for (o, d) in st.obligations.iter().zip(one.decisions()) {
            obligations += 1;
            let p = expr::prepare(&o.formula, cert.precision, &st.data).unwrap();
            if !p.f64_tried() {
                continue;
            }
            tried += 1;
            let budget = Budget::new(MAX_WORK - p.work());
            let (c, who) = p
                .decide(&budget, Tiers::F64ThenMpfr)
                .unwrap_or_else(|e| panic!("{}: {}: {e}", path.display(), o.name));
            assert_eq!(c, d.result(), "{}: {}", path.display(), o.name);
            by_f64 += usize::from(who == Decided::F64);
        }
    }
    eprintln!(
        "{by_f64} of {obligations} obligations of {} certificates decided in f64 ({tried} tried)",
        files.len()
    );
    assert!(
        by_f64 > 0,
        "the f64 tier decided none of {obligations} obligations"
    );
}

// ----- random formulas --------------------------------------------------------------------

/// Literals at the edges: 0 and −0, exact boundaries (0.1, 0.3), subnormal and huge
/// dyadics and decimals, values past exp's overflow.
fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (-12i64..=12).prop_map(|n| n.to_string()),
        2 => (-30i64..=30, 1i64..=12).prop_map(|(n, d)| format!("{n}/{d}")),
        2 => prop::sample::select(vec![
            "0", "-0", "0.1", "0.3", "-0.7", "1e-3", "2^-1074", "2^-1080", "2^1023", "2^1024",
            "10^300", "1e-320", "-1e-400", "709.78", "710", "-745.2", "1000", "1/3",
            "9007199254740993", "-100000000000000001/3", "1/9007199254740993", "3^50000",
        ])
        .prop_map(String::from),
    ]
}

fn term() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => literal(),
        1 => Just("i".to_string()),
        1 => Just("y".to_string()),
        1 => Just("pi".to_string()),
    ];
    leaf.prop_recursive(4, 20, 3, |t| {
        let one = prop::sample::select(vec![
            "neg", "exp", "ln", "sqrt", "abs", "ceil", "floor", "sin", "cos",
        ]);
        let two = prop::sample::select(vec!["+", "-", "*", "/", "min", "max", "+", "*"]);
        prop_oneof![
            (one, t.clone()).prop_map(|(o, a)| format!("({o} {a})")),
            (two, t.clone(), t.clone()).prop_map(|(o, a, b)| format!("({o} {a} {b})")),
            (t.clone(), -3i32..=3).prop_map(|(a, n)| format!("(pow {a} {n})")),
            (t.clone(), t.clone(), t).prop_map(|(a, b, c)| format!("(+ {a} {b} {c})")),
        ]
    })
}

fn formula() -> impl Strategy<Value = String> {
    let cmp = (
        prop::sample::select(vec!["<", "<=", ">", ">=", "="]),
        term(),
        term(),
    )
        .prop_map(|(o, a, b)| format!("({o} {a} {b})"));
    cmp.prop_recursive(3, 8, 3, |f| {
        prop_oneof![
            (f.clone(), f.clone()).prop_map(|(a, b)| format!("(and {a} {b})")),
            f.clone().prop_map(|a| format!("(not {a})")),
            (f.clone(), -1i64..=1).prop_map(|(a, lo)| format!("(forall j {lo} 2 {a})")),
            (f.clone(), f.clone(), f).prop_map(|(a, b, c)| format!("(and {a} {b} {c})")),
        ]
    })
}

/// A formula with `i` and `y` bound (a range and a `let` of a random term).
fn closed() -> impl Strategy<Value = String> {
    (term(), formula()).prop_map(|(t, f)| format!("(forall i -2 2 (let y {t} {f}))"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Random formulas over the edges: with and without the f64 tier, the same answer and
    /// the same units charged (or the same error), at every precision (below 53 bits the
    /// f64 tier is not tried); and the f64 pass alone, when it decides, decides as MPFR
    /// does at 53, 64, 128 and 512 bits, and never contradicts MPFR at 24 bits.
    #[test]
    fn random_formulas_get_the_same_answers_and_charges_in_both_tiers(f in closed()) {
        for prec in [24u32, 53, 64, 128] {
            let two = run(&f, prec, Tiers::F64ThenMpfr);
            let one = run(&f, prec, Tiers::MpfrOnly);
            prop_assert_eq!(
                two.as_ref().map(|r| (r.0, r.2)),
                one.as_ref().map(|r| (r.0, r.2)),
                "{} at {} bits", f, prec
            );
            if prec < 53 {
                prop_assert!(two.as_ref().map_or(true, |r| r.1 == Decided::Mpfr), "{} at {}", f, prec);
            }
        }
        let data = Data::new();
        let Ok(p) = expr::prepare(&f, 128, &data) else { return Ok(()) };
        let Some(c) = p.f64_pass(&Budget::new(MAX_WORK - p.work())) else { return Ok(()) };
        prop_assert!(c != Unknown);
        for prec in [53u32, 64, 128, 512] {
            if let Ok((m, _, _)) = run(&f, prec, Tiers::MpfrOnly) {
                prop_assert_eq!(c, m, "{} at {} bits", f, prec);
            }
        }
        if let Ok((m, _, _)) = run(&f, 24, Tiers::MpfrOnly) {
            prop_assert!(m == Unknown || m == c, "{}: f64 {:?}, 24 bits {:?}", f, c, m);
        }
    }
}

// ----- hostile edges ----------------------------------------------------------------------

/// Exact rationals stay exact in the f64 pass: `0.1·3 = 0.3` exactly (binary64 says
/// 0.30000000000000004), decided by the f64 pass as exactly as MPFR decides it.
#[test]
fn exact_boundaries_are_decided_exactly_in_the_f64_pass() {
    for (f, want) in [
        ("(< (* 0.1 3) 0.3)", False),
        ("(<= (* 0.1 3) 0.3)", True),
        ("(= (* 0.1 3) 0.3)", True),
        ("(> (+ 0.1 0.2) 0.3)", False),
        ("(= (* 3 1/3) 1)", True),
        ("(< (- 1/3 0.333333333333333333333) 1e-21)", True),
        (
            "(< (- 1/3 0.333333333333333333333) 1/3000000000000000000000)",
            False,
        ),
    ] {
        assert_eq!(both(f, 128), (want, Decided::F64), "{f}");
    }
}

/// Where round-to-nearest would decide, and wrongly: √2·√2 is 2 exactly and
/// 2.0000000000000004 in binary64. The enclosures contain 2: undecided in both tiers.
#[test]
fn a_decision_only_rounding_to_nearest_would_make_is_not_made() {
    for f in [
        "(> (* (sqrt 2) (sqrt 2)) 2)",
        "(<= (* (sqrt 2) (sqrt 2)) 2)",
        "(= (* (sqrt 2) (sqrt 2)) 2)",
        "(< (exp (ln 3)) 3)",
    ] {
        assert_eq!(both(f, 128), (Unknown, Decided::Mpfr), "{f}");
        assert_eq!(f64_alone(f, 128), None, "{f}");
    }
}

/// ±0 are one real; an exact 0 times an enclosure is a point in MPFR and one step wide in
/// f64, so a comparison at 0 escalates and MPFR decides it.
#[test]
fn plus_and_minus_zero_are_decided_as_mpfr_decides() {
    assert_eq!(both("(< -0 0)", 128), (False, Decided::F64));
    assert_eq!(both("(= -0 0)", 128), (True, Decided::F64));
    for (f, want) in [
        ("(<= (neg (* 0 (exp 1))) 0)", True),
        ("(= (* 0 (exp 1)) -0)", True),
        ("(< (* -0 (exp 1)) 0)", False),
    ] {
        assert_eq!(f64_alone(f, 128), None, "{f}");
        assert_eq!(both(f, 128), (want, Decided::Mpfr), "{f}");
    }
}

/// Subnormal and underflowing values: e⁻⁷⁴⁵ is about the least subnormal, e⁻⁸⁰⁰
/// underflows binary64 (its f64 lower end is 0): the f64 tier cannot tell them from 0 or
/// from 2⁻¹⁰⁷⁴, MPFR can.
#[test]
fn subnormals_and_underflow_escalate() {
    for (f, want) in [
        ("(> (exp -800) 0)", True),
        ("(< (exp -800) 2^-1074)", True),
        ("(> (exp -745) 0)", True),
        ("(< (* 2^-1074 1/2) 2^-1074)", True),
    ] {
        let got = both(f, 128);
        assert_eq!(got.0, want, "{f}");
    }
    // the last one is exact: decided in f64
    assert_eq!(both("(< (* 2^-1074 1/2) 2^-1074)", 128).1, Decided::F64);
    assert_eq!(both("(> (exp -800) 0)", 128).1, Decided::Mpfr);
    // a subnormal enclosure that still decides: e⁻⁷⁴⁵ is far below 1
    assert_eq!(both("(< (exp -745) 1)", 128), (True, Decided::F64));
}

/// Overflow to ±∞ in an intermediate: e¹⁰⁰⁰ is [M, +∞] in f64. A comparison it still
/// decides soundly (e¹⁰⁰⁰ > 10³⁰⁰) is decided in f64; ∞ − ∞ (the difference of two
/// overflowed values is the whole line) and two overflowed values against each other
/// escalate, and MPFR decides them.
#[test]
fn overflow_in_an_intermediate_escalates_unless_the_unbounded_end_is_not_needed() {
    assert_eq!(both("(> (exp 1000) 10^300)", 128), (True, Decided::F64));
    assert_eq!(
        both("(< (neg (exp 1000)) (neg 2^1023))", 128),
        (True, Decided::F64)
    );
    for (f, want) in [
        ("(< (- (exp 1000) (exp 1000)) 1)", Unknown),
        ("(< (abs (- (exp 1000) (exp 1000))) 10^400)", True),
        ("(< (exp 1000) (exp 1001))", True),
        ("(> (* 2^1023 2) 2^1023)", True),
        ("(> (* (exp 700) (exp 700)) (exp 1399))", True),
        ("(= (* 0 (exp 1000)) 0)", True),
        ("(< (/ (exp 1000) (exp 1000)) 2)", True),
    ] {
        let got = both(f, 128);
        assert_eq!(got.0, want, "{f}");
        if !f.starts_with("(> (* 2^1023") {
            assert_eq!(got.1, Decided::Mpfr, "{f}");
        }
    }
}

/// Partial operations out of their domain: ln of 0, of a negative value and of an
/// enclosure reaching 0; division by 0 and by an enclosure of 0; √ below 0. Undefined in
/// both tiers: every comparison on them is `Unknown`, a negation too.
#[test]
fn undefined_terms_decide_nothing_in_either_tier() {
    for f in [
        "(< (ln 0) 1)",
        "(> (ln -1) 0)",
        "(not (< (ln (- (exp 1/2) (exp 1/2))) 0))",
        "(< (/ 1 0) 1)",
        "(< (/ 1 (- (exp 1) (exp 1))) 0)",
        "(> (/ 1 (- (sqrt 2) (sqrt 2))) 0)",
        "(>= (sqrt (- (exp 1) (exp 1))) 0)",
        "(= (* 0 (ln -1)) 0)",
        "(< (pow 0 -1) 1)",
        "(>= (abs (ln 0)) 0)",
    ] {
        assert_eq!(both(f, 128).0, Unknown, "{f}");
        assert_eq!(f64_alone(f, 128), None, "{f}");
    }
}

/// `ceil`/`floor` of an enclosure: exact in f64 when it lands on one integer (then MPFR
/// lands on the same); across an integer the f64 pass stops, since MPFR may land on one
/// and be exact, and charge exact arithmetic the f64 pass would not (here 1 + e⁻⁵⁰ is
/// 1 in binary64 and above 1 at 128 bits: ⌈·⌉ = 2, and 2·3²⁰⁰⁰⁰ is charged).
#[test]
fn ceil_of_an_enclosure_across_an_integer_escalates_and_charges_as_mpfr() {
    assert_eq!(both("(= (ceil (exp 1)) 3)", 128), (True, Decided::F64));
    assert_eq!(
        both("(= (floor (neg (exp 1))) -3)", 128),
        (True, Decided::F64)
    );
    let f = "(< (* (ceil (+ 1 (exp -50))) 3^20000 3^20000) (* 3 3^20000 3^20000))";
    assert_eq!(f64_alone(f, 128), None);
    let (c, who) = both(f, 128);
    assert_eq!((c, who), (True, Decided::Mpfr));
    let (_, _, charged) = run(f, 128, Tiers::F64ThenMpfr).unwrap();
    assert!(charged > 0, "exact products of 3²⁰⁰⁰⁰ are charged");
}

// ----- the dispatch ---------------------------------------------------------------------------

/// Which tier decides: an inexact comparison with a margin in f64; the same with the f64
/// tier disabled in MPFR; an exact-boundary one (e⁰ = 1 is a point only in MPFR) escalates.
#[test]
fn the_f64_tier_decides_what_it_can_and_escalates_the_rest() {
    assert_eq!(
        run("(< 2 (exp 1))", 128, Tiers::F64ThenMpfr).unwrap().1,
        Decided::F64
    );
    assert_eq!(
        run("(< 2 (exp 1))", 128, Tiers::MpfrOnly).unwrap().1,
        Decided::Mpfr
    );
    assert_eq!(both("(< (exp 0) 1)", 128), (False, Decided::Mpfr));
    assert_eq!(both("(= (exp 0) 1)", 128), (True, Decided::Mpfr));
    assert_eq!(both("(< (sqrt 2) 1.5)", 64), (True, Decided::F64));
    // a decision needing more than 53 bits: MPFR at 128 decides, f64 cannot
    let tight = "(< (exp 1) 2.718281828459045235360)";
    assert_eq!(both(tight, 128), (False, Decided::Mpfr));
    // π, sin and cos are in the f64 tier
    assert_eq!(
        both("(and (< 3 pi) (< pi 22/7))", 128),
        (True, Decided::F64)
    );
}

/// An `Unknown` comparison stops the f64 pass even when a later conjunct is `False`: MPFR
/// decides the first one `False` and never evaluates the second, so the f64 pass going on
/// would take another road (and other charges) to the same answer.
#[test]
fn an_unknown_comparison_stops_the_f64_pass_before_the_rest_of_a_conjunction() {
    let f = "(and (< (exp 0) 1) (< 2 1))";
    assert_eq!(f64_alone(f, 128), None);
    assert_eq!(both(f, 128), (False, Decided::Mpfr));
    // charged only in the second conjunct, which MPFR never evaluates
    let g = "(and (< (exp 0) 1) (< (* 3^20000 3^20000) 1))";
    assert_eq!(both(g, 128), (False, Decided::Mpfr));
    assert_eq!(run(g, 128, Tiers::F64ThenMpfr).unwrap().2, 0);
}

/// When the f64 tier is not tried at all: below 53 bits, and for formulas with an
/// operation it lacks (the data operations but `sandwich-centred`), which then cost no
/// f64 pass. sin and cos are in it (CORE-MATH, `F64Iv::sin`).
#[test]
fn the_f64_tier_is_not_tried_below_53_bits_nor_on_operations_it_lacks() {
    let data = Data::new();
    let tried = |f: &str, p: u32| expr::prepare(f, p, &data).unwrap().f64_tried();
    assert!(tried("(< 2 (exp 1))", 53));
    assert!(tried("(< 2 (exp 1))", 128));
    assert!(tried("(< 3 pi)", 128));
    assert!(!tried("(< 2 (exp 1))", 52));
    assert!(!tried("(< 2 (exp 1))", 24));
    assert!(tried("(< (sin 1) 1)", 128));
    assert!(tried("(forall i 1 2 (< (cos i) 2))", 128));
    assert!(tried("(< (sandwich-centred 8 1 3) 0)", 128));
    assert!(!tried("(< (sin 1) 1)", 52));
    assert_eq!(both("(< 2 (exp 1))", 52), (True, Decided::Mpfr));
    assert_eq!(both("(< (sin 1) 1)", 128), (True, Decided::F64));
    assert_eq!(both("(< (sin 1) 1)", 52), (True, Decided::Mpfr));
    // a data operation
    let mut d = Data::new();
    d.insert(
        "S".into(),
        expr::Datum::Signs(attncheck_kernel::SignMatrix::from_fn(2, 2, |l, c| {
            l == 0 && c == 1
        })),
    );
    let p = expr::prepare("(<= (gram-max-abs S) 2)", 128, &d).unwrap();
    assert!(!p.f64_tried());
    let (c, who) = p
        .decide(&Budget::new(MAX_WORK - p.work()), Tiers::F64ThenMpfr)
        .unwrap();
    assert_eq!((c, who), (True, Decided::Mpfr));
}

/// The f64 pass's exact arithmetic is charged once: decided in f64, the charges are
/// taken (the same units as MPFR's); escalated after charging, the f64 pass's count is
/// dropped and MPFR's charges are taken, once.
#[test]
fn exact_arithmetic_is_charged_once_whichever_tier_decides() {
    let decided = "(< (* 3^2000 3^-1999 (exp 1)) 9)";
    assert_eq!(both(decided, 128), (True, Decided::F64));
    let escalated = "(and (< (* 3^20000 3^20000) 3^40001) (< (exp 0) 1))";
    assert_eq!(both(escalated, 128), (False, Decided::Mpfr));
    for f in [decided, escalated] {
        let (_, _, two) = run(f, 128, Tiers::F64ThenMpfr).unwrap();
        let (_, _, one) = run(f, 128, Tiers::MpfrOnly).unwrap();
        assert!(two > 0 && two == one, "{f}: {two} vs {one}");
    }
}

/// Exact arithmetic past the budget: the same refusal, with today's message, with and
/// without the f64 tier (the f64 pass stops where its count passes what is left, and
/// MPFR fails at its charge); and a budget that holds the f64 pass's count but no more
/// is charged exactly that.
#[test]
fn a_formula_past_the_budget_is_refused_alike_in_both_tiers() {
    let costly = "(forall i 1 30000 (> (* 3^20000 3^20000 i (exp 1)) 0))";
    let mut st = Statement::new("x/over");
    st.assert("o", costly);
    let two = check_with(&st, 128, Tiers::F64ThenMpfr);
    let one = check_with(&st, 128, Tiers::MpfrOnly);
    let e = one.clone().expect_err("over the budget");
    assert!(e.error.reason.contains("exceed the work budget"), "{e}");
    assert_eq!(two, one);
    // exactly enough: decided in f64, everything taken
    let f = "(forall i 1 3 (> (* 3^20000 3^20000 i (exp 1)) 0))";
    let (_, _, need) = run(f, 128, Tiers::MpfrOnly).unwrap();
    let data = Data::new();
    let p = expr::prepare(f, 128, &data).unwrap();
    let exact = Budget::new(need);
    assert_eq!(
        p.decide(&exact, Tiers::F64ThenMpfr).unwrap(),
        (True, Decided::F64)
    );
    assert_eq!(exact.left(), 0);
    // one unit short: the f64 pass stops, MPFR refuses
    let short = Budget::new(need - 1);
    let e2 = p
        .decide(&short, Tiers::F64ThenMpfr)
        .expect_err("one unit short");
    let e1 = p
        .decide(&Budget::new(need - 1), Tiers::MpfrOnly)
        .expect_err("one unit short");
    assert_eq!(e2, e1);
}

/// Rationals converted to the f64 tier (the quotient of two binary64 integers by one
/// division, exact only for a power-of-two denominator): integers past 2⁵³ and
/// quotients that are not binary64 numbers are enclosed, never rounded to a point. A
/// point would decide these, and wrongly (2⁵³ + 1 rounds to 2⁵³; RN(1/3) < 1/3).
#[test]
fn rationals_past_binary64_are_enclosed_in_the_f64_tier_not_rounded() {
    for (f, want) in [
        (
            "(> (max 9007199254740993 (exp -100)) 9007199254740992)",
            True,
        ),
        (
            "(< (max 9007199254740993 (exp -100)) 9007199254740994)",
            True,
        ),
        ("(< (max 1/3 (exp -100)) 1/3)", Unknown),
        ("(> (max 1/3 (exp -100)) 1/3)", Unknown),
        ("(= (max 3/4 (exp -100)) 0.75)", True),
        (
            "(= (max -9007199254740992 (neg (exp 100))) -9007199254740992)",
            True,
        ),
        ("(> (min 1/9007199254740993 (exp 100)) 0)", True),
        (
            "(< (max 100000000000000001/3 (exp -100)) 33333333333333334)",
            True,
        ),
    ] {
        assert_eq!(both(f, 128).0, want, "{f}");
    }
    // the exact dyadics are points in both tiers: decided in f64
    assert_eq!(both("(= (max 3/4 (exp -100)) 0.75)", 128).1, Decided::F64);
}

/// Each comparison on enclosures decided in f64 as MPFR decides it (e, π, √2 apart from
/// 2, 3 and each other), and `Unknown` on an enclosure against itself.
#[test]
fn each_comparison_of_enclosures_is_decided_in_f64_as_in_mpfr() {
    let terms = ["(exp 1)", "pi", "(sqrt 2)", "2", "3", "(neg (ln 3))"];
    let mut by_f64 = 0;
    for op in ["<", "<=", ">", ">=", "="] {
        for a in terms {
            for b in terms {
                let (c, who) = both(&format!("({op} {a} {b})"), 128);
                if a == b && !a.starts_with(|ch: char| ch.is_ascii_digit()) {
                    assert_eq!((c, who), (Unknown, Decided::Mpfr), "({op} {a} {b})");
                } else {
                    assert_ne!(c, Unknown, "({op} {a} {b})");
                    by_f64 += usize::from(who == Decided::F64);
                }
            }
        }
    }
    // every pair of distinct terms, and the integers against themselves, in f64
    assert_eq!(by_f64, 5 * (6 * 5 + 2));
    // enclosures that are points (max of 3/4 and a tiny e⁻¹⁰⁰: 3/4 as an f64 enclosure)
    // against a touching, a larger and a smaller value: where `<` and `≤` part
    let x = "(max 3/4 (exp -100))";
    for (op, want) in [
        ("<", [False, True, False]),
        ("<=", [True, True, False]),
        (">", [False, False, True]),
        (">=", [True, False, True]),
        ("=", [True, False, False]),
    ] {
        for (b, w) in ["0.75", "1", "1/2"].into_iter().zip(want) {
            assert_eq!(
                both(&format!("({op} {x} {b})"), 128),
                (w, Decided::F64),
                "({op} {x} {b})"
            );
            let flipped = match op {
                "<" => ">",
                "<=" => ">=",
                ">" => "<",
                ">=" => "<=",
                _ => "=",
            };
            let g = format!("({flipped} {b} {x})");
            assert_eq!(both(&g, 128), (w, Decided::F64), "{g}");
        }
    }
}

/// A literal past the exact size (3⁵⁰⁰⁰⁰: 79,249 bits) is an MPFR enclosure when read;
/// the f64 tier takes it outward ([M, +∞]) and still decides what that decides.
#[test]
fn a_literal_past_the_exact_size_is_taken_outward_into_the_f64_tier() {
    assert_eq!(both("(> 3^50000 (exp 1))", 128), (True, Decided::F64));
    assert_eq!(both("(< (neg 3^50000) -10^300)", 128), (True, Decided::F64));
    assert_eq!(both("(< 3^50000 3^50001)", 128).1, Decided::Mpfr);
}

/// Division is in the f64 tier: a quotient of enclosures is decided there, not left to
/// MPFR (a mutant returning "undefined" for every f64 quotient only slows the check,
/// so only who decided tells it apart).
#[test]
fn a_quotient_of_enclosures_is_decided_in_the_f64_tier() {
    assert_eq!(both("(< (/ (exp 1) 3) 1)", 128), (True, Decided::F64));
    assert_eq!(both("(> (/ 1 (sqrt 2)) 0.7)", 128), (True, Decided::F64));
}

/// A literal quotient of two integers of at most 53 bits that is not dyadic enters the
/// f64 tier as one IEEE division moved one step outward each way (`F64::from_q`), not
/// through MPFR's two directed roundings: RN(1/3) = 6004799503160661·2⁻⁵⁴ lies below 1/3,
/// so MPFR's enclosure starts at that point, while the division's starts one step lower.
/// The comparison `1/3 ≥ RN(1/3)` is then left undecided by the f64 pass and decided by
/// MPFR; taking MPFR's road in the f64 tier would decide it there. Pinned so that the fast
/// path (and its bounds on the integers' sizes) cannot silently become the slow one.
#[test]
fn a_small_non_dyadic_literal_is_one_ieee_division_widened_a_step() {
    let rn = "6004799503160661/18014398509481984";
    let f = format!("(>= (max 1/3 (exp -100)) {rn})");
    assert_eq!(f64_alone(&f, 128), None, "{f}");
    assert_eq!(both(&f, 128), (True, Decided::Mpfr), "{f}");
    // beyond 53 bits of numerator or denominator: MPFR's enclosure, decided in f64
    let g = "(>= (max 3002399751580330/9007199254740993 (exp -100)) 0.3333333333)";
    assert_eq!(both(g, 128), (True, Decided::F64), "{g}");
}

/// sin and cos in the f64 tier (CORE-MATH, `F64Iv::sin`): decided there when the margin
/// allows, with MPFR's answer and charges; extrema inside the argument (cos at 0, sin at
/// π/2, cos at π) found by both tiers alike; a tight comparison escalates.
#[test]
fn sin_and_cos_are_decided_in_the_f64_tier_with_the_mpfr_answer() {
    for (f, want) in [
        ("(< (sin 1) 0.8415)", True),
        ("(> (sin 1) 0.8414)", True),
        ("(> (cos 1) 0.5403)", True),
        ("(< (cos (- 0 1/2)) (cos 0))", True),
        ("(< (cos pi) -0.999)", True),
        ("(> (sin (/ pi 2)) 0.999)", True),
        ("(<= (cos 10^300) 1)", True),
        ("(< (sin (* 2 pi)) 1e-15)", True),
        ("(> (sin (* 2 pi)) -1e-15)", True),
        ("(forall r 1 64 (<= (+ (cos r) (sin r)) 1.4143))", True),
        ("(< (sin 0) 0)", False),
        ("(= (cos 0) 1)", Unknown),
    ] {
        let (c, _) = both(f, 128);
        if want != Unknown {
            assert_eq!(c, want, "{f}");
        }
    }
    for f in [
        "(< (sin 1) 0.8415)",
        "(< (cos pi) -0.999)",
        "(forall r 1 64 (<= (+ (cos r) (sin r)) 1.4143))",
    ] {
        assert_eq!(both(f, 128).1, Decided::F64, "{f}");
    }
    // sin 1 = 0.8414709848078965066525…: beyond binary64's reach at this margin
    assert_eq!(
        both("(< (sin 1) 0.84147098480789650666)", 128),
        (True, Decided::Mpfr)
    );
    // cos 0 = 1 exactly: the f64 tier cannot say `=`, nor can MPFR on an enclosure
    assert_eq!(f64_alone("(= (cos 0) 1)", 128), None);
}

/// `sandwich-centred` in the f64 tier: the same exact argument checks (errors escalate
/// and MPFR reports them), r = 0 exact in both, and sums of the bias decided with MPFR's
/// answer and charges.
#[test]
fn sandwich_centred_is_decided_in_the_f64_tier_with_the_mpfr_answer() {
    let some = Some(Decided::F64);
    for (f, want, who) in [
        ("(< (sandwich-centred 128 1 5) 0)", True, some),
        ("(= (sandwich-centred 128 1 0) 0)", True, some),
        (
            "(forall r 1 200 (< (sandwich-centred 64 0 r) (sandwich-centred 64 0 0)))",
            True,
            some,
        ),
        ("(> (sum r 1 50 (sandwich-centred 32 1 r)) 0)", False, some),
        // B̃ is even: two equal enclosures, decided by neither tier
        (
            "(forall r 1 100 (< (sandwich-centred 16 1 r) (sandwich-centred 16 1 (- 0 r))))",
            Unknown,
            Some(Decided::Mpfr),
        ),
    ] {
        assert_eq!(both(f, 128), (want, who.unwrap()), "{f}");
    }
    // a bad D or F, or an inexact r: an error in both tiers, MPFR's message
    for f in [
        "(< (sandwich-centred 7 1 5) 0)",
        "(< (sandwich-centred 8 2 5) 0)",
        "(< (sandwich-centred 8 1 1/2) 0)",
        "(< (sandwich-centred 8 1) 0)",
    ] {
        let a = run(f, 128, Tiers::F64ThenMpfr).unwrap_err();
        let b = run(f, 128, Tiers::MpfrOnly).unwrap_err();
        assert_eq!(a, b, "{f}");
    }
}
