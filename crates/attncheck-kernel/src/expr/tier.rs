//! The evaluator's two tiers (issue #41): the MPFR [`Interval`] at the requested
//! precision, and the f64 tier [`F64Iv`] tried first. One evaluator ([`super::eval`])
//! is generic over [`Tier`], so that the two passes walk the same tree with the same
//! exact arithmetic; only the enclosures of inexact values differ.
//!
//! # How an obligation is decided ([`super::Prepared::check_tiers`])
//!
//! With [`Tiers::F64ThenMpfr`] (what [`crate::check`] uses), an obligation is first
//! evaluated in the f64 tier. That pass *stops* (the obligation escalates to the MPFR
//! pass, which decides it exactly as with [`Tiers::MpfrOnly`]) when
//! - a comparison comes out `Unknown` in f64 (also on an undefined side);
//! - the formula uses an operation the f64 tier does not implement: a data operation
//!   other than `sandwich-centred` (found before evaluating, [`f64_handles`]), `pow` of
//!   an inexact base,
//!   `ceil`/`floor` of an enclosure that does not land on one integer (found while
//!   evaluating);
//! - anything is an error (the MPFR pass then reports it, with today's message);
//! - the exact arithmetic's charges would not fit in what the shared [`Budget`] has left;
//! - the precision is below 53 bits.
//!
//! Otherwise every comparison it evaluated was decided in f64, and its answer is the
//! obligation's decision. **Why that answer is the MPFR pass's answer** (so that a
//! certificate verifies the same whichever tier decided it):
//!
//! 1. *Same exact values.* Both passes run the same code on exact rationals ([`Val::Q`]):
//!    literals, bound integers, + − × ÷, `pow`, `abs`, `min`, `max`, `ceil`, `floor`
//!    and `sum` of exact values, and the size at which a rational becomes an enclosure
//!    ([`MAX_EXACT_BITS`]) does not depend on the tier. The one place where an
//!    enclosure can become exact, `ceil`/`floor` of an enclosure, gives an integer in
//!    f64 only when the f64 enclosure lands on one integer, and then the MPFR one
//!    (inside it, 2.) lands on the same; when the f64 one does not, the pass stops.
//!    So a node is exact in one pass iff it is in the other, with the same value.
//! 2. *Nested enclosures.* At p ≥ 53 bits every MPFR enclosure is inside the f64 one of
//!    the same node. By induction over the tree: exact values are converted by
//!    [`F64Iv::from_rational`] (`RD₅₃ ≤ RD_p`, binary64's grid being a subset of the
//!    p-bit one); + − × ÷ √ exp ln of nested operands give nested exact ranges, and
//!    the MPFR tier rounds those to the p-bit grid in the outward direction while the
//!    f64 tier's ends (one step outward of round-to-nearest, `f64iv`'s argument) lie
//!    beyond the binary64 directed roundings, which lie beyond the p-bit ones (sin and
//!    cos add a test for the extrema inside, at least as inclusive as the MPFR one:
//!    [`F64Iv::sin`]; `sandwich-centred` is the same formula of these operations in the
//!    same order, [`super::sandwich::centred_f64`]); |·|,
//!    min, max, negation are exact in both. A partial operation is undefined in f64
//!    whenever it is in MPFR on a smaller enclosure (the domain tests are the same).
//! 3. *Same decisions.* Comparisons are decided by the same end rules in both tiers, so
//!    a comparison decided on nested enclosures is decided alike on the inner ones.
//!    Since the f64 pass stopped at every `Unknown` comparison, each comparison it
//!    evaluated has the MPFR pass's answer; `and`, `not` and `forall` then take the
//!    same branches and stop at the same `False` in both passes: the same nodes are
//!    evaluated, and the formula's answer is the same.
//! 4. *Same charges.* By 1 and 3 the f64 pass performs the same exact operations on the
//!    same operands as the MPFR pass would, in the same order, so it charges the same
//!    units ([`super::value::Env::charge`]). It counts them without taking them, and
//!    takes the total from the shared budget only once it has decided; if the budget
//!    cannot give it, the MPFR pass runs and takes its charges one by one, failing where
//!    it fails today. An escalated pass takes nothing. So the budget is charged what
//!    the MPFR pass alone charges, and a refusal is today's refusal with its message.
//!
//! Soundness needs none of this: a decided f64 comparison is implied by enclosures that
//! contain the exact values (`f64iv`'s argument), whatever the MPFR tier would say. 1–4
//! are what makes the two tiers' decisions *identical*, and are tested: the committed
//! certificates decided with and without the f64 tier (`conformance::tiers`), and random
//! formulas (never a decision the MPFR pass does not make).

use super::data::{data_op, sandwich_args};
use super::eval::{round_iv, term};
use super::ops::{lookup, Kind};
use super::syntax::{err, ExprError, Sexp};
use super::value::{Env, Mpfr, Tier, Val, F64};
use crate::{checked_prec, Certainty, F64Iv, Interval};
use rug::Rational;

