//! clusters/higher-dim-remark: the example of `r:higherdimclus` (clusters.md §3) is
//! internally inconsistent. With d = n = 2, V = Q = K = I, x₁(0) = (1, ε),
//! x₂(0) = (1, −ε), the paper says the tokens form a single cluster (1, 0) yet
//! P(t) → I. In fact z₁,₂(t) → (1, ±C(ε)) with C(ε) > 0: two clusters.
//!
//! # Analysis \[derived\]
//! By symmetry x₁,₂(t) = (e^t, ±b(t)) with
//!
//! ```text
//! ḃ = tanh(b²)·b,  b(0) = ε,   P₁₁ = P₂₂ = 1/(1 + e^{−2b²}),   P₁₂ = P₂₁ = 1/(1 + e^{2b²}).
//! ```
//!
//! (The logits are ⟨x_i, x_j⟩ = e^{2t} ± b², so P₁₂ = 1/(1 + e^{2b²}); the second
//! coordinate obeys ḃ = (P₁₁ − P₁₂)b = tanh(b²)b.) With c = e^{−t}b (the second
//! coordinate of z₁), ċ = (tanh(b²) − 1)c ≤ 0, so c decreases to a limit
//! C(ε) = lim e^{−t}b(t). Separating variables, d ln b / dt = tanh(b²) and
//! d ln c / dt = tanh(b²) − 1 = −2/(e^{2b²} + 1); substituting u = b², du = 2u tanh(u) dt,
//!
//! ```text
//! ln(C/ε) = −∫_{ε²}^∞ 2/(e^{2u} + 1) · du / (2u tanh u) = −∫_{ε²}^∞ du / (u(e^{2u} − 1)),
//! ```
//!
//! using (e^{2u} + 1) tanh u = e^{2u} − 1. Hence C(ε) = ε·exp(−∫_{ε²}^∞ du/(u(e^{2u} − 1))).
//!
//! **Lower bound.** e^{2u} − 1 ≥ 2u, so ∫_{ε²}^∞ du/(u(e^{2u} − 1)) ≤ ∫_{ε²}^∞ du/(2u²) = 1/(2ε²)
//! and C(ε) ≥ L(ε) = ε e^{−1/(2ε²)} > 0. Since e^{−t}b decreases to C, b(t) ≥ C e^t ≥ L e^t
//! and P₁₂(t) = 1/(1 + e^{2b²}) ≤ e^{−2b²} ≤ exp(−2C²e^{2t}) ≤ exp(−2L²e^{2t}) → 0.
//! So z₁ → (1, C) and z₂ → (1, −C) are two distinct limits, at distance 2C ≥ 2L > 0,
//! and the literal claim "single cluster" is false; P → I holds.
//! (General fact: if all tokens converged to one point p, every logit would tend
//! to the same value and P → J/n, never I.)
//!
//! # Checks
//! - (a) certified, in outward-rounded intervals: L(ε) > 0 for each ε, so the
//!   literal claim lim z₁ = lim z₂ is certified false → `refuted`; the closed-form
//!   bound P₁₂(T) ≤ exp(−2L²e^{2T}) at T = `bound_t`, reported as P₁₂ ≤ 10^{−X} with a
//!   certified lower bound on X.
//! - (b) observed: C(ε) by tanh–sinh quadrature in MPFR at the spec's precision of
//!   I(ε) = ∫_0^∞ ds / (e^{2ε²e^s} − 1) (the substitution u = ε²e^s, du = u ds, removes
//!   the endpoint singularity), against the §4 table.
//! - (c) observed: the full two-particle flow in z with the flow engine's RK4
//!   ([`crate::dynamics::flow`]) to `t_end` at two step sizes and two precisions,
//!   against the §4 trajectory table (b, e^{−t}b, P₁₂ from the engine's attention
//!   matrix), plus the reduced ODE ċ = −2c/(e^{2b²} + 1) (b = e^t c) by a scalar
//!   RK4 in MPFR as a cross-check.
//! - Demonstration (not asserted): the same flow at 53 bits with the textbook,
//!   uncentered logits ⟨e^t z_i, e^t z_j⟩ = e^{2t}(1 ± c²): once c² < 2^{−53} the two
//!   logits round to the same value, P = J/2 exactly and both tokens drift to (1, 0).
//!
//! # Layout
//! This file holds the setup (parameters, their resolution) and the small helpers;
//! `statement` is (a), `quadrature` (b), `trajectories` (c), and `run` the witness
//! (every computation, in parallel), the observations and the presentation.

mod quadrature;
mod run;
mod statement;
mod trajectories;

