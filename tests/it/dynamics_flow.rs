//! The flow engine (src/dynamics/flow.rs, expm.rs, dot.rs): e^{tV} against closed
//! forms, RK4's order, x vs e^{tV}z, adaptive vs RK4, precision and thread-count
//! independence, and the block dot product against exact rationals.

use attncheck::dynamics::dot::{
    dot, dot_error_bound, mat_mul, mat_mul_block, mat_mul_blocks, mat_mul_to, BlockRows, Layout,
};
use attncheck::dynamics::expm::{expm, expm_vec};
use attncheck::dynamics::flow::{
    dopri5, rk4, softmax_point, Flow, FlowError, FlowOptions, FlowResult, Tolerances, Vars,
};
use attncheck::dynamics::model::{random_dyadic, Mat, System};
use proptest::prelude::*;
use rug::{Float, Rational};

fn q(n: i64, d: i64) -> Rational {
    Rational::from((n, d))
}

/// max_k |a_k − b_k| as a float (exact differences of the floats' values).
fn max_diff(a: &[Float], b: &[Float]) -> Float {
    let mut m = Float::new(64);
    for (x, y) in a.iter().zip(b) {
        let d = Float::with_val(64, x.to_rational().unwrap() - y.to_rational().unwrap()).abs();
        if d > m {
            m = d;
        }
    }
    m
}

fn max_abs(a: &[Float]) -> Float {
    let mut m = Float::new(64);
    for x in a {
        let d = Float::with_val(64, x.abs_ref());
        if d > m {
            m = d;
        }
    }
    m
}

fn two_pow(e: i32) -> Float {
    Float::with_val(64, Float::i_exp(1, e))
}

// ----- expm ----------------------------------------------------------------------

#[test]
fn expm_diagonal_matches_scalar_exp() {
    for prec in [128u32, 256] {
        let v = Mat::diag(&[q(1, 1), q(-1, 2), q(3, 1), q(0, 1)]);
        let t = q(7, 3);
        let e = expm(&v, &t, prec);
        let mut reference = vec![Float::new(prec + 64); 16];
        for (i, lam) in [q(1, 1), q(-1, 2), q(3, 1), q(0, 1)].iter().enumerate() {
            reference[i * 4 + i] = Float::with_val(prec + 64, Rational::from(lam * &t)).exp();
        }
        // relative to the largest entry e^7
        let tol = Float::with_val(64, max_abs(&reference) * two_pow(6 - prec as i32));
        assert!(max_diff(&e, &reference) <= tol, "prec {prec}");
    }
}

#[test]
fn expm_rotation_matches_cos_sin() {
    for prec in [128u32, 256] {
        let v = Mat::from_rows(vec![vec![q(0, 1), q(-1, 1)], vec![q(1, 1), q(0, 1)]]);
        for t in [q(5, 2), q(-31, 7), q(40, 1)] {
            let e = expm(&v, &t, prec);
            let tf = Float::with_val(prec + 64, &t);
            let (c, s) = (tf.clone().cos(), tf.sin());
            let reference = vec![c.clone(), Float::with_val(prec + 64, -&s), s, c];
            assert!(
                max_diff(&e, &reference) <= two_pow(12 - prec as i32),
                "prec {prec} t {t}"
            );
        }
    }
}

#[test]
fn expm_nilpotent_is_a_finite_sum() {
    for prec in [128u32, 256] {
        // N³ = 0: e^{tN} = I + tN + t²N²/2, exactly
        let n = Mat::from_rows(vec![
            vec![q(0, 1), q(3, 2), q(-1, 4)],
            vec![q(0, 1), q(0, 1), q(5, 1)],
            vec![q(0, 1), q(0, 1), q(0, 1)],
        ]);
        let t = q(9, 4);
        let tn = n.scale(&t);
        let exact = Mat::identity(3).add(&tn).add(&tn.mul(&tn).scale(&q(1, 2)));
        let e = expm(&n, &t, prec);
        let reference: Vec<Float> = exact
            .data
            .iter()
            .map(|x| Float::with_val(prec + 64, x))
            .collect();
        assert!(
            max_diff(&e, &reference) <= two_pow(10 - prec as i32),
            "prec {prec}"
        );
    }
}

