//! clusters/boolean-limit (\[paper\] `t:boolean`, proof lemmas of §7; clusters.md §3).
//!
//! Claim: d = 1, V > 0, QK > 0, pairwise distinct tokens x_1(0) < … < x_n(0). Then
//! P(t) → P*, every row of P* but at most one is e_1 or e_n, the remaining row lies
//! between the e_1-rows and the e_n-rows, so rank P* ≤ 3; the leaders are x_1, x_n.
//!
//! **Rescaling** (`e:Idnonresca`): y_i = √(QK)·x_i and s = V t give Q = K = V = 1.
//! On the discrete map with step Δt, x^{k+1} = x^k + Δt V Σ_j softmax_j(QK x_i x_j) x_j,
//! multiplying by a = √(QK) gives y^{k+1} = y^k + h Σ_j softmax_j(y_i y_j) y_j with
//! h = Δt·V — an exact identity. We require QK to be the square of a rational
//! (validated), so a and y^0 = a·x^0 are exact rationals and the y-run is the exact
//! map for exact data; the identity is cross-checked on every step by running the
//! x-layer with the spec's Q, K, V and Δt = h/V and reading whether the enclosures of
//! a·x^k and y^k overlap (a consistency reading: observed, it never certifies nor refutes).
//!
//! **Statement** (certified by the kernel, written to the certificate): each reference
//! value of A_n within its relative tolerance, as φ((r(1 − tol))²) ≤ 0 ≤ φ((r(1 + tol))²)
//! with φ(u) = u e^u − n² (see `statement_of`).
//!
//! **Per-step invariants** (step tallies of kernel intervals, "proven on every step",
//! pooled over the seeds of a system). They are *observations*: this module computes
//! the margins from the enclosures of the runs, and no certificate carries them, so
//! they can make the claim inconclusive and never certify or refute it (issue #24). The
//! enclosures come from the kernel's layer map with its two reductions, each proven
//! beside its code in `kernel::layer_map`: rows of P tightened by Σ_j P_ij = 1
//! (`attention_stochastic`, `rest_mass`) and, for (S), the mirror symmetry of the exact
//! iterates (`MirrorRun`, which checks the symmetry of the exact start itself):
//! - F3, gaps nondecreasing: y_{i+1}^{k+1} − y_i^{k+1} ≥ y_{i+1}^k − y_i^k. Proof: the
//!   increment is h(F(y_{i+1}) − F(y_i)) with F(s) = Σ_l y_l e^{s y_l} / Σ_l e^{s y_l} = f'(s),
//!   f(s) = log Σ_l e^{s y_l}, and F'(s) = Var_{p(s)}(y) ∈ [0, max_l y_l²]; by the mean value
//!   theorem the increment lies in h·(y_{i+1} − y_i)·[0, max_l y_l²]. Once the rows
//!   saturate, the true increment is ≈ e^{−g y}, far below the enclosure widths, so the
//!   margin is enclosed by the intersection of the direct difference of the state
//!   enclosures with this mean-value form (both contain the exact value); its lower end
//!   is 0 exactly when the order y_i^k < y_{i+1}^k is proven. A certified negative direct
//!   difference still shows as a violation. Order is kept since g > 0 initially.
//! - Pointwise row bound \[derived\]: for y_i > 0, |P_ij − δ_nj| ≤ (n − 1)e^{−g y_i} for all j
//!   (e_1 and |y_i| for y_i < 0), g the initial minimum gap. Proof: for j ≠ n,
//!   P_ij ≤ e^{y_i(y_j − y_n)} ≤ e^{−g y_i} since gaps only grow; and
//!   max_j |P_ij − δ_nj| = 1 − P_in = Σ_{l≠n} P_il. The margin uses the enclosure
//!   Σ_{l≠n} P_il ∩ (1 − P_in), which stays tight when P_in → 1. Tokens whose
//!   enclosure contains 0 are skipped (the bound is vacuous there) and counted.
//! - (S) only: every token y_i^0 ≠ 0 moves away from 0 (u̇ > 0: F is increasing with
//!   F(0) = mean = 0 for a symmetric configuration).
//!
//! **At T** (observed: asymptotic structure at a finite horizon, tolerance 10^−30 of
//! clusters.md): (i) all rows but ≤ 1 within row_tol of e_1 or e_n (upper end of the
//! enclosure of Σ_{l≠t} P_il), e_1-rows first; (ii) at most one token with |y_i| ≤ A_n
//! (A_n certified below); (iii) at most 3 distinct rows (2 for generic data); the same
//! structure at p and 2p bits. (S): y_m ≡ 0 and row m ≡ (1/n, …, 1/n) by symmetry (a
//! consistency reading of the enclosures; the proof is the symmetry), and rank P(T) ≥ 3
//! (a one-step tally, observed: the 3 × 3 minor is ≥ 1/(2n) > 0), the bound rank P* ≤ 3
//! attained. A resolution tally (observed; proven or undecided, never False) records whether
//! the enclosures at T decide the sign of every comparison with row_tol and A_n, so that
//! a run whose enclosures grew too wide is retried at a higher precision rather than
//! reported as not converged.
//!
//! **Enclosure hygiene** (each step keeps an enclosure of the exact iterate; both
//! reductions are the kernel's, `kernel::layer_map`):
//! - every row of P is intersected with 1 − (the sum of its other entries), since
//!   exact rows sum to 1 (the softmax's lower bound of a saturated entry is otherwise
//!   limited by one ulp of the row sum divided by e^{−logit width});
//! - (S): the map commutes with σ(y) = −reverse(y) (logits y_i y_j are invariant and
//!   rows are permuted accordingly), and σ(y^0) = y^0, so the exact iterates satisfy
//!   σ(y^k) = y^k: y_m^k = 0 and row m is uniform. The kernel's `MirrorRun` intersects
//!   each step's enclosures with their mirror images and sets y_m to [0, 0]; this module
//!   reads the step's direct result against the symmetry (a disjoint pair is a
//!   certified inconsistency). Without it the width of y_m grows like y_n² per step (the
//!   products P_mj·y_j do not cancel).
//!
//! **A_n** (`l:auxiliary`): A² = n² e^{−A²} ⟺ u e^u = n² with u = A², i.e. u = W(n²).
//! φ(u) = u e^u − n² is strictly increasing on u ≥ 0 (φ' = (1 + u)e^u > 0), φ(0) < 0; a
//! bisection keeps φ(lo) < 0 < φ(hi), each sign certified in intervals, so u ∈ [lo, hi]
//! and A_n ∈ [√lo, √hi].

