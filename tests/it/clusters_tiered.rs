//! The flow's tier ladder (src/dynamics/tiered.rs) and the claim it is wired into
//! (clusters/codim-conjecture's `largest` runs, src/claims/clusters/largest_flow.rs):
//! the double-double rung agrees with the 128-bit MPFR run within `check_tolerance` on
//! the claim's instances, the ladder climbs when two rungs disagree, and nothing
//! depends on the thread count.

use crate::util::{run_text, spec_text};
use attncheck::claims::clusters::largest_flow::{agree, figures, state_deviation, Figures};
use attncheck::dynamics::flow::{rk4, FlowOptions, FlowResult, Vars};
use attncheck::dynamics::model::{DyadicRange, Mat, System};
use attncheck::dynamics::tiered::{rk4_tiered, tiers, Tier};
use attncheck::dynamics::variants::{diameter, rows_f64, to_floats};
use attncheck::dynamics::workloads::cupy_workload;
use attncheck::spec::Profile;
use rug::Rational;

const CODIM: &str = "clusters/codim-conjecture";
/// The spec's `check_tolerance` (codim-conjecture leaves the default).
const TOL: f64 = 1e-9;
const TAUS: [f64; 3] = [0.1, 0.01, 0.001];

fn q(s: &str) -> Rational {
    attncheck::kernel::parse_rational(s).unwrap()
}

fn mat(rows: &[[&str; 3]; 3]) -> Mat {
    Mat::from_rows(
        rows.iter()
            .map(|r| r.iter().map(|x| q(x)).collect())
            .collect(),
    )
}

/// The quick profile's instances of clusters/codim-conjecture: V_sym and V_3+, Q = K = I,
/// n = 20 tokens drawn from [−5, 5]³ at seeds 3001–3003, T = 12, h = 1/20.
fn codim_instances() -> Vec<(System, Mat)> {
    let v_sym = mat(&[
        ["0.92761287", "0.94333073", "0.3827744"],
        ["0.94333073", "0.59991396", "0.47825472"],
        ["0.3827744", "0.47825472", "0.46668605"],
    ]);
    let v_3p = mat(&[
        ["0.18608476", "0.34391026", "0.13905949"],
        ["0.35244288", "0.6694859", "0.39992145"],
        ["0.46685606", "0.17094454", "0.42092308"],
    ]);
    let range = DyadicRange::new("range", "-5", "5", 20).unwrap();
    let mut out = Vec::new();
    for v in [v_sym, v_3p] {
        for seed in [3001, 3002, 3003] {
            let sys = System::new(Mat::identity(3), Mat::identity(3), v.clone());
            out.push((sys, range.draw(20, 3, seed)));
        }
    }
    out
}

fn figs(r: &FlowResult, z0: &Mat) -> Figures {
    let diam0 = diameter(&rows_f64(&to_floats(z0, 128), z0.cols));
    figures(r, &TAUS, diam0)
}

/// On every instance of the claim the dd rung settles against the 128-bit run: the
/// first pair agrees, and the dd figures and end state are within check_tolerance of
/// an independent 128-bit MPFR run.
#[test]
fn dd_agrees_with_the_128_bit_run_on_codims_instances() {
    let (t, h) = (q("12"), q("1/20"));
    for (i, (sys, z0)) in codim_instances().iter().enumerate() {
        let opts = FlowOptions::new(128, Vars::Z);
        let tr = rk4_tiered(
            sys,
            z0,
            &t,
            &h,
            &opts,
            1,
            |r| figs(r, z0),
            |a, b| agree(a, b, TOL),
        );
        assert!(tr.settled, "instance {i}");
        assert_eq!(tr.pairs, 1, "instance {i}: dd settles");
        assert_eq!((tr.lower.tier, tr.upper.tier), (Tier::Dd, Tier::Mpfr(128)));
        let dd = tr.lower.run.as_ref().unwrap();
        assert_eq!(dd.prec, 106);
        let mpfr = rk4(sys, z0, &t, &h, &opts, |_| {}).unwrap();
        let dev = state_deviation(dd, &mpfr);
        assert!(dev <= TOL, "instance {i}: z(T) deviates by {dev:e}");
        assert!(
            agree(tr.lower.figures.as_ref().unwrap(), &figs(&mpfr, z0), TOL),
            "instance {i}"
        );
    }
}

/// Escalation: a comparison the dd rung cannot pass (end states within 1e−35,
/// relative: dd carries ≈ 106 bits) climbs to the MPFR pair (128, 256), which passes it;
/// a comparison nothing passes exhausts the ladder and says so.
#[test]
fn the_ladder_climbs_when_two_rungs_disagree() {
    let (sys, z0) = codim_instances().swap_remove(0);
    let (t, h) = (q("2"), q("1/20"));
    let opts = FlowOptions::new(128, Vars::Z);
    let tight = rk4_tiered(
        &sys,
        &z0,
        &t,
        &h,
        &opts,
        2,
        |r| r.clone(),
        |a, b| state_deviation(a, b) <= 1e-35,
    );
    assert!(tight.settled);
    assert_eq!(tight.pairs, 2, "dd vs 128 disagrees, 128 vs 256 agrees");
    assert_eq!(
        (tight.lower.tier, tight.upper.tier),
        (Tier::Mpfr(128), Tier::Mpfr(256))
    );
    let never = rk4_tiered(&sys, &z0, &t, &h, &opts, 2, |r| r.prec, |_, _| false);
    assert!(!never.settled);
    assert_eq!(never.pairs, 3);
    assert_eq!(
        (never.lower.tier, never.upper.tier),
        (Tier::Mpfr(256), Tier::Mpfr(512))
    );
    assert_eq!(
        tiers(128, 2),
        vec![Tier::Dd, Tier::Mpfr(128), Tier::Mpfr(256), Tier::Mpfr(512)]
    );
}

