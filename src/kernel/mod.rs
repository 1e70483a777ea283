//! The trusted kernel: outward-rounded interval arithmetic on MPFR floats, exact
//! rationals, three-valued comparisons, certified softmax and log-sum-exp.
//!
//! Everything a `certified` verdict rests on is computed here. The kernel is small
//! on purpose, so that it can be audited: no `unsafe`, and no floating-point
//! operation whose rounding is not outward by construction (every lower endpoint is
//! rounded with [`Round::Down`](rug::float::Round::Down), every upper endpoint with
//! [`Round::Up`](rug::float::Round::Up); MPFR rounds every basic operation and
//! every elementary function correctly in the requested direction).
//!
//! # Conformance table
//!
//! | operation | API | guarantee | tested by |
//! | --- | --- | --- | --- |
//! | exact input | [`Interval::from_rational`], [`Interval::from_dyadic`], [`Interval::parse_decimal`] | contains the exact value; a point when representable | `tests/it/kernel.rs` |
//! | + − × ÷ | `Add`, `Sub`, `Mul`, `Div` on `&Interval` | contains {x ∘ y}; ÷ by an interval containing 0 gives [−∞, +∞] | proptest, rationals inside |
//! | √, exp, ln | [`Interval::sqrt`], [`Interval::exp`], [`Interval::ln`] | monotone: one MPFR call per endpoint, directed | proptest vs. p + 64 bits |
//! | sin, cos | [`Interval::sin`], [`Interval::cos`] | extrema inside the interval detected with an enclosure of π | proptest, wide intervals |
//! | xⁿ | [`Interval::powi`] | even n: 0 ∈ x handled; odd n monotone | proptest |
//! | hull, ∩, width | [`Interval::hull`], [`Interval::intersect`], [`Interval::width_up`] | set operations; width rounded up | unit |
//! | comparisons | [`Interval::lt`] … | [`Certainty::True`] only if every point pair satisfies it | proptest |
//! | softmax, log-sum-exp | [`softmax`], [`log_sum_exp`] | monotone formula, no dependency blow-up | proptest, sum contains 1 |
//! | fast exp, fast softmax (≤ 128 bits) | [`exp_fixed`], [`softmax_fast`] | fixed-point exp with a proven ≤ 16-ulp bound, exact integer row sums; MPFR fallback outside its domain; thread-count independent | unit, proptest vs. p + 64 bits and vs. [`softmax`] |
//! | dot, mat·vec | [`dot`], [`mat_vec`] | directed accumulation | proptest |
//! | printing | [`Interval::fmt_outward`] | printed lo ≤ lo, printed hi ≥ hi | unit |
//!
//! "No information" is `[−∞, +∞]`, never NaN: any operation whose MPFR result
//! would be NaN returns the whole line instead.
#![forbid(unsafe_code)]

mod compare;
mod elementary;
mod exact;
pub mod expr;
mod fast;
mod format;
mod interval;
mod softmax;

pub use compare::Certainty;
pub use exact::{parse_rational, ParseRationalError};
pub use fast::{exp_fixed, softmax_fast};
pub use interval::Interval;
pub use softmax::{dot, log_sum_exp, mat_vec, softmax, softmax_into};
