//! Fast certified softmax for rows of logits at up to 128 bits: a fixed-point
//! exponential with a proven error bound, exact integer sums, both cores.
//!
//! [`softmax`](crate::kernel::softmax) spends one correctly rounded MPFR `exp` per
//! endpoint (≈ 1 µs at 128 bits). Here every `e^{z_j − M}` is computed on
//! machine integers ([`exp_fixed`] documents the algorithm and its error bound),
//! the row sums are exact sums of integers (so they do not depend on how the row
//! is split between threads), and the rows' entries are processed in parallel
//! with rayon. Every rounding is directed: floors give lower bounds, and upper
//! bounds add the proven error bound or take ceilings.
//!
//! Inputs the fixed-point path does not cover (precision above 128 bits,
//! infinite endpoints, |z| ≥ 2^28, a narrowed MPFR exponent range) go to the MPFR
//! reference [`crate::kernel::softmax_into`] instead, so the result is
//! always an enclosure.
//!
//! Not part of the trusted kernel (crates/attncheck-kernel): the certificate
//! evaluator never calls it. It serves the flow and the sparse construction, and is
//! tested separately (`tests/it/fast_softmax.rs`: its fixed-point internals, and proptest
//! against MPFR at p + 64 bits and against the kernel's [`softmax`](crate::kernel::softmax)).
//! The internals those tests call are `#[doc(hidden)] pub`, for them only: not API.

use crate::escalate::Ladder;
use crate::kernel::{checked_prec, softmax_into, Interval};
use rayon::prelude::*;
use rug::float::{Constant, Round};
use rug::ops::AssignRound;
use rug::{Assign, Float, Integer};
use std::sync::OnceLock;

/// The largest output precision the fixed-point path serves; above it the MPFR
/// reference takes over (the exp's error bound is ≈ 2^-123 relative).
const MAX_PREC: u32 = 128;
/// Inputs must satisfy |z| < 2^MAX_EXP, so shifted arguments stay below 2^29
/// and every exponent stays far inside MPFR's range (checked at run time).
const MAX_EXP: i32 = 28;
/// Fractional bits of the fixed-point arguments and of the row sums.
#[doc(hidden)]
pub const FRAC: i32 = 192;
/// Entries per rayon task: big enough to amortise scheduling. Results do not
/// depend on it (per-entry work is independent and sums are exact).
const MIN_LEN: usize = 1024;

// ----- 256-bit integers (two's complement where signed) -----------------------

/// A 256-bit integer as two `u128` halves; wrapping arithmetic, read as two's
/// complement where the comment says "signed".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[doc(hidden)]
pub struct U256 {
    /// The high 128 bits.
    pub hi: u128,
    /// The low 128 bits.
    pub lo: u128,
}

impl U256 {
    const ZERO: U256 = U256 { hi: 0, lo: 0 };
    /// The most negative signed value.
    pub const MIN: U256 = U256 {
        hi: 1 << 127,
        lo: 0,
    };

    fn from_u128(lo: u128) -> U256 {
        U256 { hi: 0, lo }
    }

    /// `v·2^pos` for `0 ≤ pos < 256` (bits shifted past 2^256 are dropped; the
    /// callers keep values below 2^255).
    fn shl_u128(v: u128, pos: u32) -> U256 {
        match pos {
            0 => U256 { hi: 0, lo: v },
            1..=127 => U256 {
                hi: v >> (128 - pos),
                lo: v << pos,
            },
            128..=255 => U256 {
                hi: v << (pos - 128),
                lo: 0,
            },
            _ => U256::ZERO,
        }
    }

    fn wrapping_add(self, o: U256) -> U256 {
        let (lo, c) = self.lo.overflowing_add(o.lo);
        U256 {
            hi: self.hi.wrapping_add(o.hi).wrapping_add(u128::from(c)),
            lo,
        }
    }

    fn wrapping_sub(self, o: U256) -> U256 {
        let (lo, b) = self.lo.overflowing_sub(o.lo);
        U256 {
            hi: self.hi.wrapping_sub(o.hi).wrapping_sub(u128::from(b)),
            lo,
        }
    }

    fn wrapping_neg(self) -> U256 {
        U256::ZERO.wrapping_sub(self)
    }

    /// Signed reading: whether the top bit is set.
    pub fn is_negative(self) -> bool {
        self.hi >> 127 == 1
    }

