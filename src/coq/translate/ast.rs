//! The translator's tree of a formula ([`T`], [`F`]), read from the tree the kernel's
//! validation builds ([`expr::read`]), with the domain conditions of its partial
//! operations ([`with_domains`]) and the predicates on its shape that the cost model,
//! the printers and the choice of tactic share ([`exact`], [`closed`], [`heavy`],
//! [`mentions`], [`linear_coefficient`], [`uses`]).

use super::numeral::{num, q_kernel, z};
use super::TranslateError;
use crate::certificate::Certificate;
use crate::kernel::expr::tree::{self, LayerOp};
use crate::kernel::expr::{self, Data, Datum};
use crate::kernel::parse_rational;
use rug::Rational;
use std::collections::HashMap;

pub(super) use crate::kernel::expr::tree::Elem;

/// A term.
#[derive(Clone, Debug)]
pub(super) enum T {
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
    /// A quantity of the layer map (`layer-max-sqnorm`, `layer-max-sqdist`,
    /// `layer-partition`, `layer-coord`) with its integer index terms: proven by the
    /// reflected interval evaluation of coq/Attncheck.v ([`super::layer`]).
    Layer(Box<LayerAtom>, Vec<T>),
}

/// The layer map's quantities that have a Coq translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LayerKind {
    /// `layer-max-sqnorm X r k`
    Sqnorm,
    /// `layer-max-sqdist X r s k`
    Sqdist,
    /// `layer-partition X r k`
    Partition,
    /// `layer-coord X r k i c`
    Coord,
}

