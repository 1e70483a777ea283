//! Verdicts and the evidence behind them.
//!
//! A claim's run records [`Check`]s. Each check is either *certified* (decided by
//! the kernel: exact arithmetic or outward-rounded intervals, so it carries a
//! [`Certainty`]) or *observed* (a finite-time or floating-point observation
//! within a stated tolerance). The verdict is derived from the checks by one rule
//! ([`Verdict::from_checks`]), so no claim can hand-pick its own verdict.

use crate::kernel::{Certainty, Checked, Expect};
use crate::reading::{Reading, StepTally};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The report part of each obligation that has one, by the obligation's name.
pub type Parts = std::collections::BTreeMap<String, String>;

/// What a run concludes about a claim (docs/design.md; the table of verdicts is in the README).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every asserted inequality of the finite instance is proven.
    Certified,
    /// Observed at finite time or in floating point; what its certificate states is certified.
    Supported,
    /// A certified counterexample.
    Refuted,
    /// Neither, with the reason.
    Inconclusive,
    /// No finite computation decides it.
    NotCheckable,
    /// Exploration: observations recorded, nothing asserted.
    ReportOnly,
}

impl Verdict {
    /// The kebab-case name used in specs, reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Certified => "certified",
            Verdict::Supported => "supported",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotCheckable => "not-checkable",
            Verdict::ReportOnly => "report-only",
        }
    }

    /// Derives the verdict from the checks:
    /// - a certified check that is `False` → `refuted` (a proven counterexample: the
    ///   kernel decided an obligation of the certificate, which `verify` re-checks);
    /// - any check `Unknown`, or a consistency reading or an observation that fails →
    ///   `inconclusive` (no certificate carries them, so they never refute: issue #38);
    /// - otherwise `certified` if every check is certified, else `supported`
    ///   (a consistency reading or an observation never certifies).
    ///
    /// An empty list is `inconclusive`: a claim that checked nothing proved nothing.
    pub fn from_checks(checks: &[Check]) -> (Verdict, Option<String>) {
        if checks.is_empty() {
            return (Verdict::Inconclusive, Some("no check was run".into()));
        }
        if let Some(c) = Check::first_counterexample(checks) {
            return (
                Verdict::Refuted,
                Some(format!("certified counterexample: {}", c.name)),
            );
        }
        if let Some(c) = checks.iter().find(|c| c.result == Certainty::Unknown) {
            return (
                Verdict::Inconclusive,
                Some(format!("undecided at this precision: {}", c.name)),
            );
        }
        if let Some(c) = checks.iter().find(|c| c.result == Certainty::False) {
            let what = match c.kind {
                CheckKind::Consistency => {
                    "consistency reading violated (no certificate carries it, so it cannot refute)"
                }
                _ => "observation outside tolerance",
            };
            return (Verdict::Inconclusive, Some(format!("{what}: {}", c.name)));
        }
        if checks.iter().all(|c| c.kind == CheckKind::Certified) {
            (Verdict::Certified, None)
        } else {
            (Verdict::Supported, None)
        }
    }
}

