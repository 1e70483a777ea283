//! A tiny expression language for certificates, evaluated in intervals.
//!
//! A certificate states its obligations as S-expressions over exact rational
//! literals, so that `attncheck verify` can re-check them with the kernel alone,
//! without the code that built them:
//!
//! ```text
//! (<= (exp (* -1/256 1179)) 1/100)
//! (forall r 1 100000 (< (sum i 0 63 (- (cos (* r (exp (* (/ (* -2 i) 128) (ln 10000))))) 1)) 0))
//! ```
//!
//! Terms: rational literals (`7`, `-3/4`, `1.5e-3`, `2^-8`), `pi`, bound
//! integer variables, `(+ a b …)`, `(- a b)`, `(neg a)`, `(* a b …)`, `(/ a b)`,
//! `(exp a)`, `(ln a)`, `(sqrt a)`, `(sin a)`, `(cos a)`, `(pow a n)`, `(abs a)`,
//! `(min a b)`, `(max a b)`, `(sum v lo hi body)` (integers lo..=hi), `(let v t body)`
//! (body, a term or a formula, with v bound to t's value, computed once per evaluation
//! of the `let`), and the papers' building blocks (`alibi-slope`, `alibi-tail`,
//! `alibi-window`, `union-bound-dim`), which [`parse`] rewrites into their expansions
//! ([`blocks`]).
//! Exact mode: a term is kept as an exact rational while every operation is
//! rational-closed (+ − × ÷, `pow`, `abs`, `min`, `max`, `ceil`, `floor`, `sum`,
//! literals, data operations); only `exp`, `ln`, `sqrt`, `sin`, `cos` and `pi`
//! (or a rational grown past [`MAX_EXACT_BITS`]) fall back to the outward
//! interval. A comparison between two exact values is decided exactly (never
//! `Unknown`). `(ceil x)`/`(floor x)` of an interval is exact when the interval
//! decides it, else the hull of the endpoint values (±∞ kept).
//!
//! Domains: `(ln a)` needs a > 0, `(sqrt a)` a ≥ 0, `(/ a b)` b ≠ 0 and `(pow a n)`
//! with n < 0 a ≠ 0. An exact argument outside the domain, or an enclosure that is
//! not inside it (for ln, ÷ and negative powers, one that touches 0 counts), makes
//! the term *undefined*: every term built on it is undefined and every comparison
//! on it is `Unknown` (docs/certificate-format.md, "Meaning").
//!
//! Data: a certificate may carry named matrices ([`Datum`]): a ±1 sign matrix S
//! and a row-sparse rational matrix B, whose stored entries define the supports
//! supp_i. With G = S Sᵀ (exact integers by popcount), Λ = B G / d and
//! E_ij = Σ_{l ∈ supp_i, l ≠ j} B_il G_lj / d, the exact data operations are
//! `(rows X)`, `(cols S)`, `(gram-max-abs S)` = max_{l≠j} |G_lj|,
//! `(err-max S B)` = max_{i, j} |E_ij|, `(lemma-a S B)` = max over i and
//! j, j' ∈ supp_i of |E_ij − E_ij'|, `(lemma-b S B)` = max over i, j ∉ supp_i,
//! j' ∈ supp_i of Λ_ij − Λ_ij', `(lemma-a-row S B t)` and `(lemma-b-row S B t)`
//! (the same row maxima minus 2t·Σ_l B_il, maximised over rows),
//! `(row-sum-max B)`, `(row-nnz-max B)`, `(entry-min B)`, `(entry-max B)`,
//! `(entry-sum B)`. Rows are streamed: no n × n matrix is stored.
//! Formulas: `(< a b)`, `(<= a b)`, `(> a b)`, `(>= a b)`, `(= a b)` (exact
//! equality: both sides must evaluate to the same point), `(and f …)`,
//! `(not f)`, `(forall v lo hi f)`.
//! Every operation is the kernel's outward-rounded one, so a `True` answer is a
//! proof; `Unknown` means the precision did not decide it.

use crate::{parse_rational, Certainty, Interval};
use rug::Rational;
use std::collections::HashMap;

// One job a file, around one table of operators (issue #38): the table itself
// (`ops`: every operator's arity, argument kinds, domain and charge), the reader
// (`parse`: text to S-expression, and `blocks`: the building blocks' expansions), the
// grammar (`grammar`: the validation that builds the typed tree of `tree`), the cost
// model (`cost`: the work budget), the evaluator (`eval`), and the data operations
// (`data`, with `sandwich` and `band`). This file holds the entry points.
// The files, from the bottom up: each names only files above it in this list.
mod band;
pub mod blocks;
pub mod build;
mod cost;
mod data;
mod datum;
mod eval;
mod grammar;
mod ops;
mod parse;
pub mod sandwich;
mod syntax;
mod tier;
pub mod tree;
mod units;
mod value;