    /// The larger of two signed values.
    pub fn signed_max(self, o: U256) -> U256 {
        let key = |u: U256| (u.hi ^ (1 << 127), u.lo);
        if key(o) > key(self) {
            o
        } else {
            self
        }
    }

    fn is_zero(self) -> bool {
        self.hi == 0 && self.lo == 0
    }

    fn limbs(self) -> [u64; 4] {
        [
            self.lo as u64,
            (self.lo >> 64) as u64,
            self.hi as u64,
            (self.hi >> 64) as u64,
        ]
    }

    fn from_limbs(l: [u64; 4]) -> U256 {
        U256 {
            hi: (u128::from(l[3]) << 64) | u128::from(l[2]),
            lo: (u128::from(l[1]) << 64) | u128::from(l[0]),
        }
    }

    /// `self·k` modulo 2^256.
    fn wrapping_mul_u64(self, k: u64) -> U256 {
        let a = self.limbs();
        let mut out = [0u64; 4];
        let mut carry: u128 = 0;
        for (o, &ai) in out.iter_mut().zip(&a) {
            let t = u128::from(ai) * u128::from(k) + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        U256::from_limbs(out)
    }

    /// Signed `self·k` modulo 2^256.
    fn wrapping_mul_i64(self, k: i64) -> U256 {
        let p = self.wrapping_mul_u64(k.unsigned_abs());
        if k < 0 {
            p.wrapping_neg()
        } else {
            p
        }
    }

    /// The exact value `self·2^-FRAC` in `f` (whose precision must be ≥ 256).
    fn assign_to(self, f: &mut Float) {
        f.assign(self.hi);
        *f <<= 128;
        *f += self.lo;
        *f >>= FRAC;
    }
}

/// The exact product `a·b` as (high, low) halves.
#[doc(hidden)]
pub fn mul_full(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64 as u128, a >> 64);
    let (b0, b1) = (b as u64 as u128, b >> 64);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 as u64 as u128) + (p10 as u64 as u128);
    let lo = (p00 as u64 as u128) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

/// `⌊a·b / 2^128⌋`.
fn mulhi(a: u128, b: u128) -> u128 {
    mul_full(a, b).0
}

/// `⌊a·b / 2^127⌋`; the caller guarantees it is below 2^128.
fn mulhi127(a: u128, b: u128) -> u128 {
    let (h, l) = mul_full(a, b);
    (h << 1) | (l >> 127)
}

/// `a·b` rounded to 128 significant bits, down or up: returns `(m, s)` with
/// `m·2^s` the rounded product and `m ≥ 2^127` (for non-zero `a`, `b`).
#[doc(hidden)]
pub fn mul_round(a: u128, b: u128, up: bool) -> (u128, i32) {
    let (h, l) = mul_full(a, b);
    if h == 0 {
        // a·b < 2^128: exact in 128 bits
        let z = l.leading_zeros();
        return (l << z, -(z as i32));
    }
    let z = h.leading_zeros();
    let (top, rest) = if z == 0 {
        (h, l)
    } else {
        ((h << z) | (l >> (128 - z)), l << z)
    };
    let shift = 128 - z as i32;
    if up && rest != 0 {
        match top.checked_add(1) {
            Some(t) => (t, shift),
            None => (1u128 << 127, shift + 1),
        }
    } else {
        (top, shift)
    }
}

/// `v` (any non-negative integer) as an `u64`: limbs are `u64` or `u32`.
fn widen<T: Into<u64>>(v: T) -> u64 {
    v.into()
}

/// The significand of a normal float of precision ≤ 128 as `(m, e)` with
/// `value = m·2^e` and `m ≥ 2^127` (exact, no allocation).
fn float_parts(f: &Float) -> Option<(u128, i32)> {
    let exp = f.get_exp()?;
    let sig = f.get_significand()?;
    let limbs = sig.as_limbs();
    let lb = 8 * std::mem::size_of_val(limbs.first()?) as u32;
    let total = lb * limbs.len() as u32;
    if total > 128 {
        return None;
    }
    let mut m: u128 = 0;
    for (i, &l) in limbs.iter().enumerate() {
        m |= u128::from(widen(l)) << (lb * i as u32);
    }
    m <<= 128 - total;
    Some((m, exp - 128))
}

