//! The f64 tier (issue #41): closed intervals of reals with binary64 ends, rounded
//! outward without a rounding-mode switch and without `unsafe`. [`check`](crate::check)
//! decides each obligation here first and escalates to the MPFR [`Interval`] only when
//! this tier leaves it undecided (the evaluator's tier module, `expr::tier`).
//!
//! # The one rounding argument
//!
//! Every inexact operation here is one IEEE 754 operation in round-to-nearest (the
//! only mode Rust runs in: it never changes the floating-point environment, and this
//! crate forbids the `unsafe` that could), followed by one step outward:
//! the lower end `next_down(RN(y))`, the upper end `next_up(RN(y))`
//! (`f64::next_down`/`next_up`, stable std). Why that encloses the exact `y`:
//!
//! - **Finite y in range.** Let `d ≤ y ≤ u` be the two adjacent binary64 numbers
//!   around `y` (`d = u = y` when y is representable). Round-to-nearest returns one of
//!   them (its error is at most ½ ulp, but all that is used is that it is `d` or
//!   `u`). If it returns `d`, then `next_down(d) ≤ y ≤ u = next_up(d)`; if `u`, then
//!   `next_down(u) = d ≤ y ≤ next_up(u)`. So the argument needs no ulp size, and holds
//!   alike at a power of two (where the ulp below is half the ulp above), among
//!   subnormals (evenly spaced binary64 numbers, gradual underflow), and across 0
//!   (`next_down(+0) = next_down(−0) = −2⁻¹⁰⁷⁴`: a result that underflowed to ±0 is
//!   enclosed by the smallest subnormals). Tests: `f64tier::`
//!   `one_step_outward_encloses_at_a_power_of_two`, `underflow_to_a_subnormal_and_to_zero_is_enclosed`.
//! - **Overflow.** When `|y|` exceeds the largest finite number `M`, RN returns `±M`
//!   or `±∞`. If `RN(y) = +∞` then `y > M = next_down(+∞)`: the lower end `M` is
//!   below `y`, the upper end stays `+∞`. If `RN(y) = M < y`, the upper end is
//!   `next_up(M) = +∞`. Symmetrically below. So an overflowing end becomes an
//!   unbounded interval `[M, +∞]` (IEEE 1788: the set of reals ≥ M), never NaN.
//!   Test: `overflow_gives_an_unbounded_end_that_still_decides_the_other_side`.
//! - **Infinite operands.** An end `−∞` (lower) or `+∞` (upper) stands for
//!   "unbounded": the exact endpoint operation is then ±∞ in the extended reals (an
//!   IEEE operation on ±∞ and a finite number returns that infinity exactly), and one
//!   step outward keeps it (`next_down(−∞) = −∞`, `next_up(+∞) = +∞`). The forms
//!   ∞ − ∞, 0·∞ and ∞/∞ do not arise: a lower end is never +∞ and an upper end never
//!   −∞ (the invariant below), sums take lower with lower and upper with upper, 0·∞ is
//!   defined as 0 in [`F64Iv::mul`] (IEEE 1788's endpoint convention), and an ∞/∞
//!   quotient makes [`F64Iv::div`] the whole line (as in the MPFR tier). A NaN end is
//!   never built: [`F64Iv::new`] turns one into *undefined* (see below).
//! - **Exact results** (0 + 0, 1·1, √4, exp 0) are widened by one step all the same:
//!   sound, one ulp loose. A lower end that the widening pushes below a known bound
//!   (√ and exp are ≥ 0) is clamped back to 0, which is exact. Tests:
//!   `exact_results_are_widened_by_one_step`, `sqrt_and_exp_are_clamped_at_zero`.
//!
//! Negation, |·|, min, max and the conversions are exact (no rounding); an end
//! produced by them is the exact end.
//!
//! # exp and ln: CORE-MATH
//!
//! The argument above needs the operation to be *correctly rounded*: + − × ÷ √ are
//! (IEEE 754 requires it, and Rust's `f64` operators and `sqrt` are those operations).
//! Rust's `f64::exp`/`ln` are not: they call the platform's libm, whose error bound is
//! not guaranteed by anything this crate could cite for every platform. So exp and ln
//! (and sin and cos, [`F64Iv::sin`]) come from **CORE-MATH** (`core-math` crate 1.4, C
//! code of the CORE-MATH project, Inria, compiled by `core-math-sys`): `cr_exp`, `cr_log`,
//! `cr_sin` and `cr_cos` are correctly rounded for every binary64 input, in every rounding mode (the project's claim, with its proofs and
//! exhaustive tests of the hard cases). Correctly rounded in round-to-nearest means
//! `RN(e^x)` and `RN(ln x)`, so one step outward encloses them by the argument above.
//! Beyond the library's claim, the conformance suite checks both against MPFR at 512
//! bits on random arguments and against the IEEE 1788 vectors, where each end must
//! also lie within one step of the standard's tightest result (which only a correctly
//! rounded function passes everywhere).
//!
//! # Undefined, unbounded, comparisons
//!
//! A value is either an interval `[lo, hi]` with `lo ≤ hi`, no NaN, `lo ≠ +∞` and
//! `hi ≠ −∞` (IEEE 1788's closed intervals of reals, possibly unbounded: an infinite
//! end is not a member), or **undefined**: the result of an operation outside its
//! domain (÷ by an enclosure containing 0, √ of one reaching below 0, ln of one
//! reaching 0 or below) or of one that produced a NaN. Undefined is stricter than the
//! MPFR tier's whole line: every operation on it is undefined (also `0·t`, `|t|`,
//! `min(t, 3)`), and every comparison with it is [`Certainty::Unknown`] — the
//! certificate language's undefined term. A partial operation is undefined here
//! exactly when the MPFR tier's `checked_*` form is `None` on the same enclosure, so
//! a larger (f64) enclosure is undefined whenever a tighter (MPFR) one is.
//!
//! Comparisons are decided on the ends as IEEE compares them, which is right for
//! unbounded intervals (`lo = −∞` is below every member of anything, `hi = +∞`
//! above) and for ±0 (equal: `[−0, −0] < [0, 0]` is `False`, `≤` is `True`).
//! `a < b` is `True` when `a.hi < b.lo` (every member of a below every member of
//! b) and `False` when `a.lo ≥ b.hi`; otherwise, and whenever a side is undefined,
//! `Unknown`. The same rules as [`Interval::lt`] and friends, so a tier's answer
//! differs from the other's only by being `Unknown` when the enclosures nest.

