//! Readings that the claims' own code takes from kernel intervals it built itself:
//! per-step tallies of a margin ([`StepTally`]) and consistency readings
//! ([`Reading`]: "the two enclosures overlap", "no step certifiably violates it").
//!
//! None of them decides anything (issue #38: one road to `refuted`). No certificate
//! carries them, so neither `verify` nor Coq ever sees them: a reading is recorded
//! as an observation, which can make a run `inconclusive` and never certify or
//! refute it ([`crate::verdict::Checks::consistency`], [`crate::verdict::Checks::observe_tally`]).
//! A violated instance that should refute becomes an obligation of the claim's
//! statement instead, which the kernel decides and `verify` re-checks. (Both types
//! lived in the kernel crate until then; they serve the application only.)

use crate::kernel::{Certainty, Interval};

/// A consistency reading: "no step certifiably violates it", "the two enclosures
/// overlap". Violated when the enclosures are certifiably inconsistent with the
/// reading; consistent proves nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    violated: bool,
}

impl Reading {
    /// A reading, violated or not.
    pub fn new(violated: bool) -> Reading {
        Reading { violated }
    }
    /// Whether the enclosures are certifiably inconsistent with it.
    pub fn violated(&self) -> bool {
        self.violated
    }
    /// The joint reading of several: violated iff one of them is.
    pub fn all(readings: impl IntoIterator<Item = Reading>) -> Reading {
        Reading::new(readings.into_iter().any(|r| r.violated))
    }
}

/// The consistency reading of "these two enclosures enclose the same real".
pub trait Agreement {
    /// Violated iff the two enclosures are disjoint; overlap proves nothing.
    fn agreement(&self, other: &Interval) -> Reading;
}

impl Agreement for Interval {
    fn agreement(&self, other: &Interval) -> Reading {
        Reading::new(!self.overlaps(other))
    }
}

/// The per-step record of one invariant stated as a *margin*: an interval enclosure
/// of (right side − left side) of an inequality, which holds iff the margin is ≥ 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepTally {
    steps: usize,
    proven: usize,
    violated: usize,
    first_violation: Option<usize>,
    first_unknown: Option<usize>,
    min_margin: Option<(f64, usize)>,
}

impl StepTally {
    /// Records one step's margin: proven when its lower end is ≥ 0, violated when
    /// its upper end is < 0.
    pub fn record(&mut self, k: usize, margin: &Interval) {
        self.steps += 1;
        let lo = margin.lo_f64();
        if self.min_margin.is_none_or(|(m, _)| lo < m) {
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
    /// Steps checked.
    pub fn steps(&self) -> usize {
        self.steps
    }
    /// Steps on which the margin was proven ≥ 0.
    pub fn proven(&self) -> usize {
        self.proven
    }
    /// Steps on which the margin was proven < 0.
    pub fn violated(&self) -> usize {
        self.violated
    }
    /// The first violating step.
    pub fn first_violation(&self) -> Option<usize> {
        self.first_violation
    }
    /// The first undecided step.
    pub fn first_unknown(&self) -> Option<usize> {
        self.first_unknown
    }
    /// The smallest lower end of the margin (rounded down, for reports) and its step.
    pub fn min_margin(&self) -> Option<(f64, usize)> {
        self.min_margin
    }
    /// Proven on every step (and at least one step) / violated on some step / else undecided.
    pub fn certainty(&self) -> Certainty {
        if self.violated > 0 {
            Certainty::False
        } else if self.steps > 0 && self.proven == self.steps {
            Certainty::True
        } else {
            Certainty::Unknown
        }
    }
    /// "No step certifiably violates it": a consistency reading.
    pub fn consistency(&self) -> Reading {
        Reading::new(self.violated > 0)
    }
    /// A one-line account for the consistency reading.
    pub fn consistency_summary(&self) -> String {
        let mut s = if self.violated == 0 {
            format!(
                "consistency reading: no step of {} certifiably violates it; the enclosures alone prove it on {} \
                 steps (a reading: never certifies nor refutes)",
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