/// `|x|·2^FRAC` truncated, whether that dropped bits, and the sign; `None`
/// unless x is finite with |x| < 2^MAX_EXP. No allocation.
fn fixed_parts(x: &Float) -> Option<(bool, U256, bool)> {
    if x.is_zero() {
        return Some((false, U256::ZERO, false));
    }
    let exp = x.get_exp()?;
    if exp > MAX_EXP {
        return None;
    }
    let sig = x.get_significand()?;
    let limbs = sig.as_limbs();
    let lb = 8 * std::mem::size_of_val(limbs.first()?) as i64;
    let n = limbs.len() as i64;
    let mut mag = U256::ZERO;
    let mut inexact = false;
    for (i, &l) in limbs.iter().enumerate() {
        let v = widen(l);
        // bit 0 of this limb has weight 2^pos in units of 2^-FRAC
        let pos = i as i64 * lb + i64::from(exp) - n * lb + i64::from(FRAC);
        if pos >= 0 {
            mag = mag.wrapping_add(U256::shl_u128(u128::from(v), pos as u32));
        } else if -pos >= lb {
            inexact |= v != 0;
        } else {
            let s = (-pos) as u32;
            mag = mag.wrapping_add(U256::from_u128(u128::from(v >> s)));
            inexact |= v & ((1u64 << s) - 1) != 0;
        }
    }
    Some((x.is_sign_negative(), mag, inexact))
}

/// `⌊x·2^FRAC⌋` and `⌈x·2^FRAC⌉` (signed), for |x| < 2^MAX_EXP.
#[doc(hidden)]
pub fn fixed_floor_ceil(x: &Float) -> Option<(U256, U256)> {
    let (neg, mag, inexact) = fixed_parts(x)?;
    let up = if inexact {
        mag.wrapping_add(U256::from_u128(1))
    } else {
        mag
    };
    Some(if neg {
        (up.wrapping_neg(), mag.wrapping_neg())
    } else {
        (mag, up)
    })
}

/// `⌊m·2^{e+FRAC}⌋` (or the ceiling when `up`), for results below 2^255.
fn to_fixed(m: u128, e: i32, up: bool) -> U256 {
    let s = e + FRAC;
    if s >= 0 {
        return U256::shl_u128(m, s as u32);
    }
    let r = (-s) as u32;
    let (q, lost) = if r >= 128 {
        (0, m != 0)
    } else {
        (m >> r, m & ((1u128 << r) - 1) != 0)
    };
    U256::from_u128(q + u128::from(up && lost))
}

// ----- the fixed-point exponential ---------------------------------------------

/// Constants computed once with MPFR: ln 2 and the three exp tables.
#[doc(hidden)]
pub struct Tables {
    /// `⌊ln 2 · 2^192⌋`.
    pub ln2: U256,
    /// `t1[j] = ⌊e^{j/2^8}·2^127⌋` for j ≤ 177 (e^{178/256} > 2).
    pub t1: Vec<u128>,
    /// `t2[j] = ⌊e^{j/2^16}·2^127⌋`.
    pub t2: Vec<u128>,
    /// `t3[j] = ⌊e^{j/2^24}·2^127⌋`.
    pub t3: Vec<u128>,
}

/// `⌊v·2^scale⌋` for the exact real v that `f(prec, round)` brackets: the
/// working precision is doubled from `scale + 64` bits (at most [`FLOOR_DOUBLINGS`]
/// times) until the floors of both directed roundings agree, so the floor is exact
/// (Ziv's strategy).
///
/// Every v here is ln 2 or e^x for a rational x (the tables): ln 2 is irrational and
/// e^x is irrational for rational x ≠ 0 (Lindemann), so v·2^scale is not an integer
/// and a finite precision separates it from its neighbours; e⁰ = 1 is exact at any
/// precision. The bound makes a
/// wrong `f` (one that brackets an integer badly) fail loudly instead of looping.
fn exact_floor(scale: u32, f: impl Fn(u32, Round) -> Float) -> Integer {
    let floors = |prec: u32| {
        let a = (f(prec, Round::Down) << scale).to_integer_round(Round::Down);
        let b = (f(prec, Round::Up) << scale).to_integer_round(Round::Down);
        match (a, b) {
            (Some((a, _)), Some((b, _))) if a == b => Some(a),
            _ => None,
        }
    };
    crate::escalate::escalate(
        Ladder::new(scale + 64, FLOOR_DOUBLINGS),
        floors,
        Option::is_some,
    )
    .settled()
    .and_then(|(floor, _)| floor)
    .expect(
        "an irrational constant's floor settles within 2^10 times the first precision (see above)",
    )
}

