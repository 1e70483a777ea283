//! The layer map (D) of the kernel ([`layer_map`]) and the `layer` datum
//! ([`layer_data::LayerData`]) through the certificate language: containment of the exact
//! iterates (Q = 0: uniform attention, a linear map with rational iterates), the
//! partition sum against the same sum written out, precision overlap, the trace limit,
//! bad arguments, the collapse obligations failing when they should, and the paper's
//! orientation of P against reference digits (mpmath at 60 digits).

#![allow(clippy::needless_range_loop)] // naive index loops are the point

use crate::common::{q, random, uniform_attention_step};
use crate::layer_dual::layer;
use attncheck_kernel::expr::{check_with, eval_with};
use attncheck_kernel::layer_map::{attention, residual_step};
use attncheck_kernel::{layer_data, Certainty, Interval, Mat};
use proptest::prelude::*;
use rug::Rational;

/// The exact iterates of (D) with Q = 0 (P = J/n): x_i ← x_i + Δt·V·mean(x) in the layer
/// form, x_i ← x_i + Δt·V·(mean(x) − x_i) in the rescaled form (w_i = Σ_{j≠i} P_ij (x_j − x_i)).
/// The kernel's `attention` and `residual_step`, iterated on the enclosures at 96 bits, contain
/// them on every step (Arb-style containment; the application's `DiscreteMap` is built on
/// these two operations).
#[test]
fn residual_step_with_uniform_attention_contains_the_exact_iterates() {
    let (n, d, prec) = (4, 2, 96);
    let v = random(11, d, d);
    let dt = q("1/8");
    let a: Vec<Interval> = v.scale(&dt).to_intervals(prec);
    let qk_t = Mat::zeros(d, d).to_intervals(prec);
    for layer_form in [true, false] {
        let x0 = random(12, n, d);
        let mut s = x0.to_intervals(prec);
        let mut exact = x0;
        for _ in 0..20 {
            let p = attention(&qk_t, &s, n, d, prec);
            let third = Rational::from((1, n as u32));
            assert!(p.iter().all(|pij| pij.contains_rational(&third)), "{p:?}");
            s = residual_step(&a, &s, &p, (n, d), prec, layer_form);
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
                        let w = if layer_form {
                            mean[c].clone()
                        } else {
                            Rational::from(&mean[c] - exact.at(i, c))
                        };
                        acc += Rational::from(v.at(r, c) * &w);
                    }
                    next.data[i * d + r] += Rational::from(&dt * &acc);
                }
            }
            exact = next;
            for (e, iv) in exact.data.iter().zip(&s) {
                assert!(
                    iv.contains_rational(e),
                    "layer = {layer_form}: {e} not in {iv:?}"
                );
            }
        }
    }
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

fn max_sq(rows: &Mat) -> Rational {
    (0..rows.rows)
        .map(|i| {
            rows.row(i)
                .iter()
                .map(|x| Rational::from(x * x))
                .sum::<Rational>()
        })
        .max()
        .unwrap()
}

