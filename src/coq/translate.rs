//! From certificate S-expressions to Coq: statements in real-number syntax and
//! the proof scripts that make Coq re-prove them.
//!
//! A formula is first parsed into a small typed tree ([`T`], [`F`]) and put in
//! negation normal form (an obligation with `expect: "fails"` is translated as
//! the negation of its formula). Its statement is then printed in Coq's
//! real-number syntax, each comparison with the domain conditions of its partial
//! operations ([`with_domains`]: Coq's `ln`, `/`, `sqrt` are total, the format's
//! are not). The proof is chosen by the shape of the formula:
//!
//! - **exact** (no `exp`, `ln`, `sqrt`, `sin`, `cos`, `pi`): the formula is
//!   reflected into `Attncheck.form` and decided by `decide_exact`, which Coq's
//!   kernel evaluates in exact rationals (`vm_compute`). Large sums and
//!   quantifiers cost a list traversal, not a proof term per instance.
//! - **otherwise**: conjunctions are split, bounded `forall`s are unrolled
//!   (one goal per instance), disjunctions and `exists` take the witness the
//!   attncheck kernel points to (Coq checks it), closed exact subterms with
//!   sums, ceilings or extrema are replaced by their value (proven by
//!   `decide_exact`), a ceiling or floor of a transcendental term by its integer
//!   value (proven by two `interval` bounds), and the remaining inequality is
//!   closed by `interval`.
//!
//! Everything the kernel supplies here (witnesses, values) is a hint: Coq
//! re-proves it, so a wrong hint makes an obligation fail, never pass.

use crate::certificate::Certificate;
use crate::kernel::expr::{self, Data, Datum, Sexp};
use crate::kernel::{parse_rational, Certainty, Expect};
use rug::{Integer, Rational};
use std::collections::HashMap;
use std::fmt::Write;

/// Unrolled instances of non-exact `forall`s (interval goals) above which an
/// obligation stays kernel-only.
pub const MAX_INTERVAL_GOALS: u64 = 2_000;
/// Terms given to `interval` (after unrolling sums), in total, above which an
/// obligation stays kernel-only.
pub const MAX_INTERVAL_TERMS: u64 = 50_000;
/// Bits of the largest exact number a formula writes or builds (a literal, or a
/// power of one) above which an obligation stays kernel-only: Coq's integers are
/// binary lists. Measured (coqc 8.16): ⌈log₂ 1024!⌉ (8770 bits, literals in
/// hexadecimal) takes about 3 s; ⌈log₂ 65536!⌉ (954037 bits, the literal named
/// once by [`hoist_big`]) about 66 s and 4.5 GB, with the 1 GB stack that
/// `coq::coqc` asks for.
pub const MAX_COQ_NUMBER_BITS: u64 = 1 << 20;
/// Exact work (instances × term size) above which an exact obligation stays
/// kernel-only.
pub const MAX_EXACT_WORK: u64 = 50_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Elem {
    Exp,
    Ln,
    Sqrt,
    Sin,
    Cos,
}

impl Elem {
    fn coq(self) -> &'static str {
        match self {
            Elem::Exp => "exp",
            Elem::Ln => "ln",
            Elem::Sqrt => "sqrt",
            Elem::Sin => "sin",
            Elem::Cos => "cos",
        }
    }
}

/// A term.
#[derive(Clone, Debug)]
pub(crate) enum T {
    Lit(Rational),
    Var(String),
    Pi,
    Add(Vec<T>),
    Mul(Vec<T>),
    Sub(Box<T>, Box<T>),
    Div(Box<T>, Box<T>),
    Neg(Box<T>),
    Fun(Elem, Box<T>),
    Pow(Box<T>, i64),
    Abs(Box<T>),
    Min(Box<T>, Box<T>),
    Max(Box<T>, Box<T>),
    Ceil(Box<T>),
    Floor(Box<T>),
    Sum(String, i64, i64, Box<T>),
    /// A data operation: index into [`Ops`].
    Data(usize),
    /// `(band-reach L d l)` (false) or `(band-reach-count L d l)` (true): three
    /// integer-valued terms (`TBand` of coq/Attncheck.v, decided by computation).
    Band(bool, Vec<T>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Le,
    Lt,
    Ge,
    Gt,
    Eq,
    Ne,
}

impl Cmp {
    fn neg(self) -> (Cmp, bool) {
        // (new op, swap sides): ¬(a ≤ b) ⇔ b < a, ¬(a < b) ⇔ b ≤ a, …
        match self {
            Cmp::Le => (Cmp::Lt, true),
            Cmp::Lt => (Cmp::Le, true),
            Cmp::Ge => (Cmp::Lt, false),
            Cmp::Gt => (Cmp::Le, false),
            Cmp::Eq => (Cmp::Ne, false),
            Cmp::Ne => (Cmp::Eq, false),
        }
    }
    fn coq(self) -> &'static str {
        match self {
            Cmp::Le => "<=",
            Cmp::Lt => "<",
            Cmp::Ge => ">=",
            Cmp::Gt => ">",
            Cmp::Eq => "=",
            Cmp::Ne => "<>",
        }
    }
    fn ast(self) -> &'static str {
        match self {
            Cmp::Le => "FLe",
            Cmp::Lt => "FLt",
            Cmp::Ge => "FGe",
            Cmp::Gt => "FGt",
            Cmp::Eq => "FEq",
            Cmp::Ne => "FNe",
        }
    }
}

/// A formula in negation normal form.
#[derive(Clone, Debug)]
pub(crate) enum F {
    Cmp(Cmp, T, T),
    And(Vec<F>),
    Or(Vec<F>),
    All(String, i64, i64, Box<F>),
    Ex(String, i64, i64, Box<F>),
    /// A domain condition ([`with_domains`]): stated and proven as the formula it
    /// holds, except that a `forall` of comparisons is first tried by one
    /// `interval` per comparison over the whole range ([`uniform`]).
    Dom(Box<F>),
}

/// A data operation used by some formula.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    /// Its kernel text, e.g. `(err-max S B)`.
    pub key: String,
    /// Its Coq application, e.g. `err_max data_S data_B`.
    pub coq: String,
    /// Integer-valued (Z) rather than rational (Q).
    pub int: bool,
    /// The faster expression Coq evaluates (sharing the Gram matrix), and the
    /// definition to unfold to reach it.
    pub fast: Option<(String, String)>,
    /// The sign matrix whose Gram matrix it needs.
    pub gram_of: Option<String>,
}

/// The data operations of a certificate, numbered in order of first use.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ops {
    pub list: Vec<Op>,
    index: HashMap<String, usize>,
}

impl Ops {
    fn add(&mut self, op: Op) -> usize {
        if let Some(&i) = self.index.get(&op.key) {
            return i;
        }
        self.index.insert(op.key.clone(), self.list.len());
        self.list.push(op);
        self.list.len() - 1
    }
}

/// The Coq name of a datum: `data_<k>` for the k-th datum of the certificate
/// (in the order of its names), so that no two data share a name whatever they are
/// called (the name itself appears only in comments).
pub(crate) fn data_name(cert: &Certificate, name: &str) -> String {
    match cert.data.keys().position(|k| k == name) {
        Some(k) => format!("data_{k}"),
        // not reached: the reader takes data names from the certificate's data
        None => "data_unknown".into(),
    }
}

/// The Coq name of the k-th binder (`forall`, `sum`, or the summation index of
/// an expanded `sandwich-centred`) of an obligation, counted in reading order:
/// `v0`, `v1`, …. Every binder has its own name, never derived from the
/// certificate's text (the certificate's name is in a comment), so no binder can
/// capture another's variable and no name can clash with a Coq keyword or with
/// the file's own definitions (`val_k`, `data_k`, `big_k_j`, `G_…`, `o_k`).
pub(crate) fn binder_name(k: usize) -> String {
    format!("v{k}")
}

fn no_coq(op: &str) -> String {
    format!("operator `{op}` has no Coq translation")
}

