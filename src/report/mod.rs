//! Reports: Markdown for people, JSON for machines, SVG for curves, and the
//! index `reports/README.md`. Deterministic: no timings, no map iteration order,
//! fixed number formatting.

pub mod html;
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
    /// The relative tolerance `--check` allows key figures to move.
    pub check_tolerance: f64,
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
    /// What the certified checks rest on, and the statement in readable form
    /// (present when the claim has a statement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
    /// How much of the certificate the Coq translation sends to Coq (present
    /// when the run produced a certificate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coq: Option<CoqCoverage>,
    /// The lemma proven in Coq that one part of the claim rests on (the spec's
    /// `[lemma]`), with what Coq's `Print Assumptions` lists for its file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lemma: Option<LemmaTrust>,
    /// The tool that wrote it (`attncheck <version>`; no commit or date, so that
    /// committed reports stay byte-identical from run to run).
    pub tool: String,
    /// The command that reproduces this report.
    pub command: String,
    /// For a claim written as formulas: the spec file its statement is rebuilt from
    /// (as named on the command line; `verify --spec` takes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_file: Option<String>,
}

/// A report's trust base: what a certified check rests on, and the statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trust {
    /// In words.
    pub rests_on: String,
    /// Every obligation: (name, expect, formula).
    pub statement: Vec<(String, crate::kernel::Expect, String)>,
}

/// A lemma proven in Coq in a report's trust base.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LemmaTrust {
    /// The part of the claim whose limit it gives (only that part may be certified
    /// beyond the spec's rigour).
    pub part: String,
    /// The file, `coq/<Name>.v`.
    pub file: String,
    /// The theorems the part rests on.
    pub theorems: Vec<String>,
    /// What `Print Assumptions` lists for the file ([`crate::coq::LEMMA_ASSUMPTIONS`]).
    pub assumptions: Vec<String>,
}

/// The Coq coverage of a report's certificate: how many of its obligations the
/// Coq translation ([`crate::coq`]) sends to Coq, and why the others stay
/// kernel-only. Computed from the deterministic translation, never by running
/// `coqc`, so a report does not depend on whether Coq is installed where it is
/// written; `attncheck verify --coq` re-proves the obligations sent, and CI runs
/// it on every committed certificate (tests/it/coq.rs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoqCoverage {
    /// Obligations sent to Coq.
    pub sent: usize,
    /// All obligations of the certificate.
    pub obligations: usize,
    /// The obligations that stay kernel-only, in certificate order.
    pub kernel_only: Vec<KernelOnly>,
}

/// An obligation the Coq translation does not send to Coq.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelOnly {
    /// The obligation's name.
    pub name: String,
    /// Why it stays kernel-only.
    pub reason: String,
}

impl CoqCoverage {
    /// The coverage of a certificate.
    pub fn of(cert: &crate::certificate::Certificate) -> CoqCoverage {
        let (sent, obligations, kernel_only) = crate::coq::coverage(cert);
        CoqCoverage {
            sent,
            obligations,
            kernel_only: kernel_only
                .into_iter()
                .map(|(name, reason)| KernelOnly { name, reason })
                .collect(),
        }
    }

    /// The kernel-only obligations grouped by reason, in order of first
    /// appearance: (reason, names).
    pub fn kernel_only_by_reason(&self) -> Vec<(&str, Vec<&str>)> {
        let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
        for k in &self.kernel_only {
            match out.iter_mut().find(|(w, _)| *w == k.reason) {
                Some((_, names)) => names.push(&k.name),
                None => out.push((&k.reason, vec![&k.name])),
            }
        }
        out
    }
}

/// The tool name and version written into every report.
pub fn tool() -> String {
    format!("attncheck {}", env!("CARGO_PKG_VERSION"))
}

/// Why a run is not as its spec expects (see [`expectation`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Unexpected {
    /// The verdict is not the expected one; the first check not as expected, if any.
    Verdict {
        /// The run's verdict.
        verdict: Verdict,
        /// The spec's.
        expected: Verdict,
        /// The first check not as expected.
        first: Option<Check>,
    },
    /// The verdict is as expected, but this check is not.
    Check(Check),
}

impl std::fmt::Display for Unexpected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::kernel::{Certainty, Expect};
        match self {
            Unexpected::Verdict {
                verdict,
                expected,
                first: Some(c),
            } => write!(
                f,
                "verdict {verdict}, expected {expected}; first check not as expected: `{}` is {:?}{}",
                c.name,
                c.result,
                match c.expect {
                    Expect::Holds => "",
                    Expect::Fails => " (expected to fail)",
                }
            ),
            Unexpected::Verdict {
                verdict,
                expected,
                first: None,
            } => write!(f, "verdict {verdict}, expected {expected}"),
            Unexpected::Check(c) => write!(
                f,
                "check `{}` {} (expected to {})",
                c.name,
                match c.result {
                    Certainty::True => "holds",
                    Certainty::False => "fails",
                    Certainty::Unknown => "is undecided",
                },
                match c.expect {
                    Expect::Holds => "hold",
                    Expect::Fails => "fail",
                }
            ),
        }
    }
}