pub use quadrature::c_quadrature;
pub use statement::{
    bound_exponent10, exponent10_term, lower_bound, lower_term, single_cluster_name,
};
use statement::{exponent_hint, statement_of};
pub use trajectories::{reduced, system_and_tokens, trajectory, Trajectory};

use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::dynamics::flow::{self, FlowOptions, Frame, Vars};
use crate::dynamics::model::{Mat, System};
use crate::kernel::{expr, parse_rational, Interval, Statement};
use crate::outcome::{Plot, Series, Style, Table};
use crate::spec::{check_each, ensure, exact, FieldError};
use rayon::prelude::*;
use rug::float::Constant;
use rug::ops::Pow;
use rug::{Float, Rational};
use serde::{Deserialize, Serialize};

/// One row of the §4 table of limits: ε, C(ε) and the lower bound L(ε).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    /// ε > 0 (exact literal).
    pub eps: String,
    /// Reference C(ε) (decimal).
    pub c: String,
    /// Reference L(ε) = ε e^{−1/(2ε²)} as printed (its last digit is rounded).
    pub lower: String,
}

/// One row of the §4 trajectory table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryRow {
    /// Time (exact literal; a multiple of every step).
    pub t: String,
    /// b(t), the second coordinate of x₁.
    pub b: String,
    /// e^{−t}b(t), the second coordinate of z₁.
    pub c: String,
    /// P₁₂(t).
    pub p12: String,
}

/// Parameters of clusters/higher-dim-remark as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The ε of the limit table (a), (b).
    pub limits: Vec<Limit>,
    /// Relative tolerance of the quadrature against the table (clusters.md §3: 1e−9).
    pub c_rel_tol: String,
    /// The time T of the closed-form bound P₁₂(T) ≤ exp(−2L²e^{2T}).
    pub bound_t: String,
    /// The ε of the simulated trajectory (c).
    pub eps: String,
    /// The end time of the simulation.
    pub t_end: String,
    /// RK4 steps (at least two distinct; each divides t_end, the reference times and `sample`).
    pub steps: Vec<String>,
    /// MPFR precisions of the flow (at least two distinct, each ≥ ⌈2.886·t_end⌉ + 61).
    pub precisions: Vec<u32>,
    /// Relative tolerance of the trajectory against the table and between runs (§3: 1e−6).
    pub rel_tol: String,
    /// The §4 trajectory table.
    pub reference: Vec<TrajectoryRow>,
    /// Step of the reduced-ODE cross-check.
    pub reduced_step: String,
    /// Precision of the demonstration run (e.g. 53 = f64's mantissa).
    pub demo_precision: u32,
    /// RK4 step of the demonstration run.
    pub demo_step: String,
    /// Sampling interval of the plotted trajectories (a multiple of the first step
    /// and of the demonstration step).
    pub sample: String,
}

/// The parameters as exact numbers.
#[derive(Debug, Clone)]
pub struct Params {
    /// (ε, C reference, L reference text).
    pub limits: Vec<(Rational, Rational, String)>,
    /// Per limit, L(ε) exact and half a unit in its last printed digit.
    pub lower: Vec<(Rational, Rational)>,
    /// Quadrature tolerance.
    pub c_rel_tol: Rational,
    /// T of the closed-form bound.
    pub bound_t: Rational,
    /// Trajectory ε.
    pub eps: Rational,
    /// End time.
    pub t_end: Rational,
    /// Steps.
    pub steps: Vec<Rational>,
    /// Precisions.
    pub precisions: Vec<u32>,
    /// Trajectory tolerance.
    pub rel_tol: Rational,
    /// (t, b, c, P₁₂) references.
    pub reference: Vec<[Rational; 4]>,
    /// Reduced-ODE step.
    pub reduced_step: Rational,
    /// Demonstration precision.
    pub demo_precision: u32,
    /// Demonstration step.
    pub demo_step: Rational,
    /// The reference texts (b, c, P₁₂) as written in the spec.
    pub reference_txt: Vec<[String; 3]>,
    /// Sampling interval.
    pub sample: Rational,
}

/// The smallest precision for the flow up to time T: the logits e^{2T}‖z‖² need
/// log₂ e^{2T} ≈ 2.885·T bits plus 60 bits for O(1) differences (clusters.md §2).
pub fn min_flow_prec(t_end: &Rational) -> u32 {
    let bits = t_end * Rational::from((2886, 1000));
    (bits.ceil().numer().to_u32().unwrap_or(u32::MAX)).saturating_add(61)
}

