//! Double-double ("dd") arithmetic: a real number carried as an unevaluated sum
//! `hi + lo` of two `f64`s with `hi = RN(hi + lo)`, about 106 bits of precision in
//! f64's exponent range. The arithmetic of the flow's dd tier
//! ([`super::ddflow`]); like that tier it is **not** certified (point arithmetic,
//! round to nearest), but every operation has a stated relative error bound, proven
//! below in sketch and checked against MPFR at 256 bits by property tests
//! (`tests/it/dynamics_dd.rs`).
//!
//! `u = 2^−53` is the unit roundoff of f64 (round to nearest); `RN` rounds to nearest.
//! The bounds assume no overflow and no underflow (every intermediate result normal
//! or zero); the flow's values stay far inside that range (|x| < 10^40, and
//! exponentials below e^−600 are flushed to zero on purpose, see [`exp`]).
//!
//! # Error-free transformations
//!
//! * [`two_sum`] (Knuth): `s = RN(a + b)` and `e` with `s + e = a + b` exactly,
//!   for any finite a, b (6 operations, no branch).
//! * [`fast_two_sum`] (Dekker): the same in 3 operations when `|a| ≥ |b|` (or a = 0).
//! * [`two_prod`]: `p = RN(ab)`, `e = RN(ab − p)` by one fused multiply-add
//!   (`f64::mul_add`, correctly rounded on every target: a hardware FMA or libm's
//!   exact software fma). `ab − p` is representable (it is a multiple of
//!   `ulp(a)ulp(b)/4` below `ulp(p)` in magnitude: 106 bits suffice for ab), so the
//!   fma rounds nothing and `p + e = ab` exactly.
//!
//! # Operations on dd numbers (Joldes, Muller, Popescu, "Tight and rigorous error
//! # bounds for basic building blocks of double-word arithmetic", ACM TOMS 44, 2017)
//!
//! * [`add`]: AccurateDWPlusDW (their Alg. 6): `|add(x, y) − (x + y)| ≤ 3u²/(1 − 4u)·|x + y|`
//!   — relative to the *result*, so it holds under cancellation too.
//! * [`add_f64`]: DWPlusFP (Alg. 4): relative error ≤ 2u².
//! * [`mul`]: DWTimesDW3 (Alg. 12, with fma): relative error ≤ 5u² (their bound;
//!   4u² was later proven by Muller and Rideau, 2022).
//! * [`mul_f64`]: DWTimesFP3 (Alg. 9, with fma): relative error ≤ 2u².
//! * [`div`]: one correction of the f64 quotient. With `q1 = RN(x_h/y_h)`,
//!   `|x/y − q1| ≤ 3u|x/y|` (the dropped low parts and one rounding), so the residual
//!   `r = x − q1·y` (by `mul_f64` and `add`) is `≤ 3.01u|x|` and is computed with
//!   absolute error `≤ 2u²|q1 y| + 3u²|r| ≤ 2.01u²|x|`; `q2 = RN(r_h/y_h)` adds the
//!   relative errors of `r_l` dropped (u), `y_l` dropped (u) and the division (u), each
//!   times `|q2| ≤ 3.02u|x/y|`; `q1 + q2` is renormalised exactly (fast_two_sum,
//!   `|q2| ≤ |q1|`). In all `|div(x, y) − x/y| ≤ (2.01 + 9.1)u²|x/y| ≤ 12u²|x/y|`.
//!
//! # The exponential
//!
//! [`exp`] for `x ∈ [−600, 700]` (0 below −600: `e^−600 < 2^−865` is far below
//! anything a softmax row, whose largest entry is 1, can register at 106 bits; and
//! this keeps every intermediate normal). With `k = round(x_h·64/ln 2)`, `k = 64q + j`:
//!
//! ```text
//! e^x = 2^q · 2^{j/64} · e^r,   r = x − k·(ln 2)/64,   |r| ≤ (ln 2)/128 + 2^−40 < 0.00542.
//! ```
//!
//! * `(ln 2)/64 = C1 + C2 + C3` with C1 and C2 of 36 bits each (so `k·C1`, `k·C2` are
//!   exact for |k| < 2^17) and C3 = RN of the rest (`|(ln 2)/64 − ΣC| ≤ 2^−130`); r is
//!   formed by three `add_f64`, each with error ≤ 2u² of an intermediate below 2^−20
//!   in magnitude beyond |r|, plus `|k·C3 − RN(k·C3)| ≤ u·2^17·2^−78`: the absolute
//!   error of r is below 2^−120, a relative error below 2^−119.9 in e^r.
//! * `e^r` by Horner's rule in dd on the Taylor polynomial of degree 11, coefficients
//!   `1/m!` rounded to dd (relative error ≤ u² each, exact for m ≤ 2). Truncation:
//!   `|r|^12/12!·e^|r| < 2^−119`. Rounding: the last step `p·r + 1` contributes
//!   `≤ 3u²(1.006) + 5u²·0.0055`, the earlier ones are damped by |r| < 0.0055 per step
//!   (`≤ 0.06u²` in all): `≤ 3.1u²`.
//! * `2^{j/64}` from a table of 64 dd values rounded from 256-bit MPFR (relative error
//!   ≤ u² + 2^−250), one `mul` (5u²), and the exact scaling by 2^q.
//!
//! Adding up (first order; the products of the small terms are below u³):
//! `|exp(x) − e^x| ≤ (3.1 + 1 + 5 + 0.1)u²·e^x < 10u²·e^x`.