mod enclosure;
pub mod hypotheses;
mod runs;
mod simulate;
mod structure;

pub use enclosure::threshold_a;
use runs::approx;

use super::common::fmt_q;
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::dynamics::discrete::{max_width, mids, DiscreteMap, Form, State};
use crate::dynamics::model::{tokens, Mat, MatrixSpec, System};
use crate::dynamics::observe::{Invariant, StepView};
use crate::dynamics::plots;
use crate::kernel::expr::build::{add, and, exp, ge, int, le, mul, pow, q, sub, Term};
use crate::kernel::Checked;
use crate::kernel::{Certainty, Interval, Statement};
use crate::outcome::{Observations, Presentation, Table};
use crate::reading::{Agreement, Reading, StepTally};
use crate::spec::{ensure, exact, FieldError};
use rug::float::Round;
use rug::{Float, Rational};
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// One d = 1 system: Q, K ∈ ℝ^{m×1}, V ∈ ℝ^{1×1}; only QᵀK and V matter.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemSpec {
    /// Q (m × 1).
    pub q: MatrixSpec,
    /// K (m × 1).
    pub k: MatrixSpec,
    /// V (1 × 1), positive.
    pub v: MatrixSpec,
}

/// A reference value of the threshold A_n (clusters.md §4).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Threshold {
    /// The number of tokens n ≥ 1.
    pub n: u32,
    /// The reference value of A_n (exact decimal literal as printed).
    pub reference: String,
}

