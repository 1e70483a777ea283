//! The `Interval` type and its arithmetic (+, −, ×, ÷, hull, intersection).
//!
//! Invariant: `lo ≤ hi`, neither is NaN, `lo < +∞` and `hi > −∞`. Both endpoints
//! carry the interval's precision. Every constructor and operation keeps the
//! invariant; a would-be NaN becomes the whole line `[−∞, +∞]`.

use rug::float::{Round, Special};
use rug::ops::{AddAssignRound, NegAssign, SubAssignRound};
use rug::{Float, Integer, Rational};
use std::cmp::Ordering;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A closed interval `[lo, hi]` of extended reals with MPFR endpoints, rounded
/// outward by every operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    lo: Float,
    hi: Float,
}

/// The smallest precision the kernel accepts (MPFR's own minimum is 1 bit; we
/// refuse less than single precision so reports stay meaningful).
pub const MIN_PREC: u32 = 24;

/// `prec` clamped to the precisions the kernel accepts (`MIN_PREC` up to MPFR's maximum).
pub fn checked_prec(prec: u32) -> u32 {
    prec.clamp(MIN_PREC, rug::float::prec_max())
}

impl Interval {
    // ----- constructors -------------------------------------------------------

    /// Builds `[lo, hi]` from two endpoints that the caller already rounded
    /// outward. NaN endpoints or `lo > hi` give the whole line (never NaN).
    ///
    /// Public, and not a road to `certified` (issue #24): an interval built here is
    /// the caller's claim about its value, and the application records what it
    /// computes from one as an observation or a consistency reading at most. A
    /// certified check is only a [`Decision`](crate::Decision) of [`check`](crate::check),
    /// which evaluates a statement's formulas from exact data by itself and never
    /// takes an interval from outside.
    pub fn from_endpoints(lo: Float, hi: Float) -> Interval {
        let prec = lo.prec().max(hi.prec());
        if lo.is_nan()
            || hi.is_nan()
            || lo > hi
            || lo == Special::Infinity
            || hi == Special::NegInfinity
        {
            return Interval::entire(prec);
        }
        let mut lo = lo;
        let mut hi = hi;
        if lo.prec() != prec {
            lo.set_prec_round(prec, Round::Down);
        }
        if hi.prec() != prec {
            hi.set_prec_round(prec, Round::Up);
        }
        Interval { lo, hi }
    }

    /// `[−∞, +∞]`: no information.
    pub fn entire(prec: u32) -> Interval {
        let prec = checked_prec(prec);
        Interval {
            lo: Float::with_val(prec, Special::NegInfinity),
            hi: Float::with_val(prec, Special::Infinity),
        }
    }

    /// The point `[0, 0]`.
    pub fn zero(prec: u32) -> Interval {
        Interval::from_i64(prec, 0)
    }

    /// The point `[1, 1]`.
    pub fn one(prec: u32) -> Interval {
        Interval::from_i64(prec, 1)
    }

    /// Encloses an integer: a point when it fits in `prec` bits.
    pub fn from_i64(prec: u32, v: i64) -> Interval {
        Interval::from_integer(prec, &Integer::from(v))
    }

    /// Encloses an arbitrary integer.
    pub fn from_integer(prec: u32, v: &Integer) -> Interval {
        let prec = checked_prec(prec);
        Interval {
            lo: Float::with_val_round(prec, v, Round::Down).0,
            hi: Float::with_val_round(prec, v, Round::Up).0,
        }
    }

    /// Encloses an `f64` (a point whenever `prec ≥ 53`). NaN gives the whole line.
    pub fn from_f64(prec: u32, v: f64) -> Interval {
        let prec = checked_prec(prec);
        if v.is_nan() {
            return Interval::entire(prec);
        }
        Interval::from_endpoints(
            Float::with_val_round(prec, v, Round::Down).0,
            Float::with_val_round(prec, v, Round::Up).0,
        )
    }

