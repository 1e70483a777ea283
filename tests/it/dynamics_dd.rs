//! The flow's double-double tier (src/dynamics/dd.rs, ddmat.rs, ddflow.rs): the
//! error-free transformations exactly, every dd operation against MPFR at 256 bits
//! within its stated bound, the dd product against exact rationals, whole dd runs
//! against the 128-bit MPFR flow, and bit-identical results for every thread count
//! and instruction set.

use attncheck::dynamics::dd::{
    add, add_f64, div, exp, fast_two_sum, mul, mul_f64, sub, two_prod, two_sum, Dd, EXP_FLUSH, U,
};
use attncheck::dynamics::ddflow::{self, DdFlow};
use attncheck::dynamics::ddmat::{DdMat, Isa};
use attncheck::dynamics::flow::{rk4, FlowOptions, FlowResult, Vars};
use attncheck::dynamics::model::{random_dyadic, Mat, System};
use proptest::prelude::*;
use rug::{Float, Rational};

fn exact(a: f64) -> Rational {
    Rational::from_f64(a).unwrap()
}

/// |got − want| ≤ k·u²·|want|, in exact rationals (want given at 256 bits).
fn within(got: Dd, want: &Float, k: f64) -> bool {
    let g = got.to_rational().unwrap();
    let w = want.to_rational().unwrap();
    let err = Rational::from(&g - &w).abs();
    let bound = Rational::from_f64(k * U * U).unwrap() * w.abs();
    err <= bound
}

fn rel_err(got: Dd, want: &Float) -> f64 {
    let g = got.to_rational().unwrap();
    let w = want.to_rational().unwrap();
    let err = Rational::from(&g - &w).abs();
    (err / w.abs()).to_f64() / (U * U)
}

/// A normalised dd number from a mantissa, an exponent and a low-part fraction.
fn dd_of(m: f64, e: i32, f: f64) -> Dd {
    let hi = m * 2f64.powi(e);
    Dd::normalise(hi, hi * U * f)
}

fn dd_strategy(emin: i32, emax: i32) -> impl Strategy<Value = Dd> {
    (1.0f64..2.0, emin..emax, -1.0f64..1.0, any::<bool>()).prop_map(|(m, e, f, neg)| {
        let x = dd_of(m, e, f);
        if neg {
            -x
        } else {
            x
        }
    })
}

