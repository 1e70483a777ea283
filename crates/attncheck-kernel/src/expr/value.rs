//! Values ([`Val`]: exact, an outward enclosure, or undefined) and the environment of
//! one evaluation ([`Env`], with the [`Budget`] the formulas of a statement share).

use super::datum::Data;
use super::sandwich;
use super::syntax::{err, ExprError, Sexp};
use super::units::{limbs, MAX_EXACT_BITS, MAX_WORK, WORDS_PER_UNIT};
use crate::{Certainty, Interval};
use rug::Rational;
use std::collections::HashMap;

/// A value: exact while possible, else an outward enclosure (an MPFR [`Interval`], or
/// the f64 tier's [`crate::F64Iv`] in the f64 pass: [`super::tier`]), or undefined.
#[derive(Clone, Debug)]
pub(super) enum Val<I = Interval> {
    Q(Rational),
    I(I),
    /// The term may have no value: a partial operation (`ln`, `sqrt`, `/`, `pow` with
    /// a negative exponent) met an argument that is exactly outside its domain or
    /// whose enclosure touches or crosses the domain's edge. Every operation on it
    /// gives it again and every comparison on it is `Unknown`: a whole-line interval
    /// would not do, since `(abs t)`, `(min t 3)`, `(* 0 t)` or `(exp t)` of the whole
    /// line would still decide comparisons about a value that does not exist.
    Undef,
}

impl Val {
    /// The enclosure of a defined value; `Undef` gives the whole line (no
    /// information). Every operation checks for `Undef` before calling this, so
    /// the whole line only reaches [`eval_with`]'s output.
    pub(super) fn iv(&self, p: u32) -> Interval {
        match self {
            Val::Q(q) => Interval::from_rational(p, q),
            Val::I(i) => i.clone(),
            Val::Undef => Interval::entire(p),
        }
    }
    pub(super) fn q(q: Rational, p: u32) -> Val {
        Mpfr::q(q, p)
    }
}

impl<I> Val<I> {
    pub(super) fn is_undef(&self) -> bool {
        matches!(self, Val::Undef)
    }
    /// `Undef` from a partial operation's `None` (argument not inside its domain).
    pub(super) fn checked(i: Option<I>) -> Val<I> {
        i.map_or(Val::Undef, Val::I)
    }
}

/// One evaluation's environment, in one tier ([`super::tier`]; the MPFR one unless
/// said otherwise).
pub(super) struct Env<'a, T: Tier = Mpfr> {
    pub(super) prec: u32,
    /// The bound variables, innermost last: a `forall`/`sum` variable's integer, a
    /// `let` variable's value (computed once per evaluation of its `let`).
    pub(super) vars: Vec<(&'a str, Val<T::Iv>)>,
    pub(super) data: &'a Data,
    /// Memo of `sandwich-centred` (frequencies and values).
    pub(super) sandwich: &'a sandwich::Memo,
    /// The literals, read once ([`Prepared`]).
    pub(super) literals: &'a HashMap<usize, Val>,
    /// What exact arithmetic on big rationals may still cost, shared by every formula
    /// of the statement ([`Env::charge`]).
    pub(super) budget: &'a Budget,
    /// `None`: each charge is taken from `budget` as it comes (the MPFR pass). `Some`:
    /// the units charged so far, counted and not taken (the f64 pass, which takes the
    /// total only once it has decided: [`super::tier`], 4.).
    pub(super) tally: Option<u128>,
}

/// What the evaluation of one statement shares across its formulas: the memo of
/// `sandwich-centred` and the work that exact arithmetic on big rationals may still
/// spend, whose sizes are known only while evaluating ([`MAX_WORK`] less what
/// [`super::cost::work_of_all`] counted before anything ran).
pub struct Budget {
    pub(super) memo: sandwich::Memo,
    pub(super) exact: std::sync::atomic::AtomicU64,
}

