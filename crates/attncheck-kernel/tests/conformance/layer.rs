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
use attncheck_kernel::layer_map::{attention, partition, residual_step};
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
        // every coordinate of every run (`layer-coord`, issue #39's hypotheses at K)
        for (r, m) in [(0, &x), (1, &y)] {
            for i in 0..n {
                for c in 0..d {
                    let term = format!("(layer-coord X {r} {k} {i} {c})");
                    let iv = eval_with(&term, 96, &data).unwrap();
                    assert!(
                        iv.contains_rational(m.at(i, c)) && iv.width_up() < 1e-20,
                        "{term}: {} not in {iv:?}",
                        m.at(i, c)
                    );
                }
            }
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

/// [`partition`] is the sum written out — every e^{s_ij} computed afresh, added in the order
/// (i, j) — bit for bit, though it reuses e^{s_ij} for s_ji when the two enclosures are
/// equal (QᵀK = I: the same products): on exact tokens and on iterates with width, for
/// QᵀK = I and a random (non-symmetric) QᵀK.
#[test]
fn partition_reusing_mirror_logits_is_the_fresh_sum() {
    let (n, d, prec) = (6, 3, 128);
    let v = random(41, d, d);
    let step_mat = v.scale(&q("1/10")).to_intervals(prec);
    for qk in [Mat::identity(d), random(42, d, d)] {
        let qk_t = qk.transpose().to_intervals(prec);
        let mut x = random(43, n, d).to_intervals(prec);
        for _ in 0..4 {
            let mut want = Interval::zero(prec);
            for i in 0..n {
                let mut a = vec![Interval::zero(prec); d];
                attncheck_kernel::layer_map::mat_vec_into(&qk_t, &x[i * d..(i + 1) * d], d, &mut a);
                for j in 0..n {
                    let mut s = &a[0] * &x[j * d];
                    for c in 1..d {
                        s.add_assign(&(&a[c] * &x[j * d + c]));
                    }
                    let mut lo = rug::Float::with_val(prec, s.lo());
                    let mut hi = rug::Float::with_val(prec, s.hi());
                    lo.exp_round(rug::float::Round::Down);
                    hi.exp_round(rug::float::Round::Up);
                    want.add_assign(&Interval::from_endpoints(lo, hi));
                }
            }
            let got = partition(&qk_t, &x, n, d, prec);
            assert_eq!((got.lo(), got.hi()), (want.lo(), want.hi()));
            assert_eq!(got.prec(), want.prec());
            let p = attention(&qk_t, &x, n, d, prec);
            x = residual_step(&step_mat, &x, &p, (n, d), prec, true);
        }
    }
}

/// [`partition`] reuses e^{s_ji} for s_ij only when both ends agree: with QᵀK = [[0, 1], [0, 0]]
/// (s_ij = x_i0·x_j1) two tokens give s_01 and s_10 that share one end only — the upper
/// (s_01 = [4, 4], s_10 = [1, 2]·[1, 2] = [1, 4]) or the lower (s_01 = [2, 2], s_10 = [2, 4]).
/// Reusing e^{[4, 4]} for [1, 4] would lose the tokens where s_10 < 4 (the sum's lower end too
/// high), and e^{[2, 2]} for [2, 4] those where s_10 > 2: the result must be the fresh sum, bit
/// for bit, and contain the sum at the corner tokens. The random tests above never give a pair
/// that shares one end only (cargo mutants: `same_enclosure`'s `&&` → `||` and `==` → `!=` of
/// either end lived).
#[test]
fn partition_reuses_a_mirror_logit_only_when_both_ends_agree() {
    let prec = 128;
    let iv = |lo: i32, hi: i32| {
        Interval::from_endpoints(
            rug::Float::with_val(prec, lo),
            rug::Float::with_val(prec, hi),
        )
    };
    let m = Mat::from_rows(vec![
        vec![Rational::from(0), Rational::from(1)],
        vec![Rational::from(0), Rational::from(0)],
    ]);
    let qk_t = m.transpose().to_intervals(prec);
    // tokens as (x_00, x_01), (x_10, x_11), each end given; and the corner where the shared
    // end is not attained by s_10
    let cases = [
        ([iv(2, 2), iv(1, 2), iv(1, 2), iv(2, 2)], [2, 1, 1, 2]),
        ([iv(2, 2), iv(2, 2), iv(1, 2), iv(1, 1)], [2, 2, 2, 1]),
    ];
    for (x, corner) in cases {
        let got = partition(&qk_t, &x, 2, 2, prec);
        let mut want = Interval::zero(prec);
        for i in 0..2 {
            for j in 0..2 {
                let s = &x[2 * i] * &x[2 * j + 1];
                let mut lo = rug::Float::with_val(prec, s.lo());
                let mut hi = rug::Float::with_val(prec, s.hi());
                lo.exp_round(rug::float::Round::Down);
                hi.exp_round(rug::float::Round::Up);
                want.add_assign(&Interval::from_endpoints(lo, hi));
            }
        }
        assert_eq!((got.lo(), got.hi()), (want.lo(), want.hi()), "{x:?}");
        // Σ_ij e^{x_i0·x_j1} at the corner tokens, enclosed term by term at 256 bits
        let mut at = Interval::zero(256);
        for i in 0..2 {
            for j in 0..2 {
                let s = Interval::from_integer(256, &(corner[2 * i] * corner[2 * j + 1]).into());
                at.add_assign(&s.exp());
            }
        }
        assert!(
            got.lo() <= at.lo() && at.hi() <= got.hi(),
            "{x:?}: {got:?} ∌ {at:?}"
        );
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

// ----- the datum's validation, budgets, indices and caches ----------------------------

fn ones(rows: usize, cols: usize) -> Mat {
    Mat::from_rows(vec![vec![q("1"); cols]; rows])
}

/// Every shape check of `LayerData::new` at its edge: the field it names, and the
/// largest accepted value beside the smallest refused one.
#[test]
fn layer_datum_validation_names_the_field_at_each_edge() {
    use layer_data::LayerData;
    let i = |n| Mat::identity(n);
    let ok = |qm: Mat, km: Mat, v: Mat, dt: &str, steps: usize, runs: Vec<Mat>| {
        LayerData::new(qm, km, v, q(dt), steps, runs)
    };
    let field = |r: Result<LayerData, (String, String)>| r.map(|_| ()).unwrap_err().0;
    // v: d × d with 1 ≤ d ≤ 64
    assert_eq!(
        field(ok(
            ones(1, 0),
            ones(1, 0),
            Mat::zeros(0, 0),
            "1",
            1,
            vec![ones(1, 0)]
        )),
        "v"
    );
    assert_eq!(
        field(ok(
            ones(1, 2),
            ones(1, 2),
            ones(2, 3),
            "1",
            1,
            vec![ones(1, 2)]
        )),
        "v"
    );
    assert!(ok(ones(1, 64), ones(1, 64), i(64), "1", 1, vec![ones(1, 64)]).is_ok());
    assert_eq!(
        field(ok(
            ones(1, 65),
            ones(1, 65),
            i(65),
            "1",
            1,
            vec![ones(1, 65)]
        )),
        "v"
    );
    // q: m × d with 1 ≤ m ≤ 512
    assert_eq!(
        field(ok(
            Mat::zeros(0, 2),
            Mat::zeros(0, 2),
            i(2),
            "1",
            1,
            vec![ones(1, 2)]
        )),
        "q"
    );
    assert!(ok(ones(512, 2), ones(512, 2), i(2), "1", 1, vec![ones(1, 2)]).is_ok());
    assert_eq!(
        field(ok(
            ones(513, 2),
            ones(513, 2),
            i(2),
            "1",
            1,
            vec![ones(1, 2)]
        )),
        "q"
    );
    assert_eq!(
        field(ok(ones(1, 3), ones(1, 3), i(2), "1", 1, vec![ones(1, 2)])),
        "q"
    );
    // k: the shape of q
    assert_eq!(
        field(ok(ones(2, 2), ones(1, 2), i(2), "1", 1, vec![ones(1, 2)])),
        "k"
    );
    assert_eq!(
        field(ok(ones(1, 2), ones(1, 3), i(2), "1", 1, vec![ones(1, 2)])),
        "k"
    );
    // dt > 0
    assert_eq!(field(ok(i(2), i(2), i(2), "0", 1, vec![ones(1, 2)])), "dt");
    assert_eq!(
        field(ok(i(2), i(2), i(2), "-1/8", 1, vec![ones(1, 2)])),
        "dt"
    );
    assert!(ok(i(2), i(2), i(2), "1/1000000", 1, vec![ones(1, 2)]).is_ok());
    // 1 ≤ steps ≤ 100 000
    assert_eq!(
        field(ok(i(1), i(1), i(1), "1", 0, vec![ones(1, 1)])),
        "steps"
    );
    assert!(ok(i(1), i(1), i(1), "1", 100_000, vec![ones(1, 1)]).is_ok());
    assert_eq!(
        field(ok(i(1), i(1), i(1), "1", 100_001, vec![ones(1, 1)])),
        "steps"
    );
    // 1 to 4 runs
    assert_eq!(field(ok(i(1), i(1), i(1), "1", 1, vec![])), "tokens");
    assert!(ok(i(1), i(1), i(1), "1", 1, vec![ones(1, 1); 4]).is_ok());
    assert_eq!(
        field(ok(i(1), i(1), i(1), "1", 1, vec![ones(1, 1); 5])),
        "tokens"
    );
    // 1 ≤ n ≤ 512, and every run n × d
    assert_eq!(
        field(ok(i(1), i(1), i(1), "1", 1, vec![Mat::zeros(0, 1)])),
        "tokens[0]"
    );
    assert!(ok(i(1), i(1), i(1), "1", 1, vec![ones(512, 1)]).is_ok());
    assert_eq!(
        field(ok(i(1), i(1), i(1), "1", 1, vec![ones(513, 1)])),
        "tokens[0]"
    );
    assert_eq!(
        field(ok(i(1), i(1), i(1), "1", 1, vec![ones(3, 1), ones(2, 1)])),
        "tokens[1]"
    );
    assert_eq!(
        field(ok(
            i(2),
            i(2),
            i(2),
            "1",
            1,
            vec![ones(3, 2), ones(3, 2), ones(3, 1)]
        )),
        "tokens[2]"
    );
    // runs·steps·n²·d ≤ 2^24: 64² · 4096 = 2^24 is accepted, one step more is not
    assert_eq!(layer_data::MAX_COST, 1 << 24);
    assert!(ok(i(1), i(1), i(1), "1", 4096, vec![ones(64, 1)]).is_ok());
    let (f, reason) = ok(i(1), i(1), i(1), "1", 4097, vec![ones(64, 1)])
        .map(|_| ())
        .unwrap_err();
    assert_eq!(f, "steps");
    assert!(reason.contains("16781312"), "{reason}");
    assert!(
        ok(i(2), i(2), i(2), "1", 2048, vec![ones(32, 2); 4]).is_ok(),
        "4·2048·32²·2 = 2^24"
    );
    assert!(ok(i(2), i(2), i(2), "1", 2049, vec![ones(32, 2); 4]).is_err());
}

#[test]
fn layer_datum_accessors_and_equality() {
    use layer_data::LayerData;
    let (qm, km, v) = (random(1, 2, 3), random(2, 2, 3), random(3, 3, 3));
    let runs = vec![random(4, 5, 3), random(5, 5, 3)];
    let a = LayerData::new(qm.clone(), km.clone(), v.clone(), q("1/8"), 7, runs.clone()).unwrap();
    assert_eq!((a.n(), a.d(), a.steps()), (5, 3, 7));
    assert_eq!((a.q(), a.k(), a.v(), a.dt()), (&qm, &km, &v, &q("1/8")));
    assert_eq!(a.runs(), &runs[..]);
    assert_eq!(a.v_frob2(), v.frobenius_sq());
    assert_eq!(a.qk_frob2(), qm.transpose().mul(&km).frobenius_sq());
    assert_eq!(a.v_frob2(), v.frobenius_sq(), "computed once, the same");
    let same =
        LayerData::new(qm.clone(), km.clone(), v.clone(), q("1/8"), 7, runs.clone()).unwrap();
    assert_eq!(a, same);
    let other = |qm: &Mat, km: &Mat, v: &Mat, dt: &str, steps: usize, runs: &[Mat]| {
        LayerData::new(
            qm.clone(),
            km.clone(),
            v.clone(),
            q(dt),
            steps,
            runs.to_vec(),
        )
        .unwrap()
    };
    assert_ne!(a, other(&km, &km, &v, "1/8", 7, &runs));
    assert_ne!(a, other(&qm, &qm, &v, "1/8", 7, &runs));
    assert_ne!(a, other(&qm, &km, &v.scale(&q("2")), "1/8", 7, &runs));
    assert_ne!(a, other(&qm, &km, &v, "1/9", 7, &runs));
    assert_ne!(a, other(&qm, &km, &v, "1/8", 8, &runs));
    assert_ne!(a, other(&qm, &km, &v, "1/8", 7, &runs[..1]));
    let dbg = format!("{a:?}");
    assert!(
        dbg.contains("n: 5") && dbg.contains("d: 3") && dbg.contains("runs: 2"),
        "{dbg}"
    );
}

/// With Q = 0 (uniform attention) the iterates are exact rationals: every pair of four
/// runs, asked in either order, encloses the exact max_i ‖x_i^(r) − x_i^(s)‖² (the pair's
/// index among the lexicographic pairs is computed, not searched).
#[test]
fn layer_datum_distances_of_every_pair_of_four_runs() {
    let (n, d, steps) = (3, 2, 4);
    let v = random(61, d, d);
    let runs: Vec<Mat> = (0..4).map(|r| random(70 + r, n, d)).collect();
    let data = layer(
        Mat::zeros(d, d),
        Mat::identity(d),
        v.clone(),
        "1/8",
        steps,
        runs.clone(),
    );
    let mut xs = runs;
    for k in 0..=steps {
        for r in 0..4 {
            for s in 0..4 {
                if r == s {
                    continue;
                }
                let diff = xs[r].add(&xs[s].scale(&q("-1")));
                let exact = (0..n)
                    .map(|i| {
                        diff.row(i)
                            .iter()
                            .map(|x| Rational::from(x * x))
                            .sum::<Rational>()
                    })
                    .max()
                    .unwrap();
                let t = format!("(layer-max-sqdist X {r} {s} {k})");
                let iv = eval_with(&t, 96, &data).unwrap();
                assert!(iv.contains_rational(&exact), "{t}: {exact} not in {iv:?}");
                assert!(iv.width_up() < 1e-20, "{t}: {iv:?}");
            }
        }
        xs = xs.iter().map(|x| uniform_attention_step(x, &v)).collect();
    }
}

/// Indices: exact integers in range, named in the error; the dual's bracket, row and d.
#[test]
fn layer_datum_queries_refuse_bad_indices() {
    use layer_data::{LayerData, QueryError};
    let l = LayerData::new(
        Mat::identity(2),
        Mat::identity(2),
        Mat::identity(2),
        q("1/10"),
        3,
        vec![random(1, 3, 2), random(2, 3, 2)],
    )
    .unwrap();
    let z = Rational::new;
    let one = || Rational::from(1);
    assert!(l.max_sqnorm(64, &q("1"), &q("3")).is_ok());
    for (r, k, want) in [
        (
            "2",
            "0",
            QueryError::Run {
                run: q("2"),
                runs: 2,
            },
        ),
        (
            "-1",
            "0",
            QueryError::Run {
                run: q("-1"),
                runs: 2,
            },
        ),
        (
            "1/2",
            "0",
            QueryError::Run {
                run: q("1/2"),
                runs: 2,
            },
        ),
        (
            "0",
            "4",
            QueryError::Step {
                step: q("4"),
                steps: 3,
            },
        ),
        (
            "0",
            "-1",
            QueryError::Step {
                step: q("-1"),
                steps: 3,
            },
        ),
        (
            "0",
            "3/2",
            QueryError::Step {
                step: q("3/2"),
                steps: 3,
            },
        ),
    ] {
        assert_eq!(l.max_sqnorm(64, &q(r), &q(k)), Err(want.clone()), "{r} {k}");
        assert_eq!(l.partition(64, &q(r), &q(k)), Err(want), "{r} {k}");
    }
    assert_eq!(
        l.max_sqdist(64, &z(), &z(), &z()),
        Err(QueryError::SameRun(0))
    );
    assert_eq!(
        l.max_sqdist(64, &one(), &one(), &z()),
        Err(QueryError::SameRun(1))
    );
    assert!(l.max_sqdist(64, &one(), &z(), &q("3")).is_ok());
    assert!(matches!(
        l.max_sqdist(64, &q("2"), &z(), &z()),
        Err(QueryError::Run { .. })
    ));
    assert!(matches!(
        l.max_sqdist(64, &z(), &q("2"), &z()),
        Err(QueryError::Run { .. })
    ));
    assert!(matches!(
        l.max_sqdist(64, &z(), &one(), &q("4")),
        Err(QueryError::Step { .. })
    ));
    let dual = |lo: &str, hi: &str, i: &str| l.dual(64, &z(), &z(), &q(lo), &q(hi), &q(i), true);
    assert!(dual("0", "0", "1").is_ok(), "a point bracket");
    assert_eq!(
        dual("1", "0", "0"),
        Err(QueryError::Bracket {
            lo: q("1"),
            hi: q("0")
        })
    );
    assert_eq!(
        dual("0", "1", "2"),
        Err(QueryError::Row { row: q("2"), d: 2 })
    );
    assert_eq!(
        dual("0", "1", "-1"),
        Err(QueryError::Row { row: q("-1"), d: 2 })
    );
    assert_eq!(
        dual("0", "1", "1/2"),
        Err(QueryError::Row {
            row: q("1/2"),
            d: 2
        })
    );
    // d ≤ 16 for the duals: 16 is accepted, 17 is not
    let at = |d: usize| {
        LayerData::new(
            Mat::identity(d),
            Mat::identity(d),
            Mat::identity(d),
            q("1/10"),
            1,
            vec![ones(1, d)],
        )
        .unwrap()
        .dual(64, &z(), &z(), &z(), &one(), &z(), false)
    };
    assert!(at(16).is_ok());
    assert_eq!(at(17), Err(QueryError::DualDim(17)));
}

/// The budgets at a precision, with the cost or size they would have: one iteration
/// ≤ 4·2^24 (runs·K·n²·d·⌈p/128⌉), the stored enclosures ≤ 2^32 bits.
#[test]
fn layer_datum_budgets_name_what_they_would_cost() {
    use layer_data::{LayerData, QueryError};
    let z = Rational::new();
    // 2 runs · 1000 steps · 8² · 2 = 256 000 per unit of ⌈p/128⌉: 512 units at 2^16 bits
    let l = LayerData::new(
        Mat::identity(2),
        Mat::identity(2),
        Mat::identity(2),
        q("1/10"),
        1000,
        vec![ones(8, 2); 2],
    )
    .unwrap();
    let over = QueryError::Cost {
        prec: 1 << 16,
        cost: 131_072_000,
    };
    assert_eq!(l.max_sqnorm(1 << 16, &z, &z), Err(over.clone()));
    assert_eq!(l.partition(1 << 16, &z, &z), Err(over));
    // 262 units is the last within 4·2^24 = 67 108 864 = 262.14… · 256 000; 263 (p = 33 664) is over
    assert!(matches!(
        l.max_sqnorm(263 * 128, &z, &z),
        Err(QueryError::Cost {
            cost: 67_328_000,
            ..
        })
    ));
    // storage: (K + 1)·(runs + pairs)·2p bits for the norms and distances, (K + 1)·runs·w·2p
    // for a trace (w = 1 for the partition sum, 2 for a dual)
    let l = LayerData::new(
        Mat::identity(1),
        Mat::identity(1),
        Mat::identity(1),
        q("1/10"),
        20_000,
        vec![ones(1, 1); 4],
    )
    .unwrap();
    let p = 10_752; // 20 001 · (4 + 6) · 2 · 10 752 = 4 301 015 040 > 2^32
    assert_eq!(
        l.max_sqnorm(p, &z, &z),
        Err(QueryError::Stored {
            prec: p,
            stored: 4_301_015_040
        })
    );
    let p = 26_880; // 20 001 · 4 · 1 · 2 · 26 880 = 4 301 015 040
    assert_eq!(
        l.partition(p, &z, &z),
        Err(QueryError::Stored {
            prec: p,
            stored: 4_301_015_040
        })
    );
    let p = 13_440; // 20 001 · 4 · 2 · 2 · 13 440
    assert_eq!(
        l.dual(p, &z, &z, &z, &z, &z, true),
        Err(QueryError::Stored {
            prec: p,
            stored: 4_301_015_040
        })
    );
    // a coordinate trace stores every token's n·d coordinates per step: (K + 1)·runs·n·d·2p,
    // with n = 2 tokens of d = 3 (n·d = 6; not n + d = 5, not n/d = 0)
    let l = LayerData::new(
        Mat::identity(3),
        Mat::identity(3),
        Mat::identity(3),
        q("1/10"),
        1023,
        vec![ones(2, 3)],
    )
    .unwrap();
    let p = 400_000; // 1024 · 1 · 6 · 2 · 400 000 = 4 915 200 000 > 2^32 (with 5: 4 096 000 000 ≤ 2^32)
    assert_eq!(
        l.coord(p, &z, &z, &z, &z),
        Err(QueryError::Stored {
            prec: p,
            stored: 4_915_200_000
        })
    );
    // the messages say so
    assert!(QueryError::Traces.to_string().contains("at most 16"));
    assert!(QueryError::DualDim(17).to_string().contains("d ≤ 16"));
}

/// At most 16 traces per datum: the 16th is computed, the 17th refused, a cached one
/// still answered; the same query twice is the same enclosure.
#[test]
fn layer_datum_traces_sixteen_quantities_and_caches_them() {
    use layer_data::{LayerData, QueryError};
    let l = LayerData::new(
        Mat::identity(1),
        Mat::identity(1),
        Mat::identity(1),
        q("1/10"),
        2,
        vec![ones(2, 1)],
    )
    .unwrap();
    let z = Rational::new();
    assert_eq!(layer_data::MAX_TRACES, 16);
    for p in 0..16u32 {
        assert!(l.partition(64 + p, &z, &z).is_ok(), "trace {p}");
    }
    assert_eq!(l.partition(200, &z, &z), Err(QueryError::Traces));
    assert_eq!(
        l.partition(64, &z, &Rational::from(1)),
        l.partition(64, &z, &Rational::from(1))
    );
    assert!(l.partition(79, &z, &Rational::from(2)).is_ok(), "cached");
    // a clone shares the cache (and the limit)
    let c = l.clone();
    assert_eq!(c.partition(201, &z, &z), Err(QueryError::Traces));
    assert!(c.max_sqnorm(64, &z, &z).is_ok(), "norms are not traces");
}

/// The datum's cache keeps one iteration per precision: asked at 96 bits and then at
/// 160, the second answer is the 160-bit one, far narrower, not the 96-bit one cached
/// first (layer_data.rs's summary lookup `==` → `!=` lived: enclosures at two precisions
/// overlap either way, so only the width tells).
#[test]
fn a_layer_datum_answers_at_the_precision_asked_after_another_is_cached() {
    let (n, d) = (5, 3);
    let data = layer(
        random(7, d, d),
        random(8, d, d),
        random(9, d, d),
        "1/10",
        12,
        vec![random(10, n, d), random(11, n, d)],
    );
    for t in ["(layer-max-sqnorm X 1 12)", "(layer-max-sqdist X 0 1 12)"] {
        let a = eval_with(t, 96, &data).unwrap();
        let b = eval_with(t, 160, &data).unwrap();
        let c = eval_with(t, 96, &data).unwrap();
        assert!(
            b.width_up() * 1_000_000u32 < a.width_up(),
            "{t}: {a:?} at 96 bits, {b:?} at 160"
        );
        assert_eq!(a.width_up(), c.width_up(), "{t}: the 96-bit answer again");
    }
}

/// The budgets at their edges: an iteration costing exactly 4·2^24 is within its budget
/// (the query goes on, to the storage budget, which refuses it here), one unit more is
/// refused for its cost; a trace storing exactly 2^32 bits is within its budget (the
/// query goes on, to the trace count, full here), and refused for its size one step on.
/// (layer_data.rs's two comparisons `>` turned into `>=` lived: no test stood at an
/// edge.)
#[test]
fn layer_datum_budgets_admit_their_edges() {
    use layer_data::{LayerData, QueryError};
    let z = Rational::new();
    let datum = |runs: usize, steps: usize| {
        LayerData::new(
            Mat::identity(1),
            Mat::identity(1),
            Mat::identity(1),
            q("1/10"),
            steps,
            vec![ones(1, 1); runs],
        )
        .unwrap()
    };
    // 4 runs · 16 384 steps · 1 · 1 · ⌈p/128⌉ = 2^26 exactly at p = 1024·128
    let l = datum(4, 16_384);
    let p = 1024 * 128;
    assert!(matches!(
        l.max_sqnorm(p, &z, &z),
        Err(QueryError::Stored { prec, .. }) if prec == p
    ));
    assert_eq!(
        l.max_sqnorm(p + 1, &z, &z),
        Err(QueryError::Cost {
            prec: p + 1,
            cost: 4 * 16_384 * 1025
        })
    );
    // a partition trace stores (K + 1)·runs·1·2p bits: 512 · 4 · 2 · 2^20 = 2^32 exactly
    let l = datum(4, 511);
    for k in 0..16u32 {
        l.partition(64 + k, &z, &z).expect("a cheap trace");
    }
    assert_eq!(l.partition(1 << 20, &z, &z), Err(QueryError::Traces));
    assert_eq!(
        l.partition((1 << 20) + 1, &z, &z),
        Err(QueryError::Stored {
            prec: (1 << 20) + 1,
            stored: (1 << 32) + 512 * 4 * 2
        })
    );
}
