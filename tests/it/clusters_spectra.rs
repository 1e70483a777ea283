//! Certified spectra (src/dynamics/spectrum.rs) against clusters.md §4, the good-triple
//! and paranormal hypotheses rejected by name, and the claims clusters/hyperplanes and
//! clusters/paranormal.

use attncheck::dynamics::model::Mat;
use attncheck::dynamics::spectrum::{self, Other, SpectrumError};
use attncheck::kernel::Interval;
use rug::Rational;

fn q(s: &str) -> Rational {
    attncheck::kernel::parse_rational(s).unwrap()
}

fn mat(rows: &[&[&str]]) -> Mat {
    Mat::from_rows(
        rows.iter()
            .map(|r| r.iter().map(|s| q(s)).collect())
            .collect(),
    )
}

const V2D: &[&[&str]] = &[&["0.64709742", "0.81911926"], &["0.61210449", "0.63263484"]];
const V3M: &[&[&str]] = &[
    &["0.2362413", "0.0599536", "0.40506019"],
    &["0.81321448", "0.49948705", "0.33754772"],
    &["0.2160645", "0.38505272", "0.14588075"],
];
const V3P: &[&[&str]] = &[
    &["0.18608476", "0.34391026", "0.13905949"],
    &["0.35244288", "0.6694859", "0.39992145"],
    &["0.46685606", "0.17094454", "0.42092308"],
];
const VSYM: &[&[&str]] = &[
    &["0.92761287", "0.94333073", "0.3827744"],
    &["0.94333073", "0.59991396", "0.47825472"],
    &["0.3827744", "0.47825472", "0.46668605"],
];

/// |x − r| ≤ tol·|r| for every point of the enclosure (printed to 10 digits in §4).
fn close(x: &Interval, r: f64, rel: f64) {
    let (lo, hi) = (x.lo_f64(), x.hi_f64());
    assert!(
        (lo - r).abs() <= rel * r.abs() && (hi - r).abs() <= rel * r.abs(),
        "{} vs {r}",
        x.fmt_outward(15)
    );
}

#[test]
fn char_poly_is_exact() {
    let v = mat(&[&["2", "1"], &["1", "2"]]);
    assert_eq!(spectrum::char_poly(&v), vec![q("3"), q("-4"), q("1")]);
    let v = mat(&[&["1", "2", "0"], &["0", "3", "0"], &["0", "0", "5"]]);
    // (x − 1)(x − 3)(x − 5) = x³ − 9x² + 23x − 15.
    assert_eq!(
        spectrum::char_poly(&v),
        vec![q("-15"), q("23"), q("-9"), q("1")]
    );
}

#[test]
fn v2d_spectrum_matches_section_4() {
    let v = mat(V2D);
    let l = spectrum::leading(&v, 128).unwrap();
    close(&l.lambda, 1.347989614, 5e-10);
    match &l.others[0] {
        Other::Real(m) => close(m, -0.0682573539, 5e-10),
        o => panic!("{o:?}"),
    }
    close(&l.left[0], 0.4661889078, 5e-10);
    close(&l.left[1], 0.5338110922, 5e-10);
    assert!(l.residuals_contain_zero);
    assert!(l.right_residual < 1e-30 && l.left_residual < 1e-30);
    assert!(l.dp.lo_f64() > 0.0 || l.dp.hi_f64() < 0.0);
    let norm = spectrum::op_norm(&v, 128).unwrap();
    close(&norm, 1.363832368, 5e-10);
    // The isolating interval is exact and tiny.
    assert!(l.lo <= l.hi);
    assert!(Rational::from(&l.hi - &l.lo) < q("2^-100"));
}

