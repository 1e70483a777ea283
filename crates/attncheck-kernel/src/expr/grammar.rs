//! The grammar: validation without evaluation, which builds the typed tree
//! ([`super::tree`]) that the Coq translation reads.

use super::datum::{named, signs_named, sparse_named, Data, Datum};
use super::ops::{check_arity, int_atom, let_var, lookup, range, var_name, Kind};
use super::sandwich;
use super::syntax::{err, ExprError, Sexp};
use super::tree;
use super::value::Val;
use crate::parse_rational;
use std::collections::HashMap;

// ───── BEGIN validation without evaluation (the one grammar; used by the Coq translation) ─────

/// Checks a parsed formula against the grammar without evaluating anything: every
/// operator known and at its arity, binders named as variables, every range non-empty
/// and at most `MAX_RANGE` long, every atom `pi`, a bound variable or a literal the
/// kernel reads, every datum present and of the kind its operation takes (and, where
/// the data alone decide it, not empty). Both branches of an `and` and every body are
/// checked, so a formula the evaluator would reject is rejected whatever the values
/// (the evaluator stops a conjunction at its first false part). The kernel's entry
/// points run it before evaluating, and the Coq translation reads the tree it builds
/// ([`read`]), so the two read one grammar. What depends on values (an exact integer
/// argument, a non-empty maximum of the lemma quantities) is left to evaluation.
pub fn validate(e: &Sexp, data: &Data) -> Result<(), ExprError> {
    read(e, data).map(|_| ())
}

/// [`validate`], returning what it accepted as a typed tree ([`tree::Formula`]):
/// the formula as the grammar reads it, for the Coq translation. Read-only: the tree
/// decides nothing.
pub fn read<'a>(e: &'a Sexp, data: &'a Data) -> Result<tree::Formula<'a>, ExprError> {
    Validator {
        data,
        scope: Vec::new(),
        literals: None,
    }
    .formula(e)
}

/// [`validate`] for a term (the argument of `eval`, `eval_exact`).
pub fn validate_term(e: &Sexp, data: &Data) -> Result<(), ExprError> {
    Validator {
        data,
        scope: Vec::new(),
        literals: None,
    }
    .term(e)
    .map(|_| ())
}

pub(super) struct Validator<'a> {
    pub(super) data: &'a Data,
    pub(super) scope: Vec<&'a str>,
    /// The literals [`prepare`] has read, by offset: an atom is a literal when it is
    /// there (read by [`parse_rational`], once). `None`: ask [`parse_rational`].
    pub(super) literals: Option<&'a HashMap<usize, Val>>,
}

