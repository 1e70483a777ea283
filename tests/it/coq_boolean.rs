//! The Boolean limit of an instance in Coq (issue #39; `attncheck::coq::instance`):
//! `verify --coq` proves the lemma's hypotheses at K by computing the y-layer in Coq
//! (reflection, coq/Attncheck.v's `xcheck_sound`), (T) by `interval`, and states the
//! limit of the instance's own sequence P^k from coq/BooleanLimit.v. Hostile: Coq
//! rejects an instance with two tokens in [−A, A] at K, an unordered one, and an A
//! below the lemma's threshold; on a grid of small instances Coq proves the limit
//! exactly where the kernel proves the hypotheses.
//!
//! The certificates are built here (claim clusters/boolean-limit, obligations as the
//! claim's statement builder writes them) and handed to `coq::check` past the
//! statement check, as tests/it/coq_soundness.rs does: what is tested is Coq's own
//! judgement of each instance.

use crate::coq::have_coq;
use attncheck::certificate::{self, Certificate};
use attncheck::claims::clusters::boolean_limit::hypotheses::{
    escape_formula, escape_name, lemma_a, order_formula, order_name, threshold_formula,
    threshold_name,
};
use attncheck::coq::{self, CoqVerdict, InstanceProof};
use attncheck::kernel::Certainty;
use rug::Rational;
use std::path::Path;

/// One instance: its label, y^0 (exact), K and A; `stated` the number of tokens its
/// obligations speak of, when not all of y^0's (a forged certificate).
struct Inst {
    label: String,
    y0: Vec<Rational>,
    k: usize,
    a: Rational,
    stated: Option<usize>,
}

fn q(s: &str) -> Rational {
    attncheck::kernel::parse_rational(s).unwrap()
}

fn inst(label: &str, y0: &[&str], k: usize, a: Option<&str>) -> Inst {
    let y0: Vec<Rational> = y0.iter().map(|s| q(s)).collect();
    let a = a.map_or_else(|| lemma_a(y0.len()), q);
    Inst {
        label: label.into(),
        y0,
        k,
        a,
        stated: None,
    }
}

