//! Shared strategies and helpers of the kernel's conformance suite, in the style of Arb:
//! every operation is checked by drawing exact rationals inside random intervals and
//! requiring the output to contain the exact result (or a reference computed at p + 64
//! bits and rounded both ways). Also the seeded generators the suite's data come from
//! (SplitMix64, as the application's `attncheck::rng` draws them, so that the instances
//! are those the tests used when they lived in the application's tests/it).

use attncheck_kernel::{Interval, Mat, SignMatrix};
use proptest::prelude::*;
use rug::float::{Round, Special};
use rug::{Float, Integer, Rational};
use std::cmp::Ordering;

/// An interval built from exact rational endpoints, with an exact rational `x`
/// drawn inside `[lo, hi]` (hence inside `iv`, which encloses `[lo, hi]`).
#[derive(Clone, Debug)]
pub(crate) struct Drawn {
    pub iv: Interval,
    pub lo: Rational,
    pub hi: Rational,
    pub x: Rational,
}

impl Drawn {
    /// `[a, b]` (in either order) at precision `prec`, with `x = lo + t·(hi − lo)`.
    pub fn new(prec: u32, a: Rational, b: Rational, t: &Rational) -> Drawn {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let iv = Interval::from_rational(prec, &lo).hull(&Interval::from_rational(prec, &hi));
        let x = Rational::from(&hi - &lo) * t + &lo;
        Drawn { iv, lo, hi, x }
    }

    /// Points of the float interval itself: its two endpoints (when finite) and
    /// the drawn `x`. Used by the comparison tests, which must hold for every point
    /// of `[iv.lo, iv.hi]`, not only of the exact `[lo, hi]`.
    pub fn points(&self) -> Vec<Rational> {
        let mut v = vec![self.x.clone()];
        v.extend(self.iv.lo().to_rational());
        v.extend(self.iv.hi().to_rational());
        v
    }
}

/// Working precisions: from the kernel's minimum up to a few machine words.
pub(crate) fn prec() -> impl Strategy<Value = u32> {
    prop_oneof![Just(24u32), Just(53u32), 24u32..=200]
}

/// `n/d` with `|n| ≤ num` and `1 ≤ d ≤ den`.
pub(crate) fn rat(num: i64, den: i64) -> impl Strategy<Value = Rational> + Clone {
    (-num..=num, 1..=den).prop_map(|(n, d)| Rational::from((n, d)))
}

/// `n·2^k` with a 24-bit `n`: exactly representable at every precision the
/// kernel accepts, so the only slack left in a result is the operation's own
/// rounding (a rounding to nearest is then caught at the endpoints).
pub(crate) fn dyadic(k: std::ops::Range<i32>) -> impl Strategy<Value = Rational> + Clone {
    (-(1i64 << 24)..=(1 << 24), k).prop_map(|(n, k)| Rational::from(n) << k)
}

/// Rationals across magnitudes: small, huge, tiny, dyadic, and the whole `i64`
/// range.
pub(crate) fn any_rat() -> impl Strategy<Value = Rational> + Clone {
    prop_oneof![
        dyadic(-100..100),
        rat(1_000, 64),
        rat(1_000_000_000_000, 1_000_000_007),
        rat(1_000, 1_000_000_000_000_000),
        rat(i64::MAX, i64::MAX),
        rat(10, 3),
    ]
}

const T_DEN: i64 = 1 << 24;

/// `t ∈ [0, 1]`, with the endpoints 0 and 1 drawn often.
pub(crate) fn fraction() -> impl Strategy<Value = Rational> {
    prop_oneof![1 => Just(0i64), 1 => Just(T_DEN), 4 => 0..=T_DEN]
        .prop_map(|k| Rational::from((k, T_DEN)))
}

/// An interval with both endpoints drawn from `ends`, and a point inside.
pub(crate) fn drawn<S>(ends: S) -> impl Strategy<Value = Drawn>
where
    S: Strategy<Value = Rational> + Clone,
{
    drawn_pair((ends.clone(), ends))
}

/// An interval with endpoints from a strategy of pairs, and a point inside.
pub(crate) fn drawn_pair<S>(ends: S) -> impl Strategy<Value = Drawn>
where
    S: Strategy<Value = (Rational, Rational)>,
{
    (prec(), ends, fraction()).prop_map(|(p, (a, b), t)| Drawn::new(p, a, b, &t))
}

/// `(c, c + w)`: an interval of width `w` around a centre drawn from `centre`.
pub(crate) fn centred<C, W>(centre: C, width: W) -> impl Strategy<Value = (Rational, Rational)>
where
    C: Strategy<Value = Rational>,
    W: Strategy<Value = Rational>,
{
    (centre, width).prop_map(|(c, w)| {
        let w = w.abs();
        let b = Rational::from(&c + &w);
        (c, b)
    })
}