/// With Q = 0 the attention is exactly uniform and the layer is linear, so the exact
/// iterates are rational: every enclosure of the datum must contain them (both
/// operators, both runs, every step).
#[test]
fn layer_datum_encloses_the_exact_iterates_with_uniform_attention() {
    let (n, d, steps) = (4, 2, 15);
    let v = random(21, d, d);
    let (x0, y0) = (random(22, n, d), random(23, n, d));
    let data = layer(
        Mat::zeros(d, d),
        Mat::identity(d),
        v.clone(),
        "1/8",
        steps,
        vec![x0.clone(), y0.clone()],
    );
    let step = |x: &Mat| uniform_attention_step(x, &v);
    let (mut x, mut y) = (x0, y0);
    for k in 0..=steps {
        let diff = x.add(&y.scale(&q("-1")));
        for (term, exact) in [
            (format!("(layer-max-sqnorm X 0 {k})"), max_sq(&x)),
            (format!("(layer-max-sqnorm X 1 {k})"), max_sq(&y)),
            (format!("(layer-max-sqdist X 0 1 {k})"), max_sq(&diff)),
            (format!("(layer-max-sqdist X 1 0 {k})"), max_sq(&diff)),
            // Q = 0: every logit is 0, so the partition sum is n² exactly
            (format!("(layer-partition X 1 {k})"), Rational::from(n * n)),
        ] {
            let iv = eval_with(&term, 96, &data).unwrap();
            assert!(
                iv.contains_rational(&exact),
                "{term}: {exact} not in {iv:?}"
            );
        }
        x = step(&x);
        y = step(&y);
    }
    let exact = |t: &str| {
        attncheck_kernel::expr::eval_exact(t, 64, &data)
            .unwrap()
            .unwrap()
    };
    assert_eq!(exact("(layer-v-frob2 X)"), v.frobenius_sq());
    assert_eq!(exact("(layer-qk-frob2 X)"), Rational::new());
    assert_eq!(exact("(layer-dt X)"), q("1/8"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    /// MPFR-style: the datum's enclosures at p and p + 64 bits overlap (random Q, K, V).
    #[test]
    fn layer_datum_enclosures_at_p_and_p_plus_64_overlap(seed in 0u64..1000) {
        let (n, d) = (5, 3);
        let data = layer(random(seed, d, d), random(seed + 1, d, d), random(seed + 2, d, d), "1/10", 12,
            vec![random(seed + 3, n, d), random(seed + 4, n, d)]);
        for k in [0, 1, 6, 12] {
            for t in [format!("(layer-max-sqnorm X 1 {k})"), format!("(layer-max-sqdist X 0 1 {k})")] {
                let a = eval_with(&t, 96, &data).unwrap();
                let b = eval_with(&t, 160, &data).unwrap();
                prop_assert!(a.overlaps(&b), "{}", t);
            }
        }
    }
}

/// `layer-partition` at step 0 is Σ_ij e^{x_iᵀ QᵀK x_j} of the exact tokens: its enclosure
/// overlaps the same sum written with the exact logits as literals, and is tight.
#[test]
fn layer_partition_at_step_0_is_the_sum_of_exponentiated_logits() {
    let (n, d) = (4, 3);
    let (qm, km, x0) = (random(31, d, d), random(32, d, d), random(33, n, d));
    let data = layer(
        qm.clone(),
        km.clone(),
        random(34, d, d),
        "1/10",
        2,
        vec![x0.clone()],
    );
    let m = qm.transpose().mul(&km);
    let mut terms = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let mut s = Rational::new();
            for a in 0..d {
                for b in 0..d {
                    s += Rational::from(x0.at(i, a) * m.at(a, b)) * x0.at(j, b);
                }
            }
            terms.push(format!("(exp {s})"));
        }
    }
    let reference = eval_with(&format!("(+ {})", terms.join(" ")), 200, &data).unwrap();
    let got = eval_with("(layer-partition X 0 0)", 200, &data).unwrap();
    assert!(got.overlaps(&reference), "{got:?} vs {reference:?}");
    assert!(
        got.width_up().to_f64() < 1e-40 * got.hi_f64().abs(),
        "{got:?}"
    );
    // the decrease the collapse claim states is decided by the kernel, not assumed:
    // with V = 0 nothing moves, so 𝓛(x^1) ≤ 𝓛(x^0) cannot be proven strictly
    let still = layer(qm, km, Mat::zeros(d, d), "1/10", 2, vec![x0]);
    assert!(check_with(
        "(< (layer-partition X 0 1) (layer-partition X 0 0))",
        200,
        &still
    )
    .map(|c| !c.is_true())
    .unwrap_or(true));
}

