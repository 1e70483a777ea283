//! positional/alibi-slopes (trained-model-claims: tests/it/trained_models.rs).

use crate::util::{cell, figure, run_edited, run_quick, verdict};
use attncheck::claims::positional::alibi_slopes::official_f64_slopes;
use attncheck::claims::positional::common::{slope_exponents, SlopeRule};
use attncheck::verdict::Verdict;
use rug::Rational;

const ID: &str = "positional/alibi-slopes";

fn q(v: &[Rational]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Moved from src/claims/positional/common.rs's unit tests (the library is compiled
/// once for the tests).
#[test]
fn slope_rules_reference() {
    assert_eq!(
        q(&slope_exponents(8, SlopeRule::Paper)),
        ["1", "2", "3", "4", "5", "6", "7", "8"]
    );
    assert_eq!(
        q(&slope_exponents(12, SlopeRule::Code)),
        ["1", "2", "3", "4", "5", "6", "7", "8", "1/2", "3/2", "5/2", "7/2"]
    );
    assert_eq!(
        q(&slope_exponents(12, SlopeRule::Paper)),
        ["2/3", "4/3", "2", "8/3", "10/3", "4", "14/3", "16/3", "6", "20/3", "22/3", "8"]
    );
}

#[test]
fn committed_spec_is_certified() {
    assert_eq!(verdict(&run_quick(ID)), Verdict::Certified);
}

#[test]
fn reference_f64_error_is_14_units_of_u_at_h32_and_exact_for_h_up_to_8() {
    let run = run_quick(ID);
    // positional.md §2: "observed worst case 14 ulp, at H = 32; exact for H ≤ 8"
    let u = figure(
        &run,
        "max relative error of the official f64 slopes / 2^−53",
    );
    assert!((u - 14.0).abs() < 0.5, "{u}");
    for h in ["1", "2", "4", "8"] {
        assert_eq!(cell(&run, "Official f64", h, "exact"), "yes", "H = {h}");
    }
    assert_eq!(cell(&run, "Official f64", "32", "exact"), "no");
}

#[test]
fn official_f64_matches_python_for_h8() {
    // Python: [2**-1, 2**-2, ..., 2**-8] exactly for H = 8
    let s = official_f64_slopes(8);
    for (k, v) in s.iter().enumerate() {
        assert_eq!(v.to_f64(), 2f64.powi(-(k as i32 + 1)));
    }
    // H = 12: first 8 as H = 8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (to 1e-15)
    let s = official_f64_slopes(12);
    for (j, v) in s[8..].iter().enumerate() {
        let want = 2f64.powf(-(0.5 + j as f64));
        assert!(((v.to_f64() - want) / want).abs() < 1e-15);
    }
}

#[test]
fn slope_rules_reproduce_section_3() {
    let s = |h, r| {
        slope_exponents(h, r)
            .iter()
            .map(|q| q.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        s(16, SlopeRule::Paper),
        "1/2 1 3/2 2 5/2 3 7/2 4 9/2 5 11/2 6 13/2 7 15/2 8"
    );
    assert_eq!(s(12, SlopeRule::Code), "1 2 3 4 5 6 7 8 1/2 3/2 5/2 7/2");
    assert_eq!(
        s(12, SlopeRule::Paper),
        "2/3 4/3 2 8/3 10/3 4 14/3 16/3 6 20/3 22/3 8"
    );
    // heads 9–12 of the code rule are steeper than heads 5–8
    let c = slope_exponents(12, SlopeRule::Code);
    assert!(c[8..].iter().all(|q| c[4..8].iter().all(|p| q < p)));
}

#[test]
fn a_perturbed_reference_slope_is_refuted_not_certified() {
    let run = run_edited(
        ID,
        "exponents = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\", \"1/2\", \"3/2\", \"5/2\", \"7/2\"]",
        "exponents = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\", \"1/2\", \"3/2\", \"5/2\", \"4\"]",
    );
    assert_eq!(verdict(&run), Verdict::Refuted);
}

#[test]
fn a_tolerance_tightened_below_the_truth_is_not_certified() {
    // the official f64 slopes are off by up to 1.56e-15 relative at H = 32
    let run = run_edited(ID, "f64_rel_tol = \"1e-14\"", "f64_rel_tol = \"1e-15\"");
    assert_ne!(verdict(&run), Verdict::Certified);
}

#[test]
fn undecided_comparisons_escalate_precision_before_giving_up() {
    // at 24 bits the enclosures of 2^−q are ~1e−7 wide: the 1e−14 comparison is
    // undecided, so the run doubles the precision (24 → 48 → 96) and decides it
    let run = run_edited(ID, "precision = 128", "precision = 24");
    assert_eq!(verdict(&run), Verdict::Certified);
    assert_eq!(run.report.precision, 96);
    assert!(run
        .report
        .notes
        .iter()
        .any(|n| n.contains("raised from 24 to 96")));
}

#[test]
fn alibi_slopes_formulas_written_twice_now_come_from_one_statement() {
    crate::positional_sandwich::certificate_is_the_statement_and_tampers_are_rejected(
        ID,
        ("(- 1/256 ", "(- 1/255 "),
    );
    // every head of every H is an obligation now (not only the first two)
    let run = run_quick(ID);
    let text = &run.certificate.as_ref().unwrap().1;
    let cert: serde_json::Value = serde_json::from_str(text).unwrap();
    let f64s = cert["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["name"].as_str().unwrap().contains("official f64"))
        .map(|o| o["formula"].as_str().unwrap().matches("(<= (abs").count())
        .sum::<usize>();
    assert_eq!(f64s, 1 + 2 + 4 + 8 + 16 + 32 + 3 + 6 + 12 + 24);
}
