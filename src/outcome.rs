//! What a claim's run produces: checks, figures, tables, plots and notes.

use crate::certificate::Certificate;
use crate::verdict::{Check, CheckKind, Checks, Verdict};
use serde::{Deserialize, Serialize};

/// A named number that `--check` compares against the committed report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Stable name (used to match against the committed JSON).
    pub name: String,
    /// The value compared by `--check` (relative tolerance from the spec).
    pub value: f64,
    /// How it is printed (for enclosures: outward-rounded).
    pub text: String,
}

impl Figure {
    /// A key figure; the value is stored to 12 significant digits (see
    /// [`Outcome::figure`]).
    pub fn new(name: impl Into<String>, value: f64, text: impl Into<String>) -> Figure {
        Figure {
            name: name.into(),
            value: round_sig(value, 12),
            text: text.into(),
        }
    }
}

/// `x` rounded to `digits` significant decimal digits (non-finite values unchanged).
pub fn round_sig(x: f64, digits: usize) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    format!("{:.*e}", digits.saturating_sub(1), x)
        .parse()
        .unwrap_or(x)
}

/// A table in a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Heading.
    pub title: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Rows of cells (already formatted).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with the given title and columns and no rows.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }
    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// A polyline.
    Line,
    /// Markers only.
    Points,
    /// A dashed polyline (reference curves, bounds).
    Dashed,
}

/// One series of a plot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Drawing style.
    pub style: Style,
    /// The points (x, y).
    pub points: Vec<(f64, f64)>,
}

/// A 2-D plot written as SVG next to the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plot {
    /// File-name slug, unique within the claim: `<claim>-<slug>.svg`.
    pub slug: String,
    /// Title above the plot.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub x_log: bool,
    /// Logarithmic y axis.
    pub y_log: bool,
    /// The series.
    pub series: Vec<Series>,
    /// A heat map drawn instead of the series (absent from the JSON when `None`,
    /// so plots without one serialise exactly as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heatmap: Option<Heatmap>,
    /// Draw each series as the path of one moving object (a token): an open circle
    /// at its first point, a filled dot at its last, and one key (start, end, paths)
    /// instead of a legend entry per series. Absent from the JSON when `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paths: bool,
}

/// How heat-map values map to colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeatScale {
    /// Colour linear in the value on [min, max].
    Linear,
    /// Colour linear in log₁₀ of the value on [log₁₀ min, log₁₀ max]; values ≤ min
    /// (including 0) get the floor colour. `min` must be positive.
    Log10,
    /// The values (and `min`, `max`) are already base-10 exponents e of a quantity
    /// 10^e, for quantities below f64's range (an attention weight of 10^−33860);
    /// coloured like [`HeatScale::Log10`], −∞ (the quantity 0) gets the floor colour.
    Exponent10,
}

/// A matrix drawn as coloured cells (row i top to bottom, column j left to right)
/// with a colour bar.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Heatmap {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// The values, row-major (`rows × cols`; missing or NaN cells are drawn grey).
    pub values: Vec<f64>,
    /// Value-to-colour map.
    pub scale: HeatScale,
    /// Bottom of the colour range (values at or below it get the floor colour).
    pub min: f64,
    /// Top of the colour range (values at or above it get the top colour).
    pub max: f64,
    /// Caption of the colour bar.
    pub label: String,
    /// Row labels (default: 1, 2, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_labels: Option<Vec<String>>,
    /// Column labels (default: 1, 2, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub col_labels: Option<Vec<String>>,
}

/// Everything a claim's run produces. The verdict is not chosen here: it is
/// derived from the checks ([`Verdict::from_checks`]) unless the claim declares
/// that it cannot be checked, is exploratory, or ran out of budget.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The asserted statements and their results.
    pub checks: Checks,
    /// Key figures; the first one appears in `reports/README.md`.
    pub figures: Vec<Figure>,
    /// Tables.
    pub tables: Vec<Table>,
    /// Plots.
    pub plots: Vec<Plot>,
    /// Remarks (documented discrepancies, what was not checked and why).
    pub notes: Vec<String>,
    /// A certificate that `attncheck verify` re-checks with the kernel alone.
    pub certificate: Option<Certificate>,
    declared: Option<(Verdict, String)>,
}

