//! From certificate formulas to Coq: statements in real-number syntax and the
//! proof scripts that make Coq re-prove them.
//!
//! A formula is parsed and validated by the kernel
//! ([`crate::kernel::expr::parse_valid`]), and the typed tree the kernel's validation
//! builds ([`crate::kernel::expr::read`]: one grammar, no second parser) is read into
//! the translator's own tree ([`ast::T`], [`ast::F`]) in negation normal form (an
//! obligation with `expect: "fails"` is translated as the negation of its formula). Its
//! statement is then printed in Coq's real-number syntax, each comparison with the
//! domain conditions of its partial operations ([`ast::with_domains`]: Coq's `ln`, `/`,
//! `sqrt` are total, the format's are not). The proof is chosen by the shape of the
//! formula:
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
//!
//! One file per job:
//! - [`ast`]: the translator's tree, read from the kernel's, with the domain
//!   conditions and the predicates on its shape;
//! - [`cost`]: the cost model and the Coq budgets (sizes of numbers, `interval`
//!   loads, closed forms of sums, band scans);
//! - [`print`]: the printers (Coq statements, the reflected `Attncheck.form`, the
//!   kernel's own text for its hints, numerals);
//! - [`tactic`]: the choice of tactic and the proof of each obligation;
//! - [`layer`]: the layer road, an obligation over the layer map proven by one reflected
//!   interval evaluation (coq/Attncheck.v's `xcheck`);
//! - [`file`]: the assembly of the files, from the budgets to the header.
//!
//! Why an obligation stays kernel-only is a [`TranslateError`].

mod ast;
mod cost;
mod file;
mod layer;
mod numeral;
mod print;
mod tactic;

pub(crate) use ast::data_name;
pub use cost::{MAX_COQ_NUMBER_BITS, MAX_EXACT_WORK, MAX_INTERVAL_GOALS, MAX_INTERVAL_TERMS};
pub(crate) use file::{footer, layer_road_decisions, stem, translate, Translation};
pub use layer::{LAYER_OP_SECONDS, MARGIN_BITS, MAX_LAYER_SECONDS, RUNGS};

use crate::kernel::expr::ExprError;
use cost::MAX_LN_CHUNKED_BLOCKS;

