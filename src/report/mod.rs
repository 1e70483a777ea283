//! Reports: Markdown for people, JSON for machines, SVG for curves, and the
//! index `reports/README.md`. Deterministic: no timings, no map iteration order,
//! fixed number formatting.

mod markdown;
mod svg;

pub use markdown::{index_markdown, report_markdown};
pub use svg::render_svg;

use crate::outcome::{Figure, Table};
use crate::spec::{Profile, Provenance, Spec};
use crate::verdict::{Check, Verdict};
use serde::{Deserialize, Serialize};

/// The report format tag.
pub const FORMAT: &str = "attncheck-report/1";

/// A plot as referenced from the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlotRef {
    /// The plot title.
    pub title: String,
    /// The SVG file name, relative to the report.
    pub file: String,
}

/// Everything written for one claim; the JSON report is this struct.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`FORMAT`].
    pub format: String,
    /// Claim ID.
    pub id: String,
    /// Paper part of the ID.
    pub paper: String,
    /// Title.
    pub title: String,
    /// Statement in words.
    pub statement: String,
    /// Source.
    pub source: String,
    /// Provenance tags.
    pub provenance: Vec<Provenance>,
    /// Profile run.
    pub profile: Profile,
    /// Working precision in bits.
    pub precision: u32,
    /// Strongest verdict sought.
    pub rigour: Verdict,
    /// Expected verdict.
    pub expected: Verdict,
    /// The verdict reached.
    pub verdict: Verdict,
    /// Why, when it is not plainly certified/supported.
    pub reason: Option<String>,
    /// Whether `verdict == expected`.
    pub as_expected: bool,
    /// The parameters as instantiated (params merged with the profile).
    pub params: serde_json::Value,
    /// The checks.
    pub checks: Vec<Check>,
    /// Key figures.
    pub figures: Vec<Figure>,
    /// Tables.
    pub tables: Vec<Table>,
    /// Plots.
    pub plots: Vec<PlotRef>,
    /// Notes (spec notes first, then the run's).
    pub notes: Vec<String>,
    /// The certificate file, if any.
    pub certificate: Option<String>,
    /// The command that reproduces this report.
    pub command: String,
}

impl Report {
    /// Assembles the report of a run.
    pub fn new(spec: &Spec, profile: Profile, outcome: &crate::outcome::Outcome) -> Report {
        let (verdict, reason) = outcome.verdict(spec.rigour);
        let params = serde_json::to_value(spec.merged(profile)).unwrap_or(serde_json::Value::Null);
        let mut notes = spec.notes.clone();
        notes.extend(outcome.notes.iter().cloned());
        let name = spec.name().to_string();
        Report {
            format: FORMAT.into(),
            id: spec.id.clone(),
            paper: spec.paper().to_string(),
            title: spec.title.clone(),
            statement: spec.statement.trim().to_string(),
            source: spec.source.trim().to_string(),
            provenance: spec.provenance.clone(),
            profile,
            precision: spec.precision,
            rigour: spec.rigour,
            expected: spec.expected,
            verdict,
            reason,
            as_expected: verdict == spec.expected,
            params,
            checks: outcome.check_list().to_vec(),
            figures: outcome.figures.clone(),
            tables: outcome.tables.clone(),
            plots: outcome
                .plots
                .iter()
                .map(|p| PlotRef {
                    title: p.title.clone(),
                    file: format!("{name}-{}.svg", p.slug),
                })
                .collect(),
            notes,
            certificate: outcome
                .certificate
                .as_ref()
                .map(|_| format!("{name}.cert.json")),
            command: match profile {
                Profile::Quick => format!("attncheck run {}", spec.id),
                Profile::Full => format!("attncheck run {} --profile full", spec.id),
            },
        }
    }

    /// The JSON text (pretty, trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("reports serialise");
        s.push('\n');
        s
    }
}