#[test]
fn expm_vec_applies_to_each_row() {
    let v = Mat::diag(&[q(1, 1), q(-2, 1)]);
    let x: Vec<Float> = [1, 2, -3, 4]
        .iter()
        .map(|&k| Float::with_val(128, k))
        .collect();
    let y = expm_vec(&v, &q(1, 2), &x, 128);
    let e = |k: i64, c: i64| Float::with_val(192, Float::with_val(192, q(c, 2)).exp() * k);
    let reference = vec![e(1, 1), e(2, -2), e(-3, 1), e(4, -2)];
    assert!(max_diff(&y, &reference) <= two_pow(-118));
}

// ----- RK4 -------------------------------------------------------------------------

/// Q = K = 0: P = J/n, so x' = V·mean(x) and, with V = diag(λ),
/// x_i(t) = x_i(0) + (e^{tλ} − 1)·mean(x(0)) coordinatewise.
fn uniform_system() -> (System, Mat, Vec<Rational>) {
    let lam = vec![q(1, 1), q(-1, 2)];
    let sys = System::new(Mat::zeros(2, 2), Mat::zeros(2, 2), Mat::diag(&lam));
    let x0 = Mat::from_rows(vec![
        vec![q(1, 2), q(-3, 4)],
        vec![q(2, 1), q(1, 8)],
        vec![q(-1, 1), q(5, 4)],
    ]);
    (sys, x0, lam)
}

fn uniform_exact(x0: &Mat, lam: &[Rational], t: &Rational, vars: Vars, prec: u32) -> Vec<Float> {
    let n = x0.rows;
    let mut out = Vec::new();
    for i in 0..n {
        for (k, l) in lam.iter().enumerate() {
            let mean = (0..n).map(|j| x0.at(j, k).clone()).sum::<Rational>() / Rational::from(n);
            let g = Float::with_val(prec, Rational::from(l * t)).exp();
            let x = Float::with_val(prec, &g - 1u32) * &mean + x0.at(i, k);
            out.push(match vars {
                Vars::X => x,
                Vars::Z => x / g,
            });
        }
    }
    out
}

#[test]
fn rk4_is_fourth_order_on_the_uniform_attention_system() {
    let (sys, x0, lam) = uniform_system();
    let t = q(2, 1);
    for vars in [Vars::X, Vars::Z] {
        let exact = uniform_exact(&x0, &lam, &t, vars, 256);
        let errs: Vec<Float> = [q(1, 10), q(1, 20), q(1, 40)]
            .iter()
            .map(|h| {
                let r = rk4(&sys, &x0, &t, h, &FlowOptions::new(128, vars), |_| {}).unwrap();
                max_diff(&r.state, &exact)
            })
            .collect();
        for w in errs.windows(2) {
            let ratio = Float::with_val(64, &w[0] / &w[1]);
            assert!(
                ratio > 14 && ratio < 18,
                "{vars:?}: error ratio {ratio} (errors {errs:?})"
            );
        }
    }
}

#[test]
fn rk4_p_is_uniform_and_rows_sum_to_one() {
    let (sys, x0, _) = uniform_system();
    let r = rk4(
        &sys,
        &x0,
        &q(1, 1),
        &q(1, 10),
        &FlowOptions::new(128, Vars::Z),
        |f| {
            for x in f.p {
                let d = Float::with_val(128, x - Rational::from((1, 3))).abs();
                assert!(d <= two_pow(-120));
            }
        },
    )
    .unwrap();
    assert_eq!(r.steps, 10);
    assert_eq!(r.rhs_evals, 40);
}

#[test]
fn rk4_observer_sees_every_step_with_exact_times() {
    let (sys, x0, _) = uniform_system();
    let mut times = Vec::new();
    rk4(
        &sys,
        &x0,
        &q(1, 2),
        &q(1, 10),
        &FlowOptions::new(64, Vars::X),
        |f| {
            times.push(f.t_exact.clone());
            assert_eq!(f.state.len(), 6);
            assert_eq!(f.p.len(), 9);
            assert!(f.etv.is_none());
        },
    )
    .unwrap();
    assert_eq!(times, (0..=5).map(|k| q(k, 10)).collect::<Vec<_>>());
}

