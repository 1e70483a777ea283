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
//! | + − × ÷ | `Add`, `Sub`, `Mul`, `Div` on `&Interval`, [`Interval::checked_div`] | contains {x ∘ y}; ÷ by an interval containing 0 gives [−∞, +∞] (`checked_div`: `None`); 0·∞ = 0 | `kernel_arith`: `{add,sub,mul,div}_contains` (exact rationals inside, dyadic endpoints); `kernel`: `zero_times_infinity_is_zero_not_nan`, `division_by_interval_containing_zero_is_entire`; `kernel_domain` (below) |
//! | √, exp, ln | [`Interval::sqrt`], [`Interval::exp`], [`Interval::ln`], [`Interval::checked_sqrt`], [`Interval::checked_ln`] | monotone: one MPFR call per endpoint, directed; outside the domain see below | `kernel_elementary`: `{sqrt,exp,ln}_contains_reference` (MPFR at p + 64, both ways), `precision_p_and_p_plus_20_overlap` (quickcheck); `kernel_domain` |
//! | sin, cos | [`Interval::sin`], [`Interval::cos`] | extrema inside the interval detected with an enclosure of π | `kernel_elementary`: `{sin,cos}_contains_reference` (widths ≤ 20, \|x\| ≤ 10⁶), `trig_reaches_interior_extrema`; `kernel`: `cos_on_*`, `sin_on_one_two_contains_one` |
//! | xⁿ | [`Interval::powi`], [`Interval::checked_powi`] | even n: 0 ∈ x handled; odd n monotone; any `i32`; n < 0 see below | `kernel_arith`: `powi_contains`; `kernel`: `powi_i32_min_does_not_overflow`; `kernel_domain` |
//! | hull, ∩, width | [`Interval::hull`], [`Interval::intersect`], [`Interval::width_up`] | set operations; width rounded up | `kernel_arith`: `hull_contains_both`, `intersect_is_the_common_part`, `width_up_bounds_true_width` |
//! | comparisons | [`Interval::lt`] … | [`Certainty::True`] only if every point pair satisfies it, `False` only if none does | `kernel_compare`: `comparisons_agree_with_every_point_pair`; `kernel`: `unknown_is_never_true`, `certainty_false_has_its_own_test` |
//! | softmax, log-sum-exp | [`softmax`], [`log_sum_exp`] | monotone formula, no dependency blow-up | `kernel_softmax`: `*_contains_reference` (MPFR at p + 64), `softmax_row_sum_contains_one`, `log_sum_exp_meets_ln_of_sum_of_exp` |
//! | fast exp, fast softmax (≤ 128 bits) | [`exp_fixed`], [`softmax_fast`] | fixed-point exp with a proven ≤ 16-ulp bound, exact integer row sums; MPFR fallback outside its domain; thread-count independent | unit, proptest vs. p + 64 bits and vs. [`softmax`] |
//! | dot, mat·vec | [`dot`], [`mat_vec`] | directed accumulation | `kernel_softmax`: `dot_contains_exact`, `mat_vec_contains_exact` |
//! | printing | [`Interval::fmt_outward`] | printed lo ≤ lo, printed hi ≥ hi | `kernel_compare`: `fmt_outward_parsed_back_encloses` (parsed back exactly) |
//!
//! "No information" is `[−∞, +∞]`, never NaN: any operation whose MPFR result
//! would be NaN returns the whole line instead.
//!
//! # Domain edges
//!
//! An [`Interval`] encloses a real that the caller knows exists. A partial operation
//! whose argument enclosure is not inside the domain — it crosses the edge, or touches
//! the edge of an open domain — may be asked for a value that does not exist, so its
//! total form returns the whole line (never a one-sided ray such as `[−∞, ln hi]`) and
//! its `checked_*` form returns `None`. The certificate language ([`expr`]) turns `None`
//! and exact out-of-domain arguments into an *undefined* term: every term built on it is
//! undefined and every comparison on it is `Unknown` (a whole-line value would not be
//! enough: `(abs t)`, `(min t 3)`, `(* 0 t)`, `(exp t)` of it still decide). Audit of
//! `src/kernel/` (issue 23), every test in `tests/it/kernel_domain.rs` unless named:
//!
//! | operation | domain | enclosure at / across the edge | in a formula | test |
//! | --- | --- | --- | --- | --- |
//! | `ln` | x > 0 (open) | lo ≤ 0: `checked_ln` `None`, `ln` whole line | undefined; exact q ≤ 0 undefined | `ln_is_undefined_when_the_enclosure_touches_or_crosses_zero`; regressions `ln_of_e_minus_e_is_undecided_not_certified`, `ln_of_e_minus_e_plus_10_to_the_minus_45_is_undecided_not_certified`, `verify_no_spec_does_not_certify_ln_of_zero_or_of_a_negative_number` |
//! | `sqrt` | x ≥ 0 (closed) | lo < 0: `None` / whole line; lo = 0 (or −0) is inside: [0, RU √hi] | undefined; exact q < 0 undefined; √0 = 0 | `sqrt_is_undefined_when_the_enclosure_crosses_zero`, `arguments_inside_the_domain_stay_decided` |
//! | ÷ | divisor ≠ 0 | 0 ∈ divisor (incl. [0, d], [−0, d]): `None` / whole line | undefined; exact a/0 undefined | `division_is_undefined_when_the_divisor_touches_or_crosses_zero` |
//! | `pow` n < 0 | x ≠ 0 | 0 ∈ x: `None` / whole line; n ≥ 0 total, 0⁰ = 1 | undefined; exact 0ⁿ undefined | `negative_powers_are_undefined_when_the_enclosure_touches_or_crosses_zero` |
//! | `pow` with a non-integer exponent | — | not in the grammar: `(pow t INT)`, anything else is an error (exit 2) | error | `pow_takes_only_an_integer_literal_exponent` |
//! | any term on an undefined one (+ − × ÷ `neg` `abs` `min` `max` `exp` `sin` `cos` `pow` `ceil` `floor` `sum`) | — | — | undefined; comparisons `Unknown`, also under `not`, `and`, `forall` | `formulas_on_a_partial_operation_outside_its_domain_are_undecided`, `exact_arguments_outside_the_domain_are_undefined` |
//! | `ceil`, `floor` | all reals | monotone, exact on floats; an unbounded enclosure keeps its finite end ([⌈lo⌉, +∞]); a point wider than 2¹⁶ bits stays an interval | total | `ceil_and_floor_of_unbounded_enclosures_keep_the_finite_end` |
//! | exp | all reals | total; overflow: hi = +∞, lo = largest float (a defined, unbounded enclosure) | total | same test |
//! | sin, cos | all reals | total; unbounded argument: [−1, 1] | total | `kernel_elementary` |
//! | + − × `abs` `min` `max` `mul_2exp` `with_prec` | all reals | total; ∞ − ∞ or a NaN endpoint: whole line; 0·∞ = 0 | total | `kernel`: `operations_on_entire_never_give_nan`, `zero_times_infinity_is_zero_not_nan` |
//! | softmax, fast softmax, log-sum-exp, dot, mat·vec | all real rows | total: after the max shift the denominator is ≥ 1 (a zero one can only come from an infinite endpoint and gives the bound 1); infinite endpoints give [0, 1] or the whole line | total | `kernel_softmax`, `fast_softmax` |
//! | comparisons | — | the whole line decides nothing against a finite value | `Unknown` on undefined | `kernel_compare`, `formulas_…` |
//! | literals | exact rationals | `1/0` and `0^-k` are not numbers: an error (exit 2) | error | `exact::tests::literals` |
//! | data operations (`gram-max-abs`, `err-max`, `lemma-*`, `row-*`, `entry-*`, `band-reach*`, `layer-*`, `sandwich-centred`) | validated data | exact and total: the only divisors are D ≥ 1 and lcms of denominators; the layer map uses + − × and softmax only; sandwich uses ln 10000, exp, cos | an index or t that is not an exact integer/rational (also an undefined one) is an error, as the format says | `expr::tests::data_operations_match_naive_definitions` |
pub use attncheck_kernel::*;
