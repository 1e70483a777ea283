//! sparse/counting-lower-bound, sparse/np-hardness, sparse/failure-probability,
//! sparse/log-dimension, and the target format of `attncheck sparse construct`.
//! Every number here is a check of the project's explicit reconstruction of the
//! Likhosherstov–Choromanski–Weller theorem (sparse.md, [derived]).

use crate::util::{cell, figure, run_edited, run_quick, verdict};
use attncheck::claims::sparse::counting_lower_bound::{ceil_log2, ceil_log2_factorial, least_dp};
use attncheck::verdict::Verdict;
use rug::Integer;

const COUNTING: &str = "sparse/counting-lower-bound";

#[test]
fn counting_committed_spec_is_certified() {
    assert_eq!(verdict(&run_quick(COUNTING)), Verdict::Certified);
}

#[test]
fn counting_reproduces_the_section5_table() {
    // sparse.md §5, counting bound
    for (n, c, dp) in [
        (16, 45, 3),
        (256, 1684, 7),
        (1024, 8770, 9),
        (65536, 954037, 15),
    ] {
        assert_eq!(ceil_log2_factorial(n), c, "n = {n}");
        assert_eq!(least_dp(n), dp, "n = {n}");
    }
    let run = run_quick(COUNTING);
    assert_eq!(figure(&run, "⌈log₂ n!⌉ at n = 65536"), 954037.0);
    for (n, per_n, lead) in [
        ("16", "2.7656338", "2.557305"),
        ("256", "6.5781105", "6.557305"),
        ("1024", "8.5634826", "8.557305"),
        ("65536", "14.557447", "14.557305"),
    ] {
        assert!(!cell(&run, "Counting bound", n, "⌈log₂ n!⌉").is_empty());
        assert!(cell(&run, "Counting bound", n, "log₂(n!)/n").starts_with(per_n));
        assert!(cell(&run, "Counting bound", n, "log₂ n − 1/ln 2").starts_with(lead));
    }
    // the largest gap of the leading approximation is at n = 16, just under 0.21 bits
    let g = figure(&run, "largest Stirling gap (bits, n ≥ 16)");
    assert!(g > 0.20 && g < 0.21, "{g}");
}

#[test]
fn ceil_log2_of_a_power_of_two_is_not_its_bit_length() {
    assert_eq!(ceil_log2(&Integer::from(1)), 0);
    assert_eq!(ceil_log2(&Integer::from(2)), 1);
    assert_eq!(ceil_log2(&Integer::from(8)), 3);
    assert_eq!(ceil_log2(&Integer::from(9)), 4);
    assert_eq!(ceil_log2_factorial(2), 1); // 2! = 2
    assert_eq!(ceil_log2_factorial(3), 3); // 6
}

#[test]
fn counting_off_by_one_claim_is_refuted() {
    let run = run_edited(
        COUNTING,
        "ceil_log2_factorial = 1684",
        "ceil_log2_factorial = 1685",
    );
    assert_eq!(verdict(&run), Verdict::Refuted);
    let run = run_edited(
        COUNTING,
        "ceil_log2_factorial = 45",
        "ceil_log2_factorial = 44",
    );
    assert_eq!(verdict(&run), Verdict::Refuted);
}

#[test]
fn counting_wrong_printed_digit_or_tight_tolerance_is_refuted() {
    let run = run_edited(COUNTING, "\"6.5781105\"", "\"6.5781106\"");
    assert_eq!(verdict(&run), Verdict::Refuted);
    // the gap at n = 16 is 0.2083…: a tolerance of 0.2 bits must fail
    let run = run_edited(
        COUNTING,
        "stirling_tol_bits = \"0.21\"",
        "stirling_tol_bits = \"0.2\"",
    );
    assert_eq!(verdict(&run), Verdict::Refuted);
    // D·p = 2·325·1 = 650 ≥ 3, but one bit of width at n = 16 cannot hold 3
    let run = run_edited(COUNTING, "d = 325", "d = 1");
    assert_eq!(verdict(&run), Verdict::Refuted);
}

#[test]
fn counting_bad_params_are_rejected() {
    for (from, to, field) in [
        ("sweep_max = 1024", "sweep_max = 3", "sweep_max"),
        (
            "stirling_tol_bits = \"0.21\"",
            "stirling_tol_bits = \"-1\"",
            "stirling_tol_bits",
        ),
        ("\"2.7656338\"", "\"2.76x\"", "log2_factorial_per_n"),
        ("n = 16\nceil", "n = 2\nceil", "reference[0]"),
    ] {
        let text = crate::util::spec_text(COUNTING).replacen(from, to, 1);
        let spec = attncheck::spec::Spec::parse(&crate::util::spec_path(COUNTING), &text).unwrap();
        let e = attncheck::app::run_claims(
            &[&spec],
            attncheck::spec::Profile::Quick,
            &attncheck::progress::Progress::hidden(),
        )
        .err()
        .unwrap_or_else(|| panic!("{from} → {to} accepted"))
        .to_string();
        assert!(e.contains(field), "{e}");
        assert!(e.contains("counting-lower-bound.toml:"), "{e}");
    }
}

const NP: &str = "sparse/np-hardness";

#[test]
fn np_hardness_is_declared_not_checkable_with_certified_sanity_checks() {
    let run = run_quick(NP);
    assert_eq!(verdict(&run), Verdict::NotCheckable);
    // the sanity checks are all certified true
    assert!(!run.report.checks.is_empty());
    assert!(run
        .report
        .checks
        .iter()
        .all(|c| c.result == attncheck::kernel::Certainty::True));
}

