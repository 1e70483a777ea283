//! clusters/paranormal-proof-gap (a gap in the proof of t:multiplicity, exact
//! rationals) and clusters/higher-dim-remark (the d = 2 example of
//! r:higherdimclus has two clusters): verdicts, the clusters.md §3–§4 reference
//! numbers, checks that fail when a reference is corrupted, and bad specs.

use crate::util::{
    cell, figure, line_of, prepare_err, run_quick, run_text, spec_path, spec_text, verdict,
};
use attncheck::app::{self, ClaimRun};
use attncheck::claims::clusters::higher_dim_remark::{c_quadrature, half_unit, lower_bound};
use attncheck::claims::clusters::paranormal_proof_gap::{split, witness_s, Claim};
use attncheck::kernel::Certainty;
use attncheck::spec::{Profile, Spec};
use attncheck::verdict::{CheckKind, Verdict};
use rug::{Float, Rational};

const GAP: &str = "clusters/paranormal-proof-gap";
const REMARK: &str = "clusters/higher-dim-remark";

/// The spec text with every `(from, to)` replaced (each `from` must occur once).
fn edited(id: &str, edits: &[(&str, &str)]) -> String {
    let mut text = spec_text(id);
    for (from, to) in edits {
        assert_eq!(text.matches(from).count(), 1, "`{from}` must occur once");
        text = text.replacen(from, to, 1);
    }
    text
}

/// The result of the check whose name starts with `prefix` (exactly one).
fn check(run: &ClaimRun, prefix: &str) -> Certainty {
    let hits: Vec<_> = run
        .report
        .checks
        .iter()
        .filter(|c| c.name.starts_with(prefix))
        .collect();
    assert_eq!(hits.len(), 1, "checks starting with `{prefix}`");
    hits[0].result
}

fn q(s: &str) -> Rational {
    attncheck::kernel::parse_rational(s).unwrap()
}

// ----- clusters/paranormal-proof-gap ------------------------------------------

#[test]
fn paranormal_gap_committed_spec_is_refuted_with_hypotheses_proven() {
    let run = run_quick(GAP);
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert!(run.report.as_expected);
    for c in &run.report.checks {
        assert_eq!(c.kind, CheckKind::Certified, "{}", c.name);
        let expect = if c.name.starts_with("e:boundrj") {
            Certainty::False
        } else {
            Certainty::True
        };
        assert_eq!(c.result, expect, "{}", c.name);
    }
    // three constants C, each a certified failure of e:boundrj
    let fails = run
        .report
        .checks
        .iter()
        .filter(|c| c.name.starts_with("e:boundrj") && c.result == Certainty::False)
        .count();
    assert_eq!(fails, 3);
    assert!(check(&run, "hypothesis (i)").is_true());
    assert!(cell(
        &run,
        "The statement's hypotheses",
        "hypothesis (i): QᵀK = A² ≻ 0",
        "values (exact rationals)"
    )
    .contains("leading minors 5/4, 9/16"));
    // |r₂| / (C s) at C = 1, s = 9: 19/9
    let r = figure(&run, "|r₂| / (C e^{t(λ₁+|λ₂|)}) at C = 1, t = ln 9");
    assert!((r - 19.0 / 9.0).abs() < 1e-10, "{r}"); // figures keep 12 digits
                                                    // the report says what was refuted: a proof step, not the theorem
    assert!(run.markdown.contains("GAP IN A PROOF STEP"));
    assert!(run
        .markdown
        .contains("not a refutation of the theorem t:multiplicity"));
}

