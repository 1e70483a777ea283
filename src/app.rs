//! The library API behind the CLI: load specs, select claims, run them, write or
//! check reports, verify certificates.

use crate::certificate::{self, Certificate, CertificateError};
use crate::claims::{self, Ctx, Runner, ShardRecord, Units};
use crate::escalate::Ladder;
use crate::kernel::Checked;
use crate::outcome::Outcome;
use crate::progress::Progress;
use crate::report::{self, Report};
use crate::spec::{Profile, Spec, SpecError, SpecSource};
use crate::verdict::Verdict;
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
    /// A certificate whose statement is not its claim's statement (tampered,
    /// truncated, foreign): `verify` exits 4.
    #[error("{}: rejected: {reason}", path.display())]
    Rejected {
        /// The certificate.
        path: PathBuf,
        /// The first difference.
        reason: String,
    },
}

impl From<crate::sparse::Error> for Error {
    fn from(e: crate::sparse::Error) -> Error {
        match e {
            crate::sparse::Error::Spec(e) => Error::Spec(e),
            crate::sparse::Error::Usage(s) | crate::sparse::Error::Rebuild(s) => Error::Usage(s),
        }
    }
}

impl From<crate::model_window::WindowError> for Error {
    fn from(e: crate::model_window::WindowError) -> Error {
        match e {
            crate::model_window::WindowError::Input(e) => Error::Spec(e),
            crate::model_window::WindowError::Usage(s) => Error::Usage(s),
        }
    }
}

impl Error {
    /// The process exit code: 4 for a rejected certificate, else 2 (bad input or usage).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Rejected { .. } => 4,
            _ => 2,
        }
    }
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Loads every spec below the directory `theorems` ([`load_specs_from`]).
pub fn load_specs(theorems: &Path) -> Result<Vec<Spec>, Error> {
    load_specs_from(&SpecSource::Dir(theorems.to_path_buf()))
}

/// Loads every spec of `source`, checking that each sits at
/// `<paper>/<claim>.toml` matching its ID and names a known claim.
pub fn load_specs_from(source: &SpecSource) -> Result<Vec<Spec>, Error> {
    let mut specs = Vec::new();
    for (path, text) in source.files()? {
        specs.push(load_checked(&path, &text, source.placed())?);
    }
    Ok(specs)
}

/// Parses a spec and checks it names a claim: a registered module's ID, or (written
/// as formulas) an ID no module has; `placed`: it must also sit at
/// `<paper>/<claim>.toml` matching its ID (a spec directory's rule; a spec file named
/// on the command line may sit anywhere).
fn load_checked(path: &Path, text: &str, placed: bool) -> Result<Spec, Error> {
    let s = Spec::parse(path, text)?;
    let expect = format!(
        "{}/{}",
        path.parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or(""),
        path.file_stem().and_then(|n| n.to_str()).unwrap_or("")
    );
    if placed && expect != s.id {
        return Err(SpecError::Field {
            file: path.to_path_buf(),
            line: crate::spec::line_of_key(text, "id"),
            field: "id".into(),
            reason: format!("`{}` does not match the file's place (`{expect}`)", s.id),
        }
        .into());
    }
    match s.kind {
        crate::spec::SpecKind::Formulas => {
            if claims::rebuild::rebuild_of(&s.id).is_some() {
                return Err(SpecError::Field {
                    file: path.to_path_buf(),
                    line: crate::spec::line_of_key(text, "id"),
                    field: "id".into(),
                    reason: format!(
                        "`{}` is a claim of this tool: a claim written as formulas takes an ID of \
                         its own (e.g. mine/{})",
                        s.id,
                        s.name()
                    ),
                }
                .into());
            }
        }
        crate::spec::SpecKind::Module => {
            if claims::find(&s.id).is_none() {
                return Err(SpecError::UnknownClaim {
                    file: path.to_path_buf(),
                    line: crate::spec::line_of_key(text, "id"),
                    id: s.id.clone(),
                    known: format!(
                        "{}; a claim of your own is written as formulas: `kind = \"formulas\"`, \
                         see docs/your-own-claims.md",
                        claims::known_ids()
                    ),
                }
                .into());
            }
        }
    }
    claims::validate_profiles(&s)?;
    Ok(s)
}

/// Reads a spec file named on the command line (`attncheck run FILE.toml`,
/// `verify --spec FILE`): parsed and validated like a spec of a directory, wherever
/// it sits.
pub fn load_spec_file(path: &Path) -> Result<Spec, Error> {
    let text = read_utf8(path)?;
    load_checked(path, &text, false)
}

/// The spec of one claim from `source` (`None` when there is none).
pub fn find_spec(source: &SpecSource, id: &str) -> Result<Option<Spec>, Error> {
    match source.find(id)? {
        None => Ok(None),
        Some((path, text)) => load_checked(&path, &text, source.placed()).map(Some),
    }
}

/// Selects the specs named by `targets` (claim IDs or paper names), or all.
pub fn select<'a>(
    specs: &'a [Spec],
    targets: &[String],
    all: bool,
) -> Result<Vec<&'a Spec>, Error> {
    if all {
        if !targets.is_empty() {
            return Err(Error::Usage(format!(
                "--all runs every claim; it cannot be combined with claim or paper names ({}): drop one",
                targets.join(", ")
            )));
        }
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
            let def = claims::def_of(s).ok_or_else(|| SpecError::UnknownClaim {
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
            let (spec, outcome) = run_escalating(spec, profile, runner, progress, &Units::All);
            progress.inc(1);
            render(&spec, profile, &outcome)
        })
        .collect();
    Ok(runs)
}

/// How many times the precision is doubled before a run stays `inconclusive` (the
/// kernel's, which bounds a certificate's precision with it).
pub use crate::certificate::ESCALATIONS;