#[test]
fn rk4_rejects_bad_steps_and_shapes() {
    let (sys, x0, _) = uniform_system();
    let o = FlowOptions::new(128, Vars::Z);
    assert!(matches!(
        rk4(&sys, &x0, &q(1, 1), &q(3, 10), &o, |_| {}),
        Err(FlowError::StepDoesNotDivide { .. })
    ));
    assert!(matches!(
        rk4(&sys, &x0, &q(1, 1), &q(0, 1), &o, |_| {}),
        Err(FlowError::NonPositiveStep { .. })
    ));
    assert!(matches!(
        rk4(&sys, &x0, &q(-1, 1), &q(1, 10), &o, |_| {}),
        Err(FlowError::NegativeTime { .. })
    ));
    let bad = Mat::zeros(3, 5);
    assert!(matches!(
        rk4(&sys, &bad, &q(1, 1), &q(1, 10), &o, |_| {}),
        Err(FlowError::Shape { .. })
    ));
    assert!(matches!(
        Flow::new(&sys, FlowOptions::new(8, Vars::Z)),
        Err(FlowError::Precision { .. })
    ));
}

// ----- random systems: x vs e^{tV}z, adaptive vs RK4, precisions, threads ----------

fn random_system(seed: u64, n: usize, d: usize) -> (System, Mat) {
    let m = |s: u64, r: usize| random_dyadic("m", r, d, "-1", "1", s, 12).unwrap();
    let sys = System::new(m(seed, d), m(seed + 1, d), m(seed + 2, d));
    (sys, m(seed + 3, n))
}

fn norm_inf(e: &[Float], d: usize) -> Float {
    let mut best = Float::new(64);
    for r in 0..d {
        let mut s = Float::new(64);
        for x in &e[r * d..(r + 1) * d] {
            s += Float::with_val(64, x.abs_ref());
        }
        if s > best {
            best = s;
        }
    }
    best
}

#[test]
fn x_agrees_with_etv_z_within_ten_error_estimates() {
    let (sys, x0) = random_system(11, 5, 3);
    let t = q(2, 1);
    let tol = Tolerances::new(q(1, 1_000_000_000_000), q(1, 1_000_000_000_000));
    let rx = dopri5(&sys, &x0, &t, &FlowOptions::new(128, Vars::X), &tol, |_| {}).unwrap();
    let rz = dopri5(&sys, &x0, &t, &FlowOptions::new(128, Vars::Z), &tol, |_| {}).unwrap();
    assert_eq!(rx.t, t);
    assert_eq!(rz.t, t);
    let e = rz.etv.as_ref().unwrap();
    let est = Float::with_val(
        64,
        rx.err_est.as_ref().unwrap() + norm_inf(e, 3) * rz.err_est.as_ref().unwrap(),
    );
    let diff = max_diff(&rx.x(), &rz.x());
    assert!(diff > 0, "independent runs should differ slightly");
    assert!(
        diff <= Float::with_val(64, &est * 10u32),
        "diff {diff} > 10 × est {est}"
    );
    // and back: z from the x run
    let dz = max_diff(&rx.z(&sys), &rz.state);
    assert!(
        dz <= Float::with_val(64, &est * 10u32)
            * norm_inf(&expm(&sys.v, &Rational::from(-&t), 64), 3)
    );
}

#[test]
fn adaptive_agrees_with_rk4_within_the_rk4_error() {
    let (sys, x0) = random_system(23, 6, 3);
    let t = q(3, 2);
    let o = FlowOptions::new(128, Vars::Z);
    let r1 = rk4(&sys, &x0, &t, &q(1, 20), &o, |_| {}).unwrap();
    let r2 = rk4(&sys, &x0, &t, &q(1, 40), &o, |_| {}).unwrap();
    let tol = Tolerances::new(q(1, 1 << 50), q(1, 1 << 50));
    let ra = dopri5(&sys, &x0, &t, &o, &tol, |_| {}).unwrap();
    // Richardson: err(h/2) ≈ |r(h) − r(h/2)|/15
    let richardson = max_diff(&r1.state, &r2.state);
    let d = max_diff(&r2.state, &ra.state);
    assert!(
        d <= Float::with_val(64, &richardson / 5u32),
        "{d} vs {richardson}"
    );
    assert!(ra.rejected < ra.steps);
    assert!(max_diff(&r2.p, &ra.p) <= Float::with_val(64, &richardson * 100u32));
}

