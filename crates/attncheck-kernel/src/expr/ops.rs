//! The table of operators ([`OPS`]): every operator's place in the grammar, arity,
//! domain and charge, which the grammar, the cost model and the evaluator read; and
//! the names the grammar accepts besides (integer atoms, variables, ranges).

use super::syntax::{err, ExprError, Sexp};

/// The longest range of a `forall` or `sum` (values lo..=hi).
pub(super) const MAX_RANGE: i64 = 50_000_000;

pub(super) fn int_atom(e: &Sexp) -> Result<i64, ExprError> {
    match e {
        Sexp::Atom(a, o) => a
            .parse::<i64>()
            .or_else(|_| err(*o, format!("`{a}` is not an integer"))),
        Sexp::List(_, o) => err(*o, "expected an integer literal"),
    }
}

pub(super) fn var_name(e: &Sexp) -> Result<&str, ExprError> {
    match e {
        Sexp::Atom(a, o)
            if a.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && a != "pi" =>
        {
            let _ = o;
            Ok(a)
        }
        _ => err(e.offset(), "expected a variable name"),
    }
}

/// Where an operator sits in the grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `(< a b)` and its kin: two terms, a formula.
    Comparison,
    /// `and`, `not`: formulas of formulas.
    Connective,
    /// `forall` (a formula), `sum` (a term), `let` (either): they bind a variable.
    Binder,
    /// A term of terms (arithmetic, elementary functions, rounding).
    Term,
    /// A data operation: its first arguments name data of the certificate.
    Data,
    /// A building block: rewritten by the reader into its expansion ([`super::blocks`]),
    /// so nothing past the reader meets it.
    Block,
}

/// How many arguments an operator takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Exactly(usize),
    /// At least this many.
    AtLeast(usize),
    /// One or two (`-`: negation or subtraction).
    OneOrTwo,
}

impl Arity {
    /// Whether `n` arguments fit.
    pub fn admits(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
            Arity::OneOrTwo => n == 1 || n == 2,
        }
    }
}

/// One operator of the certificate language: what the reader, the grammar, the cost
/// model and the evaluator know of it, in one place (issue #38). The grammar checks
/// the arity from here (`grammar`); the cost model charges `charge` units
/// (times the precision's factor, [`super::units::precision_factor`]) for each
/// evaluation of the operator itself, besides its arguments' own charges, plus what
/// its data's sizes give for a data operation (`cost`); the evaluator
/// (`eval`, `data`) computes it, undefined outside `domain`.
#[derive(Debug)]
pub struct Op {
    /// The operator as written.
    pub name: &'static str,
    /// Where it sits in the grammar.
    pub kind: Kind,
    /// Its number of arguments (data included).
    pub arity: Arity,
    /// What its arguments must be for a value; outside, the term is undefined (never a
    /// value) or, for what a datum or a literal must be, an error.
    pub domain: &'static str,
    /// Units of work one evaluation of the operator itself costs at 128 bits, from a
    /// measured cost (bench/charges.md: no operator costs more than twice its charge).
    /// A unit is about 0.1 µs of one core: an interval `+` with its operands' lookup.
    /// Measured on this project's 2-core machine at 128 bits (the precision factor
    /// over-charges higher precisions): the interval `/` 1.0 µs, `exp` 1.6, `cos` 2.5,
    /// `sin` 3.5, `ln` 3.7 (two correctly rounded MPFR calls each), so they are charged
    /// 4, 18, 26, 36 and 38 units; everything else costs at most one unit.
    pub charge: u128,
}

const fn op(
    name: &'static str,
    kind: Kind,
    arity: Arity,
    domain: &'static str,
    charge: u128,
) -> Op {
    Op {
        name,
        kind,
        arity,
        domain,
        charge,
    }
}

use Arity::{AtLeast, Exactly, OneOrTwo};
use Kind::{Binder, Block, Comparison, Connective, Data as DataOp, Term};