/// (n, d, Some((CPU seconds, GB))) or (n, d, None): one measurement of [`LAYER_BOUND_COST`].
pub type LayerBoundCost = (usize, usize, Option<(u64, &'static str)>);

/// Measured Coq cost of one coordinate bound of one step of the layer map, as
/// (n, d, Some((CPU seconds, GB of memory))) or (n, d, None) when it ran out of 8 GB:
/// CoqInterval 4.6's `interval` at 53 bits proving that one coordinate of the plain
/// map (`Attncheck.layer_stepR`, unfolded) lies in a box, from a box of the previous
/// step, on the first step of the committed certificates' data (docs/coq.md, "What
/// stays kernel-only").
pub const LAYER_BOUND_COST: &[LayerBoundCost] = &[
    (5, 3, Some((26, "4.7"))),
    (10, 3, None),
    (10, 4, None),
    (20, 2, None),
];

/// Why `layer-max-sqnorm` and `layer-max-sqdist` stay kernel-only: iterating the map
/// in Coq takes 2·n·d `interval` bounds per step and run (each coordinate from above
/// and below), and the measured cost of one bound puts that beyond the Coq budget.
fn layer_cost(l: &crate::kernel::layer_data::LayerData) -> String {
    let (n, d, k, r) = (l.n(), l.d(), l.steps(), l.runs().len());
    let bounds = 2 * k * r * n * d;
    let head = format!(
        "iterating the layer map in Coq is beyond the Coq budget: `interval` on the plain map from \
         per-step boxes needs 2·K·R·n·d = {bounds} coordinate bounds (K = {k}, R = {r}, n = {n}, d = {d})"
    );
    match LAYER_BOUND_COST.iter().find(|m| (m.0, m.1) == (n, d)) {
        Some(&(_, _, Some((s, gb)))) => format!(
            "{head}, each about {s} CPU-s and {gb} GB at this n and d (measured): about {} CPU-hours",
            (bounds as u64 * s).div_ceil(3600)
        ),
        Some(&(_, _, None)) => {
            format!("{head}, and one bound runs out of 8 GB of memory at this n and d (measured)")
        }
        None => {
            let (mn, md, s, gb) = match LAYER_BOUND_COST[0] {
                (mn, md, Some((s, gb))) => (mn, md, s, gb),
                _ => unreachable!("the first measurement is a finished one"),
            };
            format!(
                "{head}; one bound takes {s} CPU-s and {gb} GB at n = {mn}, d = {md} and runs out of 8 GB \
                 at n = 10, d = 3 (measured)"
            )
        }
    }
}

struct Reader<'a> {
    cert: &'a Certificate,
    data: &'a Data,
    ops: &'a mut Ops,
    /// The enclosing binders, innermost last: (name in the certificate, generated name).
    scope: Vec<(String, String)>,
    /// Every binder read so far, in order: (generated name, name in the certificate).
    binders: Vec<(String, String)>,
}

fn atom(e: &Sexp) -> Option<&str> {
    match e {
        Sexp::Atom(a, _) => Some(a),
        Sexp::List(..) => None,
    }
}

fn int_of(e: &Sexp) -> Result<i64, String> {
    atom(e)
        .and_then(|a| a.parse::<i64>().ok())
        .ok_or_else(|| "expected an integer literal".to_string())
}

fn bound(e: &Sexp) -> Result<String, String> {
    match atom(e) {
        Some(a) if a.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && a != "pi" => {
            Ok(a.to_string())
        }
        _ => Err("expected a variable name".into()),
    }
}

/// The bounds of a `forall` or `sum` (already accepted by the kernel's
/// validation, [`expr::validate`]: non-empty and not too long; checked again here).
fn range(items: &[Sexp]) -> Result<(i64, i64), String> {
    let lo = int_of(&items[2])?;
    let hi = int_of(&items[3])?;
    if hi < lo {
        return Err(format!("range {lo}..{hi} is empty"));
    }
    if hi.saturating_sub(lo) > 50_000_000 {
        return Err(format!("range {lo}..{hi} is longer than the kernel allows"));
    }
    Ok((lo, hi))
}

impl Reader<'_> {
    /// A fresh binder for the certificate's variable `name`.
    fn bind(&mut self, name: &str) -> String {
        let g = binder_name(self.binders.len());
        self.binders.push((g.clone(), name.to_string()));
        g
    }

    fn datum(&self, e: &Sexp, op: &str) -> Result<(String, &Datum), String> {
        let a = atom(e).ok_or_else(|| format!("`{op}` expects the name of a datum"))?;
        let d = self
            .data
            .get(a)
            .ok_or_else(|| match self.cert.data.get(a) {
                Some(_) => format!("datum `{a}` is malformed"),
                None => format!("no datum named `{a}` in the certificate"),
            })?;
        if let Datum::Layer(_) = d {
            return Err(format!(
                "operator `{op}` over a datum of kind `layer` has no Coq translation"
            ));
        }
        Ok((a.to_string(), d))
    }

    fn signs(&self, e: &Sexp, op: &str) -> Result<String, String> {
        match self.datum(e, op)? {
            (n, Datum::Signs(_)) => Ok(n),
            _ => Err(format!("`{op}` expects a sign matrix")),
        }
    }

    fn sparse(&self, e: &Sexp, op: &str) -> Result<String, String> {
        match self.datum(e, op)? {
            (n, Datum::Sparse(_)) => Ok(n),
            _ => Err(format!("`{op}` expects a row-sparse rational matrix")),
        }
    }

    fn data_op(&mut self, op: &str, args: &[Sexp]) -> Result<Option<T>, String> {
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("`{op}` takes {n} argument(s), got {}", args.len()))
            }
        };
        let op_rec = match op {
            "rows" => {
                arity(1)?;
                let (name, d) = self.datum(&args[0], op)?;
                let f = if matches!(d, Datum::Signs(_)) {
                    "rows_signs"
                } else {
                    "rows_sparse"
                };
                Op {
                    key: format!("(rows {name})"),
                    coq: format!("{f} {}", data_name(self.cert, &name)),
                    int: true,
                    fast: None,
                    gram_of: None,
                }
            }
            "cols" => {
                arity(1)?;
                let s = self.signs(&args[0], op)?;
                Op {
                    key: format!("(cols {s})"),
                    coq: format!("cols {}", data_name(self.cert, &s)),
                    int: true,
                    fast: None,
                    gram_of: None,
                }
            }
            "gram-max-abs" => {
                arity(1)?;
                let s = self.signs(&args[0], op)?;
                let ds = data_name(self.cert, &s);
                Op {
                    key: format!("(gram-max-abs {s})"),
                    coq: format!("gram_max_abs {ds}"),
                    int: true,
                    fast: Some((format!("gram_max_abs_of G_{ds}"), "gram_max_abs".into())),
                    gram_of: Some(ds),
                }
            }
            "row-sum-max" | "row-nnz-max" | "entry-min" | "entry-max" | "entry-sum" => {
                arity(1)?;
                let b = self.sparse(&args[0], op)?;
                Op {
                    key: format!("({op} {b})"),
                    coq: format!("{} {}", op.replace('-', "_"), data_name(self.cert, &b)),
                    int: op == "row-nnz-max",
                    fast: None,
                    gram_of: None,
                }
            }
            "err-max" | "lemma-a" | "lemma-b" | "lemma-a-row" | "lemma-b-row" => {
                let with_t = op.ends_with("-row");
                arity(if with_t { 3 } else { 2 })?;
                let s = self.signs(&args[0], op)?;
                let b = self.sparse(&args[1], op)?;
                let (ds, db) = (data_name(self.cert, &s), data_name(self.cert, &b));
                let (t_key, t_coq) = if with_t {
                    let t = self.term(&args[2])?;
                    if !exact(&t) || !closed(&t, &mut Vec::new()) {
                        return Err(format!("`{op}`: t must be an exact rational"));
                    }
                    let q = expr::eval_exact(
                        &kernel_term(&t, &[], &self.ops.list),
                        self.cert.precision,
                        self.data,
                    )
                    .ok()
                    .flatten()
                    .ok_or_else(|| format!("`{op}`: the kernel does not evaluate t"))?;
                    (
                        format!(" {}", q_kernel(&q)),
                        format!(" ({} # {})%Q", z(q.numer()), num(q.denom())),
                    )
                } else {
                    (String::new(), String::new())
                };
                let f = op.replace('-', "_");
                Op {
                    key: format!("({op} {s} {b}{t_key})"),
                    coq: format!("{f} {ds} {db}{t_coq}"),
                    int: false,
                    fast: Some((format!("{f}_of (s_d {ds}) G_{ds} {db}{t_coq}"), f)),
                    gram_of: Some(ds),
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(T::Data(self.ops.add(op_rec))))
    }

    fn term(&mut self, e: &Sexp) -> Result<T, String> {
        match e {
            Sexp::Atom(a, _) => {
                if a == "pi" {
                    return Ok(T::Pi);
                }
                if let Some((_, g)) = self.scope.iter().rev().find(|(v, _)| v == a) {
                    return Ok(T::Var(g.clone()));
                }
                parse_rational(a)
                    .map(T::Lit)
                    .map_err(|_| format!("`{a}` is neither a number nor a bound variable"))
            }
            Sexp::List(items, _) => {
                let op = items
                    .first()
                    .and_then(atom)
                    .ok_or_else(|| "expected an operator".to_string())?;
                let args = &items[1..];
                if let Some(t) = self.data_op(op, args)? {
                    return Ok(t);
                }
                let arity = |n: usize| {
                    if args.len() == n {
                        Ok(())
                    } else {
                        Err(format!("`{op}` takes {n} argument(s), got {}", args.len()))
                    }
                };
                let b = |r: &mut Self, i: usize| r.term(&args[i]).map(Box::new);
                Ok(match op {
                    "band-reach" | "band-reach-count" => {
                        arity(3)?;
                        let ts = args
                            .iter()
                            .map(|a| self.term(a))
                            .collect::<Result<Vec<_>, _>>()?;
                        T::Band(op == "band-reach-count", ts)
                    }
                    "+" | "*" => {
                        if args.is_empty() {
                            return Err(format!("`{op}` needs arguments"));
                        }
                        let ts = args
                            .iter()
                            .map(|a| self.term(a))
                            .collect::<Result<Vec<_>, _>>()?;
                        if op == "+" {
                            T::Add(ts)
                        } else {
                            T::Mul(ts)
                        }
                    }
                    "-" | "neg" => {
                        if args.len() == 1 {
                            T::Neg(b(self, 0)?)
                        } else if op == "neg" {
                            return Err("`neg` takes 1 argument".into());
                        } else {
                            arity(2)?;
                            T::Sub(b(self, 0)?, b(self, 1)?)
                        }
                    }
                    "/" => {
                        arity(2)?;
                        T::Div(b(self, 0)?, b(self, 1)?)
                    }
                    "exp" | "ln" | "sqrt" | "sin" | "cos" => {
                        arity(1)?;
                        let f = match op {
                            "exp" => Elem::Exp,
                            "ln" => Elem::Ln,
                            "sqrt" => Elem::Sqrt,
                            "sin" => Elem::Sin,
                            _ => Elem::Cos,
                        };
                        T::Fun(f, b(self, 0)?)
                    }
                    "abs" => {
                        arity(1)?;
                        T::Abs(b(self, 0)?)
                    }
                    "ceil" | "floor" => {
                        arity(1)?;
                        if op == "ceil" {
                            T::Ceil(b(self, 0)?)
                        } else {
                            T::Floor(b(self, 0)?)
                        }
                    }
                    "min" | "max" => {
                        arity(2)?;
                        if op == "min" {
                            T::Min(b(self, 0)?, b(self, 1)?)
                        } else {
                            T::Max(b(self, 0)?, b(self, 1)?)
                        }
                    }
                    "pow" => {
                        arity(2)?;
                        let n = int_of(&args[1])?;
                        i32::try_from(n).map_err(|_| "exponent too large".to_string())?;
                        T::Pow(b(self, 0)?, n)
                    }
                    "sandwich-centred" => {
                        // the plain definition from the format document, unrolled by
                        // Coq's `interval` like any sum: Σ_i (cos(r·exp(−(2i/D)·ln 10⁴)) − 1)
                        arity(3)?;
                        let (dbar, first) =
                            expr::sandwich::check_args(int_of(&args[0])?, int_of(&args[1])?)?;
                        let r = b(self, 2)?;
                        // a summation variable of its own (no variable of r can be it)
                        let i = self.bind("(the summation index of sandwich-centred)");
                        let omega = T::Fun(
                            Elem::Exp,
                            Box::new(T::Mul(vec![
                                T::Lit(Rational::from((-2, i64::from(dbar)))),
                                T::Var(i.clone()),
                                T::Fun(Elem::Ln, Box::new(T::Lit(Rational::from(10_000)))),
                            ])),
                        );
                        let body = T::Sub(
                            Box::new(T::Fun(Elem::Cos, Box::new(T::Mul(vec![*r, omega])))),
                            Box::new(T::Lit(Rational::from(1))),
                        );
                        let (lo, hi) = (i64::from(first), i64::from(first + dbar / 2 - 1));
                        T::Sum(i, lo, hi, Box::new(body))
                    }
                    "sum" => {
                        arity(4)?;
                        let v = bound(&args[0])?;
                        let (lo, hi) = range(items)?;
                        let g = self.bind(&v);
                        self.scope.push((v, g.clone()));
                        let body = self.term(&args[3]);
                        self.scope.pop();
                        T::Sum(g, lo, hi, Box::new(body?))
                    }
                    "layer-max-sqnorm" | "layer-max-sqdist" => {
                        return Err(match self.data.get(atom(&args[0]).unwrap_or_default()) {
                            Some(Datum::Layer(l)) => layer_cost(l),
                            _ => format!("`{op}` expects a layer datum"),
                        })
                    }
                    _ => return Err(no_coq(op)),
                })
            }
        }
    }

    /// The formula `e` (negated when `neg`), in negation normal form.
    fn formula(&mut self, e: &Sexp, neg: bool) -> Result<F, String> {
        let Sexp::List(items, _) = e else {
            return Err("expected a formula such as (<= a b)".into());
        };
        let op = items
            .first()
            .and_then(atom)
            .ok_or_else(|| "expected an operator".to_string())?;
        let args = &items[1..];
        match op {
            "<" | "<=" | ">" | ">=" | "=" => {
                if args.len() != 2 {
                    return Err(format!("`{op}` takes 2 arguments"));
                }
                let c = match op {
                    "<" => Cmp::Lt,
                    "<=" => Cmp::Le,
                    ">" => Cmp::Gt,
                    ">=" => Cmp::Ge,
                    _ => Cmp::Eq,
                };
                let a = self.term(&args[0])?;
                let b = self.term(&args[1])?;
                Ok(if neg {
                    let (c, swap) = c.neg();
                    if swap {
                        F::Cmp(c, b, a)
                    } else {
                        F::Cmp(c, a, b)
                    }
                } else {
                    F::Cmp(c, a, b)
                })
            }
            "and" => {
                let fs = args
                    .iter()
                    .map(|a| self.formula(a, neg))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(if neg { F::Or(fs) } else { F::And(fs) })
            }
            "not" => {
                if args.len() != 1 {
                    return Err("`not` takes 1 argument".into());
                }
                self.formula(&args[0], !neg)
            }
            "forall" => {
                if args.len() != 4 {
                    return Err(
                        "`forall` takes a variable, two integer bounds and a formula".into(),
                    );
                }
                let v = bound(&args[0])?;
                let (lo, hi) = range(items)?;
                let g = self.bind(&v);
                self.scope.push((v, g.clone()));
                let body = self.formula(&args[3], neg);
                self.scope.pop();
                let body = Box::new(body?);
                Ok(if neg {
                    F::Ex(g, lo, hi, body)
                } else {
                    F::All(g, lo, hi, body)
                })
            }
            _ => Err(no_coq(op)),
        }
    }
}

// ---------------------------------------------------------------- domains

/// A partial operation's domain condition on its argument `t`, as a comparison
/// in the statement (`0 < t` for `ln`, `0 <= t` for `sqrt`, `t <> 0` for a
/// divisor and for the base of a negative power); `None` when `t` is a literal
/// inside the domain (`ln 2`, `x / 16`: nothing to say).
fn domain_condition(op: Cmp, t: &T) -> Option<F> {
    let zero = Rational::new();
    let holds = match t {
        T::Lit(q) => match op {
            Cmp::Lt => *q > zero,
            Cmp::Le => *q >= zero,
            _ => *q != zero,
        },
        _ => false,
    };
    if holds {
        return None;
    }
    Some(match op {
        Cmp::Ne => F::Cmp(Cmp::Ne, t.clone(), T::Lit(zero)),
        _ => F::Cmp(op, T::Lit(zero), t.clone()),
    })
}

/// The conjunction of `fs` (the formula itself when there is one).
fn conj(mut fs: Vec<F>) -> F {
    if fs.len() == 1 {
        fs.remove(0)
    } else {
        F::And(fs)
    }
}

/// Appends `f` to `out` unless an identical condition is already there.
fn push_new(out: &mut Vec<F>, f: F) {
    let key = format!("{f:?}");
    if !out.iter().any(|g| format!("{g:?}") == key) {
        out.push(f);
    }
}

/// Whether the formula `f` mentions the variable `v` (free or bound).
fn mentions_f(f: &F, v: &str) -> bool {
    match f {
        F::Cmp(_, a, b) => mentions(a, v) || mentions(b, v),
        F::And(fs) | F::Or(fs) => fs.iter().any(|g| mentions_f(g, v)),
        F::All(x, _, _, b) | F::Ex(x, _, _, b) => x == v || mentions_f(b, v),
        F::Dom(b) => mentions_f(b, v),
    }
}

