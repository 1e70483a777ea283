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
//! | exact input | [`Interval::from_rational`], [`Interval::from_dyadic`], [`Interval::parse_decimal`] | contains the exact value; a point when representable, else one ulp wide | `kernel_arith`: `from_rational_contains_and_is_tight`, `from_dyadic_contains`, `parse_decimal_*`; `kernel`: `from_rational_one_third_is_not_rounded_to_nearest`, `parse_rational_*` |
//! | + − × ÷ | `Add`, `Sub`, `Mul`, `Div` on `&Interval` | contains {x ∘ y}; ÷ by an interval containing 0 gives [−∞, +∞]; 0·∞ = 0 | `kernel_arith`: `{add,sub,mul,div}_contains` (exact rationals inside, dyadic endpoints); `kernel`: `zero_times_infinity_is_zero_not_nan`, `division_by_interval_containing_zero_is_entire` |
//! | √, exp, ln | [`Interval::sqrt`], [`Interval::exp`], [`Interval::ln`] | monotone: one MPFR call per endpoint, directed | `kernel_elementary`: `{sqrt,exp,ln}_contains_reference` (MPFR at p + 64, both ways), `precision_p_and_p_plus_20_overlap` (quickcheck) |
//! | sin, cos | [`Interval::sin`], [`Interval::cos`] | extrema inside the interval detected with an enclosure of π | `kernel_elementary`: `{sin,cos}_contains_reference` (widths ≤ 20, \|x\| ≤ 10⁶), `trig_reaches_interior_extrema`; `kernel`: `cos_on_*`, `sin_on_one_two_contains_one` |
//! | xⁿ | [`Interval::powi`] | even n: 0 ∈ x handled; odd n monotone; any `i32` | `kernel_arith`: `powi_contains`; `kernel`: `powi_i32_min_does_not_overflow` |
//! | hull, ∩, width | [`Interval::hull`], [`Interval::intersect`], [`Interval::width_up`] | set operations; width rounded up | `kernel_arith`: `hull_contains_both`, `intersect_is_the_common_part`, `width_up_bounds_true_width` |
//! | comparisons | [`Interval::lt`] … | [`Certainty::True`] only if every point pair satisfies it, `False` only if none does | `kernel_compare`: `comparisons_agree_with_every_point_pair`; `kernel`: `unknown_is_never_true`, `certainty_false_has_its_own_test` |
//! | softmax, log-sum-exp | [`softmax`], [`log_sum_exp`] | monotone formula, no dependency blow-up | `kernel_softmax`: `*_contains_reference` (MPFR at p + 64), `softmax_row_sum_contains_one`, `log_sum_exp_meets_ln_of_sum_of_exp` |
//! | fast exp, fast softmax (≤ 128 bits) | [`exp_fixed`], [`softmax_fast`] | fixed-point exp with a proven ≤ 16-ulp bound, exact integer row sums; MPFR fallback outside its domain; thread-count independent | unit, proptest vs. p + 64 bits and vs. [`softmax`] |
//! | dot, mat·vec | [`dot`], [`mat_vec`] | directed accumulation | `kernel_softmax`: `dot_contains_exact`, `mat_vec_contains_exact` |
//! | printing | [`Interval::fmt_outward`] | printed lo ≤ lo, printed hi ≥ hi | `kernel_compare`: `fmt_outward_parsed_back_encloses` (parsed back exactly) |
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
mod signs;
mod softmax;
pub mod statement;
mod tally;

pub use compare::Certainty;
pub use exact::{
    abbreviate_literal, check_literal_size, literal_digits, parse_rational, ParseRationalError,
    MAX_LITERAL_DIGITS,
};
pub use fast::{exp_fixed, softmax_fast};
pub use interval::Interval;
pub use signs::SignMatrix;
pub use softmax::{dot, log_sum_exp, mat_vec, softmax, softmax_into};
pub use statement::{check, Checked, Decision, Expect, Obligation, Reading, Statement};
pub use tally::StepTally;