/// A run that fails (a step that does not divide T) agrees with nothing: the ladder
/// climbs past it and ends unsettled, naming both rungs.
#[test]
fn a_failed_rung_agrees_with_nothing() {
    let (sys, z0) = codim_instances().swap_remove(0);
    let opts = FlowOptions::new(64, Vars::Z);
    let tr = rk4_tiered(&sys, &z0, &q("1"), &q("1/3"), &opts, 0, |_| (), |_, _| true);
    // 1/3 divides 1: sanity; now one that does not
    assert!(tr.settled);
    let bad = rk4_tiered(&sys, &z0, &q("1"), &q("2/3"), &opts, 0, |_| (), |_, _| true);
    assert!(!bad.settled);
    assert!(bad.lower.run.is_err() && bad.upper.run.is_err());
}

/// Every figure, the settled pair and the end states are the same on 1 and 2 threads.
#[test]
fn the_ladder_does_not_depend_on_the_thread_count() {
    let (sys, z0) = cupy_workload(24, 24, 2023);
    let (t, h) = (q("3"), q("1/10"));
    let go = || {
        rk4_tiered(
            &sys,
            &z0,
            &t,
            &h,
            &FlowOptions::new(128, Vars::Z),
            1,
            |r| figs(r, &z0),
            |a, b| agree(a, b, TOL),
        )
    };
    let pool = |k| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(k)
            .build()
            .unwrap()
    };
    let one = pool(1).install(go);
    let two = pool(2).install(go);
    assert!(one.settled && two.settled);
    assert_eq!((one.lower.tier, one.pairs), (two.lower.tier, two.pairs));
    assert_eq!(one.lower.figures, two.lower.figures);
    assert_eq!(
        one.lower.run.as_ref().unwrap().state,
        two.lower.run.as_ref().unwrap().state
    );
    assert_eq!(
        one.upper.run.as_ref().unwrap().state,
        two.upper.run.as_ref().unwrap().state
    );
}

/// The claim with a small `largest` run: the table says the figures come from the
/// double-double tier, confirmed by MPFR at 128 bits; the report is the same on 1 and
/// 2 threads; the quick profile (no `largest`) has no such table.
#[test]
fn codim_hosts_the_largest_configuration_on_the_ladder() {
    let text = format!(
        "{}\n[[params.largest]]\nname = \"cupy, n = d = 16\"\nn = 16\nd = 16\nseed = 2023\n\
         t_end = \"3\"\nh = \"1/10\"\n",
        spec_text(CODIM)
    );
    let pool = |k| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(k)
            .build()
            .unwrap()
    };
    let one = pool(1).install(|| run_text(CODIM, &text, Profile::Quick));
    let two = pool(2).install(|| run_text(CODIM, &text, Profile::Quick));
    assert_eq!(one.markdown, two.markdown);
    assert_eq!(one.report.to_json(), two.report.to_json());
    let t = one
        .report
        .tables
        .iter()
        .find(|t| t.title.starts_with("The authors' largest configuration"))
        .expect("the largest-configuration table");
    assert_eq!(t.rows.len(), 1);
    let row = &t.rows[0];
    assert_eq!(row[4], "double-double (≈ 106 bits)", "{row:?}");
    assert_eq!(row[5], "MPFR 128 bits", "{row:?}");
    assert_eq!(row[6], "yes", "{row:?}");
    assert!(one
        .report
        .figures
        .iter()
        .any(|f| f.name == "largest_max_norm"));
    let quick = crate::util::run_quick(CODIM);
    assert!(!quick
        .report
        .tables
        .iter()
        .any(|t| t.title.starts_with("The authors' largest configuration")));
}

/// A bad `largest` entry names its field.
#[test]
fn a_bad_largest_run_names_its_field() {
    let text = format!(
        "{}\n[[params.largest]]\nname = \"x\"\nn = 4096\nd = 16\nseed = 1\nt_end = \"1\"\nh = \"1/10\"\n",
        spec_text(CODIM)
    );
    let err = crate::util::prepare_err(CODIM, &text);
    assert!(err.contains("largest[0].n"), "{err}");
}

/// Regression (largest_run_work_was_unbounded): sizes and steps within their own bounds
/// (n = d = 1024, 20,000 steps) would run for days; the whole entry's work is bounded.
#[test]
fn largest_run_work_was_unbounded() {
    let text = format!(
        "{}\n[[params.largest]]\nname = \"x\"\nn = 1024\nd = 1024\nseed = 1\nt_end = \"2000\"\nh = \"1/10\"\n",
        spec_text(CODIM)
    );
    let err = crate::util::prepare_err(CODIM, &text);
    assert!(
        err.contains("largest[0].n") && err.contains("2^34"),
        "{err}"
    );
}