/// Every operator of the grammar, with its charge (bench/charges.md). A `let` may
/// not bind one of these names.
pub static OPS: &[Op] = &[
    op(
        "<",
        Comparison,
        Exactly(2),
        "all reals (undefined terms: Unknown)",
        1,
    ),
    op(
        "<=",
        Comparison,
        Exactly(2),
        "all reals (undefined terms: Unknown)",
        1,
    ),
    op(
        ">",
        Comparison,
        Exactly(2),
        "all reals (undefined terms: Unknown)",
        1,
    ),
    op(
        ">=",
        Comparison,
        Exactly(2),
        "all reals (undefined terms: Unknown)",
        1,
    ),
    op(
        "=",
        Comparison,
        Exactly(2),
        "all reals: exact equality (both sides one point)",
        1,
    ),
    op("and", Connective, AtLeast(0), "formulas", 1),
    op("not", Connective, Exactly(1), "a formula", 1),
    op(
        "forall",
        Binder,
        Exactly(4),
        "a variable, integer literals lo ≤ hi (at most 5·10⁷ values), a formula",
        1,
    ),
    op(
        "let",
        Binder,
        Exactly(3),
        "a variable (not an operator's name), a term, a term or formula",
        1,
    ),
    op(
        "sum",
        Binder,
        Exactly(4),
        "a variable, integer literals lo ≤ hi (at most 5·10⁷ values), a term",
        1,
    ),
    op("+", Term, AtLeast(1), "all reals", 1),
    op("*", Term, AtLeast(1), "all reals (0·∞ = 0)", 1),
    op("-", Term, OneOrTwo, "all reals", 1),
    op("neg", Term, Exactly(1), "all reals", 1),
    op(
        "/",
        Term,
        Exactly(2),
        "divisor ≠ 0 (an enclosure of it must not contain 0)",
        4,
    ),
    op("exp", Term, Exactly(1), "all reals", 18),
    op(
        "ln",
        Term,
        Exactly(1),
        "x > 0 (an enclosure must not touch 0)",
        38,
    ),
    op("sqrt", Term, Exactly(1), "x ≥ 0", 1),
    op("sin", Term, Exactly(1), "all reals", 36),
    op("cos", Term, Exactly(1), "all reals", 26),
    op("abs", Term, Exactly(1), "all reals", 1),
    op(
        "pow",
        Term,
        Exactly(2),
        "an integer literal exponent n; x ≠ 0 when n < 0",
        1,
    ),
    op("min", Term, Exactly(2), "all reals", 1),
    op("max", Term, Exactly(2), "all reals", 1),
    op("ceil", Term, Exactly(1), "all reals", 1),
    op("floor", Term, Exactly(1), "all reals", 1),
    op(
        "rows",
        DataOp,
        Exactly(1),
        "a sign matrix or a row-sparse matrix",
        1,
    ),
    op("cols", DataOp, Exactly(1), "a sign matrix", 1),
    op("gram-max-abs", DataOp, Exactly(1), "a sign matrix", 1),
    op(
        "err-max",
        DataOp,
        Exactly(2),
        "a sign matrix S and a row-sparse B of the same n, d ≥ 1",
        1,
    ),
    op(
        "lemma-a",
        DataOp,
        Exactly(2),
        "a sign matrix S and a row-sparse B of the same n, d ≥ 1",
        1,
    ),
    op(
        "lemma-b",
        DataOp,
        Exactly(2),
        "a sign matrix S and a row-sparse B of the same n, d ≥ 1",
        1,
    ),
    op(
        "lemma-a-row",
        DataOp,
        Exactly(3),
        "S and B as for lemma-a; t an exact rational",
        1,
    ),
    op(
        "lemma-b-row",
        DataOp,
        Exactly(3),
        "S and B as for lemma-b; t an exact rational",
        1,
    ),
    op(
        "row-sum-max",
        DataOp,
        Exactly(1),
        "a row-sparse matrix with a row",
        1,
    ),
    op(
        "row-nnz-max",
        DataOp,
        Exactly(1),
        "a row-sparse matrix with a row",
        1,
    ),
    op(
        "entry-min",
        DataOp,
        Exactly(1),
        "a row-sparse matrix with an entry",
        1,
    ),
    op(
        "entry-max",
        DataOp,
        Exactly(1),
        "a row-sparse matrix with an entry",
        1,
    ),
    op("entry-sum", DataOp, Exactly(1), "a row-sparse matrix", 1),
    op(
        "sandwich-centred",
        DataOp,
        Exactly(3),
        "literals D (even, 2..=4096) and F ∈ {0, 1}; r an exact integer",
        1,
    ),
    op(
        "band-reach",
        DataOp,
        Exactly(3),
        "exact integers 1 ≤ L ≤ 65536, d ≥ 0, 1 ≤ l ≤ 256, l·L·min(d + 1, L) ≤ 2³²",
        1,
    ),
    op("band-reach-count", DataOp, Exactly(3), "as band-reach", 1),
    op(
        "layer-max-sqnorm",
        DataOp,
        Exactly(3),
        "a layer datum; exact integers r < R, k ≤ K",
        1,
    ),
    op(
        "layer-max-sqdist",
        DataOp,
        Exactly(4),
        "a layer datum; exact integers r, s < R, k ≤ K",
        1,
    ),
    op(
        "layer-partition",
        DataOp,
        Exactly(3),
        "a layer datum; exact integers r < R, k ≤ K",
        1,
    ),
    op(
        "layer-dual-sup",
        DataOp,
        Exactly(6),
        "a layer datum; r, k as above; exact rationals lo ≤ hi; an exact integer i < d ≤ 16",
        1,
    ),
    op("layer-dual-inf", DataOp, Exactly(6), "as layer-dual-sup", 1),
    op("layer-v-frob2", DataOp, Exactly(1), "a layer datum", 1),
    op("layer-qk-frob2", DataOp, Exactly(1), "a layer datum", 1),
    op("layer-dt", DataOp, Exactly(1), "a layer datum", 1),
    op(
        "layer-coord",
        DataOp,
        Exactly(5),
        "a layer datum; exact integers r < R, k ≤ K, i < n, c < d",
        1,
    ),
    op(
        "attn-ln-bound",
        DataOp,
        Exactly(2),
        "an attention-weights datum; an exact integer layer l",
        16,
    ),
    op(
        "attn-logit-range",
        DataOp,
        Exactly(3),
        "an attention-weights datum; exact integers l, h in range",
        // nine square roots and a few products at p bits: 1.8 µs at 128 bits (1.12× a
        // charge of 16; bench/charges.md), so 24, 0.75×
        24,
    ),
    // the two tighter bounds: 16 units per evaluation once computed (measured: 0.35 and
    // 0.45 of it at 128 bits, edge.rs' small model); their computation on first use is
    // charged once per datum by the cost model from the datum's sizes (crate::weights)
    op(
        "attn-byte-logit-range",
        DataOp,
        Exactly(2),
        "an attention-weights datum with its embedding and ln_eps; an exact integer h in range",
        16,
    ),
    op(
        "attn-row-logit-range",
        DataOp,
        Exactly(3),
        "an attention-weights datum; exact integers l, h in range",
        16,
    ),
    op("alibi-slope", Block, Exactly(2), "integers 1 ≤ h ≤ H", 0),
    op(
        "alibi-tail",
        Block,
        Exactly(3),
        "m > 0, Δ ≥ 0, an integer w ≥ 0",
        0,
    ),
    op(
        "alibi-window",
        Block,
        Exactly(3),
        "m > 0, Δ ≥ 0, 0 < ε < 1",
        0,
    ),
    op(
        "union-bound-dim",
        Block,
        Exactly(3),
        "an integer n ≥ 1, t > 0, 0 < δ < 1",
        0,
    ),
];