impl Outcome {
    /// An empty outcome.
    pub fn new() -> Self {
        Self::default()
    }
    /// Declares the claim not checkable by a finite computation, with the reason.
    pub fn declare_not_checkable(&mut self, reason: impl Into<String>) {
        self.declared = Some((Verdict::NotCheckable, reason.into()));
    }
    /// Declares the run exploratory: observations only, nothing asserted.
    pub fn declare_report_only(&mut self, reason: impl Into<String>) {
        self.declared = Some((Verdict::ReportOnly, reason.into()));
    }
    /// Declares the run inconclusive (budget, precision), with the reason.
    pub fn declare_inconclusive(&mut self, reason: impl Into<String>) {
        self.declared = Some((Verdict::Inconclusive, reason.into()));
    }
    /// Adds a key figure. The value is stored to 12 significant digits: `--check`
    /// compares at a coarser tolerance anyway, and the last bits of an f64 computed
    /// through the platform's libm (cos, ln, pow) may differ between machines, which
    /// must not change a committed report.
    pub fn figure(&mut self, name: impl Into<String>, value: f64, text: impl Into<String>) {
        self.figures.push(Figure::new(name, value, text));
    }
    /// Appends `other` to this outcome: its checks after these, its presentation
    /// after this one; its certificate and its declared verdict, when it has them,
    /// replace these (so a later declaration wins, as if recorded here).
    pub fn append(&mut self, other: Outcome) {
        self.checks.extend(other.checks);
        if other.certificate.is_some() {
            self.certificate = other.certificate;
        }
        if other.declared.is_some() {
            self.declared = other.declared;
        }
        self.figures.extend(other.figures);
        self.tables.extend(other.tables);
        self.plots.extend(other.plots);
        self.notes.extend(other.notes);
    }
    /// Appends a claim's presentation (its tables, plots, figures and notes, in
    /// order) to what the outcome already holds.
    pub fn present(&mut self, pr: Presentation) {
        self.figures.extend(pr.figures);
        self.tables.extend(pr.tables);
        self.plots.extend(pr.plots);
        self.notes.extend(pr.notes);
    }
    /// Adds a note.
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// The verdict and its reason: derived from the checks and capped at the rigour
    /// the spec seeks (an asymptotic claim whose finite checks are all certified is
    /// still only `supported`), unless a verdict was declared. A declared verdict never
    /// masks a kernel refutation (issue #38): when the kernel decided an obligation of
    /// the certificate `false`, the run is `refuted` whatever was declared, and the
    /// declaration is kept in the reason. `lifted`: the part whose limit a lemma proven
    /// in Coq gives (the spec's `[lemma]`); the cap lifts for the whole claim only when
    /// every check belongs to that part ([`Verdict::by_part`] lifts it for the part).
    pub fn verdict(&self, rigour: Verdict, lifted: Option<&str>) -> (Verdict, Option<String>) {
        if let Some(why) = self.certified_outside_the_certificate() {
            return (Verdict::Inconclusive, Some(why));
        }
        if let Some((v, r)) = &self.declared {
            if let Some(c) = crate::verdict::Check::first_counterexample(self.checks.as_slice()) {
                return (
                    Verdict::Refuted,
                    Some(format!(
                        "certified counterexample: {} (the run also declared itself {v}: {r})",
                        c.name
                    )),
                );
            }
            return (*v, Some(r.clone()));
        }
        let (v, r) = Verdict::from_checks(self.checks.as_slice());
        let all_lifted = lifted.is_some()
            && self
                .checks
                .as_slice()
                .iter()
                .all(|c| c.part.as_deref() == lifted);
        if v == Verdict::Certified && rigour != Verdict::Certified && !all_lifted {
            return (
                Verdict::Supported,
                Some(format!(
                    "every finite check is certified; the claim itself is {rigour} at most"
                )),
            );
        }
        (v, r)
    }