use rug::float::Round;
use rug::ops::AssignRound;
use rug::{Float, Rational};
use std::sync::OnceLock;

/// A double-double number `hi + lo` (normalised: `hi = RN(hi + lo)`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dd {
    /// The leading part, `RN(hi + lo)`.
    pub hi: f64,
    /// The trailing part, `|lo| ≤ ulp(hi)/2`.
    pub lo: f64,
}

/// The unit roundoff of f64, `u = 2^−53`.
pub const U: f64 = 1.0 / 9007199254740992.0;

/// `(s, e)` with `s = RN(a + b)` and `s + e = a + b` exactly (Knuth's TwoSum).
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// [`two_sum`] for `|a| ≥ |b|` (Dekker's Fast2Sum).
#[inline(always)]
pub fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let e = b - (s - a);
    (s, e)
}

/// `(p, e)` with `p = RN(ab)` and `p + e = ab` exactly (one fused multiply-add).
#[inline(always)]
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl Dd {
    /// Zero.
    pub const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };
    /// One.
    pub const ONE: Dd = Dd { hi: 1.0, lo: 0.0 };

    /// An f64, exactly.
    #[inline(always)]
    pub fn from_f64(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    /// The dd number nearest to an MPFR float: `hi = RN(v)`, `lo = RN(v − hi)`
    /// (relative error ≤ u²; the subtraction is exact at v's precision + 64 bits).
    pub fn from_float(v: &Float) -> Dd {
        let hi = v.to_f64();
        if !hi.is_finite() || hi == 0.0 {
            return Dd { hi, lo: 0.0 };
        }
        let mut r = Float::new(v.prec().max(53) + 64);
        r.assign_round(v - hi, Round::Nearest);
        Dd::normalise(hi, r.to_f64())
    }

    /// The dd number nearest to a rational (through 256-bit MPFR: relative error
    /// ≤ u² + 2^−250).
    pub fn from_rational(q: &Rational) -> Dd {
        Dd::from_float(&Float::with_val(256, q))
    }

    /// `hi + lo` rounded to nearest at `prec` bits (exact when `prec` ≥ the span of
    /// the two parts, e.g. 128 bits for all but pathological gaps).
    pub fn to_float(self, prec: u32) -> Float {
        let mut f = Float::with_val(prec, self.hi);
        f += self.lo;
        f
    }

    /// `hi + lo` exactly, as a rational (`None` when not finite).
    pub fn to_rational(self) -> Option<Rational> {
        let a = Rational::from_f64(self.hi)?;
        let b = Rational::from_f64(self.lo)?;
        Some(a + b)
    }

    /// Renormalises `a + b` (any two f64s) exactly.
    #[inline(always)]
    pub fn normalise(a: f64, b: f64) -> Dd {
        let (hi, lo) = two_sum(a, b);
        Dd { hi, lo }
    }

    /// `|x|` (exact).
    #[inline(always)]
    pub fn abs(self) -> Dd {
        if self.hi < 0.0 {
            -self
        } else {
            self
        }
    }

    /// `x·2^k` for an exact power of two `p2 = 2^k` (exact without under/overflow).
    #[inline(always)]
    pub fn scale(self, p2: f64) -> Dd {
        Dd {
            hi: self.hi * p2,
            lo: self.lo * p2,
        }
    }

    /// Whether both parts are finite.
    #[inline(always)]
    pub fn is_finite(self) -> bool {
        self.hi.is_finite() && self.lo.is_finite()
    }

    /// Total order on the value for finite normalised numbers (hi first, then lo).
    #[inline(always)]
    pub fn gt(self, o: Dd) -> bool {
        self.hi > o.hi || (self.hi == o.hi && self.lo > o.lo)
    }
}

impl std::ops::Neg for Dd {
    type Output = Dd;
    /// `−x` (exact).
    #[inline(always)]
    fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
}

/// `x + y` (AccurateDWPlusDW: relative error ≤ 3u²/(1 − 4u)).
#[inline(always)]
pub fn add(x: Dd, y: Dd) -> Dd {
    let (sh, sl) = two_sum(x.hi, y.hi);
    let (th, tl) = two_sum(x.lo, y.lo);
    let c = sl + th;
    let (vh, vl) = fast_two_sum(sh, c);
    let w = tl + vl;
    let (hi, lo) = fast_two_sum(vh, w);
    Dd { hi, lo }
}

/// `x − y` ([`add`] of `−y`).
#[inline(always)]
pub fn sub(x: Dd, y: Dd) -> Dd {
    add(x, -y)
}

