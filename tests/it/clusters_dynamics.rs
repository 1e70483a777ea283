//! The discrete-map engine (D) and the claims built directly on it:
//! clusters/growth-bound, clusters/stability, clusters/collapse, clusters/rescaling.

use crate::util::{run_edited, run_quick, verdict};
use attncheck::dynamics::discrete::{DiscreteMap, Form};
use attncheck::dynamics::model::{Mat, MatrixSpec, System};
use attncheck::dynamics::observe::{max_all, sq_norms, Invariant};
use attncheck::kernel::{Certainty, Interval};
use attncheck::verdict::Verdict;
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
fn exact_inverse_and_minors() {
    let a = Mat::from_rows(vec![vec![q("1"), q("1/2")], vec![q("1/2"), q("1")]]);
    let inv = a.inverse().unwrap();
    assert_eq!(a.mul(&inv), Mat::identity(2));
    assert_eq!(a.leading_minors(), vec![q("1"), q("3/4")]);
    assert!(a.is_positive_definite());
    let sing = Mat::from_rows(vec![vec![q("1"), q("2")], vec![q("2"), q("4")]]);
    assert!(sing.inverse().is_none());
    assert!(!sing.is_positive_definite());
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
    map.run(&x0, 20, std::slice::from_mut(&mut inv), |_| {});
    assert_eq!(inv.tally.certainty(), Certainty::False);
    assert!(inv.tally.first_violation().is_some());
    // …while the true bound is proven on every step.
    let g = Interval::from_rational(128, &q("121/100"));
    let mut ok = Invariant::new("M_(k+1)² ≤ 1.21 M_k²", |v| {
        let b = max_all(&sq_norms(&v.before.x, v.n, v.d));
        let a = max_all(&sq_norms(&v.after.x, v.n, v.d));
        &(&g * &b) - &a
    });
    map.run(&x0, 20, std::slice::from_mut(&mut ok), |_| {});
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

#[test]
fn rescaling_is_certified_on_d_and_supported_on_f() {
    let r = run_quick("clusters/rescaling");
    assert_eq!(verdict(&r), Verdict::Supported, "{:?}", r.report.reason);
    let parts = Verdict::by_part(&r.report.checks);
    assert_eq!(
        parts,
        vec![
            ("(D) discrete map".to_string(), Verdict::Certified),
            ("(F) flow".to_string(), Verdict::Supported)
        ]
    );
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
