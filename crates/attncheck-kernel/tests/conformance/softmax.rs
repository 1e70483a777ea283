//! softmax, log-sum-exp, dot and mat·vec. softmax and log-sum-exp are checked
//! against an independent MPFR evaluation at p + 64 bits, rounded both ways, of
//! the exact rational row drawn inside the input; dot and mat·vec against the
//! exact rational result.

use crate::common::{any_rat, drawn, dyadic, encloses, prec, rat, valid, Drawn};
use attncheck_kernel::{dot, log_sum_exp, mat_vec, softmax, softmax_into, Interval};
use proptest::collection::vec;
use proptest::prelude::*;
use rug::float::{Round, Special};
use rug::ops::{AddAssignRound, DivAssignRound};
use rug::{Float, Rational};

/// Logits: moderate, far apart (so that some weights underflow any double), and
/// points.
fn logit() -> impl Strategy<Value = Rational> + Clone {
    prop_oneof![
        4 => rat(50_000, 1_000),
        2 => dyadic(-24..-16),
        1 => rat(1_000_000, 100),
        1 => rat(10, 1),
    ]
}

fn row() -> impl Strategy<Value = Vec<Drawn>> {
    vec(drawn(logit()), 1..=6)
}

/// Rows of exactly representable points: no input width to hide behind, so
/// every directed rounding inside softmax and log-sum-exp is exercised.
fn point_row() -> impl Strategy<Value = (u32, Vec<Rational>)> {
    (prec(), vec(dyadic(-24..-16), 1..=5))
}

/// `(RD, RU)` of `e^q` at `rp` bits for an exact rational `q`.
fn exp_both(q: &Rational, rp: u32) -> (Float, Float) {
    let mut d = Float::with_val_round(rp, q, Round::Down).0;
    let mut u = Float::with_val_round(rp, q, Round::Up).0;
    d.exp_round(Round::Down);
    u.exp_round(Round::Up);
    (d, u)
}

/// Reference for `p_i = 1 / (1 + Σ_{j≠i} e^{z_j − z_i})` at `prec + 64` bits: the
/// differences are exact rationals, every sum and quotient is rounded in the
/// direction of its bound.
pub(crate) fn softmax_reference(z: &[Rational], i: usize, prec: u32) -> (Float, Float) {
    let rp = prec + 64;
    let mut s_dn = Float::with_val(rp, 1);
    let mut s_up = Float::with_val(rp, 1);
    for (j, zj) in z.iter().enumerate() {
        if j != i {
            let (d, u) = exp_both(&Rational::from(zj - &z[i]), rp);
            s_dn.add_assign_round(&d, Round::Down);
            s_up.add_assign_round(&u, Round::Up);
        }
    }
    let mut p_dn = Float::with_val(rp, 1);
    let mut p_up = Float::with_val(rp, 1);
    p_dn.div_assign_round(&s_up, Round::Down);
    p_up.div_assign_round(&s_dn, Round::Up);
    (p_dn, p_up)
}

/// Reference for `ln Σ e^{z_j} = M + ln Σ e^{z_j − M}` at `prec + 64` bits, with
/// the exact rational shift M = max z_j, so that a value that is exactly a float
/// (a one-element row: lse = z) is computed exactly.
fn lse_reference(z: &[Rational], prec: u32) -> (Float, Float) {
    let rp = prec + 64;
    let m = z.iter().max().expect("non-empty row");
    let mut s_dn = Float::with_val(rp, 0);
    let mut s_up = Float::with_val(rp, 0);
    for zj in z {
        let (d, u) = exp_both(&Rational::from(zj - m), rp);
        s_dn.add_assign_round(&d, Round::Down);
        s_up.add_assign_round(&u, Round::Up);
    }
    s_dn.ln_round(Round::Down);
    s_up.ln_round(Round::Up);
    let lo = Float::with_val_round(rp, &s_dn + m, Round::Down).0;
    let hi = Float::with_val_round(rp, &s_up + m, Round::Up).0;
    (lo, hi)
}