/// Parameters of clusters/boolean-limit as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The y-time step h = Δt·V (exact literal, 0 < h ≤ 1).
    pub h: String,
    /// Number of steps; the horizon is T = steps·h in y-time.
    pub steps: usize,
    /// Tolerance of the limit structure at T (exact literal, 0 < tol < 1).
    pub row_tol: String,
    /// Number of tokens of the generic witnesses (G).
    pub n: usize,
    /// `[lo, hi]` of the generic tokens (exact literals).
    pub range: [String; 2],
    /// Grid exponent of the generic tokens (multiples of 2^−grid_bits).
    pub grid_bits: u32,
    /// One generic witness per seed (tokens drawn in x, then sorted).
    pub seeds: Vec<u64>,
    /// The d = 1 systems; each runs every seed.
    pub systems: Vec<SystemSpec>,
    /// The symmetric witness (S) in y (odd count, symmetric about 0, distinct).
    pub symmetric: Vec<String>,
    /// Reference values of A_n.
    pub thresholds: Vec<Threshold>,
    /// Relative tolerance for the A_n references.
    pub threshold_rel_tol: String,
    /// The last step at which the lemma's hypotheses are sought ([`hypotheses`]).
    pub hypotheses_max_steps: usize,
}

/// The most steps a run may ask for (a budget).
const MAX_STEPS: usize = 100_000;
/// The most tokens a witness may have.
const MAX_N: usize = 64;
/// The most walk work a spec may ask for, (seeds·systems + 1)·n²·(steps +
/// hypotheses_max_steps), weighed at the spec's precision
/// ([`crate::claims::shape::Resolving::weigh`]): 2^28. The committed full profile is 33·64·700 ≈ 2^20.5, and its
/// statement and run take seconds, so the bound is about half an hour; each field's own
/// limit alone admitted (seeds·2 + 1)·64²·200000 for any number of seeds.
pub const MAX_WALK_WORK: u128 = 1 << 28;

/// A resolved d = 1 system.
struct Scalars {
    /// V > 0.
    v: Rational,
    /// QᵀK > 0.
    qk: Rational,
    /// a = √(QK), exact.
    a: Rational,
    /// The system itself (for the x-layer cross-check).
    sys: System,
}

/// Parameters of clusters/boolean-limit, resolved: the exact data of a run.
pub struct Params {
    n: usize,
    h: Rational,
    steps: usize,
    row_tol: Rational,
    systems: Vec<Scalars>,
    /// (seed, sorted x^0) per seed.
    generic: Vec<(u64, Vec<Rational>)>,
    /// The symmetric witness, sorted.
    symmetric: Vec<Rational>,
    thresholds: Vec<(u32, Rational)>,
    rel_tol: Rational,
    /// The last step at which the lemma's hypotheses are sought.
    max_k: usize,
}

/// √q for a rational that is the square of a rational (lowest terms: numerator and
/// denominator both perfect squares), else `None`.
fn rational_sqrt(q: &Rational) -> Option<Rational> {
    if *q < 0 {
        return None;
    }
    let (n, d) = (q.numer(), q.denom());
    (n.is_perfect_square() && d.is_perfect_square())
        .then(|| Rational::from((n.clone().sqrt(), d.clone().sqrt())))
}

fn scalar(m: &Mat) -> Rational {
    m.at(0, 0).clone()
}

fn pos(field: &str, s: &str) -> Result<Rational, FieldError> {
    let q = exact(field, s)?;
    ensure(q > 0, field, "must be positive")?;
    Ok(q)
}