#[test]
fn three_d_spectra_match_section_4() {
    for (m, lam, re, modulus, phi) in [
        (
            V3M,
            0.9910100776,
            -0.05470048879,
            0.2598,
            [0.4012193455, 0.2904673835, 0.308313271],
        ),
        (
            V3P,
            1.078326774,
            0.09908348291,
            0.1286,
            [0.3108762818, 0.3875838792, 0.3015398391],
        ),
    ] {
        let l = spectrum::leading(&mat(m), 128).unwrap();
        close(&l.lambda, lam, 5e-10);
        match &l.others[0] {
            Other::Pair { re: r, modulus: md } => {
                close(r, re, 5e-10);
                close(md, modulus, 5e-4);
            }
            o => panic!("{o:?}"),
        }
        for (x, r) in l.left.iter().zip(phi) {
            close(x, r, 5e-9);
        }
        assert!(l.residuals_contain_zero);
    }
    // The complex parts ±0.2539792718i and ±0.08191704582i: |μ|² − Re² = Im².
    let l = spectrum::leading(&mat(V3M), 128).unwrap();
    if let Other::Pair { re, modulus } = &l.others[0] {
        let im = (&modulus.powi(2) - &re.powi(2)).sqrt();
        close(&im, 0.2539792718, 5e-10);
    }
    let l = spectrum::leading(&mat(V3P), 128).unwrap();
    if let Other::Pair { re, modulus } = &l.others[0] {
        let im = (&modulus.powi(2) - &re.powi(2)).sqrt();
        close(&im, 0.08191704582, 5e-10);
    }
}

#[test]
fn vsym_spectrum_matches_section_4() {
    let l = spectrum::leading(&mat(VSYM), 128).unwrap();
    close(&l.lambda, 1.963445236, 5e-10);
    let mut others: Vec<f64> = l
        .others
        .iter()
        .map(|o| match o {
            Other::Real(x) => x.mid_f64(),
            _ => panic!("symmetric"),
        })
        .collect();
    others.sort_by(f64::total_cmp);
    assert!((others[0] + 0.222104193).abs() < 5e-9);
    assert!((others[1] - 0.2528718366).abs() < 5e-10);
    for (x, r) in l.left.iter().zip([0.413711219, 0.3641367045, 0.2221520765]) {
        close(x, r, 5e-9);
    }
}

#[test]
fn hypotheses_are_rejected_by_name() {
    // Complex leading eigenvalue (rotation-scaling).
    let e = spectrum::leading(&mat(&[&["1", "-1"], &["1", "1"]]), 128).unwrap_err();
    assert!(matches!(e, SpectrumError::NotReal(_)), "{e}");
    assert!(e.to_string().starts_with("good triple: λ1 is not real"));
    // Non-simple λ1.
    let e = spectrum::leading(
        &mat(&[&["1", "0", "0"], &["0", "1", "0"], &["0", "0", "1/2"]]),
        128,
    )
    .unwrap_err();
    assert!(
        e.to_string().starts_with("good triple: λ1 is not simple"),
        "{e}"
    );
    let e = spectrum::leading(&Mat::identity(2), 128).unwrap_err();
    assert!(matches!(e, SpectrumError::NotSimple(_)), "{e}");
    // Not dominant: eigenvalues 1 and −1.
    let e = spectrum::leading(&mat(&[&["1", "0"], &["0", "-1"]]), 128).unwrap_err();
    assert!(matches!(e, SpectrumError::NotDominant(_)), "{e}");
    // 3-D not dominant: 1, −1, 1/2.
    let e = spectrum::leading(
        &mat(&[&["1", "0", "0"], &["0", "-1", "0"], &["0", "0", "1/2"]]),
        128,
    )
    .unwrap_err();
    assert!(matches!(e, SpectrumError::NotDominant(_)), "{e}");
    let e = spectrum::leading(&mat(&[&["-2", "0"], &["0", "1"]]), 128).unwrap_err();
    assert!(matches!(e, SpectrumError::NotPositive(_)), "{e}");
    // Not positive: leading eigenvalue −2.
    let e = spectrum::leading(
        &mat(&[&["-2", "0", "0"], &["0", "1", "0"], &["0", "0", "1/2"]]),
        128,
    )
    .unwrap_err();
    assert!(matches!(e, SpectrumError::NotPositive(_)), "{e}");
    // 3-D complex pair leading: rotation-scaling block ⊕ 1/2.
    let e = spectrum::leading(
        &mat(&[&["1", "-1", "0"], &["1", "1", "0"], &["0", "0", "1/2"]]),
        128,
    )
    .unwrap_err();
    assert!(matches!(e, SpectrumError::NotReal(_)), "{e}");
    // ⟨Qφ1, Kφ1⟩ > 0 fails: V = diag(1, 1/2), QᵀK = diag(−1, 1).
    let err = spectrum::good_triple(
        &mat(&[&["-1", "0"], &["0", "1"]]),
        &mat(&[&["1", "0"], &["0", "1/2"]]),
        128,
    )
    .unwrap_err();
    assert!(err.to_string().contains("⟨Qφ1, Kφ1⟩ > 0 fails"), "{err}");
    assert_eq!(err.field(), "q");
    // Paranormal.
    let v = mat(&[&["1", "0"], &["0", "-1/2"]]);
    let p = spectrum::paranormal(&Mat::identity(2), &v).unwrap();
    assert_eq!((p.f_axes.clone(), p.g_axes.clone()), (vec![0], vec![1]));
    assert_eq!(p.rho_g, q("1/2"));
    let (f, e) =
        spectrum::paranormal(&Mat::identity(2), &mat(&[&["1", "0"], &["0", "-1"]])).unwrap_err();
    assert_eq!(f, "v");
    assert!(e.contains("ρ(V|_𝒢)"), "{e}");
    let (f, e) = spectrum::paranormal(&mat(&[&["1", "2"], &["2", "1"]]), &v).unwrap_err();
    assert_eq!(f, "q");
    assert!(e.contains("QᵀK ≻ 0"), "{e}");
}

