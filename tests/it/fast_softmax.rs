//! The fast path: `exp_fixed` against MPFR's exp at p + 64 bits rounded both
//! ways, `softmax_fast` against an independent p + 64-bit softmax of an exact row
//! drawn inside the inputs and against `kernel::softmax`, its tightness, its
//! fallbacks, and results that do not depend on the number of threads; and the
//! fixed-point internals (exact products, directed roundings, the conversion to fixed
//! point, the tables), moved from src/fast.rs's unit tests.

use attncheck::fast::{
    exp_fixed, fixed_floor_ceil, mul_full, mul_round, softmax_fast, tables, FRAC, U256,
};
use attncheck::kernel::{softmax, softmax_into, Interval};
use proptest::collection::vec;
use proptest::prelude::*;
use rug::float::{Constant, Round, Special};
use rug::ops::{AddAssignRound, DivAssignRound};
use rug::{Float, Integer, Rational};

const P: u32 = 128;

/// `±m·2^(e−128)` with the top bit of m set, exact at 128 bits: |x| ∈ [2^(e−1), 2^e).
fn float(m: u128, e: i32, neg: bool) -> Float {
    let mut x = Float::with_val(P, m | (1 << 127));
    x <<= e - 128;
    if neg {
        -x
    } else {
        x
    }
}

/// A 128-bit float with |x| < 2^emax (or 0), spread over many binades.
fn any_float(emin: i32, emax: i32) -> impl Strategy<Value = Float> {
    prop_oneof![
        10 => (any::<u128>(), emin..=emax, any::<bool>()).prop_map(|(m, e, s)| float(m, e, s)),
        1 => Just(Float::with_val(P, 0)),
        1 => (-8i32..=8).prop_map(|k| Float::with_val(P, k)),
    ]
}

/// An interval input: a point, or `[x, x + w]` with `w ≥ 0` of its own binade.
fn interval(emin: i32, emax: i32) -> impl Strategy<Value = Interval> {
    prop_oneof![
        3 => any_float(emin, emax).prop_map(|x| Interval::from_endpoints(x.clone(), x)),
        1 => (any_float(emin, emax), any::<u128>(), -100i32..=2).prop_map(|(x, m, e)| {
            let w = float(m, e, false);
            let hi = Float::with_val_round(P, &x + &w, Round::Up).0;
            Interval::from_endpoints(x, hi)
        }),
    ]
}

/// The exact rational at fraction `t/256` of the way from lo to hi.
fn inside(z: &Interval, t: u8) -> Rational {
    let lo = z.lo().to_rational().unwrap();
    let hi = z.hi().to_rational().unwrap();
    let w = Rational::from(&hi - &lo) * Rational::from((t, 256));
    lo + w
}

/// `(RD, RU)` of `e^q` at `rp` bits for an exact rational q.
fn exp_both(q: &Rational, rp: u32) -> (Float, Float) {
    let mut d = Float::with_val_round(rp, q, Round::Down).0;
    let mut u = Float::with_val_round(rp, q, Round::Up).0;
    d.exp_round(Round::Down);
    u.exp_round(Round::Up);
    (d, u)
}

/// An enclosure of `1 / (1 + Σ_{j≠i} e^{q_j − q_i})` at `rp` bits: exact
/// differences, every sum and quotient rounded in the direction of its bound.
fn softmax_ref(q: &[Rational], i: usize, rp: u32) -> (Float, Float) {
    let mut s_lo = Float::with_val(rp, 1);
    let mut s_hi = Float::with_val(rp, 1);
    for (j, qj) in q.iter().enumerate() {
        if j != i {
            let (d, u) = exp_both(&Rational::from(qj - &q[i]), rp);
            s_lo.add_assign_round(&d, Round::Down);
            s_hi.add_assign_round(&u, Round::Up);
        }
    }
    let mut lo = Float::with_val(rp, 1);
    let mut hi = Float::with_val(rp, 1);
    lo.div_assign_round(&s_hi, Round::Down);
    hi.div_assign_round(&s_lo, Round::Up);
    (lo, hi)
}