impl Raw {
    fn setup(&self, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let h = pos("h", &self.h)?;
        ensure(h <= 1, "h", "must be at most 1")?;
        ensure(
            (1..=MAX_STEPS).contains(&self.steps),
            "steps",
            format!("must be between 1 and {MAX_STEPS}"),
        )?;
        let row_tol = pos("row_tol", &self.row_tol)?;
        ensure(row_tol < 1, "row_tol", "must be below 1")?;
        ensure(
            (2..=MAX_N).contains(&self.n),
            "n",
            format!("must be between 2 and {MAX_N}"),
        )?;
        ensure(self.grid_bits <= 60, "grid_bits", "must be at most 60")?;
        ensure(!self.seeds.is_empty(), "seeds", "must not be empty")?;
        let mut generic = Vec::with_capacity(self.seeds.len());
        for (i, &seed) in self.seeds.iter().enumerate() {
            let spec = MatrixSpec::Random {
                uniform: self.range.clone(),
                seed,
                grid_bits: Some(self.grid_bits),
                rows: Some(self.n),
            };
            let m = tokens(&format!("seeds[{i}]"), &spec, self.n, 1, true).map_err(|e| {
                // name the range for a bad range, the seed for coinciding tokens
                if e.field.contains("uniform") || e.reason.contains("lo ≤ hi") {
                    FieldError::new("range", e.reason)
                } else {
                    e
                }
            })?;
            let mut x: Vec<Rational> = m.data;
            x.sort();
            generic.push((seed, x));
        }
        ensure(!self.systems.is_empty(), "systems", "must not be empty")?;
        let mut systems = Vec::with_capacity(self.systems.len());
        for (i, s) in self.systems.iter().enumerate() {
            let f = |x: &str| format!("systems[{i}].{x}");
            let q = s.q.resolve(&f("q"), None, 1)?;
            let k = s.k.resolve(&f("k"), Some(q.rows), 1)?;
            let v = s.v.resolve(&f("v"), Some(1), 1)?;
            let sys = System::new(q, k, v);
            let (v, qk) = (scalar(&sys.v), scalar(&sys.qk));
            ensure(
                v > 0,
                f("v"),
                format!("V = {} must be positive (t:boolean needs V > 0)", fmt_q(&v)),
            )?;
            ensure(
                qk > 0,
                f("q"),
                format!(
                    "QᵀK = {} must be positive (t:boolean needs QK > 0)",
                    fmt_q(&qk)
                ),
            )?;
            let a = rational_sqrt(&qk).ok_or_else(|| {
                FieldError::new(
                    f("q"),
                    format!(
                        "QᵀK = {} must be the square of a rational, so that y = √(QK)·x is exact",
                        fmt_q(&qk)
                    ),
                )
            })?;
            systems.push(Scalars { v, qk, a, sys });
        }
        let m = self.symmetric.len();
        let mut sym = Vec::with_capacity(m);
        for (i, s) in self.symmetric.iter().enumerate() {
            let f = format!("symmetric[{i}]");
            let q = exact(&f, s)?;
            if let Some(j) = sym.iter().position(|x: &Rational| *x == q) {
                return Err(FieldError::new(
                    f,
                    format!(
                        "equals symmetric[{j}]; this claim needs pairwise distinct initial tokens"
                    ),
                ));
            }
            sym.push(q);
        }
        ensure(
            m >= 3 && m % 2 == 1 && m <= MAX_N,
            "symmetric",
            format!("needs an odd number of tokens, 3 to {MAX_N}"),
        )?;
        sym.sort();
        let symmetric_ok = (0..m).all(|i| sym[i] == Rational::from(-&sym[m - 1 - i]));
        ensure(
            symmetric_ok,
            "symmetric",
            "must be symmetric about 0 (y ↦ −y maps the set to itself)",
        )?;
        ensure(
            !self.thresholds.is_empty(),
            "thresholds",
            "must not be empty",
        )?;
        let mut thresholds = Vec::with_capacity(self.thresholds.len());
        for (i, t) in self.thresholds.iter().enumerate() {
            ensure(
                (1..=1_000_000).contains(&t.n),
                format!("thresholds[{i}].n"),
                "must be between 1 and 10^6",
            )?;
            thresholds.push((
                t.n,
                pos(&format!("thresholds[{i}].reference"), &t.reference)?,
            ));
        }
        let rel_tol = pos("threshold_rel_tol", &self.threshold_rel_tol)?;
        ensure(rel_tol < 1, "threshold_rel_tol", "must be below 1")?;
        ensure(
            (1..=MAX_STEPS).contains(&self.hypotheses_max_steps),
            "hypotheses_max_steps",
            format!("must be between 1 and {MAX_STEPS}"),
        )?;
        // the walks' work: every witness (each seed of each system, and (S)) for the run's
        // steps and, in the statement builder (which `verify` runs too), up to
        // hypotheses_max_steps more, each step n² pairs
        let witnesses = (self.seeds.len() * systems.len() + 1) as u128;
        let tokens = self.n.max(sym.len()) as u128;
        let work =
            witnesses * tokens * tokens * (self.steps as u128 + self.hypotheses_max_steps as u128);
        ensure(
            at.weigh(work) <= MAX_WALK_WORK,
            "hypotheses_max_steps",
            format!(
                "(seeds·systems + 1)·n²·(steps + hypotheses_max_steps) is {}, above the \
                 bound 2^28 (about half an hour): use fewer seeds, tokens or steps, or a \
                 lower precision",
                at.show(work)
            ),
        )?;
        Ok(Params {
            n: self.n,
            h,
            steps: self.steps,
            row_tol,
            systems,
            generic,
            symmetric: sym,
            thresholds,
            rel_tol,
            max_k: self.hypotheses_max_steps,
        })
    }
}