/// The domain conditions of the partial operations in `t`, innermost first: a
/// condition under a `sum` holds for every index of its range (`forall v, lo <= v
/// <= hi -> …`; one that does not mention the index is stated once, the range
/// being non-empty).
fn domain(t: &T, out: &mut Vec<F>) {
    match t {
        T::Lit(_) | T::Var(_) | T::Pi | T::Data(_) => {}
        // the band operations' own domain (exact integers in range) is checked by
        // Coq's `evalq` itself: outside it nothing is decided
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().for_each(|u| domain(u, out)),
        T::Sub(a, b) | T::Min(a, b) | T::Max(a, b) => {
            domain(a, out);
            domain(b, out);
        }
        T::Div(a, b) => {
            domain(a, out);
            domain(b, out);
            if let Some(c) = domain_condition(Cmp::Ne, b) {
                push_new(out, c);
            }
        }
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) => domain(a, out),
        T::Fun(f, a) => {
            domain(a, out);
            let c = match f {
                Elem::Ln => domain_condition(Cmp::Lt, a),
                Elem::Sqrt => domain_condition(Cmp::Le, a),
                Elem::Exp | Elem::Sin | Elem::Cos => None,
            };
            if let Some(c) = c {
                push_new(out, c);
            }
        }
        T::Pow(a, n) => {
            domain(a, out);
            if *n < 0 {
                if let Some(c) = domain_condition(Cmp::Ne, a) {
                    push_new(out, c);
                }
            }
        }
        T::Sum(v, lo, hi, b) => {
            let mut inner = Vec::new();
            domain(b, &mut inner);
            let (bound, free): (Vec<F>, Vec<F>) = inner.into_iter().partition(|c| mentions_f(c, v));
            for c in free {
                push_new(out, c);
            }
            if !bound.is_empty() {
                push_new(
                    out,
                    F::Dom(Box::new(F::All(v.clone(), *lo, *hi, Box::new(conj(bound))))),
                );
            }
        }
    }
}

/// `f` with the domain conditions of its partial operations stated (issue #23):
/// the kernel gives a comparison on an undefined term no truth value, and `and`,
/// `not`, `forall` are three-valued over it (docs/certificate-format.md,
/// "Meaning"), while Coq's `ln`, `/`, `sqrt` are total (`ln 0 = 0`). In negation
/// normal form each comparison, negated or not, is true in the kernel's sense
/// exactly when both sides are defined and it holds, so each comparison is stated
/// with the conditions of both its sides. A condition is then moved outwards
/// through `/\`, `forall` and `exists` while that keeps the statement equivalent
/// (ranges are non-empty: a condition that does not mention a binder's variable
/// leaves it; one that does leaves a `forall` as `forall v, lo <= v <= hi -> …`
/// beside it, and stays inside an `exists`), never through `\/`. Conditions of
/// literals inside the domain (`ln 2`, `x / 16`) are left out, and identical ones
/// stated once.
pub(crate) fn with_domains(f: F) -> F {
    let (conds, body) = place(f);
    wrap(conds, body)
}

fn wrap(mut conds: Vec<F>, body: F) -> F {
    if conds.is_empty() {
        return body;
    }
    conds.push(body);
    F::And(conds)
}

/// (conditions moved out of `f`, `f` without them).
fn place(f: F) -> (Vec<F>, F) {
    match f {
        F::Cmp(c, a, b) => {
            let mut conds = Vec::new();
            domain(&a, &mut conds);
            domain(&b, &mut conds);
            (conds, F::Cmp(c, a, b))
        }
        F::And(fs) => {
            let mut conds = Vec::new();
            let mut bodies = Vec::new();
            for g in fs {
                let (cs, b) = place(g);
                cs.into_iter().for_each(|c| push_new(&mut conds, c));
                bodies.push(b);
            }
            (conds, F::And(bodies))
        }
        F::Or(fs) => (
            Vec::new(),
            F::Or(fs.into_iter().map(with_domains).collect()),
        ),
        F::All(v, lo, hi, b) => {
            let (cs, b) = place(*b);
            let (bound, mut free): (Vec<F>, Vec<F>) =
                cs.into_iter().partition(|c| mentions_f(c, &v));
            if !bound.is_empty() {
                push_new(
                    &mut free,
                    F::Dom(Box::new(F::All(v.clone(), lo, hi, Box::new(conj(bound))))),
                );
            }
            (free, F::All(v, lo, hi, Box::new(b)))
        }
        F::Ex(v, lo, hi, b) => {
            let (cs, b) = place(*b);
            let (bound, free): (Vec<F>, Vec<F>) = cs.into_iter().partition(|c| mentions_f(c, &v));
            (free, F::Ex(v, lo, hi, Box::new(wrap(bound, b))))
        }
        F::Dom(b) => (Vec::new(), F::Dom(b)),
    }
}

/// A domain condition `forall v, lo <= v <= hi -> C v` whose body is a
/// conjunction of inequalities or disequalities free of sums, ceilings, floors
/// and extrema: its proof first tries one `interval` per comparison with v
/// ranging over [lo, hi] ([`uniform_tac`]), before one goal per value.
fn uniform(f: &F) -> Option<(&str, i64, i64, &F)> {
    fn simple(f: &F) -> bool {
        match f {
            F::And(fs) => fs.iter().all(simple),
            F::Dom(b) => simple(b),
            F::Cmp(c, a, b) => *c != Cmp::Eq && !heavy(a) && !heavy(b),
            _ => false,
        }
    }
    match f {
        F::All(v, lo, hi, b) if simple(b) && !exact_f(f) => Some((v, *lo, *hi, b)),
        _ => None,
    }
}

/// The number of comparisons of a [`uniform`] body, and their terms.
fn uniform_load(f: &F) -> (u64, u64) {
    match f {
        F::And(fs) => fs.iter().map(uniform_load).fold((0, 0), |x, y| {
            (x.0.saturating_add(y.0), x.1.saturating_add(y.1))
        }),
        F::Dom(b) => uniform_load(b),
        F::Cmp(_, a, b) => (1, size(a) + size(b)),
        _ => (0, 0),
    }
}

/// The proof of a [`uniform`] body with its variable free and bounded (a
/// hypothesis IZR lo <= IZR v <= IZR hi in the context): `interval` for each
/// comparison, a disequality from either strict inequality.
fn uniform_tac(f: &F) -> String {
    match f {
        F::And(fs) => match fs.len() {
            0 => "exact I".into(),
            1 => uniform_tac(&fs[0]),
            _ => format!(
                "split; [ {} | {} ]",
                uniform_tac(&fs[0]),
                uniform_tac(&F::And(fs[1..].to_vec()))
            ),
        },
        F::Dom(b) => uniform_tac(b),
        F::Cmp(Cmp::Ne, _, _) => "first [ apply Rlt_not_eq; attn_prep; attn_interval | apply Rgt_not_eq; attn_prep; attn_interval ]".into(),
        _ => "attn_prep; attn_interval".into(),
    }
}

fn exact(t: &T) -> bool {
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) => true,
        T::Pi | T::Fun(..) => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().all(exact),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => exact(a) && exact(b),
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) => exact(a),
        T::Sum(_, _, _, b) => exact(b),
    }
}

fn exact_f(f: &F) -> bool {
    match f {
        F::Cmp(_, a, b) => exact(a) && exact(b),
        F::And(fs) | F::Or(fs) => fs.iter().all(exact_f),
        F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => exact_f(b),
    }
}

/// No variable bound by a binder outside `t` but inside the leaf (`open` lists
/// the binders of enclosing sums).
fn closed(t: &T, open: &mut Vec<String>) -> bool {
    match t {
        T::Var(v) => !open.contains(v),
        T::Lit(_) | T::Pi | T::Data(_) => true,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().all(|t| closed(t, open)),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            closed(a, open) && closed(b, open)
        }
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
            closed(a, open)
        }
        T::Sum(v, _, _, b) => {
            // the sum's own variable is bound inside: not a free variable of t
            let was = open.iter().position(|x| x == v);
            let saved = was.map(|i| open.remove(i));
            let r = closed(b, open);
            if let Some(s) = saved {
                open.push(s);
            }
            r
        }
    }
}

/// Contains a sum, a ceiling, a floor or an extremum (which `interval` does not
/// take, or takes slowly).
fn heavy(t: &T) -> bool {
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => false,
        T::Sum(..) | T::Ceil(_) | T::Floor(_) | T::Min(..) | T::Max(..) | T::Band(..) => true,
        T::Add(ts) | T::Mul(ts) => ts.iter().any(heavy),
        T::Sub(a, b) | T::Div(a, b) => heavy(a) || heavy(b),
        T::Neg(a) | T::Abs(a) | T::Pow(a, _) | T::Fun(_, a) => heavy(a),
    }
}

/// ⌈log₂ k⌉ for k ≥ 1 (0 for k ≤ 1): the least e with k ≤ 2^e.
fn log2_ceil(k: &Integer) -> u64 {
    if *k <= 1 {
        0
    } else {
        u64::from(Integer::from(k - 1u32).significant_bits())
    }
}

fn log2_ceil_u(k: u64) -> u64 {
    log2_ceil(&Integer::from(k))
}

/// Sizes of an exact value: |numerator| ≤ 2^p and denominator ≤ 2^c.
#[derive(Clone, Copy, Debug, Default)]
struct Mag {
    p: u64,
    c: u64,
}

impl Mag {
    fn of(q: &Rational) -> Mag {
        Mag {
            p: log2_ceil(&Integer::from(q.numer().abs_ref())),
            c: log2_ceil(q.denom()),
        }
    }
    /// Bits of the larger of numerator and denominator.
    fn bits(self) -> u64 {
        self.p.max(self.c).saturating_add(1)
    }
}

/// The cost model of numbers ([`MAX_COQ_NUMBER_BITS`]): an upper bound on the bits
/// of every exact number the formula writes or Coq builds from it, counting every
/// operand: a literal, a bound variable (by its range), a data operation (by its
/// value), and what +, −, ×, ÷, powers, ceilings and sums make of them
/// (|Σ pᵢ/qᵢ| has numerator at most Σᵢ |pᵢ| Π_{j≠i} qⱼ and denominator Π qⱼ). A
/// power also costs its exponent, whatever its base: Coq writes `x ^ n` with n
/// in unary (a `nat`).
struct Sizes<'a> {
    /// Sizes of the values of the data operations ([`Ops`]), `None` when the
    /// kernel does not evaluate one.
    data: &'a [Option<Mag>],
    /// The binders in scope: (name, size of the largest |value| of its range).
    vars: Vec<(String, Mag)>,
    /// The largest size met so far.
    worst: u64,
}

impl Sizes<'_> {
    fn see(&mut self, bits: u64) {
        self.worst = self.worst.max(bits);
    }

    fn bind(&mut self, v: &str, lo: i64, hi: i64) {
        let m = Integer::from(lo.unsigned_abs().max(hi.unsigned_abs()));
        self.vars.push((
            v.to_string(),
            Mag {
                p: log2_ceil(&m),
                c: 0,
            },
        ));
    }

    /// The size of `t`'s value when `t` is exact (`None` for a transcendental term,
    /// which `interval` evaluates in floating point), noting every size on the way.
    fn term(&mut self, t: &T) -> Option<Mag> {
        let m = match t {
            T::Lit(q) => Some(Mag::of(q)),
            T::Var(v) => Some(
                self.vars
                    .iter()
                    .rev()
                    .find(|(n, _)| n == v)
                    .map(|(_, m)| *m)
                    // not reached: every variable is bound
                    .unwrap_or(Mag { p: 64, c: 0 }),
            ),
            T::Data(i) => match self.data.get(*i).copied().flatten() {
                Some(m) => Some(m),
                None => {
                    // a data operation the kernel does not evaluate: no bound
                    self.see(u64::MAX);
                    None
                }
            },
            T::Pi => None,
            T::Fun(_, a) => {
                self.term(a);
                None
            }
            T::Band(_, ts) => {
                ts.iter().for_each(|u| {
                    self.term(u);
                });
                // a reach or a count of at most L ≤ 65536 tokens (the kernel's range)
                Some(Mag { p: 17, c: 0 })
            }
            T::Add(ts) => {
                let ms: Vec<Option<Mag>> = ts.iter().map(|u| self.term(u)).collect();
                let ms: Option<Vec<Mag>> = ms.into_iter().collect();
                ms.map(|ms| {
                    let c = ms.iter().fold(0u64, |a, m| a.saturating_add(m.c));
                    let p = ms
                        .iter()
                        .map(|m| m.p.saturating_add(c - m.c))
                        .max()
                        .unwrap_or(0)
                        .saturating_add(log2_ceil_u(ms.len() as u64));
                    Mag { p, c }
                })
            }
            T::Sub(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.zip(b).map(|(a, b)| Mag {
                    p: a.p
                        .saturating_add(b.c)
                        .max(b.p.saturating_add(a.c))
                        .saturating_add(1),
                    c: a.c.saturating_add(b.c),
                })
            }
            T::Mul(ts) => {
                let ms: Vec<Option<Mag>> = ts.iter().map(|u| self.term(u)).collect();
                let ms: Option<Vec<Mag>> = ms.into_iter().collect();
                ms.map(|ms| Mag {
                    p: ms.iter().fold(0u64, |a, m| a.saturating_add(m.p)),
                    c: ms.iter().fold(0u64, |a, m| a.saturating_add(m.c)),
                })
            }
            T::Div(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.zip(b).map(|(a, b)| Mag {
                    p: a.p.saturating_add(b.c),
                    c: a.c.saturating_add(b.p),
                })
            }
            T::Min(a, b) | T::Max(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.zip(b).map(|(a, b)| Mag {
                    p: a.p.max(b.p),
                    c: a.c.max(b.c),
                })
            }
            T::Neg(a) | T::Abs(a) => self.term(a),
            // |⌈x⌉|, |⌊x⌋| ≤ |x| + 1
            T::Ceil(a) | T::Floor(a) => self.term(a).map(|a| Mag {
                p: a.p.saturating_add(1),
                c: 0,
            }),
            T::Pow(a, n) => {
                let k = n.unsigned_abs();
                self.see(k);
                self.term(a).map(|a| {
                    let (p, c) = (a.p.saturating_mul(k), a.c.saturating_mul(k));
                    if *n >= 0 {
                        Mag { p, c }
                    } else {
                        Mag { p: c, c: p }
                    }
                })
            }
            T::Sum(v, lo, hi, b) => {
                self.bind(v, *lo, *hi);
                let body = self.term(b);
                self.vars.pop();
                let k = (i128::from(*hi) - i128::from(*lo) + 1).max(1) as u64;
                body.map(|m| Mag {
                    p: m.p
                        .saturating_add((k - 1).saturating_mul(m.c))
                        .saturating_add(log2_ceil_u(k)),
                    c: k.saturating_mul(m.c),
                })
            }
        };
        if let Some(m) = m {
            self.see(m.bits());
        }
        m
    }

    fn formula(&mut self, f: &F) {
        match f {
            F::Cmp(_, a, b) => {
                self.term(a);
                self.term(b);
            }
            F::And(fs) | F::Or(fs) => fs.iter().for_each(|g| self.formula(g)),
            F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
                self.bind(v, *lo, *hi);
                self.formula(b);
                self.vars.pop();
            }
            F::Dom(b) => self.formula(b),
        }
    }
}