fn ivs(row: &[Drawn]) -> Vec<Interval> {
    row.iter().map(|d| d.iv.clone()).collect()
}

fn xs(row: &[Drawn]) -> Vec<Rational> {
    row.iter().map(|d| d.x.clone()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn softmax_contains_reference(z in row()) {
        let p = softmax(&ivs(&z));
        let x = xs(&z);
        prop_assert_eq!(p.len(), z.len());
        let prec = p[0].prec();
        for (i, pi) in p.iter().enumerate() {
            prop_assert!(valid(pi) && *pi.lo() >= 0 && *pi.hi() <= 1, "{pi:?}");
            let re = softmax_reference(&x, i, prec);
            prop_assert!(encloses(pi, &re), "p_{i}({x:?}) = {re:?} ∉ {pi:?}");
        }
    }

    /// `softmax_into` at a precision other than the inputs' is still an enclosure.
    #[test]
    fn softmax_into_contains_reference(z in row(), p in prec()) {
        let mut out = vec![Interval::zero(53)];
        softmax_into(&ivs(&z), p, &mut out);
        let x = xs(&z);
        prop_assert_eq!(out.len(), z.len());
        for (i, pi) in out.iter().enumerate() {
            let re = softmax_reference(&x, i, p);
            prop_assert!(valid(pi) && pi.contains_float(&re.0) && pi.contains_float(&re.1),
                "p_{i} = {re:?} ∉ {pi:?}");
        }
    }

    /// Σ p_i = 1 for every point of the row, so the sum of the enclosures contains 1.
    #[test]
    fn softmax_row_sum_contains_one(z in row()) {
        let p = softmax(&ivs(&z));
        let mut sum = Interval::zero(p[0].prec());
        for pi in &p {
            sum.add_assign(pi);
        }
        prop_assert!(sum.contains_rational(&Rational::from(1)), "Σ = {sum:?}");
    }

    #[test]
    fn softmax_of_point_rows_contains_reference((p, x) in point_row()) {
        let z: Vec<Interval> = x.iter().map(|q| Interval::from_rational(p, q)).collect();
        prop_assert!(z.iter().all(Interval::is_point));
        for (i, pi) in softmax(&z).iter().enumerate() {
            let re = softmax_reference(&x, i, p);
            prop_assert!(encloses(pi, &re), "p_{i}({x:?}) = {re:?} ∉ {pi:?}");
        }
        let l = log_sum_exp(&z);
        let re = lse_reference(&x, p);
        prop_assert!(encloses(&l, &re), "lse({x:?}) = {re:?} ∉ {l:?}");
    }

    #[test]
    fn log_sum_exp_contains_reference(z in row()) {
        let l = log_sum_exp(&ivs(&z));
        let re = lse_reference(&xs(&z), l.prec());
        prop_assert!(valid(&l) && encloses(&l, &re), "{re:?} ∉ {l:?}");
    }

    /// log_sum_exp(z) and ln Σ exp(z_j) with the kernel's own ops enclose the
    /// same value; and softmax is exp(z_i − lse).
    #[test]
    fn log_sum_exp_meets_ln_of_sum_of_exp(z in vec(drawn(rat(20_000, 1_000)), 1..=6)) {
        let zi = ivs(&z);
        let l = log_sum_exp(&zi);
        let mut s = Interval::zero(l.prec());
        for e in &zi {
            s.add_assign(&e.exp());
        }
        let naive = s.ln();
        prop_assert!(l.overlaps(&naive), "{l:?} ∩ {naive:?} = ∅");
        for (p, e) in softmax(&zi).iter().zip(&zi) {
            let q = (e - &l).exp();
            prop_assert!(p.overlaps(&q), "{p:?} ∩ {q:?} = ∅");
        }
    }

    #[test]
    fn dot_contains_exact(pairs in vec((drawn(any_rat()), drawn(any_rat())), 0..=6)) {
        let (a, b): (Vec<Drawn>, Vec<Drawn>) = pairs.into_iter().unzip();
        let r = dot(&ivs(&a), &ivs(&b));
        let exact = a.iter().zip(&b).fold(Rational::new(), |s, (x, y)| s + Rational::from(&x.x * &y.x));
        prop_assert!(valid(&r) && r.contains_rational(&exact), "{exact} ∉ {r:?}");
    }

    #[test]
    fn mat_vec_contains_exact(
        (m, v) in (0usize..=5).prop_flat_map(|n| {
            (vec(vec(drawn(any_rat()), n), 0..=4), vec(drawn(any_rat()), n))
        })
    ) {
        let mi: Vec<Vec<Interval>> = m.iter().map(|r| ivs(r)).collect();
        let r = mat_vec(&mi, &ivs(&v));
        prop_assert_eq!(r.len(), m.len());
        for (row, ri) in m.iter().zip(&r) {
            let exact = row.iter().zip(&v).fold(Rational::new(), |s, (x, y)| s + Rational::from(&x.x * &y.x));
            prop_assert!(valid(ri) && ri.contains_rational(&exact), "{exact} ∉ {ri:?}");
        }
    }
}

/// The sparse-attention case: one logit far above the others puts weights
/// below any double, and the enclosures must still be positive-width and valid.
#[test]
fn softmax_with_underflowing_weights() {
    let z: Vec<Interval> = [0, -100_000, -100_001]
        .iter()
        .map(|&k| Interval::from_i64(53, k))
        .collect();
    let p = softmax(&z);
    assert!(
        *p[0].lo() < 1 && *p[0].lo() > 0.99 && *p[0].hi() <= 1,
        "{:?}",
        p[0]
    );
    for pi in &p[1..] {
        assert!(*pi.lo() > 0, "e^−100000 is positive: {pi:?}");
        assert!(pi.hi().to_f64() == 0.0, "but far below any double");
    }
    let l = log_sum_exp(&z);
    // ln(1 + 2e^−100000) > 0, enclosed within a few ulps of 1
    assert!(*l.lo() >= 0 && l.hi().to_f64() < 1e-15, "{l:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Tightness: for a row of points (exact at p bits), every softmax entry is within
    /// 2^−(p−10)·(1 + W) of its own size, W = max_j |z_j − M| (the shifts z_j − M are
    /// rounded at p bits, an absolute error of W·2^−p each), and log-sum-exp within
    /// 2^−(p−10)·(|M| + W + ln n + 1): a few ulps of each rounding; containment alone
    /// would accept [0, 1] and the whole line.
    #[test]
    fn softmax_and_log_sum_exp_of_points_are_a_few_ulps_wide(p in prec(), x in vec(logit(), 1..=6)) {
        // the rationals' lower ends at p bits: points
        let z: Vec<Interval> = x
            .iter()
            .map(|q| {
                let lo = Interval::from_rational(p, q).lo().clone();
                Interval::from_endpoints(lo.clone(), lo)
            })
            .collect();
        let big = |a: Float, b: Float| if b > a { b } else { a };
        let m = z.iter().map(|v| v.hi().clone()).fold(Float::with_val(p, Special::NegInfinity), big);
        let w = z
            .iter()
            .map(|v| Float::with_val(p + 64, &m - v.lo()))
            .fold(Float::with_val(p + 64, 0), big);
        let tol = |scale: &Float| Float::with_val(p + 64, scale >> (p as i32 - 10));
        for (i, pi) in softmax(&z).iter().enumerate() {
            prop_assert!(valid(pi) && *pi.lo() > 0 && *pi.hi() <= 1, "{pi:?}");
            let scale = Float::with_val(p + 64, pi.hi() * Float::with_val(p + 64, &w + 1u32));
            prop_assert!(pi.width_up() <= tol(&scale), "p_{i} = {pi:?} at {p} bits, W = {w}");
        }
        let l = log_sum_exp(&z);
        let scale = Float::with_val(p + 64, m.abs_ref()) + &w + 3u32 + x.len() as u32;
        prop_assert!(l.width_up() <= tol(&scale), "lse = {l:?} at {p} bits");
    }
}