impl Verdict {
    /// The verdict of each part (in order of first appearance), each derived by
    /// [`Verdict::from_checks`] from that part's checks alone and capped at `rigour`
    /// like a whole claim (an asymptotic part whose finite checks are all certified is
    /// `supported`), except the part `lifted`: the one whose limit a lemma proven in Coq
    /// gives from its certified checks (the spec's `[lemma]`). Empty when no check
    /// carries a part label.
    pub fn by_part(
        checks: &[Check],
        rigour: Verdict,
        lifted: Option<&str>,
    ) -> Vec<(String, Verdict)> {
        let mut parts: Vec<String> = Vec::new();
        for c in checks {
            if let Some(p) = &c.part {
                if !parts.contains(p) {
                    parts.push(p.clone());
                }
            }
        }
        parts
            .into_iter()
            .map(|p| {
                let sub: Vec<Check> = checks
                    .iter()
                    .filter(|c| c.part.as_deref() == Some(p.as_str()))
                    .cloned()
                    .collect();
                let mut v = Verdict::from_checks(&sub).0;
                if v == Verdict::Certified
                    && rigour != Verdict::Certified
                    && lifted != Some(p.as_str())
                {
                    v = Verdict::Supported;
                }
                (p, v)
            })
            .collect()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a check was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckKind {
    /// Decided by the kernel: an obligation of the claim's statement, and nothing
    /// else ([`Checks::prove`] is the only road to one).
    Certified,
    /// A consistency reading ("no step certifiably violates it", "the enclosures
    /// overlap") on the claim's own enclosures: an observation that no certificate
    /// carries, so it never certifies nor refutes; violated, it makes the run
    /// inconclusive.
    Consistency,
    /// Observed (finite time, f64, fit, tolerance).
    Observed,
}

impl CheckKind {
    /// The kebab-case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Certified => "certified",
            CheckKind::Consistency => "consistency",
            CheckKind::Observed => "observed",
        }
    }
}

/// One asserted statement and its outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was asserted, in words.
    pub name: String,
    /// Certified, consistency or observed.
    pub kind: CheckKind,
    /// The three-valued result; for observed checks only True or False.
    pub result: Certainty,
    /// Evidence: the enclosures or values compared.
    pub detail: String,
    /// The part of the claim it belongs to (e.g. "(D) discrete map", "(F) flow"),
    /// for claims whose parts reach different rigour; absent from the JSON when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// `fails` for an obligation the spec names in `refutes` (a counterexample is
    /// the expected outcome); absent from the JSON when it is expected to hold.
    #[serde(default, skip_serializing_if = "is_holds")]
    pub expect: Expect,
}

fn is_holds(e: &Expect) -> bool {
    *e == Expect::Holds
}

impl Check {
    /// The first certified check that the kernel decided `False`: the one road to a
    /// counterexample (an obligation of the certificate).
    pub fn first_counterexample(checks: &[Check]) -> Option<&Check> {
        checks
            .iter()
            .find(|c| c.kind == CheckKind::Certified && c.result == Certainty::False)
    }
    /// Whether it came out as the spec expects: `fails` checks False, all others True.
    pub fn as_expected(&self) -> bool {
        match self.expect {
            Expect::Holds => self.result == Certainty::True,
            Expect::Fails => self.result == Certainty::False,
        }
    }
}

/// Accumulates checks for a claim run.
#[derive(Clone, Debug, Default)]
pub struct Checks {
    list: Vec<Check>,
    part: Option<String>,
}

