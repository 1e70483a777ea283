//! Exploratory clusters claims (report-only): clusters/codim-conjecture and
//! clusters/open-problems, and the variant dynamics behind them.

use crate::util::{run_quick, run_text, spec_text, verdict};
use attncheck::dynamics::flow::{rk4, FlowOptions, Vars};
use attncheck::dynamics::model::{random_dyadic, Mat, System};
use attncheck::dynamics::variants::{
    mlp_rk4, multi_head, positive_duals, tau_clusters, Activation, Head,
};
use attncheck::spec::Profile;
use attncheck::verdict::Verdict;
use rug::{Float, Rational};

const CODIM: &str = "clusters/codim-conjecture";
const OPEN: &str = "clusters/open-problems";

fn q(s: &str) -> Rational {
    attncheck::kernel::parse_rational(s).unwrap()
}

fn v2d() -> Mat {
    Mat::from_rows(vec![
        vec![q("0.64709742"), q("0.81911926")],
        vec![q("0.61210449"), q("0.63263484")],
    ])
}

fn table_rows(run: &attncheck::app::ClaimRun, prefix: &str) -> usize {
    run.report
        .tables
        .iter()
        .find(|t| t.title.starts_with(prefix))
        .unwrap_or_else(|| panic!("no table `{prefix}`"))
        .rows
        .len()
}

#[test]
fn codim_is_report_only_with_a_table_per_seed_and_pictures() {
    let run = run_quick(CODIM);
    assert_eq!(verdict(&run), Verdict::ReportOnly);
    assert!(run.report.checks.is_empty(), "nothing is asserted");
    // 2 cases × 3 seeds
    assert_eq!(table_rows(&run, "τ-clusters of (φ_1*"), 6);
    assert_eq!(table_rows(&run, "Value matrices"), 2);
    assert_eq!(run.svgs.len(), 2);
    assert!(run.markdown.contains("V_sym"));
}

#[test]
fn open_problems_is_report_only_with_every_run_tabulated() {
    let run = run_quick(OPEN);
    assert_eq!(verdict(&run), Verdict::ReportOnly);
    assert!(run.report.checks.is_empty(), "nothing is asserted");
    // indefinite, multi-head, 3 MLP cases, complex
    assert_eq!(table_rows(&run, "Open problems (§12)"), 6);
    assert_eq!(run.svgs.len(), 6);
    for f in &run.report.figures {
        assert!(f.value >= 1.0 && f.value <= 20.0, "{}: {}", f.name, f.value);
    }
}

#[test]
fn both_explorations_are_deterministic() {
    for id in [CODIM, OPEN] {
        let a = run_text(id, &spec_text(id), Profile::Quick);
        let b = run_quick(id);
        assert_eq!(a.markdown, b.markdown, "{id}");
        assert_eq!(a.svgs, b.svgs, "{id}");
    }
}

/// The MLP integrator with σ = identity and W = I is the rescaled flow: it must agree
/// with the flow engine's RK4 (same step) to far below f64 precision.
#[test]
fn mlp_with_identity_is_the_rescaled_flow() {
    let v = v2d();
    let z0 = random_dyadic("t", 5, 2, "-2", "2", 77, 20).unwrap();
    let h = q("1/20");
    let prec = 160;
    let z = mlp_rk4(
        &v,
        None,
        &Mat::identity(2),
        Activation::Identity,
        &z0,
        &h,
        40,
        prec,
        |_, _| {},
    );
    let sys = System::new(Mat::identity(2), Mat::identity(2), v);
    let res = rk4(
        &sys,
        &z0,
        &q("2"),
        &h,
        &FlowOptions::new(prec, Vars::Z),
        |_| {},
    )
    .unwrap();
    for (a, b) in z.iter().zip(&res.state) {
        let diff = Float::with_val(prec, a - b).abs().to_f64();
        assert!(diff < 1e-30, "{a} vs {b}");
    }
}

/// Two identical heads with V/2 each are one head with V.
#[test]
fn two_half_heads_equal_one_head() {
    let v = v2d();
    let qk = Mat::from_rows(vec![vec![q("1"), q("1/2")], vec![q("1/2"), q("1")]]);
    let half = v.scale(&q("1/2"));
    let x0 = random_dyadic("t", 6, 2, "-1", "1", 5, 20).unwrap();
    let one = multi_head(
        &[Head {
            qk: qk.clone(),
            v: v.clone(),
        }],
        &x0,
        &q("1/10"),
        30,
        128,
        |_, _| {},
    );
    let h = Head { qk, v: half };
    let two = multi_head(&[h.clone(), h], &x0, &q("1/10"), 30, 128, |_, _| {});
    for (a, b) in one.iter().zip(&two) {
        let rel = Float::with_val(128, a - b).abs().to_f64() / (1.0 + a.to_f64().abs());
        assert!(rel < 1e-30, "{a} vs {b}");
    }
}

#[test]
fn tau_clusters_and_left_eigenvectors() {
    let pts = vec![
        vec![0.0, 0.0],
        vec![0.05, 0.0],
        vec![1.0, 1.0],
        vec![1.0, 1.04],
        vec![5.0, 0.0],
    ];
    assert_eq!(tau_clusters(&pts, 0.1), 3);
    assert_eq!(tau_clusters(&pts, 0.01), 5);
    assert_eq!(tau_clusters(&pts, 10.0), 1);
    // V_2D: φ1* ∝ (0.4661889078, 0.5338110922) (clusters.md §4), normalised to sum 1
    let du = positive_duals(&v2d(), 128).unwrap();
    assert!(du.left_eigenvectors);
    assert_eq!(du.functionals.len(), 1);
    let (a, b) = (du.functionals[0][0].to_f64(), du.functionals[0][1].to_f64());
    assert!((a / (a + b) - 0.4661889078).abs() < 1e-9, "{a} {b}");
    assert!((du.eigenvalues[0].0 - 1.347989614).abs() < 1e-8);
}

#[test]
fn bad_activation_names_the_field() {
    let e = crate::util::edited_err(OPEN, "sigma = \"tanh\"", "sigma = \"gelu\"");
    assert!(e.contains("mlp.cases[1].sigma"), "{e}");
}

/// Issue 14: the key figures of both explorations showed only their descriptions,
/// so reports/README.md read "max_clusters = largest number of …" without a number.
/// Each figure's text now starts with its value, and certifies nothing.
#[test]
fn exploration_key_figures_show_their_values() {
    for id in [CODIM, OPEN] {
        let run = run_quick(id);
        assert!(!run.report.figures.is_empty(), "{id}");
        for f in &run.report.figures {
            let v = format!("{}", f.value as i64);
            assert_eq!(f.value, f.value.trunc(), "{id}: {} is a count", f.name);
            assert!(
                f.text.starts_with(&v)
                    && !f.text[v.len()..].starts_with(|c: char| c.is_ascii_digit()),
                "{id}: {} = {} (value {})",
                f.name,
                f.text,
                f.value
            );
        }
        assert!(run.report.certificate.is_none(), "{id} certifies nothing");
        assert!(run.report.checks.is_empty(), "{id} certifies nothing");
    }
}