/// How many times [`exact_floor`] doubles its precision (to at most 2¹⁰·(scale + 64)
/// bits, far above what ln 2 and the exp tables need).
const FLOOR_DOUBLINGS: u32 = 10;

fn exp_table(len: usize, step: i32) -> Vec<u128> {
    (0..len)
        .map(|j| {
            let t = exact_floor(127, |p, r| {
                let mut x = Float::with_val(p, j) >> step;
                x.exp_round(r);
                x
            });
            t.to_u128().expect("table entry below 2^128")
        })
        .collect()
}

/// The constants, computed on first use.
#[doc(hidden)]
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let ln2 = exact_floor(192, |p, r| Float::with_val_round(p, Constant::Log2, r).0);
        let lo = Integer::from(&ln2 & &Integer::from(u128::MAX));
        let hi = Integer::from(&ln2 >> 128);
        Tables {
            ln2: U256 {
                hi: hi.to_u128().expect("ln 2 < 1"),
                lo: lo.to_u128().expect("masked"),
            },
            t1: exp_table(178, 8),
            t2: exp_table(256, 16),
            t3: exp_table(256, 24),
        }
    })
}

/// An enclosure `[lo·2^exp, hi·2^exp]` of a positive real.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bounds {
    lo: u128,
    hi: u128,
    exp: i32,
}

/// The proven error bound of [`exp_neg`], in units of its last place.
const EXP_ERR: u128 = 16;

/// Encloses `e^{−y}` for the signed fixed-point `y = Y·2^-192`, |y| < 2^29.
///
/// Algorithm (u = 2^-127, v = 2^-128):
/// 1. Pick k with `r̂ = k·L − Y ∈ [0, ⌊ln2·2^192⌋]`, where `L = ⌊ln2·2^192⌋` for
///    k ≥ 0 and `L + 1` for k < 0; so the true `r = k·ln2 − y` satisfies
///    `0 ≤ r − r̂·2^-192 ≤ |k|·2^-192`, and `e^{−y} = 2^{−k}·e^r`.
/// 2. `R = ⌊r̂/2^64⌋` (128 fractional bits), split as `R·v = j₁/2^8 + j₂/2^16 +
///    j₃/2^24 + τ` with `0 ≤ τ < 2^-24`; `d = r − R·v ∈ [0, v + 2^-162]`.
/// 3. Tables `Tᵢ = ⌊e^{jᵢ/2^{8i}}/u⌋ ≥ 2^127`; `A = ⌊T₁T₂/2^127⌋`,
///    `B = ⌊A·T₃/2^127⌋`.
/// 4. `Q ≈ (e^τ − 1)/v` by Horner on τ(1 + τ/2(1 + τ/3(1 + τ/4(1 + τ/5)))) with
///    floors; `C = B + ⌊B·Q/2^128⌋`.
///
/// Error bound: the result is `[C, C + 16]·2^{−127−k}`.
/// * Lower: every step is a floor of non-negative terms, the tables are below
///   their exact values and the Taylor sum below e^τ, and d ≥ 0; so
///   `C·u ≤ e^{R·v} ≤ e^r`.
/// * Upper: Horner's floors lose < 1.51 v in each partial term and < 1 + 2^-23 v
///   in Q; the Taylor remainder is ≤ τ⁶/720·e^τ < 2^-153; so `e^τ < 1 + (Q + 2)v`
///   and `B·u·e^τ < (C + 3)u` (as B < 2^128). Each table entry and each of A, B
///   is within a factor (1 + 2^-127) of its exact value (all are ≥ 2^127), and
///   `e^d < 1 + 2^-127`; so `e^r < (1 + 2^-127)^6·(C + 3)u < (C + 3 + 12.01)u`,
///   using `C < 2^128` (e^{R·v} < 2 as R·v < ln 2).
///
/// When `C + 16` overflows 128 bits both ends are halved (floor, ceiling).
fn exp_neg(y: U256) -> Bounds {
    let t = tables();
    // k ≈ ⌈y/ln2⌉ from the top two limbs (two's complement: limb 3 is ⌊y⌋).
    let l = y.limbs();
    let yf = (l[3] as i64) as f64 + (l[2] as f64) * (-64f64).exp2();
    let mut k = (yf / std::f64::consts::LN_2).ceil() as i64;
    let one = U256::from_u128(1);
    let r = loop {
        let lk = if k >= 0 {
            t.ln2
        } else {
            t.ln2.wrapping_add(one)
        };
        let r = lk.wrapping_mul_i64(k).wrapping_sub(y);
        if r.is_negative() {
            k += 1;
        } else if r > t.ln2 {
            k -= 1;
        } else {
            break r;
        }
    };
    // r ≤ ⌊ln2·2^192⌋ < 2^192: its top 128 bits are limbs 1 and 2.
    let rr = (r.hi << 64) | (r.lo >> 64);
    let j1 = (rr >> 120) as usize;
    let j2 = ((rr >> 112) & 0xff) as usize;
    let j3 = ((rr >> 104) & 0xff) as usize;
    let tau = rr & ((1u128 << 104) - 1);
    let a = mulhi127(t.t1[j1], t.t2[j2]);
    let b = mulhi127(a, t.t3[j3]);
    let w4 = tau / 5;
    let w3 = (tau + mulhi(tau, w4)) / 4;
    let w2 = (tau + mulhi(tau, w3)) / 3;
    let w1 = (tau + mulhi(tau, w2)) / 2;
    let q = tau + mulhi(tau, w1);
    let c = b + mulhi(b, q);
    let exp = -127 - k as i32;
    match c.checked_add(EXP_ERR) {
        Some(hi) => Bounds { lo: c, hi, exp },
        None => Bounds {
            lo: c >> 1,
            hi: (c >> 1) + EXP_ERR / 2 + 1,
            exp: exp + 1,
        },
    }
}