fn f256(x: Dd) -> Float {
    let mut f = Float::with_val(256, x.hi);
    f += x.lo;
    f
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn two_sum_and_fast_two_sum_are_exact(a in -1e30f64..1e30, b in -1e30f64..1e30) {
        let (s, e) = two_sum(a, b);
        prop_assert_eq!(s, a + b);
        prop_assert_eq!(exact(s) + exact(e), exact(a) + exact(b));
        let (x, y) = if a.abs() >= b.abs() { (a, b) } else { (b, a) };
        let (s2, e2) = fast_two_sum(x, y);
        prop_assert_eq!((s2, e2), (s, e));
    }

    #[test]
    fn two_prod_is_exact(a in -1e100f64..1e100, b in -1e100f64..1e100) {
        let (p, e) = two_prod(a, b);
        prop_assert_eq!(p, a * b);
        prop_assert_eq!(exact(p) + exact(e), exact(a) * exact(b));
    }

    #[test]
    fn add_sub_mul_div_are_within_their_bounds(x in dd_strategy(-60, 60), y in dd_strategy(-60, 60)) {
        let (fx, fy) = (f256(x), f256(y));
        let s = Float::with_val(256, &fx + &fy);
        if !s.is_zero() {
            prop_assert!(within(add(x, y), &s, 3.0 * (1.0 + 8.0 * U)), "add {}", rel_err(add(x, y), &s));
        }
        let dfr = Float::with_val(256, &fx - &fy);
        if !dfr.is_zero() {
            prop_assert!(within(sub(x, y), &dfr, 3.0 * (1.0 + 8.0 * U)));
        }
        let p = Float::with_val(256, &fx * &fy);
        prop_assert!(within(mul(x, y), &p, 5.0), "mul {}", rel_err(mul(x, y), &p));
        let q = Float::with_val(256, &fx / &fy);
        prop_assert!(within(div(x, y), &q, 12.0), "div {}", rel_err(div(x, y), &q));
        let pf = Float::with_val(256, &fx * y.hi);
        prop_assert!(within(mul_f64(x, y.hi), &pf, 2.0));
        let sf = Float::with_val(256, &fx + y.hi);
        if !sf.is_zero() {
            prop_assert!(within(add_f64(x, y.hi), &sf, 2.0));
        }
    }

    #[test]
    fn add_is_within_its_bound_under_cancellation(x in dd_strategy(-10, 10), k in 1u32..100, f in -1.0f64..1.0) {
        // y = −x plus a few ulps: the sum is tiny next to the operands
        let y = Dd::normalise(-x.hi, -x.lo + x.hi * U * U * f64::from(k) * f);
        let s = Float::with_val(256, f256(x) + f256(y));
        if !s.is_zero() {
            prop_assert!(within(add(x, y), &s, 3.0 * (1.0 + 8.0 * U)));
        }
    }

    #[test]
    fn exp_is_within_ten_u_squared(hi in -600.0f64..700.0, f in -1.0f64..1.0) {
        let x = Dd::normalise(hi, hi * U * f);
        let want = Float::with_val(256, f256(x).exp_ref());
        let got = exp(x);
        prop_assert!(within(got, &want, 10.0), "exp({hi}) rel err {} u²", rel_err(got, &want));
    }

    #[test]
    fn exp_of_small_arguments(hi in -1.0f64..1.0, f in -1.0f64..1.0) {
        let x = Dd::normalise(hi, hi * U * f);
        let want = Float::with_val(256, f256(x).exp_ref());
        prop_assert!(within(exp(x), &want, 10.0), "rel err {} u²", rel_err(exp(x), &want));
    }
}

#[test]
fn exp_flushes_below_minus_600_and_is_exact_at_zero() {
    assert_eq!(exp(Dd::from_f64(EXP_FLUSH - 1e-9)), Dd::ZERO);
    assert_eq!(exp(Dd::from_f64(-1e30)), Dd::ZERO);
    assert_eq!(exp(Dd::ZERO), Dd::ONE);
    assert!(exp(Dd::from_f64(EXP_FLUSH)).hi > 0.0);
    assert!(exp(Dd::from_f64(800.0)).hi.is_infinite());
    assert!(exp(Dd::from_f64(f64::NAN)).hi.is_nan());
}

#[test]
fn conversions_round_to_nearest_dd() {
    let third = Rational::from((1, 3));
    let t = Dd::from_rational(&third);
    let err = (t.to_rational().unwrap() - &third).abs();
    assert!(err <= Rational::from_f64(U * U / 3.0).unwrap());
    assert_eq!(t.to_float(128), Float::with_val(128, t.hi) + t.lo);
}

// ----- the product kernel -----------------------------------------------------------

fn random_dd_mat(seed: u64, rows: usize, cols: usize, zeros: bool) -> DdMat {
    let mut s = seed;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64) / ((1u64 << 53) as f64)
    };
    let vals: Vec<Dd> = (0..rows * cols)
        .map(|_| {
            let (m, e, f) = (
                next() * 2.0 - 1.0,
                (next() * 40.0) as i32 - 20,
                next() * 2.0 - 1.0,
            );
            if zeros && next() < 0.6 {
                Dd::ZERO
            } else {
                Dd::normalise(m * 2f64.powi(e), m * 2f64.powi(e) * U * f)
            }
        })
        .collect();
    DdMat::from_fn(rows, cols, |r, c| vals[r * cols + c])
}