// ---------------------------------------------------------------- the claims

use crate::util::{cell, edited_err, figure, run_edited, run_quick, verdict};
use attncheck::claims::clusters::common::InstanceSpec;
use attncheck::claims::clusters::hyperplanes::{hull_invariants, run_map};
use attncheck::dynamics::model::MatrixSpec;
use attncheck::verdict::Verdict;

const HYP: &str = "clusters/hyperplanes";
const PAR: &str = "clusters/paranormal";
const V2D_ROWS: &str = r#"v = [["0.64709742", "0.81911926"], ["0.61210449", "0.63263484"]]"#;

#[test]
fn hyperplanes_is_supported_with_the_section_4_spectra() {
    let run = run_quick(HYP);
    assert_eq!(
        verdict(&run),
        Verdict::Supported,
        "{:#?}",
        run.report.checks
    );
    let w = figure(&run, "max_dist_to_hyperplanes");
    assert!(w > 0.0 && w < 1.2e-5, "{w}");
    let t = "Certified spectra";
    assert!(cell(&run, t, "V_2D, n = 20", "φ1* (sum 1)").starts_with("0.4661889078, 0.5338110922"));
    assert!(cell(&run, t, "V_3−, n = 20", "φ1* (sum 1)").starts_with("0.4012193455, 0.2904673835"));
    assert!(cell(&run, t, "V_3+, n = 20", "φ1* (sum 1)").starts_with("0.3108762818, 0.3875838792"));
    assert!(cell(&run, t, "V_2D, n = 20", "‖V‖_op").starts_with("[1.363832368"));
    // Every token sits on one of the three hyperplanes.
    let p = "The three hyperplanes";
    for row in ["V_2D, n = 20", "V_3−, n = 20", "V_3+, n = 20"] {
        assert_eq!(cell(&run, p, row, "off all three"), "—");
    }
    // The ablations are reported, not checked.
    let a = "Hypothesis ablations";
    assert!(cell(
        &run,
        a,
        "complex λ1: V = [[1, −1], [1, 1]]",
        "hypothesis dropped (certifier's words)"
    )
    .contains("not real"));
    assert!(cell(
        &run,
        a,
        "non-simple λ1: V = diag(1, 1, 1/2)",
        "hypothesis dropped (certifier's words)"
    )
    .contains("not simple"));
    assert!(run
        .report
        .checks
        .iter()
        .all(|c| !c.name.contains("ablation")));
}

#[test]
fn paranormal_is_supported() {
    let run = run_quick(PAR);
    assert_eq!(
        verdict(&run),
        Verdict::Supported,
        "{:#?}",
        run.report.checks
    );
    let w = figure(&run, "max_dist_to_levels");
    assert!(w > 0.0 && w < 6.3e-4, "{w}");
    assert!(run
        .report
        .checks
        .iter()
        .all(|c| !c.name.contains("QᵀK = [[")));
    assert!(run
        .report
        .tables
        .iter()
        .any(|t| t.title.starts_with("Gap case")));
}