    /// Encloses an exact rational: `lo = RD(q)`, `hi = RU(q)`.
    ///
    /// ```
    /// use attncheck_kernel::Interval;
    /// use rug::Rational;
    /// let third = Rational::from((1, 3));
    /// let x = Interval::from_rational(53, &third);
    /// assert!(x.lo() < x.hi() && x.contains_rational(&third)); // not rounded to nearest
    /// let half = Interval::from_rational(53, &Rational::from((1, 2)));
    /// assert!(half.is_point()); // representable: a point
    /// ```
    pub fn from_rational(prec: u32, q: &Rational) -> Interval {
        let prec = checked_prec(prec);
        Interval {
            lo: Float::with_val_round(prec, q, Round::Down).0,
            hi: Float::with_val_round(prec, q, Round::Up).0,
        }
    }

    /// Encloses the dyadic `m·2^e`.
    pub fn from_dyadic(prec: u32, m: &Integer, e: i32) -> Interval {
        let prec = checked_prec(prec);
        Interval::from_integer(prec, m).mul_2exp(e)
    }

    /// Encloses a decimal or rational literal (`"0.1"`, `"-3/4"`, `"1.5e-3"`,
    /// `"2^-8"`), parsed exactly first, so `"0.1"` gives `[RD(1/10), RU(1/10)]`.
    ///
    /// ```
    /// use attncheck_kernel::Interval;
    /// let x = Interval::parse_decimal(64, "0.1").unwrap();
    /// assert!(*x.lo() < 0.1f64 || *x.hi() > 0.1f64); // the double 0.1 is not 1/10
    /// assert!(x.contains_rational(&rug::Rational::from((1, 10))));
    /// assert!(Interval::parse_decimal(64, "2^-8").unwrap().is_point());
    /// ```
    pub fn parse_decimal(prec: u32, s: &str) -> Result<Interval, super::ParseRationalError> {
        Ok(Interval::from_rational(prec, &super::parse_rational(s)?))
    }

    /// An enclosure of π.
    pub fn pi(prec: u32) -> Interval {
        let prec = checked_prec(prec);
        Interval {
            lo: Float::with_val_round(prec, rug::float::Constant::Pi, Round::Down).0,
            hi: Float::with_val_round(prec, rug::float::Constant::Pi, Round::Up).0,
        }
    }

    /// An enclosure of ln 2.
    pub fn ln2(prec: u32) -> Interval {
        let prec = checked_prec(prec);
        Interval {
            lo: Float::with_val_round(prec, rug::float::Constant::Log2, Round::Down).0,
            hi: Float::with_val_round(prec, rug::float::Constant::Log2, Round::Up).0,
        }
    }

    // ----- accessors ----------------------------------------------------------

