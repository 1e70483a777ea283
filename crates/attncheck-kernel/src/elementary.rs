//! Elementary functions on intervals.
//!
//! MPFR rounds `exp`, `ln`, `sqrt`, `sin`, `cos` and integer powers correctly in
//! every direction, so a monotone function costs one MPFR call per endpoint (`exp`
//! of a narrow interval: one call for both, [`crate::exp_near`]).
//! `sin` and `cos` are not monotone: their extrema inside the interval are found
//! with an enclosure of π (never by hulling the endpoint values alone).

use super::Interval;
use crate::exp_near::{exp_near, near};
use rug::float::Round;
use rug::ops::{PowAssignRound, SubAssignRound};
use rug::{Float, Integer};

fn f(prec: u32, x: &Float) -> Float {
    Float::with_val(prec, x)
}

impl Interval {
    /// `e^x`: increasing, so `[RD(e^lo), RU(e^hi)]`.
    ///
    /// ```
    /// use attncheck_kernel::Interval;
    /// let e = Interval::one(128).exp();
    /// assert!(!e.is_point()); // e is irrational: the two ends differ by one ulp
    /// assert!(e.contains(&Interval::one(256).exp())); // and it contains a sharper enclosure
    /// ```
    ///
    /// When the two ends are close (within 2^{−(q/2+2)}, q = p + 32), both come from
    /// one MPFR call at q bits (the private module `exp_near`; the same correctly rounded values,
    /// or the two calls below when it cannot tell).
    pub fn exp(&self) -> Interval {
        let p = self.prec();
        let (a, b) = (self.lo(), self.hi());
        if a.prec() == p && b.prec() == p && near(a, b, p) {
            if let Some([lo, hi]) = exp_near([a, b], [Round::Down, Round::Up], p) {
                return Interval::from_raw(lo, hi);
            }
        }
        let mut lo = f(p, self.lo());
        let mut hi = f(p, self.hi());
        lo.exp_round(Round::Down);
        hi.exp_round(Round::Up);
        Interval::from_raw(lo, hi)
    }

    /// e^{−x} (the exponential of the negation).
    pub fn neg_exp(&self) -> Interval {
        (-self).exp()
    }

    /// `ln x`: increasing on x > 0, so `[RD(ln lo), RU(ln hi)]`. An enclosure that
    /// touches or crosses 0 (`lo ≤ 0`) may hold a point where ln is undefined, so
    /// the result is the whole line (no information), never the ray `[−∞, ln hi]`:
    /// see [`Interval::checked_ln`].
    pub fn ln(&self) -> Interval {
        self.checked_ln()
            .unwrap_or_else(|| Interval::entire(self.prec()))
    }

    /// `ln x` when the enclosure lies inside the open domain x > 0 (`lo > 0`), else
    /// `None`: ln 0 = −∞ is not a real, so `lo = 0` (touching the edge) is refused
    /// as well as `lo < 0`. The certificate evaluator turns `None` into an
    /// undefined term.
    ///
    /// ```
    /// use attncheck_kernel::Interval;
    /// assert!(Interval::zero(64).checked_ln().is_none()); // ln 0
    /// assert!(Interval::one(64).checked_ln().unwrap().lo().is_zero()); // ln 1 = 0
    /// ```
    pub fn checked_ln(&self) -> Option<Interval> {
        if *self.lo() <= 0 {
            return None;
        }
        let p = self.prec();
        let mut lo = f(p, self.lo());
        let mut hi = f(p, self.hi());
        lo.ln_round(Round::Down);
        hi.ln_round(Round::Up);
        Some(Interval::from_raw(lo, hi))
    }

    /// `√x`: increasing on x ≥ 0. An interval reaching below 0 may hold a point
    /// outside the domain and gives `[−∞, +∞]`, so a caller cannot certify
    /// anything with it (see [`Interval::checked_sqrt`]).
    pub fn sqrt(&self) -> Interval {
        self.checked_sqrt()
            .unwrap_or_else(|| Interval::entire(self.prec()))
    }

    /// `√x` when the enclosure lies inside the closed domain x ≥ 0 (`lo ≥ 0`; −0
    /// counts as 0), else `None`. Touching the edge is fine here: √0 = 0 is defined,
    /// and `[RD √lo, RU √hi]` encloses √x for every x in the enclosure.
    ///
    /// ```
    /// use attncheck_kernel::Interval;
    /// assert!(Interval::zero(64).checked_sqrt().unwrap().is_point()); // √0 = 0
    /// assert!(Interval::from_i64(64, -1).hull(&Interval::one(64)).checked_sqrt().is_none());
    /// ```
    pub fn checked_sqrt(&self) -> Option<Interval> {
        if *self.lo() < 0 {
            return None;
        }
        let p = self.prec();
        let mut lo = f(p, self.lo());
        let mut hi = f(p, self.hi());
        lo.sqrt_round(Round::Down);
        hi.sqrt_round(Round::Up);
        Some(Interval::from_raw(lo, hi))
    }

    /// `xⁿ` for an integer `n`. Odd `n` is increasing; even `n` decreases on
    /// `x ≤ 0` and increases on `x ≥ 0`, so an interval containing 0 has minimum 0.
    /// Negative `n` is `1/x^{|n|}`, undefined at 0: an enclosure containing 0 gives
    /// the whole line (see [`Interval::checked_powi`]). `|n|` is taken as a `u32`,
    /// so `i32::MIN` does not overflow.
    pub fn powi(&self, n: i32) -> Interval {
        self.checked_powi(n)
            .unwrap_or_else(|| Interval::entire(self.prec()))
    }