#[test]
fn np_hardness_reproduces_the_counts() {
    let run = run_quick(NP);
    for (n, total, real) in [("3", "27", "21"), ("4", "256", "88"), ("5", "3125", "305")] {
        let t = "Argmax patterns";
        assert_eq!(cell(&run, t, n, "maps n^n"), total);
        assert_eq!(cell(&run, t, n, "d = 1 realisable (enumerated)"), real);
        assert_eq!(cell(&run, t, n, "n + C(n,2)(2^n − 2)"), real);
        assert_eq!(cell(&run, t, n, "d = 1 witnesses verified"), "all");
        assert_eq!(cell(&run, t, n, "d = 2 realisable (verified)"), total);
    }
}

#[test]
fn np_hardness_wrong_count_is_a_false_check() {
    let run = run_edited(NP, "realisable = 88", "realisable = 89");
    // the declared verdict wins, but the check records the mismatch
    assert_eq!(verdict(&run), Verdict::NotCheckable);
    assert!(run
        .report
        .checks
        .iter()
        .any(|c| c.result == attncheck::kernel::Certainty::False && c.name.contains("n = 4")));
}

#[test]
fn np_hardness_rank_one_witness_and_circle_points() {
    use attncheck::claims::sparse::np_hardness::{circle_point, rank_one_witness};
    use rug::Rational;
    let g = Rational::from(1);
    assert!(rank_one_witness(&[0, 1, 2], &g).is_none());
    let (u, v) = rank_one_witness(&[2, 0, 2], &g).unwrap();
    assert_eq!(
        v,
        vec![Rational::from(-1), Rational::new(), Rational::from(1)]
    );
    assert_eq!(
        u,
        vec![Rational::from(1), Rational::from(-1), Rational::from(1)]
    );
    let (x, y) = circle_point(1); // (3/5, 4/5)
    assert_eq!((x, y), (Rational::from((3, 5)), Rational::from((4, 5))));
}

#[test]
fn np_hardness_bad_params_are_rejected() {
    for (from, to, field) in [
        ("gamma = \"1\"", "gamma = \"0\"", "gamma"),
        ("n = 5", "n = 9", "counts[2]"),
    ] {
        let e = param_error(NP, from, to);
        assert!(e.contains(field), "{e}");
    }
}

/// The error of running the committed spec with one edit (panics if accepted).
fn param_error(id: &str, from: &str, to: &str) -> String {
    let text = crate::util::spec_text(id).replacen(from, to, 1);
    let spec = attncheck::spec::Spec::parse(&crate::util::spec_path(id), &text).unwrap();
    attncheck::app::run_claims(
        &[&spec],
        attncheck::spec::Profile::Quick,
        &attncheck::progress::Progress::hidden(),
    )
    .err()
    .unwrap_or_else(|| panic!("{from} → {to} accepted"))
    .to_string()
}

const FAIL: &str = "sparse/failure-probability";

#[test]
fn failure_probability_is_supported_and_far_below_the_bound() {
    let run = run_quick(FAIL);
    assert_eq!(verdict(&run), Verdict::Supported);
    // p_bound = 256·255·e^{−12.6875} = 0.20168 (sparse.md §4: "≈ 0.2")
    let pb = figure(&run, "union bound p_bound");
    assert!((pb - 0.20168).abs() < 1e-5, "{pb}");
    let f = figure(&run, "failure fraction F/R");
    assert!(f <= pb, "{f}");
    assert!(!cell(&run, "Seeds' failure", "256", "Clopper–Pearson interval").is_empty());
}

#[test]
fn union_bound_and_clopper_pearson() {
    use attncheck::claims::sparse::failure_probability::{clopper_pearson, union_bound};
    use rug::Rational;
    let pb = union_bound(256, 406, &Rational::from((1, 4)), 128);
    assert!(pb.lo_f64() > 0.20168 && pb.hi_f64() < 0.20169, "{pb:?}");
    // capped at 1
    let one = union_bound(256, 10, &Rational::from((1, 4)), 128);
    assert_eq!(one.lo_f64(), 1.0);
    // R = 200, F = 0: upper end 1 − 0.025^{1/200} = 0.01827
    let (lo, hi) = clopper_pearson(0, 200, 0.95);
    assert_eq!(lo, 0.0);
    assert!((hi - 0.018275).abs() < 1e-5, "{hi}");
    // F = 10 of 100: [0.0490, 0.1762] (standard tables)
    let (lo, hi) = clopper_pearson(10, 100, 0.95);
    assert!(
        (lo - 0.0490).abs() < 1e-3 && (hi - 0.1762).abs() < 1e-3,
        "{lo} {hi}"
    );
}

#[test]
fn seed_status_is_exact_at_the_threshold() {
    // t = 1/8 at d = 406 is far below the typical t*: the seed fails
    use attncheck::claims::sparse::failure_probability::seed_fails;
    use rug::Rational;
    let (fails, m) = seed_fails(256, 406, &Rational::from((1, 8)), 1000);
    assert!(fails && m > Rational::from((406, 8)));
    // t exactly at the seed's t*: not a failure (C(t) is ≤); one step lower: a failure
    let (_, m) = seed_fails(256, 406, &Rational::from((1, 4)), 1000);
    let (f_at, _) = seed_fails(256, 406, &Rational::from((m, 406)), 1000);
    let (f_below, _) = seed_fails(256, 406, &Rational::from((m - 1, 406)), 1000);
    assert!(!f_at && f_below);
}

#[test]
fn failure_probability_bad_params_are_rejected() {
    for (from, to, field) in [
        ("t = \"1/4\"", "t = \"1\"", "params.t"),
        ("seeds = 200", "seeds = 0", "seeds"),
        ("n = 256", "n = 1", "params.n"),
        ("confidence = 0.95", "confidence = 1.5", "confidence"),
    ] {
        let e = param_error(FAIL, from, to);
        assert!(e.contains(field), "{e}");
    }
}
