//! The discrete-map engine (D) and the claims built directly on it:
//! clusters/growth-bound, clusters/stability, clusters/collapse, clusters/rescaling.

use crate::util::{run_edited, run_quick, verdict};
use attncheck::dynamics::discrete::{DiscreteMap, Form};
use attncheck::dynamics::model::{Mat, MatrixSpec, System};
use attncheck::dynamics::observe::{max_all, sq_norms, Invariant};
use attncheck::kernel::{Certainty, Interval};
use attncheck::verdict::{CheckKind, Verdict};
use proptest::prelude::*;
use rug::Rational;

fn q(s: &str) -> Rational {
    attncheck::kernel::parse_rational(s).unwrap()
}

fn random(seed: u64, rows: usize, cols: usize) -> Mat {
    MatrixSpec::Random {
        uniform: ["-1".into(), "1".into()],
        seed,
        grid_bits: None,
        rows: Some(rows),
    }
    .resolve("m", Some(rows), cols)
    .unwrap()
}

#[test]
fn random_dyadic_matrices_are_reproducible_and_on_the_grid() {
    let a = random(7, 4, 3);
    let b = random(7, 4, 3);
    assert_eq!(a, b);
    assert_ne!(a, random(8, 4, 3));
    for x in &a.data {
        assert!(*x >= -1 && *x <= 1);
        let scaled = Rational::from(x * (1u64 << 20));
        assert_eq!(*scaled.denom(), 1, "{x} is not a multiple of 2^-20");
    }
}

#[test]
fn matrix_spec_errors_name_the_entry() {
    let spec = MatrixSpec::Rows(vec![
        vec!["1".into(), "x".into()],
        vec!["0".into(), "1".into()],
    ]);
    let e = spec.resolve("v", Some(2), 2).unwrap_err();
    assert_eq!(e.field, "v[0][1]");
    let spec = MatrixSpec::Rows(vec![vec!["1".into()], vec!["0".into(), "1".into()]]);
    let e = spec.resolve("v", Some(2), 2).unwrap_err();
    assert_eq!(e.field, "v[0]");
    let e = MatrixSpec::Named("J".into())
        .resolve("q", None, 2)
        .unwrap_err();
    assert!(e.reason.contains("unknown matrix name"), "{}", e.reason);
    let e = MatrixSpec::Named("I".into())
        .resolve("v", Some(3), 2)
        .unwrap_err();
    assert!(e.reason.contains("3×2"), "{}", e.reason);
}