#[test]
fn paranormal_gap_exact_split_matches_section3() {
    let spec = Spec::parse(&spec_path(GAP), &spec_text(GAP)).unwrap();
    let p = attncheck::claims::shape::resolve::<Claim>(&spec, Profile::Quick).unwrap();
    let inst = p.instance;
    // t = 0: ⟨A z₁, A(z₂ − z₁)⟩ = 5/4, a₂ = 1/4
    let (e, a2, r) = split(&inst, &Rational::from(1));
    assert_eq!(e, q("5/4"));
    assert_eq!(a2, q("1/4"));
    assert_eq!(r, q("1"));
    // r₂ = 5/4 − s²/4 and |r₂| − C s = 5C + 5 > 0 at s = 4C + 5, for every C
    for c in ["1", "10^6", "10^30", "1/1000", "7/3"] {
        let c = q(c);
        let s = witness_s(&c);
        let (e, _, r) = split(&inst, &s);
        assert_eq!(
            e,
            q("5/4"),
            "the configuration is stationary and e^{{tV}} fixes it"
        );
        assert_eq!(r, q("5/4") - Rational::from(&s * &s) / 4);
        let excess = Rational::from(r.abs_ref()) - Rational::from(&c * &s);
        assert_eq!(excess, 5 * c + 5);
    }
}

#[test]
fn paranormal_gap_closes_when_a_respects_the_splitting() {
    // A = Q = K = I maps ℱ → ℱ and 𝒢 → 𝒢: E₂ = 1, a₂ = 0, r₂ = 1 ≤ C e^t, nothing refuted
    let i = "[[\"1\", \"0\"], [\"0\", \"1\"]]";
    let half = "[[\"1\", \"1/2\"], [\"1/2\", \"1\"]]";
    let text = edited(
        GAP,
        &[
            (&format!("q = {half}"), &format!("q = {i}")),
            (&format!("k = {half}"), &format!("k = {i}")),
            (&format!("a = {half}"), &format!("a = {i}")),
            ("expect_a2 = \"1/4\"", "expect_a2 = \"0\""),
            ("expect_cross = \"5/4\"", "expect_cross = \"1\""),
        ],
    );
    let run = run_text(GAP, &text, Profile::Quick);
    assert_eq!(verdict(&run), Verdict::Certified);
    assert!(!run.report.as_expected);
}

#[test]
fn paranormal_gap_wrong_reference_is_a_certified_failure() {
    let text = edited(GAP, &[("expect_a2 = \"1/4\"", "expect_a2 = \"1/2\"")]);
    let run = run_text(GAP, &text, Profile::Quick);
    assert_eq!(
        check(&run, "a₂ = ⟨π_ℱ(A z₁), π_ℱ(A(z₂ − z₁))⟩ = 1/2"),
        Certainty::False
    );
}

#[test]
fn paranormal_gap_bad_specs_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        // A not positive definite
        (
            "a = [[\"1\", \"1/2\"], [\"1/2\", \"1\"]]",
            "a = [[\"1\", \"2\"], [\"2\", \"1\"]]",
            "params.a",
        ),
        // A² ≠ QᵀK
        (
            "a = [[\"1\", \"1/2\"], [\"1/2\", \"1\"]]",
            "a = [[\"1\", \"0\"], [\"0\", \"1\"]]",
            "params.a",
        ),
        // ρ(V|_𝒢) = λ
        (
            "v = { diag = [\"1\", \"0\"] }",
            "v = { diag = [\"1\", \"-1\"] }",
            "params.v",
        ),
        // ℱ not invariant
        (
            "v = { diag = [\"1\", \"0\"] }",
            "v = [[\"1\", \"0\"], [\"1\", \"0\"]]",
            "params.v[1][0]",
        ),
        // not stationary
        (
            "tokens = [[\"0\", \"1\"], [\"0\", \"2\"]]",
            "tokens = [[\"0\", \"1\"], [\"1\", \"2\"]]",
            "params.tokens",
        ),
        // C ≤ 0
        (
            "c_values = [\"1\", \"10^6\", \"10^30\"]",
            "c_values = [\"1\", \"0\", \"10^30\"]",
            "params.c_values[1]",
        ),
    ];
    for (from, to, field) in cases {
        let text = edited(GAP, &[(from, to)]);
        let e = prepare_err(GAP, &text);
        let line = line_of(&text, to);
        assert!(
            e.contains(&format!("paranormal-proof-gap.toml:{line}")) && e.contains(field),
            "{to}: {e}"
        );
    }
    // λ₂ non-integer: e^{tV} would not be exact at e^t = s
    let text = edited(
        GAP,
        &[(
            "v = { diag = [\"1\", \"0\"] }",
            "v = { diag = [\"1\", \"-1/2\"] }",
        )],
    );
    let e = prepare_err(GAP, &text);
    assert!(e.contains("params.v") && e.contains("integer"), "{e}");
}

