//! Computing, not only checking (issue #26): `attncheck eval` gives the value of a term
//! of the certificate language (docs/certificate-format.md, "Formulas"), exact or as a
//! certified enclosure; `attncheck prove` decides a formula and can write a certificate
//! of its proof that `attncheck verify` accepts.
//!
//! Both go through the kernel only: [`evaluate`] asks [`expr::evaluate`] (exact first:
//! the kernel keeps a term rational while every operation is rational-closed), then
//! climbs the precision ladder ([`crate::escalate`]) until the enclosure is narrow enough;
//! [`prove`] asks [`crate::kernel::check`] on a one-obligation [`Statement`] at each rung
//! until it is decided. Nothing is decided in `f64`.
//!
//! Input errors ([`CalcError`]) say where in the text: line:column and a caret under it.

use crate::certificate::{Certificate, Hints, Profile};
use crate::escalate::{escalate, Ladder};
use crate::kernel::expr::{self, Data, ExprError, Sexp, TermValue};
use crate::kernel::{Certainty, Interval, Statement};
use rug::float::Round;
use rug::{Float, Integer, Rational};

/// The claim ID of a certificate written by `prove --cert` (rebuilt by `verify` from
/// the formula: `claims::rebuild`).
pub const FORMULA_CLAIM: &str = "attncheck/formula";
/// The name of a formula certificate's one obligation.
pub const OBLIGATION: &str = "the formula holds";
/// The hint of a formula certificate that records where `prove`'s ladder started (the
/// precisions `verify` accepts for it: that ladder).
pub const START_HINT: &str = "start_precision";
/// The precision `eval` and `prove` start at, in bits.
pub const DEFAULT_PRECISION: u32 = 128;
/// The highest precision they climb to unless told otherwise.
pub const DEFAULT_MAX_PRECISION: u32 = 4096;
/// The lowest precision the kernel computes at.
pub const MIN_PRECISION: u32 = 24;
/// The highest precision they may be told to climb to: a certificate's highest
/// ([`crate::certificate::MAX_PRECISION`]).
pub const MAX_PRECISION: u32 = crate::certificate::MAX_PRECISION;

/// Bad input: a term or formula that does not parse or validate (the position inside
/// the text, as line:column, and the text with a caret under it), or bad options.
/// Every one is exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    /// The text is not a valid term or formula.
    #[error("{what} at {line}:{column}: {reason}\n{excerpt}")]
    Input {
        /// `term` or `formula`.
        what: &'static str,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// Byte offset in the text.
        offset: usize,
        /// What is wrong.
        reason: String,
        /// The offending line (or a window of it) and a caret line under it.
        excerpt: String,
    },
    /// An option out of range.
    #[error("{0}")]
    Usage(String),
}

impl CalcError {
    /// The process exit code: 2 (bad input or usage) for every one.
    pub fn exit_code(&self) -> u8 {
        2
    }

    fn input(what: &'static str, text: &str, offset: usize, reason: impl Into<String>) -> Self {
        let (line, column, excerpt) = position(text, offset);
        CalcError::Input {
            what,
            line,
            column,
            offset,
            reason: reason.into(),
            excerpt,
        }
    }