/// Whether MPFR's exponent range holds every exponent the fast path can make
/// (|exponent| < 2^30 − 2^20 for |y| < 2^29).
fn exponent_range_ok() -> bool {
    let lim = (1 << 30) - (1 << 20);
    rug::float::exp_min() <= -lim && rug::float::exp_max() >= lim
}

/// `m·2^e` rounded to `prec` bits in direction `r` (the shift is exact: the
/// exponent range was checked).
fn make_float(prec: u32, m: u128, e: i32, r: Round) -> Float {
    let mut f = Float::with_val_round(prec, m, r).0;
    f <<= e;
    f
}

/// Certified `e^x` by the fixed-point algorithm of the softmax fast path:
/// `[RD-side bound of e^{lo}, RU-side bound of e^{hi}]` at `prec` bits, relative
/// width ≤ 2^-122 before rounding to `prec`.
///
/// Returns `None` outside the fast path's domain: `prec > 128`, an infinite
/// endpoint or |x| ≥ 2^28 (use [`Interval::exp`] there). Each endpoint is
/// converted to 192 fractional bits with a floor (lower end) or a ceiling (upper
/// end), and `exp_neg`'s proven bound `[C, C + 16]` ulps gives the rest.
pub fn exp_fixed(x: &Interval, prec: u32) -> Option<Interval> {
    let prec = checked_prec(prec);
    if prec > MAX_PREC || !exponent_range_ok() {
        return None;
    }
    let (lo_floor, _) = fixed_floor_ceil(x.lo())?;
    let (_, hi_ceil) = fixed_floor_ceil(x.hi())?;
    let a = exp_neg(lo_floor.wrapping_neg());
    let b = exp_neg(hi_ceil.wrapping_neg());
    Some(Interval::from_endpoints(
        make_float(prec, a.lo, a.exp, Round::Down),
        make_float(prec, b.hi, b.exp, Round::Up),
    ))
}

// ----- softmax -------------------------------------------------------------------

/// The exponentials of one entry's endpoints, shifted by the row's M.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// encloses `e^{lo − M}`
    a: Bounds,
    /// encloses `e^{hi − M}` (equal to `a` for a point)
    b: Bounds,
    point: bool,
}