/// A datum traces at most a bounded number of quantities (each its own iteration): a
/// formula asking for the partition sum at many precisions is refused, not run.
#[test]
fn layer_traces_are_bounded_per_datum() {
    let d = 2;
    let data = layer(
        Mat::identity(d),
        Mat::identity(d),
        Mat::identity(d),
        "1/10",
        2,
        vec![random(3, 3, d)],
    );
    let mut refused = None;
    for prec in (64..).step_by(8).take(layer_data::MAX_TRACES + 1) {
        if let Err(e) = eval_with("(layer-partition X 0 1)", prec, &data) {
            refused = Some(e);
        }
    }
    let e = refused.expect("the trace limit refuses the last precision");
    assert!(e.reason.contains("at most"), "{}", e.reason);
}

/// Bad indices, wrong kinds and wrong arities are evaluation errors, never panics.
#[test]
fn layer_operations_reject_bad_indices_without_panicking() {
    let d = 2;
    let data = layer(
        Mat::identity(d),
        Mat::identity(d),
        Mat::identity(d),
        "1/10",
        3,
        vec![random(1, 3, d)],
    );
    for (f, needle) in [
        ("(<= (layer-max-sqnorm X 0 4) 1)", "step 4"),
        ("(<= (layer-max-sqnorm X 0 -1) 1)", "step -1"),
        ("(<= (layer-max-sqnorm X 0 1/2) 1)", "step 1/2"),
        ("(<= (layer-max-sqnorm X 1 0) 1)", "run 1"),
        ("(<= (layer-max-sqnorm X 0 (sqrt 2)) 1)", "exact integer"),
        ("(<= (layer-max-sqdist X 0 0 0) 1)", "must differ"),
        ("(<= (layer-max-sqnorm X 0) 1)", "takes 3 argument"),
        ("(<= (layer-partition X 0 4) 1)", "step 4"),
        ("(<= (layer-partition X 1 0) 1)", "run 1"),
        ("(<= (layer-partition X 0 0 0) 1)", "takes 3 argument"),
        ("(<= (layer-dt Y) 1)", "no datum named `Y`"),
        ("(<= (gram-max-abs X) 1)", "expected a sign matrix"),
    ] {
        let e = check_with(f, 64, &data).unwrap_err();
        assert!(e.reason.contains(needle), "{f}: {}", e.reason);
    }
    // the evaluation-time budget: high precision on a large datum is refused, not run
    let big = layer(
        Mat::identity(d),
        Mat::identity(d),
        Mat::identity(d),
        "1/10",
        1000,
        vec![random(1, 8, d); 2],
    );
    let e = check_with("(<= (layer-max-sqnorm X 0 1) 1)", 1 << 16, &big).unwrap_err();
    assert!(e.reason.contains("would"), "{}", e.reason);
}

/// The kernel decides the collapse obligations, and they can fail: with V = +I the
/// tokens repel, 𝓛 grows and the ball bound breaks, and the kernel says so.
#[test]
fn collapse_obligations_fail_for_a_repulsive_v() {
    let d = 3;
    let x0 = random(7, 6, d);
    let data = layer(
        Mat::identity(d),
        Mat::identity(d),
        Mat::identity(d),
        "1/10",
        40,
        vec![x0],
    );
    let lyap = check_with(
        "(forall k 0 39 (<= (layer-partition X 0 (+ k 1)) (layer-partition X 0 k)))",
        128,
        &data,
    )
    .unwrap();
    assert!(lyap.is_false(), "{lyap:?}");
    let ball = check_with(
        "(forall k 1 40 (<= (layer-max-sqnorm X 0 k) (max (layer-max-sqnorm X 0 0) 1/100)))",
        128,
        &data,
    )
    .unwrap();
    assert!(ball.is_false(), "{ball:?}");
}

fn mat(rows: &[&[&str]]) -> Mat {
    Mat::from_rows(
        rows.iter()
            .map(|r| r.iter().map(|s| q(s)).collect())
            .collect(),
    )
}