    fn expr(what: &'static str, text: &str, e: ExprError) -> Self {
        CalcError::input(what, text, e.offset, e.reason)
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`, and the
/// line (a window of at most about 72 characters around the offset when it is longer)
/// with a caret under the offset.
pub fn position(text: &str, offset: usize) -> (usize, usize, String) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = text[..offset].matches('\n').count() + 1;
    let before: Vec<char> = text[start..offset].chars().collect();
    let after: Vec<char> = text[offset..end].chars().collect();
    let column = before.len() + 1;
    const BEFORE: usize = 32;
    const AFTER: usize = 40;
    let (mut shown, mut caret) = (String::from("  "), 2usize);
    if before.len() > BEFORE {
        shown.push('…');
        shown.extend(&before[before.len() - BEFORE..]);
        caret += BEFORE + 1;
    } else {
        shown.extend(&before);
        caret += before.len();
    }
    if after.len() > AFTER {
        shown.extend(&after[..AFTER]);
        shown.push('…');
    } else {
        shown.extend(&after);
    }
    let excerpt = format!("{}\n{}^", shown.trim_end(), " ".repeat(caret));
    (line, column, excerpt)
}

/// What a text is read as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grammar {
    Term,
    Formula,
}

const FORMULA_OPS: &[&str] = &["<", "<=", ">", ">=", "=", "and", "not", "forall"];

/// Whether `e` reads as a formula (its operator is a comparison or a connective).
fn looks_like_formula(e: &Sexp) -> bool {
    match e {
        Sexp::List(items, _) => {
            matches!(items.first(), Some(Sexp::Atom(op, _)) if FORMULA_OPS.contains(&op.as_str()))
        }
        Sexp::Atom(..) => false,
    }
}

/// Parses and validates `text` as a term or a formula, with the kernel's parser and
/// grammar: depth, literal size, the work budget at 128 bits, every name bound and every
/// operator known. A formula given where a term is expected (and the reverse) is named
/// as such.
fn read(text: &str, grammar: Grammar) -> Result<Sexp, CalcError> {
    let what = match grammar {
        Grammar::Term => "term",
        Grammar::Formula => "formula",
    };
    if text.trim().is_empty() {
        return Err(CalcError::input(
            what,
            text,
            0,
            format!("empty input: expected a {what}"),
        ));
    }
    let e = expr::parse(text).map_err(|e| CalcError::expr(what, text, e))?;
    let data = Data::new();
    let checked = match grammar {
        Grammar::Term => expr::validate_term(&e, &data),
        Grammar::Formula => expr::validate(&e, &data),
    };
    if let Err(err) = checked {
        let reason = match (grammar, looks_like_formula(&e)) {
            (Grammar::Term, true) => format!(
                "this is a formula (a comparison or a connective), and `eval` computes a term; \
                 decide it with `attncheck prove` ({})",
                err.reason
            ),
            (Grammar::Formula, false) if err.offset == 0 => format!(
                "this is a term, and `prove` decides a formula such as (<= TERM BOUND); \
                 compute it with `attncheck eval` ({})",
                err.reason
            ),
            _ => err.reason,
        };
        return Err(CalcError::input(what, text, err.offset, reason));
    }
    let w = expr::work(&e);
    if w > expr::MAX_WORK {
        return Err(CalcError::input(
            what,
            text,
            0,
            format!(
                "the {what} would cost {w} evaluations (nested ranges multiply); the limit is {}",
                expr::MAX_WORK
            ),
        ));
    }
    Ok(e)
}

/// The ladder from `start` to at most `max` bits (checked: both in range, start ≤ max).
fn ladder(start: u32, max: u32) -> Result<Ladder, CalcError> {
    if !(MIN_PRECISION..=MAX_PRECISION).contains(&start) {
        return Err(CalcError::Usage(format!(
            "--precision {start} is out of range: use {MIN_PRECISION} to {MAX_PRECISION} bits"
        )));
    }
    if !(MIN_PRECISION..=MAX_PRECISION).contains(&max) {
        return Err(CalcError::Usage(format!(
            "--max-precision {max} is out of range: use {MIN_PRECISION} to {MAX_PRECISION} bits"
        )));
    }
    if start > max {
        return Err(CalcError::Usage(format!(
            "--precision {start} is above --max-precision {max}"
        )));
    }
    let mut doublings = 0;
    while u64::from(start) << (doublings + 1) <= u64::from(max) {
        doublings += 1;
    }
    Ok(Ladder::new(start, doublings))
}

// ───── eval ─────

/// How [`evaluate`] climbs.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalOptions {
    /// The precision of the first interval evaluation, in bits.
    pub precision: u32,
    /// The highest precision it climbs to.
    pub max_precision: u32,
    /// Narrow enough: width ≤ `rel_width` · min(|lo|, |hi|), so 0 must lie outside the
    /// enclosure (an enclosure of 0 is narrow enough only as the point 0); `None`: 2^-53.
    pub rel_width: Option<Rational>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            precision: DEFAULT_PRECISION,
            max_precision: DEFAULT_MAX_PRECISION,
            rel_width: None,
        }
    }
}

impl EvalOptions {
    /// The relative width that `digits` significant decimal digits ask for: 10^-digits.
    pub fn digits_width(digits: u32) -> Rational {
        Rational::from((
            Integer::from(1),
            Integer::from(Integer::u_pow_u(10, digits)),
        ))
    }

    /// The relative width asked for (2^-53 by default).
    pub fn target(&self) -> Rational {
        self.rel_width
            .clone()
            .unwrap_or_else(|| Rational::from((Integer::from(1), Integer::from(1) << 53)))
    }
}

/// The value of a term.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Exact: the term is rational-closed (+ − × ÷, pow, abs, min, max, ceil, floor, sum
    /// of rationals) or its ceil/floor was decided by an enclosure.
    Exact(Rational),
    /// The exact endpoints of the kernel's outward-rounded enclosure: lo ≤ value ≤ hi.
    Enclosure {
        /// Lower endpoint.
        lo: Rational,
        /// Upper endpoint.
        hi: Rational,
    },
    /// An enclosure with an infinite end (the value's magnitude overflowed MPFR's
    /// exponent range): `None` for an infinite end.
    Unbounded {
        /// Lower endpoint, `None` for −∞.
        lo: Option<Rational>,
        /// Upper endpoint, `None` for +∞.
        hi: Option<Rational>,
    },
    /// The term has no value (or none could be shown): a partial operation (ln, sqrt,
    /// ÷, pow with a negative exponent) met an argument outside its domain. The
    /// reason names the subterm and its position.
    Undefined(String),
}

/// The result of [`evaluate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The value.
    pub value: Value,
    /// The precision it needed (the precision of the last evaluation).
    pub precision: u32,
    /// Whether it is final: exact, an enclosure as narrow as asked, or certainly
    /// undefined (an argument exactly, or entirely, outside its domain). When false,
    /// [`Evaluation::note`] says why it stopped.
    pub settled: bool,
    /// Why it is not settled (the highest precision reached, or the work budget).
    pub note: Option<String>,
    /// The kernel's enclosure (for an enclosure; for display).
    pub enclosure: Option<Interval>,
    /// The relative width asked for.
    pub rel_width: Rational,
}

/// One rung's result.
#[derive(Clone, Debug)]
enum Rung {
    Exact(Rational),
    Enclosure(Interval),
    Undefined { reason: String, definite: bool },
}

/// Whether `i` is narrow enough for relative width `rel` ([`EvalOptions::rel_width`]).
pub fn narrow_enough(i: &Interval, rel: &Rational) -> bool {
    let (Some(lo), Some(hi)) = (i.lo().to_rational(), i.hi().to_rational()) else {
        return false;
    };
    let width = Rational::from(&hi - &lo);
    if lo <= 0 && hi >= 0 {
        // a relative width is unbounded for an enclosure of 0 unless it is the point 0
        return width == 0;
    }
    let small = if lo > 0 { lo } else { -hi };
    width <= Rational::from(rel * &small)
}

/// Computes `term` with the kernel: exact when it stays rational, else an enclosure at
/// `opts.precision` bits, doubled (at most to `opts.max_precision`) until it is narrow
/// enough; an undefined term gives [`Value::Undefined`] with the reason, never a value.
pub fn evaluate(term: &str, opts: &EvalOptions) -> Result<Evaluation, CalcError> {
    let ladder = ladder(opts.precision, opts.max_precision)?;
    let rel = opts.target();
    if rel <= 0 {
        return Err(CalcError::Usage(
            "the relative width asked for must be positive".into(),
        ));
    }
    let sexp = read(term, Grammar::Term)?;
    let data = Data::new();
    let first = ladder.precisions()[0];
    // the last rung that computed (a higher one may stop at the work budget)
    let mut last: Option<(Rung, u32)> = None;
    let mut stop: Option<String> = None;
    let mut error: Option<ExprError> = None;
    let climbed = escalate(
        ladder,
        |p| {
            if stop.is_some() || error.is_some() {
                return true;
            }
            match rung_value(term, &sexp, p, &data) {
                Ok(r) => {
                    let done = match &r {
                        Rung::Exact(_) => true,
                        Rung::Enclosure(i) => narrow_enough(i, &rel),
                        Rung::Undefined { definite, .. } => *definite,
                    };
                    last = Some((r, p));
                    done
                }
                Err(e) if p == first => {
                    error = Some(e);
                    true
                }
                Err(e) => {
                    stop = Some(format!(
                        "stopped before {p} bits: {} (the enclosure at the precision below is shown)",
                        e.reason
                    ));
                    true
                }
            }
        },
        |done| *done,
    );
    if let Some(e) = error {
        return Err(CalcError::expr("term", term, e));
    }
    let exhausted = climbed.is_exhausted();
    let (rung, precision) = last.expect("the first rung computed or erred");
    let top = opts.max_precision;
    let mut settled = !exhausted && stop.is_none();
    let (value, enclosure, note) = match rung {
        Rung::Exact(q) => {
            settled = true;
            (Value::Exact(q), None, None)
        }
        Rung::Enclosure(i) => {
            settled = settled && narrow_enough(&i, &rel);
            let note = (!settled).then(|| {
                stop.clone().unwrap_or_else(|| {
                    if !i.is_finite() {
                        return format!(
                            "the enclosure at {precision} bits has an infinite end: the value's \
                             magnitude overflows MPFR's exponent range"
                        );
                    }
                    let why = if i.contains_zero() {
                        "contains 0, so its relative width is unbounded".to_string()
                    } else {
                        format!("is wider than asked (relative width {})", show_rel(&rel))
                    };
                    format!(
                        "not narrow enough: the enclosure at {precision} bits {why}; {top} bits is \
                         the highest precision allowed (--max-precision)"
                    )
                })
            });
            let value = match (i.lo().to_rational(), i.hi().to_rational()) {
                (Some(lo), Some(hi)) => Value::Enclosure { lo, hi },
                (lo, hi) => Value::Unbounded { lo, hi },
            };
            (value, Some(i), note)
        }
        Rung::Undefined { reason, definite } => {
            settled = definite;
            let note = (!definite).then(|| {
                stop.clone().unwrap_or_else(|| {
                    format!(
                        "not shown to be defined up to {precision} bits, the highest precision \
                         allowed (--max-precision)"
                    )
                })
            });
            (Value::Undefined(reason), None, note)
        }
    };
    Ok(Evaluation {
        value,
        precision,
        settled,
        note,
        enclosure,
        rel_width: rel,
    })
}

fn rung_value(text: &str, sexp: &Sexp, p: u32, data: &Data) -> Result<Rung, ExprError> {
    Ok(match expr::evaluate(text, p, data)? {
        TermValue::Exact(q) => Rung::Exact(q),
        TermValue::Enclosure(i) => Rung::Enclosure(i),
        TermValue::Undefined => {
            let mut loc = Locator::new(text, p);
            match loc.term(sexp, &mut Vec::new()) {
                Some(f) => Rung::Undefined {
                    reason: f.reason,
                    definite: f.definite,
                },
                None => Rung::Undefined {
                    reason: format!(
                        "a partial operation (ln, sqrt, ÷, pow with a negative exponent) met an \
                         argument it could not be shown to accept at {p} bits"
                    ),
                    definite: false,
                },
            }
        }
    })
}

fn show_rel(rel: &Rational) -> String {
    // a power of two or of ten reads best as one
    let (n, d) = (rel.numer(), rel.denom());
    if *n == 1 {
        if d.is_power_of_two() {
            return format!("2^-{}", d.significant_bits() - 1);
        }
        let mut k = 0u32;
        let mut t = Integer::from(1);
        while t < *d {
            t *= 10;
            k += 1;
        }
        if t == *d {
            return format!("10^-{k}");
        }
    }
    rel.to_string()
}

// ───── where a term is undefined ─────

/// The innermost subterm found undefined.
struct Found {
    reason: String,
    /// Certainly undefined: its argument is exactly, or entirely, outside the domain
    /// (no precision would give it a value).
    definite: bool,
}

/// At most this many kernel evaluations, and this much work, are spent finding where a
/// term is undefined (the reason is a courtesy; the answer `undefined` stands without it).
const LOCATE_EVALS: usize = 2000;
const LOCATE_WORK: u128 = 20_000_000;

/// Finds the innermost subterm that the kernel finds undefined, by evaluating closed
/// subterms (a bound variable's values substituted, one at a time).
struct Locator<'t> {
    text: &'t str,
    prec: u32,
    evals: usize,
    work: u128,
    data: Data,
}