/// The kernel's invariant: no NaN, `lo ≤ hi`, `lo < +∞`, `hi > −∞`, one precision.
pub(crate) fn valid(iv: &Interval) -> bool {
    !iv.lo().is_nan()
        && !iv.hi().is_nan()
        && iv.lo() <= iv.hi()
        && *iv.lo() != Special::Infinity
        && *iv.hi() != Special::NegInfinity
        && iv.lo().prec() == iv.hi().prec()
}

/// Whether `iv` is the whole line.
pub(crate) fn is_entire(iv: &Interval) -> bool {
    *iv.lo() == Special::NegInfinity && *iv.hi() == Special::Infinity
}

/// A reference enclosure of `f(x)` for an exact rational `x`: `x` is rounded
/// down and up at `prec + 64` bits, `f` is evaluated at both with MPFR rounding
/// down and up, and the extreme values are kept. It encloses `f(x)` whenever `f`
/// is monotone on `[RD(x), RU(x)]` (an interval of relative width 2^−(p+64)).
pub(crate) fn reference(
    x: &Rational,
    prec: u32,
    f: impl Fn(&mut Float, Round) -> Ordering,
) -> (Float, Float) {
    let rp = prec + 64;
    let xd = Float::with_val_round(rp, x, Round::Down).0;
    let xu = Float::with_val_round(rp, x, Round::Up).0;
    let ev = |x: &Float, r: Round| {
        let mut y = x.clone();
        f(&mut y, r);
        y
    };
    let (dd, du) = (ev(&xd, Round::Down), ev(&xu, Round::Down));
    let (ud, uu) = (ev(&xd, Round::Up), ev(&xu, Round::Up));
    let down = if dd < du { dd } else { du };
    let up = if ud > uu { ud } else { uu };
    (down, up)
}

/// `iv.lo ≤ down` and `up ≤ iv.hi`: the output contains the reference enclosure.
pub(crate) fn encloses(iv: &Interval, (down, up): &(Float, Float)) -> bool {
    iv.lo() <= down && up <= iv.hi()
}

/// The exact rational value of a finite float.
pub(crate) fn exact(x: &Float) -> Rational {
    x.to_rational().expect("finite float")
}

pub(crate) fn point(prec: u32, s: &str) -> Interval {
    Interval::parse_decimal(prec, s).expect("valid literal")
}

/// An exact rational literal.
pub(crate) fn q(s: &str) -> Rational {
    attncheck_kernel::parse_rational(s).unwrap()
}

// ----- seeded data ------------------------------------------------------------------

/// SplitMix64 (Steele, Lea, Flood 2014), as the application's `attncheck::rng` has it:
/// the same seed gives the same instance as in the application's tests.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0; Lemire's multiply-shift with rejection).
    pub fn below(&mut self, n: u64) -> u64 {
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// `rows × cols` entries uniform on 2^−20 ℤ ∩ [−1, 1], row-major from `seed`: the
/// matrices of the application's `{ uniform = ["-1", "1"], seed }` (its default grid).
pub(crate) fn random(seed: u64, rows: usize, cols: usize) -> Mat {
    const G: u32 = 20;
    let mut rng = SplitMix64::new(seed);
    let a = -(Integer::from(1) << G);
    let span = 2u64 << G; // grid points in [−1, 1], minus one
    let data = (0..rows * cols)
        .map(|_| {
            let m = Integer::from(&a + rng.below(span + 1));
            Rational::from((m, Integer::from(1) << G))
        })
        .collect();
    Mat { rows, cols, data }
}

/// `n × d` uniform random signs from `seed` (SplitMix64 words, row-major, tail bits
/// masked): the application's `sparse::sample::draw_signs`.
pub(crate) fn random_signs(n: usize, d: usize, seed: u64) -> SignMatrix {
    let words = d.div_ceil(64);
    let mut rng = SplitMix64::new(seed);
    let tail = if d.is_multiple_of(64) {
        !0u64
    } else {
        (1u64 << (d % 64)) - 1
    };
    let mut bits = Vec::with_capacity(n * words);
    for _ in 0..n {
        for w in 0..words {
            let x = rng.next_u64();
            bits.push(if w + 1 == words { x & tail } else { x });
        }
    }
    SignMatrix::from_words(n, d, bits).expect("tail bits are masked")
}

/// One exact step of the layer map with Q = 0 (uniform attention P = J/n) and
/// Δt = 1/8: x_i ← x_i + (1/8)·V·mean(x).
pub(crate) fn uniform_attention_step(x: &Mat, v: &Mat) -> Mat {
    let (n, d) = (x.rows, x.cols);
    let mut mean = vec![Rational::new(); d];
    for i in 0..n {
        for (c, m) in mean.iter_mut().enumerate() {
            *m += x.at(i, c);
        }
    }
    let mut next = x.clone();
    for i in 0..n {
        for r in 0..d {
            let mut acc = Rational::new();
            for (c, m) in mean.iter().enumerate() {
                acc += Rational::from(v.at(r, c) * m) / n as u32;
            }
            next.data[i * d + r] += Rational::from(&acc / 8u32);
        }
    }
    next
}