/// [`Sizes`] of a formula: the bits of the largest exact number it writes or
/// builds (saturating).
fn number_bits_f(f: &F, data: &[Option<Mag>]) -> u64 {
    let mut s = Sizes {
        data,
        vars: Vec::new(),
        worst: 0,
    };
    s.formula(f);
    s.worst
}

/// Number of terms after unrolling sums (a sum put in closed form by
/// [`geometric`] counts as its closed form).
fn size(t: &T) -> u64 {
    size_in(t, &mut Vec::new())
}

/// [`size`], with `open` the binders of the enclosing sums.
fn size_in(t: &T, open: &mut Vec<String>) -> u64 {
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => 1,
        T::Add(ts) | T::Mul(ts) => 1 + ts.iter().map(|u| size_in(u, open)).sum::<u64>(),
        // the work of the scan itself is counted by [`bands_f`], which knows the ranges
        T::Band(_, ts) => 1 + ts.iter().map(|u| size_in(u, open)).sum::<u64>(),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            1 + size_in(a, open) + size_in(b, open)
        }
        T::Neg(a) | T::Abs(a) | T::Pow(a, _) | T::Fun(_, a) | T::Ceil(a) | T::Floor(a) => {
            1 + size_in(a, open)
        }
        T::Sum(..) if ln_sum(t).is_some() => {
            let (lo, hi, k) = ln_sum(t).unwrap_or_default();
            16 + 2 * ((hi - lo) / k + 1) as u64
        }
        // the statement's interval sees one variable per chunk
        T::Sum(..) if ln_sum_chunked(t).is_some() => {
            let (lo, hi, k) = ln_sum_chunked(t).unwrap_or_default();
            16 + 2 * ln_chunks(lo, hi, k).len() as u64
        }
        T::Sum(v, lo, hi, b) => match geometric(t) {
            Some(g) if closed(t, &mut open.clone()) => 16 + 4 * size(&g.c),
            _ => {
                open.push(v.clone());
                let n = size_in(b, open);
                open.pop();
                1 + (hi - lo + 1).max(0) as u64 * n
            }
        },
    }
}

/// A sum that `sumZ_exp_lin` or `sumZ_lin_exp_lin` (coq/Attncheck.v) puts in
/// closed form: Σ_{k=lo}^{hi} e^{c·k} or Σ_{k=lo}^{hi} k·e^{c·k} (k·e or e·k),
/// with c free of k and of sums, ceilings and extrema, and lo ≤ hi + 1. The
/// exponent may be any product, quotient, sum or negation that is c·k by the
/// laws of a field (Coq proves that it is, with `ring` or `field`).
pub(crate) struct Geometric {
    /// Σ k·e^{c·k} rather than Σ e^{c·k}.
    pub weighted: bool,
    /// The body is e^{c·k}·k (rather than k·e^{c·k}).
    pub exp_first: bool,
    /// The ratio's exponent c.
    pub c: T,
}

pub(crate) fn geometric(t: &T) -> Option<Geometric> {
    let T::Sum(v, lo, hi, body) = t else {
        return None;
    };
    if *lo > hi.saturating_add(1) {
        return None;
    }
    let is_v = |u: &T| matches!(u, T::Var(x) if x == v);
    let exp_arg = |u: &T| match u {
        T::Fun(Elem::Exp, a) => Some((**a).clone()),
        _ => None,
    };
    let (weighted, exp_first, arg) = match &**body {
        T::Mul(ts) if ts.len() == 2 && is_v(&ts[0]) => (true, false, exp_arg(&ts[1])?),
        T::Mul(ts) if ts.len() == 2 && is_v(&ts[1]) => (true, true, exp_arg(&ts[0])?),
        u => (false, false, exp_arg(u)?),
    };
    let c = linear_coefficient(&arg, v)?;
    if heavy(&c) || mentions(&c, v) {
        return None;
    }
    Some(Geometric {
        weighted,
        exp_first,
        c,
    })
}

/// Terms above which a sum Σ ln i is summed by blocks ([`ln_sum`]); shorter
/// ones are unrolled as before.
const LN_BLOCKS_ABOVE: i64 = 4_096;
/// Bits of each block's product in [`ln_sum`].
const LN_BLOCK_BITS: u32 = 256;
/// Blocks above which a sum of logarithms stays kernel-only: `interval`'s time
/// grows faster than the number of terms (measured, coqc 8.16 with
/// CoqInterval 4.6: 264 blocks for ln 5000! take seconds; the 4369 of
/// ln 65536! took more than 5 minutes at 53 bits without finishing).
const MAX_LN_BLOCKS: i64 = 1_024;
/// Blocks per chunk when a sum of logarithms has more than [`MAX_LN_BLOCKS`]:
/// each chunk is enclosed by its own `interval_intro` (about 5 s for 100 blocks)
/// and the statement is then proven from the chunks' enclosures, so the time
/// grows linearly (measured: ln 20000!, 1176 blocks in 12 chunks, 106 s).
const LN_CHUNK_BLOCKS: i64 = 100;
/// Blocks above which a sum of logarithms stays kernel-only even in chunks.
const MAX_LN_CHUNKED_BLOCKS: i64 = 8_192;

/// The largest number of blocks of a long sum of logarithms in `f` that is
/// over [`MAX_LN_CHUNKED_BLOCKS`], as (lo, hi, blocks).
fn ln_sum_over_budget(f: &F) -> Option<(i64, i64, i64)> {
    fn term(t: &T, worst: &mut Option<(i64, i64, i64)>) {
        if let Some((lo, hi, k)) = ln_sum_blocks(t) {
            let b = (hi - lo) / k + 1;
            if b > MAX_LN_CHUNKED_BLOCKS && worst.is_none_or(|w| w.2 < b) {
                *worst = Some((lo, hi, b));
            }
        }
        match t {
            T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => {}
            T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().for_each(|u| term(u, worst)),
            T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
                term(a, worst);
                term(b, worst);
            }
            T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
                term(a, worst)
            }
            T::Sum(_, _, _, b) => term(b, worst),
        }
    }
    fn form(f: &F, worst: &mut Option<(i64, i64, i64)>) {
        match f {
            F::Cmp(_, a, b) => {
                term(a, worst);
                term(b, worst);
            }
            F::And(fs) | F::Or(fs) => fs.iter().for_each(|g| form(g, worst)),
            F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => form(b, worst),
        }
    }
    let mut worst = None;
    form(f, &mut worst);
    worst
}

/// A long sum Σ_{i=lo}^{hi} ln i (1 ≤ lo ≤ hi, more than [`LN_BLOCKS_ABOVE`]
/// terms), as (lo, hi, k): `sumZ_ln_blocks` (coq/Attncheck.v) rewrites it as
/// the sum of ln of the products of k consecutive integers (each below
/// 2^LN_BLOCK_BITS), which Coq computes itself (`unroll_sums` evaluates
/// `ln_blocks` with `vm_compute`), so that `interval` sees
/// (hi − lo)/k + 1 logarithms instead of hi − lo + 1 (ln 65536!: 65535 terms
/// overflow Coq's stack).
fn ln_sum(t: &T) -> Option<(i64, i64, i64)> {
    ln_sum_blocks(t).filter(|&(lo, hi, k)| (hi - lo) / k < MAX_LN_BLOCKS)
}

/// A sum of logarithms of more than [`MAX_LN_BLOCKS`] blocks (and at most
/// [`MAX_LN_CHUNKED_BLOCKS`]), summed by chunks of [`LN_CHUNK_BLOCKS`] blocks:
/// (lo, hi, k).
fn ln_sum_chunked(t: &T) -> Option<(i64, i64, i64)> {
    ln_sum_blocks(t).filter(|&(lo, hi, k)| {
        let b = (hi - lo) / k + 1;
        b > MAX_LN_BLOCKS && b <= MAX_LN_CHUNKED_BLOCKS
    })
}

/// The chunks (a, b) of [`ln_sum_chunked`]'s range lo..hi.
fn ln_chunks(lo: i64, hi: i64, k: i64) -> Vec<(i64, i64)> {
    let step = k * LN_CHUNK_BLOCKS;
    let mut out = Vec::new();
    let mut a = lo;
    while a <= hi {
        let b = hi.min(a + step - 1);
        out.push((a, b));
        a = b + 1;
    }
    out
}

/// [`ln_sum`] whatever its number of blocks, (hi − lo)/k + 1.
fn ln_sum_blocks(t: &T) -> Option<(i64, i64, i64)> {
    let T::Sum(v, lo, hi, body) = t else {
        return None;
    };
    let T::Fun(Elem::Ln, a) = &**body else {
        return None;
    };
    if !matches!(&**a, T::Var(x) if x == v) || *lo < 1 || hi.checked_sub(*lo)? < LN_BLOCKS_ABOVE {
        return None;
    }
    let bits = 64 - hi.unsigned_abs().leading_zeros();
    Some((*lo, *hi, i64::from((LN_BLOCK_BITS / bits).max(1))))
}

/// Whether `t` mentions the variable `v` (free or bound).
fn mentions(t: &T, v: &str) -> bool {
    match t {
        T::Var(x) => x == v,
        T::Lit(_) | T::Pi | T::Data(_) => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().any(|u| mentions(u, v)),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            mentions(a, v) || mentions(b, v)
        }
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
            mentions(a, v)
        }
        T::Sum(x, _, _, b) => x == v || mentions(b, v),
    }
}

/// c with `t` = c·v as a ring identity, when `t` is built from v by products
/// and quotients with terms free of v, negation, sums and differences.
fn linear_coefficient(t: &T, v: &str) -> Option<T> {
    match t {
        T::Var(x) if x == v => Some(T::Lit(Rational::from(1))),
        T::Neg(a) => Some(T::Neg(Box::new(linear_coefficient(a, v)?))),
        T::Mul(ts) => {
            let mut with_v = ts.iter().enumerate().filter(|(_, u)| mentions(u, v));
            let (i, _) = with_v.next()?;
            if with_v.next().is_some() {
                return None;
            }
            let ci = linear_coefficient(&ts[i], v)?;
            let mut cs: Vec<T> = ts.clone();
            if matches!(&ci, T::Lit(q) if *q == 1) && ts.len() > 1 {
                cs.remove(i);
            } else {
                cs[i] = ci;
            }
            Some(if cs.len() == 1 {
                cs.remove(0)
            } else {
                T::Mul(cs)
            })
        }
        T::Div(a, b) if !mentions(b, v) => {
            Some(T::Div(Box::new(linear_coefficient(a, v)?), b.clone()))
        }
        T::Add(ts) => Some(T::Add(
            ts.iter()
                .map(|u| linear_coefficient(u, v))
                .collect::<Option<Vec<_>>>()?,
        )),
        T::Sub(a, b) => Some(T::Sub(
            Box::new(linear_coefficient(a, v)?),
            Box::new(linear_coefficient(b, v)?),
        )),
        _ => None,
    }
}

/// What the band terms of `f` ask of Coq: whether there is one, and the work of its
/// band scans, added to [`size_f`] for the exact budget.
struct Bands {
    /// A band term occurs in `f`.
    present: bool,
    /// `band_op` (coq/Attncheck.v) takes L steps per layer for l layers, and each value
    /// of an enclosing `forall` or `sum` evaluates it again: Σ over band terms of
    /// (evaluations) · L_max · (l_max + 1), with L and l bounded over the binders'
    /// ranges by [`int_range`].
    work: u64,
}