pub use cost::{datum_cost, work, work_of_all, work_with};
pub use datum::{Data, Datum, SparseRows, SparseRowsError};
pub use grammar::{read, validate, validate_term};
pub use ops::{lookup as operator, Arity, Kind, Op, OPS};
pub use parse::parse_written;
pub use syntax::{ExprError, Sexp, MAX_DEPTH};
pub use tier::{Decided, Tiers, F64_TIER_MIN_PREC};
pub use units::{
    precision_factor, LITERAL_DIGITS_PER_UNIT, MAX_EXACT_BITS, MAX_WORK, PAIRS_PER_UNIT,
    WORDS_PER_UNIT,
};
pub use value::Budget;

use eval::{formula, term};
use grammar::Validator;
use syntax::err;
use tier::f64_handles;
use units::budget_error;
use value::{Env, Val};
use value::{Mpfr, Tier, F64};

/// Parses one S-expression (the whole text) and rewrites its building blocks into
/// their expansions (`blocks::expand`): what every other reader of a formula sees.
/// The nesting depth is checked as written and again after the expansion.
pub fn parse(text: &str) -> Result<Sexp, ExprError> {
    expanded(parse_written(text)?)
}

/// A tree as written (parsed, or built: [`build`]) with its building blocks expanded
/// and the expanded depth checked.
fn expanded(e: Sexp) -> Result<Sexp, ExprError> {
    let o = e.offset();
    let e = blocks::expand(e, &mut 0)?;
    if blocks::depth(&e) > MAX_DEPTH {
        return err(
            o,
            format!("nested deeper than {MAX_DEPTH} levels once its building blocks are expanded"),
        );
    }
    Ok(e)
}

/// Parses `text` (depth, literal size and the work budget over `data` at 128 bits, as
/// [`check_with`]) and [`validate`]s it.
pub fn parse_valid(text: &str, data: &Data) -> Result<Sexp, ExprError> {
    let e = parse(text)?;
    let w = work_with(&e, data, 128);
    if w > MAX_WORK {
        return Err(budget_error(w));
    }
    validate(&e, data)?;
    Ok(e)
}

/// Evaluates a formula at precision `prec` (no data).
pub fn check(text: &str, prec: u32) -> Result<Certainty, ExprError> {
    check_with(text, prec, &Data::new())
}

/// Evaluates a formula at precision `prec` over named data.
pub fn check_with(text: &str, prec: u32, data: &Data) -> Result<Certainty, ExprError> {
    let f = prepare(text, prec, data)?;
    f.check(&Budget::new(MAX_WORK.saturating_sub(f.work)))
}

/// Evaluates a term at precision `prec` (for reports and tests), as an interval
/// (a point when the term is exact and representable).
pub fn eval(text: &str, prec: u32) -> Result<Interval, ExprError> {
    eval_with(text, prec, &Data::new())
}

/// Evaluates a term over named data, as an interval.
pub fn eval_with(text: &str, prec: u32, data: &Data) -> Result<Interval, ExprError> {
    Ok(prepare_as(text, prec, data, Grammar::Term)?
        .term()?
        .iv(prec))
}

/// Evaluates a term over named data exactly: `Some` when it stays rational.
pub fn eval_exact(text: &str, prec: u32, data: &Data) -> Result<Option<Rational>, ExprError> {
    Ok(match prepare_as(text, prec, data, Grammar::Term)?.term()? {
        Val::Q(q) => Some(q),
        _ => None,
    })
}

/// [`check_with`] of a formula a claim built ([`build::Formula`]): the kernel decides
/// the tree it was built as, and parses no text (issue #38).
pub fn check_built(f: &build::Formula, prec: u32, data: &Data) -> Result<Certainty, ExprError> {
    let f = prepare_built(&f.finish().1, prec, data)?;
    f.check(&Budget::new(MAX_WORK.saturating_sub(f.work)))
}

/// [`eval_with`] of a term a claim built ([`build::Term`]): the kernel takes the tree
/// it was built as, and parses no text (issue #38).
pub fn eval_built(t: &build::Term, prec: u32, data: &Data) -> Result<Interval, ExprError> {
    Ok(prepare_built_term(t, prec, data)?.term()?.iv(prec))
}

/// [`eval_exact`] of a term a claim built ([`build::Term`]), from its tree.
pub fn eval_built_exact(
    t: &build::Term,
    prec: u32,
    data: &Data,
) -> Result<Option<Rational>, ExprError> {
    Ok(match prepare_built_term(t, prec, data)?.term()? {
        Val::Q(q) => Some(q),
        _ => None,
    })
}