/// A scope: the enclosing binders (`forall`, `sum`, `let`), innermost last; `Some(text)`
/// when a value is substituted (a binder's integer, a `let`'s exact value).
type Scope<'a> = Vec<(&'a str, Option<String>)>;

fn binder(items: &[Sexp]) -> Option<(&str, i64, i64, &Sexp)> {
    match items {
        [Sexp::Atom(op, _), Sexp::Atom(v, _), Sexp::Atom(lo, _), Sexp::Atom(hi, _), body]
            if op == "sum" || op == "forall" =>
        {
            Some((v, lo.parse().ok()?, hi.parse().ok()?, body))
        }
        _ => None,
    }
}

/// The text of `e` with the values of `scope` substituted for its variables (a
/// binder inside `e` shadows them).
fn print<'a>(e: &'a Sexp, scope: &mut Scope<'a>, out: &mut String) {
    match e {
        Sexp::Atom(a, _) => match scope.iter().rev().find(|(n, _)| n == a) {
            Some((_, Some(k))) => out.push_str(k),
            _ => out.push_str(a),
        },
        Sexp::List(items, _) => {
            out.push('(');
            if let Some((v, _, _, body)) = binder(items) {
                for x in &items[..4] {
                    if let Sexp::Atom(a, _) = x {
                        out.push_str(a);
                        out.push(' ');
                    }
                }
                scope.push((v, None));
                print(body, scope, out);
                scope.pop();
            } else {
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    print(x, scope, out);
                }
            }
            out.push(')');
        }
    }
}