/// Runs a claim at the spec's precision; while a certified check comes out
/// `Unknown` (the enclosures were too wide to decide it), runs it again at twice
/// the precision, at most [`ESCALATIONS`] times. The report states the precision
/// that decided it, and says so when it was raised.
pub fn run_escalating(
    spec: &Spec,
    profile: Profile,
    runner: &Runner,
    progress: &Progress,
    units: &Units,
) -> (Spec, Outcome) {
    let start = spec.precision;
    let climbed = crate::escalate::escalate(
        Ladder::new(start, ESCALATIONS),
        |bits| {
            let mut spec = spec.clone();
            spec.precision = bits;
            let outcome = runner(&Ctx {
                spec: &spec,
                profile,
                progress,
                units,
            });
            (spec, outcome)
        },
        |(_, outcome)| !undecided(outcome),
    );
    let still = climbed.is_exhausted();
    let (spec_run, mut outcome) = climbed.into_parts().0;
    if spec_run.precision != start {
        outcome.note(format!(
            "Precision raised from {start} to {} bits because a comparison was undecided at {start} bits{}.",
            spec_run.precision,
            if still { " (still undecided)" } else { "" }
        ));
    }
    (spec_run, outcome)
}

/// The precisions a run of a spec at `precision` bits can decide its statement at
/// (and write into its certificate): the spec's, doubled at most [`ESCALATIONS`] times.
pub fn run_precisions(precision: u32) -> Vec<u32> {
    Ladder::new(precision, ESCALATIONS).precisions()
}

/// The precision is part of the statement `verify` compares: a certificate at a
/// precision its statement's run never uses (`allowed`) is rejected, so raising it
/// cannot make `verify` run for minutes, and lowering it cannot pass for the claim.
fn precision_difference(precision: u32, allowed: &[u32]) -> Option<String> {
    if allowed.contains(&precision) {
        return None;
    }
    let list: Vec<String> = allowed.iter().map(u32::to_string).collect();
    Some(format!(
        "its precision is {precision} bits; the statement is decided at {} bits",
        match list.as_slice() {
            [] => "no".to_string(),
            [one] => one.clone(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
        }
    ))
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
/// and `out/index.html` from every report present there.
pub fn write_reports(out: &Path, runs: &[ClaimRun]) -> Result<(), Error> {
    write_reports_stamped(out, runs, None)
}

/// [`write_reports`], with a stamp (commit, date) in `index.html` only — the
/// committed files stay byte-identical from run to run without one.
pub fn write_reports_stamped(
    out: &Path,
    runs: &[ClaimRun],
    stamp: Option<&str>,
) -> Result<(), Error> {
    for r in runs {
        let dir = out.join(&r.report.paper);
        let name = r.report.stem();
        write_atomic(&dir.join(format!("{name}.md")), &r.markdown)?;
        write_atomic(&dir.join(format!("{name}.json")), &r.report.to_json())?;
        for (f, t) in &r.svgs {
            write_atomic(&dir.join(f), t)?;
        }
        if let Some((f, t)) = &r.certificate {
            write_atomic(&dir.join(f), t)?;
        }
    }
    let (index, html) = render_index(out, stamp)?;
    write_atomic(&out.join("README.md"), &index)?;
    write_atomic(&out.join("index.html"), &html)
}

/// `out/README.md` and `out/index.html` as [`write_reports`] writes them: built from
/// the reports present under `out` (their JSON, Markdown and SVG files), so a report
/// set's index can be checked without running any claim.
pub fn render_index(out: &Path, stamp: Option<&str>) -> Result<(String, String), Error> {
    let all = read_reports(out)?;
    let index = report::index_markdown(&all);
    let mds: Vec<(String, String)> = all
        .iter()
        .filter_map(|r| {
            let name = r.id.split_once('/').map(|x| x.1).unwrap_or(&r.id);
            std::fs::read_to_string(out.join(&r.paper).join(format!("{name}.md")))
                .ok()
                .map(|t| (r.id.clone(), t))
        })
        .collect();
    let image = |id: &str, file: &str| -> Option<String> {
        let paper = id.split('/').next()?;
        std::fs::read_to_string(out.join(paper).join(file)).ok()
    };
    let html = report::html::index_html(&index, &mds, &image, stamp);
    Ok((index, html))
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

/// Checks, before anything runs, that `out` holds committed reports to compare
/// against (a wrong `--out` is a usage error, not 29 regressions).
pub fn check_baseline_dir(out: &Path) -> Result<(), Error> {
    let has_reports = std::fs::read_dir(out)
        .map(|it| {
            it.flatten().any(|p| {
                p.path().is_dir()
                    && std::fs::read_dir(p.path()).is_ok_and(|f| {
                        f.flatten().any(|f| {
                            f.file_name()
                                .to_str()
                                .is_some_and(|n| n.ends_with(".json") && !n.ends_with(".cert.json"))
                        })
                    })
            })
        })
        .unwrap_or(false);
    if has_reports {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "--check compares against committed reports, but {} holds none (expected <paper>/<claim>.json files); \
             pass the directory `attncheck run` wrote with --out",
            out.display()
        )))
    }
}

/// Reads one committed report; a missing file is `Ok(None)`, a corrupt one an error.
pub fn read_baseline(path: &Path) -> Result<Option<Report>, Error> {
    if let Err(e) = std::fs::metadata(path) {
        return match e.kind() {
            std::io::ErrorKind::NotFound => Ok(None),
            _ => Err(io(path, e)),
        };
    }
    let text = read_utf8(path)?;
    serde_json::from_str::<Report>(&text)
        .map(Some)
        .map_err(|e| Error::Usage(format!(
            "{}:{}: the committed report is not a valid attncheck report ({e}); restore it from version control or rerun without --check",
            path.display(),
            e.line()
        )))
}

/// Compares runs against the committed JSON reports in `out`, check by check: a
/// changed verdict or expectation, a check that appeared, disappeared or changed
/// its result or kind, a key figure that disappeared or moved beyond the spec's
/// `check_tolerance` (relative), and any change of the effective parameters,
/// precision or tolerance (a loosened tolerance is named as such). Each problem is
/// one line. A corrupt baseline is an error.
pub fn check_against(out: &Path, runs: &[ClaimRun]) -> Result<Vec<String>, Error> {
    let mut problems = Vec::new();
    for r in runs {
        let id = &r.report.id;
        let name = id.split_once('/').map(|x| x.1).unwrap_or(id);
        let path = out.join(&r.report.paper).join(format!("{name}.json"));
        let Some(old) = read_baseline(&path)? else {
            problems.push(format!("{id}: no committed report at {}", path.display()));
            continue;
        };
        problems.extend(
            crate::report::diff(&old, &r.report)
                .into_iter()
                .map(|p| format!("{id}: {p}")),
        );
    }
    Ok(problems)
}

