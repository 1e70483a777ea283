//! Per-step observers: an invariant is stated declaratively as a *margin* — an
//! interval enclosure of (right side − left side) of an inequality, which holds
//! iff the margin is ≥ 0 — evaluated on every step of the discrete map. The tally
//! records on how many steps the kernel proved it, on how many it could not decide,
//! whether any step certifiably violates it, and the smallest margin seen.
//!
//! Two readings of a tally ([`crate::reading::StepTally`]):
//! - `certainty`: proven on every step (True), certifiably violated on some step
//!   (False), else Unknown — recorded as an *observation* ([`Checks::observe_tally`]):
//!   the margins are kernel intervals, but this crate's code computed them and no
//!   certificate carries them, so they can make a claim inconclusive, never certify
//!   or refute it (issue #24);
//! - `consistency`: for invariants that are *theorems* of the map (F1–F4 of
//!   clusters.md), "the enclosures never certify a violation" — recorded as a
//!   consistency reading, an observation too (issue #38). Claims say which
//!   reading they record.

pub use super::discrete::StepView;
use crate::kernel::Interval;
use crate::outcome::Observations;
use crate::verdict::Checks;

pub use crate::reading::StepTally as Tally;

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
    /// Records the invariant as an observation: proven on every step by the claim's
    /// own enclosures (never a certified check: no certificate carries it).
    pub fn observe_into(&self, checks: &mut Checks) {
        checks.observe_tally(self.name.clone(), &self.tally);
    }
    /// Records the invariant as a consistency reading (for theorems of the map:
    /// "no step certifiably violates it"): an observation, never a decision.
    pub fn consistency_into(&self, checks: &mut Checks) {
        checks.consistency(
            format!(
                "{} (a theorem of the map; consistency: no step certifiably violates it)",
                self.name
            ),
            self.tally.consistency(),
            self.tally.consistency_summary(),
        );
    }
    /// What the invariant recorded, without its margin function (a claim's witness
    /// keeps it for `observe`).
    pub fn record(&self) -> Record {
        Record {
            name: self.name.clone(),
            tally: self.tally.clone(),
        }
    }
}

/// An invariant's name and tally, after the run.
#[derive(Debug, Clone)]
pub struct Record {
    /// The statement, in words.
    pub name: String,
    /// The record of every step.
    pub tally: Tally,
}

impl Record {
    /// Records it as an observation (see [`Invariant::observe_into`]).
    pub fn observe_into(&self, obs: &mut Observations) {
        obs.observe_tally(self.name.clone(), &self.tally);
    }
    /// Records it as a consistency reading (see [`Invariant::consistency_into`]).
    pub fn consistency_into(&self, obs: &mut Observations) {
        obs.consistency(
            format!(
                "{} (a theorem of the map; consistency: no step certifiably violates it)",
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

pub use crate::kernel::layer_map::{max_all, sq_norms};

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