// ----- clusters/higher-dim-remark -----------------------------------------------

#[test]
fn remark_committed_spec_is_refuted_and_every_observation_holds() {
    let run = run_quick(REMARK);
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert!(run.report.as_expected);
    for c in &run.report.checks {
        let expect = if c.name.starts_with("single cluster") {
            Certainty::False
        } else {
            Certainty::True
        };
        assert_eq!(c.result, expect, "{}: {}", c.name, c.detail);
        if c.name.starts_with("single cluster") {
            assert_eq!(c.kind, CheckKind::Certified);
        }
    }
    let singles = run
        .report
        .checks
        .iter()
        .filter(|c| c.name.starts_with("single cluster"))
        .count();
    assert_eq!(singles, 3);
    // supported needs two step sizes and two precisions to agree
    assert!(check(&run, "step h = ").is_true());
    assert!(check(&run, "precision ").is_true());
}

#[test]
fn remark_lower_bound_and_p12_bound_section4() {
    // L(ε) = ε e^{−1/(2ε²)} (clusters.md §4: 0.0677, 1.16e−3, 1.93e−23)
    for (e, l) in [("0.5", "0.0677"), ("0.3", "1.16e-3"), ("0.1", "1.93e-23")] {
        let enc = lower_bound(&q(e), 128);
        let hu = half_unit(l).unwrap();
        let lo = Rational::from(&q(l) - &hu);
        let hi = Rational::from(&q(l) + &hu);
        assert!(
            *enc.lo() >= lo && *enc.hi() <= hi,
            "ε = {e}: {}",
            enc.fmt_outward(10)
        );
        assert!(enc.lo().is_sign_positive() && !enc.lo().is_zero());
    }
    assert_eq!(half_unit("0.0677"), Some(q("5e-5")));
    assert_eq!(half_unit("1.16e-3"), Some(q("5e-6")));
    assert_eq!(half_unit("x"), None);
    let run = run_quick(REMARK);
    // 2L(0.1) = 3.8574997e−23; P₁₂(60) ≤ 10^−X with X = 2L²e^{120}/ln 10 = 4214091.34…
    let sep = figure(
        &run,
        "certified separation 2L(ε) of the two limits at ε = 0.1",
    );
    assert!((sep / 3.8574997e-23 - 1.0).abs() < 1e-7, "{sep}");
    let x = figure(&run, "P₁₂(60) ≤ 10^−X at ε = 0.1: certified X");
    assert!((x - 4214091.34).abs() < 0.01, "{x}");
}

#[test]
fn remark_quadrature_reproduces_section4_limits() {
    // clusters.md §4, rel 1e−9
    for (e, c) in [
        ("0.5", "0.187376767909"),
        ("0.3", "5.21195036056e-3"),
        ("0.1", "2.56586542482e-22"),
    ] {
        for prec in [128, 192] {
            let (cq, di, tail) = c_quadrature(&q(e), prec);
            let r = Float::with_val(prec, &q(c));
            let rel = Float::with_val(prec, &cq - &r).abs() / r;
            assert!(rel < 1e-9, "ε = {e}, {prec} bits: C = {cq}, rel {rel}");
            assert!(
                di < 1e-30 && tail < 1e-30,
                "ε = {e}: ΔI = {di}, tail = {tail}"
            );
        }
    }
    let run = run_quick(REMARK);
    let c = figure(&run, "C(ε) at ε = 0.1 (quadrature)");
    assert!((c / 2.56586542482e-22 - 1.0).abs() < 1e-9, "{c}");
}