/// Whether `e` can be evaluated on its own under `scope`: every variable it names is
/// bound inside it or substituted.
fn closed(e: &Sexp, scope: &Scope<'_>) -> bool {
    fn go<'a>(e: &'a Sexp, outer: &Scope<'_>, inner: &mut Vec<&'a str>) -> bool {
        match e {
            Sexp::Atom(a, _) => {
                if inner.iter().any(|n| n == a) {
                    return true;
                }
                !matches!(outer.iter().rev().find(|(n, _)| n == a), Some((_, None)))
            }
            Sexp::List(items, _) => {
                if let Some((v, _, _, body)) = binder(items) {
                    inner.push(v);
                    let r = go(body, outer, inner);
                    inner.pop();
                    r
                } else {
                    items.iter().all(|x| go(x, outer, inner))
                }
            }
        }
    }
    go(e, scope, &mut Vec::new())
}

/// A short rendering of a subterm's text for a message.
fn brief(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}…")
    }
}

/// An enclosure or exact value, briefly, for a message.
fn show_value(v: &TermValue) -> String {
    match v {
        TermValue::Exact(q) => format!("exactly {}", brief(&q.to_string())),
        TermValue::Enclosure(i) => format!(
            "in [{}, {}]",
            float_decimal(i.lo(), 12, Round::Down),
            float_decimal(i.hi(), 12, Round::Up)
        ),
        TermValue::Undefined => "undefined".into(),
    }
}