/// How `verify` checked a certificate's statement.
#[derive(Clone, Debug, PartialEq)]
pub enum StatementSource {
    /// Rebuilt from this spec and found equal.
    Spec(PathBuf),
    /// Not checked (`--no-spec`): only the certificate's own formulas were evaluated.
    Unchecked,
}

/// A verified certificate.
pub struct Verification {
    /// The certificate as read.
    pub cert: Certificate,
    /// The statement the kernel decided: rebuilt from the spec (and found equal to
    /// the certificate's), or the certificate's own with `--no-spec`.
    pub statement: crate::kernel::Statement,
    /// The kernel's decisions.
    pub checked: Checked,
    /// Where the statement came from.
    pub source: StatementSource,
}

/// Reads a file as UTF-8; invalid bytes are an error naming the line.
pub fn read_utf8(path: &Path) -> Result<String, Error> {
    Ok(crate::spec::read_utf8(path)?)
}

/// Reads a certificate, rebuilds its claim's statement from the spec below
/// `theorems` (unless `theorems` is `None`), requires the certificate to carry
/// exactly that statement, and decides it with the kernel alone.
pub fn verify_file(path: &Path, theorems: Option<&Path>) -> Result<Verification, Error> {
    verify_with(
        path,
        theorems.map(|d| SpecSource::Dir(d.to_path_buf())).as_ref(),
        None,
    )
}

/// [`verify_file`] with the specs from any [`SpecSource`] (`None`: do not check the
/// statement). A `sparse construct` certificate is rebuilt from its hints and the
/// target matrix: `target`'s Matrix Market file when given (so it must be about
/// exactly that A), else the A it pins.
pub fn verify_with(
    path: &Path,
    theorems: Option<&SpecSource>,
    target: Option<&Path>,
) -> Result<Verification, Error> {
    verify_inputs(
        path,
        theorems,
        &claims::rebuild::Inputs {
            target,
            formula: None,
            model: None,
        },
    )
}

/// [`verify_with`] with every input a certificate may be rebuilt from: `--target` for
/// a `sparse construct` certificate, `--formula` for a `prove --cert` one (given for a
/// certificate of another kind, `--formula` is a usage error, as is `--target` for a
/// formula certificate).
pub fn verify_inputs(
    path: &Path,
    theorems: Option<&SpecSource>,
    inputs: &claims::rebuild::Inputs,
) -> Result<Verification, Error> {
    let text = read_utf8(path)?;
    let cert = certificate::parse(path, &text)?;
    let reject = |reason: String| Error::Rejected {
        path: path.to_path_buf(),
        reason,
    };
    let (st, source) = match theorems {
        None => (cert.statement(path)?, StatementSource::Unchecked),
        Some(source) => {
            // the statement rebuilt, the precisions it is decided at, what it was
            // rebuilt from, and that source as the subject of "… give(s)"
            // a claim of this tool, or else one written as formulas in the spec source
            let rebuild = match claims::rebuild::rebuild_of(&cert.claim) {
                Some(r) => r,
                None => match find_spec(source, &cert.claim)? {
                    Some(spec) if spec.kind == crate::spec::SpecKind::Formulas => {
                        claims::rebuild::Rebuild::Spec(&claims::formulas::DEF)
                    }
                    _ => {
                        return Err(reject(format!(
                        "`{}` is not a claim of this tool (known: {}), nor of a spec written as \
                             formulas in {source} (a claim of your own: pass --spec FILE)",
                        cert.claim,
                        claims::rebuild::known_ids()
                    )))
                    }
                },
            };
            let (rebuilt, allowed, from, against) = match rebuild {
                claims::rebuild::Rebuild::Input(def) => {
                    // each certificate kind takes its own input option; --target is
                    // refused for the kinds that take another (a spec claim's
                    // certificate has always ignored it)
                    if let Some(option) = inputs.given().into_iter().find(|o| *o != def.option) {
                        return Err(Error::Usage(format!(
                            "{option} does not apply to {}: it is a certificate of `{}`, which \
                             takes {}",
                            path.display(),
                            cert.claim,
                            def.option
                        )));
                    }
                    let rebuilt =
                        (def.rebuild)(&cert, inputs).map_err(|e| reject(e.to_string()))?;
                    let from =
                        PathBuf::from((def.given)(inputs).unwrap_or_else(|| (def.pinned)(&cert)));
                    let allowed = (def.precisions)(&cert);
                    (
                        rebuilt,
                        allowed,
                        from,
                        "its target and hints give".to_string(),
                    )
                }
                claims::rebuild::Rebuild::Spec(_) => {
                    if inputs.formula.is_some() {
                        return Err(Error::Usage(format!(
                            "--formula applies to the certificates `attncheck prove --cert` \
                             writes; {} is a certificate of `{}`",
                            path.display(),
                            cert.claim
                        )));
                    }
                    if inputs.model.is_some() {
                        return Err(Error::Usage(format!(
                            "--model applies to the certificates `attncheck window` writes; {} \
                             is a certificate of `{}`",
                            path.display(),
                            cert.claim
                        )));
                    }
                    let spec = find_spec(source, &cert.claim)?.ok_or_else(|| {
                        Error::Usage(format!(
                            "no spec for `{}` in {source}: pass --theorems DIR (--spec FILE for a claim of \
                             your own), or --no-spec to evaluate the certificate's formulas without checking what they state",
                            cert.claim
                        ))
                    })?;
                    // the data the statement is built from (attention weights), read and
                    // validated by the kernel (sizes, finiteness, hash) before any use
                    let carried = carried_data(path, &cert)?;
                    let rebuilt =
                        claims::statement_of_carrying(&spec, cert.profile, &cert.hints, &carried)
                            .map_err(|e| reject(e.to_string()))?
                            .ok_or_else(|| {
                                reject(format!(
                                    "{} has no statement: it certifies nothing by certificate",
                                    cert.claim
                                ))
                            })?;
                    let against = format!("{} gives", spec.path.display());
                    (rebuilt, run_precisions(spec.precision), spec.path, against)
                }
            };
            let expected = Certificate::of(&rebuilt, cert.profile, cert.precision, &cert.hints);
            if let Some(d) = cert
                .statement_difference(&expected)
                .or_else(|| precision_difference(cert.precision, &allowed))
            {
                return Err(reject(format!(
                    "its statement is not the one {against}: {d}"
                )));
            }
            (rebuilt, StatementSource::Spec(from))
        }
    };
    let checked = crate::kernel::check(&st, cert.precision).map_err(|e| {
        let field = format!("obligations[{}].formula", e.index);
        CertificateError {
            file: path.into(),
            line: certificate::line_of_field(&text, &field),
            field,
            reason: e.error.to_string(),
        }
    })?;
    Ok(Verification {
        cert,
        statement: st,
        checked,
        source,
    })
}