#[test]
fn two_precisions_agree() {
    let (sys, x0) = random_system(5, 6, 4);
    let t = q(2, 1);
    let a = rk4(
        &sys,
        &x0,
        &t,
        &q(1, 10),
        &FlowOptions::new(128, Vars::Z),
        |_| {},
    )
    .unwrap();
    let b = rk4(
        &sys,
        &x0,
        &t,
        &q(1, 10),
        &FlowOptions::new(256, Vars::Z),
        |_| {},
    )
    .unwrap();
    let scale = max_abs(&b.state);
    assert!(max_diff(&a.state, &b.state) <= Float::with_val(64, scale * two_pow(-110)));
    assert!(max_diff(&a.p, &b.p) <= two_pow(-100));
}

#[test]
fn centered_and_plain_evaluations_agree() {
    let (sys, x0) = random_system(8, 5, 3);
    let t = q(1, 1);
    let mut o = FlowOptions::new(128, Vars::Z);
    let a = rk4(&sys, &x0, &t, &q(1, 10), &o, |_| {}).unwrap();
    o.centered = false;
    let b = rk4(&sys, &x0, &t, &q(1, 10), &o, |_| {}).unwrap();
    assert!(max_diff(&a.state, &b.state) <= two_pow(-110));
}

fn run_in_pool(threads: usize, sys: &System, x0: &Mat, vars: Vars) -> FlowResult {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        rk4(
            sys,
            x0,
            &q(3, 1),
            &q(1, 10),
            &FlowOptions::new(128, vars),
            |_| {},
        )
        .unwrap()
    })
}

#[test]
fn results_are_bit_identical_for_one_and_two_threads() {
    let (sys, x0) = random_system(101, 16, 16);
    for vars in [Vars::Z, Vars::X] {
        let a = run_in_pool(1, &sys, &x0, vars);
        let b = run_in_pool(2, &sys, &x0, vars);
        assert_eq!(a.state, b.state, "{vars:?}");
        assert_eq!(a.p, b.p, "{vars:?}");
        assert!(a
            .state
            .iter()
            .zip(&b.state)
            .all(|(x, y)| x.prec() == y.prec()));
    }
}

#[test]
fn two_particle_example_matches_the_reference_table_at_t_10_and_20() {
    // clusters.md §4, ε = 0.1, V = Q = K = I: b(10) = 0.11180282, P_12(10) = 0.49375039,
    // b(20) = 0.12909705, P_12(20) = 0.49166775 (8 digits)
    let sys = System::new(Mat::identity(2), Mat::identity(2), Mat::identity(2));
    let x0 = Mat::from_rows(vec![vec![q(1, 1), q(1, 10)], vec![q(1, 1), q(-1, 10)]]);
    let mut seen = Vec::new();
    rk4(
        &sys,
        &x0,
        &q(20, 1),
        &q(1, 50),
        &FlowOptions::new(160, Vars::Z),
        |f| {
            if *f.t_exact == 10 || *f.t_exact == 20 {
                let e = f.etv.unwrap();
                let b = Float::with_val(160, &e[2] * &f.state[0])
                    + Float::with_val(160, &e[3] * &f.state[1]);
                seen.push((b, f.p[1].clone()));
            }
        },
    )
    .unwrap();
    let close = |x: &Float, r: f64| {
        let r = Float::with_val(64, r);
        Float::with_val(64, (Float::with_val(64, x - &r) / &r).abs()) < 2e-7
    };
    assert!(
        close(&seen[0].0, 0.11180282) && close(&seen[0].1, 0.49375039),
        "{seen:?}"
    );
    assert!(
        close(&seen[1].0, 0.12909705) && close(&seen[1].1, 0.49166775),
        "{seen:?}"
    );
}