impl std::error::Error for Unexpected {}

/// Whether a run came out as its spec expects, and if not, why: the verdict
/// must be the expected one and, for a claim that asserts anything (certified,
/// supported, refuted), every check must come out as expected — the checks the
/// spec names in `refutes` disproven, every other one holding.
pub fn expectation(
    expected: Verdict,
    verdict: Verdict,
    checks: &[Check],
) -> Result<(), Unexpected> {
    let first_unexpected = checks.iter().find(|c| !c.as_expected());
    if verdict != expected {
        return Err(Unexpected::Verdict {
            verdict,
            expected,
            first: first_unexpected.cloned(),
        });
    }
    if matches!(
        expected,
        Verdict::Certified | Verdict::Supported | Verdict::Refuted
    ) {
        if let Some(c) = first_unexpected {
            return Err(Unexpected::Check(c.clone()));
        }
    }
    Ok(())
}

/// The Rust module path of a claim (`claims::positional::alibi_window`).
fn module_of(id: &str) -> String {
    format!("claims::{}", id.replace('/', "::").replace('-', "_"))
}

impl Report {
    /// The file stem of the claim's report files: the ID after `<paper>/`.
    pub fn stem(&self) -> &str {
        self.id.split_once('/').map_or(self.id.as_str(), |x| x.1)
    }
    /// Assembles the report of a run.
    pub fn new(spec: &Spec, profile: Profile, outcome: &crate::outcome::Outcome) -> Report {
        let (verdict, reason) = outcome.verdict(spec.rigour, spec.lemma_part());
        let params = serde_json::to_value(spec.merged(profile)).unwrap_or(serde_json::Value::Null);
        let mut notes = spec.notes.clone();
        notes.extend(outcome.notes.iter().cloned());
        let name = spec.name().to_string();
        let spec_file =
            (spec.kind == crate::spec::SpecKind::Formulas).then(|| spec.path.display().to_string());
        let builder = match &spec_file {
            Some(f) => format!(
                "the substitution of its parameters and definitions into its obligations (`claims::formulas`, \
                 from {f})"
            ),
            None => format!(
                "this claim's statement builder (`{}::statement`, which states the obligations below from \
                 the spec)",
                module_of(&spec.id)
            ),
        };
        let coq = outcome.certificate.as_ref().map(CoqCoverage::of);
        let mut tables = outcome.tables.clone();
        if let (Some(_), Some(c)) = (&spec_file, &coq) {
            // a formulas claim's obligations as written: each one's Coq part beside it
            for t in tables
                .iter_mut()
                .filter(|t| t.title == crate::claims::formulas::WRITTEN_TABLE)
            {
                t.columns.push("Coq".into());
                for row in &mut t.rows {
                    let name = row.first().cloned().unwrap_or_default();
                    row.push(
                        c.kernel_only
                            .iter()
                            .find(|k| k.name == name)
                            .map_or("sent to Coq".to_string(), |k| {
                                format!("kernel only: {}", k.reason)
                            }),
                    );
                }
            }
        }
        let mut run_target = spec_file.clone().unwrap_or_else(|| spec.id.clone());
        for a in &spec.sets {
            if a.contains('\'') {
                run_target.push_str(&format!(" --set \"{a}\""));
            } else {
                run_target.push_str(&format!(" --set '{a}'"));
            }
        }
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
            check_tolerance: spec.check_tolerance,
            rigour: spec.rigour,
            expected: spec.expected,
            verdict,
            reason,
            as_expected: expectation(spec.expected, verdict, outcome.check_list()).is_ok(),
            params,
            checks: outcome.check_list().to_vec(),
            figures: outcome.figures.clone(),
            tables,
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
            trust: outcome.certificate.as_ref().map(|c| Trust {
                rests_on: format!(
                    "the trusted kernel (crates/attncheck-kernel: outward-rounded MPFR intervals, exact rationals, \
                     the certificate evaluator with every data operation of the certificate format), MPFR and GMP, \
                     and {builder}; nothing else — witness search, floating point, plots and prose can only make a check \
                     fail to prove, and every certified check below is one of these obligations"
                ),
                statement: c
                    .obligations
                    .iter()
                    .map(|o| (o.name.clone(), o.expect, o.formula.clone()))
                    .collect(),
            }),
            coq,
            lemma: spec.lemma.as_ref().map(|l| LemmaTrust {
                part: l.part.clone(),
                file: l.file.clone(),
                theorems: l.theorems.clone(),
                assumptions: crate::coq::LEMMA_ASSUMPTIONS
                    .iter()
                    .map(|a| a.to_string())
                    .collect(),
            }),
            tool: tool(),
            command: match profile {
                Profile::Quick => format!("attncheck run {run_target}"),
                Profile::Full => format!("attncheck run {run_target} --profile full"),
            },
            spec_file,
        }
    }

    /// Why the run is not as expected (`None` when it is).
    pub fn unexpected(&self) -> Option<String> {
        expectation(self.expected, self.verdict, &self.checks)
            .err()
            .map(|e| e.to_string())
    }

    /// The JSON text (pretty, trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("reports serialise");
        s.push('\n');
        s
    }
}