/// Encloses `e^{x − M}` for an endpoint x, with `m = ⌈M·2^192⌉`: the lower
/// bound uses `y = m − ⌊x⌋` and, when x was not exact in 192 bits, the upper
/// bound adds one ulp (`⌈x⌉ − ⌊x⌋ = 1` unit, and `e^{2^-192} < 1 + 2^-191`).
fn exp_shifted(x: &Float, m: U256) -> Bounds {
    let (f, c) = fixed_floor_ceil(x).expect("range checked before");
    let e = exp_neg(m.wrapping_sub(f));
    if f == c {
        return e;
    }
    match e.hi.checked_add(1) {
        Some(hi) => Bounds { hi, ..e },
        None => Bounds {
            lo: e.lo >> 1,
            hi: (e.hi >> 1) + 1,
            exp: e.exp + 1,
        },
    }
}

fn entry(zi: &Interval, m: U256) -> Entry {
    let a = exp_shifted(zi.lo(), m);
    let point = zi.is_point();
    let b = if point { a } else { exp_shifted(zi.hi(), m) };
    Entry { a, b, point }
}

/// Per-thread reusable MPFR temporaries for the interval (non-point) entries.
struct Scratch {
    num: Float,
    den: Float,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            num: Float::new(128),
            den: Float::new(256),
        }
    }
}

/// The row's exact sums and the reciprocals used by the point entries.
struct RowSums {
    /// `S⁻ ≤ Σ e^{lo_j − M}` in units of 2^-192
    s_lo: U256,
    /// `S⁺ ≥ Σ e^{hi_j − M}` in units of 2^-192
    s_hi: U256,
    /// `inv_lo ≤ 1/S⁺` as (m, e): m·2^e
    inv_lo: (u128, i32),
    /// `inv_hi ≥ 1/S⁻`, or `None` when `S⁻ = 0`
    inv_hi: Option<(u128, i32)>,
}

fn recip(s: U256, r: Round) -> (u128, i32) {
    let mut f = Float::new(256);
    s.assign_to(&mut f);
    let inv = Float::with_val_round(128, f.recip_ref(), r).0;
    float_parts(&inv).expect("1/S of a positive sum is normal")
}

fn row_sums(entries: &[Entry]) -> RowSums {
    let (s_lo, s_hi) = entries
        .par_iter()
        .with_min_len(MIN_LEN)
        .fold(
            || (U256::ZERO, U256::ZERO),
            |(l, h), e| {
                (
                    l.wrapping_add(to_fixed(e.a.lo, e.a.exp, false)),
                    h.wrapping_add(to_fixed(e.b.hi, e.b.exp, true)),
                )
            },
        )
        // integer sums are exact: any grouping gives the same totals
        .reduce(
            || (U256::ZERO, U256::ZERO),
            |(a, b), (c, d)| (a.wrapping_add(c), b.wrapping_add(d)),
        );
    RowSums {
        s_lo,
        s_hi,
        inv_lo: recip(s_hi, Round::Down),
        inv_hi: (!s_lo.is_zero()).then(|| recip(s_lo, Round::Up)),
    }
}

/// One output entry: [`output_point`] or [`output_interval`].
fn output(e: &Entry, s: &RowSums, prec: u32, scr: &mut Scratch) -> Interval {
    if e.point {
        output_point(e.a, s, prec)
    } else {
        output_interval(e, s, prec, scr)
    }
}

/// A point entry: `p ∈ [a⁻·(1/S⁺), a⁺·(1/S⁻)]`, since `p = a/S` with
/// a = e^{z−M} and S = Σ e^{z_j−M}, and S⁻ ≤ S ≤ S⁺; each product rounded to
/// 128 bits in the direction of its bound, then to `prec`.
fn output_point(a: Bounds, s: &RowSums, prec: u32) -> Interval {
    let (m, sh) = mul_round(a.lo, s.inv_lo.0, false);
    let lo = make_float(prec, m, a.exp + s.inv_lo.1 + sh, Round::Down);
    let hi = match s.inv_hi {
        // m ≥ 2^127, so m·2^x < 1 exactly when x < −127: p ≤ 1 caps it
        Some((im, ie)) => match mul_round(a.hi, im, true) {
            (m, sh) if a.exp + ie + sh < -127 => make_float(prec, m, a.exp + ie + sh, Round::Up),
            _ => Float::with_val(prec, 1),
        },
        None => Float::with_val(prec, 1),
    };
    Interval::from_endpoints(lo, hi)
}