/// What [`window`] did: the windows, the document of `OUT/<model>.windows.json`, and the
/// two files' paths (written only when every obligation is proven).
pub struct WindowRun {
    /// The windows and the certificate.
    pub windows: crate::model_window::Windows,
    /// The JSON document.
    pub doc: serde_json::Value,
    /// `OUT/<model>.windows.json`.
    pub doc_path: PathBuf,
    /// `OUT/<model>.cert.json`.
    pub cert_path: PathBuf,
}

/// `attncheck window` (and the Python binding's `window`): reads the config and the
/// model, certifies every head's window ([`crate::model_window::certify`]) and, when the
/// kernel proves every obligation, writes the document and the certificate atomically
/// (nothing otherwise: the caller reports the undecided obligations, exit 3).
pub fn window(
    model: &Path,
    config: &Path,
    epsilon: &str,
    precision: u32,
    out: &Path,
) -> Result<WindowRun, Error> {
    use crate::model_window as mw;
    let eps = crate::spec::exact("--epsilon", epsilon).map_err(|e| Error::Usage(e.to_string()))?;
    let cfg = mw::config::Config::read(config)?;
    let windows = mw::certify(model, &cfg, &eps, precision)?;
    let stem = model
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    let cert_path = out.join(format!("{stem}.cert.json"));
    let doc_path = out.join(format!("{stem}.windows.json"));
    let doc = mw::report_json(&windows, model, config, &cert_path);
    if windows.undecided.is_empty() {
        write_atomic(
            &cert_path,
            &serde_json::to_string_pretty(&windows.certificate).unwrap_or_default(),
        )?;
        write_atomic(
            &doc_path,
            &serde_json::to_string_pretty(&doc).unwrap_or_default(),
        )?;
    }
    Ok(WindowRun {
        windows,
        doc,
        doc_path,
        cert_path,
    })
}

/// The certificate's data of the kinds a statement is built from (`attn-weights`: the
/// trained-model claim's windows), each read by the kernel; errors name the field.
/// What [`verify_inputs`] rebuilds a spec claim's statement with.
pub fn carried_data(
    path: &Path,
    cert: &Certificate,
) -> Result<crate::kernel::expr::Data, CertificateError> {
    let mut data = crate::kernel::expr::Data::new();
    for (name, e) in &cert.data {
        if matches!(e, certificate::DataEntry::AttnWeights { .. }) {
            let d = e.to_datum().map_err(|(f, reason)| CertificateError {
                file: path.into(),
                line: None,
                field: format!("data.{name}.{f}"),
                reason,
            })?;
            data.insert(name.clone(), d);
        }
    }
    Ok(data)
}

/// One obligation under `verify --coq`: the kernel's decision and Coq's.
pub struct CoqObligation {
    /// The obligation's name.
    pub name: String,
    /// What the statement asserts.
    pub expect: crate::kernel::Expect,
    /// The kernel's result.
    pub kernel: crate::kernel::Certainty,
    /// Whether the kernel's result is what the statement asserts.
    pub kernel_as_expected: bool,
    /// Whether the kernel decided it contrary to what the statement asserts.
    pub kernel_contrary: bool,
    /// Coq's verdict (kernel-only with the reason when not sent to Coq).
    pub coq: crate::coq::CoqVerdict,
}

impl CoqObligation {
    /// Certifiably not as asserted: the kernel decided it contrary, or Coq
    /// rejected it.
    pub fn contrary(&self) -> bool {
        self.kernel_contrary || matches!(self.coq, crate::coq::CoqVerdict::Rejected(_))
    }

    /// Which checker(s) it rests on, for people: `Coq + kernel` or `kernel only`.
    pub fn checker(&self) -> &'static str {
        match self.coq {
            crate::coq::CoqVerdict::Proven => "Coq + kernel",
            crate::coq::CoqVerdict::Rejected(_) => "Coq rejects",
            crate::coq::CoqVerdict::KernelOnly(_) => "kernel only",
        }
    }
}

/// The result of `verify --coq`.
pub struct CoqVerification {
    /// Per obligation, in the statement's order.
    pub obligations: Vec<CoqObligation>,
    /// The axioms Coq's proofs rest on (all allowed).
    pub axioms: Vec<String>,
    /// One word for the result.
    pub word: &'static str,
    /// The exit code (README's `verify` table): 0 when the kernel decides every
    /// obligation as asserted and Coq proves every obligation sent to it; 1 when
    /// the kernel finds one contrary or Coq rejects one; 3 when the kernel leaves
    /// one undecided (and nothing is contrary); 1 as well when Coq rejects the
    /// Boolean limit of the certificate's witnesses ([`crate::coq::instance`]).
    pub exit_code: u8,
    /// The Boolean limit of the certificate's witnesses, stated and proven in Coq
    /// (clusters/boolean-limit).
    pub instance: Option<crate::coq::InstanceProof>,
}