/// With Q = 0 every logit is 0, P = J/n exactly, and the layer is linear:
/// x_i^{k+1} = x_i^k + Δt V mean(x^k). The enclosures must contain the exact
/// rational iterates (Arb-style containment).
#[test]
#[allow(clippy::needless_range_loop)]
fn layer_with_uniform_attention_contains_the_exact_iterates() {
    let d = 2;
    let n = 4;
    let v = random(11, d, d);
    let sys = System::new(Mat::zeros(d, d), Mat::identity(d), v.clone());
    let x0 = random(12, n, d);
    let dt = q("1/8");
    let mut map = DiscreteMap::new(&sys, n, &dt, Form::Layer, 96).unwrap();
    let mut s = map.start(&x0);
    let mut exact = x0.clone();
    for _ in 0..20 {
        s = map.step(&s);
        let mut mean = vec![Rational::new(); d];
        for i in 0..n {
            for c in 0..d {
                mean[c] += exact.at(i, c);
            }
        }
        for m in &mut mean {
            *m /= n as u32;
        }
        let mut next = exact.clone();
        for i in 0..n {
            for r in 0..d {
                let mut acc = Rational::new();
                for c in 0..d {
                    acc += Rational::from(v.at(r, c) * &mean[c]);
                }
                next.data[i * d + r] += Rational::from(&dt * &acc);
            }
        }
        exact = next;
        for (e, iv) in exact.data.iter().zip(&s.x) {
            assert!(iv.contains_rational(e), "{e} not in {iv:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// The rescaled map and the layer agree: x^k ∈ R^k z^k enclosures overlap,
    /// for random systems and steps (the identity is exact).
    #[test]
    fn layer_and_rescaled_map_agree(seed in 0u64..1000, dt_den in 4u32..32) {
        let d = 2;
        let n = 3;
        let sys = System::new(random(seed, d, d), random(seed + 1, d, d), random(seed + 2, d, d));
        let dt = Rational::from((1, dt_den));
        prop_assume!(sys.r(&dt).inverse().is_some());
        let x0 = random(seed + 3, n, d);
        let mut a = DiscreteMap::new(&sys, n, &dt, Form::Layer, 256).unwrap();
        let mut b = DiscreteMap::new(&sys, n, &dt, Form::Rescaled, 256).unwrap();
        let (mut sa, mut sb) = (a.start(&x0), b.start(&x0));
        for _ in 0..10 {
            sa = a.step(&sa);
            sb = b.step(&sb);
            for (x, y) in sa.x.iter().zip(&sb.x) {
                prop_assert!(x.overlaps(y));
            }
        }
    }
}

/// A growth bound tightened below the truth is certifiably violated: the
/// invariant machinery can fail.
#[test]
fn a_too_tight_growth_bound_is_caught() {
    let d = 2;
    let sys = System::new(Mat::identity(d), Mat::identity(d), Mat::identity(d));
    let x0 = random(5, 6, d);
    let dt = q("1/10");
    let mut map = DiscreteMap::new(&sys, 6, &dt, Form::Layer, 128).unwrap();
    // True factor for V = I: M_{k+1} ≤ 1.1·M_k (tight when attention is concentrated);
    // assert M_{k+1}² ≤ 1.0·M_k² instead: false, since tokens spread.
    let mut inv = Invariant::new("M_(k+1) ≤ M_k", |v| {
        let b = max_all(&sq_norms(&v.before.x, v.n, v.d));
        let a = max_all(&sq_norms(&v.after.x, v.n, v.d));
        &b - &a
    });
    map.run(&x0, 20, |v| inv.check(v), |_| {});
    assert_eq!(inv.tally.certainty(), Certainty::False);
    assert!(inv.tally.first_violation().is_some());
    // …while the true bound is proven on every step.
    let g = Interval::from_rational(128, &q("121/100"));
    let mut ok = Invariant::new("M_(k+1)² ≤ 1.21 M_k²", |v| {
        let b = max_all(&sq_norms(&v.before.x, v.n, v.d));
        let a = max_all(&sq_norms(&v.after.x, v.n, v.d));
        &(&g * &b) - &a
    });
    map.run(&x0, 20, |v| ok.check(v), |_| {});
    assert_eq!(ok.tally.certainty(), Certainty::True);
}

#[test]
fn growth_bound_is_certified() {
    let r = run_quick("clusters/growth-bound");
    assert_eq!(verdict(&r), Verdict::Certified, "{:?}", r.report.reason);
    assert!(r.report.checks.len() >= 6);
}

#[test]
fn stability_is_certified() {
    let r = run_quick("clusters/stability");
    assert_eq!(verdict(&r), Verdict::Certified, "{:?}", r.report.reason);
}

#[test]
fn collapse_is_supported_and_fails_when_the_ratio_is_too_strict() {
    let r = run_quick("clusters/collapse");
    assert_eq!(verdict(&r), Verdict::Supported, "{:?}", r.report.reason);
    let worst = crate::util::figure(&r, "worst_ratio");
    assert!(worst > 0.45 && worst < 0.6, "{worst}");
    let strict = run_edited(
        "clusters/collapse",
        "ratio_bound = \"0.6\"",
        "ratio_bound = \"0.4\"",
    );
    assert_eq!(verdict(&strict), Verdict::Inconclusive);
}

#[test]
fn collapse_rejects_a_v_that_breaks_the_hypothesis() {
    let text = crate::util::spec_text("clusters/collapse");
    let err = crate::util::prepare_err(
        "clusters/collapse",
        &text.replacen("v = \"-I\"", "v = \"I\"", 1),
    );
    assert!(err.contains("instances[0].v"), "{err}");
    assert!(err.contains("V = −I"), "{err}");
}

/// (D) used to be reported certified on evidence that can only refute (issue 13):
/// both parts are supported now.
#[test]
fn rescaling_is_supported_on_d_and_on_f() {
    let r = run_quick("clusters/rescaling");
    assert_eq!(verdict(&r), Verdict::Supported, "{:?}", r.report.reason);
    let parts = Verdict::by_part(&r.report.checks, r.report.rigour, None);
    assert_eq!(
        parts,
        vec![
            ("(D) discrete map".to_string(), Verdict::Supported),
            ("(F) flow".to_string(), Verdict::Supported)
        ]
    );
}

/// Finding (issue 13, rescaling.rs ≈ l. 266): "the enclosures overlap" was recorded as
/// certified True. Overlap proves nothing; it is a consistency reading.
#[test]
fn rescaling_overlapping_enclosures_are_a_consistency_reading_not_certified() {
    let r = run_quick("clusters/rescaling");
    let c = crate::util::check(&r, "intersect for k = 1..");
    assert_eq!(c.kind, CheckKind::Consistency);
    assert_eq!(c.result, Certainty::True);
    assert!(c.detail.contains("proves nothing"), "{}", c.detail);
    assert!(r
        .report
        .checks
        .iter()
        .all(|c| c.kind != CheckKind::Certified));
    // the reading of a disjoint pair is violated (an observation: it cannot refute)
    use attncheck::reading::Agreement;
    let (a, b) = (Interval::from_i64(64, 1), Interval::from_i64(64, 2));
    assert!(a.agreement(&b).violated());
    assert!(!a.agreement(&a.hull(&b)).violated());
}

/// Finding (issue 13, rescaling.rs ≈ l. 279–281): an f64 width comparison decided a
/// certified check. It is an observation now.
#[test]
fn rescaling_f64_width_comparison_is_an_observation_not_certified() {
    let r = run_quick("clusters/rescaling");
    let c = crate::util::check(&r, "every enclosure is narrower than");
    assert_eq!(c.kind, CheckKind::Observed);
    assert_eq!(c.result, Certainty::True);
}

/// Issue #24: the Lyapunov and ball checks were tallies the claim's own code computed
/// (observations). They are obligations of collapse's certificate now, over a `layer`
/// datum the kernel iterates 4000 steps: certified checks the kernel decided.
#[test]
fn collapse_per_step_checks_are_obligations_of_its_certificate() {
    let r = run_quick("clusters/collapse");
    let per_step: Vec<_> = r
        .report
        .checks
        .iter()
        .filter(|c| c.name.contains("on every step of (D)"))
        .collect();
    assert_eq!(per_step.len(), 4);
    let (_, cert) = r
        .certificate
        .as_ref()
        .expect("collapse writes a certificate");
    for c in per_step {
        assert_eq!(c.kind, CheckKind::Certified, "{}", c.name);
        assert_eq!(c.result, Certainty::True, "{}", c.name);
        assert!(cert.contains(&c.name), "{} is not an obligation", c.name);
    }
    assert!(cert.contains(
        "(forall k 0 3999 (<= (layer-partition X0 0 (+ k 1)) (layer-partition X0 0 k)))"
    ));
}

#[test]
fn rescaling_rejects_a_singular_r() {
    // V = −10 I with Δt = 1/10 makes R = I + ΔtV = 0.
    let err = crate::util::edited_err(
        "clusters/rescaling",
        "v = { uniform = [\"-1\", \"1\"], seed = 503 }",
        "v = { diag = [\"-10\", \"-10\", \"-10\"] }",
    );
    assert!(err.contains("instances[0].dt"), "{err}");
    assert!(err.contains("singular"), "{err}");
}

#[test]
fn a_wrong_shape_names_the_field_and_line() {
    let err = crate::util::edited_err(
        "clusters/growth-bound",
        "v = [[\"0.64709742\", \"0.81911926\"], [\"0.61210449\", \"0.63263484\"]]",
        "v = [[\"0.64709742\", \"0.81911926\"], [\"0.61210449\"]]",
    );
    assert!(err.contains("instances[2].v[1]"), "{err}");
    assert!(err.contains("growth-bound.toml:"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// z^k = R^{−k} x^k from the layer agrees with the rescaled recursion.
    #[test]
    fn layer_rescaled_form_agrees_with_the_rescaled_recursion(seed in 0u64..1000) {
        let d = 2;
        let n = 3;
        let sys = System::new(random(seed, d, d), random(seed + 1, d, d), random(seed + 2, d, d));
        let dt = q("1/10");
        prop_assume!(sys.r(&dt).inverse().is_some());
        let x0 = random(seed + 3, n, d);
        let mut a = DiscreteMap::new(&sys, n, &dt, Form::LayerRescaled, 256).unwrap();
        let mut b = DiscreteMap::new(&sys, n, &dt, Form::Rescaled, 256).unwrap();
        let (mut sa, mut sb) = (a.start(&x0), b.start(&x0));
        for _ in 0..10 {
            sa = a.step(&sa);
            sb = b.step(&sb);
            for (x, y) in sa.u.iter().zip(&sb.u) {
                prop_assert!(x.overlaps(y));
            }
        }
    }
}

// ───── The certificates over the `layer` datum ─────
// (the datum and its operations are tested in the kernel crate:
// crates/attncheck-kernel/tests/conformance/layer.rs)

use attncheck::app;

fn scratch_cert(name: &str, v: &serde_json::Value) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    (dir, p)
}

fn cert_json(id: &str) -> serde_json::Value {
    let r = run_quick(id);
    let (_, text) = r.certificate.as_ref().expect("a certificate");
    serde_json::from_str(text).unwrap()
}

fn verify(v: &serde_json::Value) -> Result<app::Verification, app::Error> {
    let (_d, p) = scratch_cert("c.cert.json", v);
    app::verify_file(&p, Some(&crate::util::root().join("theorems")))
}

fn rejected(v: &serde_json::Value, what: &str) -> String {
    match verify(v) {
        Err(app::Error::Rejected { reason, .. }) => reason,
        other => panic!(
            "{what}: expected a rejection, got {:?}",
            other.map(|v| v.checked)
        ),
    }
}

/// Finding (issue 13, item 6): growth-bound and stability were certified and wrote no
/// certificate. Each now writes one that `verify` re-derives from the spec, and every
/// tamper class is rejected.
fn certificate_verifies_and_tampering_is_rejected(
    id: &str,
    obligations: usize,
    datum_edit: &dyn Fn(&mut serde_json::Value),
) {
    tampering_is_rejected(id, obligations, (" 2) ", " 3) "), datum_edit)
}

/// [`certificate_verifies_and_tampering_is_rejected`] with the bound edit `edit` (a
/// text of obligation 0's formula and its replacement).
fn tampering_is_rejected(
    id: &str,
    obligations: usize,
    edit: (&str, &str),
    datum_edit: &dyn Fn(&mut serde_json::Value),
) {
    let cert = cert_json(id);
    let v = verify(&cert).unwrap_or_else(|e| panic!("{id}: {e}"));
    assert!(v.checked.as_expected());
    assert_eq!(v.checked.decisions().len(), obligations);
    assert!(matches!(v.source, app::StatementSource::Spec(_)));
    // the certificate carries exact data only, never enclosures
    let mut keys: Vec<&str> = cert["data"]["X0"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["d", "dt", "form", "k", "kind", "n", "q", "steps", "tokens", "v"]
    );
    assert_eq!(cert["data"]["X0"]["kind"], "layer");

    let mut t = cert.clone();
    t["obligations"][0]["formula"] = "(<= 0 1)".into();
    assert!(rejected(&t, "formula replaced").contains("formula"));

    let mut t = cert.clone();
    t["obligations"]
        .as_array_mut()
        .unwrap()
        .remove(obligations - 1);
    assert!(rejected(&t, "obligation deleted").contains("obligations"));

    let mut t = cert.clone();
    let f = t["obligations"][0]["formula"]
        .as_str()
        .unwrap()
        .replacen(edit.0, edit.1, 1);
    assert_ne!(f, cert["obligations"][0]["formula"].as_str().unwrap());
    t["obligations"][0]["formula"] = f.into();
    assert!(rejected(&t, "bound changed").contains("formula"));

    let mut t = cert.clone();
    datum_edit(&mut t);
    assert!(rejected(&t, "datum changed").contains("datum `X0`"));

    let mut t = cert.clone();
    t["data"]["X0"]["dt"] = "1/11".into();
    assert!(rejected(&t, "dt changed").contains("datum `X0`"));
}

#[test]
fn growth_bound_writes_a_certificate_that_verify_rederives_and_tampering_is_rejected() {
    certificate_verifies_and_tampering_is_rejected("clusters/growth-bound", 6, &|t| {
        t["data"]["X0"]["tokens"][0][0][0] = "1/2".into();
    });
}

#[test]
fn collapse_writes_a_certificate_that_verify_rederives_and_tampering_is_rejected() {
    tampering_is_rejected("clusters/collapse", 4, ("(+ k 1)", "(+ k 2)"), &|t| {
        t["data"]["X0"]["tokens"][0][0][0] = "1/2".into();
    });
}

#[test]
fn stability_writes_a_certificate_that_verify_rederives_and_tampering_is_rejected() {
    certificate_verifies_and_tampering_is_rejected("clusters/stability", 2, &|t| {
        // y(0) is re-derived from noise_seed: moving one entry of it is caught
        t["data"]["X0"]["tokens"][1][3][1] = "0".into();
    });
}

/// A malformed layer datum is a certificate error naming the field (exit 2 from the
/// binary), never a panic; the cost bound is checked before anything is iterated.
#[test]
fn malformed_layer_datum_is_a_certificate_error_naming_the_field() {
    let cert = cert_json("clusters/growth-bound");
    let parse = |t: &serde_json::Value| {
        let p = std::path::Path::new("c.cert.json");
        attncheck::certificate::parse(p, &serde_json::to_string(t).unwrap())
    };
    assert!(parse(&cert).is_ok());
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|t| t["data"]["X0"]["form"] = "rescaled".into()),
            "data.X0.form",
        ),
        (
            Box::new(|t| t["data"]["X0"]["q"][0][1] = "x".into()),
            "data.X0.q[0][1]",
        ),
        (
            Box::new(|t| t["data"]["X0"]["v"][1] = serde_json::json!(["1"])),
            "data.X0.v[1]",
        ),
        (
            Box::new(|t| t["data"]["X0"]["k"] = serde_json::json!([["1", "0", "0"]])),
            "data.X0.k",
        ),
        (
            Box::new(|t| t["data"]["X0"]["tokens"] = serde_json::json!([])),
            "data.X0.tokens",
        ),
        (
            Box::new(|t| {
                t["data"]["X0"]["tokens"][0].as_array_mut().unwrap().pop();
            }),
            "data.X0.tokens[0]",
        ),
        (
            Box::new(|t| t["data"]["X0"]["dt"] = "0".into()),
            "data.X0.dt",
        ),
        (
            Box::new(|t| t["data"]["X0"]["dt"] = "1/0".into()),
            "data.X0.dt",
        ),
        (
            Box::new(|t| t["data"]["X0"]["steps"] = 0.into()),
            "data.X0.steps",
        ),
        (
            Box::new(|t| t["data"]["X1"]["steps"] = 100_000.into()),
            "data.X1.steps",
        ),
        (Box::new(|t| t["data"]["X0"]["n"] = 0.into()), "data.X0.n"),
    ];
    for (edit, field) in cases {
        let mut t = cert.clone();
        edit(&mut t);
        let e = parse(&t).expect_err(field);
        assert_eq!(e.field, field, "{e}");
    }
    // through the binary: exit 2 naming the field
    let mut t = cert.clone();
    t["data"]["X1"]["steps"] = 100_000.into();
    let (_d, p) = scratch_cert("bad.cert.json", &t);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_attncheck"))
        .current_dir(crate::util::root())
        .args(["verify", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("data.X1.steps"));
}

/// Through the binary: the growth-bound certificate verifies (exit 0) and a changed
/// datum (one initial token) is rejected (exit 4).
#[test]
fn verify_binary_accepts_growth_bound_and_rejects_a_changed_token() {
    let cert = cert_json("clusters/growth-bound");
    let bin = |p: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_attncheck"))
            .current_dir(crate::util::root())
            .args(["verify", p.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let (_d, p) = scratch_cert("growth-bound.cert.json", &cert);
    let o = bin(&p);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("certified (6 obligations"));
    let mut t = cert.clone();
    t["data"]["X1"]["tokens"][0][2][1] = "1/3".into();
    let (_e, p) = scratch_cert("growth-bound.cert.json", &t);
    let o = bin(&p);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("datum `X1`"));
}

// ----- issue 23, item 7: the layer datum iterates the paper's map -----------------

/// The discrete map and the flow use one orientation: for random non-symmetric QᵀK,
/// the discrete map's certified P(x⁰) contains the flow's P (MPFR at 256 bits) entry by
/// entry, and one step is the flow's Euler step, (x¹ − x⁰)/Δt ∋ ẋ(0). The transposed
/// system (Q and K swapped, so QᵀK becomes its transpose) is caught, so the comparison
/// can fail.
#[test]
fn the_discrete_map_and_the_flow_share_the_attention_orientation() {
    use attncheck::dynamics::flow::{Flow, FlowOptions, Vars};
    use rug::Float;
    let (n, d, m) = (5, 3, 2);
    let dt = q("1/8");
    let slack = Interval::from_rational(256, &(Rational::from(1) >> 200u32));
    let slack = &slack - &slack; // [−2^−200, 2^−200]
    for seed in 0..4u64 {
        let qm = random(7000 + seed, m, d);
        let km = random(7100 + seed, m, d);
        let vm = random(7200 + seed, d, d);
        let x0 = random(7300 + seed, n, d);
        let sys = System::new(qm.clone(), km.clone(), vm.clone());
        assert!(
            !sys.qk.is_symmetric(),
            "seed {seed}: QᵀK must not be symmetric"
        );
        let flow = Flow::new(&sys, FlowOptions::new(256, Vars::X)).unwrap();
        let rhs = flow
            .rhs_at(&Rational::new(), &flow.initial_state(&x0).unwrap())
            .unwrap();
        let around = |f: &Float| {
            let c = Interval::from_endpoints(Float::with_val(256, f), Float::with_val(256, f));
            &c + &slack
        };
        let mut map = DiscreteMap::new(&sys, n, &dt, Form::Layer, 128).unwrap();
        let s0 = map.start(&x0);
        for (e, (enc, f)) in s0.p.iter().zip(&rhs.p).enumerate() {
            assert!(
                enc.overlaps(&around(f)),
                "seed {seed}: P[{}][{}] = {enc:?} vs the flow's {f}",
                e / n,
                e % n
            );
        }
        let s1 = map.step(&s0);
        let dti = Interval::from_rational(128, &dt);
        for (c, f) in rhs.deriv.iter().enumerate() {
            let euler = &(&s1.x[c] - &s0.x[c]) / &dti;
            assert!(
                euler.overlaps(&around(f)),
                "seed {seed}: (x¹ − x⁰)/Δt [{c}] = {euler:?} vs ẋ = {f}"
            );
        }
        // the transposed attention is a different matrix, and the comparison sees it
        let swapped = System::new(km, qm, vm);
        let mut tmap = DiscreteMap::new(&swapped, n, &dt, Form::Layer, 128).unwrap();
        let t0 = tmap.start(&x0);
        assert!(
            t0.p.iter()
                .zip(&rhs.p)
                .any(|(enc, f)| !enc.overlaps(&around(f))),
            "seed {seed}: the transposed map must differ from the flow"
        );
    }
}