/// The band terms of `f` ([`Bands`]), after checking that every one stays inside the
/// kernel's range at every value of the binders around it (1 ≤ L ≤ 65536, d ≥ 0,
/// 1 ≤ l ≤ 256, l·L·min(d + 1, L) ≤ 2³²; `expr`'s `band-reach`), from integer ranges of
/// its arguments ([`int_range`]). The kernel checks this only when it evaluates the
/// term, so a formula it would reject at some value is kept from Coq (`Err`, with the
/// reason); one whose arguments have no integer range (a quotient, a power) is kept too.
/// One walk does both, so the work is always counted over the ranges that were checked.
fn bands_f(f: &F) -> Result<Bands, String> {
    type Vars = Vec<(String, (i128, i128))>;
    fn term(t: &T, vars: &mut Vars, times: u64, b: &mut Bands) -> Result<(), String> {
        match t {
            T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => Ok(()),
            T::Band(_, ts) => {
                ts.iter().try_for_each(|u| term(u, vars, times, b))?;
                let r: Vec<Option<(i128, i128)>> = ts.iter().map(|u| int_range(u, vars)).collect();
                let (Some(len), Some(d), Some(l)) = (r[0], r[1], r[2]) else {
                    return Err("a band term's argument has no integer range the translator can bound (the kernel rejects a non-integer argument when it evaluates it)".into());
                };
                let inside = 1 <= len.0 && len.1 <= 65_536 && 0 <= d.0 && 1 <= l.0 && l.1 <= 256;
                if !inside || l.1 * len.1 * (d.1 + 1).min(len.1) > 1 << 32 {
                    return Err(format!(
                        "a band term's arguments may leave the kernel's range (L in {}..{}, d in {}..{}, l in {}..{}): the kernel rejects the formula when it evaluates it there",
                        len.0, len.1, d.0, d.1, l.0, l.1
                    ));
                }
                // inside the range: 1 ≤ L ≤ 65536 and 1 ≤ l ≤ 256, so these fit
                let one = (len.1 as u64).saturating_mul(l.1 as u64 + 1);
                b.present = true;
                b.work = b.work.saturating_add(times.saturating_mul(one));
                Ok(())
            }
            T::Add(ts) | T::Mul(ts) => ts.iter().try_for_each(|u| term(u, vars, times, b)),
            T::Sub(x, y) | T::Div(x, y) | T::Min(x, y) | T::Max(x, y) => {
                term(x, vars, times, b)?;
                term(y, vars, times, b)
            }
            T::Neg(x) | T::Abs(x) | T::Ceil(x) | T::Floor(x) | T::Pow(x, _) | T::Fun(_, x) => {
                term(x, vars, times, b)
            }
            T::Sum(v, lo, hi, body) => {
                vars.push((v.clone(), (i128::from(*lo), i128::from(*hi))));
                let r = term(body, vars, times.saturating_mul(range_len(*lo, *hi)), b);
                vars.pop();
                r
            }
        }
    }
    fn form(f: &F, vars: &mut Vars, times: u64, b: &mut Bands) -> Result<(), String> {
        match f {
            F::Cmp(_, x, y) => {
                term(x, vars, times, b)?;
                term(y, vars, times, b)
            }
            F::And(fs) | F::Or(fs) => fs.iter().try_for_each(|g| form(g, vars, times, b)),
            F::All(v, lo, hi, body) | F::Ex(v, lo, hi, body) => {
                vars.push((v.clone(), (i128::from(*lo), i128::from(*hi))));
                let r = form(body, vars, times.saturating_mul(range_len(*lo, *hi)), b);
                vars.pop();
                r
            }
            F::Dom(body) => form(body, vars, times, b),
        }
    }
    fn range_len(lo: i64, hi: i64) -> u64 {
        (i128::from(hi) - i128::from(lo) + 1).clamp(0, i128::from(u64::MAX)) as u64
    }
    let mut b = Bands {
        present: false,
        work: 0,
    };
    form(f, &mut Vec::new(), 1, &mut b)?;
    Ok(b)
}

/// The range [lo, hi] of an integer-valued term built from integer literals,
/// bound variables (`vars`: their ranges), +, −, × and negation; `None` for
/// anything else, or when a bound leaves ±2⁶³.
fn int_range(t: &T, vars: &[(String, (i128, i128))]) -> Option<(i128, i128)> {
    const CAP: i128 = 1 << 63;
    let r = match t {
        T::Lit(q) if *q.denom() == 1 => {
            let z = q.numer().to_i64()?;
            (i128::from(z), i128::from(z))
        }
        T::Var(v) => vars.iter().rev().find(|(n, _)| n == v)?.1,
        T::Add(ts) => ts.iter().try_fold((0i128, 0i128), |a, u| {
            let b = int_range(u, vars)?;
            Some((a.0 + b.0, a.1 + b.1))
        })?,
        T::Sub(a, b) => {
            let (a, b) = (int_range(a, vars)?, int_range(b, vars)?);
            (a.0 - b.1, a.1 - b.0)
        }
        T::Neg(a) => {
            let a = int_range(a, vars)?;
            (-a.1, -a.0)
        }
        T::Mul(ts) => ts.iter().try_fold((1i128, 1i128), |a, u| {
            let b = int_range(u, vars)?;
            let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
            Some((*p.iter().min()?, *p.iter().max()?))
        })?,
        _ => return None,
    };
    (r.0 >= -CAP && r.1 <= CAP).then_some(r)
}

fn size_f(f: &F) -> u64 {
    match f {
        F::Cmp(_, a, b) => size(a) + size(b),
        F::And(fs) | F::Or(fs) => fs.iter().map(size_f).sum(),
        F::All(_, lo, hi, b) | F::Ex(_, lo, hi, b) => (hi - lo + 1).max(0) as u64 * size_f(b),
        F::Dom(b) => size_f(b),
    }
}

/// (interval goals, terms given to interval) of the tactic tree, or `None` if
/// exact (decided by computation).
fn interval_load(f: &F) -> (u64, u64) {
    if exact_f(f) {
        return (0, 0);
    }
    match f {
        F::Cmp(_, a, b) => (1, size(a) + size(b)),
        F::And(fs) => fs.iter().map(interval_load).fold((0, 0), |x, y| {
            (x.0.saturating_add(y.0), x.1.saturating_add(y.1))
        }),
        F::Or(fs) => fs.iter().map(interval_load).min().unwrap_or((0, 0)),
        F::All(_, lo, hi, b) => {
            let n = (hi - lo + 1).max(0) as u64;
            let (g, t) = interval_load(b);
            (n.saturating_mul(g), n.saturating_mul(t))
        }
        F::Ex(_, _, _, b) => interval_load(b),
        // counted as the uniform proof: its fallback, one goal per value, is for a
        // condition that `interval` does not bound over the whole range
        F::Dom(b) => match uniform(b) {
            Some((_, _, _, body)) => uniform_load(body),
            None => interval_load(b),
        },
    }
}

// ---------------------------------------------------------------- rendering

/// Values of bound variables fixed by unrolling (`Some(k)`) or still bound (`None`).
type Ctx = Vec<(String, Option<i64>)>;

fn lookup(ctx: &Ctx, v: &str) -> Option<Option<i64>> {
    ctx.iter().rev().find(|(n, _)| n == v).map(|(_, k)| *k)
}

/// Bits above which an integer is written in hexadecimal: Coq parses a decimal
/// numeral in time quadratic in its length (measured: 1024!, 2640 digits, 12.5 s;
/// in hexadecimal 0.4 s), and small numbers stay decimal so that people can read
/// them.
const HEX_ABOVE_BITS: u32 = 64;

/// An integer numeral (decimal, or `0x…` above [`HEX_ABOVE_BITS`]), valid in
/// Coq's Z, positive, Q and R scopes.
fn num(k: &Integer) -> String {
    if k.significant_bits() <= HEX_ABOVE_BITS {
        k.to_string()
    } else if *k < 0 {
        format!(
            "-0x{}",
            Integer::from(-k).to_string_radix(16).to_uppercase()
        )
    } else {
        format!("0x{}", k.to_string_radix(16).to_uppercase())
    }
}

/// Hexadecimal digits above which [`hoist_big`] names a literal.
const HOIST_ABOVE_DIGITS: usize = 1_024;