impl<'t> Locator<'t> {
    fn new(text: &'t str, prec: u32) -> Self {
        Locator {
            text,
            prec,
            evals: 0,
            work: 0,
            data: Data::new(),
        }
    }

    /// The kernel's value of the closed subterm `e` under `scope` (`None` past the
    /// locator's allowance, or on an error).
    fn value<'a>(&mut self, e: &'a Sexp, scope: &mut Scope<'a>) -> Option<TermValue> {
        self.evals += 1;
        self.work = self
            .work
            .saturating_add(expr::work_with(e, &self.data, self.prec));
        if self.evals > LOCATE_EVALS || self.work > LOCATE_WORK {
            return None;
        }
        let mut s = String::new();
        print(e, scope, &mut s);
        expr::evaluate(&s, self.prec, &self.data).ok()
    }

    fn at<'a>(&self, e: &'a Sexp, scope: &mut Scope<'a>) -> String {
        let offset = match e {
            Sexp::Atom(_, o) | Sexp::List(_, o) => *o,
        };
        let (line, column, _) = position(self.text, offset);
        let mut s = String::new();
        print(e, scope, &mut s);
        let values: Vec<String> = scope
            .iter()
            // a building block's `#` names are the expansion's, not the user's
            .filter(|(n, _)| !n.starts_with('#'))
            .filter_map(|(n, k)| k.as_ref().map(|k| format!("{n} = {k}")))
            .collect();
        let when = if values.is_empty() {
            String::new()
        } else {
            format!(" (where {})", values.join(", "))
        };
        format!("`{}` at {line}:{column}{when}", brief(&s))
    }

    /// Where the term `e` (undefined under `scope`) is undefined.
    fn term<'a>(&mut self, e: &'a Sexp, scope: &mut Scope<'a>) -> Option<Found> {
        let Sexp::List(items, _) = e else {
            return None;
        };
        if let Some(r) = self.let_in(items, scope, |l, body, scope| l.term(body, scope)) {
            return r;
        }
        if let Some((v, lo, hi, body)) = binder(items) {
            for k in lo..=hi {
                scope.push((v, Some(k.to_string())));
                let r = match self.value(body, scope) {
                    Some(TermValue::Undefined) => Some(self.term(body, scope)),
                    Some(_) => None,
                    None => Some(None),
                };
                scope.pop();
                if let Some(r) = r {
                    return r;
                }
            }
            return None;
        }
        let op = match items.first() {
            Some(Sexp::Atom(op, _)) => op.as_str(),
            _ => return None,
        };
        let args = &items[1..];
        let mut values = Vec::with_capacity(args.len());
        // an argument that mentions a variable without a substituted value (a `let`'s
        // enclosure) is not evaluated; the others are still looked into
        let mut open = false;
        for (k, a) in args.iter().enumerate() {
            if op == "pow" && k == 1 {
                break; // the exponent is an integer literal
            }
            if !closed(a, scope) {
                open = true;
                continue;
            }
            let v = self.value(a, scope)?;
            if v == TermValue::Undefined {
                return self.term(a, scope).or_else(|| {
                    Some(Found {
                        reason: format!("{} is undefined", self.at(a, scope)),
                        definite: false,
                    })
                });
            }
            values.push(v);
        }
        if open {
            return None;
        }
        let here = self.at(e, scope);
        let zero = |v: &TermValue| match v {
            TermValue::Exact(q) => *q == 0,
            TermValue::Enclosure(i) => i.lo().is_zero() && i.hi().is_zero(),
            TermValue::Undefined => false,
        };
        let (reason, definite) = match (op, values.as_slice()) {
            ("ln", [x]) => {
                let definite = match x {
                    TermValue::Exact(q) => *q <= 0,
                    TermValue::Enclosure(i) => *i.hi() <= 0,
                    TermValue::Undefined => false,
                };
                (
                    if definite {
                        format!(
                            "{here} is undefined: ln needs a positive argument, and its argument is {}",
                            show_value(x)
                        )
                    } else {
                        format!(
                            "{here} may be undefined: ln needs a positive argument, and its argument \
                             is {} at {} bits, which reaches 0",
                            show_value(x),
                            self.prec
                        )
                    },
                    definite,
                )
            }
            ("sqrt", [x]) => {
                let definite = match x {
                    TermValue::Exact(q) => *q < 0,
                    TermValue::Enclosure(i) => *i.hi() < 0,
                    TermValue::Undefined => false,
                };
                (
                    if definite {
                        format!(
                            "{here} is undefined: sqrt needs a non-negative argument, and its argument is {}",
                            show_value(x)
                        )
                    } else {
                        format!(
                            "{here} may be undefined: sqrt needs a non-negative argument, and its \
                             argument is {} at {} bits, which reaches below 0",
                            show_value(x),
                            self.prec
                        )
                    },
                    definite,
                )
            }
            ("/", [_, y]) => {
                let definite = zero(y);
                (
                    if definite {
                        format!("{here} is undefined: division by zero (the divisor is exactly 0)")
                    } else {
                        format!(
                            "{here} may be undefined: the divisor is {} at {} bits, which contains 0",
                            show_value(y),
                            self.prec
                        )
                    },
                    definite,
                )
            }
            ("pow", [x]) => {
                let definite = zero(x);
                (
                    if definite {
                        format!(
                            "{here} is undefined: a negative power of 0 (the base is exactly 0)"
                        )
                    } else {
                        format!(
                            "{here} may be undefined: a negative power, and the base is {} at {} \
                             bits, which contains 0",
                            show_value(x),
                            self.prec
                        )
                    },
                    definite,
                )
            }
            _ => return None,
        };
        Some(Found { reason, definite })
    }

    /// `(let v t body)`: where t is undefined, if it is; else where `inner` finds the
    /// body undefined, with v's exact value substituted (an enclosure is not
    /// substituted: subterms that mention v are then not looked into). `None` when
    /// `items` is not a `let`. Building blocks reach the locator as their expansions,
    /// whose domain guards sit under such `let`s (issue #38: `eval (alibi-slope 0 8)`
    /// exited 3, "could not be shown", instead of 1).
    fn let_in<'a>(
        &mut self,
        items: &'a [Sexp],
        scope: &mut Scope<'a>,
        inner: impl FnOnce(&mut Self, &'a Sexp, &mut Scope<'a>) -> Option<Found>,
    ) -> Option<Option<Found>> {
        let [Sexp::Atom(op, _), Sexp::Atom(v, _), t, body] = items else {
            return None;
        };
        if op != "let" {
            return None;
        }
        let value = if closed(t, scope) {
            match self.value(t, scope) {
                Some(TermValue::Undefined) => return Some(self.term(t, scope)),
                Some(TermValue::Exact(q)) => Some(q.to_string()),
                _ => None,
            }
        } else {
            None
        };
        scope.push((v, value));
        let r = inner(self, body, scope);
        scope.pop();
        Some(r)
    }

    /// Where a term of the formula `e` is undefined (for an undecided formula).
    fn formula<'a>(&mut self, e: &'a Sexp, scope: &mut Scope<'a>) -> Option<Found> {
        let Sexp::List(items, _) = e else {
            return None;
        };
        if let Some(r) = self.let_in(items, scope, |l, body, scope| l.formula(body, scope)) {
            return r;
        }
        if let Some((v, lo, hi, body)) = binder(items) {
            for k in lo..=hi {
                if self.evals > LOCATE_EVALS || self.work > LOCATE_WORK {
                    return None;
                }
                scope.push((v, Some(k.to_string())));
                let r = self.formula(body, scope);
                scope.pop();
                if r.is_some() {
                    return r;
                }
            }
            return None;
        }
        let op = match items.first() {
            Some(Sexp::Atom(op, _)) => op.as_str(),
            _ => return None,
        };
        match op {
            "and" | "not" => items[1..].iter().find_map(|f| self.formula(f, scope)),
            _ => {
                for a in &items[1..] {
                    if closed(a, scope) && self.value(a, scope) == Some(TermValue::Undefined) {
                        return self.term(a, scope);
                    }
                }
                None
            }
        }
    }
}