/// Which tiers decide an obligation ([`crate::check_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Tiers {
    /// The f64 tier first; the MPFR tier at the requested precision for what the f64
    /// tier leaves undecided or does not implement (what [`crate::check`] does).
    #[default]
    F64ThenMpfr,
    /// The MPFR tier alone (the reference: decisions are the same, module docs).
    MpfrOnly,
}

/// Which tier decided an obligation ([`super::Prepared::decide`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decided {
    /// The f64 pass decided every comparison it evaluated.
    F64,
    /// The MPFR pass (the f64 tier not tried, or its pass stopped).
    Mpfr,
}

/// The least precision at which an MPFR enclosure is inside the f64 one of the same
/// term (module docs, 2.): below it the f64 tier is not tried.
pub const F64_TIER_MIN_PREC: u32 = 53;

impl Tier for Mpfr {
    type Iv = Interval;
    const STOP_AT_UNKNOWN: bool = false;
    fn from_q(q: &Rational, p: u32) -> Interval {
        Interval::from_rational(p, q)
    }
    fn literal(v: &Val) -> Val {
        v.clone()
    }
    fn entire(p: u32) -> Interval {
        Interval::entire(p)
    }
    fn pi(p: u32, _: usize) -> Result<Interval, ExprError> {
        Ok(Interval::pi(p))
    }
    fn add(a: &Interval, b: &Interval) -> Interval {
        a + b
    }
    fn add_assign(a: &mut Interval, b: &Interval) {
        a.add_assign(b);
    }
    fn sub(a: &Interval, b: &Interval) -> Interval {
        a - b
    }
    fn mul(a: &Interval, b: &Interval) -> Interval {
        a * b
    }
    fn neg(a: Interval) -> Interval {
        -a
    }
    fn abs(a: &Interval) -> Interval {
        a.abs()
    }
    fn min(a: &Interval, b: &Interval) -> Interval {
        a.min(b)
    }
    fn max(a: &Interval, b: &Interval) -> Interval {
        a.max(b)
    }
    fn div(a: &Interval, b: &Interval) -> Option<Interval> {
        a.checked_div(b)
    }
    fn exp(a: &Interval) -> Interval {
        a.exp()
    }
    fn ln(a: &Interval) -> Option<Interval> {
        a.checked_ln()
    }
    fn sqrt(a: &Interval) -> Option<Interval> {
        a.checked_sqrt()
    }
    fn sin_cos(a: &Interval, sin: bool, _: usize) -> Result<Interval, ExprError> {
        Ok(if sin { a.sin() } else { a.cos() })
    }
    fn powi(a: &Interval, n: i32, _: usize) -> Result<Option<Interval>, ExprError> {
        Ok(a.checked_powi(n))
    }
    fn round(a: &Interval, ceil: bool, _: usize) -> Result<Val, ExprError> {
        Ok(round_iv(a, ceil))
    }
    fn compare(op: &str, a: &Interval, b: &Interval) -> Certainty {
        match op {
            "<" => a.lt(b),
            "<=" => a.le(b),
            ">" => a.gt(b),
            ">=" => a.ge(b),
            _ => a.eq_exact(b),
        }
    }
    fn data_op<'a>(
        op: &str,
        args: &'a [Sexp],
        o: usize,
        env: &mut Env<'a, Mpfr>,
    ) -> Result<Option<Val>, ExprError> {
        data_op(op, args, o, env, term::<Mpfr>)
    }
}

/// The error that stops the f64 pass at an operation it does not implement. Never
/// shown: the MPFR pass decides the obligation instead.
fn not_here<T>(o: usize, what: &str) -> Result<T, ExprError> {
    err(o, format!("{what}: not in the f64 tier"))
}