impl Budget {
    /// A budget of `units` for exact arithmetic (saturated at `u64::MAX`).
    pub fn new(units: u128) -> Budget {
        Budget {
            memo: sandwich::Memo::default(),
            exact: std::sync::atomic::AtomicU64::new(u64::try_from(units).unwrap_or(u64::MAX)),
        }
    }
    /// Takes `cost` units; `false` when fewer are left (then nothing is taken).
    pub(super) fn take(&self, cost: u128) -> bool {
        use std::sync::atomic::Ordering;
        let Ok(cost) = u64::try_from(cost) else {
            return false;
        };
        self.exact
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(cost)
            })
            .is_ok()
    }
    /// The units left.
    pub fn left(&self) -> u128 {
        u128::from(self.exact.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl<'a, T: Tier> Env<'a, T> {
    /// Charges an exact operation on `x` and `y` to the work budget: their sizes are
    /// known only now, so a formula whose exact rationals grow (up to MAX_EXACT_BITS
    /// each, where they become intervals) stops with an error at the budget instead
    /// of running for hours. (a·b + (a + b)²)/64 units for operands of a and b limbs
    /// (products and the gcd of the result); nothing for small operands.
    pub(super) fn charge(
        &mut self,
        offset: usize,
        x: &Rational,
        y: &Rational,
    ) -> Result<(), ExprError> {
        let (a, b) = (limbs(x), limbs(y));
        let cost = (a * b + (a + b) * (a + b)) / WORDS_PER_UNIT;
        if cost == 0 {
            return Ok(());
        }
        if let Some(tally) = &mut self.tally {
            // the f64 pass: counted, and stopped (the obligation escalates, and the MPFR
            // pass fails here with the message below) once it could not be taken
            *tally += cost;
            if *tally > self.budget.left() {
                return err(offset, "the work budget: left to the MPFR pass");
            }
            return Ok(());
        }
        if !self.budget.take(cost) {
            return err(
                offset,
                format!(
                    "exact arithmetic on rationals of up to {} limbs would exceed the work budget: \
                     the limit is {MAX_WORK}",
                    a.max(b)
                ),
            );
        }
        Ok(())
    }

    pub(super) fn lookup(&self, name: &str) -> Option<&Val<T::Iv>> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }
}

// ----- the tiers (their operations: `tier.rs`, which imports this module, never the
// other way round) -----

/// One tier of the evaluator: the enclosure type of inexact values and its operations.
/// Every operation's result encloses the exact result on the enclosed arguments; a
/// partial one is `None` (the term is undefined) where [`Interval`]'s `checked_*` is.
/// An operation the tier does not implement is an error, which stops the f64 pass.
pub(super) trait Tier: Sized {
    /// The enclosure of an inexact value.
    type Iv: Clone + std::fmt::Debug;
    /// Whether a comparison left `Unknown` stops the evaluation (the f64 pass: the
    /// obligation escalates).
    const STOP_AT_UNKNOWN: bool;
    /// Encloses an exact rational.
    fn from_q(q: &Rational, p: u32) -> Self::Iv;
    /// A literal read by [`super::prepare`] (exact, or an MPFR enclosure at p bits).
    fn literal(v: &Val) -> Val<Self::Iv>;
    /// The whole line (only for the undefined value, which no operation reads).
    fn entire(p: u32) -> Self::Iv;
    fn pi(p: u32, o: usize) -> Result<Self::Iv, ExprError>;
    fn add(a: &Self::Iv, b: &Self::Iv) -> Self::Iv;
    /// `a += b` (in place: no allocation in a `sum`'s loop).
    fn add_assign(a: &mut Self::Iv, b: &Self::Iv);
    fn sub(a: &Self::Iv, b: &Self::Iv) -> Self::Iv;
    fn mul(a: &Self::Iv, b: &Self::Iv) -> Self::Iv;
    fn neg(a: Self::Iv) -> Self::Iv;
    fn abs(a: &Self::Iv) -> Self::Iv;
    fn min(a: &Self::Iv, b: &Self::Iv) -> Self::Iv;
    fn max(a: &Self::Iv, b: &Self::Iv) -> Self::Iv;
    fn div(a: &Self::Iv, b: &Self::Iv) -> Option<Self::Iv>;
    fn exp(a: &Self::Iv) -> Self::Iv;
    fn ln(a: &Self::Iv) -> Option<Self::Iv>;
    fn sqrt(a: &Self::Iv) -> Option<Self::Iv>;
    fn sin_cos(a: &Self::Iv, sin: bool, o: usize) -> Result<Self::Iv, ExprError>;
    fn powi(a: &Self::Iv, n: i32, o: usize) -> Result<Option<Self::Iv>, ExprError>;
    /// `⌈x⌉` or `⌊x⌋` of an enclosure (exact when it lands on one integer).
    fn round(a: &Self::Iv, ceil: bool, o: usize) -> Result<Val<Self::Iv>, ExprError>;
    /// `op` (`<`, `<=`, `>`, `>=`, `=`) on two enclosures.
    fn compare(op: &str, a: &Self::Iv, b: &Self::Iv) -> Certainty;
    /// A data operation (`Ok(None)`: `op` is not one).
    fn data_op<'a>(
        op: &str,
        args: &'a [Sexp],
        o: usize,
        env: &mut Env<'a, Self>,
    ) -> Result<Option<Val<Self::Iv>>, ExprError>;

    /// A rational result: exact up to [`MAX_EXACT_BITS`], then its enclosure.
    fn q(q: Rational, p: u32) -> Val<Self::Iv> {
        if q.numer().significant_bits() + q.denom().significant_bits() > MAX_EXACT_BITS {
            Val::I(Self::from_q(&q, p))
        } else {
            Val::Q(q)
        }
    }
    /// The enclosure of a value (the whole line for the undefined one, which every
    /// operation tests for first).
    fn iv(v: &Val<Self::Iv>, p: u32) -> Self::Iv {
        match v {
            Val::Q(q) => Self::from_q(q, p),
            Val::I(i) => i.clone(),
            Val::Undef => Self::entire(p),
        }
    }
}

/// The MPFR tier at the evaluation's precision: every operation, the reference.
pub(super) struct Mpfr;

/// The f64 tier: the operations [`crate::F64Iv`] implements (+ − × ÷ √ exp ln |·| min max, π),
/// every other one an error that stops the pass (module docs).
pub(super) struct F64;