/// Which quantity of which datum (the index terms are [`T::Layer`]'s).
#[derive(Clone, Debug)]
pub(super) struct LayerAtom {
    pub kind: LayerKind,
    /// The operator as the kernel writes it.
    pub op: &'static str,
    /// The datum's name in the certificate.
    pub name: String,
    /// Its Coq name (`data_<k>`).
    pub coq: String,
    /// The largest value of each index (runs − 1, K, n − 1, d − 1).
    pub max: Vec<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cmp {
    Le,
    Lt,
    Ge,
    Gt,
    Eq,
    Ne,
}

impl Cmp {
    /// The negation: (new operator, whether to swap the sides).
    pub(super) fn neg(self) -> (Cmp, bool) {
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
}

/// A formula in negation normal form.
#[derive(Clone, Debug)]
pub(super) enum F {
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
pub(super) struct Op {
    /// Its kernel text, e.g. `(err-max S B)`.
    pub key: String,
    /// Its Coq application, e.g. `err_max data_S data_B`.
    pub coq: String,
    /// Integer-valued (Z) rather than rational (Q).
    pub int: bool,
    /// The faster expression Coq evaluates (sharing the Gram matrix, and the ratio
    /// lemma's rows), and the definitions to unfold to reach it.
    pub fast: Option<(String, String)>,
    /// The sign matrix whose Gram matrix it needs.
    pub gram_of: Option<String>,
    /// For the five maxima of the ratio lemma: the sign and sparse matrices whose
    /// rows (coq/Attncheck.v's `lemma_rows_of`) it reads, computed once per pair.
    pub rows_of: Option<(String, String)>,
}

/// The data operations of a certificate, numbered in order of first use.
#[derive(Clone, Debug, Default)]
pub(super) struct Ops {
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
pub(super) fn binder_name(k: usize) -> String {
    format!("v{k}")
}

/// The most nodes that substituting `let`-bound terms may write into one obligation's
/// statement ([`TranslateError::LetTooLarge`] beyond: the obligation stays
/// kernel-only, the kernel having evaluated each let-bound term once).
pub(crate) const MAX_LET_NODES: usize = 100_000;

/// What a name in scope stands for.
#[derive(Clone, Debug)]
enum Bound {
    /// A `forall`/`sum` variable: its generated name.
    Binder(String),
    /// A `let` variable: the term it is bound to (read in the scope of the `let`, with
    /// its own binders' generated names, which no other binder has), and its size.
    Let(T, usize),
}

/// The number of nodes of `t`.
fn size(t: &T) -> usize {
    1 + match t {
        T::Lit(_) | T::Var(_) | T::Pi | T::Data(_) => 0,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) | T::Layer(_, ts) => ts.iter().map(size).sum(),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => size(a) + size(b),
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => size(a),
        T::Sum(_, _, _, b) => size(b),
    }
}

/// Reads the kernel's tree of a validated formula ([`expr::read`]) into [`T`] and
/// [`F`]: the grammar (operators, arities, ranges, names, the kinds of data) is the
/// kernel's, checked before anything is read here; what is refused here is what has no
/// Coq translation.
pub(super) struct Reader<'a> {
    pub cert: &'a Certificate,
    pub data: &'a Data,
    pub ops: &'a mut Ops,
    /// The enclosing binders and `let`s, innermost last: (name in the certificate,
    /// what it stands for). A `let` is substituted: capture-free, because every binder
    /// gets a generated name of its own and a let-bound term is read before the
    /// binders of the `let`'s body.
    scope: Vec<(String, Bound)>,
    /// The nodes written by substitution so far (at most [`MAX_LET_NODES`]).
    let_nodes: usize,
    /// Every binder read so far, in order: (generated name, name in the certificate).
    pub binders: Vec<(String, String)>,
}

impl<'a> Reader<'a> {
    pub fn new(cert: &'a Certificate, data: &'a Data, ops: &'a mut Ops) -> Reader<'a> {
        Reader {
            cert,
            data,
            ops,
            scope: Vec::new(),
            binders: Vec::new(),
            let_nodes: 0,
        }
    }

    /// A fresh binder for the certificate's variable `name`.
    fn bind(&mut self, name: &str) -> String {
        let g = binder_name(self.binders.len());
        self.binders.push((g.clone(), name.to_string()));
        g
    }

    /// `body` read with `b`'s variable bound to a fresh binder: (its name, the body).
    fn under<X>(
        &mut self,
        b: &tree::Binder,
        body: impl FnOnce(&mut Self) -> Result<X, TranslateError>,
    ) -> Result<(String, X), TranslateError> {
        let g = self.bind(b.var);
        self.scope
            .push((b.var.to_string(), Bound::Binder(g.clone())));
        let r = body(self);
        self.scope.pop();
        Ok((g, r?))
    }

    fn boxed(&mut self, t: &tree::Term) -> Result<Box<T>, TranslateError> {
        self.term(t).map(Box::new)
    }

    fn data_op(&mut self, op: &tree::DataOp) -> Result<T, TranslateError> {
        use tree::DataOp;
        let dn = |name: &str| data_name(self.cert, name);
        let op_rec = match op {
            DataOp::Rows(x) => {
                let f = if matches!(x.datum, Datum::Signs(_)) {
                    "rows_signs"
                } else {
                    "rows_sparse"
                };
                Op {
                    key: format!("(rows {})", x.name),
                    coq: format!("{f} {}", dn(x.name)),
                    int: true,
                    fast: None,
                    gram_of: None,
                    rows_of: None,
                }
            }
            DataOp::Cols(s) => Op {
                key: format!("(cols {})", s.name),
                coq: format!("cols {}", dn(s.name)),
                int: true,
                fast: None,
                gram_of: None,
                rows_of: None,
            },
            DataOp::GramMaxAbs(s) => {
                let ds = dn(s.name);
                Op {
                    key: format!("(gram-max-abs {})", s.name),
                    coq: format!("gram_max_abs {ds}"),
                    int: true,
                    fast: Some((format!("gram_max_abs_of G_{ds}"), "gram_max_abs".into())),
                    gram_of: Some(ds),
                    rows_of: None,
                }
            }
            DataOp::Sparse(op, b) => {
                let op = op.name();
                Op {
                    key: format!("({op} {})", b.name),
                    coq: format!("{} {}", op.replace('-', "_"), dn(b.name)),
                    int: op == "row-nnz-max",
                    fast: None,
                    gram_of: None,
                    rows_of: None,
                }
            }
            DataOp::Lemma { op, s, b, t } => {
                let op = op.name();
                let (ds, db) = (dn(s.name), dn(b.name));
                let (t_key, t_coq) = match t {
                    Some(t) => {
                        let t = self.term(t)?;
                        if !exact(&t) || !closed(&t, &mut Vec::new()) {
                            return Err(TranslateError::TNotExact(op));
                        }
                        let q = expr::eval_exact(
                            &kernel_term(&t, &[], &self.ops.list),
                            self.cert.precision,
                            self.data,
                        )
                        .ok()
                        .flatten()
                        .ok_or(TranslateError::TNotEvaluated(op))?;
                        (
                            format!(" {}", q_kernel(&q)),
                            format!(" ({} # {})%Q", z(q.numer()), num(q.denom())),
                        )
                    }
                    None => (String::new(), String::new()),
                };
                let f = op.replace('-', "_");
                Op {
                    key: format!("({op} {} {}{t_key})", s.name, b.name),
                    coq: format!("{f} {ds} {db}{t_coq}"),
                    int: false,
                    fast: Some((
                        format!("{f}_rows L_{ds}_{db}{t_coq}"),
                        format!("{f}, {f}_of"),
                    )),
                    gram_of: Some(ds.clone()),
                    rows_of: Some((ds, db)),
                }
            }
            DataOp::SandwichCentred { dbar, first, r } => {
                // the plain definition from the format document, unrolled by Coq's
                // `interval` like any sum: Σ_i (cos(r·exp(−(2i/D)·ln 10⁴)) − 1)
                let (dbar, first) = (*dbar, *first);
                let r = self.term(r)?;
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
                    Box::new(T::Fun(Elem::Cos, Box::new(T::Mul(vec![r, omega])))),
                    Box::new(T::Lit(Rational::from(1))),
                );
                let (lo, hi) = (i64::from(first), i64::from(first + dbar / 2 - 1));
                return Ok(T::Sum(i, lo, hi, Box::new(body)));
            }
            DataOp::BandReach { count, args } => {
                let ts = args
                    .iter()
                    .map(|a| self.term(a))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(T::Band(*count, ts));
            }
            DataOp::Layer(
                op
                @ (LayerOp::MaxSqnorm | LayerOp::MaxSqdist | LayerOp::Partition | LayerOp::Coord),
                x,
                args,
            ) => {
                let l = x.datum;
                let (runs, k) = (l.runs().len() as i64 - 1, l.steps() as i64);
                let (kind, max) = match op {
                    LayerOp::MaxSqnorm => (LayerKind::Sqnorm, vec![runs, k]),
                    LayerOp::MaxSqdist => (LayerKind::Sqdist, vec![runs, runs, k]),
                    LayerOp::Coord => (
                        LayerKind::Coord,
                        vec![runs, k, l.n() as i64 - 1, l.d() as i64 - 1],
                    ),
                    _ => (LayerKind::Partition, vec![runs, k]),
                };
                let ts = args
                    .iter()
                    .map(|a| self.term(a))
                    .collect::<Result<Vec<_>, _>>()?;
                if let Some(t) = ts.iter().find(|t| !integral(t)) {
                    return Err(TranslateError::LayerIndex(format!("{t:?}")));
                }
                let atom = LayerAtom {
                    kind,
                    op: op.name(),
                    name: x.name.to_string(),
                    coq: data_name(self.cert, x.name),
                    max,
                };
                return Ok(T::Layer(Box::new(atom), ts));
            }
            DataOp::Layer(op @ (LayerOp::DualSup | LayerOp::DualInf), ..) => {
                return Err(TranslateError::LayerDual(op.name()));
            }
            DataOp::Layer(op @ (LayerOp::VFrob2 | LayerOp::QkFrob2 | LayerOp::Dt), x, _) => {
                let d = data_name(self.cert, x.name);
                let coq = match op {
                    LayerOp::VFrob2 => format!("frob2Q (lq_v {d})"),
                    LayerOp::QkFrob2 => format!("frob2Q (qtkQ (lq_q {d}) (lq_k {d}))"),
                    _ => format!("lq_dt {d}"),
                };
                Op {
                    key: format!("({} {})", op.name(), x.name),
                    coq,
                    int: false,
                    fast: None,
                    gram_of: None,
                    rows_of: None,
                }
            }
            DataOp::Attn(op, ..) => return Err(TranslateError::NoCoq(op.name())),
        };
        Ok(T::Data(self.ops.add(op_rec)))
    }