#[test]
fn remark_flow_reproduces_section4_trajectory() {
    let run = run_quick(REMARK);
    let table = "Trajectory at ε = 0.1";
    // clusters.md §4, rel 1e−6 (P₁₂ printed to 6–8 digits)
    for (t, b, c, p) in [
        ("10", 0.11180282, 5.07584e-6, 0.49375039),
        ("40", 0.22353237, 9.4964468e-19, 0.47503741),
        ("49", 0.68185087, 3.5748661e-22, 0.28295693),
        ("50", 1.338831, 2.5822701e-22, 0.026989763),
        ("51", 3.6162001, 2.5658654e-22, 4.3807286e-12),
        ("52", 9.829851, 2.5658654e-22, 1.179638e-84),
    ] {
        for (col, want) in [("b(t)", b), ("e^{−t}b(t)", c), ("P₁₂(t)", p)] {
            let got: f64 = cell(&run, table, t, col).parse().unwrap();
            assert!(
                (got / want - 1.0).abs() < 1e-6,
                "t = {t}, {col}: {got} vs {want}"
            );
        }
    }
    // t = 55: b = 197.43783, P₁₂ = 8.4499486e−33860 (below f64: compare log₁₀)
    let b: f64 = cell(&run, table, "55", "b(t)").parse().unwrap();
    assert!((b / 197.43783 - 1.0).abs() < 1e-6, "{b}");
    let lp = figure(&run, "log₁₀ P₁₂(55) at ε = 0.1 (flow, 240 bits)");
    let want = 8.4499486f64.log10() - 33860.0;
    assert!(
        (lp - want).abs() < 1e-6 / std::f64::consts::LN_10,
        "{lp} vs {want}"
    );
    assert!(cell(&run, table, "55", "P₁₂(t)").ends_with("e-33860"));
}

#[test]
fn remark_53_bit_demonstration_sees_one_cluster() {
    let run = run_quick(REMARK);
    let t = "Demonstration";
    // after the logits tie, P₁₂ = 1/2 exactly at 53 bits, while 240 bits resolve them
    assert_eq!(cell(&run, t, "20", "P₁₂ (53 bits)"), "0.5");
    assert_eq!(cell(&run, t, "60", "P₁₂ (53 bits)"), "0.5");
    assert!(cell(&run, t, "20", "P₁₂ (240 bits)").starts_with("0.49166"));
    let lo: f64 = cell(&run, t, "60", "z₁ second coordinate (53 bits)")
        .parse()
        .unwrap();
    let hi: f64 = cell(&run, t, "60", "z₁ second coordinate (240 bits)")
        .parse()
        .unwrap();
    assert!(lo < 1e-26, "{lo}");
    assert!((hi / 2.5658654e-22 - 1.0).abs() < 1e-6, "{hi}");
    assert_eq!(run.svgs.len(), 1);
    assert!(run.svgs[0].1.contains("<svg"));
}

/// The committed spec cut down to one reference row at t = 10 and t_end = 10, so
/// that an edited run is fast; `edits` are applied to the full text first.
fn short_remark(edits: &[(&str, &str)]) -> String {
    let text = edited(REMARK, edits);
    let head = text
        .split("# clusters.md §4, trajectory")
        .next()
        .unwrap()
        .to_string();
    let head = head.replacen("t_end = \"60\"", "t_end = \"10\"", 1);
    let head = head.replacen("bound_t = \"60\"", "bound_t = \"10\"", 1);
    let row = text
        .split("[[params.reference]]")
        .nth(1)
        .unwrap()
        .trim_end()
        .to_string();
    format!("{head}[[params.reference]]{row}\n")
}

/// The run of the unedited short spec, `short_remark(&[])`: two tests start from it,
/// and the run is deterministic, so it is computed once (about 7 CPU-s) and shared.
fn short_remark_run() -> &'static ClaimRun {
    static RUN: std::sync::OnceLock<ClaimRun> = std::sync::OnceLock::new();
    RUN.get_or_init(|| run_text(REMARK, &short_remark(&[]), Profile::Quick))
}

