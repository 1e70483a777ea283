//! The library API behind the CLI: load specs, select claims, run them, write or
//! check reports, verify certificates.

use crate::certificate::{self, CertificateError, ObligationResult};
use crate::claims::{self, Ctx, Runner};
use crate::outcome::Outcome;
use crate::progress::Progress;
use crate::report::{self, Report};
use crate::spec::{self, Profile, Spec, SpecError};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Every error that maps to exit code 2 (bad input or usage).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A malformed spec.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A malformed certificate.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// A usage error.
    #[error("{0}")]
    Usage(String),
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Loads every spec below `theorems`, checking that each names a known claim and
/// sits at `theorems/<paper>/<claim>.toml` matching its ID.
pub fn load_specs(theorems: &Path) -> Result<Vec<Spec>, Error> {
    let mut specs = Vec::new();
    for path in spec::discover(theorems)? {
        let s = Spec::load(&path)?;
        if claims::find(&s.id).is_none() {
            return Err(SpecError::UnknownClaim {
                file: path.clone(),
                line: line_of_key(&path, "id"),
                id: s.id.clone(),
                known: claims::known_ids(),
            }
            .into());
        }
        let expect = format!(
            "{}/{}",
            path.parent()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .unwrap_or(""),
            path.file_stem().and_then(|n| n.to_str()).unwrap_or("")
        );
        if expect != s.id {
            return Err(SpecError::Field {
                file: path.clone(),
                line: line_of_key(&path, "id"),
                field: "id".into(),
                reason: format!("`{}` does not match the file's place (`{expect}`)", s.id),
            }
            .into());
        }
        specs.push(s);
    }
    Ok(specs)
}

fn line_of_key(path: &Path, key: &str) -> Option<usize> {
    let src = std::fs::read_to_string(path).ok()?;
    src.lines()
        .position(|l| l.trim_start().starts_with(key) && l.contains('='))
        .map(|i| i + 1)
}

/// Selects the specs named by `targets` (claim IDs or paper names), or all.
pub fn select<'a>(
    specs: &'a [Spec],
    targets: &[String],
    all: bool,
) -> Result<Vec<&'a Spec>, Error> {
    if all {
        return Ok(specs.iter().collect());
    }
    if targets.is_empty() {
        return Err(Error::Usage(
            "name a claim (e.g. positional/alibi-window), a paper (e.g. positional), or --all"
                .into(),
        ));
    }
    let mut out: Vec<&Spec> = Vec::new();
    for t in targets {
        let t = t.trim_end_matches('/');
        let hits: Vec<&Spec> = specs
            .iter()
            .filter(|s| s.id == t || s.paper() == t)
            .collect();
        if hits.is_empty() {
            return Err(SpecError::UnknownClaim {
                file: PathBuf::from("<command line>"),
                line: None,
                id: t.to_string(),
                known: specs
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }
            .into());
        }
        for h in hits {
            if !out.iter().any(|o| o.id == h.id) {
                out.push(h);
            }
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// One claim's run, rendered.
pub struct ClaimRun {
    /// The JSON-able report.
    pub report: Report,
    /// The Markdown text.
    pub markdown: String,
    /// SVG files: (file name, content).
    pub svgs: Vec<(String, String)>,
    /// The certificate: (file name, JSON text).
    pub certificate: Option<(String, String)>,
}

/// Parses and validates every selected spec's parameters (so that a bad spec
/// stops the run before anything is computed or written), then runs the claims
/// in parallel; the output order is the input order.
pub fn run_claims(
    specs: &[&Spec],
    profile: Profile,
    progress: &Progress,
) -> Result<Vec<ClaimRun>, Error> {
    let prepared: Vec<(&Spec, Runner)> = specs
        .iter()
        .map(|s| {
            let def = claims::find(&s.id).ok_or_else(|| SpecError::UnknownClaim {
                file: s.path.clone(),
                line: None,
                id: s.id.clone(),
                known: claims::known_ids(),
            })?;
            Ok((*s, (def.prepare)(s, profile)?))
        })
        .collect::<Result<_, Error>>()?;
    let runs = prepared
        .par_iter()
        .map(|(spec, runner)| {
            progress.message(spec.id.clone());
            let (spec, outcome) = run_escalating(spec, profile, runner, progress);
            progress.inc(1);
            render(&spec, profile, &outcome)
        })
        .collect();
    Ok(runs)
}

/// How many times the precision is doubled before a run stays `inconclusive`.
pub const ESCALATIONS: u32 = 2;

/// Runs a claim at the spec's precision; while a certified check comes out
/// `Unknown` (the enclosures were too wide to decide it), runs it again at twice
/// the precision, at most [`ESCALATIONS`] times. The report states the precision
/// that decided it, and says so when it was raised.
pub fn run_escalating(
    spec: &Spec,
    profile: Profile,
    runner: &Runner,
    progress: &Progress,
) -> (Spec, Outcome) {
    let mut spec = spec.clone();
    let start = spec.precision;
    let mut outcome = runner(&Ctx {
        spec: &spec,
        profile,
        progress,
    });
    for _ in 0..ESCALATIONS {
        if !undecided(&outcome) {
            break;
        }
        spec.precision *= 2;
        outcome = runner(&Ctx {
            spec: &spec,
            profile,
            progress,
        });
    }
    if spec.precision != start {
        outcome.note(format!(
            "Precision raised from {start} to {} bits because a comparison was undecided at {start} bits{}.",
            spec.precision,
            if undecided(&outcome) { " (still undecided)" } else { "" }
        ));
    }
    (spec, outcome)
}

fn undecided(o: &Outcome) -> bool {
    use crate::kernel::Certainty;
    use crate::verdict::CheckKind;
    o.check_list()
        .iter()
        .any(|c| c.kind == CheckKind::Certified && c.result == Certainty::Unknown)
}

/// Renders one outcome into report texts.
pub fn render(spec: &Spec, profile: Profile, outcome: &Outcome) -> ClaimRun {
    let report = Report::new(spec, profile, outcome);
    let markdown = report::report_markdown(&report);
    let svgs = outcome
        .plots
        .iter()
        .zip(&report.plots)
        .map(|(p, r)| (r.file.clone(), report::render_svg(p)))
        .collect();
    let certificate = outcome
        .certificate
        .as_ref()
        .zip(report.certificate.as_ref())
        .map(|(c, f)| {
            let mut t = serde_json::to_string_pretty(c).expect("certificates serialise");
            t.push('\n');
            (f.clone(), t)
        });
    ClaimRun {
        report,
        markdown,
        svgs,
        certificate,
    }
}

/// Writes `text` to `path` through a temporary file and a rename, so a reader
/// (or an interrupted run) never sees a half-written report.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// Writes each run's files under `out/<paper>/`, then rebuilds `out/README.md`
/// from every report present there.
pub fn write_reports(out: &Path, runs: &[ClaimRun]) -> Result<(), Error> {
    for r in runs {
        let dir = out.join(&r.report.paper);
        let name = r
            .report
            .id
            .split_once('/')
            .map(|x| x.1)
            .unwrap_or(&r.report.id);
        write_atomic(&dir.join(format!("{name}.md")), &r.markdown)?;
        write_atomic(&dir.join(format!("{name}.json")), &r.report.to_json())?;
        for (f, t) in &r.svgs {
            write_atomic(&dir.join(f), t)?;
        }
        if let Some((f, t)) = &r.certificate {
            write_atomic(&dir.join(f), t)?;
        }
    }
    let all = read_reports(out)?;
    write_atomic(&out.join("README.md"), &report::index_markdown(&all))
}

/// Reads every JSON report below `out` (sorted by ID); unreadable files are skipped.
pub fn read_reports(out: &Path) -> Result<Vec<Report>, Error> {
    let mut all = Vec::new();
    let Ok(papers) = std::fs::read_dir(out) else {
        return Ok(all);
    };
    for p in papers.flatten() {
        if !p.path().is_dir() {
            continue;
        }
        let Ok(files) = std::fs::read_dir(p.path()) else {
            continue;
        };
        for f in files.flatten() {
            let path = f.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".json") && !name.ends_with(".cert.json") && !name.starts_with('.') {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    if let Ok(r) = serde_json::from_str::<Report>(&text) {
                        all.push(r);
                    }
                }
            }
        }
    }
    all.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(all)
}