/// `width / |lo|` rounded up (∞ for a zero lower end).
fn rel_width(x: &Interval) -> Float {
    if x.lo().is_zero() {
        return Float::with_val(53, Special::Infinity);
    }
    let mut w = x.width_up();
    w.div_assign_round(x.lo(), Round::Up);
    w
}

fn point(x: Float) -> Interval {
    Interval::from_endpoints(x.clone(), x)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// exp_fixed of a point contains MPFR's e^x at p + 64 bits, rounded both ways,
    /// and is tight: relative width ≤ 2^-120 at 128 bits.
    #[test]
    fn exp_fixed_contains_mpfr(x in any_float(-90, 27), prec in prop_oneof![Just(128u32), 24u32..=128]) {
        let e = exp_fixed(&point(x.clone()), prec).expect("inside the fast domain");
        let (d, u) = exp_both(&x.to_rational().unwrap(), prec + 64);
        prop_assert!(*e.lo() <= d && u <= *e.hi(), "x = {x}: {e:?} misses [{d}, {u}]");
        prop_assert_eq!(e.prec(), prec);
        if prec == 128 {
            prop_assert!(rel_width(&e) <= Float::with_val(53, -120f64).exp2(), "x = {}: {:?}", x, e);
        }
    }

    /// exp_fixed of an interval contains e^q for exact q drawn inside it.
    #[test]
    fn exp_fixed_contains_interior(z in interval(-60, 20), t in any::<u8>()) {
        let e = exp_fixed(&z, P).expect("inside the fast domain");
        let (d, u) = exp_both(&inside(&z, t), P + 64);
        prop_assert!(*e.lo() <= d && u <= *e.hi());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// softmax_fast contains the p + 64-bit softmax of exact rows drawn inside
    /// the inputs, meets kernel::softmax, and is tight on point rows.
    #[test]
    fn softmax_fast_contains_reference(
        z in prop_oneof![
            3 => vec(interval(-30, 5), 1..=24),
            1 => vec(interval(-10, 12), 1..=12),
        ],
        ts in vec(any::<u8>(), 24),
        prec in prop_oneof![3 => Just(128u32), 1 => 24u32..=128],
    ) {
        let fast = softmax_fast(&z, prec);
        prop_assert_eq!(fast.len(), z.len());
        let mut kernel = Vec::new();
        softmax_into(&z, prec, &mut kernel);
        let q: Vec<Rational> = z.iter().zip(&ts).map(|(zi, &t)| inside(zi, t)).collect();
        let all_points = z.iter().all(Interval::is_point);
        for i in 0..z.len() {
            let (lo, hi) = softmax_ref(&q, i, prec + 64);
            prop_assert!(*fast[i].lo() <= lo && hi <= *fast[i].hi(),
                "entry {i}: {:?} misses [{lo}, {hi}]", fast[i]);
            prop_assert!(fast[i].intersect(&kernel[i]).is_some(), "entry {i} misses the kernel's");
            prop_assert!(*fast[i].lo() >= 0 && *fast[i].hi() <= 1);
            if all_points && prec == P && *fast[i].lo() > Float::with_val(53, -1000f64).exp2() {
                prop_assert!(rel_width(&fast[i]) <= Float::with_val(53, -100f64).exp2(),
                    "entry {i} too wide: {:?}", fast[i]);
            }
        }
    }
}

/// The benchmark's row: `z_j = ((j·2654435761) mod 2^32)/2^28 − 8`, dyadic.
fn bench_row(n: usize) -> Vec<Interval> {
    (0..n as u64)
        .map(|j| {
            let m = (j * 2_654_435_761) % (1 << 32);
            point(Float::with_val(P, m) / (1u64 << 28) - 8)
        })
        .collect()
}

#[test]
fn bench_row_is_tight_and_meets_the_kernel() {
    let z = bench_row(4096);
    let fast = softmax_fast(&z, P);
    let kernel = softmax(&z);
    let mut s_lo = Float::with_val(P, 0);
    let mut s_hi = Float::with_val(P, 0);
    for (f, k) in fast.iter().zip(&kernel) {
        assert!(f.intersect(k).is_some());
        assert!(rel_width(f) <= Float::with_val(53, -118f64).exp2(), "{f:?}");
        s_lo.add_assign_round(f.lo(), Round::Down);
        s_hi.add_assign_round(f.hi(), Round::Up);
    }
    assert!(s_lo <= 1 && s_hi >= 1);
}

/// Per-entry work is independent and the row sums are exact, so 1, 2 or 3
/// threads give identical intervals.
#[test]
fn results_do_not_depend_on_thread_count() {
    let mut z = bench_row(5000);
    for (j, zj) in z.iter_mut().enumerate().filter(|(j, _)| j % 7 == 3) {
        let w = Float::with_val(P, j) >> 20;
        *zj = Interval::from_endpoints(zj.lo().clone(), Float::with_val(P, zj.hi() + w));
    }
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| softmax_fast(&z, P))
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

/// Outside the fast domain the MPFR reference answers, unchanged.
#[test]
fn falls_back_outside_its_domain() {
    let mut z = bench_row(20);
    for prec in [129, 200] {
        let mut want = Vec::new();
        softmax_into(&z, prec, &mut want);
        assert_eq!(softmax_fast(&z, prec), want);
    }
    z[3] = point(Float::with_val(P, 1u64 << 40));
    let mut want = Vec::new();
    softmax_into(&z, P, &mut want);
    assert_eq!(softmax_fast(&z, P), want);
    z[3] = Interval::from_endpoints(
        Float::with_val(P, Special::NegInfinity),
        Float::with_val(P, 0),
    );
    softmax_into(&z, P, &mut want);
    assert_eq!(softmax_fast(&z, P), want);
    assert!(softmax_fast(&[], P).is_empty());
    let big = point(Float::with_val(P, 1u64 << 28));
    assert!(exp_fixed(&big, P).is_none());
    assert!(exp_fixed(&point(Float::with_val(P, 1)), 129).is_none());
}

/// Regression guard for the range edges: e^{±(2^28 − ulp)} and e^{±2^-1000}.
#[test]
fn exp_fixed_at_range_edges() {
    let edge = Float::with_val(P, (1u64 << 28) - 1) + Float::with_val(P, 0.5);
    let tiny = Float::with_val(P, -1000f64).exp2();
    for x in [edge.clone(), -edge, tiny.clone(), -tiny] {
        let e = exp_fixed(&point(x.clone()), P).unwrap();
        let (d, u) = exp_both(&x.to_rational().unwrap(), P + 64);
        assert!(*e.lo() <= d && u <= *e.hi(), "{x}");
    }
}

/// A single entry, a dominating entry, and an interval spanning the row.
#[test]
fn softmax_fast_small_rows() {
    let one = softmax_fast(&[point(Float::with_val(P, 3))], P);
    assert!(one[0].contains_float(&Float::with_val(P, 1)));
    let z = vec![
        point(Float::with_val(P, 0)),
        point(Float::with_val(P, -1000)),
        Interval::from_endpoints(Float::with_val(P, -50), Float::with_val(P, 40)),
    ];
    let fast = softmax_fast(&z, P);
    let kernel = softmax(&z);
    for (f, k) in fast.iter().zip(&kernel) {
        assert!(f.intersect(k).is_some(), "{f:?} vs {k:?}");
    }
}

/// Arguments where the range reduction switches k or a table index: k·ln 2 and
/// j/2^8, j/2^16, j/2^24, each nudged by a few ulps both ways.
#[test]
fn exp_fixed_at_reduction_boundaries() {
    let ln2 = Float::with_val(P, rug::float::Constant::Log2);
    let mut xs = Vec::new();
    for k in -60i32..=60 {
        xs.push(Float::with_val(P, &ln2 * k));
    }
    for s in [8, 16, 24] {
        for j in [1i32, 2, 127, 128, 177, 178, 255, 256] {
            xs.push(Float::with_val(P, j) >> s);
            xs.push(Float::with_val(P, -j) >> s);
        }
    }
    for x0 in xs {
        let mut x = x0.clone();
        for _ in 0..3 {
            x.next_down();
        }
        for _ in 0..7 {
            let e = exp_fixed(&point(x.clone()), P).unwrap();
            let (d, u) = exp_both(&x.to_rational().unwrap(), P + 64);
            assert!(*e.lo() <= d && u <= *e.hi(), "x = {x}");
            assert!(
                rel_width(&e) <= Float::with_val(53, -120f64).exp2(),
                "x = {x}"
            );
            x.next_up();
        }
    }
}

// ----- the fixed-point internals (moved from src/fast.rs's unit tests, so that
// `cargo test` compiles the library once; they are `#[doc(hidden)] pub` for these
// tests only) -------------------------------------------------------------------

#[test]
fn mul_full_matches_integers() {
    let vals = [
        0u128,
        1,
        u128::MAX,
        u128::MAX - 12345,
        1 << 127,
        0x1234_5678_9abc_def0_0fed_cba9_8765_4321,
        (1 << 64) - 1,
        1 << 64,
    ];
    for &a in &vals {
        for &b in &vals {
            let (h, l) = mul_full(a, b);
            let want = Integer::from(a) * Integer::from(b);
            let got = (Integer::from(h) << 128) + Integer::from(l);
            assert_eq!(got, want, "{a} · {b}");
        }
    }
}

#[test]
fn mul_round_brackets_product() {
    let vals = [1u128, 3, u128::MAX, (1 << 127) + 1, 0xdead_beef << 70];
    for &a in &vals {
        for &b in &vals {
            let exact = Integer::from(a) * Integer::from(b);
            let (d, sd) = mul_round(a, b, false);
            let (u, su) = mul_round(a, b, true);
            assert!(d >> 127 == 1 && u >> 127 == 1);
            let val = |m: u128, s: i32| Rational::from(Integer::from(m)) << s;
            assert!(val(d, sd) <= exact && exact <= val(u, su), "{a} · {b}");
        }
    }
}

#[test]
fn fixed_conversion_is_floor_and_ceil() {
    for s in [
        "0",
        "1",
        "-1",
        "0.75",
        "-3.25e-70",
        "1.0e-60",
        "-2.5e8",
        "12345.678",
    ] {
        let x = Float::with_val(128, Float::parse(s).unwrap());
        let (f, c) = fixed_floor_ceil(&x).unwrap();
        let exact = x.to_rational().unwrap() << FRAC;
        let signed = |u: U256| {
            let v = (Integer::from(u.hi) << 128) + Integer::from(u.lo);
            if u.is_negative() {
                v - (Integer::from(1) << 256)
            } else {
                v
            }
        };
        let (f, c) = (signed(f), signed(c));
        assert!(
            f <= exact && exact <= c && Integer::from(&c - &f) <= 1,
            "{s}"
        );
    }
    let (m1, _) = fixed_floor_ceil(&Float::with_val(128, -1)).unwrap();
    let (p1, _) = fixed_floor_ceil(&Float::with_val(128, 0.5)).unwrap();
    assert_eq!(m1.signed_max(p1), p1);
    assert_eq!(p1.signed_max(m1), p1);
    assert_eq!(U256::MIN.signed_max(m1), m1);
    let big = Float::with_val(128, 1u64 << 40);
    assert!(fixed_floor_ceil(&big).is_none());
}

#[test]
fn ln2_and_tables_start_right() {
    let t = tables();
    assert_eq!(t.t1[0], 1 << 127);
    assert_eq!(t.t3[0], 1 << 127);
    let ln2 = Float::with_val(256, Constant::Log2) << FRAC;
    let want = ln2.to_integer_round(Round::Down).unwrap().0;
    assert_eq!(
        (Integer::from(t.ln2.hi) << 128) + Integer::from(t.ln2.lo),
        want
    );
}