/// Names each integer literal of more than [`HOIST_ABOVE_DIGITS`] hex digits
/// (4096 bits) in `text`: `Definition big_<k>_<j> : Z := 0x…` (pushed on
/// `defs`, one per distinct literal) and `IZR big_<k>_<j>` in its place (the
/// name itself where the literal is an integer: `…%Z`, a Q numerator), so
/// that Coq parses and type-checks a number of 10⁶ bits once, not once per
/// occurrence (measured on ⌈log₂ 65536!⌉: 196 s and 10 GB with the literal
/// written four times, 66 s and 4.5 GB named once). A literal in another place
/// (a `positive` denominator) stays as written.
fn hoist_big(text: &str, k: usize, defs: &mut Vec<(String, String)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        let digits = rest[at + 2..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        let end = at + 2 + digits;
        out.push_str(&rest[..at]);
        let lit = &rest[at..end];
        let after = &rest[end..];
        let z_place =
            after.starts_with("%Z") || after.starts_with(")%Z") || after.starts_with(" #");
        let r_place = !z_place && !after.starts_with("%positive") && !after.starts_with(")%Q");
        if digits > HOIST_ABOVE_DIGITS && (z_place || r_place) {
            let name = match defs.iter().find(|(_, l)| l == lit) {
                Some((n, _)) => n.clone(),
                None => {
                    let n = format!("big_{k}_{}", defs.len() + 1);
                    defs.push((n.clone(), lit.to_string()));
                    n
                }
            };
            if z_place {
                out.push_str(&name);
            } else {
                let _ = write!(out, "(IZR {name})");
            }
        } else {
            out.push_str(lit);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

fn z(k: &Integer) -> String {
    if *k < 0 {
        format!("({})", num(k))
    } else {
        num(k)
    }
}

fn zi(k: i64) -> String {
    z(&Integer::from(k))
}

/// A rational literal in R syntax.
fn q_coq(q: &Rational) -> String {
    if *q.denom() == 1 {
        z(q.numer())
    } else {
        format!("({} / {})", z(q.numer()), num(q.denom()))
    }
}

fn q_kernel(q: &Rational) -> String {
    q.to_string()
}

/// Statement-mode (`stmt`) data operations print as the operation; proof-mode
/// ones as the value constant they were rewritten to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Stmt,
    Proof,
}

struct Render<'a> {
    ops: &'a [Op],
    /// Replaced subterms (by address) → their Coq text.
    repl: HashMap<usize, String>,
}

fn addr(t: &T) -> usize {
    t as *const T as usize
}

impl Render<'_> {
    fn op(&self, i: usize, mode: Mode) -> String {
        let o = &self.ops[i];
        let inner = match mode {
            Mode::Stmt => format!("({})", o.coq),
            Mode::Proof => format!("val_{}", i + 1),
        };
        if o.int {
            format!("(IZR {inner})")
        } else {
            format!("(Q2R {inner})")
        }
    }

    fn term(&self, t: &T, ctx: &mut Ctx, mode: Mode) -> String {
        if let Some(r) = self.repl.get(&addr(t)) {
            return r.clone();
        }
        let join = |s: &Self, ts: &[T], sep: &str, ctx: &mut Ctx| -> String {
            let parts: Vec<String> = ts.iter().map(|t| s.term(t, ctx, mode)).collect();
            if parts.len() == 1 {
                parts[0].clone()
            } else {
                format!("({})", parts.join(sep))
            }
        };
        match t {
            T::Lit(q) => q_coq(q),
            T::Var(v) => match lookup(ctx, v) {
                Some(Some(k)) => format!("(IZR {})", zi(k)),
                _ => format!("(IZR {v})"),
            },
            T::Pi => "PI".into(),
            T::Add(ts) => join(self, ts, " + ", ctx),
            T::Mul(ts) => join(self, ts, " * ", ctx),
            T::Sub(a, b) => format!(
                "({} - {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Div(a, b) => format!(
                "({} / {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Neg(a) => format!("(- {})", self.term(a, ctx, mode)),
            T::Fun(f, a) => format!("({} {})", f.coq(), self.term(a, ctx, mode)),
            T::Pow(a, n) => {
                if *n >= 0 {
                    format!("({} ^ {n})", self.term(a, ctx, mode))
                } else {
                    format!("(/ {} ^ {})", self.term(a, ctx, mode), n.unsigned_abs())
                }
            }
            T::Abs(a) => format!("(Rabs {})", self.term(a, ctx, mode)),
            T::Min(a, b) => format!(
                "(Rmin {} {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Max(a, b) => format!(
                "(Rmax {} {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Ceil(a) => format!("(Rceil {})", self.term(a, ctx, mode)),
            T::Floor(a) => format!("(Rfloor {})", self.term(a, ctx, mode)),
            T::Sum(v, lo, hi, b) => {
                ctx.push((v.clone(), None));
                let body = self.term(b, ctx, mode);
                ctx.pop();
                format!("(sumZ {} {} (fun {} => {}))", zi(*lo), zi(*hi), v, body)
            }
            T::Data(i) => self.op(*i, mode),
            T::Band(count, ts) => {
                let args: Vec<String> = ts
                    .iter()
                    .map(|u| format!("(Zfloor {})", self.term(u, ctx, mode)))
                    .collect();
                format!("(IZR (band_op {count} {}))", args.join(" "))
            }
        }
    }

    fn formula(&self, f: &F, ctx: &mut Ctx, mode: Mode) -> String {
        match f {
            F::Cmp(c, a, b) => format!(
                "{} {} {}",
                self.term(a, ctx, mode),
                c.coq(),
                self.term(b, ctx, mode)
            ),
            F::And(fs) | F::Or(fs) => {
                let sep = if matches!(f, F::And(_)) {
                    " /\\ "
                } else {
                    " \\/ "
                };
                match fs.len() {
                    0 => if matches!(f, F::And(_)) {
                        "True"
                    } else {
                        "False"
                    }
                    .into(),
                    1 => self.formula(&fs[0], ctx, mode),
                    _ => {
                        let parts: Vec<String> = fs
                            .iter()
                            .map(|g| format!("({})", self.formula(g, ctx, mode)))
                            .collect();
                        parts.join(sep)
                    }
                }
            }
            F::Dom(b) => self.formula(b, ctx, mode),
            F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
                ctx.push((v.clone(), None));
                let body = self.formula(b, ctx, mode);
                ctx.pop();
                let x = v;
                if matches!(f, F::All(..)) {
                    format!(
                        "forall {x} : Z, ({} <= {x} <= {})%Z -> {body}",
                        zi(*lo),
                        zi(*hi)
                    )
                } else {
                    format!(
                        "exists {x} : Z, ({} <= {x} <= {})%Z /\\ {body}",
                        zi(*lo),
                        zi(*hi)
                    )
                }
            }
        }
    }
}

/// The reflected term (`Attncheck.term`); binders as de Bruijn indices, fixed
/// variables and replaced subterms as literals.
fn ast_term(t: &T, ctx: &mut Ctx, lits: &HashMap<usize, Rational>, ops: &[Op]) -> String {
    if let Some(q) = lits.get(&addr(t)) {
        return ast_lit(q);
    }
    let fold = |name: &str, ts: &[T], ctx: &mut Ctx| -> String {
        let mut acc = ast_term(&ts[0], ctx, lits, ops);
        for t in &ts[1..] {
            acc = format!("({name} {acc} {})", ast_term(t, ctx, lits, ops));
        }
        acc
    };
    let two = |name: &str, a: &T, b: &T, ctx: &mut Ctx| {
        format!(
            "({name} {} {})",
            ast_term(a, ctx, lits, ops),
            ast_term(b, ctx, lits, ops)
        )
    };
    match t {
        T::Lit(q) => ast_lit(q),
        T::Var(v) => {
            // de Bruijn index among the still-bound variables
            let mut idx = 0;
            for (n, k) in ctx.iter().rev() {
                if n == v {
                    return match k {
                        Some(k) => format!("(TInt {}%Z)", zi(*k)),
                        None => format!("(TVar {idx})"),
                    };
                }
                if k.is_none() {
                    idx += 1;
                }
            }
            format!("(TVar {idx})")
        }
        T::Pi | T::Fun(..) => unreachable!("not exact"),
        T::Add(ts) => fold("TAdd", ts, ctx),
        T::Mul(ts) => fold("TMul", ts, ctx),
        T::Sub(a, b) => two("TSub", a, b, ctx),
        T::Div(a, b) => two("TDiv", a, b, ctx),
        T::Min(a, b) => two("TMin", a, b, ctx),
        T::Max(a, b) => two("TMax", a, b, ctx),
        T::Neg(a) => format!("(TNeg {})", ast_term(a, ctx, lits, ops)),
        T::Abs(a) => format!("(TAbs {})", ast_term(a, ctx, lits, ops)),
        T::Ceil(a) => format!("(TCeil {})", ast_term(a, ctx, lits, ops)),
        T::Floor(a) => format!("(TFloor {})", ast_term(a, ctx, lits, ops)),
        T::Pow(a, n) => format!("(TPow {} {}%Z)", ast_term(a, ctx, lits, ops), zi(*n)),
        T::Sum(v, lo, hi, b) => {
            ctx.push((v.clone(), None));
            let body = ast_term(b, ctx, lits, ops);
            ctx.pop();
            format!("(TSum {}%Z {}%Z {body})", zi(*lo), zi(*hi))
        }
        T::Data(i) => format!("({} val_{})", if ops[*i].int { "TZ" } else { "TQ" }, i + 1),
        T::Band(count, ts) => {
            let args: Vec<String> = ts.iter().map(|u| ast_term(u, ctx, lits, ops)).collect();
            format!("(TBand {count} {})", args.join(" "))
        }
    }
}

fn ast_lit(q: &Rational) -> String {
    if *q.denom() == 1 {
        format!("(TInt {}%Z)", z(q.numer()))
    } else {
        format!("(TFrac {}%Z {}%positive)", z(q.numer()), num(q.denom()))
    }
}

fn ast_form(f: &F, ctx: &mut Ctx, lits: &HashMap<usize, Rational>, ops: &[Op]) -> String {
    match f {
        F::Cmp(c, a, b) => format!(
            "({} {} {})",
            c.ast(),
            ast_term(a, ctx, lits, ops),
            ast_term(b, ctx, lits, ops)
        ),
        F::And(fs) | F::Or(fs) => {
            let (name, unit) = if matches!(f, F::And(_)) {
                ("FAnd", "FTrue")
            } else {
                ("FOr", "(FNe (TInt 0) (TInt 0))")
            };
            match fs.len() {
                0 => unit.into(),
                _ => {
                    let mut acc = ast_form(&fs[fs.len() - 1], ctx, lits, ops);
                    for g in fs[..fs.len() - 1].iter().rev() {
                        acc = format!("({name} {} {acc})", ast_form(g, ctx, lits, ops));
                    }
                    acc
                }
            }
        }
        F::Dom(b) => ast_form(b, ctx, lits, ops),
        F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
            ctx.push((v.clone(), None));
            let body = ast_form(b, ctx, lits, ops);
            ctx.pop();
            let name = if matches!(f, F::All(..)) {
                "FAll"
            } else {
                "FEx"
            };
            format!("({name} {}%Z {}%Z {body})", zi(*lo), zi(*hi))
        }
    }
}

/// Kernel S-expression text of a term, with fixed variables substituted.
fn kernel_term(t: &T, ctx: &[(String, Option<i64>)], ops: &[Op]) -> String {
    let k = |t: &T| kernel_term(t, ctx, ops);
    let many = |name: &str, ts: &[T]| {
        let parts: Vec<String> = ts.iter().map(|t| kernel_term(t, ctx, ops)).collect();
        format!("({name} {})", parts.join(" "))
    };
    match t {
        T::Lit(q) => q_kernel(q),
        T::Var(v) => match ctx.iter().rev().find(|(n, _)| n == v) {
            Some((_, Some(x))) => x.to_string(),
            _ => v.clone(),
        },
        T::Pi => "pi".into(),
        T::Add(ts) => many("+", ts),
        T::Mul(ts) => many("*", ts),
        T::Sub(a, b) => format!("(- {} {})", k(a), k(b)),
        T::Div(a, b) => format!("(/ {} {})", k(a), k(b)),
        T::Min(a, b) => format!("(min {} {})", k(a), k(b)),
        T::Max(a, b) => format!("(max {} {})", k(a), k(b)),
        T::Neg(a) => format!("(neg {})", k(a)),
        T::Abs(a) => format!("(abs {})", k(a)),
        T::Ceil(a) => format!("(ceil {})", k(a)),
        T::Floor(a) => format!("(floor {})", k(a)),
        T::Fun(f, a) => format!("({} {})", f.coq(), k(a)),
        T::Pow(a, n) => format!("(pow {} {n})", k(a)),
        T::Sum(v, lo, hi, b) => {
            let mut inner = ctx.to_vec();
            inner.push((v.clone(), None));
            format!("(sum {v} {lo} {hi} {})", kernel_term(b, &inner, ops))
        }
        T::Data(i) => ops[*i].key.clone(),
        T::Band(count, ts) => many(
            if *count {
                "band-reach-count"
            } else {
                "band-reach"
            },
            ts,
        ),
    }
}

fn kernel_formula(f: &F, ctx: &[(String, Option<i64>)], ops: &[Op]) -> String {
    match f {
        F::Cmp(Cmp::Ne, a, b) => format!(
            "(not (= {} {}))",
            kernel_term(a, ctx, ops),
            kernel_term(b, ctx, ops)
        ),
        F::Cmp(c, a, b) => format!(
            "({} {} {})",
            c.coq(),
            kernel_term(a, ctx, ops),
            kernel_term(b, ctx, ops)
        ),
        F::And(fs) => {
            let parts: Vec<String> = fs.iter().map(|g| kernel_formula(g, ctx, ops)).collect();
            format!("(and {})", parts.join(" "))
        }
        F::Or(fs) => {
            let parts: Vec<String> = fs
                .iter()
                .map(|g| format!("(not {})", kernel_formula(g, ctx, ops)))
                .collect();
            format!("(not (and {}))", parts.join(" "))
        }
        F::Dom(b) => kernel_formula(b, ctx, ops),
        F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
            let mut inner = ctx.to_vec();
            inner.push((v.clone(), None));
            let body = kernel_formula(b, &inner, ops);
            if matches!(f, F::All(..)) {
                format!("(forall {v} {lo} {hi} {body})")
            } else {
                format!("(not (forall {v} {lo} {hi} (not {body})))")
            }
        }
    }
}

// ---------------------------------------------------------------- proofs

struct Prover<'a> {
    ops: &'a [Op],
    data: &'a Data,
    prec: u32,
}

