//! Issue 13, "Certified means proven": only the kernel mints `certified`, a
//! certificate proves its own claim and nothing else, `verify` is bounded, and
//! `--check` sees every check, figure and parameter. Each test is named after
//! what it broke.

use crate::util::root;
use crate::util::{output_text as text, run_in};
use attncheck::app;
use attncheck::certificate::{self, Certificate};
use attncheck::kernel::{expr, Certainty, Expect};
use attncheck::report::{self, Report};
use attncheck::verdict::{Check, CheckKind, Verdict};
use std::path::{Path, PathBuf};

/// Every certificate committed under reports/ (quick profile).
fn committed_certificates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for paper in ["clusters", "positional", "sparse"] {
        for f in std::fs::read_dir(root().join("reports").join(paper)).unwrap() {
            let p = f.unwrap().path();
            if p.to_string_lossy().ends_with(".cert.json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn theorems() -> PathBuf {
    root().join("theorems")
}

fn load(p: &Path) -> Certificate {
    certificate::parse(p, &std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Writes `c` next to a temp dir and verifies it against the committed specs.
fn verify_edited(c: &Certificate) -> Result<app::Verification, app::Error> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("edited.cert.json");
    std::fs::write(&p, serde_json::to_string_pretty(c).unwrap()).unwrap();
    app::verify_file(&p, Some(&theorems()))
}

fn assert_rejected(what: &str, c: &Certificate) {
    match verify_edited(c) {
        Err(app::Error::Rejected { reason, .. }) => assert!(!reason.is_empty()),
        Err(e) => panic!("{} ({what}): expected a rejection, got error {e}", c.claim),
        Ok(_) => panic!("{} ({what}): a tampered certificate was accepted", c.claim),
    }
}

#[test]
fn every_certified_or_refuted_claim_has_a_certificate_that_verify_rederives() {
    for paper in ["clusters", "positional", "sparse"] {
        for f in std::fs::read_dir(root().join("reports").join(paper)).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".json") || name.ends_with(".cert.json") {
                continue;
            }
            let r: Report = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            if !matches!(r.verdict, Verdict::Certified | Verdict::Refuted) {
                continue;
            }
            let cert = r
                .certificate
                .as_ref()
                .unwrap_or_else(|| panic!("{}: {} without a certificate", r.id, r.verdict));
            let v = app::verify_file(&p.with_file_name(cert), Some(&theorems()))
                .unwrap_or_else(|e| panic!("{}: {e}", r.id));
            assert!(v.checked.as_expected(), "{}: not as asserted", r.id);
            let refutes = v
                .checked
                .decisions()
                .iter()
                .any(|d| d.expect() == Expect::Fails);
            let derived = if refutes {
                Verdict::Refuted
            } else {
                Verdict::Certified
            };
            if r.verdict == Verdict::Certified {
                assert_eq!(derived, Verdict::Certified, "{}", r.id);
                // a certified claim's every certified check is in its statement
                let names: Vec<&str> = v.checked.decisions().iter().map(|d| d.name()).collect();
                for c in r.checks.iter().filter(|c| c.kind == CheckKind::Certified) {
                    assert!(
                        names.contains(&c.name.as_str()),
                        "{}: certified check `{}` is not an obligation of its certificate",
                        r.id,
                        c.name
                    );
                }
            } else {
                assert_eq!(derived, Verdict::Refuted, "{}", r.id);
            }
        }
    }
}

#[test]
fn verify_no_longer_accepts_tautologies_deletions_foreign_ids_rotations_or_weakening() {
    let certs = committed_certificates();
    assert!(!certs.is_empty());
    let ids: Vec<String> = attncheck::claims::REGISTRY
        .iter()
        .map(|c| c.id.to_string())
        .collect();
    for p in certs {
        let c = load(&p);
        // the committed certificate itself is accepted
        let v = app::verify_file(&p, Some(&theorems())).unwrap_or_else(|e| panic!("{e}"));
        assert!(v.checked.as_expected(), "{}", c.claim);

        let mut t = c.clone();
        t.obligations
            .iter_mut()
            .for_each(|o| o.formula = "(<= 0 1)".into());
        assert_rejected("every formula replaced by (<= 0 1)", &t);

        if c.obligations.len() >= 2 {
            let mut t = c.clone();
            t.obligations.pop();
            assert_rejected("last obligation deleted", &t);
        }

        let mut t = c.clone();
        t.claim = ids.iter().find(|i| **i != c.claim).unwrap().clone();
        assert_rejected("claim id changed to another claim", &t);

        let mut t = c.clone();
        t.claim = "positional/no-such-claim".into();
        assert_rejected("claim id changed to an unknown one", &t);

        if c.obligations.len() >= 2 {
            let mut t = c.clone();
            let first = t.obligations[0].name.clone();
            let n = t.obligations.len();
            for i in 0..n - 1 {
                t.obligations[i].name = t.obligations[i + 1].name.clone();
            }
            t.obligations[n - 1].name = first;
            assert_rejected("names rotated against formulas", &t);
        }

        if let Some(i) = c.obligations.iter().position(|o| o.formula.contains("(= ")) {
            let mut t = c.clone();
            t.obligations[i].formula = t.obligations[i].formula.replacen("(= ", "(<= ", 1);
            assert_rejected("= weakened to <=", &t);
        }

        let mut t = c.clone();
        t.obligations[0].expect = match t.obligations[0].expect {
            Expect::Holds => Expect::Fails,
            Expect::Fails => Expect::Holds,
        };
        assert_rejected("expectation flipped", &t);

        if let Some((k, _)) = c.data.iter().next() {
            let mut t = c.clone();
            t.data.remove(&k.clone());
            assert_rejected("a datum deleted", &t);
        }
    }
}

#[test]
fn verify_rejects_a_reversed_forall_range_even_without_the_spec() {
    // (forall k 1 5 f) reversed to (forall k 5 1 f) used to be vacuously true
    assert!(expr::check("(forall k 5 1 (< k 0))", 64).is_err());
    assert!(expr::check("(= (sum k 3 1 k) 0)", 64).is_err());
    assert_eq!(
        expr::check("(forall k 1 5 (> k 0))", 64),
        Ok(Certainty::True)
    );
}

fn no_spec_certificate(dir: &Path, formula: &str) -> PathBuf {
    let c = serde_json::json!({
        "format": certificate::FORMAT, "claim": "positional/alibi-window", "profile": "quick",
        "precision": 64, "obligations": [{"name": "x", "formula": formula, "expect": "holds"}]
    });
    let p = dir.join("c.cert.json");
    std::fs::write(&p, c.to_string()).unwrap();
    p
}

#[test]
fn verify_does_not_overflow_the_stack_on_7000_nested_negs() {
    let dir = tempfile::tempdir().unwrap();
    let f = format!("(< {}1{} 2)", "(neg ".repeat(7000), ")".repeat(7000));
    let p = no_spec_certificate(dir.path(), &f);
    let o = run_in(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("nested deeper"), "{}", text(&o));
}

#[test]
fn verify_does_not_hang_on_nested_ranges_whose_product_is_huge() {
    let dir = tempfile::tempdir().unwrap();
    let p = no_spec_certificate(
        dir.path(),
        "(forall a 1 50000000 (forall b 1 50000000 (< a (+ b 1))))",
    );
    let t = std::time::Instant::now();
    let o = run_in(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("limit"), "{}", text(&o));
    assert!(t.elapsed().as_secs() < 60, "refused before evaluating");
}

#[test]
fn verify_without_a_spec_says_plainly_that_the_statement_was_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let p = no_spec_certificate(dir.path(), "(<= 0 1)");
    let o = run_in(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("STATEMENT NOT CHECKED"), "{}", text(&o));
    // with the spec, the same file is rejected (exit 4): it is not alibi-window's statement
    let th = root().join("theorems");
    let o = run_in(
        dir.path(),
        &[
            "verify",
            "--theorems",
            th.to_str().unwrap(),
            p.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("rejected"), "{}", text(&o));
}

#[test]
fn verify_tells_disproven_from_undecided_by_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let p = no_spec_certificate(dir.path(), "(< 1 0)");
    let o = run_in(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let p = no_spec_certificate(dir.path(), "(< (sin pi) 0)");
    let o = run_in(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

#[test]
fn verify_rejects_an_old_format_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.cert.json");
    std::fs::write(
        &p,
        r#"{"format": "attncheck-certificate/1", "claim": "x/y", "precision": 64, "obligations": []}"#,
    )
    .unwrap();
    let o = run_in(dir.path(), &["verify", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("attncheck-certificate/6"), "{}", text(&o));
}

/// A committed certificate rewritten to claim format `old`: refused whatever it carries,
/// by `verify`, `verify --no-spec` and `verify --coq` alike (exit 2, the expected version
/// named), so that no reader of an older version meets an operator it does not know
/// inside a file that claims its version.
fn an_old_version_is_refused(old: &str) {
    let dir = tempfile::tempdir().unwrap();
    let body =
        std::fs::read_to_string(crate::util::root().join("reports/clusters/collapse.cert.json"))
            .unwrap()
            .replace(certificate::FORMAT, old);
    assert!(body.contains(old));
    let p = dir.path().join("collapse.cert.json");
    std::fs::write(&p, body).unwrap();
    for args in [
        &["verify"][..],
        &["verify", "--no-spec"],
        &["verify", "--coq"],
    ] {
        let mut a = args.to_vec();
        a.push(p.to_str().unwrap());
        let o = run_in(dir.path(), &a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("attncheck-certificate/6"),
            "{args:?}: {}",
            text(&o)
        );
    }
}

/// Format 4 added `layer-partition` (issue #24).
#[test]
fn a_version_3_certificate_is_refused_after_the_bump_to_4() {
    an_old_version_is_refused("attncheck-certificate/3");
}

/// Format 5 added `let` and the building blocks (issue #26).
#[test]
fn a_version_4_certificate_is_refused_after_the_bump_to_5() {
    an_old_version_is_refused("attncheck-certificate/4");
}

/// Format 6 added `attn-byte-logit-range`, `attn-row-logit-range` and the weights'
/// embedding (issue #40).
#[test]
fn a_version_5_certificate_is_refused_after_the_bump_to_6() {
    an_old_version_is_refused("attncheck-certificate/5");
}

fn ck(kind: CheckKind, result: Certainty, expect: Expect) -> Check {
    Check {
        name: format!("{kind:?} {result:?} {expect:?}"),
        kind,
        result,
        detail: String::new(),
        part: None,
        expect,
    }
}

#[test]
fn consistency_readings_never_certify() {
    use Certainty::*;
    let checks = [
        ck(CheckKind::Certified, True, Expect::Holds),
        ck(CheckKind::Consistency, True, Expect::Holds),
    ];
    assert_eq!(Verdict::from_checks(&checks).0, Verdict::Supported);
    // nor refute (issue #38): a violated reading makes the run inconclusive, with the reason
    let checks = [ck(CheckKind::Consistency, False, Expect::Holds)];
    let (v, why) = Verdict::from_checks(&checks);
    assert_eq!(v, Verdict::Inconclusive);
    assert!(why.unwrap().contains("cannot refute"));
}

#[test]
fn an_expected_refutation_no_longer_hides_another_failure() {
    use Certainty::*;
    // the named refutation came out false as expected, but another certified check is false too
    let checks = [
        ck(CheckKind::Certified, False, Expect::Fails),
        ck(CheckKind::Certified, False, Expect::Holds),
    ];
    let (v, _) = Verdict::from_checks(&checks);
    assert_eq!(v, Verdict::Refuted);
    let e = report::expectation(Verdict::Refuted, v, &checks)
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected to hold"), "{e}");
    // exactly the named one disproven: as expected
    let checks = [
        ck(CheckKind::Certified, False, Expect::Fails),
        ck(CheckKind::Certified, True, Expect::Holds),
    ];
    assert!(report::expectation(Verdict::Refuted, Verdict::Refuted, &checks).is_ok());
    // the named one holds: not as expected even if another check refutes
    let checks = [
        ck(CheckKind::Certified, True, Expect::Fails),
        ck(CheckKind::Certified, False, Expect::Holds),
    ];
    assert!(report::expectation(Verdict::Refuted, Verdict::Refuted, &checks).is_err());
}

#[test]
fn a_refuted_spec_must_name_what_it_refutes() {
    let text = crate::util::spec_text("clusters/paranormal-proof-gap");
    let start = text.find("refutes = [").expect("refutes");
    let end = start + text[start..].find(']').expect("]") + 1;
    let stripped = format!("{}{}", &text[..start], &text[end..]);
    let e = attncheck::spec::Spec::parse(Path::new("x.toml"), &stripped).unwrap_err();
    assert!(e.to_string().contains("refutes"), "{e}");
}

// ---------- --check sees everything ----------

/// A scratch project with alibi-slopes' spec and its freshly written reports.
fn checked_scratch() -> tempfile::TempDir {
    let dir = crate::util::project(&["positional/alibi-slopes"]);
    let o = run_in(dir.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = run_in(dir.path(), &["run", "--all", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    dir
}

fn edit_report(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = dir.join("reports/positional/alibi-slopes.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

fn edit_spec(dir: &Path, from: &str, to: &str) {
    let p = dir.join("theorems/positional/alibi-slopes.toml");
    let t = std::fs::read_to_string(&p).unwrap();
    assert_eq!(t.matches(from).count(), 1, "{from}");
    std::fs::write(&p, t.replacen(from, to, 1)).unwrap();
}

fn check_output(dir: &Path) -> (Option<i32>, String) {
    let o = run_in(dir, &["run", "--all", "--check"]);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn check_reports_a_loosened_tolerance_by_name() {
    let d = checked_scratch();
    edit_spec(
        d.path(),
        "f64_rel_tol = \"1e-14\"",
        "f64_rel_tol = \"1e-13\"",
    );
    let (code, out) = check_output(d.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("params.f64_rel_tol loosened from \"1e-14\" to \"1e-13\""),
        "{out}"
    );
    let d = checked_scratch();
    edit_spec(d.path(), "check_tolerance = 0.0", "check_tolerance = 0.5");
    let (code, out) = check_output(d.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("check_tolerance loosened"), "{out}");
}

#[test]
fn check_reports_changed_parameters() {
    let d = checked_scratch();
    edit_spec(
        d.path(),
        "heads = [1, 2, 4, 8, 16, 32, 3, 6, 12, 24]",
        "heads = [1, 2, 4, 8, 16, 3, 6, 12, 24, 32]",
    );
    let (code, out) = check_output(d.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("params.heads"), "{out}");
}

#[test]
fn check_reports_a_missing_key_figure_altered_evidence_and_a_changed_check() {
    let d = checked_scratch();
    edit_report(d.path(), |v| {
        v["figures"].as_array_mut().unwrap().push(serde_json::json!(
            {"name": "gone", "value": 1.0, "text": "1"}));
        v["checks"][0]["detail"] = serde_json::json!("altered evidence");
        v["checks"][1]["result"] = serde_json::json!("unknown");
    });
    let (code, out) = check_output(d.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("key figure `gone` disappeared"), "{out}");
    assert!(out.contains("evidence changed"), "{out}");
    assert!(
        out.contains("changed from certified Unknown to certified True"),
        "{out}"
    );
}

#[test]
fn check_prints_a_small_relative_move_with_the_digits_that_show_it() {
    let d = checked_scratch();
    edit_report(d.path(), |v| {
        let f = &mut v["figures"][0]["value"];
        let x = f.as_f64().unwrap();
        *f = serde_json::json!(x * (1.0 + 1e-8));
    });
    let (code, out) = check_output(d.path());
    assert_eq!(code, Some(1), "{out}");
    let line = out.lines().find(|l| l.contains("moved from")).unwrap();
    let nums: Vec<&str> = line.split(['`', ' ']).filter(|w| w.contains('.')).collect();
    assert!(nums.len() >= 2 && nums[0] != nums[1], "{line}");
}

#[test]
fn check_on_a_corrupt_baseline_is_an_error_not_a_missing_report() {
    let d = checked_scratch();
    std::fs::write(
        d.path().join("reports/positional/alibi-slopes.json"),
        "{ not json",
    )
    .unwrap();
    let o = run_in(d.path(), &["run", "--all", "--check"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("not a valid attncheck report"),
        "{}",
        text(&o)
    );
}

#[test]
fn check_with_a_wrong_out_is_a_usage_error_before_anything_runs() {
    let d = checked_scratch();
    let t = std::time::Instant::now();
    let o = run_in(d.path(), &["run", "--all", "--check", "--out", "nowhere"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("holds none"), "{}", text(&o));
    assert!(t.elapsed().as_secs() < 30);
}

/// The trust-base sentence named only src/kernel, although the `layer` datum of
/// growth-bound and stability was iterated by src/dynamics (layer_data.rs, DiscreteMap).
/// Since the kernel became crates/attncheck-kernel, the layer map is the kernel's: the
/// sentence names the crate, and no path outside it.
#[test]
fn trust_base_names_the_layer_evaluator_outside_the_kernel() {
    for id in [
        "clusters/growth-bound",
        "clusters/stability",
        "positional/alibi-window",
    ] {
        let run = crate::util::run_quick(id);
        let t = run.report.trust.as_ref().expect("certificate");
        assert!(
            t.rests_on.contains("crates/attncheck-kernel"),
            "{id}: {}",
            t.rests_on
        );
        assert!(
            !t.rests_on.contains("src/kernel") && !t.rests_on.contains("src/dynamics"),
            "{id}: {}",
            t.rests_on
        );
    }
}

/// Every JSON report under reports/ (reports/full/ included), with the path of its
/// certificate beside it when there is one.
fn committed_reports() -> Vec<(PathBuf, Option<PathBuf>)> {
    crate::util::files_under(&root().join("reports"), ".json")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".cert.json"))
        .map(|p| {
            let cert = p.with_extension("cert.json");
            let cert = cert.exists().then_some(cert);
            (p, cert)
        })
        .collect()
}

/// Issue #24 (bug: 19 certified checks of clusters/boolean-limit, hyperplanes and
/// collapse were per-step tallies that no certificate carried): in every committed
/// report, the certified checks are exactly the obligations of its certificate, and a
/// report without a certificate has none.
#[test]
fn every_committed_report_certifies_exactly_its_certificates_obligations() {
    let reports = committed_reports();
    assert!(reports.len() >= 30, "only {} reports found", reports.len());
    let full = reports
        .iter()
        .filter(|(p, _)| p.components().any(|c| c.as_os_str() == "full"))
        .count();
    assert!(full >= 1, "reports/full/ was not walked");
    let mut with_cert = 0;
    for (path, cert) in &reports {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let Some(checks) = r["checks"].as_array() else {
            continue;
        };
        let mut certified: Vec<String> = checks
            .iter()
            .filter(|c| c["kind"] == "certified")
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
        let mut obligations: Vec<String> = match cert {
            Some(c) => {
                with_cert += 1;
                load(c).obligations.into_iter().map(|o| o.name).collect()
            }
            None => Vec::new(),
        };
        certified.sort();
        obligations.sort();
        let extra: Vec<_> = certified
            .iter()
            .filter(|n| !obligations.contains(n))
            .collect();
        let missing: Vec<_> = obligations
            .iter()
            .filter(|n| !certified.contains(n))
            .collect();
        assert!(
            certified == obligations,
            "{}: certified checks outside the certificate {extra:?}; obligations without a certified check {missing:?}",
            path.display()
        );
    }
    assert!(
        with_cert >= 15,
        "only {with_cert} reports with a certificate"
    );
}

/// The runtime border behind the walk above: an outcome whose certified checks are
/// not exactly its certificate's obligations is inconclusive, with the reason, and is
/// never certified or refuted on them.
#[test]
fn a_certified_check_outside_the_certificate_makes_the_run_inconclusive() {
    use attncheck::kernel::{check, Statement};
    use attncheck::outcome::Outcome;
    let mut st = Statement::new("test/border");
    st.assert("one is less than two", "(< 1 2)");
    st.assert("two is less than one", "(< 2 1)");
    let checked = check(&st, 64).unwrap();
    let mut o = Outcome::new();
    o.checks.prove(&checked);
    // no certificate: both certified checks are outside it
    let (v, why) = o.verdict(Verdict::Certified, None);
    assert_eq!(v, Verdict::Inconclusive);
    assert!(
        why.as_deref()
            .unwrap()
            .contains("is not an obligation of the certificate"),
        "{why:?}"
    );
    let cert_of = |st: &Statement| {
        let quick = attncheck::kernel::certificate::Profile::Quick;
        Some(Certificate::of(st, quick, 64, &Default::default()))
    };
    // with the statement's certificate: refuted on the false obligation, as before
    o.certificate = cert_of(&st);
    assert_eq!(o.verdict(Verdict::Certified, None).0, Verdict::Refuted);
    // a certificate with an obligation that no certified check decides
    let mut st2 = st.clone();
    st2.assert("three is less than four", "(< 3 4)");
    o.certificate = cert_of(&st2);
    let (v, why) = o.verdict(Verdict::Certified, None);
    assert_eq!(v, Verdict::Inconclusive);
    assert!(
        why.as_deref().unwrap().contains("has no certified check"),
        "{why:?}"
    );
}

/// Issue #24: a per-step tally is recorded as an observation, which can make a claim
/// inconclusive and never certify or refute it, whatever its margins say.
#[test]
fn a_per_step_tally_is_an_observation_that_never_certifies_or_refutes() {
    use attncheck::kernel::Interval;
    use attncheck::reading::StepTally;
    use attncheck::verdict::Checks;
    let mut proven = StepTally::default();
    proven.record(0, &Interval::from_rational(64, &rug::Rational::from(1)));
    let mut violated = StepTally::default();
    violated.record(0, &Interval::from_rational(64, &rug::Rational::from(-1)));
    let mut c = Checks::new();
    assert_eq!(c.observe_tally("proven", &proven), Certainty::True);
    assert_eq!(c.observe_tally("violated", &violated), Certainty::False);
    assert!(c.as_slice().iter().all(|k| k.kind == CheckKind::Observed));
    assert_eq!(
        Verdict::from_checks(&c.as_slice()[..1]).0,
        Verdict::Supported
    );
    assert_eq!(Verdict::from_checks(c.as_slice()).0, Verdict::Inconclusive);
}

/// The verdict rule, case by case (moved from src/verdict.rs's unit tests when the lib
/// stopped compiling a unit-test twin of itself).
#[test]
fn verdict_rules() {
    use Certainty::*;
    use CheckKind::*;
    let c = |kind, result| ck(kind, result, Expect::Holds);
    assert_eq!(Verdict::from_checks(&[]).0, Verdict::Inconclusive);
    assert_eq!(
        Verdict::from_checks(&[c(Certified, True)]).0,
        Verdict::Certified
    );
    assert_eq!(
        Verdict::from_checks(&[c(Certified, True), c(Observed, True)]).0,
        Verdict::Supported
    );
    assert_eq!(
        Verdict::from_checks(&[c(Certified, Unknown)]).0,
        Verdict::Inconclusive
    );
    assert_eq!(
        Verdict::from_checks(&[c(Observed, False), c(Certified, True)]).0,
        Verdict::Inconclusive
    );
    assert_eq!(
        Verdict::from_checks(&[c(Certified, False), c(Certified, Unknown)]).0,
        Verdict::Refuted
    );
    // a consistency reading never certifies, and its violation never refutes (issue #38)
    assert_eq!(
        Verdict::from_checks(&[c(Certified, True), c(Consistency, True)]).0,
        Verdict::Supported
    );
    assert_eq!(
        Verdict::from_checks(&[c(Consistency, False)]).0,
        Verdict::Inconclusive
    );
    assert_eq!(
        Verdict::from_checks(&[c(Consistency, False), c(Certified, True)]).0,
        Verdict::Inconclusive
    );
    // only a certified false refutes, whatever precedes it
    assert_eq!(
        Verdict::from_checks(&[
            c(Consistency, False),
            c(Observed, False),
            c(Certified, False)
        ])
        .0,
        Verdict::Refuted
    );
}

/// An outcome whose certified checks are its certificate's obligations, with one
/// obligation of each truth value as asked (`(< 1 2)` true, `(< 2 1)` false).
fn outcome_of(obligations: &[(&str, &str)]) -> attncheck::outcome::Outcome {
    use attncheck::kernel::{check, Statement};
    let mut st = Statement::new("test/road");
    for (name, f) in obligations {
        st.assert(*name, *f);
    }
    let checked = check(&st, 64).unwrap();
    let mut o = attncheck::outcome::Outcome::new();
    o.checks.prove(&checked);
    let quick = attncheck::kernel::certificate::Profile::Quick;
    o.certificate = Some(Certificate::of(&st, quick, 64, &Default::default()));
    o
}

/// Issue #38, the hostile fixture: a run whose consistency reading is violated (its own
/// enclosures are disjoint), beside certified obligations that hold, is not refuted:
/// no certificate carries the reading. It is inconclusive with the reading named.
#[test]
fn a_violated_consistency_reading_is_not_refuted_without_an_obligation() {
    use attncheck::kernel::Interval;
    use attncheck::reading::Agreement;
    let mut o = outcome_of(&[("one is less than two", "(< 1 2)")]);
    let (a, b) = (Interval::from_i64(64, 1), Interval::from_i64(64, 2));
    let reading = a.agreement(&b);
    assert!(reading.violated());
    let recorded = o
        .checks
        .consistency("the enclosures of 1 and 2 overlap", reading, "disjoint");
    assert!(!recorded);
    for rigour in [Verdict::Certified, Verdict::Supported] {
        let (v, why) = o.verdict(rigour, None);
        assert_eq!(v, Verdict::Inconclusive, "{why:?}");
        let why = why.unwrap();
        assert!(
            why.contains("the enclosures of 1 and 2 overlap") && why.contains("cannot refute"),
            "{why}"
        );
    }
    // the reading is in no certificate: the report has no counterexample that verify could re-check
    let cert = o.certificate.as_ref().unwrap();
    assert!(cert
        .obligations
        .iter()
        .all(|ob| ob.name != "the enclosures of 1 and 2 overlap"));
    // the same reading through a claim's `observe` (Observations) is no different
    let mut o = outcome_of(&[("one is less than two", "(< 1 2)")]);
    attncheck::outcome::Observations::new(&mut o).consistency("overlap", reading, "disjoint");
    assert_eq!(o.verdict(Verdict::Certified, None).0, Verdict::Inconclusive);
}

/// Issue #38: a verdict that a claim declares (inconclusive, not-checkable,
/// report-only) never masks a kernel refutation: the run is refuted, and the reason
/// names the counterexample and keeps the declaration. Never supported.
#[test]
fn a_declared_verdict_over_a_kernel_false_is_refuted_never_supported() {
    let obligations = [
        ("one is less than two", "(< 1 2)"),
        ("two is less than one", "(< 2 1)"),
    ];
    type Declare = fn(&mut attncheck::outcome::Outcome);
    let declarations: [(&str, Declare); 3] = [
        ("budget ran out", |o| {
            o.declare_inconclusive("budget ran out")
        }),
        ("no finite computation", |o| {
            o.declare_not_checkable("no finite computation")
        }),
        ("exploration", |o| o.declare_report_only("exploration")),
    ];
    for (said, declare) in declarations {
        for rigour in [Verdict::Certified, Verdict::Supported] {
            let mut o = outcome_of(&obligations);
            declare(&mut o);
            let (v, why) = o.verdict(rigour, None);
            assert_eq!(v, Verdict::Refuted, "declared «{said}»: {why:?}");
            let why = why.unwrap();
            assert!(
                why.contains("two is less than one") && why.contains(said),
                "{why}"
            );
        }
    }
    // a declaration over obligations that all hold stands
    let mut o = outcome_of(&obligations[..1]);
    o.declare_inconclusive("budget ran out");
    assert_eq!(
        o.verdict(Verdict::Certified, None),
        (Verdict::Inconclusive, Some("budget ran out".into()))
    );
    // an observed or consistency false never refutes, declared or not
    let mut o = outcome_of(&obligations[..1]);
    o.checks.observe("an observation", false, "off");
    o.declare_report_only("exploration");
    assert_eq!(o.verdict(Verdict::Certified, None).0, Verdict::ReportOnly);
}

/// Issue #38: in every committed report, each check of kind certified that came out
/// false is an obligation of its certificate that the spec expects to fail (`fails`,
/// named in `refutes`), and no report counts a consistency reading or an observation
/// as a counterexample: `refuted` has one road, the certificate's.
#[test]
fn every_committed_certified_false_is_a_fails_obligation_of_its_certificate() {
    let mut refuted = 0;
    for (path, cert) in committed_reports() {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let Some(checks) = r["checks"].as_array() else {
            continue;
        };
        let fails: Vec<String> = cert
            .as_ref()
            .map(|c| {
                load(c)
                    .obligations
                    .into_iter()
                    .filter(|o| o.expect == Expect::Fails)
                    .map(|o| o.name)
                    .collect()
            })
            .unwrap_or_default();
        for c in checks {
            if c["kind"] == "certified" && c["result"] == "false" {
                let name = c["name"].as_str().unwrap();
                assert!(
                    fails.iter().any(|f| f == name),
                    "{}: the certified false «{name}» is not a `fails` obligation of its certificate",
                    path.display()
                );
                refuted += 1;
            }
        }
        if r["verdict"] == "refuted" {
            assert!(
                checks
                    .iter()
                    .any(|c| c["kind"] == "certified" && c["result"] == "false"),
                "{}: refuted without a certified false",
                path.display()
            );
            let reason = r["reason"].as_str().unwrap_or_default();
            assert!(
                !reason.contains("consistency"),
                "{}: {reason}",
                path.display()
            );
        }
    }
    assert!(
        refuted >= 1,
        "no committed report carries a refutation: the walk proves nothing"
    );
}

/// Through the binary: `verify --no-spec` says undecided (exit 3), not proven (exit 0), for
/// ln 0 and ln of a negative number (issue 23; the kernel's own regressions
/// `ln_of_e_minus_e_*` in crates/attncheck-kernel/tests/conformance/domain.rs).
#[test]
fn verify_no_spec_does_not_certify_ln_of_zero_or_of_a_negative_number() {
    // e − e, and e − Q with Q = ⌊e·10⁵⁰⌋/10⁵⁰ + 10⁻⁴⁵ > e
    let ln_of_zero = "(< (ln (- (exp 1) (exp 1))) -80)";
    let ln_of_a_negative =
        "(< (ln (- (exp 1) 2.71828182845904523536028747135266249775724709469995)) -80)";
    let dir = tempfile::tempdir().unwrap();
    for f in [ln_of_zero, ln_of_a_negative] {
        let c = serde_json::json!({
            "format": certificate::FORMAT, "claim": "positional/alibi-window", "profile": "quick",
            "precision": 128, "obligations": [{"name": "ln edge", "formula": f, "expect": "holds"}]
        });
        let p = dir.path().join("c.cert.json");
        std::fs::write(&p, c.to_string()).unwrap();
        let o = run_in(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(3), "{f}: {}", text(&o));
    }
}