    /// The lower endpoint.
    pub fn lo(&self) -> &Float {
        &self.lo
    }
    /// The upper endpoint.
    pub fn hi(&self) -> &Float {
        &self.hi
    }
    /// The working precision in bits.
    pub fn prec(&self) -> u32 {
        self.lo.prec()
    }
    /// Whether `lo = hi` (an exactly known value).
    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }
    /// Whether both endpoints are finite.
    pub fn is_finite(&self) -> bool {
        self.lo.is_finite() && self.hi.is_finite()
    }
    /// Whether the exact rational `q` lies in `[lo, hi]`.
    pub fn contains_rational(&self, q: &Rational) -> bool {
        let below = match self.lo.partial_cmp(q) {
            Some(o) => o != Ordering::Greater,
            None => false,
        };
        let above = match self.hi.partial_cmp(q) {
            Some(o) => o != Ordering::Less,
            None => false,
        };
        below && above
    }
    /// Whether the float `x` lies in `[lo, hi]`.
    pub fn contains_float(&self, x: &Float) -> bool {
        !x.is_nan() && &self.lo <= x && x <= &self.hi
    }
    /// Whether `other ⊆ self`.
    pub fn contains(&self, other: &Interval) -> bool {
        self.lo <= other.lo && other.hi <= self.hi
    }
    /// Whether 0 ∈ self.
    pub fn contains_zero(&self) -> bool {
        self.lo <= 0 && self.hi >= 0
    }
    /// The midpoint, rounded to nearest: for display only, never for a proof.
    pub fn mid(&self) -> Float {
        if !self.is_finite() {
            return Float::with_val(self.prec(), Special::Nan);
        }
        let mut m = Float::with_val(self.prec() + 1, &self.lo + &self.hi);
        m /= 2;
        m
    }
    /// The midpoint as the nearest `f64` (display and heuristics only).
    pub fn mid_f64(&self) -> f64 {
        if self.lo.is_infinite() || self.hi.is_infinite() {
            if self.lo == self.hi {
                return self.lo.to_f64();
            }
            return f64::NAN;
        }
        self.mid().to_f64()
    }
    /// The width `hi − lo`, rounded up (so it bounds the true width).
    pub fn width_up(&self) -> Float {
        Float::with_val_round(self.prec(), &self.hi - &self.lo, Round::Up).0
    }
    /// The magnitude `max(|lo|, |hi|)` (exact: no rounding).
    pub fn mag(&self) -> Float {
        let a = Float::with_val(self.prec(), self.lo.abs_ref());
        let b = Float::with_val(self.prec(), self.hi.abs_ref());
        if a > b {
            a
        } else {
            b
        }
    }
    /// The lower endpoint as an `f64` rounded down (still a lower bound).
    pub fn lo_f64(&self) -> f64 {
        self.lo.to_f64_round(Round::Down)
    }
    /// The upper endpoint as an `f64` rounded up (still an upper bound).
    pub fn hi_f64(&self) -> f64 {
        self.hi.to_f64_round(Round::Up)
    }

    // ----- set operations -----------------------------------------------------

    /// The convex hull of two intervals.
    pub fn hull(&self, other: &Interval) -> Interval {
        let lo = if self.lo <= other.lo {
            self.lo.clone()
        } else {
            other.lo.clone()
        };
        let hi = if self.hi >= other.hi {
            self.hi.clone()
        } else {
            other.hi.clone()
        };
        Interval::from_endpoints(lo, hi)
    }

    /// The intersection, or `None` when the intervals are disjoint.
    pub fn intersect(&self, other: &Interval) -> Option<Interval> {
        let lo = if self.lo >= other.lo {
            &self.lo
        } else {
            &other.lo
        };
        let hi = if self.hi <= other.hi {
            &self.hi
        } else {
            &other.hi
        };
        if lo <= hi {
            Some(Interval::from_endpoints(lo.clone(), hi.clone()))
        } else {
            None
        }
    }

    /// The same enclosure carried at another precision (rounded outward).
    pub fn with_prec(&self, prec: u32) -> Interval {
        let prec = checked_prec(prec);
        Interval::from_endpoints(
            Float::with_val_round(prec, &self.lo, Round::Down).0,
            Float::with_val_round(prec, &self.hi, Round::Up).0,
        )
    }

    // ----- in-place arithmetic (no allocation: for inner loops) ----------------

    /// `self += other`, rounding outward, in place.
    pub fn add_assign(&mut self, other: &Interval) {
        self.lo.add_assign_round(&other.lo, Round::Down);
        self.hi.add_assign_round(&other.hi, Round::Up);
        self.fix();
    }

    /// `self −= other`, rounding outward, in place.
    pub fn sub_assign(&mut self, other: &Interval) {
        self.lo.sub_assign_round(&other.hi, Round::Down);
        self.hi.sub_assign_round(&other.lo, Round::Up);
        self.fix();
    }

    /// Restores the invariant after an operation that could produce NaN.
    fn fix(&mut self) {
        if self.lo.is_nan() || self.hi.is_nan() || self.lo > self.hi {
            self.lo = Float::with_val(self.prec(), Special::NegInfinity);
            self.hi = Float::with_val(self.prec(), Special::Infinity);
        }
    }

    pub(crate) fn from_raw(lo: Float, hi: Float) -> Interval {
        Interval::from_endpoints(lo, hi)
    }
}

/// `a·b` rounded in direction `r`, with `0·∞ = 0` (the product of the sets
/// {0} and [c, ∞] is {0}, so 0 is the right endpoint candidate).
fn mul_round(prec: u32, a: &Float, b: &Float, r: Round) -> Float {
    if a.is_zero() || b.is_zero() {
        return Float::with_val(prec, 0);
    }
    Float::with_val_round(prec, a * b, r).0
}

fn min_max(prec: u32, cands: [(Float, Float); 4]) -> Interval {
    let mut lo = Float::with_val(prec, Special::Infinity);
    let mut hi = Float::with_val(prec, Special::NegInfinity);
    for (d, u) in cands {
        if d.is_nan() || u.is_nan() {
            return Interval::entire(prec);
        }
        if d < lo {
            lo = d;
        }
        if u > hi {
            hi = u;
        }
    }
    Interval::from_endpoints(lo, hi)
}