#[test]
fn product_is_within_its_bound_against_exact_rationals() {
    for (seed, (r, k, c), zeros) in [
        (1, (5, 7, 3), false),
        (2, (9, 128, 19), false),
        (3, (4, 33, 8), true),
        (4, (13, 64, 17), true),
    ] {
        let a = random_dd_mat(seed, r, k, zeros);
        let b = random_dd_mat(seed + 100, k, c, false);
        let p = a.product(&b);
        let kf = k as f64;
        let g = |m: f64| m * U / (1.0 - m * U);
        let factor = g(4.0 * kf) * (3.0 * U + g(kf)) + U * U;
        for i in 0..r {
            for j in 0..c {
                let mut ex = Rational::new();
                let mut abs = Rational::new();
                for t in 0..k {
                    let x = a.get(i, t).to_rational().unwrap() * b.get(t, j).to_rational().unwrap();
                    abs += Rational::from(x.abs_ref());
                    ex += x;
                }
                let err = (p.get(i, j).to_rational().unwrap() - &ex).abs();
                assert!(
                    err <= abs * Rational::from_f64(factor).unwrap(),
                    "seed {seed} ({i}, {j})"
                );
            }
        }
    }
}

#[test]
fn product_is_bit_identical_on_every_instruction_set_and_thread_count() {
    let a = random_dd_mat(7, 67, 128, true);
    let b = random_dd_mat(8, 128, 45, false);
    let reference = a.product_in(&b, Isa::Scalar);
    for isa in [Isa::Auto, Isa::Avx2, Isa::Avx512] {
        if isa.available() {
            assert_eq!(a.product_in(&b, isa), reference, "{isa:?}");
        }
    }
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        assert_eq!(
            pool.install(|| a.product(&b)),
            reference,
            "{threads} threads"
        );
    }
}

// ----- whole runs against the MPFR flow ----------------------------------------------

fn random_system(seed: u64, n: usize, d: usize, identity_qk: bool) -> (System, Mat) {
    let m = |s: u64, r: usize| random_dyadic("m", r, d, "-1", "1", s, 12).unwrap();
    let (q, k) = if identity_qk {
        (Mat::identity(d), Mat::identity(d))
    } else {
        (m(seed, d), m(seed + 1, d))
    };
    let sys = System::new(q, k, m(seed + 2, d));
    (sys, m(seed + 3, n))
}

fn q(n: i64, d: i64) -> Rational {
    Rational::from((n, d))
}

/// max_k |a_k − b_k| / max_k |b_k| in f64 (exact differences).
fn rel_diff(a: &[Float], b: &[Float]) -> f64 {
    let mut m = Rational::new();
    let mut s = Rational::new();
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (x.to_rational().unwrap(), y.to_rational().unwrap());
        let dd = Rational::from(&x - &y).abs();
        if dd > m {
            m = dd;
        }
        if y.clone().abs() > s {
            s = y.abs();
        }
    }
    (m / s).to_f64()
}

#[test]
fn dd_runs_agree_with_the_128_bit_flow() {
    // z and x, centered and plain, QᵀK = I and a random QᵀK
    for (seed, vars, centered, id) in [
        (5, Vars::Z, true, false),
        (6, Vars::X, true, false),
        (7, Vars::Z, false, true),
        (8, Vars::Z, true, true),
    ] {
        let (sys, x0) = random_system(seed, 7, 4, id);
        let mut o = FlowOptions::new(128, vars);
        o.centered = centered;
        let t = q(2, 1);
        let h = q(1, 10);
        let m = rk4(&sys, &x0, &t, &h, &o, |_| {}).unwrap();
        let d = ddflow::rk4(&sys, &x0, &t, &h, &o, |_| {}).unwrap();
        let (ds, dp) = (rel_diff(&d.state, &m.state), rel_diff(&d.p, &m.p));
        assert!(ds <= 2f64.powi(-95), "seed {seed}: state {ds:e}");
        assert!(dp <= 2f64.powi(-95), "seed {seed}: P {dp:e}");
        assert_eq!((d.steps, d.rhs_evals, &d.t), (m.steps, m.rhs_evals, &m.t));
    }
}