use crate::{checked_prec, Certainty, Interval};
use rug::float::Round;
use rug::{Float, Rational};

/// A closed interval with binary64 ends, rounded outward, or undefined. See the
/// [module documentation](self) for the rounding argument and the invariant.
///
/// ```
/// use attncheck_kernel::{Certainty, F64Iv};
/// use rug::Rational;
/// let third = F64Iv::from_rational(&Rational::from((1, 3)));
/// let (lo, hi) = third.bounds().unwrap();
/// assert!(lo < hi); // 1/3 is not a binary64 number: two ends
/// let sum = third.add(third).add(third);
/// assert!(sum.contains_f64(1.0));
/// assert_eq!(sum.lt(F64Iv::from_f64(2.0)), Certainty::True);
/// assert_eq!(F64Iv::from_f64(1.0).div(F64Iv::from_f64(0.0)), F64Iv::UNDEFINED);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F64Iv(Option<(f64, f64)>);

/// One step down: `next_down(RN(y)) ≤ y` for the exact `y` whose nearest is `x`.
fn down(x: f64) -> f64 {
    x.next_down()
}

/// One step up: `next_up(RN(y)) ≥ y`.
fn up(x: f64) -> f64 {
    x.next_up()
}

/// An endpoint product with IEEE 1788's convention `0·(±∞) = 0` (the product set of
/// `[0, b]` and `[c, +∞]` has its extremes among the endpoint products read so).
fn prod(x: f64, y: f64) -> f64 {
    if x == 0.0 || y == 0.0 {
        0.0
    } else {
        x * y
    }
}