impl Add for &Interval {
    type Output = Interval;
    /// `[a.lo + b.lo, a.hi + b.hi]` with `RD`/`RU`.
    fn add(self, rhs: &Interval) -> Interval {
        let prec = self.prec().max(rhs.prec());
        Interval::from_endpoints(
            Float::with_val_round(prec, &self.lo + &rhs.lo, Round::Down).0,
            Float::with_val_round(prec, &self.hi + &rhs.hi, Round::Up).0,
        )
    }
}

impl Sub for &Interval {
    type Output = Interval;
    /// `[a.lo − b.hi, a.hi − b.lo]` with `RD`/`RU`.
    fn sub(self, rhs: &Interval) -> Interval {
        let prec = self.prec().max(rhs.prec());
        Interval::from_endpoints(
            Float::with_val_round(prec, &self.lo - &rhs.hi, Round::Down).0,
            Float::with_val_round(prec, &self.hi - &rhs.lo, Round::Up).0,
        )
    }
}

/// ```
/// use attncheck_kernel::Interval;
/// use rug::{float::Special, Float};
/// // 0·∞ = 0: [0, 0] × [1, +∞] is exactly [0, 0], never NaN
/// let ray = Interval::from_endpoints(Float::with_val(53, 1), Float::with_val(53, Special::Infinity));
/// let p = &Interval::zero(53) * &ray;
/// assert!(p.is_point() && p.lo().is_zero());
/// ```
impl Mul for &Interval {
    type Output = Interval;
    /// The product by the classic sign-case table: each operand is nonnegative
    /// (lo ≥ 0), nonpositive (hi ≤ 0) or straddles 0, and the extremes of
    /// {x·y : x ∈ [a, b], y ∈ [c, d]} are attained at endpoint products, which the
    /// table names (the set is a rectangle's image under a bilinear map, monotone
    /// in each argument on each sign class). Two directed products per case, four
    /// only when both straddle 0; `0·∞ = 0`.
    fn mul(self, rhs: &Interval) -> Interval {
        let prec = self.prec().max(rhs.prec());
        let (a, b, c, d) = (&self.lo, &self.hi, &rhs.lo, &rhs.hi);
        let down = |x: &Float, y: &Float| mul_round(prec, x, y, Round::Down);
        let up = |x: &Float, y: &Float| mul_round(prec, x, y, Round::Up);
        let class = |lo: &Float, hi: &Float| {
            if !lo.is_sign_negative() || lo.is_zero() {
                0 // nonnegative
            } else if hi.is_sign_negative() || hi.is_zero() {
                1 // nonpositive
            } else {
                2 // straddles 0
            }
        };
        let (lo, hi) = match (class(a, b), class(c, d)) {
            (0, 0) => (down(a, c), up(b, d)),
            (0, 1) => (down(b, c), up(a, d)),
            (0, _) => (down(b, c), up(b, d)),
            (1, 0) => (down(a, d), up(b, c)),
            (1, 1) => (down(b, d), up(a, c)),
            (1, _) => (down(a, d), up(a, c)),
            (_, 0) => (down(a, d), up(b, d)),
            (_, 1) => (down(b, c), up(a, c)),
            _ => {
                let (l1, l2) = (down(a, d), down(b, c));
                let (h1, h2) = (up(a, c), up(b, d));
                (if l1 < l2 { l1 } else { l2 }, if h1 > h2 { h1 } else { h2 })
            }
        };
        Interval::from_endpoints(lo, hi)
    }
}

impl Div for &Interval {
    type Output = Interval;
    /// The min and max of the four endpoint quotients; `[−∞, +∞]` when the
    /// divisor contains 0 (see [`Interval::checked_div`]) or a quotient is ∞/∞.
    fn div(self, rhs: &Interval) -> Interval {
        self.checked_div(rhs)
            .unwrap_or_else(|| Interval::entire(self.prec().max(rhs.prec())))
    }
}