/// Compares runs against the committed JSON reports in `out`: a changed verdict,
/// a missing report or figure, or a key figure that moved beyond the spec's
/// `check_tolerance` (relative) is a regression.
pub fn check_against(out: &Path, runs: &[ClaimRun], specs: &[&Spec]) -> Vec<String> {
    let mut problems = Vec::new();
    for r in runs {
        let id = &r.report.id;
        let name = id.split_once('/').map(|x| x.1).unwrap_or(id);
        let path = out.join(&r.report.paper).join(format!("{name}.json"));
        let old = match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Report>(&t).ok())
        {
            Some(o) => o,
            None => {
                problems.push(format!("{id}: no committed report at {}", path.display()));
                continue;
            }
        };
        if old.verdict != r.report.verdict {
            problems.push(format!(
                "{id}: verdict changed from {} to {}",
                old.verdict, r.report.verdict
            ));
        }
        let tol = specs
            .iter()
            .find(|s| &s.id == id)
            .map(|s| s.check_tolerance)
            .unwrap_or(1e-9);
        for f in &old.figures {
            match r.report.figures.iter().find(|n| n.name == f.name) {
                None => problems.push(format!("{id}: key figure `{}` disappeared", f.name)),
                Some(n) => {
                    let same = (n.value.is_nan() && f.value.is_nan()) || n.value == f.value;
                    let scale = f.value.abs().max(f64::MIN_POSITIVE);
                    let within = (n.value - f.value).abs() <= tol * scale;
                    if !same && !within {
                        problems.push(format!(
                            "{id}: key figure `{}` moved from {} to {} (relative tolerance {tol:e})",
                            f.name, f.text, n.text
                        ));
                    }
                }
            }
        }
    }
    problems
}

/// Reads and re-checks a certificate with the kernel alone.
pub fn verify_file(
    path: &Path,
) -> Result<(certificate::Certificate, Vec<ObligationResult>), Error> {
    let text = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    let cert = certificate::parse(path, &text)?;
    let results = certificate::verify(path, &cert)?;
    Ok((cert, results))
}