/// A certificate of clusters/boolean-limit with, per instance, its y-layer (Q = K = V =
/// [[1]], Δt = 1/10, K steps) and the three hypotheses: (T), order, escape.
fn instance_cert(is: &[Inst]) -> Certificate {
    let mut obligations = Vec::new();
    let mut data = Vec::new();
    for (w, i) in is.iter().enumerate() {
        let (n, x) = (i.stated.unwrap_or(i.y0.len()), format!("Y{w}"));
        let ob = |name: String, formula: String| serde_json::json!({"name": name, "formula": formula, "expect": "holds"});
        obligations.push(ob(
            format!("{}: {}", i.label, threshold_name(n, &i.a)),
            threshold_formula(n, &i.a).to_string(),
        ));
        obligations.push(ob(
            order_name(&i.label, i.k),
            order_formula(&x, i.k, n).to_string(),
        ));
        obligations.push(ob(
            escape_name(&i.label, i.k, &i.a),
            escape_formula(&x, i.k, n, &i.a).to_string(),
        ));
        let tokens: Vec<Vec<String>> = i.y0.iter().map(|y| vec![y.to_string()]).collect();
        data.push((
            x,
            serde_json::json!({"kind": "layer", "form": "layer", "n": i.y0.len(), "d": 1, "dt": "1/10",
                "steps": i.k, "q": [["1"]], "k": [["1"]], "v": [["1"]], "tokens": [tokens]}),
        ));
    }
    let v = serde_json::json!({"format": certificate::FORMAT, "claim": "clusters/boolean-limit",
        "profile": "quick", "precision": 128, "obligations": obligations,
        "data": data.into_iter().collect::<serde_json::Map<_, _>>()});
    certificate::parse(Path::new("instances.cert.json"), &v.to_string())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The kernel's decision of each instance's hypotheses (all three true: `True`; one
/// false: `False`; else `Unknown`), and Coq's verdict on each instance's limit
/// (`None` without coqc).
fn judge(is: &[Inst]) -> (Vec<Certainty>, Option<Vec<CoqVerdict>>) {
    let c = instance_cert(is);
    let kernel = coq::kernel_decisions(&c).unwrap_or_else(|e| panic!("{e}"));
    let by_kernel: Vec<Certainty> = kernel
        .decisions()
        .chunks(3)
        .map(|d| {
            if d.iter().all(|d| d.result() == Certainty::True) {
                Certainty::True
            } else if d.iter().any(|d| d.result() == Certainty::False) {
                Certainty::False
            } else {
                Certainty::Unknown
            }
        })
        .collect();
    if !coq::installed() {
        return (by_kernel, None);
    }
    let InstanceProof { witnesses, .. } = coq::check_instance(&c, &coq::Limits::DEFAULT)
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("the instances reach Coq");
    assert_eq!(witnesses.len(), is.len());
    for (w, i) in witnesses.iter().zip(is) {
        assert_eq!(w.label, i.label);
    }
    (
        by_kernel,
        Some(witnesses.into_iter().map(|w| w.verdict).collect()),
    )
}

/// The instances of the three tests below, judged in one Coq run (one compilation of
/// the lemma files; each test reads its own): the false instances, the A's, the grid.
fn all_instances() -> [Vec<Inst>; 4] {
    let false_ones = vec![
        inst("(S)", &["-1", "0", "1"], 1, None),
        inst("two in the band", &["-2", "-1/10", "1/10", "2"], 1, None),
        inst("unordered", &["1", "-1"], 1, None),
    ];
    let a_s = vec![
        inst("A = 15/16", &["-1", "0", "1"], 1, Some("15/16")),
        inst("A = 1/2", &["-1", "0", "1"], 1, Some("1/2")),
        inst("A = 1", &["-1", "0", "1"], 1, Some("1")),
    ];
    let bases: [&[&str]; 3] = [&["-1", "1"], &["-1", "0", "1"], &["-2", "-1", "1", "2"]];
    let mut grid = Vec::new();
    for base in bases {
        for scale in ["1/4", "1"] {
            for k in [1, 4] {
                let y0: Vec<String> = base.iter().map(|y| (q(y) * q(scale)).to_string()).collect();
                let y0: Vec<&str> = y0.iter().map(String::as_str).collect();
                grid.push(inst(&format!("y0 = {y0:?}, K = {k}"), &y0, k, None));
            }
        }
    }
    let forged = vec![
        inst(
            "a lone \" and a *) in the label",
            &["-1", "0", "1"],
            1,
            None,
        ),
        Inst {
            stated: Some(2),
            ..inst("two of three tokens stated", &["-1", "0", "1"], 1, None)
        },
    ];
    [false_ones, a_s, grid, forged]
}

type Judged = (Vec<Certainty>, Option<Vec<CoqVerdict>>);

/// One group of [`all_instances`]: the instances, the kernel's decision of each one's
/// hypotheses, and Coq's verdict on each one's limit (`None` without coqc).
struct Group {
    is: Vec<Inst>,
    kernel: Vec<Certainty>,
    coq: Option<Vec<CoqVerdict>>,
}

/// Group `g` of [`all_instances`], judged in the one run all groups share.
fn judged(g: usize, name: &str) -> Group {
    static ALL: std::sync::OnceLock<Judged> = std::sync::OnceLock::new();
    let (kernel, coq) = ALL.get_or_init(|| {
        let all: Vec<Inst> = all_instances().into_iter().flatten().collect();
        judge(&all)
    });
    let groups = all_instances();
    let from: usize = groups[..g].iter().map(Vec::len).sum();
    let is = groups.into_iter().nth(g).unwrap();
    let to = from + is.len();
    if coq.is_none() {
        have_coq(name);
    }
    Group {
        kernel: kernel[from..to].to_vec(),
        coq: coq.as_ref().map(|c| c[from..to].to_vec()),
        is,
    }
}

fn is_rejected(v: &CoqVerdict) -> bool {
    matches!(v, CoqVerdict::Rejected(_))
}

/// Two tokens in [−A, A] at K: the kernel finds the escape obligation false, and Coq
/// rejects the instance (its file states that every token after the first in the band
/// is above A, which the layer trace computed in Coq refutes); so does an instance
/// whose tokens are not in order. Beside them a true instance is proven.
#[test]
fn coq_rejects_a_false_boolean_instance() {
    let g = judged(0, "coq_rejects_a_false_boolean_instance");
    assert_eq!(
        g.kernel,
        [Certainty::True, Certainty::False, Certainty::False]
    );
    let Some(coq) = g.coq else { return };
    assert_eq!(coq[0], CoqVerdict::Proven);
    for (i, c) in coq.iter().enumerate().skip(1) {
        assert!(is_rejected(c), "{}: {c:?}", g.is[i].label);
    }
}

/// An A below the lemma's threshold (T): 15/16 for n = 3, where A² e^{A²/2+1} ≈ 3.71 <
/// 4 = 2(n − 1) (the lemma's A is 1), and 1/2. The escape and order hold with it, the
/// kernel finds (T) false, and Coq rejects the instance; with A = 1 it is proven.
#[test]
fn coq_rejects_an_a_below_the_lemmas_threshold() {
    let g = judged(1, "coq_rejects_an_a_below_the_lemmas_threshold");
    assert_eq!(
        g.kernel,
        [Certainty::False, Certainty::False, Certainty::True]
    );
    let Some(coq) = g.coq else { return };
    for (i, c) in coq.iter().take(2).enumerate() {
        assert!(is_rejected(c), "{}: {c:?}", g.is[i].label);
    }
    assert_eq!(coq[2], CoqVerdict::Proven);
}

/// On a grid of small instances (n = 2, 3, 4; y^0 a base configuration scaled by 1/4
/// or 1; K = 1 or 4; A the lemma's), Coq proves the limit of an instance exactly when
/// the kernel proves its hypotheses, and rejects it when the kernel finds one false.
#[test]
fn kernel_and_coq_agree_on_a_grid_of_small_boolean_instances() {
    let g = judged(
        2,
        "kernel_and_coq_agree_on_a_grid_of_small_boolean_instances",
    );
    // the kernel decides every instance, and the grid has both kinds
    assert!(!g.kernel.contains(&Certainty::Unknown), "{:?}", g.kernel);
    assert!(g.kernel.contains(&Certainty::True) && g.kernel.contains(&Certainty::False));
    let Some(coq) = g.coq else { return };
    for ((k, c), i) in g.kernel.iter().zip(&coq).zip(&g.is) {
        match k {
            Certainty::True => assert_eq!(*c, CoqVerdict::Proven, "{}", i.label),
            _ => assert!(is_rejected(c), "{}: {c:?}", i.label),
        }
    }
}

/// `export coq` writes, beside the obligations' file, the lemma files and the instance
/// file `verify --coq` proves, and the command that checks them by hand compiles them
/// in order (the data before the lemmas that read it).
#[test]
fn export_writes_the_instance_file_and_its_command() {
    let p = crate::util::root().join("reports/clusters/boolean-limit.cert.json");
    let c = coq::load(&p).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (f, cmd) = coq::export(&c, dir.path()).unwrap();
    let instance = format!("{}_instance.v", f.stem);
    for name in ["BooleanLimit.v", "BooleanInstance.v", instance.as_str()] {
        assert!(dir.path().join(name).is_file(), "{name}");
        assert!(
            cmd.contains(&format!("coqc -q -R . Attncheck {name}")),
            "{cmd}"
        );
    }
    let at = |s: &str| cmd.find(s).unwrap_or_else(|| panic!("{s} in {cmd}"));
    assert!(at(&format!("{}_data.v", f.stem)) < at("BooleanLimit.v"));
    assert!(at("BooleanLimit.v") < at("BooleanInstance.v"));
    assert!(at("BooleanInstance.v") < at(&instance));
    let text = std::fs::read_to_string(dir.path().join(&instance)).unwrap();
    // one block per witness of the certificate: 8 generic seeds and (S)
    assert_eq!(text.matches("Theorem rows_").count(), 9);
    assert!(text.contains("Theorem symmetric_8"));
    assert!(text.contains("Print Assumptions boolean_instances."));
    // a certificate of another claim gets no instance file
    let other =
        coq::load(&crate::util::root().join("reports/clusters/stability.cert.json")).unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let (_, cmd2) = coq::export(&other, dir2.path()).unwrap();
    assert!(!cmd2.contains("Boolean"), "{cmd2}");
}

/// Forged certificates (`verify` refuses them against the spec; `verify --coq --no-spec`
/// and `export coq --check` read them as they are): hypotheses written over two of a
/// datum's three tokens hold for the kernel, and Coq rejects the instance (its n is the
/// datum's, `ntok`), so no limit is ever proven from hypotheses on part of the tokens; a
/// witness label with a lone `"` and a `*)` (regression: a `"` inside a Coq comment
/// opened a string that ran the comment to the end of the file) is proven like any
/// other.
#[test]
fn coq_rejects_hypotheses_on_part_of_the_tokens_and_reads_any_label() {
    let g = judged(
        3,
        "coq_rejects_hypotheses_on_part_of_the_tokens_and_reads_any_label",
    );
    assert_eq!(g.kernel, [Certainty::True, Certainty::True]);
    let Some(coq) = g.coq else { return };
    assert_eq!(coq[0], CoqVerdict::Proven, "{}", g.is[0].label);
    assert!(is_rejected(&coq[1]), "{}: {:?}", g.is[1].label, coq[1]);
}

/// The y-layer of `y0` (Q = K = V = [[1]], Δt = h, `steps` steps) as the datum `Y`.
fn y_datum(y0: &[Rational], h: &Rational, steps: usize) -> attncheck::kernel::expr::Data {
    use attncheck::kernel::{layer_data::LayerData, Mat};
    let one = || Mat::identity(1);
    let tokens = Mat::from_rows(y0.iter().map(|y| vec![y.clone()]).collect());
    let l = LayerData::new(one(), one(), one(), h.clone(), steps, vec![tokens]).unwrap();
    [("Y".to_string(), attncheck::kernel::expr::Datum::Layer(l))].into()
}

/// The kernel's decision of `f` over the y-layer at 256 bits.
fn holds(f: &str, data: &attncheck::kernel::expr::Data) -> bool {
    attncheck::kernel::expr::check_with(f, 256, data) == Ok(Certainty::True)
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// The lemma's conclusion against a long run of the map (coq/BooleanLimit.v,
    /// `boolean_limit_rate`): on random instances (2 to 5 distinct tokens in [−3, 3] on a
    /// grid of 1/8, h = 1/10, 1/2 or 1), at the first K where the kernel certifies the
    /// hypotheses (A the lemma's, as the claim states them), every row of a token beyond A
    /// is within (n − 1) exp(−(1 + h/2)^m |y_i^K| g^K) of e_1 or e_n at step K + m, for
    /// every m up to the end of the run (g^K the gap at K between the last two tokens on
    /// that side). The distance is the exact one, Σ_{j ≠ t} P_ij with
    /// P_ij = 1 / Σ_l e^{y_i (y_l − y_j)}, each comparison decided by the kernel on its
    /// enclosures at 256 bits. The run is as long as the exponents stay within MPFR's
    /// range: max |y^k| ≤ 3 (1 + h)^k.
    #[test]
    fn the_lemmas_rate_holds_on_long_runs_of_random_instances(
        ticks in prop::collection::btree_set(-24i64..=24, 2..=5),
        h in prop::sample::select(vec!["1/10", "1/2", "1"]),
    ) {
        let y0: Vec<Rational> = ticks.iter().map(|&t| Rational::from((t, 8))).collect();
        let n = y0.len();
        let h = q(h);
        let a = lemma_a(n);
        // 2·(3 (1 + h)^T)² ≤ 10⁸ keeps every exponent of the softmax within range
        let steps = (7.7 / (1.0 + h.to_f64()).ln()).floor() as usize;
        let data = y_datum(&y0, &h, steps);
        let at_k = (1..=steps / 2).find(|&k| {
            holds(&order_formula("Y", k, n).to_string(), &data)
                && holds(&escape_formula("Y", k, n, &a).to_string(), &data)
        });
        // an instance whose tokens escape together by then is not an instance of the lemma
        prop_assume!(at_k.is_some());
        let k = at_k.unwrap();
        let af = a.to_string();
        let y = |step: &str, i: &str| format!("(layer-coord Y 0 {step} {i} 0)");
        let below = |i: usize| holds(&format!("(< {} (neg {af}))", y(&k.to_string(), &i.to_string())), &data);
        let above = |i: usize| holds(&format!("(> {} {af})", y(&k.to_string(), &i.to_string())), &data);
        let ks = k.to_string();
        let mut checked = 0;
        for i in 0..n {
            // the other tokens than the one the row tends to; the gap at K on that side; |y_i^K|
            let (others, g, s) = if above(i) {
                (
                    format!("0 {}", n - 2),
                    format!("(- {} {})", y(&ks, &(n - 1).to_string()), y(&ks, &(n - 2).to_string())),
                    y(&ks, &i.to_string()),
                )
            } else if below(i) {
                (
                    format!("1 {}", n - 1),
                    format!("(- {} {})", y(&ks, "1"), y(&ks, "0")),
                    format!("(neg {})", y(&ks, &i.to_string())),
                )
            } else {
                continue;
            };
            let step = format!("(+ {k} m)");
            let yi = y(&step, &i.to_string());
            let dist = format!(
                "(sum j {others} (/ 1 (sum l 0 {} (exp (* {yi} (- {} {}))))))",
                n - 1,
                y(&step, "l"),
                y(&step, "j")
            );
            let bound = format!("(* {} (exp (neg (* (exp (* m (ln (+ 1 (/ {h} 2))))) (* {s} {g})))))", n - 1);
            let f = format!("(forall m 0 {} (<= {dist} {bound}))", steps - k);
            prop_assert!(holds(&f, &data), "y0 = {:?}, h = {h}, K = {k}, token {i}: {f}", ticks);
            // the check can fail: a rate a thousand times faster is refuted at m = 0
            let faster = format!("(<= {} (* {} (exp (neg (* 1000 (* {s} {g}))))))", dist.replace(" m)", " 0)"), n - 1);
            prop_assert!(
                attncheck::kernel::expr::check_with(&faster, 256, &data) == Ok(Certainty::False),
                "y0 = {:?}, h = {h}, K = {k}, token {i}: {faster}", ticks
            );
            checked += 1;
        }
        // the hypotheses at K put every token but at most one beyond A
        prop_assert!(checked + 1 >= n, "y0 = {:?}: {checked} of {n} tokens beyond A at K = {k}", ticks);
    }
}