    /// The term `t`.
    pub fn term(&mut self, t: &tree::Term) -> Result<T, TranslateError> {
        use tree::Term as K;
        Ok(match t {
            K::Pi => T::Pi,
            K::Var(a) => match self.scope.iter().rev().find(|(v, _)| v == a) {
                Some((_, Bound::Binder(g))) => T::Var(g.clone()),
                Some((_, Bound::Let(t, n))) => {
                    self.let_nodes = self.let_nodes.saturating_add(*n);
                    if self.let_nodes > MAX_LET_NODES {
                        return Err(TranslateError::LetTooLarge);
                    }
                    t.clone()
                }
                // not reached: the kernel binds every variable
                None => return Err(TranslateError::Unread(a.to_string())),
            },
            K::Let(v, t, body) => {
                let t = self.term(t)?;
                let n = size(&t);
                self.scope.push((v.to_string(), Bound::Let(t, n)));
                let r = self.term(body);
                self.scope.pop();
                r?
            }
            K::Lit(a) => T::Lit(
                // read by the kernel (its validation) already
                parse_rational(a).map_err(|_| TranslateError::Unread(a.to_string()))?,
            ),
            K::Data(op) => return self.data_op(op),
            K::Add(ts) | K::Mul(ts) => {
                let us = ts
                    .iter()
                    .map(|u| self.term(u))
                    .collect::<Result<Vec<_>, _>>()?;
                if matches!(t, K::Add(_)) {
                    T::Add(us)
                } else {
                    T::Mul(us)
                }
            }
            K::Neg(a) => T::Neg(self.boxed(a)?),
            K::Sub(a, b) => T::Sub(self.boxed(a)?, self.boxed(b)?),
            K::Div(a, b) => T::Div(self.boxed(a)?, self.boxed(b)?),
            K::Fun(f, a) => T::Fun(*f, self.boxed(a)?),
            K::Abs(a) => T::Abs(self.boxed(a)?),
            K::Ceil(a) => T::Ceil(self.boxed(a)?),
            K::Floor(a) => T::Floor(self.boxed(a)?),
            K::Min(a, b) => T::Min(self.boxed(a)?, self.boxed(b)?),
            K::Max(a, b) => T::Max(self.boxed(a)?, self.boxed(b)?),
            K::Pow(a, n) => T::Pow(self.boxed(a)?, i64::from(*n)),
            K::Sum(b, body) => {
                let (g, body) = self.under(b, |r| r.term(body))?;
                T::Sum(g, b.lo, b.hi, Box::new(body))
            }
        })
    }