impl F64Iv {
    /// The undefined value: no real is claimed, nothing is decided on it.
    pub const UNDEFINED: F64Iv = F64Iv(None);

    /// `[lo, hi]` from ends the caller already rounded outward; undefined when an end
    /// is NaN, `lo > hi`, `lo = +∞` or `hi = −∞` (not an interval of reals).
    pub fn new(lo: f64, hi: f64) -> F64Iv {
        // NaN fails every comparison, so `lo <= hi` is false for one
        if lo <= hi && lo != f64::INFINITY && hi != f64::NEG_INFINITY {
            F64Iv(Some((lo, hi)))
        } else {
            F64Iv::UNDEFINED
        }
    }

    /// The ends `RN`-computed, each moved one step outward (the module's argument).
    fn outward(lo: f64, hi: f64) -> F64Iv {
        F64Iv::new(down(lo), up(hi))
    }

    /// The point `[x, x]`; undefined for NaN and ±∞ (not reals).
    pub fn from_f64(x: f64) -> F64Iv {
        if x.is_finite() {
            F64Iv(Some((x, x)))
        } else {
            F64Iv::UNDEFINED
        }
    }

    /// Encloses an exact rational: `[RD(q), RU(q)]` in binary64 (MPFR's directed
    /// rounding to 53 bits, then to binary64's range with subnormals and overflow, in the
    /// same direction: rounding down twice stays below q). A point when q is a binary64
    /// number; beyond the largest finite number an end is ±∞ (`[M, +∞]` for q > M).
    pub fn from_rational(q: &Rational) -> F64Iv {
        let lo = Float::with_val_round(53, q, Round::Down).0;
        let hi = Float::with_val_round(53, q, Round::Up).0;
        F64Iv::new(lo.to_f64_round(Round::Down), hi.to_f64_round(Round::Up))
    }

    /// The binary64 enclosure of an MPFR enclosure (each end rounded outward);
    /// undefined is not an MPFR value, so this is always defined.
    pub fn from_interval(x: &Interval) -> F64Iv {
        F64Iv::new(
            x.lo().to_f64_round(Round::Down),
            x.hi().to_f64_round(Round::Up),
        )
    }

    /// The same set as an MPFR [`Interval`] at `prec` bits (clamped as the kernel
    /// clamps), rounded outward: exact at ≥ 53 bits, where every binary64 number is
    /// representable. `None` when undefined.
    pub fn to_interval(self, prec: u32) -> Option<Interval> {
        let (lo, hi) = self.0?;
        let p = checked_prec(prec);
        Some(Interval::from_endpoints(
            Float::with_val_round(p, lo, Round::Down).0,
            Float::with_val_round(p, hi, Round::Up).0,
        ))
    }

    /// The ends, or `None` when undefined.
    pub fn bounds(self) -> Option<(f64, f64)> {
        self.0
    }

    /// Whether this is an interval (not undefined).
    pub fn is_defined(self) -> bool {
        self.0.is_some()
    }

    /// Whether the real `x` is a member (never for undefined, NaN or ±∞).
    pub fn contains_f64(self, x: f64) -> bool {
        self.0
            .is_some_and(|(lo, hi)| lo <= x && x <= hi && x.is_finite())
    }