/// `x + y` for an f64 y (DWPlusFP: relative error ≤ 2u²).
#[inline(always)]
pub fn add_f64(x: Dd, y: f64) -> Dd {
    let (sh, sl) = two_sum(x.hi, y);
    let v = x.lo + sl;
    let (hi, lo) = fast_two_sum(sh, v);
    Dd { hi, lo }
}

/// `x·y` (DWTimesDW3: relative error ≤ 5u²).
#[inline(always)]
pub fn mul(x: Dd, y: Dd) -> Dd {
    let (ch, cl1) = two_prod(x.hi, y.hi);
    let tl0 = x.lo * y.lo;
    let tl1 = x.hi.mul_add(y.lo, tl0);
    let cl2 = x.lo.mul_add(y.hi, tl1);
    let cl3 = cl1 + cl2;
    let (hi, lo) = fast_two_sum(ch, cl3);
    Dd { hi, lo }
}

/// `x·y` for an f64 y (DWTimesFP3: relative error ≤ 2u²).
#[inline(always)]
pub fn mul_f64(x: Dd, y: f64) -> Dd {
    let (ch, cl1) = two_prod(x.hi, y);
    let cl3 = x.lo.mul_add(y, cl1);
    let (hi, lo) = fast_two_sum(ch, cl3);
    Dd { hi, lo }
}

/// `x/y` (one correction of the f64 quotient: relative error ≤ 12u², module docs).
#[inline(always)]
pub fn div(x: Dd, y: Dd) -> Dd {
    let q1 = x.hi / y.hi;
    if !q1.is_finite() || q1 == 0.0 {
        return Dd { hi: q1, lo: 0.0 };
    }
    let r = sub(x, mul_f64(y, q1));
    let q2 = r.hi / y.hi;
    let (hi, lo) = fast_two_sum(q1, q2);
    Dd { hi, lo }
}

/// Constants of [`exp`]: `(ln 2)/64` in three parts, the table `2^{j/64}`, `1/m!`.
struct ExpConsts {
    c1: f64,
    c2: f64,
    c3: f64,
    table: [Dd; 64],
    inv_fact: [Dd; 12],
}

fn exp_consts() -> &'static ExpConsts {
    static C: OnceLock<ExpConsts> = OnceLock::new();
    C.get_or_init(|| {
        let p = 320;
        let c = Float::with_val(p, Float::with_val(p, rug::float::Constant::Log2) / 64);
        let part = |v: &Float| Float::with_val(36, v);
        let c1 = part(&c);
        let rest = Float::with_val(p, &c - &c1);
        let c2 = part(&rest);
        let rest = Float::with_val(p, &rest - &c2);
        let table = std::array::from_fn(|j| {
            let e = Float::with_val(p, Float::with_val(p, j) / 64);
            Dd::from_float(&Float::with_val(p, Float::with_val(p, 2).pow(&e)))
        });
        let mut f = Rational::from(1);
        let inv_fact = std::array::from_fn(|m| {
            if m > 0 {
                f *= m as u32;
            }
            Dd::from_rational(&Rational::from(f.recip_ref()))
        });
        ExpConsts {
            c1: c1.to_f64(),
            c2: c2.to_f64(),
            c3: rest.to_f64(),
            table,
            inv_fact,
        }
    })
}

use rug::ops::Pow;

/// Below this argument [`exp`] returns 0 (module docs).
pub const EXP_FLUSH: f64 = -600.0;

/// `e^x` for `x ∈ [−600, 700]` with relative error < 10u² (module docs); 0 for
/// `x < −600`, +∞ above 700, NaN for NaN.
#[inline(always)]
pub fn exp(x: Dd) -> Dd {
    if x.hi < EXP_FLUSH {
        return Dd::ZERO;
    }
    if x.hi.is_nan() || x.hi > 700.0 {
        return Dd {
            hi: if x.hi.is_nan() {
                f64::NAN
            } else {
                f64::INFINITY
            },
            lo: 0.0,
        };
    }
    exp_core(x, exp_consts())
}

#[inline(always)]
fn exp_core(x: Dd, c: &ExpConsts) -> Dd {
    const INV: f64 = 92.33248261689366; // 64/ln 2 (any nearby value only moves r's range)
    let k = (x.hi * INV).round();
    let r = add_f64(x, -(k * c.c1));
    let r = add_f64(r, -(k * c.c2));
    let r = add_f64(r, -(k * c.c3));
    let mut p = c.inv_fact[11];
    for m in (0..11).rev() {
        p = add(mul(p, r), c.inv_fact[m]);
    }
    let ki = k as i64;
    let (q, j) = (ki.div_euclid(64), ki.rem_euclid(64) as usize);
    let e = mul(c.table[j], p);
    // 2^q is normal for q ∈ [−1022, 1023]; here q ∈ [−866, 1010]
    e.scale(f64::from_bits(((q + 1023) as u64) << 52))
}
