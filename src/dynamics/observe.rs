//! Per-step observers: an invariant is stated declaratively as a *margin* — an
//! interval enclosure of (right side − left side) of an inequality, which holds
//! iff the margin is ≥ 0 — evaluated on every step of the discrete map. The tally
//! records on how many steps the kernel proved it, on how many it could not decide,
//! whether any step certifiably violates it, and the smallest margin seen.
//!
//! Two readings of a tally, both honest:
//! - [`Tally::certainty`]: proven on every step (True), certifiably violated on some
//!   step (False), else Unknown;
//! - [`Tally::consistency`]: for invariants that are *theorems* of the map (F1–F4 of
//!   clusters.md), "the enclosures never certify a violation" (True/False exactly);
//!   the invariant is then certified by the theorem plus this consistency
//!   (clusters.md §2). Claims say which reading they record.

use super::discrete::State;
use crate::kernel::{Certainty, Interval};
use crate::verdict::Checks;

/// What an invariant sees on one step: the state before and after.
pub struct StepView<'a> {
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// State k (with P(x^k)).
    pub before: &'a State,
    /// State k + 1.
    pub after: &'a State,
}

/// The per-step record of one invariant.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Steps checked.
    pub steps: usize,
    /// Steps on which the margin was proven ≥ 0.
    pub proven: usize,
    /// Steps on which the margin was proven < 0.
    pub violated: usize,
    /// The first violating step (k of the state after the step).
    pub first_violation: Option<usize>,
    /// The first undecided step.
    pub first_unknown: Option<usize>,
    /// The smallest lower end of the margin (rounded down) and its step.
    pub min_margin: Option<(f64, usize)>,
}

impl Tally {
    /// Records one step's margin.
    pub fn record(&mut self, k: usize, margin: &Interval) {
        self.steps += 1;
        let lo = margin.lo_f64();
        if self.min_margin.map_or(true, |(m, _)| lo < m) {
            self.min_margin = Some((lo, k));
        }
        if !margin.lo().is_sign_negative() || margin.lo().is_zero() {
            self.proven += 1;
        } else if margin.hi().is_sign_negative() && !margin.hi().is_zero() {
            self.violated += 1;
            self.first_violation.get_or_insert(k);
        } else {
            self.first_unknown.get_or_insert(k);
        }
    }
    /// Proven on every step / violated on some step / else undecided.
    pub fn certainty(&self) -> Certainty {
        if self.violated > 0 {
            Certainty::False
        } else if self.proven == self.steps {
            Certainty::True
        } else {
            Certainty::Unknown
        }
    }
    /// "No step certifiably violates it" (exact).
    pub fn consistency(&self) -> Certainty {
        Certainty::exact(self.violated == 0)
    }
    /// A one-line account for the consistency reading: how many steps the
    /// enclosures decided outright, and that none contradicts the theorem.
    pub fn consistency_summary(&self) -> String {
        let mut s = if self.violated == 0 {
            format!(
                "no step of {} certifiably violates it; the enclosures alone prove it on {} steps (on the others \
                 the true margin is below the enclosure width, which the theorem allows)",
                self.steps, self.proven
            )
        } else {
            format!(
                "violated on {} of {} steps, first at step {}",
                self.violated,
                self.steps,
                self.first_violation.unwrap_or(0)
            )
        };
        if let Some((m, k)) = self.min_margin {
            s += &format!("; smallest margin ≥ {m:.3e} (step {k})");
        }
        s
    }
    /// A one-line account: counts, the first violation or undecided step, the smallest margin.
    pub fn summary(&self) -> String {
        let mut s = format!("proven on {}/{} steps", self.proven, self.steps);
        if let Some(k) = self.first_violation {
            s += &format!("; violated on {} steps, first at step {k}", self.violated);
        }
        if let Some(k) = self.first_unknown {
            s += &format!("; undecided first at step {k}");
        }
        if let Some((m, k)) = self.min_margin {
            s += &format!("; smallest margin ≥ {m:.3e} (step {k})");
        }
        s
    }
}

/// An invariant: a name, a margin function and its tally.
pub struct Invariant<'f> {
    /// The statement, in words (becomes the check's name).
    pub name: String,
    /// The record so far.
    pub tally: Tally,
    margin: Box<dyn FnMut(&StepView) -> Interval + 'f>,
}

impl<'f> Invariant<'f> {
    /// An invariant whose margin (≥ 0 iff it holds) is computed by `margin`.
    pub fn new(name: impl Into<String>, margin: impl FnMut(&StepView) -> Interval + 'f) -> Self {
        Invariant {
            name: name.into(),
            tally: Tally::default(),
            margin: Box::new(margin),
        }
    }
    /// Evaluates the margin on one step and records it.
    pub fn check(&mut self, v: &StepView) {
        let m = (self.margin)(v);
        self.tally.record(v.after.k, &m);
    }
    /// Records the invariant as a certified check: proven on every step.
    pub fn certify_into(&self, checks: &mut Checks) {
        checks.certify(
            self.name.clone(),
            self.tally.certainty(),
            self.tally.summary(),
        );
    }
    /// Records the invariant as a certified consistency check (for theorems of
    /// the map: "the enclosures never certify a violation").
    pub fn certify_consistency_into(&self, checks: &mut Checks) {
        checks.certify(
            format!(
                "{} (a theorem of the map; no step certifiably violates it)",
                self.name
            ),
            self.tally.consistency(),
            self.tally.consistency_summary(),
        );
    }
}

/// min over a non-empty list of intervals (enclosure of the minimum).
pub fn min_all<'a>(it: impl IntoIterator<Item = &'a Interval>) -> Interval {
    let mut it = it.into_iter();
    let first = it.next().expect("min_all of an empty list").clone();
    it.fold(first, |m, x| m.min(x))
}

/// max over a non-empty list of intervals (enclosure of the maximum).
pub fn max_all<'a>(it: impl IntoIterator<Item = &'a Interval>) -> Interval {
    let mut it = it.into_iter();
    let first = it.next().expect("max_all of an empty list").clone();
    it.fold(first, |m, x| m.max(x))
}

/// Enclosures of the squared Euclidean norms ‖u_i‖² of the rows of an n × d state.
pub fn sq_norms(u: &[Interval], n: usize, d: usize) -> Vec<Interval> {
    (0..n)
        .map(|i| {
            let row = &u[i * d..(i + 1) * d];
            let mut s = row[0].powi(2);
            for x in &row[1..] {
                s.add_assign(&x.powi(2));
            }
            s
        })
        .collect()
}

/// Enclosures of ⟨w, u_i⟩ for a fixed vector w (a support-function or
/// dual-functional evaluation) over the rows of an n × d state.
pub fn functional(u: &[Interval], n: usize, d: usize, w: &[Interval]) -> Vec<Interval> {
    (0..n)
        .map(|i| {
            let row = &u[i * d..(i + 1) * d];
            let mut s = &row[0] * &w[0];
            for c in 1..d {
                s.add_assign(&(&row[c] * &w[c]));
            }
            s
        })
        .collect()
}
