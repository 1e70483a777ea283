//! The flow's cost cuts for tiny systems (session 36, issue #41): one MPFR `exp` for
//! two nearby softmax arguments (`exp_two_near`, the rows paired by
//! `softmax_rows_point`), RK4's propagators refilled in place, and `expm`'s Horner
//! products into reused buffers. Each must give the old path's floats bit for bit.

use attncheck::dynamics::dot::{mat_mul, mat_mul_block, mat_mul_blocks, BlockRows};
use attncheck::dynamics::expm::{expm, taylor_terms};
use attncheck::dynamics::flow::{
    exp_two_near, rk4, softmax_point, softmax_rows_point, FlowOptions, NearWork, Vars,
};
use attncheck::dynamics::model::{random_dyadic, Mat, System};
use proptest::prelude::*;
use rug::float::Special;
use rug::integer::Order;
use rug::{Float, Integer, Rational};

/// A p-bit float from random limbs, scaled to exponent `e`, with sign `neg`.
fn float_of(limbs: &[u64], e: i32, neg: bool, prec: u32) -> Float {
    let m = Integer::from_digits(limbs, Order::Lsf);
    let mut f = Float::with_val(prec, &m);
    if f.is_zero() {
        return f;
    }
    let shift = e - f.get_exp().unwrap();
    f <<= shift;
    if neg {
        f = -f;
    }
    f
}

/// `x` moved by `k` ulps (up for k > 0).
fn ulps(x: &Float, k: i32) -> Float {
    let mut y = x.clone();
    for _ in 0..k.unsigned_abs() {
        if k > 0 {
            y.next_up();
        } else {
            y.next_down();
        }
    }
    y
}

fn mpfr_exp(x: &Float) -> Float {
    let mut y = x.clone();
    y.exp_mut();
    y
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// When it decides, `exp_two_near` gives MPFR's correctly rounded `exp` of both
    /// arguments (either order, equal arguments, wide exponent ranges, precisions
    /// 53–1000); when it does not, both are left as they were. Arguments a few ulps
    /// apart are decided (all but about 2^−13 of them).
    #[test]
    fn exp_two_near_is_mpfrs_exp(
        limbs in proptest::collection::vec(any::<u64>(), 16),
        prec in 53u32..1000,
        e in -70i32..12,
        neg in any::<bool>(),
        k in -6i32..7,
        far in 0u8..4,
        swap in any::<bool>(),
    ) {
        let t = float_of(&limbs, e, neg, prec);
        // far = 0: a wholly different argument (not near: must be declined)
        let u = if far == 0 {
            float_of(&limbs[8..], e - 3, !neg, prec)
        } else {
            ulps(&t, k)
        };
        let (mut a, mut b) = if swap { (u.clone(), t.clone()) } else { (t.clone(), u.clone()) };
        let (a0, b0) = (a.clone(), b.clone());
        let mut w = NearWork::new(prec);
        let decided = exp_two_near(&mut a, &mut b, &mut w);
        if decided {
            prop_assert_eq!(&a, &mpfr_exp(&a0));
            prop_assert_eq!(&b, &mpfr_exp(&b0));
            prop_assert_eq!(a.prec(), prec);
            prop_assert_eq!(b.prec(), prec);
        } else {
            prop_assert_eq!(&a, &a0);
            prop_assert_eq!(&b, &b0);
        }
        // arguments further apart than 2^{−(⌈q/2⌉+2)} (q = p + 16) are declined
        let window = Float::with_val(64, 1) >> ((prec + 16).div_ceil(2) + 2);
        if (t.clone() - &u).abs() > window {
            prop_assert!(!decided);
        }
    }

    /// The rows' softmax with paired exponentials (at most four rows, above 128 bits)
    /// is each row's `softmax_point`, bit for bit: rows whose arguments are mirror
    /// images a few ulps apart (as the two-token flow's), equal entries, zeros, huge
    /// gaps; and the row-by-row path below 129 bits or beyond four rows likewise.
    #[test]
    fn paired_softmax_rows_are_each_rows_softmax(
        limbs in proptest::collection::vec(any::<u64>(), 40),
        n in 1usize..6,
        prec in 53u32..700,
        e in -40i32..8,
        kinds in proptest::collection::vec(0u8..6, 25),
    ) {
        let len = n * n;
        let mut l: Vec<Float> = Vec::with_capacity(len);
        for idx in 0..len {
            let base = float_of(&limbs[idx % 36..idx % 36 + 4], e, idx % 3 == 1, prec);
            let v = match kinds[idx] {
                0 if idx > 0 => l[idx - 1].clone(),
                1 if idx > 0 => ulps(&l[idx - 1], 2),
                2 if idx > 0 => -l[idx - 1].clone(),
                3 => Float::new(prec),
                4 => Float::with_val(prec, &base * 1000u32),
                _ => base,
            };
            l.push(v);
        }
        let got = softmax_rows_point(l.clone(), n, prec);
        let want: Vec<Float> = l
            .chunks(n)
            .flat_map(|row| softmax_point(row.to_vec(), prec))
            .collect();
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            prop_assert!(g == w || g.is_nan() && w.is_nan(), "{} vs {}", g, w);
            prop_assert_eq!(g.prec(), w.prec());
        }
    }
}