#[test]
fn remark_corrupted_references_fail_their_observations() {
    // the shortened spec passes everything but the literal claim
    let run = short_remark_run();
    assert_eq!(verdict(run), Verdict::Refuted);
    assert!(check(run, "t = 10:").is_true());
    assert!(check(run, "C(0.5) by quadrature").is_true());
    // C(0.5) off by 5e−9 relative (tolerance 1e−9)
    let run = run_text(
        REMARK,
        &short_remark(&[("c = \"0.187376767909\"", "c = \"0.187376768909\"")]),
        Profile::Quick,
    );
    assert_eq!(check(&run, "C(0.5) by quadrature"), Certainty::False);
    assert!(check(&run, "C(0.3) by quadrature").is_true());
    // P₁₂(10) off by 2e−6 relative (tolerance 1e−6)
    let run = run_text(
        REMARK,
        &short_remark(&[("p12 = \"0.49375039\"", "p12 = \"0.49375139\"")]),
        Profile::Quick,
    );
    assert_eq!(check(&run, "t = 10:"), Certainty::False);
    // a wrong printed digit of L(ε) is a certified failure
    let run = run_text(
        REMARK,
        &short_remark(&[("lower = \"0.0677\"", "lower = \"0.0678\"")]),
        Profile::Quick,
    );
    assert_eq!(check(&run, "L(0.5) = 0.0678"), Certainty::False);
}

#[test]
fn remark_bad_specs_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "precisions = [240, 320]",
            "precisions = [200, 320]",
            "params.precisions[0]",
        ),
        (
            "precisions = [240, 320]",
            "precisions = [240, 240]",
            "params.precisions[1]",
        ),
        (
            "precisions = [240, 320]",
            "precisions = [240]",
            "params.precisions",
        ),
        (
            "steps = [\"1/2000\", \"1/3000\"]",
            "steps = [\"7/1000\", \"1/3000\"]",
            "params.steps[0]",
        ),
        (
            "steps = [\"1/2000\", \"1/3000\"]",
            "steps = [\"1/2000\"]",
            "params.steps",
        ),
        ("eps = \"0.1\"\nt_end", "eps = \"0\"\nt_end", "params.eps"),
        ("rel_tol = \"1e-6\"", "rel_tol = \"2\"", "params.rel_tol"),
        (
            "demo_precision = 53",
            "demo_precision = 300",
            "params.demo_precision",
        ),
        ("t = \"48\"", "t = \"48.0001\"", "params.reference[3].t"),
        (
            "lower = \"0.0677\"",
            "lower = \"e\"",
            "params.limits[0].lower",
        ),
    ];
    for (from, to, field) in cases {
        let text = edited(REMARK, &[(from, to)]);
        let e = prepare_err(REMARK, &text);
        let line = line_of(&text, to.split('\n').next().unwrap());
        assert!(
            e.contains(&format!("higher-dim-remark.toml:{line}")) && e.contains(field),
            "{to}: {e}"
        );
    }
}

// ----- certificates: verify accepts them, tampering is rejected -------------------

/// Writes a run's certificate to a scratch directory and returns (dir, path).
pub fn write_cert(run: &ClaimRun) -> (tempfile::TempDir, std::path::PathBuf) {
    let (name, json) = run
        .certificate
        .as_ref()
        .expect("the run writes a certificate");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, json).unwrap();
    (dir, path)
}