/// The operator named `name`.
pub fn lookup(name: &str) -> Option<&'static Op> {
    OPS.iter().find(|o| o.name == name)
}

/// Checks that `op` takes `n` arguments (`o`: the list's offset), with the grammar's
/// messages.
pub(super) fn check_arity(op: &Op, n: usize, o: usize) -> Result<(), ExprError> {
    if op.arity.admits(n) {
        return Ok(());
    }
    let name = op.name;
    err(
        o,
        match (op.kind, op.arity) {
            (_, AtLeast(_)) => format!("`{name}` needs arguments"),
            (Comparison, _) => format!("`{name}` takes 2 arguments"),
            (Connective, _) => format!("`{name}` takes 1 argument"),
            (Binder, _) if name == "forall" => {
                "`forall` takes a variable, two integer bounds and a formula".to_string()
            }
            (Binder, _) if name == "let" => {
                "`let` takes a variable, a term and a formula".to_string()
            }
            (_, OneOrTwo) => format!("`{name}` takes 2 argument(s), got {n}"),
            (_, Exactly(k)) => format!("`{name}` takes {k} argument(s), got {n}"),
        },
    )
}

/// The variable of `(let VAR t body)`: a variable name ([`var_name`]) that is not an
/// operator's, or a fresh `#…` name of a building block's expansion (the reader
/// refuses `#` in what a user writes, [`blocks::expand`]).
pub(super) fn let_var(e: &Sexp) -> Result<&str, ExprError> {
    if let Sexp::Atom(a, _) = e {
        if a.starts_with('#') {
            return Ok(a);
        }
        if lookup(a).is_some() {
            return err(
                e.offset(),
                format!("`let` cannot bind `{a}`: it is an operator's name"),
            );
        }
    }
    var_name(e).or_else(|_| {
        err(
            e.offset(),
            "`let` binds a variable name (a letter first, not `pi`)",
        )
    })
}

pub(super) fn range(items: &[Sexp], o: usize) -> Result<(i64, i64), ExprError> {
    let lo = int_atom(&items[2])?;
    let hi = int_atom(&items[3])?;
    if hi < lo {
        return err(
            o,
            format!("range {lo}..{hi} is empty (a reversed range would make the formula vacuous)"),
        );
    }
    if hi.saturating_sub(lo) > MAX_RANGE {
        return err(o, format!("range {lo}..{hi} is longer than {MAX_RANGE}"));
    }
    Ok((lo, hi))
}