#[test]
fn hyperplane_hypotheses_are_rejected_by_name_at_validation() {
    let e = edited_err(HYP, V2D_ROWS, r#"v = [["1", "-1"], ["1", "1"]]"#);
    assert!(
        e.contains("instances[0].v") && e.contains("good triple: λ1 is not real"),
        "{e}"
    );
    let e = edited_err(
        HYP,
        r#"v = [["0.2362413", "0.0599536", "0.40506019"], ["0.81321448", "0.49948705", "0.33754772"], ["0.2160645", "0.38505272", "0.14588075"]]"#,
        r#"v = { diag = ["1", "1", "1/2"] }"#,
    );
    assert!(
        e.contains("instances[1].v") && e.contains("good triple: λ1 is not simple"),
        "{e}"
    );
    let e = edited_err(HYP, V2D_ROWS, r#"v = { diag = ["1", "-1"] }"#);
    assert!(
        e.contains("instances[0].v") && e.contains("λ1 is not dominant"),
        "{e}"
    );
    let e = edited_err(HYP, V2D_ROWS, &format!("{V2D_ROWS}\nk = \"-I\""));
    assert!(
        e.contains("instances[0].q") && e.contains("⟨Qφ1, Kφ1⟩ > 0 fails"),
        "{e}"
    );
}

#[test]
fn paranormal_hypotheses_are_rejected_by_name_at_validation() {
    let from = "v = { diag = [\"1\", \"-1/2\"] }\ntokens = { uniform = [\"-5\", \"5\"], seed = 6201 }\ndt = \"1/10\"\nsteps = 120\n\n[[params.gap_cases]]\nname = \"V = diag(1, 0)";
    let e = edited_err(PAR, from, &from.replacen("\"-1/2\"", "\"-1\"", 1));
    assert!(
        e.contains("instances[0].v") && e.contains("ρ(V|_𝒢) = 1 is not < λ = 1"),
        "{e}"
    );
    let e = edited_err(
        PAR,
        from,
        &from.replacen("v = {", "k = [[\"1\", \"2\"], [\"2\", \"1\"]]\nv = {", 1),
    );
    assert!(
        e.contains("instances[0].q") && e.contains("QᵀK ≻ 0 fails"),
        "{e}"
    );
    let e = edited_err(
        PAR,
        from,
        &from.replacen("\"1\", \"-1/2\"", "\"1\", \"1\"", 1),
    );
    assert!(
        e.contains("instances[0].v") && e.contains("dim ℱ = 1"),
        "{e}"
    );
}

#[test]
fn the_limit_check_fails_when_the_tolerance_is_too_small() {
    let run = run_edited(HYP, "tau_factor = 10.0", "tau_factor = 1e-4");
    assert_eq!(verdict(&run), Verdict::Inconclusive);
    let run = run_edited(PAR, "tau_factor = 10.0", "tau_factor = 1e-4");
    assert_eq!(verdict(&run), Verdict::Inconclusive);
}

#[test]
fn the_hull_check_catches_a_functional_that_is_not_dual() {
    // max_j ⟨w, z_j⟩ is monotone for w = φ1* (F2), not for an arbitrary w: with w = e2 − e1
    // on V_2D the enclosures certify a violation on some step.
    let spec = InstanceSpec {
        name: "V_2D".into(),
        n: 20,
        d: 2,
        q: MatrixSpec::Named("I".into()),
        k: MatrixSpec::Named("I".into()),
        v: MatrixSpec::Rows(
            V2D.iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect(),
        ),
        tokens: MatrixSpec::Random {
            uniform: ["-5".into(), "5".into()],
            seed: 6101,
            grid_bits: None,
            rows: None,
        },
        dt: "1/10".into(),
        steps: 60,
    };
    let inst = spec
        .build(
            "instances[0]",
            1000,
            attncheck::claims::shape::Resolving::DEFAULT,
        )
        .unwrap();
    let w = vec![Interval::from_i64(160, -1), Interval::from_i64(160, 1)];
    let mut invs: Vec<_> = hull_invariants("w", "w", &w).into_iter().collect();
    run_map(&inst, 160, &mut invs, 60);
    assert!(
        invs.iter().any(|i| i.tally.violated() > 0),
        "{} / {}",
        invs[0].tally.summary(),
        invs[1].tally.summary()
    );
    // And for φ1* no step is violated.
    let l = spectrum::leading(&mat(V2D), 160).unwrap();
    let mut invs: Vec<_> = hull_invariants("φ", "φ", &l.left).into_iter().collect();
    run_map(&inst, 160, &mut invs, 60);
    assert!(invs.iter().all(|i| i.tally.violated() == 0));
}

// ---------------------------------------------------------------- statements

use attncheck::app::ClaimRun;
use attncheck::kernel::{Certainty, Expect};
use attncheck::verdict::CheckKind;

fn statement_checks(run: &ClaimRun) -> Vec<&attncheck::verdict::Check> {
    run.report
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Certified && c.detail.starts_with("statement obligation"))
        .collect()
}

/// Issue 13: hyperplanes recorded `Certainty::exact(lead.residuals_contain_zero)` as the
/// certified good-triple check. The hypotheses are now exact obligations (a sign change
/// of det(xI − V) on the isolating interval, Jury's test for the other eigenvalues,
/// QᵀK positive definite), and the residual containment is a consistency reading.
#[test]
fn hyperplanes_good_triple_is_a_statement_not_a_minted_bool() {
    let run = run_quick(HYP);
    let st = statement_checks(&run);
    // three good-triple obligations per witness, λ2's bracket (V_2D), and per real
    // eigenvalue its discrete Grönwall bound and that bound's non-vacuity (issue #24)
    assert_eq!(st.len(), 18);
    for c in &st {
        assert_eq!(
            (c.result, c.expect),
            (Certainty::True, Expect::Holds),
            "{}",
            c.name
        );
    }
    for w in ["V_2D, n = 20", "V_3−, n = 20", "V_3+, n = 20"] {
        let c = run
            .report
            .checks
            .iter()
            .find(|c| c.name.starts_with(w) && c.name.contains("eigenvector enclosures"))
            .unwrap();
        assert_eq!(
            (c.kind, c.result),
            (CheckKind::Consistency, Certainty::True)
        );
    }
    // a bracket hint that does not contain λ1 gives a false obligation, never a proof
    let spec = attncheck::claims::load_spec(&crate::util::spec_path(HYP)).unwrap();
    let (_, json) = run.certificate.as_ref().unwrap();
    let cert: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut hints: attncheck::certificate::Hints =
        serde_json::from_value(cert["hints"].clone()).unwrap();
    hints.insert("instances[0].lambda1_bracket".into(), "2 3".into());
    let st = attncheck::claims::statement_of(&spec, attncheck::spec::Profile::Quick, &hints)
        .unwrap()
        .unwrap();
    let checked = attncheck::kernel::check(&st, 160).unwrap();
    assert_eq!(checked.decisions()[0].result(), Certainty::False);
    assert!(!checked.as_expected());
}

#[test]
fn hyperplanes_certificate_verifies_and_tampering_is_rejected() {
    let run = run_quick(HYP);
    // the bound lo > 0 of the first obligation becomes lo > −1
    crate::clusters_remark::certificate_verifies_and_tampering_is_rejected(&run, (" 0)", " -1)"));
}

/// Issue 13: paranormal hard-coded `Certainty::True` as its certified "good triple with
/// multiplicity" check. The hypotheses of d:goodmulti are now exact obligations, and
/// they can fail: the kernel refutes ρ(V|_𝒢) < λ once the 𝒢-eigenvalue is −1.
#[test]
fn paranormal_hypotheses_are_obligations_not_a_hard_coded_true() {
    let run = run_quick(PAR);
    let st = statement_checks(&run);
    assert!(!st.is_empty());
    assert_eq!(st.len() % 3, 0, "three obligations per witness");
    for c in &st {
        assert_eq!(c.result, Certainty::True, "{}", c.name);
    }
    let (_, json) = run.certificate.as_ref().unwrap();
    let cert: serde_json::Value = serde_json::from_str(json).unwrap();
    let rho = cert["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"].as_str().unwrap().contains("ρ(V|_𝒢) < λ"))
        .unwrap()["formula"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        attncheck::kernel::expr::check(&rho, 64),
        Ok(Certainty::True)
    );
    let broken = rho.replacen("(abs -1/2)", "(abs -1)", 1);
    assert_ne!(broken, rho);
    assert_eq!(
        attncheck::kernel::expr::check(&broken, 64),
        Ok(Certainty::False)
    );
    // the π_ℱ-hull monotonicity stays a consistency reading
    assert!(run
        .report
        .checks
        .iter()
        .filter(|c| c.name.contains("π_ℱ") && c.name.contains("theorem of the map"))
        .all(|c| c.kind == CheckKind::Consistency));
}

#[test]
fn paranormal_certificate_verifies_and_tampering_is_rejected() {
    let run = run_quick(PAR);
    // an off-diagonal entry of V asserted 0 becomes −1
    crate::clusters_remark::certificate_verifies_and_tampering_is_rejected(&run, (" 0)", " -1)"));
}