fn divides(h: &Rational, t: &Rational) -> bool {
    *Rational::from(t / h).denom() == 1
}

fn in_open_unit(field: &str, s: &str) -> Result<Rational, FieldError> {
    let x = exact(field, s)?;
    ensure(x > 0 && x < 1, field, "must be a tolerance in (0, 1)")?;
    Ok(x)
}

impl Raw {
    /// Parses and validates every field; errors name the field.
    fn parsed(&self) -> Result<Params, FieldError> {
        check_each(&self.limits, "limits", |_, _| Ok(()))?;
        let (mut limits, mut lower) = (Vec::new(), Vec::new());
        for (i, l) in self.limits.iter().enumerate() {
            let f = |k: &str| format!("limits[{i}].{k}");
            let e = exact(&f("eps"), &l.eps)?;
            ensure(
                e >= Rational::from((1, 100)) && e <= 2,
                f("eps"),
                "ε must lie in [1/100, 2] (the quadrature's truncation assumes 2ε² ≤ 8)",
            )?;
            ensure(
                !limits
                    .iter()
                    .any(|(x, _, _): &(Rational, Rational, String)| *x == e),
                f("eps"),
                "the ε of the limit table must be distinct",
            )?;
            let c = exact(&f("c"), &l.c)?;
            ensure(c > 0, f("c"), "C(ε) is positive")?;
            let lo = exact(&f("lower"), &l.lower)?;
            ensure(lo > 0, f("lower"), "L(ε) is positive")?;
            let hu = half_unit(&l.lower).ok_or_else(|| {
                FieldError::new(
                    f("lower"),
                    "write a decimal such as \"0.0677\" or \"1.16e-3\"",
                )
            })?;
            limits.push((e, c, l.lower.clone()));
            lower.push((lo, hu));
        }
        let c_rel_tol = in_open_unit("c_rel_tol", &self.c_rel_tol)?;
        let bound_t = exact("bound_t", &self.bound_t)?;
        ensure(
            (0..=1000).contains(&bound_t),
            "bound_t",
            "must lie in [0, 1000]",
        )?;
        let eps = exact("eps", &self.eps)?;
        ensure(
            eps >= Rational::from((1, 100)) && eps <= 2,
            "eps",
            "ε must lie in [1/100, 2]",
        )?;
        let t_end = exact("t_end", &self.t_end)?;
        ensure(t_end > 0 && t_end <= 200, "t_end", "must lie in (0, 200]")?;
        ensure(
            self.steps.len() >= 2,
            "steps",
            "give two step sizes: `supported` needs two steps to agree",
        )?;
        let mut steps = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            let f = format!("steps[{i}]");
            let h = exact(&f, s)?;
            ensure(h > 0, &f, "the step must be positive")?;
            ensure(
                divides(&h, &t_end),
                &f,
                "t_end must be a multiple of the step",
            )?;
            ensure(
                Rational::from(&t_end / &h) <= 2_000_000,
                &f,
                "at most 2,000,000 steps",
            )?;
            ensure(!steps.contains(&h), &f, "the steps must be distinct")?;
            steps.push(h);
        }
        ensure(
            self.precisions.len() >= 2,
            "precisions",
            "give two precisions: `supported` needs two precisions to agree",
        )?;
        let pmin = min_flow_prec(&t_end);
        for (i, &p) in self.precisions.iter().enumerate() {
            let f = format!("precisions[{i}]");
            ensure(
                p >= pmin && p <= 4096,
                &f,
                format!(
                    "{p} bits is out of range: the logits e^{{2t}}‖z‖² up to t_end need ≥ {pmin} bits \
                     (⌈2.886·t_end⌉ + 61, clusters.md §2), at most 4096"
                ),
            )?;
            ensure(
                !self.precisions[..i].contains(&p),
                &f,
                "the precisions must be distinct",
            )?;
        }
        let rel_tol = in_open_unit("rel_tol", &self.rel_tol)?;
        check_each(&self.reference, "reference", |_, _| Ok(()))?;
        let mut reference: Vec<[Rational; 4]> = Vec::new();
        for (i, r) in self.reference.iter().enumerate() {
            let f = |k: &str| format!("reference[{i}].{k}");
            let t = exact(&f("t"), &r.t)?;
            ensure(t > 0 && t <= t_end, f("t"), "must lie in (0, t_end]")?;
            if let Some(prev) = reference.last() {
                ensure(t > prev[0], f("t"), "times must increase")?;
            }
            for (k, h) in steps.iter().enumerate() {
                ensure(
                    divides(h, &t),
                    f("t"),
                    format!("must be a multiple of steps[{k}]"),
                )?;
            }
            let b = exact(&f("b"), &r.b)?;
            let c = exact(&f("c"), &r.c)?;
            let p = exact(&f("p12"), &r.p12)?;
            ensure(b > 0, f("b"), "must be positive")?;
            ensure(c > 0, f("c"), "must be positive")?;
            ensure(p > 0 && p < 1, f("p12"), "must lie in (0, 1)")?;
            reference.push([t, b, c, p]);
        }
        let reduced_step = exact("reduced_step", &self.reduced_step)?;
        ensure(reduced_step > 0, "reduced_step", "must be positive")?;
        ensure(
            divides(&reduced_step, &t_end)
                && reference.iter().all(|r| divides(&reduced_step, &r[0])),
            "reduced_step",
            "t_end and every reference time must be multiples of it",
        )?;
        ensure(
            Rational::from(&t_end / &reduced_step) <= 2_000_000,
            "reduced_step",
            "at most 2,000,000 steps",
        )?;
        let p0 = self.precisions[0];
        ensure(
            self.demo_precision >= 24 && self.demo_precision < p0,
            "demo_precision",
            format!("must lie in [24, precisions[0] = {p0})"),
        )?;
        let demo_step = exact("demo_step", &self.demo_step)?;
        ensure(
            demo_step > 0 && divides(&demo_step, &t_end),
            "demo_step",
            "must be positive and divide t_end",
        )?;
        ensure(
            Rational::from(&t_end / &demo_step) <= 2_000_000,
            "demo_step",
            "at most 2,000,000 steps",
        )?;
        let sample = exact("sample", &self.sample)?;
        ensure(
            sample > 0
                && divides(&steps[0], &sample)
                && divides(&demo_step, &sample)
                && divides(&sample, &t_end),
            "sample",
            "must be a positive multiple of steps[0] and of demo_step that divides t_end",
        )?;
        Ok(Params {
            limits,
            lower,
            c_rel_tol,
            bound_t,
            eps,
            t_end,
            steps,
            precisions: self.precisions.clone(),
            rel_tol,
            reference,
            reduced_step,
            demo_precision: self.demo_precision,
            demo_step,
            reference_txt: self
                .reference
                .iter()
                .map(|r| [r.b.clone(), r.c.clone(), r.p12.clone()])
                .collect(),
            sample,
        })
    }
}