// ───── prove ─────

/// How [`prove`] climbs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProveOptions {
    /// The precision of the first decision, in bits.
    pub precision: u32,
    /// The highest precision it climbs to.
    pub max_precision: u32,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions {
            precision: DEFAULT_PRECISION,
            max_precision: DEFAULT_MAX_PRECISION,
        }
    }
}

/// The result of [`prove`].
#[derive(Clone, Debug, PartialEq)]
pub struct Proof {
    /// `True`: proven; `False`: certifiably false; `Unknown`: undecided (see `reason`).
    pub result: Certainty,
    /// The precision that decided it (the highest tried when undecided).
    pub precision: u32,
    /// The certificate of the statement "the formula holds" at that precision (what
    /// `prove --cert` writes when the result is `True`; `verify` rebuilds it from the
    /// formula).
    pub certificate: Certificate,
    /// The statement the kernel decided (claim [`FORMULA_CLAIM`], one obligation).
    pub statement: Statement,
    /// The formula in canonical form (tokens separated by one space): the text the
    /// certificate carries.
    pub formula: String,
    /// Why it is undecided (`None` when decided).
    pub reason: Option<String>,
}

/// The canonical text of a formula: its tokens separated by single spaces, inside
/// parentheses without padding (`(<= (exp -2) 1/7)`). A certificate carries this form,
/// so `verify --formula` does not depend on spacing or line breaks.
pub fn canonical(e: &Sexp) -> String {
    let mut s = String::new();
    let mut scope = Vec::new();
    print(e, &mut scope, &mut s);
    s
}