/// clusters/boolean-limit.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        r.setup(at)
    }
    fn statement(
        s: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(statement_of(s, claim)))
    }
    /// The flow's part holds the A_n references, the discrete map's part the lemma's
    /// hypotheses at K ([`hypotheses::PART`]): the names of the statement the builder makes.
    fn parts(s: &Params) -> crate::verdict::Parts {
        let flow: Vec<String> = s
            .thresholds
            .iter()
            .map(|(n, r)| threshold_name(*n, r, &s.rel_tol))
            .collect();
        statement_of(s, "")
            .obligations
            .iter()
            .map(|o| {
                let part = if flow.contains(&o.name) {
                    FLOW_PART
                } else {
                    hypotheses::PART
                };
                (o.name.clone(), part.to_string())
            })
            .collect()
    }
    type Witness = runs::Found;
    fn witness(s: &Params, ctx: &Ctx) -> runs::Found {
        runs::witness(s, ctx)
    }
    fn observe(
        s: &Params,
        w: &runs::Found,
        proof: Option<&Checked>,
        ctx: &Ctx,
        obs: &mut Observations,
    ) {
        runs::observe(s, w, proof, ctx, obs);
    }
    fn present(
        s: &Params,
        w: &runs::Found,
        proof: Option<&Checked>,
        ctx: &Ctx,
        pr: &mut Presentation,
    ) {
        runs::present(s, w, proof, ctx, pr);
    }
}

/// The name of the obligation on the reference value of A_n.
fn threshold_name(n: u32, reference: &Rational, rel_tol: &Rational) -> String {
    format!(
        "A_{n} matches the reference {} within relative {}",
        approx(reference, 12),
        approx(rel_tol, 3)
    )
}

/// The statement: each reference value r of A_n (`l:auxiliary`) within relative tol.
/// A_n² is the root u* of φ(u) = u e^u − n², strictly increasing on u ≥ 0, so for
/// r > 0 and 0 < tol < 1: |A_n − r| ≤ tol·r ⟺ (r(1 − tol))² ≤ u* ≤ (r(1 + tol))² ⟺
/// φ((r(1 − tol))²) ≤ 0 ≤ φ((r(1 + tol))²).
fn statement_of(s: &Params, claim: &str) -> Statement {
    let mut st = Statement::new(claim);
    for (n, r) in &s.thresholds {
        let n2 = u64::from(*n) * u64::from(*n);
        let u = |factor: Term| pow(mul([q(r), factor]), 2);
        let lo = || u(sub(int(1), q(&s.rel_tol)));
        let hi = || u(add([int(1), q(&s.rel_tol)]));
        st.state(
            threshold_name(*n, r, &s.rel_tol),
            &and([
                le(mul([lo(), exp(lo())]), n2.into()),
                ge(mul([hi(), exp(hi())]), n2.into()),
            ]),
        );
    }
    hypotheses::state(s, &mut st);
    st
}

/// The part of the claim about the flow (`t:boolean` itself): A_n certified, the limit
/// observed on the discrete map at T; capped at the spec's rigour.
pub const FLOW_PART: &str = "(F) the flow t:boolean";