impl Tier for F64 {
    type Iv = F64Iv;
    const STOP_AT_UNKNOWN: bool = true;
    /// A quotient n/d of integers of at most 53 bits by one IEEE division (correctly
    /// rounded, so one step outward encloses it, `f64iv`'s argument), exact when d is a
    /// power of two (n/2ᵏ ≥ 2⁻⁵³ in magnitude is a binary64 number: no underflow);
    /// otherwise [`F64Iv::from_rational`] (two MPFR roundings).
    fn from_q(q: &Rational, _: u32) -> F64Iv {
        const MAX: u64 = 1 << 53;
        let (n, d) = (q.numer().to_i64(), q.denom().to_u64());
        if let (Some(n), Some(d)) = (n, d) {
            if n.unsigned_abs() <= MAX && d <= MAX {
                // both exact in binary64
                let (x, y) = (n as f64, d as f64);
                if d.is_power_of_two() {
                    return F64Iv::from_f64(x / y);
                }
                let r = x / y;
                return F64Iv::new(r.next_down(), r.next_up());
            }
        }
        F64Iv::from_rational(q)
    }
    fn literal(v: &Val) -> Val<F64Iv> {
        match v {
            Val::Q(q) => Val::Q(q.clone()),
            Val::I(i) => Val::I(F64Iv::from_interval(i)),
            Val::Undef => Val::Undef,
        }
    }
    fn entire(_: u32) -> F64Iv {
        F64Iv::new(f64::NEG_INFINITY, f64::INFINITY)
    }
    fn pi(_: u32, _: usize) -> Result<F64Iv, ExprError> {
        // [RD₅₃(π), RU₅₃(π)]: around the MPFR enclosure at every p ≥ 53
        Ok(F64Iv::from_interval(&Interval::pi(F64_TIER_MIN_PREC)))
    }
    fn add(a: &F64Iv, b: &F64Iv) -> F64Iv {
        a.add(*b)
    }
    fn add_assign(a: &mut F64Iv, b: &F64Iv) {
        *a = a.add(*b);
    }
    fn sub(a: &F64Iv, b: &F64Iv) -> F64Iv {
        a.sub(*b)
    }
    fn mul(a: &F64Iv, b: &F64Iv) -> F64Iv {
        a.mul(*b)
    }
    fn neg(a: F64Iv) -> F64Iv {
        a.neg()
    }
    fn abs(a: &F64Iv) -> F64Iv {
        a.abs()
    }
    fn min(a: &F64Iv, b: &F64Iv) -> F64Iv {
        a.min(*b)
    }
    fn max(a: &F64Iv, b: &F64Iv) -> F64Iv {
        a.max(*b)
    }
    fn div(a: &F64Iv, b: &F64Iv) -> Option<F64Iv> {
        defined(a.div(*b))
    }
    fn exp(a: &F64Iv) -> F64Iv {
        a.exp()
    }
    fn ln(a: &F64Iv) -> Option<F64Iv> {
        defined(a.ln())
    }
    fn sqrt(a: &F64Iv) -> Option<F64Iv> {
        defined(a.sqrt())
    }
    fn sin_cos(a: &F64Iv, sin: bool, _: usize) -> Result<F64Iv, ExprError> {
        Ok(if sin { a.sin() } else { a.cos() })
    }
    fn powi(_: &F64Iv, _: i32, o: usize) -> Result<Option<F64Iv>, ExprError> {
        not_here(o, "pow of an enclosure")
    }
    /// Exact only when the f64 enclosure lands on one integer (then the MPFR one, inside
    /// it, lands on the same: module docs, 1.); otherwise the pass stops, since the MPFR
    /// enclosure may land on one integer and be exact where this one is not.
    fn round(a: &F64Iv, ceil: bool, o: usize) -> Result<Val<F64Iv>, ExprError> {
        let f = |x: f64| if ceil { x.ceil() } else { x.floor() };
        match a.bounds() {
            Some((lo, hi)) if f(lo) == f(hi) && f(lo).is_finite() => {
                // an integer-valued binary64 number: exact as a rational, and at most
                // 1024 bits, far below MAX_EXACT_BITS
                Ok(Val::Q(
                    Rational::from_f64(f(lo)).expect("finite binary64 is rational"),
                ))
            }
            _ => not_here(o, "ceil/floor of an enclosure across an integer"),
        }
    }
    fn compare(op: &str, a: &F64Iv, b: &F64Iv) -> Certainty {
        match op {
            "<" => a.lt(*b),
            "<=" => a.le(*b),
            ">" => a.gt(*b),
            ">=" => a.ge(*b),
            _ => a.eq_exact(*b),
        }
    }
    /// `sandwich-centred` by the same formula in f64 ([`super::sandwich::centred_f64`],
    /// nested around the MPFR one); every other data operation stops the pass.
    fn data_op<'a>(
        op: &str,
        args: &'a [Sexp],
        o: usize,
        env: &mut Env<'a, F64>,
    ) -> Result<Option<Val<F64Iv>>, ExprError> {
        match lookup(op) {
            Some(d) if d.kind == Kind::Data && op == "sandwich-centred" => {
                let (dbar, first, r) = sandwich_args(args, o, env, term::<F64>)?;
                Ok(Some(if r == 0 {
                    // every term is cos(0) − 1 = 0 exactly, as in the MPFR pass
                    Val::Q(Rational::new())
                } else {
                    Val::I(env.sandwich.centred_f64(dbar, first, r))
                }))
            }
            Some(d) if d.kind == Kind::Data => not_here(o, op),
            _ => Ok(None),
        }
    }
}

/// `F64Iv`'s undefined value as the evaluator's `None` (a partial operation's domain).
fn defined(x: F64Iv) -> Option<F64Iv> {
    x.is_defined().then_some(x)
}

/// Whether the f64 tier may decide a formula at `prec` bits: the precision is at least
/// [`F64_TIER_MIN_PREC`], and no operation of the formula is one the f64 tier does not
/// implement at all (the data operations but `sandwich-centred`). Read before
/// evaluating, so that such a formula costs no f64 pass.
pub(super) fn f64_handles(e: &Sexp, prec: u32) -> bool {
    checked_prec(prec) >= F64_TIER_MIN_PREC && handles(e)
}

fn handles(e: &Sexp) -> bool {
    match e {
        Sexp::Atom(..) => true,
        Sexp::List(items, _) => {
            if let Some(Sexp::Atom(op, _)) = items.first() {
                if lookup(op).is_some_and(|d| d.kind == Kind::Data && op != "sandwich-centred") {
                    return false;
                }
            }
            items.iter().all(handles)
        }
    }
}