impl Checks {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }
    /// Records every decision of an evaluated statement as a certified check (the
    /// only way to record a certified check). A hand-made [`Check`] of kind
    /// `Certified` can be built, but no method of [`Checks`] takes one and its list is
    /// private, so it never reaches a report:
    ///
    /// ```compile_fail
    /// use attncheck::kernel::{Certainty, Expect};
    /// use attncheck::verdict::{Check, CheckKind, Checks};
    /// let forged = Check {
    ///     name: "anything".into(),
    ///     kind: CheckKind::Certified,
    ///     result: Certainty::True,
    ///     detail: String::new(),
    ///     part: None,
    ///     expect: Expect::Holds,
    /// };
    /// let mut checks = Checks::new();
    /// checks.list.push(forged);
    /// ```
    ///
    /// (The same check, built and left alone, compiles: only the road into `Checks` is
    /// closed.)
    ///
    /// ```
    /// use attncheck::kernel::{Certainty, Expect};
    /// use attncheck::verdict::{Check, CheckKind, Checks};
    /// let forged = Check {
    ///     name: "anything".into(),
    ///     kind: CheckKind::Certified,
    ///     result: Certainty::True,
    ///     detail: String::new(),
    ///     part: None,
    ///     expect: Expect::Holds,
    /// };
    /// let checks = Checks::new();
    /// assert!(checks.as_slice().is_empty() && forged.kind == CheckKind::Certified);
    /// ```
    pub fn prove(&mut self, checked: &Checked) {
        self.prove_in_parts(checked, &Parts::new());
    }
    /// [`Checks::prove`], each decision tagged with the report part `parts` names for its
    /// obligation (else the current part): a claim's presentation, which the kernel
    /// does not hold (issue #38).
    pub fn prove_in_parts(&mut self, checked: &Checked, parts: &Parts) {
        for d in checked.decisions() {
            let verb = match d.result() {
                Certainty::True => "true",
                Certainty::False => "false",
                Certainty::Unknown => "undecided",
            };
            self.list.push(Check {
                name: d.name().to_string(),
                kind: CheckKind::Certified,
                result: d.result(),
                detail: format!(
                    "statement obligation: {verb} at {} bits (expected to {})",
                    checked.prec(),
                    match d.expect() {
                        Expect::Holds => "hold",
                        Expect::Fails => "fail",
                    }
                ),
                part: parts.get(d.name()).cloned().or_else(|| self.part.clone()),
                expect: d.expect(),
            });
        }
    }
    /// Records a per-step invariant as an observation. Its margins are kernel
    /// intervals, but the claim's own code computed them and no certificate carries
    /// them, so the reading can make a claim inconclusive and never certify or
    /// refute it (issue #24: certified checks are the kernel's decisions of the
    /// certificate's obligations, nothing else).
    pub fn observe_tally(&mut self, name: impl Into<String>, t: &StepTally) -> Certainty {
        self.observe_interval(
            name,
            t.certainty(),
            format!(
                "observed on the claim's own enclosures (not an obligation of the certificate): {}",
                t.summary()
            ),
        )
    }
    /// Records a consistency reading: `False` when the claim's enclosures are
    /// certifiably inconsistent with it, else `True`. Neither counts as a decision: no
    /// certificate carries the reading, so a violation makes the run inconclusive and
    /// never refutes it (issue #38), and consistency never certifies. A violated
    /// instance that should refute is an obligation of the statement instead.
    pub fn consistency(
        &mut self,
        name: impl Into<String>,
        reading: Reading,
        detail: impl Into<String>,
    ) -> bool {
        let ok = !reading.violated();
        self.push(
            name.into(),
            CheckKind::Consistency,
            Certainty::exact(ok),
            detail.into(),
        );
        ok
    }
    /// Records a three-valued interval comparison that is *not* an obligation of the
    /// claim's statement as an observation: it can make a claim inconclusive, never
    /// certify or refute it (until it is moved into the statement).
    pub fn observe_interval(
        &mut self,
        name: impl Into<String>,
        result: Certainty,
        detail: impl Into<String>,
    ) -> Certainty {
        self.push(name.into(), CheckKind::Observed, result, detail.into());
        result
    }
    /// Records an observation (finite-time, f64, or within a tolerance).
    pub fn observe(
        &mut self,
        name: impl Into<String>,
        ok: bool,
        detail: impl Into<String>,
    ) -> bool {
        self.push(
            name.into(),
            CheckKind::Observed,
            Certainty::exact(ok),
            detail.into(),
        );
        ok
    }
    fn push(&mut self, name: String, kind: CheckKind, result: Certainty, detail: String) {
        self.list.push(Check {
            name,
            kind,
            result,
            detail,
            part: self.part.clone(),
            expect: Expect::Holds,
        });
    }
    /// Tags every check recorded from now on with a part label (`None` ends tagging).
    /// The report then shows the verdict of each part beside the overall one
    /// ([`Verdict::by_part`]).
    pub fn set_part(&mut self, part: Option<&str>) {
        self.part = part.map(str::to_string);
    }
    /// The checks recorded so far.
    pub fn as_slice(&self) -> &[Check] {
        &self.list
    }
    /// Consumes the list.
    pub fn into_vec(self) -> Vec<Check> {
        self.list
    }
    /// Appends another list.
    pub fn extend(&mut self, other: Checks) {
        self.list.extend(other.list);
    }
}
