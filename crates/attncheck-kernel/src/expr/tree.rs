//! The typed tree of a validated formula: what [`super::read`] returns.
//!
//! [`super::read`] is the kernel's validation ([`super::validate`] runs it and drops the
//! tree): every operator known and at its arity, binders named as variables, every range
//! non-empty and at most 5·10⁷ long, every atom `pi`, a bound variable or a literal the
//! kernel reads, every datum present and of the kind its operation takes. The tree says
//! what it accepted, node by node, so that a reader other than the evaluator (the Coq
//! translation) reads the one grammar instead of the S-expression text.
//!
//! Read-only data: nothing here evaluates or decides anything. The kernel's evaluator
//! reads the parsed S-expression itself.

use super::datum::{Datum, SparseRows};
use crate::layer_data::LayerData;
use crate::weights::AttnWeights;
use crate::SignMatrix;

/// A formula: `(< a b)`, `(<= a b)`, `(> a b)`, `(>= a b)`, `(= a b)`, `(and f …)`,
/// `(not f)`, `(forall v lo hi f)`, `(let v t f)`.
#[derive(Clone, Debug)]
pub enum Formula<'a> {
    /// A comparison of two terms.
    Cmp(Cmp, Term<'a>, Term<'a>),
    /// `(and f …)` (no part: true).
    And(Vec<Formula<'a>>),
    /// `(not f)`.
    Not(Box<Formula<'a>>),
    /// `(forall v lo hi f)`.
    Forall(Binder<'a>, Box<Formula<'a>>),
    /// `(let v t f)`: f with v bound to the value of t (t read outside v's scope).
    Let(&'a str, Box<Term<'a>>, Box<Formula<'a>>),
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=` (exact equality)
    Eq,
}

/// The variable and the integer range (lo ≤ hi, at most 5·10⁷ long) of a `forall` or a
/// `sum`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binder<'a> {
    /// The variable's name as written.
    pub var: &'a str,
    /// The first value.
    pub lo: i64,
    /// The last value (lo ≤ hi).
    pub hi: i64,
}

/// An elementary function of one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `exp`
    Exp,
    /// `ln` (its argument must be > 0)
    Ln,
    /// `sqrt` (its argument must be ≥ 0)
    Sqrt,
    /// `sin`
    Sin,
    /// `cos`
    Cos,
}

/// A term.
#[derive(Clone, Debug)]
pub enum Term<'a> {
    /// A rational literal, as written (one the kernel reads with
    /// [`crate::parse_rational`]).
    Lit(&'a str),
    /// `pi`.
    Pi,
    /// A variable of an enclosing `forall`, `sum` or `let` (the innermost one of that
    /// name).
    Var(&'a str),
    /// `(+ a …)`, at least one term.
    Add(Vec<Term<'a>>),
    /// `(* a …)`, at least one term.
    Mul(Vec<Term<'a>>),
    /// `(- a b)`.
    Sub(Box<Term<'a>>, Box<Term<'a>>),
    /// `(- a)` or `(neg a)`.
    Neg(Box<Term<'a>>),
    /// `(/ a b)` (b must be ≠ 0).
    Div(Box<Term<'a>>, Box<Term<'a>>),
    /// `(exp a)`, `(ln a)`, `(sqrt a)`, `(sin a)`, `(cos a)`.
    Fun(Elem, Box<Term<'a>>),
    /// `(abs a)`.
    Abs(Box<Term<'a>>),
    /// `(ceil a)`.
    Ceil(Box<Term<'a>>),
    /// `(floor a)`.
    Floor(Box<Term<'a>>),
    /// `(min a b)`.
    Min(Box<Term<'a>>, Box<Term<'a>>),
    /// `(max a b)`.
    Max(Box<Term<'a>>, Box<Term<'a>>),
    /// `(pow a n)`, n an integer literal (a must be ≠ 0 when n < 0).
    Pow(Box<Term<'a>>, i32),
    /// `(sum v lo hi body)`.
    Sum(Binder<'a>, Box<Term<'a>>),
    /// `(let v t body)`: body with v bound to the value of t (t read outside v's
    /// scope). The building blocks ([`super::blocks`]) reach the tree as their
    /// expansions, made of these.
    Let(&'a str, Box<Term<'a>>, Box<Term<'a>>),
    /// A data operation.
    Data(DataOp<'a>),
}

/// A datum named in a formula: its name as written and the certificate's datum of that
/// name, of the kind the operation takes.
#[derive(Clone, Copy, Debug)]
pub struct Named<'a, D> {
    /// The name as written.
    pub name: &'a str,
    /// The datum.
    pub datum: &'a D,
}

/// A data operation (docs/certificate-format.md, the module documentation of
/// [`super`]).
#[derive(Clone, Debug)]
pub enum DataOp<'a> {
    /// `(rows X)`, X a sign matrix or a row-sparse matrix.
    Rows(Named<'a, Datum>),
    /// `(cols S)`.
    Cols(Named<'a, SignMatrix>),
    /// `(gram-max-abs S)`.
    GramMaxAbs(Named<'a, SignMatrix>),
    /// `(row-sum-max B)`, `(row-nnz-max B)`, `(entry-min B)`, `(entry-max B)`,
    /// `(entry-sum B)`.
    Sparse(SparseOp, Named<'a, SparseRows>),
    /// `(err-max S B)`, `(lemma-a S B)`, `(lemma-b S B)`, and with a term t
    /// `(lemma-a-row S B t)`, `(lemma-b-row S B t)` (S and B of the same n).
    Lemma {
        /// Which.
        op: LemmaOp,
        /// S.
        s: Named<'a, SignMatrix>,
        /// B.
        b: Named<'a, SparseRows>,
        /// t, for the `-row` operations (exactly then).
        t: Option<Box<Term<'a>>>,
    },
    /// `(sandwich-centred D F r)`, D and F checked by [`super::sandwich::check_args`].
    SandwichCentred {
        /// D (even, 2 ≤ D ≤ 4096).
        dbar: u32,
        /// F (0 or 1).
        first: u32,
        /// r.
        r: Box<Term<'a>>,
    },
    /// `(band-reach L d l)` (`count` false) or `(band-reach-count L d l)` (true): the
    /// three terms.
    BandReach {
        /// `band-reach-count` rather than `band-reach`.
        count: bool,
        /// L, d, l.
        args: Vec<Term<'a>>,
    },
    /// `(layer-max-sqnorm X r k)`, `(layer-max-sqdist X r s k)`, `(layer-partition X r k)`,
    /// `(layer-dual-sup X r k lo hi i)`, `(layer-dual-inf X r k lo hi i)`, `(layer-v-frob2 X)`,
    /// `(layer-qk-frob2 X)`, `(layer-dt X)`: the layer datum and the index terms.
    Layer(LayerOp, Named<'a, LayerData>, Vec<Term<'a>>),
    /// `(attn-ln-bound W l)`, `(attn-logit-range W l h)`, `(attn-byte-logit-range W h)`,
    /// `(attn-row-logit-range W l h)`: the attention-weights datum and the index terms.
    Attn(AttnOp, Named<'a, AttnWeights>, Vec<Term<'a>>),
}

/// The operations on one row-sparse matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseOp {
    /// `row-sum-max`
    RowSumMax,
    /// `row-nnz-max` (an integer)
    RowNnzMax,
    /// `entry-min`
    EntryMin,
    /// `entry-max`
    EntryMax,
    /// `entry-sum`
    EntrySum,
}

impl SparseOp {
    /// The operator as written.
    pub fn name(self) -> &'static str {
        match self {
            SparseOp::RowSumMax => "row-sum-max",
            SparseOp::RowNnzMax => "row-nnz-max",
            SparseOp::EntryMin => "entry-min",
            SparseOp::EntryMax => "entry-max",
            SparseOp::EntrySum => "entry-sum",
        }
    }

    pub(super) fn of(op: &str) -> Option<SparseOp> {
        Some(match op {
            "row-sum-max" => SparseOp::RowSumMax,
            "row-nnz-max" => SparseOp::RowNnzMax,
            "entry-min" => SparseOp::EntryMin,
            "entry-max" => SparseOp::EntryMax,
            "entry-sum" => SparseOp::EntrySum,
            _ => return None,
        })
    }
}

/// The operations on a sign matrix S and a row-sparse matrix B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LemmaOp {
    /// `err-max`
    ErrMax,
    /// `lemma-a`
    LemmaA,
    /// `lemma-b`
    LemmaB,
    /// `lemma-a-row` (with t)
    LemmaARow,
    /// `lemma-b-row` (with t)
    LemmaBRow,
}

impl LemmaOp {
    /// The operator as written.
    pub fn name(self) -> &'static str {
        match self {
            LemmaOp::ErrMax => "err-max",
            LemmaOp::LemmaA => "lemma-a",
            LemmaOp::LemmaB => "lemma-b",
            LemmaOp::LemmaARow => "lemma-a-row",
            LemmaOp::LemmaBRow => "lemma-b-row",
        }
    }

    pub(super) fn of(op: &str) -> Option<LemmaOp> {
        Some(match op {
            "err-max" => LemmaOp::ErrMax,
            "lemma-a" => LemmaOp::LemmaA,
            "lemma-b" => LemmaOp::LemmaB,
            "lemma-a-row" => LemmaOp::LemmaARow,
            "lemma-b-row" => LemmaOp::LemmaBRow,
            _ => return None,
        })
    }
}

/// The operations on a layer datum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerOp {
    /// `layer-max-sqnorm` (indices r, k)
    MaxSqnorm,
    /// `layer-max-sqdist` (indices r, s, k)
    MaxSqdist,
    /// `layer-partition` (indices r, k)
    Partition,
    /// `layer-dual-sup` (r, k, lo, hi, i)
    DualSup,
    /// `layer-dual-inf` (r, k, lo, hi, i)
    DualInf,
    /// `layer-v-frob2`
    VFrob2,
    /// `layer-qk-frob2`
    QkFrob2,
    /// `layer-dt`
    Dt,
    /// `layer-coord` (r, k, i, c)
    Coord,
}

impl LayerOp {
    /// The operator as written.
    pub fn name(self) -> &'static str {
        match self {
            LayerOp::MaxSqnorm => "layer-max-sqnorm",
            LayerOp::MaxSqdist => "layer-max-sqdist",
            LayerOp::Partition => "layer-partition",
            LayerOp::DualSup => "layer-dual-sup",
            LayerOp::DualInf => "layer-dual-inf",
            LayerOp::VFrob2 => "layer-v-frob2",
            LayerOp::QkFrob2 => "layer-qk-frob2",
            LayerOp::Dt => "layer-dt",
            LayerOp::Coord => "layer-coord",
        }
    }

    pub(super) fn of(op: &str) -> Option<LayerOp> {
        Some(match op {
            "layer-max-sqnorm" => LayerOp::MaxSqnorm,
            "layer-max-sqdist" => LayerOp::MaxSqdist,
            "layer-partition" => LayerOp::Partition,
            "layer-dual-sup" => LayerOp::DualSup,
            "layer-dual-inf" => LayerOp::DualInf,
            "layer-v-frob2" => LayerOp::VFrob2,
            "layer-qk-frob2" => LayerOp::QkFrob2,
            "layer-dt" => LayerOp::Dt,
            "layer-coord" => LayerOp::Coord,
            _ => return None,
        })
    }
}

/// The operations on an attention-weights datum ([`crate::weights`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttnOp {
    /// `attn-ln-bound` (index l)
    LnBound,
    /// `attn-logit-range` (indices l, h)
    LogitRange,
    /// `attn-byte-logit-range` (index h; layer 0)
    ByteLogitRange,
    /// `attn-row-logit-range` (indices l, h)
    RowLogitRange,
}

impl AttnOp {
    /// The operator as written.
    pub fn name(self) -> &'static str {
        match self {
            AttnOp::LnBound => "attn-ln-bound",
            AttnOp::LogitRange => "attn-logit-range",
            AttnOp::ByteLogitRange => "attn-byte-logit-range",
            AttnOp::RowLogitRange => "attn-row-logit-range",
        }
    }

    /// Its number of arguments, the datum included (the table's, [`super::ops::OPS`]).
    pub(super) fn arity(self) -> usize {
        match super::ops::lookup(self.name()).map(|o| o.arity) {
            Some(super::ops::Arity::Exactly(k)) => k,
            _ => unreachable!("a data operation of the table, of a fixed arity"),
        }
    }

    pub(super) fn of(op: &str) -> Option<AttnOp> {
        Some(match op {
            "attn-ln-bound" => AttnOp::LnBound,
            "attn-logit-range" => AttnOp::LogitRange,
            "attn-byte-logit-range" => AttnOp::ByteLogitRange,
            "attn-row-logit-range" => AttnOp::RowLogitRange,
            _ => return None,
        })
    }
}