impl<'a> Validator<'a> {
    pub(super) fn bound(
        &mut self,
        items: &'a [Sexp],
        o: usize,
    ) -> Result<tree::Binder<'a>, ExprError> {
        let var = var_name(&items[1])?;
        let (lo, hi) = range(items, o)?;
        Ok(tree::Binder { var, lo, hi })
    }

    pub(super) fn formula(&mut self, e: &'a Sexp) -> Result<tree::Formula<'a>, ExprError> {
        use tree::{Cmp, Formula};
        let Sexp::List(items, o) = e else {
            return err(e.offset(), "expected a formula such as (<= a b)");
        };
        let Some(Sexp::Atom(op, _)) = items.first() else {
            return err(*o, "expected an operator");
        };
        let args = &items[1..];
        // the table decides what an operator is and how many arguments it takes
        match lookup(op) {
            Some(spec)
                if matches!(spec.kind, Kind::Comparison | Kind::Connective)
                    || spec.name == "forall"
                    || spec.name == "let" =>
            {
                check_arity(spec, args.len(), *o)?
            }
            _ => return err(*o, format!("unknown operator `{op}` in a formula")),
        }
        match op.as_str() {
            "<" | "<=" | ">" | ">=" | "=" => {
                let c = match op.as_str() {
                    "<" => Cmp::Lt,
                    "<=" => Cmp::Le,
                    ">" => Cmp::Gt,
                    ">=" => Cmp::Ge,
                    _ => Cmp::Eq,
                };
                let a = self.term(&args[0])?;
                let b = self.term(&args[1])?;
                Ok(Formula::Cmp(c, a, b))
            }
            "and" => args
                .iter()
                .map(|a| self.formula(a))
                .collect::<Result<_, _>>()
                .map(Formula::And),
            "not" => Ok(Formula::Not(Box::new(self.formula(&args[0])?))),
            "forall" => {
                let b = self.bound(items, *o)?;
                self.scope.push(b.var);
                let r = self.formula(&args[3]);
                self.scope.pop();
                Ok(Formula::Forall(b, Box::new(r?)))
            }
            "let" => {
                let v = let_var(&args[0])?;
                let t = self.term(&args[1])?;
                self.scope.push(v);
                let r = self.formula(&args[2]);
                self.scope.pop();
                Ok(Formula::Let(v, Box::new(t), Box::new(r?)))
            }
            _ => err(*o, format!("unknown operator `{op}` in a formula")),
        }
    }

    pub(super) fn terms(&mut self, es: &'a [Sexp]) -> Result<Vec<tree::Term<'a>>, ExprError> {
        es.iter().map(|a| self.term(a)).collect()
    }

    pub(super) fn boxed(&mut self, e: &'a Sexp) -> Result<Box<tree::Term<'a>>, ExprError> {
        self.term(e).map(Box::new)
    }

    pub(super) fn term(&mut self, e: &'a Sexp) -> Result<tree::Term<'a>, ExprError> {
        use tree::{DataOp, Elem, Named, Term};
        let (items, o) = match e {
            Sexp::Atom(a, o) => {
                let literal = match self.literals {
                    Some(read) => read.contains_key(o),
                    None => parse_rational(a).is_ok(),
                };
                // read as the evaluator reads an atom: `pi`, then a bound variable, then
                // a literal
                if a == "pi" {
                    return Ok(Term::Pi);
                }
                if self.scope.iter().any(|v| v == a) {
                    return Ok(Term::Var(a));
                }
                if literal {
                    return Ok(Term::Lit(a));
                }
                return err(
                    *o,
                    format!("`{a}` is neither a number nor a bound variable"),
                );
            }
            Sexp::List(items, o) => (items, *o),
        };
        let Some(Sexp::Atom(op, _)) = items.first() else {
            return err(o, "expected an operator");
        };
        let args = &items[1..];
        // the table decides what an operator is and how many arguments it takes
        match lookup(op) {
            Some(spec)
                if matches!(spec.kind, Kind::Term | Kind::Data)
                    || spec.name == "sum"
                    || spec.name == "let" =>
            {
                check_arity(spec, args.len(), o)?
            }
            _ => return err(o, format!("unknown operator `{op}` in a term")),
        }
        let data = |d: DataOp<'a>| -> Result<Term<'a>, ExprError> { Ok(Term::Data(d)) };
        if let Some(lop) = tree::LayerOp::of(op) {
            // data operations (data_op, layer_op)
            let (name, d) = named(&args[0], self.data)?;
            let Datum::Layer(x) = d else {
                return err(args[0].offset(), "expected a layer datum");
            };
            let index = self.terms(&args[1..])?;
            return data(DataOp::Layer(lop, Named { name, datum: x }, index));
        }
        if let Some(aop) = tree::AttnOp::of(op) {
            let (name, d) = named(&args[0], self.data)?;
            let Datum::Attn(x) = d else {
                return err(args[0].offset(), "expected an attention-weights datum");
            };
            let index = self.terms(&args[1..])?;
            return data(DataOp::Attn(aop, Named { name, datum: x }, index));
        }
        if let Some(sop) = tree::SparseOp::of(op) {
            let (name, b) = sparse_named(&args[0], self.data)?;
            let empty = match sop {
                tree::SparseOp::EntrySum => false,
                tree::SparseOp::RowSumMax | tree::SparseOp::RowNnzMax => b.rows.is_empty(),
                _ => b.rows.iter().all(|r| r.is_empty()),
            };
            if empty {
                return err(o, format!("`{op}` of a matrix with no entry"));
            }
            return data(DataOp::Sparse(sop, Named { name, datum: b }));
        }
        if let Some(lop) = tree::LemmaOp::of(op) {
            let with_t = op.ends_with("-row");
            let (sn, s) = signs_named(&args[0], self.data)?;
            let (bn, b) = sparse_named(&args[1], self.data)?;
            if s.n() != b.n {
                return err(
                    o,
                    format!("`{op}`: S has {} rows but B has n = {}", s.n(), b.n),
                );
            }
            let t = if with_t {
                Some(self.boxed(&args[2])?)
            } else {
                None
            };
            return data(DataOp::Lemma {
                op: lop,
                s: Named { name: sn, datum: s },
                b: Named { name: bn, datum: b },
                t,
            });
        }
        match op.as_str() {
            "rows" => match named(&args[0], self.data)? {
                (_, Datum::Layer(_)) => err(o, "`rows` of a layer datum: use its operations"),
                (_, Datum::Attn(_)) => err(o, "`rows` of attention weights: use their operations"),
                (name, datum) => data(DataOp::Rows(Named { name, datum })),
            },
            "cols" | "gram-max-abs" => {
                let (name, datum) = signs_named(&args[0], self.data)?;
                let s = Named { name, datum };
                data(if op == "cols" {
                    DataOp::Cols(s)
                } else {
                    DataOp::GramMaxAbs(s)
                })
            }
            "sandwich-centred" => {
                let dbar = int_atom(&args[0])?;
                let first = int_atom(&args[1])?;
                let r = self.boxed(&args[2])?;
                let (dbar, first) =
                    sandwich::check_args(dbar, first).map_err(|reason| ExprError {
                        offset: o,
                        reason: format!("`sandwich-centred`: {reason}"),
                    })?;
                data(DataOp::SandwichCentred { dbar, first, r })
            }
            "band-reach" | "band-reach-count" => {
                let args = self.terms(args)?;
                data(DataOp::BandReach {
                    count: op == "band-reach-count",
                    args,
                })
            }
            // arithmetic (term)
            "+" | "*" => {
                if args.is_empty() {
                    return err(o, format!("`{op}` needs arguments"));
                }
                let ts = self.terms(args)?;
                Ok(if op == "+" {
                    Term::Add(ts)
                } else {
                    Term::Mul(ts)
                })
            }
            "-" | "neg" => {
                let a = self.boxed(&args[0])?;
                if args.len() == 1 {
                    return Ok(Term::Neg(a));
                }
                Ok(Term::Sub(a, self.boxed(&args[1])?))
            }
            "/" | "min" | "max" => {
                let a = self.boxed(&args[0])?;
                let b = self.boxed(&args[1])?;
                Ok(match op.as_str() {
                    "/" => Term::Div(a, b),
                    "min" => Term::Min(a, b),
                    _ => Term::Max(a, b),
                })
            }
            "exp" | "ln" | "sqrt" | "sin" | "cos" | "abs" | "ceil" | "floor" => {
                let a = self.boxed(&args[0])?;
                Ok(match op.as_str() {
                    "exp" => Term::Fun(Elem::Exp, a),
                    "ln" => Term::Fun(Elem::Ln, a),
                    "sqrt" => Term::Fun(Elem::Sqrt, a),
                    "sin" => Term::Fun(Elem::Sin, a),
                    "cos" => Term::Fun(Elem::Cos, a),
                    "abs" => Term::Abs(a),
                    "ceil" => Term::Ceil(a),
                    _ => Term::Floor(a),
                })
            }
            "pow" => {
                let n = int_atom(&args[1])?;
                let n =
                    i32::try_from(n).or_else(|_| err(args[1].offset(), "exponent too large"))?;
                Ok(Term::Pow(self.boxed(&args[0])?, n))
            }
            "sum" => {
                let b = self.bound(items, o)?;
                self.scope.push(b.var);
                let r = self.term(&args[3]);
                self.scope.pop();
                Ok(Term::Sum(b, Box::new(r?)))
            }
            "let" => {
                let v = let_var(&args[0])?;
                let t = self.term(&args[1])?;
                self.scope.push(v);
                let r = self.term(&args[2]);
                self.scope.pop();
                Ok(Term::Let(v, Box::new(t), Box::new(r?)))
            }
            _ => err(o, format!("unknown operator `{op}` in a term")),
        }
    }
}

// ───── END validation ─────