#[test]
fn softmax_point_handles_huge_logit_gaps() {
    // gap 10^5: p_2 = e^{−10^5}/(1 + e^{−10^5}), far below f64's range
    let l = vec![Float::with_val(128, 0), Float::with_val(128, -100_000)];
    let p = softmax_point(l, 128);
    let reference = Float::with_val(128, -100_000).exp();
    let rel = Float::with_val(
        64,
        (Float::with_val(128, &p[1] - &reference) / &reference).abs(),
    );
    assert!(rel < two_pow(-100));
}

// ----- the block dot product against exact rationals --------------------------------

fn to_floats(v: &[(i64, i32)], prec: u32) -> Vec<Float> {
    v.iter()
        .map(|&(m, e)| {
            let mut f = Float::with_val(prec, m);
            f <<= e;
            f
        })
        .collect()
}

fn exact_dot(a: &[Float], b: &[Float]) -> Rational {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.to_rational().unwrap() * y.to_rational().unwrap())
        .sum()
}

fn check_dot(a: &[Float], b: &[Float], prec: u32) {
    check_dot_layout(a, b, prec, Layout::Dense);
    check_dot_layout(a, b, prec, Layout::Sparse);
}

fn check_dot_layout(a: &[Float], b: &[Float], prec: u32, layout: Layout) {
    let n = a.len();
    let ab = BlockRows::from_floats_layout(a, 1, n, prec, layout).unwrap();
    let bb = BlockRows::from_floats_layout(b, 1, n, prec, layout).unwrap();
    let got = dot(&ab, 0, &bb, 0, prec);
    let exact = exact_dot(a, b);
    let err = (got.to_rational().unwrap() - &exact).abs();
    let bound = dot_error_bound(&got, &ab, 0, &bb, 0, prec)
        .to_rational()
        .unwrap();
    assert!(
        err <= bound,
        "{layout:?}, prec {prec}: error {err} > bound {bound}"
    );
    // and the bound is tight enough to mean something: ≤ 2^{−prec}|s| + len·2^{−prec−62}‖a‖‖b‖
    let scale = Float::with_val(64, max_abs(a) * max_abs(b)) * n as u32;
    let loose = Float::with_val(64, got.abs_ref()) + scale;
    assert!(
        bound
            <= Float::with_val(64, loose * two_pow(2 - prec as i32))
                .to_rational()
                .unwrap()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn block_dot_is_within_its_proven_bound(
        pairs in proptest::collection::vec(((any::<i64>(), -90i32..90), (any::<i64>(), -90i32..90)), 1..40),
        prec in prop_oneof![Just(53u32), Just(64u32), Just(128u32), Just(160u32), Just(200u32), Just(256u32), Just(300u32), Just(1000u32), Just(1100u32)],
    ) {
        let (a, b): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        check_dot(&to_floats(&a, prec), &to_floats(&b, prec), prec);
    }

    #[test]
    fn block_dot_handles_cancellation_and_zeros(
        xs in proptest::collection::vec(((any::<i32>()).prop_map(i64::from), -20i32..20), 1..30),
        prec in prop_oneof![Just(128u32), Just(256u32)],
    ) {
        // a·(−a) with zeros interleaved, then a mixed-sign sum that cancels to a small value
        let a = to_floats(&xs, prec);
        let mut b: Vec<Float> = a.iter().map(|x| Float::with_val(prec, -x)).collect();
        for (k, x) in b.iter_mut().enumerate() {
            if k % 3 == 1 { *x = Float::new(prec); }
        }
        check_dot(&a, &b, prec);
        let ones: Vec<Float> = (0..a.len()).map(|k| Float::with_val(prec, if k % 2 == 0 { 1 } else { -1 })).collect();
        check_dot(&a, &ones, prec);
    }
}

/// The sparse kernel's fixed limb counts (2 to 6 limbs, unrolled; 4 to 6 added for the
/// flow's expm at prec + 16 + 34 bits) and the generic one give, with the dense layout,
/// the same float bit for bit: all are the exact sum of the same mantissas, rounded once.
/// And `mat_mul_block` (a left factor converted once) is `mat_mul_to` bit for bit.
#[test]
fn block_dot_layouts_and_limb_counts_agree_bit_for_bit() {
    for prec in [53u32, 100, 128, 160, 192, 200, 256, 300, 320, 400, 500] {
        let a: Vec<Float> = (1..9)
            .map(|k| Float::with_val(prec, q(k * k - 30, 7)))
            .collect();
        let mut b: Vec<Float> = (1..9)
            .map(|k| Float::with_val(prec, q(100 - 17 * k, 3)))
            .collect();
        b[2] = Float::new(prec);
        let dot_in = |layout| {
            let ab = BlockRows::from_floats_layout(&a, 1, 8, prec, layout).unwrap();
            let bb = BlockRows::from_floats_layout(&b, 1, 8, prec, layout).unwrap();
            dot(&ab, 0, &bb, 0, prec)
        };
        let (dense, sparse) = (dot_in(Layout::Dense), dot_in(Layout::Sparse));
        assert_eq!(dense, sparse, "prec {prec}");
        assert_eq!(dense.prec(), prec);
        let ab = BlockRows::from_floats(&a, 2, 4, prec).unwrap();
        assert_eq!(
            mat_mul_block(&ab, &b, 2, prec, prec + 16).unwrap(),
            mat_mul_to(&a, &b, 2, 4, 2, prec, prec + 16).unwrap(),
            "prec {prec}"
        );
    }
}

#[test]
fn block_dot_of_random_rationals_rounded_at_precision() {
    // non-dyadic inputs: the floats nearest to k/7, the bound applies to the floats' values
    for prec in [128u32, 256] {
        let a: Vec<Float> = (1..60)
            .map(|k| Float::with_val(prec, q(k * k - 300, 7)))
            .collect();
        let b: Vec<Float> = (1..60)
            .map(|k| Float::with_val(prec, q(1000 - 17 * k, 3)))
            .collect();
        check_dot(&a, &b, prec);
    }
}

#[test]
fn mat_mul_matches_exact_products() {
    let prec = 128;
    let m = |s: u64, r: usize, c: usize| random_dyadic("m", r, c, "-3", "3", s, 30).unwrap();
    let (a, b) = (m(1, 7, 5), m(2, 5, 9));
    let exact = a.mul(&b);
    let fl = |x: &Mat| {
        x.data
            .iter()
            .map(|v| Float::with_val(prec, v))
            .collect::<Vec<_>>()
    };
    let c = mat_mul(&fl(&a), &fl(&b), 7, 5, 9, prec).unwrap();
    let reference: Vec<Float> = exact
        .data
        .iter()
        .map(|v| Float::with_val(prec + 64, v))
        .collect();
    assert!(max_diff(&c, &reference) <= two_pow(-120));
}

/// `BlockRows::assign_*` refills one holder (session 34: the flow's right-hand side
/// reuses its buffers): after conversions of other shapes, layouts and precisions
/// (dense rows with offsets, zero rows, a transposed matrix), every dot product equals
/// that of a fresh conversion, bit for bit; and `mat_mul_blocks` is `mat_mul_to`.
#[test]
fn reused_block_rows_give_the_fresh_conversions_products() {
    let mut held = BlockRows::empty();
    let mut other = BlockRows::empty();
    for (round, prec) in [(0, 300u32), (1, 53), (2, 256), (3, 128), (4, 53)].into_iter() {
        for len in [20usize, 3, 1, 17] {
            let rows = 3;
            let a: Vec<Float> = (0..rows * len)
                .map(|k| {
                    let k = k as i64;
                    if (k + round) % 5 == 0 || k / len as i64 == 1 && round % 2 == 1 {
                        Float::new(prec) // zero entries, and a whole zero row
                    } else {
                        Float::with_val(prec, q((k * k + round) * (1 - 2 * (k % 3)), 7 + k))
                    }
                })
                .collect();
            let b: Vec<Float> = a
                .iter()
                .rev()
                .map(|x| Float::with_val(prec, x * 3))
                .collect();
            for layout in [Layout::Dense, Layout::Sparse] {
                held.assign_floats_layout(&a, rows, len, prec, layout)
                    .unwrap();
                other
                    .assign_floats_layout(&b, rows, len, prec, layout)
                    .unwrap();
                let fa = BlockRows::from_floats_layout(&a, rows, len, prec, layout).unwrap();
                let fb = BlockRows::from_floats_layout(&b, rows, len, prec, layout).unwrap();
                for i in 0..rows {
                    assert_eq!(held.row_exp(i), fa.row_exp(i));
                    for j in 0..rows {
                        let got = dot(&held, i, &other, j, prec);
                        let want = dot(&fa, i, &fb, j, prec);
                        assert_eq!(got, want, "prec {prec}, len {len}, {layout:?}, ({i}, {j})");
                        assert_eq!(got.is_sign_negative(), want.is_sign_negative());
                    }
                }
            }
            held.assign_floats_transposed(&a, rows, len, prec).unwrap();
            let ft = BlockRows::from_floats_transposed(&a, rows, len, prec).unwrap();
            for i in 0..len {
                for j in 0..len {
                    assert_eq!(dot(&held, i, &ft, j, prec), dot(&ft, i, &ft, j, prec));
                }
            }
            // A (rows × rows) times B = a (rows × len), B given by the rows of Bᵀ
            let sq: Vec<Float> = (0..rows * rows)
                .map(|k| Float::with_val(prec, q(k as i64 - 4, 3 + round)))
                .collect();
            let ab = BlockRows::from_floats(&sq, rows, rows, prec).unwrap();
            assert_eq!(
                mat_mul_blocks(&ab, &held, prec + 16),
                mat_mul_to(&sq, &a, rows, rows, len, prec, prec + 16).unwrap(),
                "prec {prec}, len {len}"
            );
        }
    }
}

/// RK4 keeps one set of buffers for all its right-hand sides (session 34); in x
/// (no propagator) every frame's P is the fresh evaluation's P at that frame's state,
/// bit for bit — centred and plain logits, two precisions, after steps of other
/// shapes have filled the buffers — and the final state is the one a second run
/// computes.
#[test]
fn rk4_frames_equal_fresh_right_hand_sides() {
    for (seed, n, d, prec) in [
        (3u64, 4usize, 3usize, 128u32),
        (5, 2, 2, 240),
        (9, 6, 1, 53),
    ] {
        let (sys, x0) = random_system(seed, n, d);
        for centered in [true, false] {
            let mut o = FlowOptions::new(prec, Vars::X);
            o.centered = centered;
            let flow = Flow::new(&sys, o.clone()).unwrap();
            let mut frames = Vec::new();
            let res = rk4(&sys, &x0, &q(1, 2), &q(1, 16), &o, |fr| {
                frames.push((fr.state.to_vec(), fr.p.to_vec()));
            })
            .unwrap();
            assert_eq!(frames.len(), 9);
            for (k, (state, p)) in frames.iter().enumerate() {
                let fresh = flow.rhs(None, state).unwrap();
                assert_eq!(&fresh.p, p, "seed {seed}, centred {centered}, step {k}");
            }
            let again = rk4(&sys, &x0, &q(1, 2), &q(1, 16), &o, |_| {}).unwrap();
            assert_eq!(res.state, again.state);
            // z at t = 0: the propagator is the identity either way
            let oz = FlowOptions {
                vars: Vars::Z,
                ..o.clone()
            };
            let fz = Flow::new(&sys, oz.clone()).unwrap();
            let mut first = None;
            rk4(&sys, &x0, &q(1, 16), &q(1, 16), &oz, |fr| {
                if first.is_none() {
                    first = Some(fr.p.to_vec());
                }
            })
            .unwrap();
            let s0 = fz.initial_state(&x0).unwrap();
            let prop = fz.prop_at(&Rational::new()).unwrap();
            assert_eq!(first.unwrap(), fz.rhs(prop.as_ref(), &s0).unwrap().p);
        }
    }
}