impl Interval {
    /// `self / rhs`, or `None` when the divisor's enclosure contains 0 (touching it,
    /// `[0, d]` or `[−0, d]`, counts: x/0 is undefined). Otherwise the divisor has
    /// one sign, x/y is monotone in each argument on the rectangle, and the extremes
    /// are among the four endpoint quotients, each rounded in its direction; an
    /// ∞/∞ endpoint makes the result the whole line (no information, never NaN).
    ///
    /// ```
    /// use attncheck_kernel::Interval;
    /// let one = Interval::one(64);
    /// assert!(one.checked_div(&Interval::zero(64)).is_none()); // 1/0
    /// assert!(one.checked_div(&Interval::from_i64(64, 4)).unwrap().is_point()); // 1/4
    /// ```
    pub fn checked_div(&self, rhs: &Interval) -> Option<Interval> {
        let prec = self.prec().max(rhs.prec());
        if rhs.contains_zero() {
            return None;
        }
        let q = |x: &Float, y: &Float, r: Round| Float::with_val_round(prec, x / y, r).0;
        let (a, b, c, d) = (&self.lo, &self.hi, &rhs.lo, &rhs.hi);
        Some(min_max(
            prec,
            [
                (q(a, c, Round::Down), q(a, c, Round::Up)),
                (q(a, d, Round::Down), q(a, d, Round::Up)),
                (q(b, c, Round::Down), q(b, c, Round::Up)),
                (q(b, d, Round::Down), q(b, d, Round::Up)),
            ],
        ))
    }
}

impl Neg for &Interval {
    type Output = Interval;
    /// `[−hi, −lo]` (exact).
    fn neg(self) -> Interval {
        let mut lo = self.hi.clone();
        let mut hi = self.lo.clone();
        lo.neg_assign();
        hi.neg_assign();
        Interval { lo, hi }
    }
}

macro_rules! forward_owned {
    ($tr:ident, $m:ident) => {
        impl $tr for Interval {
            type Output = Interval;
            fn $m(self, rhs: Interval) -> Interval {
                (&self).$m(&rhs)
            }
        }
        impl $tr<&Interval> for Interval {
            type Output = Interval;
            fn $m(self, rhs: &Interval) -> Interval {
                (&self).$m(rhs)
            }
        }
        impl $tr<Interval> for &Interval {
            type Output = Interval;
            fn $m(self, rhs: Interval) -> Interval {
                self.$m(&rhs)
            }
        }
    };
}
forward_owned!(Add, add);
forward_owned!(Sub, sub);
forward_owned!(Mul, mul);
forward_owned!(Div, div);

impl Neg for Interval {
    type Output = Interval;
    fn neg(self) -> Interval {
        -&self
    }
}

impl Interval {
    /// Multiplies by an exact integer (outward).
    pub fn mul_i64(&self, k: i64) -> Interval {
        self * &Interval::from_i64(self.prec(), k)
    }
    /// Divides by a non-zero exact integer (outward).
    pub fn div_i64(&self, k: i64) -> Interval {
        self / &Interval::from_i64(self.prec(), k)
    }
    /// Multiplies by `2^e` (exact unless the exponent range overflows, then outward).
    pub fn mul_2exp(&self, e: i32) -> Interval {
        // scaling by a power of two is exact unless it leaves MPFR's exponent
        // range, and then it rounds in the requested direction.
        let prec = self.prec();
        Interval::from_endpoints(
            Float::with_val_round(prec, &self.lo << e, Round::Down).0,
            Float::with_val_round(prec, &self.hi << e, Round::Up).0,
        )
    }
    /// The larger of two intervals pointwise: `[max(lo), max(hi)]`.
    pub fn max(&self, other: &Interval) -> Interval {
        let lo = if self.lo >= other.lo {
            &self.lo
        } else {
            &other.lo
        };
        let hi = if self.hi >= other.hi {
            &self.hi
        } else {
            &other.hi
        };
        Interval::from_endpoints(lo.clone(), hi.clone())
    }
    /// The smaller of two intervals pointwise: `[min(lo), min(hi)]`.
    pub fn min(&self, other: &Interval) -> Interval {
        let lo = if self.lo <= other.lo {
            &self.lo
        } else {
            &other.lo
        };
        let hi = if self.hi <= other.hi {
            &self.hi
        } else {
            &other.hi
        };
        Interval::from_endpoints(lo.clone(), hi.clone())
    }
    /// `|x|`.
    pub fn abs(&self) -> Interval {
        if self.lo >= 0 {
            self.clone()
        } else if self.hi <= 0 {
            -self
        } else {
            Interval::from_endpoints(Float::with_val(self.prec(), 0), self.mag())
        }
    }
}