/// The statement "`formula` holds" (claim [`FORMULA_CLAIM`]), `formula` canonical.
pub fn statement_of(formula: &str) -> Statement {
    let mut st = Statement::new(FORMULA_CLAIM);
    st.assert(OBLIGATION, formula);
    st
}

/// Reads `formula` (as `prove` does: parse and validate, errors with the position) and
/// gives its canonical text ([`canonical`]).
pub fn canonical_formula(formula: &str) -> Result<String, CalcError> {
    read(formula, Grammar::Formula).map(|_| written(formula))
}

/// The canonical text of `text` as written: its building blocks named, not expanded
/// (their expansions bind `#` variables that no formula may contain, so the expanded
/// text would not read back). `text` has been [`read`] already.
fn written(text: &str) -> String {
    canonical(&expr::parse_written(text).expect("read already"))
}

/// Decides `formula` with the kernel, at `opts.precision` bits, doubled (at most to
/// `opts.max_precision`) while it is undecided.
pub fn prove(formula: &str, opts: &ProveOptions) -> Result<Proof, CalcError> {
    let ladder = ladder(opts.precision, opts.max_precision)?;
    let sexp = read(formula, Grammar::Formula)?;
    let text = written(formula);
    let st = statement_of(&text);
    let first = ladder.precisions()[0];
    let mut last: Option<(Certainty, u32)> = None;
    let mut stop: Option<String> = None;
    let mut error: Option<ExprError> = None;
    let climbed = escalate(
        ladder,
        |p| {
            if stop.is_some() || error.is_some() {
                return true;
            }
            match crate::kernel::check(&st, p) {
                Ok(c) => {
                    let r = c.decisions()[0].result();
                    last = Some((r, p));
                    r != Certainty::Unknown
                }
                Err(e) if p == first => {
                    error = Some(e.error);
                    true
                }
                Err(e) => {
                    stop = Some(format!("stopped before {p} bits: {}", e.error.reason));
                    true
                }
            }
        },
        |done| *done,
    );
    if let Some(e) = error {
        // the canonical text's offsets differ from the input's: re-read the input for
        // the position when the kernel's error can be placed there; else the canonical
        return Err(match expr::prepare(formula, first, &Data::new()) {
            Err(e) => CalcError::expr("formula", formula, e),
            Ok(_) => CalcError::expr("formula", &text, e),
        });
    }
    let _ = climbed;
    let (result, precision) = last.expect("the first rung decided or erred");
    let reason = (result == Certainty::Unknown).then(|| {
        let mut why = stop.clone().unwrap_or_else(|| {
            format!(
                "undecided up to {precision} bits, the highest precision allowed (--max-precision): \
                 the enclosures still overlap"
            )
        });
        let mut loc = Locator::new(formula, precision);
        if let Some(f) = loc.formula(&sexp, &mut Vec::new()) {
            why.push_str("; a comparison's term has no value: ");
            why.push_str(&f.reason);
        }
        why
    });
    let mut hints = Hints::new();
    hints.insert(START_HINT.into(), first.to_string());
    let certificate = Certificate::of(&st, Profile::Quick, precision, &hints);
    Ok(Proof {
        result,
        precision,
        certificate,
        statement: st,
        formula: text,
        reason,
    })
}

/// The precisions `verify` accepts for a formula certificate: the ladder `prove`
/// climbs from its hint [`START_HINT`] to [`MAX_PRECISION`] (none when the hint is
/// missing or malformed).
pub fn certificate_precisions(cert: &Certificate) -> Vec<u32> {
    cert.hints
        .get(START_HINT)
        .and_then(|p| p.parse::<u32>().ok())
        .and_then(|p| ladder(p, MAX_PRECISION).ok())
        .map(|l| l.precisions())
        .unwrap_or_default()
}

/// The statement of a formula certificate, rebuilt from `given` (`verify --formula`,
/// read and made canonical) or, without it, from the one formula the certificate
/// carries. The certificate must then carry exactly this statement.
pub fn rebuild(cert: &Certificate, given: Option<&str>) -> Result<Statement, String> {
    let formula = match given {
        Some(f) => canonical_formula(f).map_err(|e| format!("--formula: {e}"))?,
        None => match cert.obligations.as_slice() {
            [o] => o.formula.clone(),
            os => {
                return Err(format!(
                    "a formula certificate carries exactly one obligation, this one {}",
                    os.len()
                ))
            }
        },
    };
    Ok(statement_of(&formula))
}

// ───── decimals ─────

/// `f` in decimal with `digits` significant digits, rounded in direction `r` (MPFR's
/// own conversion, so `Down` gives a value ≤ f and `Up` one ≥ f), in plain notation
/// for moderate exponents, else scientific.
pub fn float_decimal(f: &Float, digits: usize, r: Round) -> String {
    if f.is_zero() {
        return "0".into();
    }
    if f.is_infinite() {
        return if f.is_sign_negative() { "-inf" } else { "inf" }.into();
    }
    let s = f.to_string_radix_round(10, Some(digits.max(1)), r);
    plain(&s)
}