fn prepare_built_term<'a>(
    t: &build::Term,
    prec: u32,
    data: &'a Data,
) -> Result<Prepared<'a>, ExprError> {
    let written = t.finish().1;
    read_back(&written)?;
    prepare_tree(expanded(written)?, prec, data, Grammar::Term)
}

/// What a term evaluates to at one precision ([`evaluate`]): the three outcomes the
/// evaluator distinguishes, which [`eval_with`] merges (an undefined term comes out
/// there as the whole line, like an enclosure that overflowed on both sides).
#[derive(Clone, Debug, PartialEq)]
pub enum TermValue {
    /// The term stayed rational: its exact value.
    Exact(Rational),
    /// An outward-rounded enclosure of its value.
    Enclosure(Interval),
    /// A partial operation met an argument exactly outside its domain, or one whose
    /// enclosure touches or crosses the domain's edge (module docs, "Domains"): the
    /// term may have no value, and none is given.
    Undefined,
}

/// Evaluates a term over named data at `prec` bits, keeping apart an exact value, an
/// enclosure and an undefined term (for `attncheck eval`, which must never print a
/// value for an undefined term).
pub fn evaluate(text: &str, prec: u32, data: &Data) -> Result<TermValue, ExprError> {
    Ok(match prepare_as(text, prec, data, Grammar::Term)?.term()? {
        Val::Q(q) => TermValue::Exact(q),
        Val::I(i) => TermValue::Enclosure(i),
        Val::Undef => TermValue::Undefined,
    })
}

/// A formula ready to be evaluated at one precision over one set of data: parsed,
/// within the work budget ([`work_with`]), and with every literal read once, so
/// that a literal inside a `forall` is not read again on each iteration. The
/// parsed tree keeps each literal's text ([`Prepared::sexp`]).
pub struct Prepared<'a> {
    sexp: Sexp,
    prec: u32,
    /// Its cost ([`work_with`]).
    work: u128,
    data: &'a Data,
    /// The value of every literal atom, by its offset in the text.
    literals: HashMap<usize, Val>,
    /// Whether the f64 tier is tried first ([`tier::f64_handles`]: the precision allows
    /// it and the formula uses no operation the tier lacks).
    f64: bool,
}

/// Parses `text`, checks its cost over `data` at `prec` bits against [`MAX_WORK`],
/// reads its literals and [`validate`]s it: everything that can be refused without
/// evaluating is refused here.
pub fn prepare<'a>(text: &str, prec: u32, data: &'a Data) -> Result<Prepared<'a>, ExprError> {
    prepare_as(text, prec, data, Grammar::Formula)
}

/// What a text is read as: a formula ([`check_with`]) or a term ([`eval_with`]).
#[derive(Clone, Copy)]
enum Grammar {
    Formula,
    Term,
}

fn prepare_as<'a>(
    text: &str,
    prec: u32,
    data: &'a Data,
    grammar: Grammar,
) -> Result<Prepared<'a>, ExprError> {
    prepare_tree(parse(text)?, prec, data, grammar)
}

/// [`prepare`] of a formula a statement builder built ([`build::Formula::finish`]): its
/// tree as written, not its text, so nothing is parsed again.
pub fn prepare_built<'a>(
    written: &Sexp,
    prec: u32,
    data: &'a Data,
) -> Result<Prepared<'a>, ExprError> {
    read_back(written)?;
    prepare_tree(expanded(written.clone())?, prec, data, Grammar::Formula)
}

/// Refuses a built tree whose text would not read back as it: an atom that is not one
/// token of the reader (empty, or holding a space or a parenthesis), or a literal the
/// reader refuses for its size. The certificate carries the text and the kernel decides
/// the tree; with every atom one token, the text (one space between tokens) reads back
/// as exactly this tree, so what is decided is what is written.
fn read_back(e: &Sexp) -> Result<(), ExprError> {
    match e {
        Sexp::Atom(a, o) => {
            if a.is_empty()
                || a.bytes()
                    .any(|b| b.is_ascii_whitespace() || b == b'(' || b == b')')
            {
                return err(
                    *o,
                    format!(
                        "`{a}` is not one token: its text would not read back as the tree built"
                    ),
                );
            }
            crate::check_literal_size(a).or_else(|e| err(*o, e.to_string()))
        }
        Sexp::List(items, _) => items.iter().try_for_each(read_back),
    }
}