impl Prover<'_> {
    fn kernel_true(&self, f: &F, ctx: &Ctx) -> bool {
        expr::check_with(&kernel_formula(f, ctx, self.ops), self.prec, self.data)
            == Ok(Certainty::True)
    }

    fn kernel_value(&self, t: &T, ctx: &Ctx) -> Option<Rational> {
        expr::eval_exact(&kernel_term(t, ctx, self.ops), self.prec, self.data)
            .ok()
            .flatten()
    }

    /// The tactic proving `f` (a goal already in proof form: data operations
    /// rewritten to their values).
    fn tac(&self, f: &F, ctx: &mut Ctx) -> Result<String, String> {
        if exact_f(f) {
            return Ok(format!(
                "decide_exact {}",
                ast_form(f, ctx, &HashMap::new(), self.ops)
            ));
        }
        match f {
            F::And(fs) => match fs.len() {
                0 => Ok("exact I".into()),
                1 => self.tac(&fs[0], ctx),
                _ => {
                    let first = self.tac(&fs[0], ctx)?;
                    let rest = self.tac(&F::And(fs[1..].to_vec()), ctx)?;
                    Ok(format!("split; [ {first} | {rest} ]"))
                }
            },
            F::Or(fs) => {
                let i = (0..fs.len())
                    .find(|&i| self.kernel_true(&fs[i], ctx))
                    .ok_or("the kernel proves no disjunct")?;
                let t = self.tac(&fs[i], ctx)?;
                let mut s = String::new();
                for _ in 0..i {
                    s.push_str("right; ");
                }
                if i + 1 < fs.len() {
                    s.push_str("left; ");
                }
                Ok(format!("{s}({t})"))
            }
            F::All(v, lo, hi, b) => {
                if hi < lo {
                    // not reached: the reader takes only non-empty ranges
                    return Err(format!("range {lo}..{hi} is empty"));
                }
                let mut ts = Vec::new();
                for k in *lo..=*hi {
                    ctx.push((v.clone(), Some(k)));
                    let t = self.tac(b, ctx);
                    ctx.pop();
                    ts.push(t?);
                }
                if ts.iter().all(|t| *t == ts[0]) {
                    Ok(format!("unroll_forall; ({})", ts[0]))
                } else {
                    Ok(format!("unroll_forall; [ {} ]", ts.join(" | ")))
                }
            }
            F::Ex(v, lo, hi, b) => {
                let mut found = None;
                for k in *lo..=*hi {
                    ctx.push((v.clone(), Some(k)));
                    let ok = self.kernel_true(b, ctx);
                    ctx.pop();
                    if ok {
                        found = Some(k);
                        break;
                    }
                }
                let k = found.ok_or("the kernel finds no witness")?;
                ctx.push((v.clone(), Some(k)));
                let t = self.tac(b, ctx);
                ctx.pop();
                Ok(format!("exists {}%Z; split; [ lia | {} ]", zi(k), t?))
            }
            F::Cmp(c, a, b) => self.leaf(*c, a, b, ctx),
            F::Dom(b) => {
                let each = self.tac(b, ctx)?;
                Ok(match uniform(b) {
                    Some((v, lo, hi, body)) => format!(
                        "first [ (intros {v} H{v}; pose proof (conj (IZR_le _ _ (proj1 H{v})) (IZR_le _ _ (proj2 H{v}))) as R{v}; \
                         change (IZR {} <= IZR {v} <= IZR {}) in R{v}; {}) | ({each}) ]",
                        zi(lo),
                        zi(hi),
                        uniform_tac(body)
                    ),
                    None => each,
                })
            }
        }
    }

    /// Collects replacements in `t`, innermost first.
    fn collect(
        &self,
        t: &T,
        ctx: &mut Ctx,
        open: &mut Vec<String>,
        r: &mut Render,
        lits: &mut HashMap<usize, Rational>,
        steps: &mut Vec<String>,
    ) -> Result<(), String> {
        let is_closed = closed(t, &mut open.clone());
        if exact(t) && heavy(t) && is_closed {
            let q = self
                .kernel_value(t, ctx)
                .ok_or("the kernel does not evaluate an exact subterm")?;
            let text = r.term(t, ctx, Mode::Proof);
            let proof = format!(
                "decide_exact (FEq {} {})",
                ast_lit(&q),
                ast_term(t, ctx, lits, self.ops)
            );
            steps.push(format!("replace {text} with {} by ({proof})", q_coq(&q)));
            r.repl.insert(addr(t), q_coq(&q));
            lits.insert(addr(t), q);
            return Ok(());
        }
        match t {
            T::Lit(_) | T::Var(_) | T::Pi | T::Data(_) => Ok(()),
            T::Add(ts) | T::Mul(ts) => {
                for u in ts {
                    self.collect(u, ctx, open, r, lits, steps)?;
                }
                Ok(())
            }
            T::Sub(a, b) | T::Div(a, b) => {
                self.collect(a, ctx, open, r, lits, steps)?;
                self.collect(b, ctx, open, r, lits, steps)
            }
            T::Min(..) | T::Max(..) => {
                Err("min/max of non-rational terms has no Coq translation".into())
            }
            // not reached: `translate` keeps a band term beside a transcendental one kernel-only
            T::Band(..) => Err(
                "a band operation beside a transcendental term: `interval` cannot evaluate it"
                    .into(),
            ),
            T::Neg(a) | T::Abs(a) | T::Pow(a, _) | T::Fun(_, a) => {
                self.collect(a, ctx, open, r, lits, steps)
            }
            T::Ceil(a) | T::Floor(a) => {
                if !is_closed {
                    return Err(
                        "a ceiling or floor under a sum binder has no Coq translation".into(),
                    );
                }
                self.collect(a, ctx, open, r, lits, steps)?;
                let z = self
                    .kernel_value(t, ctx)
                    .filter(|q| *q.denom() == 1)
                    .ok_or("the kernel does not decide a ceiling or floor")?;
                let text = r.term(t, ctx, Mode::Proof);
                let lemma = if matches!(t, T::Ceil(_)) {
                    "Rceil_eq"
                } else {
                    "Rfloor_eq"
                };
                steps.push(format!(
                    "replace {text} with {} by (apply {lemma}; split; unroll_sums; attn_prep; attn_interval)",
                    q_coq(&z)
                ));
                r.repl.insert(addr(t), q_coq(&z));
                lits.insert(addr(t), z);
                Ok(())
            }
            T::Sum(..) if ln_sum(t).is_some() => {
                let (lo, hi, k) = ln_sum(t).unwrap_or_default();
                let text = r.term(t, ctx, Mode::Proof);
                let blocks = format!(
                    "(fold_right Rplus 0 (map (fun p => ln (IZR p)) (ln_blocks {} {} {})))",
                    zi(lo),
                    zi(hi),
                    zi(k)
                );
                steps.push(format!(
                    "replace {text} with {blocks} by (symmetry; apply (sumZ_ln_blocks {} {} {}); lia)",
                    zi(lo),
                    zi(hi),
                    zi(k)
                ));
                r.repl.insert(addr(t), blocks);
                Ok(())
            }
            T::Sum(..) if ln_sum_chunked(t).is_some() => {
                // split the sum into chunks (sumZ_split2), enclose each chunk by
                // interval_intro on its blocks and name it (ln_chunk, in the
                // file's header): the statement's interval sees the names and
                // their enclosures
                let (lo, hi, k) = ln_sum_chunked(t).unwrap_or_default();
                let chunks = ln_chunks(lo, hi, k);
                let tag = steps.len();
                for &(a, b) in &chunks[..chunks.len() - 1] {
                    steps.push(format!(
                        "rewrite (sumZ_split2 {} {} {} {}) by first [ reflexivity | lia ]",
                        zi(a),
                        zi(b),
                        zi(b + 1),
                        zi(hi)
                    ));
                }
                let mut names = Vec::new();
                for (j, &(a, b)) in chunks.iter().enumerate() {
                    let x = format!("lnc_{tag}_{}", j + 1);
                    steps.push(format!("ln_chunk {}%Z {}%Z {}%Z {x}", zi(a), zi(b), zi(k)));
                    names.push(x);
                }
                let mut sum = names.pop().unwrap_or_default();
                while let Some(x) = names.pop() {
                    sum = format!("({x} + {sum})");
                }
                r.repl.insert(addr(t), sum);
                Ok(())
            }
            T::Sum(v, lo, hi, b) => {
                if let Some(g) = geometric(t).filter(|_| is_closed) {
                    if self.geometric_step(t, &g, (*lo, *hi), ctx, r, steps) {
                        return Ok(());
                    }
                }
                open.push(v.clone());
                let res = self.collect(b, ctx, open, r, lits, steps);
                open.pop();
                res
            }
        }
    }

    /// Replaces a [`geometric`] sum by its closed form (false, replacing
    /// nothing, when the kernel does not decide the sign of c), proven in Coq by
    /// applying `sumZ_exp_lin` or `sumZ_lin_exp_lin` to the sum as stated (the
    /// body is shown to be e^{c·k}, resp. k·e^{c·k}, by `ring` or `field`; c ≠ 0 by
    /// `interval`).
    fn geometric_step(
        &self,
        t: &T,
        g: &Geometric,
        (lo, hi): (i64, i64),
        ctx: &mut Ctx,
        r: &mut Render,
        steps: &mut Vec<String>,
    ) -> bool {
        let zero = || T::Lit(Rational::new());
        let sign = if self.kernel_true(&F::Cmp(Cmp::Lt, g.c.clone(), zero()), ctx) {
            "Rlt_not_eq"
        } else if self.kernel_true(&F::Cmp(Cmp::Gt, g.c.clone(), zero()), ctx) {
            "Rgt_not_eq"
        } else {
            // c = 0 (or undecided): no closed form, the sum is unrolled
            return false;
        };
        let c = r.term(&g.c, ctx, Mode::Proof);
        let text = r.term(t, ctx, Mode::Proof);
        let hi1 = hi + 1;
        let e = |k: i64| format!("(exp ({c} * (IZR {})))", zi(k));
        let (elo, ehi1, q) = (e(lo), e(hi1), format!("(exp {c})"));
        let (lemma, closed_form, body) = if g.weighted {
            (
                "sumZ_lin_exp_lin",
                format!(
                    "((((IZR {}) * {elo}) - ((IZR {}) * {ehi1})) / (1 - {q}) + ({q} * ({elo} - {ehi1})) / ((1 - {q}) * (1 - {q})))",
                    zi(lo),
                    zi(hi1)
                ),
                if g.exp_first {
                    "rewrite Rmult_comm; f_equal; f_equal; first [ ring | field ]"
                } else {
                    "f_equal; f_equal; first [ ring | field ]"
                },
            )
        } else {
            (
                "sumZ_exp_lin",
                format!("(({elo} - {ehi1}) / (1 - {q}))"),
                "f_equal; first [ ring | field ]",
            )
        };
        steps.push(format!(
            "replace {text} with {closed_form} by (symmetry; apply ({lemma} {} {} {} {c}); \
             [ reflexivity | lia | apply {sign}; attn_prep; attn_interval | intros k; cbv beta; {body} ])",
            zi(lo),
            zi(hi),
            zi(hi1)
        ));
        r.repl.insert(addr(t), closed_form);
        true
    }

    fn leaf(&self, c: Cmp, a: &T, b: &T, ctx: &mut Ctx) -> Result<String, String> {
        let mut r = Render {
            ops: self.ops,
            repl: HashMap::new(),
        };
        let mut lits = HashMap::new();
        let mut steps = Vec::new();
        self.collect(a, ctx, &mut Vec::new(), &mut r, &mut lits, &mut steps)?;
        self.collect(b, ctx, &mut Vec::new(), &mut r, &mut lits, &mut steps)?;
        let now_exact = |t: &T| exact_after(t, &lits);
        let last = if now_exact(a) && now_exact(b) {
            format!(
                "decide_exact ({} {} {})",
                c.ast(),
                ast_term(a, ctx, &lits, self.ops),
                ast_term(b, ctx, &lits, self.ops)
            )
        } else if c == Cmp::Ne {
            // a ≠ b from a < b or a > b, the side the kernel decides (Coq re-proves it
            // with `interval`): a divisor's or a negative power's domain condition
            let side = if self.kernel_true(&F::Cmp(Cmp::Lt, a.clone(), b.clone()), ctx) {
                "Rlt_not_eq"
            } else if self.kernel_true(&F::Cmp(Cmp::Gt, a.clone(), b.clone()), ctx) {
                "Rgt_not_eq"
            } else {
                return Err(
                    "the kernel does not separate the two sides of a disequality between non-rational terms"
                        .into(),
                );
            };
            format!("apply {side}; unroll_sums; attn_prep; attn_interval")
        } else if c == Cmp::Eq {
            // the kernel decides such an equality only when both sides are the same
            // point (e.g. an empty sum, or B̃(0) = Σ (cos(0·ω_i) − 1)): try computation,
            // linear arithmetic, and 0·x = 0, cos 0 = 1, sin 0 = 0 first
            "unroll_sums; attn_prep; first [ reflexivity | lra | (repeat rewrite ?Rmult_0_l, ?Rmult_0_r, ?cos_0, ?sin_0; lra) ]".into()
        } else {
            "unroll_sums; attn_prep; attn_interval".into()
        };
        steps.push(last);
        Ok(steps
            .into_iter()
            .map(|s| format!("({s})"))
            .collect::<Vec<_>>()
            .join("; "))
    }
}

fn exact_after(t: &T, lits: &HashMap<usize, Rational>) -> bool {
    if lits.contains_key(&addr(t)) {
        return true;
    }
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) => true,
        T::Pi | T::Fun(..) => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().all(|u| exact_after(u, lits)),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            exact_after(a, lits) && exact_after(b, lits)
        }
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) => exact_after(a, lits),
        T::Sum(_, _, _, b) => exact_after(b, lits),
    }
}

// ---------------------------------------------------------------- files

/// One translated obligation.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    /// Index in the certificate.
    pub index: usize,
    /// The comments above the lemma: the obligation's name, its kernel formula,
    /// the certificate's names of the binders.
    pub head: String,
    /// `Definition big_k_j : Z := …` lines the statement and proof use.
    pub defs: String,
    /// The statement, in Coq's real-number syntax.
    pub stmt: String,
    /// The proof: tactic sentences, each without its final period.
    pub script: Vec<String>,
}

impl Block {
    /// The lemma `o_k` with its proof.
    pub fn text(&self) -> String {
        let mut t = format!(
            "{}{}Lemma o_{} :\n  {}.\nProof.\n",
            self.head,
            self.defs,
            self.index + 1,
            self.stmt
        );
        for s in &self.script {
            let _ = writeln!(t, "  {s}.");
        }
        t.push_str("Qed.\n\n");
        t
    }

    /// The statement as a definition `s_k : Prop` (which must be well formed),
    /// then the lemma's proof under `Fail`: the file compiles past it only if Coq
    /// does not prove the statement ([`super::proves_none`]).
    pub fn refutation_text(&self) -> String {
        let k = self.index + 1;
        let tac: Vec<String> = self.script.iter().map(|s| format!("({s})")).collect();
        format!(
            "{}{}Definition s_{k} : Prop :=\n  {}.\nFail Definition o_{k} : s_{k} := ltac:(unfold s_{k}; {}).\n\n",
            self.head,
            self.defs,
            self.stmt,
            tac.join("; ")
        )
    }
}

/// The closing part of a file with the lemmas `o_k` for these indices: one
/// proof of their conjunction and `Print Assumptions` of it (which lists the
/// union of the axioms every lemma rests on; one traversal of the dependency
/// graph instead of one per lemma, which costs seconds each).
pub(crate) fn footer(indices: &[usize]) -> String {
    if indices.is_empty() {
        return String::new();
    }
    let mut proof = format!("o_{}", indices[indices.len() - 1] + 1);
    for i in indices[..indices.len() - 1].iter().rev() {
        proof = format!("conj o_{} ({proof})", i + 1);
    }
    format!(
        "(* All the lemmas above, and the axioms they rest on. *)\n\
         Definition attncheck_all := {proof}.\n\
         Print Assumptions attncheck_all.\n"
    )
}

/// The whole translation.
pub(crate) struct Translation {
    pub header: String,
    pub data: Option<String>,
    pub blocks: Vec<Block>,
    pub kernel_only: Vec<(usize, String)>,
}

fn comment(s: &str) -> String {
    s.replace("(*", "( *")
        .replace("*)", "* )")
        .replace('"', "''")
}

/// The Coq module name of a certificate.
pub(crate) fn stem(cert: &Certificate) -> String {
    let s: String = cert
        .claim
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("cert_{s}")
}