    /// `[a, b] + [c, d] ⊆ [↓(a + c), ↑(b + d)]`: + is increasing in both arguments.
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, rhs: F64Iv) -> F64Iv {
        match (self.0, rhs.0) {
            (Some((a, b)), Some((c, d))) => F64Iv::outward(a + c, b + d),
            _ => F64Iv::UNDEFINED,
        }
    }

    /// `[a, b] − [c, d] ⊆ [↓(a − d), ↑(b − c)]`: − is increasing in its first argument
    /// and decreasing in its second; `a − d` is never ∞ − ∞ (a ≠ +∞, d ≠ −∞).
    #[allow(clippy::should_implement_trait)]
    pub fn sub(self, rhs: F64Iv) -> F64Iv {
        match (self.0, rhs.0) {
            (Some((a, b)), Some((c, d))) => F64Iv::outward(a - d, b - c),
            _ => F64Iv::UNDEFINED,
        }
    }

    /// `[−b, −a]` (exact).
    #[allow(clippy::should_implement_trait)]
    pub fn neg(self) -> F64Iv {
        F64Iv(self.0.map(|(a, b)| (-b, -a)))
    }

    /// The product: the extremes of {x·y} on the rectangle are among the four endpoint
    /// products (bilinear, monotone in each argument on each side of 0), read with
    /// `0·∞ = 0`. RN is monotone, so `min RN(pᵢ) = RN(min pᵢ)`: one step outward of the
    /// smallest and largest rounded products encloses the exact extremes.
    #[allow(clippy::should_implement_trait)]
    pub fn mul(self, rhs: F64Iv) -> F64Iv {
        match (self.0, rhs.0) {
            (Some((a, b)), Some((c, d))) => {
                // no product is NaN: 0·∞ is read as 0, and ∞·∞, ∞·x (x ≠ 0) are ±∞
                let p = [prod(a, c), prod(a, d), prod(b, c), prod(b, d)];
                let lo = p.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                F64Iv::outward(lo, hi)
            }
            _ => F64Iv::UNDEFINED,
        }
    }

    /// The quotient, undefined when the divisor's enclosure contains 0 (touching it,
    /// `[0, d]` or `[−0, d]`, counts, as in [`Interval::checked_div`]). Otherwise the
    /// divisor has one sign, x/y is monotone in each argument on the rectangle, and the
    /// extremes are among the four endpoint quotients (`finite/±∞ = ±0` is the exact
    /// limit); RN is monotone, so one step outward of the smallest and largest rounded
    /// quotients encloses them. An ∞/∞ quotient (both operands unbounded) makes the
    /// result the whole line, as in the MPFR tier (IEEE 1788 takes the limit, e.g.
    /// `[1, +∞]/[1, +∞] = [0, +∞]`; the tiers agree with each other instead, so that a
    /// comparison this tier decides is one the MPFR tier decides too).
    #[allow(clippy::should_implement_trait)]
    pub fn div(self, rhs: F64Iv) -> F64Iv {
        let (Some((a, b)), Some((c, d))) = (self.0, rhs.0) else {
            return F64Iv::UNDEFINED;
        };
        if c <= 0.0 && 0.0 <= d {
            return F64Iv::UNDEFINED;
        }
        let q = [a / c, a / d, b / c, b / d];
        if q.iter().any(|x| x.is_nan()) {
            return F64Iv::new(f64::NEG_INFINITY, f64::INFINITY);
        }
        let lo = q.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        F64Iv::outward(lo, hi)
    }

    /// `√x`, undefined when the enclosure reaches below 0 (`[−0, b]` is inside):
    /// increasing, so `[↓√a, ↑√b]`, the lower end clamped at 0 (√ ≥ 0; exact).
    pub fn sqrt(self) -> F64Iv {
        match self.0 {
            Some((a, b)) if a >= 0.0 => F64Iv::new(down(a.sqrt()).max(0.0), up(b.sqrt())),
            _ => F64Iv::UNDEFINED,
        }
    }

    /// `|x|` (exact): `[max(a, −b, 0), max(−a, b)]`, one formula for the three sign cases
    /// (a ≥ 0: `[a, b]`; b ≤ 0: `[−b, −a]`; a < 0 < b: `[0, max(−a, b)]`), so that no
    /// boundary between the cases is a branch whose two sides agree there.
    pub fn abs(self) -> F64Iv {
        F64Iv(self.0.map(|(a, b)| (a.max(-b).max(0.0), b.max(-a))))
    }

    /// `min(x, y)` (exact): increasing in both, so `[min(a, c), min(b, d)]`.
    pub fn min(self, rhs: F64Iv) -> F64Iv {
        match (self.0, rhs.0) {
            (Some((a, b)), Some((c, d))) => F64Iv(Some((a.min(c), b.min(d)))),
            _ => F64Iv::UNDEFINED,
        }
    }

    /// `max(x, y)` (exact): `[max(a, c), max(b, d)]`.
    pub fn max(self, rhs: F64Iv) -> F64Iv {
        match (self.0, rhs.0) {
            (Some((a, b)), Some((c, d))) => F64Iv(Some((a.max(c), b.max(d)))),
            _ => F64Iv::UNDEFINED,
        }
    }

    /// `e^x` by CORE-MATH's correctly rounded `cr_exp`: increasing, so
    /// `[↓exp a, ↑exp b]`, the lower end clamped at 0 (e^x > 0; an underflow to 0 would
    /// otherwise step to −2⁻¹⁰⁷⁴). `exp(−∞) = 0`, `exp(+∞) = +∞`; for a ≥ 709.79 the lower
    /// end overflows and steps down to the largest finite number.
    pub fn exp(self) -> F64Iv {
        match self.0 {
            Some((a, b)) => F64Iv::new(down(core_math::exp(a)).max(0.0), up(core_math::exp(b))),
            None => F64Iv::UNDEFINED,
        }
    }

    /// `ln x` by CORE-MATH's correctly rounded `cr_log`, undefined when the enclosure
    /// reaches 0 or below (the open domain's edge, as [`Interval::checked_ln`]):
    /// increasing, so `[↓ln a, ↑ln b]`; `ln(+∞) = +∞`.
    pub fn ln(self) -> F64Iv {
        match self.0 {
            Some((a, b)) if a > 0.0 => F64Iv::outward(core_math::log(a), core_math::log(b)),
            _ => F64Iv::UNDEFINED,
        }
    }

    /// `cos x` by CORE-MATH's correctly rounded `cr_cos` (see [`F64Iv::sin`] for both).
    pub fn cos(self) -> F64Iv {
        self.trig(false)
    }

    /// `sin x` by CORE-MATH's correctly rounded `cr_sin`; undefined stays undefined, an
    /// unbounded enclosure gives `[−1, 1]`.
    ///
    /// Proof sketch (the MPFR tier's [`Interval::cos`] rule, in binary64). cos has its
    /// maxima at 2kπ, its minima at (2k+1)π, and is monotone between consecutive
    /// multiples of π; sin likewise at (k + ½)π. An extremum (k + off)·π (off = 0 for
    /// cos, ½ for sin) lies in `[a, b]` only if `⌈qa⌉ ≤ k ≤ ⌊qb⌋` for any `qa ≤ a/π − off`
    /// and `qb ≥ b/π − off`: `qa = ↓(↓(a/π⁺) − off)` for a ≥ 0 (`↓(a/π⁻)` for a < 0),
    /// `qb` symmetrically, with `π⁻ = RD(π)` (binary64's `PI`, which is below π) and
    /// `π⁺ = next_up(π⁻)` (so `a/π⁺ ≤ a/π` for a ≥ 0, `a/π⁻ ≤ a/π` for a < 0; each
    /// quotient and difference correctly rounded, then one step outward: the module's
    /// argument). Two or more candidates k: both signs of extremum may lie inside, the
    /// result is `[−1, 1]`. One: ±1 by its parity (an integer-valued binary64 number of
    /// magnitude ≥ 2⁵³ is even; `%` is exact). Otherwise, and for the other end, the
    /// range is spanned by the two endpoint values, each correctly rounded and one step
    /// outward. Ends are clamped into `[−1, 1]` (exact; |cos|, |sin| ≤ 1).
    ///
    /// Nested with the MPFR tier (`expr::tier`, 2.): at p ≥ 53 bits the MPFR enclosure of
    /// the argument is inside this one, its candidate range `⌈RD_p(a/π) − off⌉ … ⌊RU_p(b/π)
    /// − off⌋` inside this one's (every rounding here is at or beyond the p-bit one), so
    /// whenever it uses +1 or −1 this does too; and each endpoint value it rounds lies in
    /// cos's range over this (larger) argument, which this result encloses with ends on
    /// binary64's grid (a subset of the p-bit grid): its p-bit roundings stay inside.
    pub fn sin(self) -> F64Iv {
        self.trig(true)
    }

    fn trig(self, is_sin: bool) -> F64Iv {
        let Some((a, b)) = self.0 else {
            return F64Iv::UNDEFINED;
        };
        let full = F64Iv(Some((-1.0, 1.0)));
        if !(a.is_finite() && b.is_finite()) {
            return full;
        }
        let (pi_lo, pi_hi) = (std::f64::consts::PI, std::f64::consts::PI.next_up());
        let off = if is_sin { 0.5 } else { 0.0 };
        let qa = down(down(a / if a >= 0.0 { pi_hi } else { pi_lo }) - off);
        let qb = up(up(b / if b >= 0.0 { pi_lo } else { pi_hi }) - off);
        let (kmin, kmax) = (qa.ceil(), qb.floor());
        if kmax > kmin {
            return full;
        }
        let one = kmax == kmin;
        let even = kmin % 2.0 == 0.0;
        let (has_even, has_odd) = (one && even, one && !even);
        let f = |x: f64| {
            if is_sin {
                core_math::sin(x)
            } else {
                core_math::cos(x)
            }
        };
        let (fa, fb) = (f(a), f(b));
        let lo = if has_odd { -1.0 } else { down(fa.min(fb)) };
        let hi = if has_even { 1.0 } else { up(fa.max(fb)) };
        F64Iv::new(lo.max(-1.0), hi.min(1.0))
    }

    /// `self < rhs` for every pair of members: `True` when `hi < rhs.lo`, `False` when
    /// `lo ≥ rhs.hi`, else (and for an undefined side) `Unknown`.
    pub fn lt(self, rhs: F64Iv) -> Certainty {
        match (self.0, rhs.0) {
            (Some((_, b)), Some((c, _))) if b < c => Certainty::True,
            (Some((a, _)), Some((_, d))) if a >= d => Certainty::False,
            _ => Certainty::Unknown,
        }
    }

    /// `self ≤ rhs`: `True` when `hi ≤ rhs.lo`, `False` when `lo > rhs.hi`.
    pub fn le(self, rhs: F64Iv) -> Certainty {
        match (self.0, rhs.0) {
            (Some((_, b)), Some((c, _))) if b <= c => Certainty::True,
            (Some((a, _)), Some((_, d))) if a > d => Certainty::False,
            _ => Certainty::Unknown,
        }
    }

    /// `self > rhs`, i.e. `rhs < self`.
    pub fn gt(self, rhs: F64Iv) -> Certainty {
        rhs.lt(self)
    }

    /// `self ≥ rhs`, i.e. `rhs ≤ self`.
    pub fn ge(self, rhs: F64Iv) -> Certainty {
        rhs.le(self)
    }

    /// Equality of the enclosed reals: `True` only for two equal points, `False` when
    /// the intervals are disjoint.
    pub fn eq_exact(self, rhs: F64Iv) -> Certainty {
        match (self.0, rhs.0) {
            (Some((a, b)), Some((c, d))) if a == b && c == d && a == c => Certainty::True,
            (Some((a, b)), Some((c, d))) if b < c || d < a => Certainty::False,
            _ => Certainty::Unknown,
        }
    }
}
