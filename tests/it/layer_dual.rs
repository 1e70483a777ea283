//! The dual functionals of the `layer` datum (`layer-dual-sup`, `layer-dual-inf`:
//! sup/inf over λ ∈ [lo, hi] of max_j |a_i(λ)·x_j^k|, a_i(λ) = row i of adj(V − λI)) and
//! clusters/hyperplanes' discrete Grönwall bounds stated over them (issue #24). The
//! operations themselves (containment of the exact adjugate and duals, bad arguments,
//! precision overlap) are tested in the kernel crate
//! (crates/attncheck-kernel/tests/conformance/layer_dual.rs).

use crate::util::{run_quick, spec_path};
use attncheck::app;
use attncheck::dynamics::layer_data::LayerData;
use attncheck::dynamics::model::{Mat, MatrixSpec};
use attncheck::kernel::expr::{Data, Datum};
use attncheck::kernel::Certainty;
use attncheck::verdict::{CheckKind, Verdict};
use rug::Rational;

const HYP: &str = "clusters/hyperplanes";

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

fn layer(qm: Mat, km: Mat, v: Mat, dt: &str, steps: usize, runs: Vec<Mat>) -> Data {
    let mut data = Data::new();
    let l = LayerData::new(qm, km, v, q(dt), steps, runs).unwrap();
    data.insert("X".into(), Datum::Layer(l));
    data
}

fn gronwall_names() -> Vec<String> {
    [
        ("V_2D, n = 20", 1),
        ("V_2D, n = 20", 2),
        ("V_3−, n = 20", 1),
        ("V_3+, n = 20", 1),
    ]
    .iter()
    .map(|(w, j)| {
        format!(
            "{w}: max_j |φ{j}*(x_j^k)| ≤ max_j |φ{j}*(x_j^0)|·(1 + Δt|λ|)^k (discrete Grönwall)"
        )
    })
    .collect()
}

/// The four discrete Grönwall bounds of clusters/hyperplanes are certified checks and
/// obligations of its certificate (with their non-vacuity and λ2's bracket), and the
/// verdict stays supported.
#[test]
fn hyperplanes_gronwall_bounds_are_certified_obligations() {
    let run = run_quick(HYP);
    assert_eq!(run.report.verdict, Verdict::Supported);
    let (_, json) = run.certificate.as_ref().expect("a certificate");
    let cert: serde_json::Value = serde_json::from_str(json).unwrap();
    let obligations: Vec<&str> = cert["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    for name in gronwall_names() {
        let c = run
            .report
            .checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no check `{name}`"));
        assert_eq!(
            (c.kind, c.result),
            (CheckKind::Certified, Certainty::True),
            "{name}"
        );
        assert!(obligations.contains(&name.as_str()), "{name}");
    }
    let nonzero = obligations
        .iter()
        .filter(|o| o.contains("is nonzero and not orthogonal"))
        .count();
    assert_eq!(nonzero, 4);
    assert!(obligations
        .iter()
        .any(|o| o.starts_with("V_2D, n = 20: λ2 is a real eigenvalue")));
    // no Grönwall bound is left as an observation
    assert!(!run
        .report
        .checks
        .iter()
        .any(|c| c.name.contains("Grönwall") && c.kind != CheckKind::Certified));
}

fn cert_of(run: &attncheck::app::ClaimRun) -> serde_json::Value {
    let (_, json) = run.certificate.as_ref().expect("a certificate");
    serde_json::from_str(json).unwrap()
}

fn verify(v: &serde_json::Value) -> Result<app::Verification, app::Error> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.cert.json");
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
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