fn prepare_tree<'a>(
    sexp: Sexp,
    prec: u32,
    data: &'a Data,
    grammar: Grammar,
) -> Result<Prepared<'a>, ExprError> {
    let w = work_with(&sexp, data, prec);
    if w > MAX_WORK {
        return Err(budget_error(w));
    }
    let mut literals = HashMap::new();
    read_literals(&sexp, prec, &mut literals);
    let mut v = Validator {
        data,
        scope: Vec::new(),
        literals: Some(&literals),
    };
    match grammar {
        Grammar::Formula => drop(v.formula(&sexp)?),
        Grammar::Term => drop(v.term(&sexp)?),
    }
    let f64 = f64_handles(&sexp, prec);
    Ok(Prepared {
        sexp,
        prec,
        work: w,
        data,
        literals,
        f64,
    })
}

/// The values of the literal atoms of `e` (operands only, not operators), by
/// offset. An atom that is not a valid literal is left out: evaluation reports it
/// where it is used.
fn read_literals(e: &Sexp, prec: u32, out: &mut HashMap<usize, Val>) {
    match e {
        Sexp::Atom(a, o) => {
            if crate::literal_digits(a).is_some() {
                if let Ok(q) = parse_rational(a) {
                    out.insert(*o, Val::q(q, prec));
                }
            }
        }
        Sexp::List(items, _) => {
            let args = match items.first() {
                Some(Sexp::Atom(..)) => &items[1..],
                _ => &items[..],
            };
            for x in args {
                read_literals(x, prec, out);
            }
        }
    }
}

impl Prepared<'_> {
    /// The parsed formula (literals keep their text).
    pub fn sexp(&self) -> &Sexp {
        &self.sexp
    }

    fn env<'b, T: Tier>(&'b self, budget: &'b Budget, tally: Option<u128>) -> Env<'b, T> {
        Env {
            prec: self.prec,
            vars: Vec::new(),
            data: self.data,
            sandwich: &budget.memo,
            literals: &self.literals,
            budget,
            tally,
        }
    }

    /// Its cost ([`work_with`]: alone, each datum's shared computations counted).
    pub fn work(&self) -> u128 {
        self.work
    }

    /// Decides the formula in the MPFR tier alone, sharing `budget` (the
    /// `sandwich-centred` memo and what exact arithmetic may still spend) with the other
    /// formulas of its statement.
    pub fn check(&self, budget: &Budget) -> Result<Certainty, ExprError> {
        self.check_tiers(budget, Tiers::MpfrOnly)
    }

    /// Decides the formula in `tiers` (the README's "Two tiers"; `expr/tier.rs`): with
    /// [`Tiers::F64ThenMpfr`], the f64 tier first, and the MPFR tier when the f64 pass
    /// stops. The same answer, the same charges to `budget` and the same errors as
    /// [`Self::check`].
    pub fn check_tiers(&self, budget: &Budget, tiers: Tiers) -> Result<Certainty, ExprError> {
        Ok(self.decide(budget, tiers)?.0)
    }

    /// [`Self::check_tiers`], saying which tier decided (for tests and measurements: the
    /// answer is the same whichever did).
    pub fn decide(&self, budget: &Budget, tiers: Tiers) -> Result<(Certainty, Decided), ExprError> {
        if tiers == Tiers::F64ThenMpfr && self.f64 {
            if let Some(c) = self.f64_pass(budget) {
                return Ok((c, Decided::F64));
            }
        }
        let c = formula(&self.sexp, &mut self.env::<Mpfr>(budget, None))?;
        Ok((c, Decided::Mpfr))
    }

    /// Whether the f64 tier would be tried on this formula ([`Self::check_tiers`]).
    pub fn f64_tried(&self) -> bool {
        self.f64
    }

    /// The f64 pass alone (whatever [`Self::f64_tried`] says): its decision, with its
    /// charges taken from `budget`, or `None` when it stopped (an `Unknown` comparison,
    /// an operation it lacks, an error, charges the budget cannot give: `expr/tier.rs`),
    /// having taken nothing.
    pub fn f64_pass(&self, budget: &Budget) -> Option<Certainty> {
        let mut env = self.env::<F64>(budget, Some(0));
        let c = formula(&self.sexp, &mut env).ok()?;
        // every comparison was decided, so the formula is; `Unknown` would be a bug, and
        // it escalates all the same
        let tally = env.tally.expect("the f64 pass counts its charges");
        (c != Certainty::Unknown && budget.take(tally)).then_some(c)
    }

    fn term(&self) -> Result<Val, ExprError> {
        let budget = Budget::new(MAX_WORK.saturating_sub(self.work));
        term(&self.sexp, &mut self.env::<Mpfr>(&budget, None))
    }
}

#[cfg(test)]
mod tests;