/// `verify` (with the committed specs) accepts the run's certificate and re-derives
/// the run's result; each tampered copy is rejected (`app::Error::Rejected`): a
/// formula replaced by `(<= 0 1)`, an obligation deleted, the text `bound.0`
/// replaced by `bound.1` (a bound changed), an expectation flipped, and a hint or a
/// datum changed when the certificate has one.
pub fn certificate_verifies_and_tampering_is_rejected(run: &ClaimRun, bound: (&str, &str)) {
    let theorems = crate::util::root().join("theorems");
    let (dir, path) = write_cert(run);
    let v = app::verify_file(&path, Some(&theorems)).unwrap_or_else(|e| panic!("{e}"));
    assert!(v.checked.as_expected(), "{}", run.report.id);
    assert_eq!(
        v.checked.decisions().len(),
        run.report
            .checks
            .iter()
            .filter(
                |c| c.kind == CheckKind::Certified && c.detail.starts_with("statement obligation")
            )
            .count()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let n = json["obligations"].as_array().unwrap().len();
    let mut tampered: Vec<(&str, String)> = Vec::new();
    for k in [0, n - 1] {
        let mut t = json.clone();
        t["obligations"][k]["formula"] = serde_json::Value::String("(<= 0 1)".into());
        tampered.push(("formula replaced by (<= 0 1)", t.to_string()));
        let mut t = json.clone();
        t["obligations"].as_array_mut().unwrap().remove(k);
        tampered.push(("one obligation deleted", t.to_string()));
        let mut t = json.clone();
        let e = &mut t["obligations"][k]["expect"];
        *e = serde_json::Value::String(if e == "holds" { "fails" } else { "holds" }.into());
        tampered.push(("expectation flipped", t.to_string()));
    }
    assert!(text.contains(bound.0), "`{}` in the certificate", bound.0);
    tampered.push(("a bound changed", text.replacen(bound.0, bound.1, 1)));
    if let Some(h) = json["hints"].as_object() {
        for key in h.keys() {
            let mut t = json.clone();
            // a different value (a row hint may already be "1")
            let new = if h[key] == "1" { "0" } else { "1" };
            t["hints"][key] = serde_json::Value::String(new.into());
            tampered.push(("a hint changed", t.to_string()));
        }
    }
    if let Some(d) = json["data"].as_object() {
        for key in d.keys() {
            let mut t = json.clone();
            t["data"].as_object_mut().unwrap().remove(key);
            tampered.push(("a datum removed", t.to_string()));
        }
    }
    for (i, (what, t)) in tampered.iter().enumerate() {
        let p = dir.path().join(format!("tampered-{i}.cert.json"));
        std::fs::write(&p, t).unwrap();
        match app::verify_file(&p, Some(&theorems)) {
            Err(app::Error::Rejected { .. }) => {}
            other => panic!("{}: {what}: {:?}", run.report.id, other.map(|v| v.checked)),
        }
    }
}

#[test]
fn paranormal_gap_certificate_verifies_and_tampering_is_rejected() {
    let run = run_quick(GAP);
    // the bound C = 10^6 of e:boundrj becomes 10^5
    certificate_verifies_and_tampering_is_rejected(&run, ("(* 1000000 (pow", "(* 100000 (pow"));
}

/// Through the binary: a certificate whose formula is replaced by `(<= 0 1)` exits 4.
#[test]
fn paranormal_gap_verify_binary_rejects_a_vacuous_formula() {
    let run = run_quick(GAP);
    let (_dir, path) = write_cert(&run);
    let theorems = crate::util::root().join("theorems");
    let verify = |p: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_attncheck"))
            .args([
                "verify",
                p.to_str().unwrap(),
                "--theorems",
                theorems.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    let o = verify(&path);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json["obligations"][6]["formula"] = serde_json::Value::String("(<= 0 1)".into());
    std::fs::write(&path, json.to_string()).unwrap();
    let o = verify(&path);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Before the trust core, the `Certainty::exact` checks of paranormal-proof-gap were
/// bools minted as certified in claim code; now each is an exact obligation of the
/// statement, and the certificate carries all of them (not only the failures of
/// e:boundrj), so a changed reference is visible to `verify`.
#[test]
fn paranormal_gap_exact_checks_are_statement_obligations_not_minted_bools() {
    let run = run_quick(GAP);
    let (_dir, path) = write_cert(&run);
    let v = app::verify_file(&path, Some(&crate::util::root().join("theorems"))).unwrap();
    let names: Vec<&str> = v.checked.decisions().iter().map(|d| d.name()).collect();
    for c in &run.report.checks {
        assert!(
            names.contains(&c.name.as_str()),
            "{} is not an obligation",
            c.name
        );
    }
    assert_eq!(names.len(), 9);
    // a wrong a₂ reference in the spec gives a statement the old certificate does not carry
    let text = spec_text(GAP).replacen("expect_a2 = \"1/4\"", "expect_a2 = \"1/2\"", 1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("clusters")).unwrap();
    std::fs::write(dir.path().join("clusters/paranormal-proof-gap.toml"), text).unwrap();
    assert!(matches!(
        app::verify_file(&path, Some(dir.path())),
        Err(app::Error::Rejected { .. })
    ));
}

#[test]
fn remark_certificate_verifies_and_tampering_is_rejected() {
    let run = run_quick(REMARK);
    assert!(run.report.certificate.is_some());
    // T = 60 of the closed-form bound becomes 61
    certificate_verifies_and_tampering_is_rejected(&run, ("(exp (* 2 60))", "(exp (* 2 61))"));
}

/// The old verdict rule stopped at the first certified False, so a limit row with
/// wrong values (ε = 0.2 with wrong C and L) was disproven and the run still ended
/// "refuted (expected refuted)". Now only the obligations the spec names in
/// `refutes` may fail: the run is NOT as expected, and says which check broke it.
/// The checks of a run that do not come out as its spec expects.
fn unexpected_checks(run: &ClaimRun) -> Vec<String> {
    run.report
        .checks
        .iter()
        .filter(|c| !c.as_expected())
        .map(|c| c.name.clone())
        .collect()
}

#[test]
fn remark_wrong_limit_row_is_not_hidden_by_the_expected_refutation() {
    // the shortened spec (T = 10) is refuted exactly by its three named obligations
    let base_bad = unexpected_checks(short_remark_run());
    assert!(
        base_bad
            .iter()
            .all(|n| !n.starts_with("single cluster") && !n.starts_with("L(")),
        "{base_bad:?}"
    );
    let row =
        "lower = \"1.93e-23\"\n\n[[params.limits]]\neps = \"0.2\"\nc = \"1e-5\"\nlower = \"1e-5\"";
    let run = run_text(
        REMARK,
        &short_remark(&[("lower = \"1.93e-23\"", row)]),
        Profile::Quick,
    );
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert!(!run.report.as_expected);
    let why = run.report.unexpected().expect("a reason");
    assert!(why.contains("single cluster at ε = 0.2"), "{why}");
    // the wrong L and the wrong C are each caught by their own check
    assert_eq!(check(&run, "L(0.2) = 1e-5"), Certainty::False);
    assert_eq!(check(&run, "C(0.2) by quadrature"), Certainty::False);
    let new_bad: Vec<String> = unexpected_checks(&run)
        .into_iter()
        .filter(|n| !base_bad.contains(n))
        .collect();
    for needle in [
        "single cluster at ε = 0.2",
        "L(0.2) = 1e-5",
        "C(0.2) by quadrature",
    ] {
        assert!(
            new_bad.iter().any(|n| n.starts_with(needle)),
            "{needle}: {new_bad:?}"
        );
    }
    // naming the new refutation in `refutes` still leaves the wrong L(0.2) unexpected
    let text = short_remark(&[
        ("lower = \"1.93e-23\"", row),
        (
            "refutes = [\n",
            "refutes = [\n  \"single cluster at ε = 0.2: lim z₁ = lim z₂ (the remark's literal claim)\",\n",
        ),
    ]);
    let run = run_text(REMARK, &text, Profile::Quick);
    assert!(!run.report.as_expected);
    let why = run.report.unexpected().expect("a reason");
    assert!(why.contains("L(0.2) = 1e-5"), "{why}");
    assert!(!unexpected_checks(&run)
        .iter()
        .any(|n| n.starts_with("single cluster")));
}

/// Issue 14: the report printed the spec's note and a run note saying the same
/// thing ("Refuted: the remark's literal example …"). Each sentence now appears once.
#[test]
fn remark_notes_are_not_printed_twice() {
    let run = run_quick(REMARK);
    let notes = &run.report.notes;
    for (i, a) in notes.iter().enumerate() {
        for b in &notes[i + 1..] {
            for sentence in a.split(". ").filter(|x| x.len() > 30) {
                assert!(!b.contains(sentence), "twice: {sentence}");
            }
        }
    }
    assert_eq!(
        run.markdown
            .matches("is not tested by this example")
            .count(),
        1
    );
    assert_eq!(run.markdown.matches("cannot both hold").count(), 1);
}