/// Hostile `verify`: a tampered bracket hint, row hint or token is rejected; a
/// certificate rebuilt consistently around a bracket that holds no eigenvalue is
/// decided, and its sign-change obligation is false (the Grönwall obligation over that
/// bracket cannot stand in for it).
#[test]
fn hyperplanes_certificate_with_tampered_hints_or_tokens_is_rejected() {
    let run = run_quick(HYP);
    let cert = cert_of(&run);
    let v = verify(&cert).unwrap_or_else(|e| panic!("{e}"));
    assert!(v.checked.as_expected());

    let mut t = cert.clone();
    t["hints"]["instances[0].lambda2_bracket"] = "-1/10 -1/20".into();
    let r = rejected(&t, "λ2 bracket hint changed");
    assert!(r.contains("statement is not the one"), "{r}");

    let row = cert["hints"]["instances[1].lambda1_row"].as_str().unwrap();
    let other = if row == "0" { "2" } else { "0" };
    let mut t = cert.clone();
    t["hints"]["instances[1].lambda1_row"] = other.into();
    let r = rejected(&t, "row hint changed");
    assert!(r.contains("statement is not the one"), "{r}");

    let mut t = cert.clone();
    t["hints"]["instances[1].lambda1_row"] = "3".into();
    let r = rejected(&t, "row hint out of range");
    assert!(r.contains("row index in 0..3"), "{r}");

    let mut t = cert.clone();
    t["data"]["X0"]["tokens"][0][5][1] = "1/3".into();
    let r = rejected(&t, "token changed");
    assert!(r.contains("datum `X0`"), "{r}");

    // consistent tampering: λ2's bracket moved to (1/1000, 1/500), where V_2D has no
    // eigenvalue, and the certificate rebuilt around it
    let spec = attncheck::claims::load_spec(&spec_path(HYP)).unwrap();
    let mut hints: attncheck::certificate::Hints =
        serde_json::from_value(cert["hints"].clone()).unwrap();
    hints.insert("instances[0].lambda2_bracket".into(), "1/1000 1/500".into());
    let st = attncheck::claims::statement_of(&spec, attncheck::spec::Profile::Quick, &hints)
        .unwrap()
        .unwrap();
    let forged = attncheck::certificate::Certificate::of(
        &st,
        attncheck::spec::Profile::Quick,
        cert["precision"].as_u64().unwrap() as u32,
        &hints,
    );
    let v = verify(&serde_json::to_value(&forged).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!v.checked.as_expected());
    let d = v
        .checked
        .decisions()
        .iter()
        .find(|d| {
            d.name()
                .starts_with("V_2D, n = 20: λ2 is a real eigenvalue")
        })
        .unwrap();
    assert_eq!(d.result(), Certainty::False);
}

/// The work budget counts one iteration per distinct (lo, hi, i) (sup and inf share
/// it), and MAX_TRACES iterations when the arguments mention a bound variable (their
/// values may differ per evaluation; the datum's cache bounds the iterations).
#[test]
fn dual_operations_cost_one_iteration_per_bracket_and_row() {
    use attncheck::kernel::expr::{parse, work_with};
    let d = 3;
    let data = layer(
        Mat::identity(d),
        Mat::identity(d),
        random(5, d, d),
        "1/10",
        200,
        vec![random(6, 20, d)],
    );
    let w = |f: &str| work_with(&parse(f).unwrap(), &data, 128);
    let one = w("(> (layer-dual-sup X 0 1 0 1 0) 0)");
    let both = w("(and (> (layer-dual-sup X 0 1 0 1 0) 0) (> (layer-dual-inf X 0 1 0 1 0) 0))");
    let rows = w("(and (> (layer-dual-sup X 0 1 0 1 0) 0) (> (layer-dual-inf X 0 1 0 1 1) 0))");
    let iteration = 200 * 20 * 20 * 2 * 3;
    assert!(one > iteration, "{one}");
    assert!(both < one + 100, "{both} vs {one}");
    assert!(rows > one + iteration, "{rows} vs {one}");
    let open = w("(forall i 0 2 (> (layer-dual-sup X 0 1 0 1 i) 0))");
    let traces = attncheck::dynamics::layer_data::MAX_TRACES as u128;
    assert!(open >= traces * iteration, "{open}");
}