/// `verify --coq`: after [`verify_with`] (the statement rebuilt from the spec and
/// matched, exit 4 otherwise, and decided by the kernel: the kernel runs first on
/// every obligation), re-proves in Coq the obligations the translation sends, from
/// the very statement the kernel decided. Exit 0 only if every obligation is as
/// asserted by the kernel and each one sent to Coq is proven by Coq.
pub fn verify_coq(
    v: &Verification,
    limits: &crate::coq::Limits,
) -> Result<CoqVerification, crate::coq::CoqError> {
    use crate::kernel::{Certainty, Expect};
    let decided = Certificate::of(
        &v.statement,
        v.cert.profile,
        v.cert.precision,
        &v.cert.hints,
    );
    let report = crate::coq::check(&decided, &v.checked, limits)?;
    let obligations: Vec<CoqObligation> = v
        .checked
        .decisions()
        .iter()
        .zip(report.results)
        .map(|(d, (_, coq))| CoqObligation {
            name: d.name().to_string(),
            expect: d.expect(),
            kernel: d.result(),
            kernel_as_expected: d.as_expected(),
            kernel_contrary: d.contrary(),
            coq,
        })
        .collect();
    let instance_rejected = report
        .instance
        .as_ref()
        .is_some_and(crate::coq::InstanceProof::rejected);
    let contrary = obligations.iter().any(|o| o.contrary()) || instance_rejected;
    let kernel_contrary = obligations.iter().any(|o| o.kernel_contrary);
    let undecided = obligations.iter().any(|o| o.kernel == Certainty::Unknown);
    let (word, exit_code) = if kernel_contrary {
        ("disproven", 1)
    } else if contrary {
        ("rejected by Coq", 1)
    } else if undecided {
        ("undecided", 3)
    } else if obligations.iter().any(|o| o.expect == Expect::Fails) {
        ("refuted, as the statement asserts", 0)
    } else {
        ("certified", 0)
    };
    Ok(CoqVerification {
        obligations,
        axioms: report.axioms,
        word,
        exit_code,
        instance: report.instance,
    })
}

/// `verify`'s result without Coq (README's `verify` table): the word and the exit code:
/// 1 when an obligation is certifiably contrary to what it asserts, 3 when one is
/// undecided, else 0.
pub fn verify_result(v: &Verification) -> (&'static str, u8) {
    use crate::kernel::{Certainty, Expect};
    let ds = v.checked.decisions();
    if ds.iter().any(|d| d.contrary()) {
        ("disproven", 1)
    } else if ds.iter().any(|d| d.result() == Certainty::Unknown) {
        ("undecided", 3)
    } else if ds.iter().any(|d| d.expect() == Expect::Fails) {
        ("refuted, as the statement asserts", 0)
    } else {
        ("certified", 0)
    }
}

/// The JSON document of `attncheck verify --json` (also what the Python binding's
/// `verify` returns).
pub fn verify_json(v: &Verification) -> serde_json::Value {
    let (word, code) = verify_result(v);
    let obligations: Vec<_> = v
        .checked
        .decisions()
        .iter()
        .map(|d| {
            serde_json::json!({"name": d.name(), "expect": d.expect(), "result": d.result(),
                "as_expected": d.as_expected()})
        })
        .collect();
    serde_json::json!({"claim": v.cert.claim, "profile": v.cert.profile,
        "precision": v.cert.precision, "statement_checked": matches!(v.source, StatementSource::Spec(_)),
        "result": word, "exit_code": code, "obligations": obligations})
}

/// The JSON document of `attncheck verify --coq --json` (also what the Python
/// binding's `verify(…, coq=True)` returns).
pub fn verify_coq_json(v: &Verification, r: &CoqVerification) -> serde_json::Value {
    use crate::coq::CoqVerdict;
    let count = |f: fn(&CoqVerdict) -> bool| r.obligations.iter().filter(|o| f(&o.coq)).count();
    let by_coq = count(|c| *c == CoqVerdict::Proven);
    let rejected = count(|c| matches!(c, CoqVerdict::Rejected(_)));
    let kernel_only = r.obligations.len() - by_coq - rejected;
    let obligations: Vec<_> = r
        .obligations
        .iter()
        .map(|o| {
            let (coq, reason) = match &o.coq {
                CoqVerdict::Proven => ("proven", None),
                CoqVerdict::Rejected(why) => ("rejected", Some(why)),
                CoqVerdict::KernelOnly(why) => ("kernel-only", Some(why)),
            };
            serde_json::json!({"name": o.name, "expect": o.expect, "result": o.kernel,
                "as_expected": o.kernel_as_expected && !o.contrary(), "checker": o.checker(),
                "coq": coq, "coq_reason": reason})
        })
        .collect();
    serde_json::json!({"claim": v.cert.claim, "profile": v.cert.profile,
    "precision": v.cert.precision, "statement_checked": matches!(v.source, StatementSource::Spec(_)),
    "result": r.word, "exit_code": r.exit_code, "proven_by_coq": by_coq, "kernel_only": kernel_only,
    "rejected_by_coq": rejected, "coq_axioms": r.axioms, "obligations": obligations,
    "instance": r.instance.as_ref().map(|i| {
        i.witnesses.iter().map(|w| {
            let (coq, reason) = match &w.verdict {
                CoqVerdict::Proven => ("proven", None),
                CoqVerdict::Rejected(why) => ("rejected", Some(why)),
                CoqVerdict::KernelOnly(why) => ("kernel-only", Some(why)),
            };
            serde_json::json!({"witness": w.label, "theorems": w.theorems, "coq": coq,
                "coq_reason": reason})
        }).collect::<Vec<_>>()
    })})
}

/// The JSON document of `attncheck run --json` (format `attncheck-run/1`,
/// documented in docs/run-json.md): one entry per claim with its verdict, what was
/// expected, why it is not as expected, every check, and the paths of the files a
/// run writes; with `--check`, the regressions.
pub fn run_json(
    runs: &[ClaimRun],
    out: &Path,
    profile: Profile,
    regressions: Option<&[String]>,
    exit_code: u8,
) -> String {
    let claims: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            let dir = out.join(&r.report.paper);
            let name = r.report.stem();
            serde_json::json!({
                "id": r.report.id,
                "verdict": r.report.verdict,
                "expected": r.report.expected,
                "as_expected": r.report.as_expected,
                "unexpected": r.report.unexpected(),
                "reason": r.report.reason,
                "checks": r.report.checks.iter().map(|c| serde_json::json!({
                    "name": c.name, "kind": c.kind, "result": c.result, "expect": c.expect,
                    "part": c.part,
                })).collect::<Vec<_>>(),
                "report": dir.join(format!("{name}.md")),
                "json": dir.join(format!("{name}.json")),
                "certificate": r.certificate.as_ref().map(|(f, _)| dir.join(f)),
            })
        })
        .collect();
    let v = serde_json::json!({
        "format": "attncheck-run/1",
        "tool": crate::report::tool(),
        "profile": profile,
        "out": out,
        "claims": claims,
        "regressions": regressions,
        "exit_code": exit_code,
    });
    serde_json::to_string_pretty(&v).expect("serialises")
}