#[test]
fn dd_observer_sees_the_same_frames_as_the_end_state() {
    let (sys, x0) = random_system(9, 5, 3, false);
    let o = FlowOptions::new(128, Vars::Z);
    let f = DdFlow::new(&sys, o);
    let mut seen = Vec::new();
    let a = f
        .rk4(&x0, &q(1, 1), &q(1, 4), |fr| {
            seen.push((fr.step, fr.state.to_vec()))
        })
        .unwrap();
    let b = f.rk4_end(&x0, &q(1, 1), &q(1, 4)).unwrap();
    assert_eq!(seen.len(), 5);
    assert_eq!(seen.last().unwrap().1, b.state);
    assert_eq!(a.state, b.state);
    assert_eq!(a.p, b.p);
}

fn dd_in_pool(threads: usize, sys: &System, x0: &Mat, vars: Vars) -> FlowResult {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        DdFlow::new(sys, FlowOptions::new(128, vars))
            .rk4_end(x0, &q(1, 1), &q(1, 10))
            .unwrap()
    })
}

#[test]
fn dd_results_are_bit_identical_for_one_and_two_threads() {
    // n = 64, d = 32: large enough for every product to split among threads
    let (sys, x0) = random_system(101, 64, 32, true);
    for vars in [Vars::Z, Vars::X] {
        let a = dd_in_pool(1, &sys, &x0, vars);
        let b = dd_in_pool(2, &sys, &x0, vars);
        assert_eq!(a.state, b.state, "{vars:?}");
        assert_eq!(a.p, b.p, "{vars:?}");
        assert_eq!(a.etv, b.etv, "{vars:?}");
    }
}

#[test]
fn the_f64_prepass_changes_no_bit() {
    // x grows like e^{2t}: the logits spread far beyond the flush threshold, so the
    // pre-pass skips most of them
    let d = 4;
    let sys = System::new(
        random_dyadic("q", d, d, "-1", "1", 31, 12).unwrap(),
        random_dyadic("k", d, d, "-1", "1", 32, 12).unwrap(),
        Mat::identity(d).scale(&q(2, 1)),
    );
    let x0 = random_dyadic("x0", 24, d, "-8", "8", 33, 12).unwrap();
    for vars in [Vars::X, Vars::Z] {
        let o = FlowOptions::new(128, vars);
        let a = DdFlow::new(&sys, o.clone())
            .rk4_end(&x0, &q(2, 1), &q(1, 10))
            .unwrap();
        let b = DdFlow::new(&sys, o)
            .unfiltered()
            .rk4_end(&x0, &q(2, 1), &q(1, 10))
            .unwrap();
        assert_eq!(a.state, b.state, "{vars:?}");
        assert_eq!(a.p, b.p, "{vars:?}");
        let zeros = a.p.iter().filter(|x| x.is_zero()).count();
        assert!(zeros > a.p.len() / 2, "{vars:?}: only {zeros} zeros in P");
    }
}

#[test]
fn expm_dd_agrees_with_mpfr_expm() {
    use attncheck::dynamics::ddexpm::expm_dd;
    use attncheck::dynamics::expm::expm;
    let v = random_dyadic("v", 6, 6, "-2", "2", 41, 12).unwrap();
    for t in [q(1, 20), q(-3, 2), q(5, 1)] {
        let e = expm_dd(&v, &t);
        let m = expm(&v, &t, 200);
        let got: Vec<Float> = (0..36).map(|k| e.get(k / 6, k % 6).to_float(200)).collect();
        let r = rel_diff(&got, &m);
        assert!(r <= 2f64.powi(-90), "t = {t}: {r:e}");
    }
}