/// The two-token rows of clusters/higher-dim-remark (ℓ₁₂ and −ℓ₂₂ a few ulps apart,
/// the other entries the rows' maxima): `exp_two_near` decides them (these fixed
/// cases; about 2^−13 of all are left to MPFR), and each paired row is
/// `softmax_point`'s.
#[test]
fn mirror_rows_of_the_two_token_flow_are_each_rows_softmax() {
    for prec in [240u32, 320, 129, 1000] {
        for k in [0, 1, -3, 7] {
            let x = Float::with_val(prec, Rational::from((-37, 101)));
            let y = ulps(&x, k);
            let (mut a, mut b) = (x.clone(), y.clone());
            assert!(
                exp_two_near(&mut a, &mut b, &mut NearWork::new(prec)),
                "prec {prec}, k {k}"
            );
            assert_eq!((a, b), (mpfr_exp(&x), mpfr_exp(&y)));
            let l = vec![Float::new(prec), x.clone(), Float::new(prec), -y.clone()];
            let got = softmax_rows_point(l.clone(), 2, prec);
            let mut want = softmax_point(l[..2].to_vec(), prec);
            want.extend(softmax_point(l[2..].to_vec(), prec));
            assert_eq!(got, want, "prec {prec}, k {k}");
        }
    }
}

fn random_system(seed: u64, n: usize, d: usize) -> (System, Mat) {
    let m = |s: u64, r: usize| random_dyadic("m", r, d, "-1", "1", s, 12).unwrap();
    let sys = System::new(m(seed, d), m(seed + 1, d), m(seed + 2, d));
    (sys, m(seed + 3, n))
}

/// RK4 in z refills two propagator holders in place: its e^{TV} is e^{(h/2)V} applied
/// 2·steps times by `mat_mul_blocks` (each factor's rows converted afresh), bit for
/// bit, for small d (in place) and a d whose product stays parallel.
#[test]
fn rk4_propagator_is_the_fresh_products_of_e_half() {
    for (seed, n, d, prec, steps) in [
        (11u64, 3usize, 3usize, 240u32, 8u64),
        (13, 2, 2, 320, 5),
        (17, 2, 1, 53, 4),
        (19, 2, 33, 128, 2),
    ] {
        let (sys, x0) = random_system(seed, n, d);
        let h = Rational::from((1, 16));
        let t = Rational::from(&h * steps);
        let res = rk4(&sys, &x0, &t, &h, &FlowOptions::new(prec, Vars::Z), |_| {}).unwrap();
        let half = Rational::from(&h / 2u32);
        let eht =
            BlockRows::from_floats_transposed(&expm(&sys.v, &half, prec + 16), d, d, prec).unwrap();
        let mut e = expm(&sys.v, &Rational::new(), prec + 16);
        for _ in 0..2 * steps {
            let rows = BlockRows::from_floats(&e, d, d, prec).unwrap();
            e = mat_mul_blocks(&rows, &eht, prec + 16);
        }
        assert_eq!(res.etv.unwrap(), e, "seed {seed}, d {d}, prec {prec}");
    }
}

/// `expm` before session 36: every Horner product allocated afresh by `mat_mul_block`.
fn expm_allocating(v: &Mat, t: &Rational, prec: u32) -> Vec<Float> {
    let d = v.rows;
    let a = v.scale(t);
    let nu = (0..d)
        .map(|r| {
            let mut s = Rational::new();
            for x in a.row(r) {
                s += Rational::from(x.abs_ref());
            }
            s
        })
        .max()
        .unwrap_or_default();
    let identity = |p: u32| -> Vec<Float> {
        let mut m = vec![Float::new(p); d * d];
        for i in 0..d {
            m[i * d + i] = Float::with_val(p, 1);
        }
        m
    };
    if nu == 0 {
        return identity(prec);
    }
    let mut s: u32 = 0;
    let mut bound = Rational::from((1, 16));
    while nu > bound {
        bound *= 2;
        s += 1;
    }
    let log2d = usize::BITS - d.leading_zeros();
    let wp = prec + s + log2d + 32;
    let kmax = taylor_terms(wp);
    let b: Vec<Float> = a
        .data
        .iter()
        .map(|x| {
            let mut f = Float::with_val(wp, x);
            f >>= s;
            f
        })
        .collect();
    let id = identity(wp);
    let mut r = id.clone();
    let b_rows = BlockRows::from_floats(&b, d, d, wp).unwrap();
    for k in (1..=kmax).rev() {
        let br = mat_mul_block(&b_rows, &r, d, wp, wp)
            .unwrap_or_else(|_| vec![Float::with_val(wp, Special::Nan); d * d]);
        for ((ri, bri), ii) in r.iter_mut().zip(br).zip(&id) {
            *ri = bri / k;
            *ri += ii;
        }
    }
    for _ in 0..s {
        r = mat_mul(&r, &r, d, d, d, wp).unwrap();
    }
    r.into_iter().map(|x| Float::with_val(prec, x)).collect()
}

/// `expm`'s Horner products into reused buffers give the allocating loop's matrix, bit
/// for bit: d = 1..5 and 33 (the parallel path), small and large t (squarings),
/// precisions 53 to 600.
#[test]
fn expm_is_the_allocating_horner_loop() {
    for (seed, d) in [(1u64, 1usize), (2, 2), (3, 3), (4, 5), (5, 33)] {
        let v = random_dyadic("v", d, d, "-1", "1", seed, 10).unwrap();
        for t in [(1, 20), (-3, 10), (7, 2), (45, 1)] {
            let t = Rational::from(t);
            for prec in [53u32, 144, 272, 600] {
                if d == 33 && prec > 144 {
                    continue;
                }
                assert_eq!(
                    expm(&v, &t, prec),
                    expm_allocating(&v, &t, prec),
                    "seed {seed}, d {d}, t {t}, prec {prec}"
                );
            }
        }
    }
}