/// The differences between two report directories, one line each, prefixed
/// with the claim ID (claims present in only one of them included).
pub fn diff_dirs(old: &Path, new: &Path) -> Result<Vec<String>, Error> {
    for d in [old, new] {
        if !d.is_dir() {
            return Err(Error::Usage(format!("{} is not a directory", d.display())));
        }
    }
    let strict = |d: &Path| -> Result<Vec<Report>, Error> {
        let mut all = Vec::new();
        for p in std::fs::read_dir(d).map_err(|e| io(d, e))?.flatten() {
            if !p.path().is_dir() {
                continue;
            }
            for f in std::fs::read_dir(p.path())
                .map_err(|e| io(&p.path(), e))?
                .flatten()
            {
                let path = f.path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.ends_with(".json")
                    && !name.ends_with(".cert.json")
                    && !name.starts_with('.')
                {
                    if let Some(r) = read_baseline(&path)? {
                        all.push(r);
                    }
                }
            }
        }
        all.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(all)
    };
    let (a, b) = (strict(old)?, strict(new)?);
    let mut out = Vec::new();
    for r in &a {
        match b.iter().find(|n| n.id == r.id) {
            None => out.push(format!("{}: only in {}", r.id, old.display())),
            Some(n) => out.extend(
                crate::report::diff(r, n)
                    .into_iter()
                    .map(|l| format!("{}: {l}", r.id)),
            ),
        }
    }
    for n in &b {
        if !a.iter().any(|r| r.id == n.id) {
            out.push(format!("{}: only in {}", n.id, new.display()));
        }
    }
    Ok(out)
}

/// One shard's results (`run ID --shard i/N`), written as
/// `<out>/<paper>/<claim>.shard-<i>-of-<N>.json` and joined by [`merge_shards`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFile {
    /// `attncheck-shard/1`.
    pub format: String,
    /// The claim.
    pub claim: String,
    /// The profile.
    pub profile: Profile,
    /// The spec's effective parameters (every shard must be of the same spec).
    pub params: serde_json::Value,
    /// The spec's precision.
    pub precision: u32,
    /// This shard (0-based) …
    pub shard: u64,
    /// … of this many.
    pub of: u64,
    /// The further sweep this is a shard of (`run --shard i/N --sweep NAME`), absent for
    /// the claim's own units: a sweep added after others ran, with its own shard count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<String>,
    /// Every unit key of the sweep, and this shard's results.
    pub record: ShardRecord,
}

/// The shard file format tag.
pub const SHARD_FORMAT: &str = "attncheck-shard/1";

/// Parses `i/N` (1 ≤ i ≤ N, as users count jobs; Slurm's `$SLURM_ARRAY_TASK_ID`
/// from 1) into the 0-based index and the count.
pub fn parse_shard(s: &str) -> Result<(u64, u64), Error> {
    let bad = || {
        Error::Usage(format!(
            "--shard takes i/N with 1 ≤ i ≤ N (e.g. 3/8), not `{s}`"
        ))
    };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i == 0 || i > n || n > MAX_SHARDS {
        return Err(bad());
    }
    Ok((i - 1, n))
}

/// The most shards a run may be split into (`--shard i/N`, a shard file's `of`).
pub const MAX_SHARDS: u64 = 100_000;

impl ShardFile {
    /// The field and the reason when `of` is outside 1..=[`MAX_SHARDS`] or
    /// `shard` is not below it, or the sweep's name is not one a run could write
    /// (checked on reading and again by the merge).
    fn count_error(&self) -> Option<(&'static str, String)> {
        if let Some(s) = self
            .sweep
            .as_deref()
            .filter(|s| !claims::valid_sweep_name(s))
        {
            Some((
                "sweep",
                format!("`{s}` is not a sweep's name (a lower-case letter, then lower-case letters, digits and hyphens, at most 32)"),
            ))
        } else if self.of == 0 || self.of > MAX_SHARDS {
            Some((
                "of",
                format!("{} shards; a run splits into 1 to {MAX_SHARDS}", self.of),
            ))
        } else if self.shard >= self.of {
            Some((
                "shard",
                format!(
                    "{} is not below `of` = {} (the file counts shards from 0: shard i of N is i − 1)",
                    self.shard, self.of
                ),
            ))
        } else {
            None
        }
    }
}

/// The 1-based line of a shard file's top-level field `key`: the line that
/// starts with it at the two-space indent `run --shard` writes, else the first
/// line that mentions it (a file edited by hand).
fn shard_field_line(text: &str, key: &str) -> Option<usize> {
    let quoted = format!("\"{key}\"");
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .position(|l| l.strip_prefix("  ").is_some_and(|r| r.starts_with(&quoted)))
        .or_else(|| lines.iter().position(|l| l.contains(&quoted)))
        .map(|i| i + 1)
}