/// What changed from `old` to `new`, one line per difference: verdict,
/// expectation, precision, tolerance, every parameter leaf (a tolerance that grew
/// is called loosened), every check (by name: appeared, disappeared, result or
/// kind changed) and every key figure (disappeared, or moved beyond `new`'s
/// `check_tolerance`, printed with the digits that show the move).
pub fn diff(old: &Report, new: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if old.verdict != new.verdict {
        out.push(format!(
            "verdict changed from {} to {}",
            old.verdict, new.verdict
        ));
    }
    if old.as_expected != new.as_expected {
        out.push(match new.unexpected() {
            Some(why) => format!("no longer as expected: {why}"),
            None => "now as expected (it was not)".into(),
        });
    }
    if old.expected != new.expected {
        out.push(format!(
            "expected verdict changed from {} to {}",
            old.expected, new.expected
        ));
    }
    if old.precision != new.precision {
        out.push(format!(
            "precision changed from {} to {} bits",
            old.precision, new.precision
        ));
    }
    if old.check_tolerance != new.check_tolerance {
        out.push(format!(
            "check_tolerance {} from {:?} to {:?}",
            if new.check_tolerance > old.check_tolerance {
                "loosened"
            } else {
                "tightened"
            },
            old.check_tolerance,
            new.check_tolerance
        ));
    }
    if let (Some(a), Some(b)) = (&old.coq, &new.coq) {
        if (a.sent, a.obligations) != (b.sent, b.obligations) {
            out.push(format!(
                "Coq coverage changed from {} of {} to {} of {} obligations",
                a.sent, a.obligations, b.sent, b.obligations
            ));
        }
    }
    diff_values("params", &old.params, &new.params, &mut out);
    for c in &old.checks {
        match new.checks.iter().find(|n| n.name == c.name) {
            None => out.push(format!("check `{}` disappeared", c.name)),
            Some(n) => {
                if n.result != c.result || n.kind != c.kind || n.expect != c.expect {
                    out.push(format!(
                        "check `{}` changed from {} {:?} to {} {:?}{}",
                        c.name,
                        c.kind.as_str(),
                        c.result,
                        n.kind.as_str(),
                        n.result,
                        if n.detail.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", n.detail)
                        }
                    ));
                } else if n.detail != c.detail {
                    out.push(format!(
                        "check `{}`: evidence changed from `{}` to `{}`",
                        c.name, c.detail, n.detail
                    ));
                }
            }
        }
    }
    for n in &new.checks {
        if !old.checks.iter().any(|c| c.name == n.name) {
            out.push(format!("check `{}` is new ({:?})", n.name, n.result));
        }
    }
    let tol = new.check_tolerance;
    for f in &old.figures {
        match new.figures.iter().find(|n| n.name == f.name) {
            None => out.push(format!("key figure `{}` disappeared", f.name)),
            Some(n) => {
                let same = (n.value.is_nan() && f.value.is_nan()) || n.value == f.value;
                let scale = f.value.abs().max(f64::MIN_POSITIVE);
                let within = (n.value - f.value).abs() <= tol * scale;
                if !same && !within {
                    out.push(format!(
                        "key figure `{}` moved from {:?} to {:?} (relative change {:.3e}, tolerance {tol:e})",
                        f.name,
                        f.value,
                        n.value,
                        (n.value - f.value).abs() / scale
                    ));
                }
            }
        }
    }
    for n in &new.figures {
        if !old.figures.iter().any(|f| f.name == n.name) {
            out.push(format!("key figure `{}` is new ({:?})", n.name, n.value));
        }
    }
    out
}

fn is_tolerance(path: &str) -> bool {
    let leaf = path.rsplit(['.', ']']).next().unwrap_or(path);
    leaf.contains("tol") || leaf.starts_with("eps")
}

fn diff_values(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = format!("{path}.{k}");
                match y.get(k) {
                    Some(w) => diff_values(&p, v, w, out),
                    None => out.push(format!("{p} removed (was {v})")),
                }
            }
            for (k, w) in y {
                if !x.contains_key(k) {
                    out.push(format!("{path}.{k} added ({w})"));
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff_values(&format!("{path}[{i}]"), v, w, out);
            }
        }
        _ if a == b => {}
        _ => {
            let num = |v: &Value| -> Option<rug::Rational> {
                match v {
                    Value::Number(n) => n
                        .as_f64()
                        .and_then(rug::Rational::from_f64)
                        .or_else(|| n.to_string().parse().ok()),
                    Value::String(s) => crate::kernel::parse_rational(s).ok(),
                    _ => None,
                }
            };
            let verb = match (num(a), num(b)) {
                (Some(x), Some(y)) if is_tolerance(path) => {
                    if y > x {
                        "loosened"
                    } else {
                        "tightened"
                    }
                }
                _ => "changed",
            };
            out.push(format!("{path} {verb} from {a} to {b}"));
        }
    }
}