/// Why an obligation is not sent to Coq (it stays kernel-only): the text is the
/// reason the reports and `verify --coq` print.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TranslateError {
    // ----- reading ([`ast::Reader`])
    /// The kernel's parser or validation refuses the formula: it never reaches Coq.
    #[error("the kernel rejects the formula: {0}")]
    KernelRejects(#[from] ExprError),
    /// A data operation with no Coq definition.
    #[error("operator `{0}` has no Coq translation")]
    NoCoq(&'static str),
    /// A layer quantity's index that is not an integer expression (integer literals
    /// and bound variables with +, −, ×): Coq reads indices in `Z`.
    #[error("a layer quantity's index is not an integer expression of literals and bound variables: {0}")]
    LayerIndex(String),
    /// The dual functionals of the layer map.
    #[error(
        "`{0}` has no Coq translation: its sup and inf over a bracket of λ of the adjugate of V − λI have no interval evaluation in Coq (the other layer quantities are proven by coq/Attncheck.v's reflected evaluation of the map)"
    )]
    LayerDual(&'static str),
    /// An obligation over the layer map the reflected evaluation does not take, or
    /// beyond its budget (the text says which).
    #[error("{0}")]
    LayerRoad(String),
    /// The t of `lemma-a-row`/`lemma-b-row` is not a closed exact term.
    #[error("`{0}`: t must be an exact rational")]
    TNotExact(&'static str),
    /// The kernel does not evaluate that t exactly.
    #[error("`{0}`: the kernel does not evaluate t")]
    TNotEvaluated(&'static str),
    /// An atom the kernel's tree gives as a literal or a bound variable that is not
    /// one (not reached: the kernel has read it).
    #[error("`{0}` is neither a number nor a bound variable")]
    Unread(String),
    /// Substituting the `let`s (and so the building blocks' expansions) would make the
    /// statement larger than [`ast::MAX_LET_NODES`] nodes.
    #[error(
        "writing out its `let`s (building blocks included) would take more than {max} nodes \
         (the Coq statement substitutes each let-bound term where it is used)",
        max = ast::MAX_LET_NODES
    )]
    LetTooLarge,

    // ----- budgets ([`cost`], checked by [`file::translate`])
    /// A band term whose arguments have no integer range.
    #[error(
        "a band term's argument has no integer range the translator can bound (the kernel \
         rejects a non-integer argument when it evaluates it)"
    )]
    BandUnbounded,
    /// A band term whose arguments may leave the kernel's range (their ranges L, d, l).
    #[error(
        "a band term's arguments may leave the kernel's range (L in {}..{}, d in {}..{}, l in \
         {}..{}): the kernel rejects the formula when it evaluates it there",
        .len.0, .len.1, .d.0, .d.1, .l.0, .l.1
    )]
    BandOutside {
        /// The range of L.
        len: (i128, i128),
        /// The range of d.
        d: (i128, i128),
        /// The range of l.
        l: (i128, i128),
    },
    /// A data operation the kernel does not evaluate exactly: no size.
    #[error(
        "a data operation the kernel does not evaluate exactly has no size for the Coq budget"
    )]
    DataUnsized,
    /// A number of more bits than [`MAX_COQ_NUMBER_BITS`].
    #[error(
        "a number of up to {0} bits is beyond the Coq budget ({max} bits: Coq's integers are \
         binary lists, and a power's exponent is a unary nat)",
        max = MAX_COQ_NUMBER_BITS
    )]
    NumberBits(u64),
    /// Exact work beyond [`MAX_EXACT_WORK`].
    #[error(
        "exact evaluation of about {0} terms is beyond the Coq budget ({max})",
        max = MAX_EXACT_WORK
    )]
    ExactWork(u64),
    /// A band term in a formula that is not exact.
    #[error(
        "a band operation beside a transcendental term: Coq decides band operations by \
         computation, and `interval` cannot evaluate them"
    )]
    BandBesideTranscendental,
    /// A sum of logarithms of more blocks than [`cost::MAX_LN_CHUNKED_BLOCKS`].
    #[error(
        "the sum of ln i for i = {lo}..{hi} in blocks is {blocks} logarithms for interval, \
         beyond the Coq budget ({max})",
        max = MAX_LN_CHUNKED_BLOCKS
    )]
    LnBlocks {
        /// The first i.
        lo: i64,
        /// The last i.
        hi: i64,
        /// The number of blocks.
        blocks: i64,
    },
    /// More `interval` goals than [`MAX_INTERVAL_GOALS`].
    #[error(
        "{0} interval proofs (one per value of a forall) are beyond the Coq budget ({max})",
        max = MAX_INTERVAL_GOALS
    )]
    IntervalGoals(u64),
    /// More terms for `interval` than [`MAX_INTERVAL_TERMS`].
    #[error(
        "{0} unrolled terms for interval are beyond the Coq budget ({max})",
        max = MAX_INTERVAL_TERMS
    )]
    IntervalTerms(u64),

    // ----- proofs ([`tactic::Prover`])
    /// No disjunct the kernel proves (a hint Coq would need).
    #[error("the kernel proves no disjunct")]
    NoDisjunct,
    /// An empty range (not reached: the kernel takes only non-empty ranges).
    #[error("range {0}..{1} is empty")]
    EmptyRange(i64, i64),
    /// No witness of an `exists` the kernel proves.
    #[error("the kernel finds no witness")]
    NoWitness,
    /// A closed exact subterm the kernel does not evaluate.
    #[error("the kernel does not evaluate an exact subterm")]
    ExactSubterm,
    /// A band term beside a transcendental one (not reached: kept kernel-only by
    /// [`TranslateError::BandBesideTranscendental`] first).
    #[error("a band operation beside a transcendental term: `interval` cannot evaluate it")]
    BandInInterval,
    /// A ceiling or floor whose argument mentions a sum's variable.
    #[error("a ceiling or floor under a sum binder has no Coq translation")]
    RoundingUnderSum,
    /// A ceiling or floor the kernel does not decide.
    #[error("the kernel does not decide a ceiling or floor")]
    RoundingUndecided,
    /// A disequality between terms that are not exact whose sides the kernel does not
    /// separate.
    #[error(
        "the kernel does not separate the two sides of a disequality between non-rational terms"
    )]
    DisequalityUndecided,
}