/// Runs one shard of each selected claim: only the units of work that fall to
/// shard `index` of `count` are computed. Fails for a claim with no independent units.
pub fn run_shard(
    specs: &[&Spec],
    profile: Profile,
    index: u64,
    count: u64,
    sweep: Option<&str>,
    progress: &Progress,
) -> Result<Vec<ShardFile>, Error> {
    if let Some(s) = sweep.filter(|s| !claims::valid_sweep_name(s)) {
        return Err(Error::Usage(format!(
            "--sweep `{s}`: a sweep's name is a lower-case letter, then lower-case letters, digits and hyphens (at most 32)"
        )));
    }
    let mut out = Vec::new();
    for spec in specs {
        let def = claims::def_of(spec).expect("loaded specs name known claims");
        let runner = (def.prepare)(spec, profile)?;
        let units = Units::Shard {
            index,
            count,
            sweep: sweep.map(str::to_string),
            record: Default::default(),
        };
        progress.message(match sweep {
            None => format!("{} (shard {}/{count})", spec.id, index + 1),
            Some(s) => format!("{} (sweep {s}, shard {}/{count})", spec.id, index + 1),
        });
        let (_, outcome) = run_escalating(spec, profile, &runner, progress, &units);
        let Units::Shard { record, .. } = units else {
            unreachable!()
        };
        let record = record.into_inner().expect("shard record");
        if record.keys.is_empty() {
            // a run that stopped before its units (a missing input, a budget) says why:
            // "no units" alone sent a fresh machine without the trained-model corpus astray
            let why = match outcome.verdict(spec.rigour, spec.lemma_part()) {
                (Verdict::Inconclusive, Some(why)) => Some(why),
                _ => None,
            };
            if let Some(s) = sweep {
                // (a sweep's shard leaves the claim's own units to their shards, so the run
                // itself is always inconclusive: its reason is said, not taken for the cause)
                return Err(Error::Usage(format!(
                    "{} has no sweep `{s}` in its {profile} profile, or stopped before its units (--sweep names a further sweep the claim's spec sets){}",
                    spec.id,
                    why.map(|w| format!("; the run said: {w}")).unwrap_or_default()
                )));
            }
            if let Some(why) = why {
                return Err(Error::Usage(format!(
                    "{} stopped before its units of work, so there is nothing to shard: {why}",
                    spec.id
                )));
            }
            return Err(Error::Usage(format!(
                "{} has no independent units of work to shard; run it without --shard",
                spec.id
            )));
        }
        out.push(ShardFile {
            format: SHARD_FORMAT.into(),
            claim: spec.id.clone(),
            profile,
            params: shard_params(spec, profile, sweep),
            precision: spec.precision,
            shard: index,
            of: count,
            sweep: sweep.map(str::to_string),
            record,
        });
    }
    Ok(out)
}

/// The parameters a shard records and `merge` compares: the merged parameters without
/// their `pins` and `probes` tables (probes are inputs a report re-evaluates on the models
/// the shards produced: like pins, a reading of outputs), and with of their `sweeps` tables
/// only the shard's own sweep.
/// Pins are hashes a spec states of what the runs produce (a trained model's weights):
/// they check outputs and change nothing a unit computes, so pins written after a sweep
/// ran do not orphan its shards. A further sweep's table (`sweeps.NAME`) sets only that
/// sweep's units ([`claims::Ctx::unit_in`]), so a sweep added later orphans neither the
/// claim's own shards nor another sweep's, while a change of it is a change of its own
/// shards' parameters.
fn shard_params(spec: &Spec, profile: Profile, sweep: Option<&str>) -> serde_json::Value {
    fn strip(t: &mut toml::Table, sweep: Option<&str>) {
        t.remove("pins");
        t.remove("probes");
        if let Some(toml::Value::Table(sw)) = t.get_mut("sweeps") {
            sw.retain(|k, _| sweep.is_some_and(|s| s == k));
        }
        if t.get("sweeps")
            .and_then(toml::Value::as_table)
            .is_some_and(toml::Table::is_empty)
        {
            t.remove("sweeps");
        }
        for (_, v) in t.iter_mut() {
            if let toml::Value::Table(x) = v {
                strip(x, sweep);
            }
        }
    }
    let mut t = spec.merged(profile);
    strip(&mut t, sweep);
    serde_json::to_value(t).unwrap_or_default()
}

/// The path of a shard file below `out`.
pub fn shard_path(out: &Path, f: &ShardFile) -> PathBuf {
    let (paper, name) = f.claim.split_once('/').unwrap_or(("", &f.claim));
    let name = match &f.sweep {
        None => name.to_string(),
        Some(s) => format!("{name}.{s}"),
    };
    out.join(paper)
        .join(format!("{name}.shard-{}-of-{}.json", f.shard + 1, f.of))
}

/// Every shard file below the given directories (or the files themselves).
pub fn find_shards(paths: &[PathBuf]) -> Result<Vec<(PathBuf, ShardFile)>, Error> {
    fn walk(p: &Path, depth: usize, acc: &mut Vec<PathBuf>) {
        if p.is_dir() && depth < 4 {
            if let Ok(rd) = std::fs::read_dir(p) {
                let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
                v.sort();
                for q in v {
                    walk(&q, depth + 1, acc);
                }
            }
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains(".shard-") && n.ends_with(".json"))
        {
            acc.push(p.to_path_buf());
        }
    }
    let mut files = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(Error::Usage(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
        walk(p, 0, &mut files);
    }
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|p| {
            let text = read_utf8(&p)?;
            let f: ShardFile = serde_json::from_str(&text).map_err(|e| {
                Error::Usage(format!(
                    "{}:{}: not a shard file: {e}",
                    p.display(),
                    e.line()
                ))
            })?;
            let at = |key: &str, why: String| {
                let line = shard_field_line(&text, key)
                    .map(|l| format!(":{l}"))
                    .unwrap_or_default();
                Error::Usage(format!("{}{line}: {key}: {why}", p.display()))
            };
            if f.format != SHARD_FORMAT {
                return Err(at(
                    "format",
                    format!("`{}`, expected `{SHARD_FORMAT}`", f.format),
                ));
            }
            if let Some((key, why)) = f.count_error() {
                return Err(at(key, why));
            }
            Ok((p, f))
        })
        .collect()
}