/// MPFR's `d.ddde±x` as plain decimal when −7 < x < 21 (trailing zeros after the point
/// dropped), else as given.
fn plain(s: &str) -> String {
    let (mant, exp) = match s.split_once('e') {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (s, 0),
    };
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let point = mant.find('.').unwrap_or(mant.len()) as i64 + exp;
    if !(-6..=21).contains(&point) {
        return s.to_string();
    }
    let mut out = String::new();
    if point <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-point) as usize));
        out.push_str(&digits);
    } else if point as usize >= digits.len() {
        out.push_str(&digits);
        out.push_str(&"0".repeat(point as usize - digits.len()));
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    if out.contains('.') {
        while out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            out.pop();
        }
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// The digits every point of [lo, hi] shares, as a truncated decimal ending in `…`
/// (`None` when not even the first digit is shared): lo rounded down and hi rounded up
/// to `digits` significant digits, and their common leading part.
pub fn certified_digits(i: &Interval, digits: usize) -> Option<String> {
    if !i.is_finite() || i.contains_zero() {
        return None;
    }
    let a = i.lo().to_string_radix_round(10, Some(digits), Round::Down);
    let b = i.hi().to_string_radix_round(10, Some(digits), Round::Up);
    let (ma, ea) = a.split_once('e').unwrap_or((&a, "0"));
    let (mb, eb) = b.split_once('e').unwrap_or((&b, "0"));
    if ea != eb {
        return None;
    }
    let common: String = ma
        .chars()
        .zip(mb.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    let common = common.trim_end_matches('.');
    if !common.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    if common.len() == ma.len() {
        // both endpoints print the same: a point, or closer than the digits shown
        return Some(plain(&format!("{ma}e{ea}")));
    }
    let p = plain(&format!("{common}e{ea}"));
    // a truncated integer part would lose its magnitude: say it in scientific form
    let int_digits = ma.trim_start_matches('-').find('.').unwrap_or(ma.len()) as i64
        + ea.parse::<i64>().unwrap_or(0);
    let shared = common.trim_start_matches('-').replace('.', "").len() as i64;
    if shared < int_digits {
        return Some(format!("{common}…e{ea}"));
    }
    Some(format!("{p}…"))
}

/// An exact rational in decimal: every digit when it terminates within `digits`
/// fractional digits (then `(text, true)`), else truncated toward zero to `digits`
/// significant digits, ending in `…` (then `(text, false)`).
pub fn rational_decimal(q: &Rational, digits: u32) -> (String, bool) {
    let neg = *q < 0;
    let a = Rational::from(q.abs_ref());
    let sign = if neg { "-" } else { "" };
    if *a.denom() == 1 {
        return (format!("{sign}{}", a.numer()), true);
    }
    // terminating: the denominator is 2^i 5^j; it needs max(i, j) fractional digits
    let mut d = a.denom().clone();
    let twos = d.find_one(0).unwrap_or(0);
    d >>= twos;
    let mut fives = 0u32;
    while d.is_divisible_u(5) {
        d /= 5u32;
        fives += 1;
    }
    if d == 1 && twos.max(fives) <= digits.max(60) {
        let k = twos.max(fives);
        let scaled = (a.numer() * Integer::from(Integer::u_pow_u(10, k))) / a.denom();
        let s = scaled.to_string();
        let s = format!(
            "{}{}",
            "0".repeat((k as usize + 1).saturating_sub(s.len())),
            s
        );
        let (int, frac) = s.split_at(s.len() - k as usize);
        let frac = frac.trim_end_matches('0');
        return (
            if frac.is_empty() {
                format!("{sign}{int}")
            } else {
                format!("{sign}{int}.{frac}")
            },
            true,
        );
    }
    // e = ⌊log10 a⌋, exactly
    let bits = i64::from(a.numer().significant_bits()) - i64::from(a.denom().significant_bits());
    let mut e = (bits as f64 * std::f64::consts::LOG10_2).floor() as i64;
    let pow10 = |e: i64| -> Rational {
        let p = Integer::from(Integer::u_pow_u(10, e.unsigned_abs() as u32));
        if e >= 0 {
            Rational::from(p)
        } else {
            Rational::from((Integer::from(1), p))
        }
    };
    while pow10(e) > a {
        e -= 1;
    }
    while pow10(e + 1) <= a {
        e += 1;
    }
    let shift = i64::from(digits.max(1)) - 1 - e;
    let m = (&a * pow10(shift)).floor().numer().clone();
    let ms = m.to_string();
    let text = plain(&format!("{}.{}e{}", &ms[..1], &ms[1..], e));
    (format!("{sign}{text}…"), false)
}