    /// The formula `f` (negated when `neg`), in negation normal form.
    pub fn formula(&mut self, f: &tree::Formula, neg: bool) -> Result<F, TranslateError> {
        use tree::Formula as K;
        Ok(match f {
            K::Cmp(c, a, b) => {
                let c = match c {
                    tree::Cmp::Lt => Cmp::Lt,
                    tree::Cmp::Le => Cmp::Le,
                    tree::Cmp::Gt => Cmp::Gt,
                    tree::Cmp::Ge => Cmp::Ge,
                    tree::Cmp::Eq => Cmp::Eq,
                };
                let a = self.term(a)?;
                let b = self.term(b)?;
                if neg {
                    let (c, swap) = c.neg();
                    if swap {
                        F::Cmp(c, b, a)
                    } else {
                        F::Cmp(c, a, b)
                    }
                } else {
                    F::Cmp(c, a, b)
                }
            }
            K::And(fs) => {
                let gs = fs
                    .iter()
                    .map(|g| self.formula(g, neg))
                    .collect::<Result<Vec<_>, _>>()?;
                if neg {
                    F::Or(gs)
                } else {
                    F::And(gs)
                }
            }
            K::Not(g) => self.formula(g, !neg)?,
            K::Let(v, t, body) => {
                let t = self.term(t)?;
                let n = size(&t);
                self.scope.push((v.to_string(), Bound::Let(t, n)));
                let r = self.formula(body, neg);
                self.scope.pop();
                r?
            }
            K::Forall(b, body) => {
                let (g, body) = self.under(b, |r| r.formula(body, neg))?;
                let body = Box::new(body);
                if neg {
                    F::Ex(g, b.lo, b.hi, body)
                } else {
                    F::All(g, b.lo, b.hi, body)
                }
            }
        })
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
        // the kernel's domain of a layer quantity: every index an integer (the reader
        // takes integer expressions only) from 0 to its largest value, and two
        // different runs for a distance
        T::Layer(a, ts) => {
            for (t, &max) in ts.iter().zip(&a.max) {
                domain(t, out);
                // (nothing to say for a literal inside the range)
                if matches!(t, T::Lit(q) if *q >= 0 && *q <= max) {
                    continue;
                }
                push_new(out, F::Cmp(Cmp::Le, T::Lit(Rational::new()), t.clone()));
                push_new(out, F::Cmp(Cmp::Le, t.clone(), T::Lit(Rational::from(max))));
            }
            if a.kind == LayerKind::Sqdist
                && !matches!((&ts[0], &ts[1]), (T::Lit(r), T::Lit(s)) if r != s)
            {
                push_new(out, F::Cmp(Cmp::Ne, ts[0].clone(), ts[1].clone()));
            }
        }
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
pub(super) fn with_domains(f: F) -> F {
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

pub(super) fn exact(t: &T) -> bool {
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) => true,
        T::Pi | T::Fun(..) | T::Layer(..) => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().all(exact),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => exact(a) && exact(b),
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) => exact(a),
        T::Sum(_, _, _, b) => exact(b),
    }
}

pub(super) fn exact_f(f: &F) -> bool {
    match f {
        F::Cmp(_, a, b) => exact(a) && exact(b),
        F::And(fs) | F::Or(fs) => fs.iter().all(exact_f),
        F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => exact_f(b),
    }
}

/// No variable bound by a binder outside `t` but inside the leaf (`open` lists
/// the binders of enclosing sums).
pub(super) fn closed(t: &T, open: &mut Vec<String>) -> bool {
    match t {
        T::Var(v) => !open.contains(v),
        T::Lit(_) | T::Pi | T::Data(_) => true,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) | T::Layer(_, ts) => {
            ts.iter().all(|t| closed(t, open))
        }
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
pub(super) fn heavy(t: &T) -> bool {
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi | T::Layer(..) => false,
        T::Sum(..) | T::Ceil(_) | T::Floor(_) | T::Min(..) | T::Max(..) | T::Band(..) => true,
        T::Add(ts) | T::Mul(ts) => ts.iter().any(heavy),
        T::Sub(a, b) | T::Div(a, b) => heavy(a) || heavy(b),
        T::Neg(a) | T::Abs(a) | T::Pow(a, _) | T::Fun(_, a) => heavy(a),
    }
}

/// Whether `t` has a `min` or `max` anywhere.
pub(super) fn extremum(t: &T) -> bool {
    match t {
        T::Min(..) | T::Max(..) => true,
        T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi | T::Layer(..) => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().any(extremum),
        T::Sub(a, b) | T::Div(a, b) => extremum(a) || extremum(b),
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
            extremum(a)
        }
        T::Sum(_, _, _, b) => extremum(b),
    }
}

/// Whether `t` mentions the variable `v` (free or bound).
pub(super) fn mentions(t: &T, v: &str) -> bool {
    match t {
        T::Var(x) => x == v,
        T::Lit(_) | T::Pi | T::Data(_) => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) | T::Layer(_, ts) => {
            ts.iter().any(|u| mentions(u, v))
        }
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
pub(super) fn linear_coefficient(t: &T, v: &str) -> Option<T> {
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

pub(super) fn uses(t: &T, out: &mut Vec<usize>) {
    match t {
        T::Data(i) => out.push(*i),
        T::Lit(_) | T::Var(_) | T::Pi => {}
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) | T::Layer(_, ts) => {
            ts.iter().for_each(|u| uses(u, out))
        }
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

pub(super) fn uses_f(f: &F, out: &mut Vec<usize>) {
    match f {
        F::Cmp(_, a, b) => {
            uses(a, out);
            uses(b, out)
        }
        F::And(fs) | F::Or(fs) => fs.iter().for_each(|g| uses_f(g, out)),
        F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => uses_f(b, out),
    }
}

/// An integer expression: integer literals and variables with +, −, × (what a layer
/// index may be in Coq, where it is printed in `Z`).
pub(super) fn integral(t: &T) -> bool {
    match t {
        T::Lit(q) => *q.denom() == 1,
        T::Var(_) => true,
        T::Add(ts) | T::Mul(ts) => ts.iter().all(integral),
        T::Sub(a, b) => integral(a) && integral(b),
        T::Neg(a) => integral(a),
        _ => false,
    }
}

/// Whether `t` has a layer quantity anywhere.
pub(super) fn has_layer(t: &T) -> bool {
    match t {
        T::Layer(..) => true,
        T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().any(has_layer),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => has_layer(a) || has_layer(b),
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
            has_layer(a)
        }
        T::Sum(_, _, _, b) => has_layer(b),
    }
}

/// Whether the formula `f` has a layer quantity anywhere.
pub(super) fn has_layer_f(f: &F) -> bool {
    match f {
        F::Cmp(_, a, b) => has_layer(a) || has_layer(b),
        F::And(fs) | F::Or(fs) => fs.iter().any(has_layer_f),
        F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => has_layer_f(b),
    }
}

/// The name of an elementary function, in Coq and in the kernel's text alike.
pub(super) fn elem(f: Elem) -> &'static str {
    match f {
        Elem::Exp => "exp",
        Elem::Ln => "ln",
        Elem::Sqrt => "sqrt",
        Elem::Sin => "sin",
        Elem::Cos => "cos",
    }
}

impl Cmp {
    /// The operator in Coq's real-number syntax.
    pub(super) fn coq(self) -> &'static str {
        match self {
            Cmp::Le => "<=",
            Cmp::Lt => "<",
            Cmp::Ge => ">=",
            Cmp::Gt => ">",
            Cmp::Eq => "=",
            Cmp::Ne => "<>",
        }
    }
}

/// Kernel S-expression text of a term, with fixed variables substituted.
pub(super) fn kernel_term(t: &T, ctx: &[(String, Option<i64>)], ops: &[Op]) -> String {
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
        T::Fun(f, a) => format!("({} {})", elem(*f), k(a)),
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
        T::Layer(a, ts) => many(&format!("{} {}", a.op, a.name), ts),
    }
}

pub(super) fn kernel_formula(f: &F, ctx: &[(String, Option<i64>)], ops: &[Op]) -> String {
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

/// A domain condition `forall v, lo <= v <= hi -> C v` whose body is a
/// conjunction of inequalities or disequalities free of sums, ceilings, floors
/// and extrema: its proof first tries one `interval` per comparison with v
/// ranging over [lo, hi] (`tactic::uniform_tac`), before one goal per value.
pub(super) fn uniform(f: &F) -> Option<(&str, i64, i64, &F)> {
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