/// clusters/higher-dim-remark (its [`crate::claims::shape::Claim`] impl is in `run`).
pub struct Claim;

/// Half a unit in the last printed digit of a decimal literal ("0.0677" → 5·10^−5,
/// "1.16e-3" → 5·10^−6), or `None` if it is not a plain decimal.
pub fn half_unit(s: &str) -> Option<Rational> {
    let s = s.trim();
    let (mant, exp) = match s.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (s, 0),
    };
    let mant = mant.trim_start_matches(['+', '-']);
    if mant.is_empty() || !mant.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let decimals = mant.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
    let e = exp - decimals;
    let ten = Rational::from(10);
    let unit = if e >= 0 {
        ten.pow(e as u32)
    } else {
        Rational::from(1) / ten.pow((-e) as u32)
    };
    Some(unit / 2)
}

/// |x − r| / |r| at the precision of `x`.
fn rel(x: &Float, r: &Rational) -> Float {
    let prec = x.prec();
    let d = Float::with_val(prec, x - r).abs();
    d / Float::with_val(prec, r).abs()
}

/// |x − y| / |y|.
fn rel_f(x: &Float, y: &Float) -> Float {
    let prec = x.prec().max(y.prec());
    let d = Float::with_val(prec, x - y).abs();
    d / Float::with_val(prec, y.abs_ref())
}

/// A point value printed to `digits` significant digits (display only).
fn fmt_f(x: &Float, digits: usize) -> String {
    Interval::from_endpoints(x.clone(), x.clone()).fmt_mid(digits)
}

/// log₁₀ x as f64 (for figures of numbers below f64's range).
fn log10_f64(x: &Float) -> f64 {
    Float::with_val(64, x.log10_ref()).to_f64()
}

fn fmt_q(q: &Rational) -> String {
    if *q.denom() == 1 {
        q.to_string()
    } else {
        fmt_f(&Float::with_val(64, q), 6)
    }
}

/// The reference text of table row `k`, column `q` (1 = b, 2 = c, 3 = P₁₂), as given in the spec.
fn self_txt(p: &Params, k: usize, q: usize) -> String {
    p.reference_txt[k][q - 1].clone()
}