/// A `layer` datum named X from exact data, for the certificate language.
fn layer_datum(
    qm: Mat,
    km: Mat,
    vm: Mat,
    dt: &str,
    steps: usize,
    x0: Mat,
) -> attncheck_kernel::expr::Data {
    use attncheck_kernel::expr::{Data, Datum};
    use attncheck_kernel::layer_data::LayerData;
    let x = LayerData::new(qm, km, vm, q(dt), steps, vec![x0]).unwrap();
    let mut data = Data::new();
    data.insert("X".into(), Datum::Layer(x));
    data
}

/// `DiscreteMap::attention` formed the logits x_jᵀ(QᵀK)x_i, the transposed attention,
/// so the kernel's `layer` datum iterated another map than the format's and the paper's
/// P_ij = softmax_j x_iᵀ(QᵀK)x_j whenever QᵀK is not symmetric (issue 23).
///
/// Reference digits from scripts/reference/discrete_map.py: the map written from the
/// paper's definition in mpmath at 60 digits, sharing no code with attncheck. Its output:
///
/// ```text
/// issue-23 [paper] k = 1: max_i |x_i|^2 = 4.58146359147840803534907465926
/// issue-23 [transposed] k = 1: max_i |x_i|^2 = 5.53760031204069401779513240752
/// second [paper] k = 1: max_i |x_i|^2 = 4.11468041389887659721222378728
/// second [paper] k = 2: max_i |x_i|^2 = 3.56814956883740664841742011335
/// second [transposed] k = 1: max_i |x_i|^2 = 4.11352501847573276585722343635
/// second [transposed] k = 2: max_i |x_i|^2 = 3.56206900743635928071086936116
/// ```
///
/// (The issue's own check, mpmath at 40 digits, gave 4.58146359147840803535.)
#[test]
fn the_layer_datum_iterates_the_papers_map_not_its_transpose() {
    use attncheck_kernel::expr;
    // Q = [[1, 2], [0, 1]], K = V = I, Δt = 1/2, x⁰ = ((1, 0), (1/2, 3/2)), one step
    let issue = layer_datum(
        mat(&[&["1", "2"], &["0", "1"]]),
        Mat::identity(2),
        Mat::identity(2),
        "1/2",
        1,
        mat(&[&["1", "0"], &["1/2", "3/2"]]),
    );
    // m = 2, d = 3, n = 3, Q ≠ K, V ≠ I, Δt = 1/4, two steps
    let second = layer_datum(
        mat(&[&["1", "-1/2", "0"], &["1/3", "1", "2"]]),
        mat(&[&["0", "1", "1"], &["1", "0", "-1/2"]]),
        mat(&[&["1", "0", "1/2"], &["0", "-1", "0"], &["1/4", "0", "1"]]),
        "1/4",
        2,
        mat(&[&["1", "0", "-1"], &["1/2", "1", "0"], &["-1", "1/4", "2"]]),
    );
    for (data, k, lo, hi, transposed) in [
        (
            &issue,
            1,
            "4.581463591478408035349",
            "4.581463591478408035350",
            "5.53760031204069401779513240752",
        ),
        (
            &second,
            1,
            "4.114680413898876597212",
            "4.114680413898876597213",
            "4.11352501847573276585722343635",
        ),
        (
            &second,
            2,
            "3.568149568837406648417",
            "3.568149568837406648418",
            "3.56206900743635928071086936116",
        ),
    ] {
        let m = format!("(layer-max-sqnorm X 0 {k})");
        for p in [128, 200] {
            let f = format!("(and (< {lo} {m}) (< {m} {hi}))");
            assert_eq!(
                expr::check_with(&f, p, data),
                Ok(Certainty::True),
                "{f} at {p} bits: {:?}",
                expr::eval_with(&m, p, data)
            );
            // the transposed map's value is certifiably not the datum's
            let f = format!("(= {m} {transposed})");
            assert_eq!(expr::check_with(&f, p, data), Ok(Certainty::False), "{f}");
        }
    }
}