/// Joins the shards of each claim into the run an unsharded run gives (byte for
/// byte the same reports): every shard of 0..N present once, all of the same spec,
/// each holding results only for its own units, together covering every unit.
pub fn merge_shards(
    specs: &[Spec],
    shards: Vec<(PathBuf, ShardFile)>,
    progress: &Progress,
) -> Result<Vec<ClaimRun>, Error> {
    use std::collections::BTreeMap;
    if shards.is_empty() {
        return Err(Error::Usage(
            "no shard files found (expected <claim>.shard-<i>-of-<N>.json)".into(),
        ));
    }
    let mut by_claim: BTreeMap<String, Vec<(PathBuf, ShardFile)>> = BTreeMap::new();
    for (p, f) in shards {
        by_claim.entry(f.claim.clone()).or_default().push((p, f));
    }
    let mut runs = Vec::new();
    for (id, files) in by_claim {
        let spec = specs
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| Error::Usage(format!("{id}: no spec for this claim")))?;
        let profile = files[0].1.profile;
        // the claim's own shards and each further sweep's, each a complete set of its own
        let mut groups: BTreeMap<Option<String>, Vec<&(PathBuf, ShardFile)>> = BTreeMap::new();
        for x in &files {
            groups.entry(x.1.sweep.clone()).or_default().push(x);
        }
        let mut results = BTreeMap::new();
        let sweeps: std::collections::BTreeSet<String> = groups.keys().flatten().cloned().collect();
        for (sweep, group) in &groups {
            merge_sweep(
                spec,
                profile,
                sweep.as_deref(),
                &sweeps,
                group,
                &mut results,
            )?;
        }
        let def = claims::def_of(spec).expect("known");
        let runner = (def.prepare)(spec, profile)?;
        let units = Units::Merge {
            results,
            missing: Default::default(),
            sweeps,
        };
        let (spec2, outcome) = run_escalating(spec, profile, &runner, progress, &units);
        if let Units::Merge {
            missing, results, ..
        } = &units
        {
            let m = missing.lock().expect("missing");
            if let Some(k) = m.first() {
                return Err(Error::Usage(if results.contains_key(k) {
                    format!(
                        "{id}: a shard's result for unit `{k}` is not a value the claim computes (was the file edited?)"
                    )
                } else {
                    format!(
                        "{id}: the merged run needs unit `{k}`, which no shard computed (a precision escalation?)"
                    )
                }));
            }
        }
        runs.push(render(&spec2, profile, &outcome));
    }
    Ok(runs)
}

/// Checks one sweep's shards of `spec` (the claim's own, `sweep` = `None`, or a further
/// sweep's, of the merged further `sweeps`) and adds their results to `results`: every file a shard of the same count and
/// profile, run with the parameters the spec now states for that sweep, listing the same
/// units (each of that sweep), each shard once, holding only its own units, and none
/// missing.
fn merge_sweep(
    spec: &Spec,
    profile: Profile,
    sweep: Option<&str>,
    sweeps: &std::collections::BTreeSet<String>,
    files: &[&(PathBuf, ShardFile)],
    results: &mut std::collections::BTreeMap<String, serde_json::Value>,
) -> Result<(), Error> {
    let id = &spec.id;
    let (p0, f0) = files[0];
    let params = shard_params(spec, profile, sweep);
    // a further sweep's keys are `NAME: …` (claims::unit_key); the claim's own are not
    // one of the merged sweeps'
    let of_sweep = |k: &str| match sweep {
        Some(s) => k.starts_with(&format!("{s}: ")),
        None => !sweeps.iter().any(|s| k.starts_with(&format!("{s}: "))),
    };
    let named = match sweep {
        None => String::new(),
        Some(s) => format!(" of sweep {s}"),
    };
    // which of 0..of are present (a set, not a vector of `of` flags: `of`
    // comes from the file)
    let mut seen = std::collections::BTreeSet::new();
    for (p, f) in files.iter().map(|x| (&x.0, &x.1)) {
        let bad = |why: String| Error::Usage(format!("{}: {why}", p.display()));
        if f.of != f0.of || f.profile != profile {
            return Err(bad(format!(
                "shard of {} ({}){named}, but {} is a shard of {} ({})",
                f.of,
                f.profile,
                p0.display(),
                f0.of,
                f0.profile
            )));
        }
        if f.params != params || f.precision != spec.precision {
            return Err(bad(format!(
                "was run with other parameters than {} now states",
                spec.path.display()
            )));
        }
        if f.record.keys != f0.record.keys {
            return Err(bad("lists other units than the other shards".into()));
        }
        if let Some(k) = f.record.keys.iter().find(|k| !of_sweep(k)) {
            return Err(bad(format!("lists unit `{k}`, which is not of its sweep")));
        }
        if let Some((key, why)) = f.count_error() {
            return Err(bad(format!("{key}: {why}")));
        }
        if !seen.insert(f.shard) {
            return Err(bad(format!(
                "shard {} of {}{named} appears twice",
                f.shard + 1,
                f.of
            )));
        }
        for (k, v) in &f.record.results {
            if claims::shard_of(k, f.of) != f.shard || !f.record.keys.contains(k) {
                return Err(bad(format!("holds unit `{k}`, which is not its own")));
            }
            results.insert(k.clone(), v.clone());
        }
    }
    // every index seen is below `of`, so the first gap, if any, is at most seen.len()
    if let Some(i) = (0..f0.of).take(seen.len() + 1).find(|i| !seen.contains(i)) {
        return Err(Error::Usage(format!(
            "{id}: shard {} of {}{named} is missing",
            i + 1,
            f0.of
        )));
    }
    if let Some(k) = f0.record.keys.iter().find(|k| !results.contains_key(*k)) {
        return Err(Error::Usage(format!("{id}: no shard holds unit `{k}`")));
    }
    Ok(())
}

/// `attncheck new ID`: writes the scaffold of a formulas spec to `out` (default
/// `<group>/<name>.toml`), never over an existing file; returns the path.
pub fn new_spec(id: &str, out: Option<&Path>) -> Result<PathBuf, Error> {
    claims::formulas::check_new_id(id).map_err(Error::Usage)?;
    let path = out.map_or_else(|| PathBuf::from(format!("{id}.toml")), Path::to_path_buf);
    if path.exists() {
        return Err(Error::Usage(format!(
            "{} exists: `attncheck new` never overwrites a file (pass --out FILE)",
            path.display()
        )));
    }
    write_atomic(&path, &claims::formulas::scaffold(id))?;
    Ok(path)
}

/// `spec` with parameters set on the command line (`run --set PATH=VALUE`), validated
/// by the claim for both profiles.
pub fn with_sets(spec: &Spec, sets: &[String]) -> Result<Spec, Error> {
    let mut s = spec.clone();
    for a in sets {
        s.set(a)?;
    }
    claims::validate_profiles(&s)?;
    Ok(s)
}

/// `run --explain`'s lines for one run: the values behind its certificate's checks
/// ([`crate::explain`]), or why there are none.
pub fn explain_lines(run: &ClaimRun) -> Vec<String> {
    let Some((name, text)) = &run.certificate else {
        return vec![format!(
            "{}: no certificate, so no certified values to show",
            run.report.id
        )];
    };
    match certificate::parse(Path::new(name), text) {
        Ok(cert) => crate::explain::lines(&run.report.id, &crate::explain::explain(&cert)),
        Err(e) => vec![format!("{}: {e}", run.report.id)],
    }
}