/// An interval entry: the kernel's formula `[a⁻/(a⁻ + R⁺), a⁺/(a⁺ + R⁻)]` with
/// `R⁺ = S⁺ − b⁻` and `R⁻ = max(0, S⁻ − c⁺)` (here a⁻, c⁺ enclose e^{lo−M} and
/// b⁻, a⁺ enclose e^{hi−M}); each denominator is formed on its safe side in
/// exact integers, and MPFR divides with directed rounding.
fn output_interval(e: &Entry, s: &RowSums, prec: u32, scr: &mut Scratch) -> Interval {
    // lower: a⁻ / (⌈a⁻⌉ + S⁺ − ⌊b⁻⌋)
    let den = to_fixed(e.a.lo, e.a.exp, true)
        .wrapping_add(s.s_hi)
        .wrapping_sub(to_fixed(e.b.lo, e.b.exp, false));
    scr.num.assign(e.a.lo);
    scr.num <<= e.a.exp;
    den.assign_to(&mut scr.den);
    let lo = Float::with_val_round(prec, &scr.num / &scr.den, Round::Down).0;
    // upper: a⁺ / (⌊a⁺⌋ + max(0, S⁻ − ⌈c⁺⌉))
    let c_up = to_fixed(e.a.hi, e.a.exp, true);
    let r = if s.s_lo > c_up {
        s.s_lo.wrapping_sub(c_up)
    } else {
        U256::ZERO
    };
    let den = to_fixed(e.b.hi, e.b.exp, false).wrapping_add(r);
    let mut hi = Float::with_val(prec, 1);
    if !den.is_zero() {
        scr.num.assign(e.b.hi);
        scr.num <<= e.b.exp;
        den.assign_to(&mut scr.den);
        hi.assign_round(&scr.num / &scr.den, Round::Up);
        if hi > 1 {
            hi.assign(1);
        }
    }
    Interval::from_endpoints(lo, hi)
}

/// Certified softmax of a row at `prec ≤ 128` bits, several times faster than
/// [`softmax`](crate::kernel::softmax) and on all of rayon's threads.
///
/// Guarantee: the same as `softmax`'s (each output contains `e^{z_i}/Σ_j e^{z_j}`
/// for every choice of exact z_j in the inputs), with a relative width within
/// ≈ 2^-120 of point inputs at 128 bits. The result does not depend on the number
/// of threads: each entry is computed on its own, and the two row sums are exact
/// sums of integers (each term floored or ceiled to 2^-192 first).
///
/// Falls back to [`crate::kernel::softmax_into`] at `prec` for
/// `prec > 128`, infinite endpoints or |z| ≥ 2^28.
pub fn softmax_fast(z: &[Interval], prec: u32) -> Vec<Interval> {
    let prec = checked_prec(prec);
    let mut out = Vec::with_capacity(z.len());
    if z.is_empty() {
        return out;
    }
    let in_range = |x: &Float| x.is_zero() || (x.is_finite() && x.get_exp() <= Some(MAX_EXP));
    if prec > MAX_PREC
        || !exponent_range_ok()
        || !z.iter().all(|zi| in_range(zi.lo()) && in_range(zi.hi()))
    {
        softmax_into(z, prec, &mut out);
        return out;
    }
    // One hand-over to the pool for the four parallel passes: called from outside
    // it, each pass would otherwise wake the workers anew.
    rayon::scope(|_| fast_row(z, prec, &mut out));
    out
}

/// The fixed-point passes of [`softmax_fast`] on an in-range row (non-empty).
fn fast_row(z: &[Interval], prec: u32, out: &mut Vec<Interval>) {
    // ⌈M·2^192⌉ for M = max hi_j: a max is independent of the grouping
    let m = z
        .par_iter()
        .with_min_len(MIN_LEN)
        .map(|zi| fixed_floor_ceil(zi.hi()).expect("range checked").1)
        .reduce(|| U256::MIN, U256::signed_max);
    let entries: Vec<Entry> = z
        .par_iter()
        .with_min_len(MIN_LEN)
        .map(|zi| entry(zi, m))
        .collect();
    let sums = row_sums(&entries);
    entries
        .par_iter()
        .with_min_len(MIN_LEN)
        .map_init(Scratch::new, |scr, e| output(e, &sums, prec, scr))
        .collect_into_vec(out);
}
