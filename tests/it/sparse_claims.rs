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
    // a declared verdict never masks a kernel false (issue #38): the count the spec
    // states is refuted by its certificate, and the reason says what the run declared
    assert_eq!(verdict(&run), Verdict::Refuted);
    let reason = run.report.reason.as_deref().unwrap_or("");
    assert!(
        reason.contains("certified counterexample") && reason.contains("declared itself"),
        "{reason}"
    );
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

/// statrs 0.17's Beta::inverse_cdf put the committed report's interval for F = 1 of R = 200 at
/// [0.0002, 0.0276]; the exact ends are 1 − 0.975^{1/200} = 0.000127 and 0.02754. The ends must solve
/// the binomial tail equations P(X ≥ F; lo) = α/2 and P(X ≤ F; hi) = α/2.
#[test]
fn clopper_pearson_ends_solve_the_binomial_tail_equations() {
    use attncheck::claims::sparse::failure_probability::clopper_pearson;
    // P(X ≤ f) for X ~ Bin(r, p), summed in f64 (r ≤ 200: every term is well-conditioned)
    fn cdf(f: u64, r: u64, p: f64) -> f64 {
        let mut c = 1.0f64; // C(r, k)
        let mut s = 0.0;
        for k in 0..=f {
            if k > 0 {
                c *= (r - k + 1) as f64 / k as f64;
            }
            s += c * p.powi(k as i32) * (1.0 - p).powi((r - k) as i32);
        }
        s
    }
    for (f, r) in [(1u64, 200u64), (3, 200), (10, 100), (199, 200)] {
        let (lo, hi) = clopper_pearson(f, r, 0.95);
        let upper_tail = 1.0 - cdf(f - 1, r, lo);
        assert!(
            (upper_tail - 0.025).abs() < 1e-6,
            "f={f} r={r}: P(X ≥ f; {lo}) = {upper_tail}"
        );
        if f < r {
            let lower_tail = cdf(f, r, hi);
            assert!(
                (lower_tail - 0.025).abs() < 1e-6,
                "f={f} r={r}: P(X ≤ f; {hi}) = {lower_tail}"
            );
        }
    }
    let (lo, hi) = clopper_pearson(1, 200, 0.95);
    assert!(
        (lo - (1.0 - 0.975f64.powf(1.0 / 200.0))).abs() < 1e-9,
        "{lo}"
    );
    assert!((hi - 0.02754).abs() < 1e-5, "{hi}");
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

mod target_format {
    use attncheck::sparse::target::{parse, write, TargetError};
    use rug::Rational;

    const H: &str = "%%MatrixMarket matrix coordinate real general\n";

    fn err(body: &str, k: usize) -> TargetError {
        parse(&format!("{H}{body}"), k).expect_err(body)
    }

    #[test]
    fn parses_exact_decimals_comments_and_sorts_rows() {
        let t = parse(
            &format!("{H}% a comment\n\n3 3 4\n1 3 0.1\n1 1 2.5\n2 2 1/3\n3 1 7\n"),
            2,
        )
        .unwrap();
        assert_eq!(t.n, 3);
        assert_eq!(
            t.rows[0],
            vec![(0, Rational::from((5, 2))), (2, Rational::from((1, 10)))]
        );
        assert_eq!(t.rows[1], vec![(1, Rational::from((1, 3)))]);
        // round trip
        assert_eq!(parse(&write(&t), 2).unwrap(), t);
        // integer field and upper case accepted
        assert!(parse(
            "%%MatrixMarket MATRIX coordinate integer general\n1 1 1\n1 1 3\n",
            1
        )
        .is_ok());
    }

    #[test]
    fn row_of_zeros_names_the_size_line() {
        let e = err("3 3 2\n1 1 1\n3 3 1\n", 1);
        assert_eq!(
            e,
            TargetError::EmptyRow {
                line: 2,
                i: 2,
                n: 3
            }
        );
        assert!(
            e.to_string().starts_with("line 2: row 2 has no nonzero"),
            "{e}"
        );
    }

    #[test]
    fn negative_and_zero_entries_name_their_line() {
        let e = err("2 2 2\n1 1 1\n2 2 -0.5\n", 1);
        assert!(
            matches!(
                e,
                TargetError::NotPositive {
                    line: 4,
                    i: 2,
                    j: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = err("2 2 2\n1 1 0\n2 2 1\n", 1);
        assert!(matches!(e, TargetError::NotPositive { line: 3, .. }), "{e}");
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn more_than_k_nonzeros_names_the_extra_entry() {
        let e = err("2 2 4\n1 1 1\n1 2 1\n2 1 1\n2 2 1\n", 1);
        assert_eq!(
            e,
            TargetError::TooManyInRow {
                line: 4,
                i: 1,
                k: 1
            }
        );
        assert!(parse(&format!("{H}2 2 4\n1 1 1\n1 2 1\n2 1 1\n2 2 1\n"), 2).is_ok());
    }

    #[test]
    fn malformed_lines_name_their_line() {
        for (body, line) in [
            ("2 2 2\n1 1 1\n2 x 1\n", 4),
            ("2 2 2\n1 1 1\n2 2\n", 4),
            ("2 2 2\n1 1 one\n2 2 1\n", 3),
            ("2 two 2\n1 1 1\n2 2 1\n", 2),
            ("2 2 2 2\n1 1 1\n2 2 1\n", 2),
        ] {
            let e = err(body, 1);
            assert!(matches!(e, TargetError::Malformed { .. }), "{body}: {e}");
            assert_eq!(e.line(), line, "{body}: {e}");
        }
        let e = parse("%%MatrixMarket matrix array real general\n2 2\n", 1).unwrap_err();
        assert_eq!(e.line(), 1);
        let e = parse("1 1 1\n1 1 1\n", 1).unwrap_err();
        assert!(matches!(e, TargetError::Header { line: 1, .. }));
    }

    #[test]
    fn n_that_does_not_match_names_the_line() {
        // non-square
        let e = err("2 3 2\n1 1 1\n2 2 1\n", 1);
        assert_eq!(
            e,
            TargetError::NotSquare {
                line: 2,
                rows: 2,
                cols: 3
            }
        );
        // index out of range
        let e = err("2 2 2\n1 1 1\n3 1 1\n", 1);
        assert_eq!(
            e,
            TargetError::OutOfRange {
                line: 4,
                i: 3,
                j: 1,
                n: 2
            }
        );
        let e = err("2 2 2\n1 1 1\n2 0 1\n", 1);
        assert_eq!(e.line(), 4);
        // too many entries: the first extra one
        let e = err("2 2 1\n1 1 1\n2 2 1\n", 1);
        assert!(
            matches!(
                e,
                TargetError::CountMismatch {
                    line: 4,
                    size_line: 2,
                    declared: 1,
                    ..
                }
            ),
            "{e}"
        );
        // too few: the last line
        let e = err("2 2 3\n1 1 1\n2 2 1\n", 1);
        assert!(
            matches!(e, TargetError::CountMismatch { line: 4, .. }),
            "{e}"
        );
    }

    #[test]
    fn duplicates_name_both_lines() {
        let e = err("2 2 3\n1 1 1\n2 2 1\n1 1 2\n", 2);
        assert_eq!(
            e,
            TargetError::Duplicate {
                line: 5,
                i: 1,
                j: 1,
                first: 3
            }
        );
        assert!(e.to_string().contains("duplicates line 3"), "{e}");
    }
}

mod construct_cli {
    use std::process::{Command, Output};

    fn construct(body: &str, extra: &[&str]) -> (Output, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.mtx");
        std::fs::write(&f, body).unwrap();
        let out = dir.path().join("out");
        let o = Command::new(env!("CARGO_BIN_EXE_attncheck"))
            .args(["sparse", "construct", "--target"])
            .arg(&f)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        (o, dir)
    }

    const H: &str = "%%MatrixMarket matrix coordinate real general\n";

    #[test]
    fn each_bad_target_exits_2_names_the_line_and_writes_nothing() {
        for (body, k, line, what) in [
            ("3 3 2\n1 1 1\n3 3 1\n", "1", 2, "row 2 has no nonzero"),
            ("2 2 2\n1 1 1\n2 2 -1\n", "1", 4, "not positive"),
            ("2 2 3\n1 1 1\n1 2 1\n2 2 1\n", "1", 4, "more than k = 1"),
            ("2 2 2\n1 1 1\n2 2 x\n", "1", 4, "malformed entry"),
            ("2 3 2\n1 1 1\n2 2 1\n", "1", 2, "square"),
            ("2 2 2\n1 1 1\n3 2 1\n", "1", 4, "outside"),
            ("2 2 1\n1 1 1\n2 2 1\n", "1", 4, "declares 1 entry,"),
            ("2 2 3\n1 1 1\n2 2 1\n1 1 1\n", "2", 5, "duplicates line 3"),
        ] {
            let (o, dir) = construct(&format!("{H}{body}"), &["--k", k]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{body}: {err}");
            assert!(err.contains(&format!("a.mtx:{line}: ")), "{body}: {err}");
            assert!(err.contains(what), "{body}: {err}");
            assert!(!dir.path().join("out").exists(), "{body}: wrote output");
        }
    }

    #[test]
    fn good_target_writes_witness_and_a_certificate_that_verifies() {
        let body = format!("{H}4 4 6\n1 1 1\n1 3 2.5\n2 2 1\n3 1 1/3\n3 4 0.125\n4 4 7\n");
        let (o, dir) = construct(&body, &["--k", "2", "--rho", "1", "--seed", "3"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = dir.path().join("out");
        let w: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("a.witness.json")).unwrap())
                .unwrap();
        assert_eq!(w["n"], 4);
        assert_eq!(w["D"].as_u64().unwrap(), 2 * w["d"].as_u64().unwrap());
        let v = Command::new(env!("CARGO_BIN_EXE_attncheck"))
            .arg("verify")
            .arg(out.join("a.cert.json"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&v.stdout);
        assert_eq!(v.status.code(), Some(0), "{text}");
        assert!(text.contains("certified"), "{text}");
        assert!(!std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".tmp")));
    }

    #[test]
    fn bad_options_and_range_exit_2() {
        let ok = format!("{H}2 2 2\n1 1 1\n2 2 1\n");
        for args in [
            &["--epsilon", "0"][..],
            &["--delta", "1"],
            &["--gamma", "abc"],
            &["--k", "0"],
        ] {
            let (o, dir) = construct(&ok, args);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert!(
                String::from_utf8_lossy(&o.stderr).contains(&args[0][2..]),
                "{args:?}"
            );
            assert!(!dir.path().join("out").exists());
        }
        // ratio 4 in a row needs ρ ≥ ln 4 = 1.386…
        let wide = format!("{H}2 2 3\n1 1 1\n1 2 4\n2 2 1\n");
        let (o, _d) = construct(&wide, &["--k", "2", "--rho", "1.38"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--rho"));
    }
}

const LOGD: &str = "sparse/log-dimension";

#[test]
fn log_dimension_is_supported_with_slope_below_the_union_bound() {
    let run = run_quick(LOGD);
    assert_eq!(verdict(&run), Verdict::Supported, "{:?}", run.report.reason);
    let a = figure(&run, "fitted slope a at t = 1/4");
    assert!(a > 0.0 && a <= 70.4, "{a}");
    // sparse.md: the empirical slope approaches 4/t² from below
    assert!(a < 64.0, "{a}");
    let a8 = figure(&run, "fitted slope a at t = 1/8");
    assert!(a8 > 0.0 && a8 < 256.0, "{a8}");
    // every fitted assertion is resolved by the seeds (bootstrap table present)
    assert_eq!(
        cell(&run, "Sampling noise", "1/8", "seeds (fewest at any n)"),
        "1024"
    );
    // d_min ≤ d_ub at every n, with the §5 union-bound values in the table
    assert_eq!(cell(&run, "d_min(n)", "1/4", "d_ub (union bound)"), "325");
    assert!(run.report.plots.iter().any(|p| p.file.ends_with(".svg")));
}

#[test]
fn log_dimension_reproduces_the_union_bound_table() {
    use attncheck::sparse::dimension::union_bound_dimension;
    use rug::Rational;
    let delta = Rational::from((1, 100));
    // sparse.md §5
    for (n, d4, d8) in [
        (16, 325, 1300),
        (256, 503, 2010),
        (4096, 680, 2719),
        (65536, 858, 3429),
    ] {
        assert_eq!(
            union_bound_dimension(n, &Rational::from((1, 4)), &delta),
            Some(d4)
        );
        assert_eq!(
            union_bound_dimension(n, &Rational::from((1, 8)), &delta),
            Some(d8)
        );
    }
    // a wrong reference value is refuted
    let text = crate::util::spec_text(LOGD)
        .replacen("d_ub = 2719", "d_ub = 2720", 1)
        .replacen(
            "log2_n = [4, 5, 6, 7, 8, 9, 10, 11, 12]",
            "log2_n = [2, 3, 4]",
            1,
        );
    let run = crate::util::run_text(LOGD, &text, attncheck::spec::Profile::Quick);
    assert_eq!(verdict(&run), Verdict::Refuted);
}

#[test]
fn log_dimension_few_seeds_leave_the_quadratic_term_unresolved() {
    // sparse.md's 64 seeds on a short sweep: the fitted c·(ln n)² share moves by
    // tens of percent between bootstrap resamples, so the check must not pass on
    // a lucky point estimate.
    let text = crate::util::spec_text(LOGD)
        .replacen(
            "log2_n = [4, 5, 6, 7, 8, 9, 10, 11, 12]",
            "log2_n = [4, 5, 6, 7, 8]",
            1,
        )
        .replacen("t = [\"1/4\", \"1/8\"]", "t = [\"1/4\"]", 1)
        .replacen("seeds = 1024", "seeds = 64", 1);
    let run = crate::util::run_text(LOGD, &text, attncheck::spec::Profile::Quick);
    assert_eq!(
        verdict(&run),
        Verdict::Inconclusive,
        "{:?}",
        run.report.reason
    );
    let share = crate::util::check(&run, "c·(ln n)² term");
    assert!(
        share.detail.contains("not resolved by the seeds"),
        "{}",
        share.detail
    );
    // the same spec without the bootstrap decides on the point estimate alone
    let plain = text.replacen("bootstrap = 1000", "bootstrap = 0", 1);
    let run0 = crate::util::run_text(LOGD, &plain, attncheck::spec::Profile::Quick);
    let share0 = crate::util::check(&run0, "c·(ln n)² term");
    assert!(!share0.detail.contains("bootstrap"), "{}", share0.detail);
}

#[test]
fn log_dimension_bootstrap_is_deterministic_and_exact_on_a_line() {
    use attncheck::claims::sparse::log_dimension::{bootstrap, fit};
    use rug::Rational;
    let q = Rational::from((9, 10));
    let lns: Vec<f64> = (4..=8)
        .map(|e| (e as f64) * std::f64::consts::LN_2)
        .collect();
    // every seed gives d = 100·log₂ n: no spread, an exact line in ln n, so every
    // resample is the line itself
    let ds: Vec<Vec<usize>> = (4..=8).map(|e| vec![100 * e; 32]).collect();
    let pts: Vec<(f64, f64)> = lns
        .iter()
        .zip(&ds)
        .map(|(&x, v)| (x, v[0] as f64))
        .collect();
    let f = fit(&pts, 2);
    let slope = 100.0 / std::f64::consts::LN_2;
    assert!((f.a - slope).abs() < 1e-9 && f.share.abs() < 1e-9, "{f:?}");
    assert!((f.ratio - 1.0).abs() < 1e-12, "{f:?}");
    let b = bootstrap(&lns, &ds, &q, 2, 50, 7);
    assert_eq!(b.len(), 50);
    assert!(b.iter().all(|g| g.a == f.a && g.share == f.share));
    // spread values: the stream is fixed by the seed
    let noisy: Vec<Vec<usize>> = (0..5)
        .map(|i| (0..64).map(|s| 100 * i + (s * 37) % 91).collect())
        .collect();
    let one: Vec<f64> = bootstrap(&lns, &noisy, &q, 2, 20, 7)
        .iter()
        .map(|g| g.share)
        .collect();
    let two: Vec<f64> = bootstrap(&lns, &noisy, &q, 2, 20, 7)
        .iter()
        .map(|g| g.share)
        .collect();
    let other: Vec<f64> = bootstrap(&lns, &noisy, &q, 2, 20, 8)
        .iter()
        .map(|g| g.share)
        .collect();
    assert_eq!(one, two);
    assert_ne!(one, other);
}

#[test]
fn log_dimension_quantile_is_an_order_statistic() {
    use attncheck::claims::sparse::log_dimension::{least_squares, quantile};
    use rug::Rational;
    let v: Vec<usize> = (1..=64).collect();
    assert_eq!(quantile(&v, &Rational::from((9, 10))), 58); // ⌈57.6⌉
    assert_eq!(quantile(&v, &Rational::from(1)), 64);
    assert_eq!(quantile(&v[..16], &Rational::from((9, 10))), 15);
    let ab = least_squares(
        &[vec![1.0, 1.0], vec![2.0, 1.0], vec![3.0, 1.0]],
        &[5.0, 7.0, 9.0],
    );
    assert!((ab[0] - 2.0).abs() < 1e-12 && (ab[1] - 3.0).abs() < 1e-12);
}

#[test]
fn log_dimension_bad_params_are_rejected() {
    for (from, to, field) in [
        (
            "log2_n = [4, 5, 6, 7, 8, 9, 10, 11, 12]",
            "log2_n = [4, 5, 7, 8, 9, 10, 11, 12]",
            "log2_n",
        ),
        ("quantile = \"0.9\"", "quantile = \"0\"", "quantile"),
        ("delta = \"0.01\"", "delta = \"1\"", "delta"),
        ("seeds = 1024", "seeds = 0", "seeds"),
        ("bootstrap = 1000", "bootstrap = 1000000", "bootstrap"),
        (
            "bootstrap = 1000",
            "bootstrap = 1000\nresolve = \"0\"",
            "resolve",
        ),
    ] {
        let e = param_error(LOGD, from, to);
        assert!(e.contains(field), "{e}");
    }
}

/// Runs `text` as the counting spec from a temporary theorems directory, writes
/// the certificate there, and returns (run, theorems dir, certificate path).
fn counting_from_temp_spec(
    text: &str,
) -> (
    attncheck::app::ClaimRun,
    tempfile::TempDir,
    std::path::PathBuf,
) {
    let dir = tempfile::tempdir().unwrap();
    let spec_dir = dir.path().join("sparse");
    std::fs::create_dir_all(&spec_dir).unwrap();
    let spec_file = spec_dir.join("counting-lower-bound.toml");
    std::fs::write(&spec_file, text).unwrap();
    let spec = attncheck::claims::load_spec(&spec_file).unwrap();
    let run = attncheck::app::run_claims(
        &[&spec],
        attncheck::spec::Profile::Quick,
        &attncheck::progress::Progress::hidden(),
    )
    .unwrap()
    .into_iter()
    .next()
    .unwrap();
    let (_, cert) = run.certificate.as_ref().expect("a certificate");
    let p = dir.path().join("counting.cert.json");
    std::fs::write(&p, cert).unwrap();
    (run, dir, p)
}

#[test]
fn counting_lower_bound_does_not_wrap_at_d_2_pow_62() {
    // 2·d·p = 2^64 wrapped to 0 in u64 and "disproved" D·p ≥ 3 at n = 16
    let text = crate::util::spec_text(COUNTING).replacen(
        "n = 16\nd = 325\nbits = 1",
        "n = 16\nd = 4611686018427387904\nbits = 2",
        1,
    );
    assert!(text.contains("4611686018427387904"));
    let (run, dir, cert) = counting_from_temp_spec(&text);
    assert_eq!(verdict(&run), Verdict::Certified, "{}", run.markdown);
    let c = crate::util::check(&run, "n = 16, d = 4611686018427387904, p = 2 bits");
    assert_eq!(c.result, attncheck::kernel::Certainty::True);
    assert_eq!(c.kind, attncheck::verdict::CheckKind::Certified);
    assert!(cell(&run, "The reconstruction's width", "16", "D·p") == "18446744073709551616");
    let v = attncheck::app::verify_file(&cert, Some(dir.path())).unwrap();
    assert!(v.checked.as_expected());
}

#[test]
fn counting_lower_bound_writes_a_certificate_that_verify_rebuilds_and_tampering_is_rejected() {
    let run = run_quick(COUNTING);
    let theorems = crate::util::root().join("theorems");
    let dir = tempfile::tempdir().unwrap();
    let (_, text) = run
        .certificate
        .as_ref()
        .expect("counting-lower-bound writes a certificate");
    let ok = dir.path().join("ok.cert.json");
    std::fs::write(&ok, text).unwrap();
    let v = attncheck::app::verify_file(&ok, Some(&theorems)).unwrap();
    assert!(v.checked.as_expected());
    assert_eq!(v.checked.decisions().len(), run.report.checks.len());
    let base: serde_json::Value = serde_json::from_str(text).unwrap();
    let rejected = |name: &str, v: &serde_json::Value| {
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
        match attncheck::app::verify_file(&p, Some(&theorems)) {
            Err(attncheck::app::Error::Rejected { .. }) => {}
            Err(e) => panic!("{name}: {e}"),
            Ok(_) => panic!("{name}: accepted"),
        }
        p
    };
    let mut a = base.clone();
    a["obligations"][0]["formula"] = "(<= 0 1)".into();
    let vacuous = rejected("vacuous.json", &a);
    let mut b = base.clone();
    b["obligations"].as_array_mut().unwrap().remove(3);
    rejected("deleted.json", &b);
    // the least D·p at n = 16 changed from 3 to 2 in the formula
    let mut c = base.clone();
    let i = c["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .position(|o| o["formula"] == "(= (ceil (/ 45 16)) 3)")
        .expect("the least D·p obligation");
    c["obligations"][i]["formula"] = "(= (ceil (/ 45 16)) 2)".into();
    rejected("bound.json", &c);
    let mut d = base.clone();
    d["obligations"][0]["expect"] = "fails".into();
    rejected("expect.json", &d);
    // through the binary: exit 4
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_attncheck"))
        .arg("verify")
        .arg(&vacuous)
        .arg("--theorems")
        .arg(&theorems)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn counting_lower_bound_notes_are_printed_once() {
    let run = run_quick(COUNTING);
    let md = &run.markdown;
    assert_eq!(md.matches("the counting argument").count(), 1, "{md}");
    let mut notes = run.report.notes.clone();
    notes.sort();
    notes.dedup();
    assert_eq!(notes.len(), run.report.notes.len());
}

#[test]
fn counting_lower_bound_states_its_tolerance_in_params_and_statement() {
    let run = run_quick(COUNTING);
    assert_eq!(run.report.params["stirling_tol_bits"], "0.21");
    // the tolerance is a literal of the sweep's obligation (so --check sees it move)
    let c = crate::util::check(&run, "for every n in 16..=1024");
    assert!(c.name.contains("≤ 0.21 bits"), "{}", c.name);
    assert_eq!(c.kind, attncheck::verdict::CheckKind::Certified);
    let (_, text) = run.certificate.as_ref().unwrap();
    assert!(
        text.contains("21/100"),
        "tolerance 0.21 = 21/100 in the formulas"
    );
}