    /// `xⁿ`, or `None` when `n < 0` and 0 lies in the enclosure (x⁻ⁿ = 1/xⁿ is
    /// undefined at 0; touching 0 is refused like crossing it). `n ≥ 0` is total
    /// (x⁰ = 1, including 0⁰).
    pub fn checked_powi(&self, n: i32) -> Option<Interval> {
        let p = self.prec();
        let m = n.unsigned_abs();
        if m == 0 {
            return Some(Interval::one(p));
        }
        if n < 0 && self.contains_zero() {
            return None;
        }
        let pw = |x: &Float, r: Round| {
            let mut y = f(p, x);
            y.pow_assign_round(m, r);
            y
        };
        let pos = if m % 2 == 1 || *self.lo() >= 0 {
            Interval::from_raw(pw(self.lo(), Round::Down), pw(self.hi(), Round::Up))
        } else if *self.hi() <= 0 {
            Interval::from_raw(pw(self.hi(), Round::Down), pw(self.lo(), Round::Up))
        } else {
            Interval::from_raw(Float::with_val(p, 0), pw(&self.mag(), Round::Up))
        };
        if n < 0 {
            // 0 ∉ x, so xⁿ has one sign and 1/xⁿ is finite; if |x|ⁿ underflowed to 0
            // in the rounding, the quotient is the whole line (no information).
            Some(&Interval::one(p) / &pos)
        } else {
            Some(pos)
        }
    }

    /// ```
    /// use attncheck_kernel::Interval;
    /// // the maximum at 0 lies inside [−1, 1]: the endpoint values alone would miss it
    /// let x = Interval::parse_decimal(64, "-1").unwrap().hull(&Interval::one(64));
    /// assert_eq!(*x.cos().hi(), 1);
    /// ```
    ///
    /// `cos x`. Its maxima are at 2kπ and its minima at (2k+1)π; between two
    /// consecutive multiples of π it is monotone. We enclose x/π, list every
    /// integer k that may satisfy kπ ∈ x, and use ±1 for each such extremum;
    /// otherwise the range is spanned by the endpoint values.
    pub fn cos(&self) -> Interval {
        self.trig(false)
    }

    /// `sin x`. Its maxima are at (2k + ½)π and minima at (2k + 3/2)π; handled
    /// like [`Interval::cos`] with x/π − ½ in place of x/π.
    pub fn sin(&self) -> Interval {
        self.trig(true)
    }

    fn trig(&self, is_sin: bool) -> Interval {
        let p = self.prec();
        let full = Interval::from_raw(Float::with_val(p, -1), Float::with_val(p, 1));
        if !self.is_finite() {
            return full;
        }
        // An extremum (k + off)·π lies in [a, b] only if ⌈RD(a/π) − off⌉ ≤ k ≤ ⌊RU(b/π) − off⌋,
        // off = 0 for cos, ½ for sin; even k is a maximum (+1), odd k a minimum (−1).
        // RD(a/π) uses π's upper end when a ≥ 0 and its lower end when a < 0 (and vice versa for RU).
        let pi_lo = Float::with_val_round(p, rug::float::Constant::Pi, Round::Down).0;
        let pi_hi = Float::with_val_round(p, rug::float::Constant::Pi, Round::Up).0;
        let (a, b) = (self.lo(), self.hi());
        let mut qa =
            Float::with_val_round(p, a / if *a >= 0 { &pi_hi } else { &pi_lo }, Round::Down).0;
        let mut qb =
            Float::with_val_round(p, b / if *b >= 0 { &pi_lo } else { &pi_hi }, Round::Up).0;
        if is_sin {
            qa.sub_assign_round(0.5, Round::Down);
            qb.sub_assign_round(0.5, Round::Up);
        }
        let (Some((kmin, _)), Some((kmax, _))) = (
            qa.to_integer_round(Round::Up),
            qb.to_integer_round(Round::Down),
        ) else {
            return full;
        };
        let count = Integer::from(&kmax - &kmin) + 1u32;
        let (has_even, has_odd) = if count <= 0 {
            (false, false)
        } else if count >= 2 {
            (true, true)
        } else {
            let even = kmin.is_even();
            (even, !even)
        };
        if has_even && has_odd {
            return full;
        }
        // [RD f(x), RU f(x)] from one MPFR call: the ternary value says whether the
        // rounded-down result is exact; if not, the true value lies strictly below
        // its successor.
        let both = |x: &Float| {
            let mut y = f(p, x);
            let ord = if is_sin {
                y.sin_round(Round::Down)
            } else {
                y.cos_round(Round::Down)
            };
            let mut up = y.clone();
            if ord != std::cmp::Ordering::Equal {
                up.next_up();
            }
            (y, up)
        };
        let (fa_lo, fa_hi) = both(a);
        let (fb_lo, fb_hi) = if a == b {
            (fa_lo.clone(), fa_hi.clone())
        } else {
            both(b)
        };
        let lo = if has_odd {
            Float::with_val(p, -1)
        } else if fa_lo < fb_lo {
            fa_lo
        } else {
            fb_lo
        };
        let hi = if has_even {
            Float::with_val(p, 1)
        } else if fa_hi > fb_hi {
            fa_hi
        } else {
            fb_hi
        };
        let lo = if lo < -1 { Float::with_val(p, -1) } else { lo };
        let hi = if hi > 1 { Float::with_val(p, 1) } else { hi };
        Interval::from_raw(lo, hi)
    }
}