    /// Why the certified checks are not exactly the obligations of the certificate,
    /// or `None` when they are. A certified check is the kernel's decision of an
    /// obligation that `verify` re-checks (issue #24); anything else recorded as
    /// certified is an internal error, and the run is inconclusive with this reason
    /// rather than certified or refuted on it.
    pub fn certified_outside_the_certificate(&self) -> Option<String> {
        let mut obligations: Vec<&str> = self
            .certificate
            .iter()
            .flat_map(|c| c.obligations.iter().map(|o| o.name.as_str()))
            .collect();
        let mut certified: Vec<&str> = self
            .checks
            .as_slice()
            .iter()
            .filter(|c| c.kind == CheckKind::Certified)
            .map(|c| c.name.as_str())
            .collect();
        obligations.sort_unstable();
        certified.sort_unstable();
        if obligations == certified {
            return None;
        }
        let missing =
            |a: &[&str], b: &[&str]| a.iter().find(|n| !b.contains(n)).map(|n| n.to_string());
        Some(match missing(&certified, &obligations) {
            Some(n) => format!("internal error: the certified check «{n}» is not an obligation of the certificate"),
            None => match missing(&obligations, &certified) {
                Some(n) => format!("internal error: the obligation «{n}» of the certificate has no certified check"),
                None => "internal error: the certified checks repeat an obligation of the certificate".to_string(),
            },
        })
    }

    /// The checks as a slice.
    pub fn check_list(&self) -> &[Check] {
        self.checks.as_slice()
    }
}

/// What a claim's `observe` may record (`claims::shape::Claim::observe`): observed
/// and consistency checks, the part they belong to, and a declared verdict with its
/// reason. It cannot record a certified check (those come from the kernel's
/// decision of the statement alone) nor add a table, plot, figure or note.
pub struct Observations<'a> {
    out: &'a mut Outcome,
}

impl<'a> Observations<'a> {
    /// Observations recorded into `out` (after its certified checks).
    pub fn new(out: &'a mut Outcome) -> Self {
        Observations { out }
    }
    /// Records an observation (finite-time, f64, or within a tolerance); see
    /// [`Checks::observe`].
    pub fn observe(
        &mut self,
        name: impl Into<String>,
        ok: bool,
        detail: impl Into<String>,
    ) -> bool {
        self.out.checks.observe(name, ok, detail)
    }
    /// Records a three-valued comparison outside the statement as an observation;
    /// see [`Checks::observe_interval`].
    pub fn observe_interval(
        &mut self,
        name: impl Into<String>,
        result: crate::kernel::Certainty,
        detail: impl Into<String>,
    ) -> crate::kernel::Certainty {
        self.out.checks.observe_interval(name, result, detail)
    }
    /// Records a per-step invariant as an observation; see [`Checks::observe_tally`].
    pub fn observe_tally(
        &mut self,
        name: impl Into<String>,
        t: &crate::reading::StepTally,
    ) -> crate::kernel::Certainty {
        self.out.checks.observe_tally(name, t)
    }
    /// Records a consistency reading; see [`Checks::consistency`].
    pub fn consistency(
        &mut self,
        name: impl Into<String>,
        reading: crate::reading::Reading,
        detail: impl Into<String>,
    ) -> bool {
        self.out.checks.consistency(name, reading, detail)
    }
    /// Tags the checks recorded from now on with a part label; see
    /// [`Checks::set_part`].
    pub fn set_part(&mut self, part: Option<&str>) {
        self.out.checks.set_part(part);
    }
    /// Every check recorded so far, the certified ones first (read only).
    pub fn checks(&self) -> &[Check] {
        self.out.checks.as_slice()
    }
    /// Declares the run inconclusive, with the reason.
    pub fn declare_inconclusive(&mut self, reason: impl Into<String>) {
        self.out.declare_inconclusive(reason);
    }
    /// Declares the claim not checkable by a finite computation, with the reason.
    pub fn declare_not_checkable(&mut self, reason: impl Into<String>) {
        self.out.declare_not_checkable(reason);
    }
    /// Declares the run exploratory, with the reason.
    pub fn declare_report_only(&mut self, reason: impl Into<String>) {
        self.out.declare_report_only(reason);
    }
}

/// What a claim's `present` produces (`claims::shape::Claim::present`): tables,
/// plots, key figures and notes, in report order, and nothing else. No check and
/// no verdict can be recorded or changed through it, so a presentation never decides.
#[derive(Clone, Debug, Default)]
pub struct Presentation {
    /// Key figures; the first one appears in `reports/README.md`.
    pub figures: Vec<Figure>,
    /// Tables.
    pub tables: Vec<Table>,
    /// Plots.
    pub plots: Vec<Plot>,
    /// Remarks.
    pub notes: Vec<String>,
}

impl Presentation {
    /// Adds a key figure (12 significant digits, as [`Outcome::figure`]).
    pub fn figure(&mut self, name: impl Into<String>, value: f64, text: impl Into<String>) {
        self.figures.push(Figure::new(name, value, text));
    }
    /// Adds a note.
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }
}