fn data_file(cert: &Certificate, data: &Data, ops: &Ops) -> Option<String> {
    if cert.data.is_empty() {
        return None;
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "(* Data of the certificate of {}, generated by attncheck. *)\n\
         From Coq Require Import ZArith QArith List.\n\
         From Attncheck Require Import Attncheck.\n\
         Import ListNotations.\n\
         Local Open Scope Z_scope.\n",
        comment(&cert.claim)
    );
    for name in cert.data.keys() {
        let dn = data_name(cert, name);
        let datum = data.get(name);
        let name = comment(name);
        match datum {
            Some(Datum::Signs(m)) => {
                let (n, d) = (m.n(), m.d());
                let _ = writeln!(
                    s,
                    "(* {name}: a {n} × {d} sign matrix; row l is the integer whose bit c is set\n   \
                     exactly when S_lc = −1 (bit 0 = column 0). *)"
                );
                let _ = writeln!(s, "Definition {dn} : signs := signs_of_bits {d} [");
                let lines: Vec<String> = (0..n)
                    .map(|l| {
                        let mut x = Integer::new();
                        for (w, word) in m.row(l).iter().enumerate() {
                            x += Integer::from(*word) << (64 * w as u32);
                        }
                        if x == 0 {
                            "  0".to_string()
                        } else {
                            format!("  0x{x:x}")
                        }
                    })
                    .collect();
                let _ = writeln!(s, "{}].\n", lines.join(";\n"));
            }
            Some(Datum::Sparse(b)) => {
                let (n, rows) = (b.n, &b.rows);
                let _ = writeln!(
                    s,
                    "(* {name}: a row-sparse {n} × {n} rational matrix, per row its (column, value) pairs. *)"
                );
                let _ = writeln!(s, "Local Open Scope Q_scope.");
                let _ = writeln!(s, "Definition {dn} : sparse := Sparse {n} [");
                let lines: Vec<String> = rows
                    .iter()
                    .map(|r| {
                        let es: Vec<String> = r
                            .iter()
                            .map(|(c, v)| format!("({c}%Z, {} # {})", z(v.numer()), num(v.denom())))
                            .collect();
                        format!("  [{}]", es.join("; "))
                    })
                    .collect();
                let _ = writeln!(s, "{}].\nLocal Open Scope Z_scope.\n", lines.join(";\n"));
            }
            Some(Datum::Layer(_)) => {
                let _ = writeln!(s, "(* {name}: a datum of kind layer, not translated. *)\n");
            }
            None => {
                let _ = writeln!(s, "(* {name}: a malformed datum, not translated. *)\n");
            }
        }
    }
    let mut grams: Vec<&String> = ops.list.iter().filter_map(|o| o.gram_of.as_ref()).collect();
    grams.sort();
    grams.dedup();
    for g in grams {
        let _ = writeln!(
            s,
            "(* G = S Sᵀ of {g}, computed once by Coq; the kernel re-runs the computation at Qed. *)\n\
             Definition G_{g} := Eval vm_compute in gram_matrix {g}.\n\
             Lemma G_{g}_eq : gram_matrix {g} = G_{g}.\n\
             Proof. vm_cast_no_check (eq_refl G_{g}). Qed.\n"
        );
    }
    for (i, o) in ops.list.iter().enumerate() {
        let v = format!("val_{}", i + 1);
        let _ = writeln!(s, "(* {} *)", comment(&o.key));
        match &o.fast {
            Some((fast, unfold)) => {
                let g = o.gram_of.as_deref().unwrap_or_default();
                let _ = writeln!(
                    s,
                    "Definition {v} := Eval vm_compute in {fast}.\n\
                     Lemma {v}_eq : {} = {v}.\n\
                     Proof. unfold {unfold}. rewrite G_{g}_eq. vm_cast_no_check (eq_refl {v}). Qed.\n",
                    o.coq
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "Definition {v} := Eval vm_compute in {}.\n\
                     Lemma {v}_eq : {} = {v}.\n\
                     Proof. vm_cast_no_check (eq_refl {v}). Qed.\n",
                    o.coq, o.coq
                );
            }
        }
    }
    Some(s)
}

fn uses(t: &T, out: &mut Vec<usize>) {
    match t {
        T::Data(i) => out.push(*i),
        T::Lit(_) | T::Var(_) | T::Pi => {}
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().for_each(|u| uses(u, out)),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            uses(a, out);
            uses(b, out)
        }
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
            uses(a, out)
        }
        T::Sum(_, _, _, b) => uses(b, out),
    }
}

fn uses_f(f: &F, out: &mut Vec<usize>) {
    match f {
        F::Cmp(_, a, b) => {
            uses(a, out);
            uses(b, out)
        }
        F::And(fs) | F::Or(fs) => fs.iter().for_each(|g| uses_f(g, out)),
        F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => uses_f(b, out),
    }
}

/// Translates every obligation it can.
pub(crate) fn translate(cert: &Certificate) -> Translation {
    // the kernel form of the data (a malformed datum is left out: formulas using it stay kernel-only)
    let data: Data = cert
        .data
        .iter()
        .filter_map(|(k, e)| Some((k.clone(), e.to_datum().ok()?)))
        .collect();
    let mut ops = Ops::default();
    // read every formula first: the data operations are numbered across the file;
    // each through the kernel's own parser and validation (one grammar: what the
    // kernel rejects never reaches Coq)
    let mut read: Vec<Result<F, String>> = Vec::new();
    let mut binders = Vec::new();
    for o in &cert.obligations {
        let mut r = Reader {
            cert,
            data: &data,
            ops: &mut ops,
            scope: Vec::new(),
            binders: Vec::new(),
        };
        let f = expr::parse_valid(&o.formula, &data)
            .map_err(|e| format!("the kernel rejects the formula: {e}"))
            .and_then(|e| r.formula(&e, o.expect == Expect::Fails));
        read.push(f);
        binders.push(r.binders);
    }
    // the sizes of the data operations' values, for the cost model
    let data_sizes: Vec<Option<Mag>> = ops
        .list
        .iter()
        .map(|o| {
            expr::eval_exact(&o.key, cert.precision, &data)
                .ok()
                .flatten()
                .map(|q| Mag::of(&q))
        })
        .collect();
    let prover = Prover {
        ops: &ops.list,
        data: &data,
        prec: cert.precision,
    };
    let mut blocks = Vec::new();
    let mut kernel_only = Vec::new();
    for (i, (o, f)) in cert.obligations.iter().zip(read).enumerate() {
        let f = match f {
            Ok(f) => with_domains(f),
            Err(e) => {
                kernel_only.push((i, e));
                continue;
            }
        };
        let bands = match bands_f(&f) {
            Ok(b) => b,
            Err(e) => {
                kernel_only.push((i, e));
                continue;
            }
        };
        let bits = number_bits_f(&f, &data_sizes);
        if bits == u64::MAX {
            kernel_only.push((
                i,
                "a data operation the kernel does not evaluate exactly has no size for the Coq budget".into(),
            ));
            continue;
        }
        if bits > MAX_COQ_NUMBER_BITS {
            kernel_only.push((
                i,
                format!(
                    "a number of up to {bits} bits is beyond the Coq budget ({MAX_COQ_NUMBER_BITS} bits: Coq's integers are binary lists, and a power's exponent is a unary nat)"
                ),
            ));
            continue;
        }
        if exact_f(&f) {
            let w = size_f(&f).saturating_add(bands.work);
            if w > MAX_EXACT_WORK {
                kernel_only.push((
                    i,
                    format!("exact evaluation of about {w} terms is beyond the Coq budget ({MAX_EXACT_WORK})"),
                ));
                continue;
            }
        } else {
            if bands.present {
                kernel_only.push((
                    i,
                    "a band operation beside a transcendental term: Coq decides band operations by computation, and `interval` cannot evaluate them".into(),
                ));
                continue;
            }
            if let Some((lo, hi, b)) = ln_sum_over_budget(&f) {
                kernel_only.push((
                    i,
                    format!(
                        "the sum of ln i for i = {lo}..{hi} in blocks is {b} logarithms for interval, beyond the Coq budget ({MAX_LN_CHUNKED_BLOCKS})"
                    ),
                ));
                continue;
            }
            let (g, t) = interval_load(&f);
            if g > MAX_INTERVAL_GOALS {
                kernel_only.push((
                    i,
                    format!(
                        "{g} interval proofs (one per value of a forall) are beyond the Coq budget ({MAX_INTERVAL_GOALS})"
                    ),
                ));
                continue;
            }
            if t > MAX_INTERVAL_TERMS {
                kernel_only.push((
                    i,
                    format!("{t} unrolled terms for interval are beyond the Coq budget ({MAX_INTERVAL_TERMS})"),
                ));
                continue;
            }
        }
        let proof = match prover.tac(&f, &mut Vec::new()) {
            Ok(p) => p,
            Err(e) => {
                kernel_only.push((i, e));
                continue;
            }
        };
        let r = Render {
            ops: &ops.list,
            repl: HashMap::new(),
        };
        let stmt = r.formula(&f, &mut Vec::new(), Mode::Stmt);
        let mut used = Vec::new();
        uses_f(&f, &mut used);
        used.sort_unstable();
        used.dedup();
        let mut head = String::new();
        let expect = match o.expect {
            Expect::Holds => "holds",
            Expect::Fails => "fails (Coq proves the negation)",
        };
        let _ = writeln!(
            head,
            "(* [{}] {} *)\n(* kernel formula, expect {expect}: {} *)",
            i + 1,
            comment(&o.name),
            comment(&o.formula)
        );
        if !binders[i].is_empty() {
            let names: Vec<String> = binders[i]
                .iter()
                .map(|(g, name)| format!("{g} = {name}"))
                .collect();
            let _ = writeln!(
                head,
                "(* binders (Coq name = the certificate's): {} *)",
                comment(&names.join(", "))
            );
        }
        let mut big = Vec::new();
        let stmt = hoist_big(&stmt, i + 1, &mut big);
        let proof = hoist_big(&proof, i + 1, &mut big);
        let mut defs = String::new();
        for (name, lit) in &big {
            let _ = writeln!(defs, "Definition {name} : Z := {lit}.");
        }
        let mut script = Vec::new();
        if !used.is_empty() {
            let rw: Vec<String> = used.iter().map(|u| format!("?val_{}_eq", u + 1)).collect();
            script.push(format!("rewrite {}", rw.join(", ")));
        }
        script.push(proof);
        blocks.push(Block {
            index: i,
            head,
            defs,
            stmt,
            script,
        });
    }
    let stem = stem(cert);
    let data_text = data_file(cert, &data, &ops);
    let mut header = String::new();
    let _ = writeln!(
        header,
        "(* Certificate of {} (format {}, profile {}), re-proven in Coq; generated by attncheck.\n   \
         Each lemma o_k states obligation k in Coq's real-number syntax (a refutation,\n   \
         expect fails, as the negated statement). Data operations are the plain\n   \
         definitions of coq/Attncheck.v, computed by Coq from the embedded data. *)",
        comment(&cert.claim),
        comment(&cert.format),
        cert.profile
    );
    if !cert.hints.is_empty() {
        let hs: Vec<String> = cert
            .hints
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        let _ = writeln!(
            header,
            "(* Hints (witness values the statement builder took): {} *)",
            comment(&hs.join(", "))
        );
    }
    let _ = writeln!(
        header,
        "From Coq Require Import ZArith QArith Reals Lra Lia List.\n\
         From Interval Require Import Tactic.\n\
         From Attncheck Require Import Attncheck."
    );
    if data_text.is_some() {
        let _ = writeln!(header, "From Attncheck Require Import {stem}_data.");
    }
    let _ = writeln!(
        header,
        "Import ListNotations.\nOpen Scope R_scope.\n\n\
         (* interval at 53 bits first, then at the certificate's precision *)\n\
         Ltac attn_interval := first [ interval | interval with (i_prec {0}) ].\n\
         (* one chunk a..b of a long sum of ln i: its blocks enclosed by interval_intro,\n   \
         the chunk named x with that enclosure as hypothesis *)\n\
         Ltac ln_chunk a b k x :=\n  \
         let E := fresh \"E\" in\n  \
         pose proof (sumZ_ln_blocks a b k ltac:(lia) ltac:(lia) ltac:(lia)) as E;\n  \
         let l := eval vm_compute in (ln_blocks a b k) in\n  \
         rewrite (eq_refl l <: ln_blocks a b k = l) in E;\n  \
         cbv beta iota delta [map fold_right] in E;\n  \
         let H := fresh \"H\" in\n  \
         match type of E with _ = ?e => interval_intro e with (i_prec {0}) as H end;\n  \
         rewrite <- E in H; clear E;\n  \
         set (x := sumZ a b (fun i => ln (IZR i))) in *; clearbody x.\n\
         (* data values are literals: unfold them for interval *)\n\
         Ltac attn_prep := cbv [Q2R Qnum Qden{1}].\n",
        cert.precision.max(54),
        (1..=ops.list.len())
            .map(|i| format!(" val_{i}"))
            .collect::<String>()
    );
    Translation {
        header,
        data: data_text,
        blocks,
        kernel_only,
    }
}
